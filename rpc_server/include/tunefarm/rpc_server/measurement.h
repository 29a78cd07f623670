// Measuring one compiled kernel, isolated: the part of rpc_server that needs no gRPC, so it also
// builds for the boards with the runtime alone.
//
// The server (parent) validates a MeasureSpec, writes the library and the spec into a private
// temporary directory, and runs `tunefarm-measure-child` there under a wall-clock timeout; the
// child sets its own address-space limit, loads the library, fills the inputs with seeded random
// values, runs the timing protocol (MeasureInProcess) and writes its outcome. A child that dies by
// a signal, exits without an outcome or outlives the timeout costs exactly this one measurement.
//
// Timing protocol (TVM's time_evaluator): one warm-up call (its outputs are checked against the
// expected outputs when given); then rounds of `number` calls, `number` grown until a round lasts
// min_repeat_ms; `repeat` rounds reported as mean ms per call; `cooldown_ms` between rounds;
// with flush_cache, every argument but the first is flushed from the caches before each call
// (calls then timed one by one, the flush outside the timer).
#ifndef TUNEFARM_RPC_SERVER_MEASUREMENT_H_
#define TUNEFARM_RPC_SERVER_MEASUREMENT_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/runtime/trial_status.h"
#include "tunefarm/v1/measure.pb.h"

namespace tunefarm::rpc_server {

struct ArgSpec {
  std::vector<int64_t> shape;
  // float32, int32, uint8 or int8 (IsArgDtype; int8 kernels' operands). Every buffer holds 4 bytes
  // per element whatever its type, so sizes and limits are one rule.
  std::string dtype = "float32";
  // What the compiler says the argument is for (KernelBufferInfo::role; IsArgRole): "output" is
  // zeroed and checked, every other role is seeded from the spec's seed.
  std::string role = "input";
  int64_t num_elements() const;
};

struct TimingParams {
  int number = 10, repeat = 3, min_repeat_ms = 0, cooldown_ms = 0;
  bool flush_cache = false;
  int timeout_ms = 10000;
  int64_t memory_limit_bytes = 0;  // 0: the server's default
};

// A CUDA measurement (the server's --device cuda[:N]): which GPU, and how the kernel launches.
struct GpuSpec {
  bool enabled = false;
  int ordinal = 0;
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
};

struct MeasureSpec {
  std::string symbol;
  GpuSpec gpu;
  std::vector<ArgSpec> args;
  TimingParams timing;
  uint64_t seed = 0;
  std::vector<float> expected_outputs;  // empty: no check
  float tolerance = 1e-4f;
  int threads = 1;
};

// A measurement's outcome is its trial's status (tunefarm/runtime/trial_status.h).
using OutcomeKind = TrialStatus;

struct MeasureOutcome {
  OutcomeKind kind = OutcomeKind::kOk;
  std::string message;
  int signal = 0;
  std::vector<double> costs_ms;
  int number = 0;
  double run_ms = 0;
  int threads = 1;
  // GPU: the time a fresh child took to open the device (cuInit, context creation) before the
  // kernel's timeout started counting; 0 when the device was already open (a warm worker).
  double device_warmup_ms = 0;
  // Of run_ms: loading the kernel (dlopen; GPU: the module load, which JIT-compiles PTX and only
  // maps a cubin). The tuner reports it apart (where a batch's time went).
  double load_ms = 0;
};

// Limits of the protocol (measure.proto); BadRequest outcomes name the violated one.
inline constexpr size_t kMaxLibraryBytes = size_t(64) << 20;
inline constexpr int kMaxArgs = 16;

// The roles a kernel argument may have: input, weight, bias, residual, slope (PRelu's per-channel
// slopes), scale (an int8 kernel's requantization multipliers), zero_point (its input's zero point, computed at
// run time), output -- every BufferRole the compiler's templates
// give.
bool IsArgRole(const std::string& role);
bool IsArgDtype(const std::string& dtype);
// OK when valid, else InvalidArgument with the message of a BAD_REQUEST outcome.
Status ValidateSpec(const MeasureSpec& spec, size_t library_bytes, int64_t memory_limit_bytes);
// OK when the library is an ELF shared object for this machine's architecture, else InvalidArgument
// saying why not (truncated, not ELF, built for another architecture).
Status CheckLibraryArchitecture(const std::string& bytes);
// OK when the bytes are PTX text with an entry named symbol, or a cubin (an ELF file for EM_CUDA)
// naming it, else InvalidArgument saying why not.
Status CheckPtx(const std::string& bytes, const std::string& symbol);

// The one conversion between a spec and its messages, both ways, used by the client's requests,
// the server and the measurement child's spec file. FromProto applies no server options (threads
// 1, the tolerance as sent, GPU ordinal 0); ToProto writes every field FromProto reads except the
// library and cubin, which the client sets (the child gets them as files).
MeasureSpec FromProto(const v1::KernelToMeasure& kernel, const v1::TimingParams& timing);
void ToProto(const MeasureSpec& spec, v1::KernelToMeasure* kernel);
void ToProto(const TimingParams& timing, v1::TimingParams* out);
// The outcome as the service returns it (measure.proto's MeasureResult; error unset on success).
void OutcomeToResult(const MeasureOutcome& o, v1::MeasureResult* result);
// And back, checked: a known error kind, costs on success, every time finite and not negative.
// The child's outcome file and a server's answer both come through here.
Result<MeasureOutcome> OutcomeFromResult(const v1::MeasureResult& result);

// The files the parent and the child exchange: v1.ChildSpec and v1.MeasureResult in protobuf's
// wire format. Parsing never throws; bytes that are not such a message are an error Status, and
// so is an outcome OutcomeFromResult refuses (a child that wrote nothing, a NaN time).
std::string SerializeSpec(const MeasureSpec& spec);
Result<MeasureSpec> ParseSpec(const std::string& bytes);
std::string SerializeOutcome(const MeasureOutcome& o);
Result<MeasureOutcome> ParseOutcome(const std::string& bytes);

// In the child process: load, run and time. Never returns kTimeout (the parent enforces it).
// Creates loaded_marker (when not empty) once the library is loaded and its symbol found.
// A GPU spec goes to MeasureCudaInProcess.
MeasureOutcome MeasureInProcess(const std::string& library_path, const MeasureSpec& spec,
                                const std::string& loaded_marker = "");
// The CUDA side (cuda_timing.cc): the PTX is JIT-loaded on spec.gpu.ordinal, the launch checked
// against the loaded function's registers and limits (kInstantiation naming the limit), inputs
// seeded exactly as on a CPU and uploaded, one warm-up launch checked against expected_outputs,
// then `repeat` rounds of `number` launches timed with CUDA events (number grown until a round
// lasts min_repeat_ms; with flush_cache each launch is timed alone after overwriting a buffer of
// twice the L2 size). CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES is kInstantiation; an illegal address or
// any other launch error kRuntimeCrash naming the error (the context is then poisoned: the
// parent's child process dies with it, the server lives on).
MeasureOutcome MeasureCudaInProcess(const std::string& ptx_path, const MeasureSpec& spec,
                                    const std::string& loaded_marker = "");
// Opens GPU `ordinal` for this process's later MeasureCudaInProcess calls (a worker does it once,
// outside any kernel's timeout); a failure is reported by the measurement that follows.
void WarmUpCudaDevice(int ordinal);

// In the parent: validates the spec (kBadRequest) and the library's architecture (kCompile), then
// runs the child binary on (library bytes, spec) in a private temp dir under tmp_root, removed
// afterwards. spec.timing.memory_limit_bytes is the child's address-space limit (0: none).
// child_command: the child binary, optionally preceded by a launcher (an emulator such as
// qemu-aarch64 when the server itself runs emulated).
// Containment: the child runs in its own session and process group with the private directory as
// its working directory and a minimal environment (PATH, LD_LIBRARY_PATH, locale, QEMU_LD_PREFIX,
// sanitizer options; HOME and TMPDIR in the directory; never the farm token). When it exits or
// times out the whole group is killed, and the directory is removed recursively. (A kernel that
// calls setsid() itself leaves the group: run rpc_server under systemd, deploy/, whose control
// group is killed as a whole.)
MeasureOutcome MeasureIsolated(const std::vector<std::string>& child_command, const std::string& tmp_root,
                               const std::string& library, const MeasureSpec& spec);

// A measurement child that stays alive across kernels: what a GPU server uses, since each new
// process pays for a CUDA context (0.1-0.3 s) before measuring anything. Every kernel still gets
// its own private directory and the same checks, outcomes and timeout as MeasureIsolated; the
// worker runs in its own session and process group with the same minimal environment, and is
// killed -- and started afresh for the next kernel -- after a timeout, a crash, or a CUDA error
// that poisons its context (an illegal address). The server never dies with it.
// Protocol: the child (`tunefarm-measure-child --worker`) reads one work directory per line on
// fd 3 and answers "done" on fd 4 once DIR/outcome.pb is written (fds apart from stdout, which
// a kernel may write to); "warm N" (sent first to a fresh GPU worker) opens GPU N and answers
// "ready", so device start-up never counts against a kernel's timeout. Not thread-safe: one worker per device, one
// kernel at a time.
class MeasureWorker {
 public:
  MeasureWorker(std::vector<std::string> child_command, std::string tmp_root)
      : child_command_(std::move(child_command)), tmp_root_(std::move(tmp_root)) {}
  ~MeasureWorker();
  MeasureWorker(const MeasureWorker&) = delete;
  MeasureWorker& operator=(const MeasureWorker&) = delete;

  MeasureOutcome Measure(const std::string& library, const MeasureSpec& spec);
  // Worker processes started so far (1 + restarts).
  int starts() const { return starts_; }

 private:
  bool Start(std::string* error);
  void Stop();  // kills the worker's process group and reaps it

  std::vector<std::string> child_command_;
  std::string tmp_root_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  int starts_ = 0;
};

// Removes the private directories ("tunefarm-measure-<pid>-*") that dead processes left under
// tmp_root (killed servers); returns how many. Only directories owned by this user.
int SweepStaleMeasureDirs(const std::string& tmp_root);

// What `tunefarm-measure-child --check` prints (and exits 0): rpc_server's start check that
// --child names a program that can measure.
inline constexpr const char* kMeasureChildReady = "tunefarm-measure-child: ready";

// tunefarm-measure-child beside the running program (every program that measures is installed
// next to it: build/bin/, /usr/local/bin/).
std::string DefaultMeasureChild();

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_MEASUREMENT_H_
