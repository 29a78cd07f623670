// Artifact: one file holding a compiled model -- the kernels' shared library for the target, the
// graph (tensors and the ordered kernel calls), the parameters, and metadata. docs/formats/artifact.md
// is the specification; this is its reader and writer.
//
// Layout (little-endian), container version 2:
//   "TFARTIF2"                        8-byte magic; the digit is the container version
//   u32 3                             the number of sections
//   3 x {u64 size, u32 crc32c}        metadata, parameters, library: each section's size and CRC-32C
//   u32 crc32c                        of the 48 header bytes before it
//   the sections' bytes, in order:
//     metadata                        UTF-8 JSON (format_version, target, triple, tensors, ...)
//     parameters                      each param tensor's bytes at its "offset"
//     library                         the kernels' code: an ELF shared library (device "cpu") or
//                                     one PTX module (device "cuda", format version 2)
// Reading checks the header's and every section's checksum before it parses anything, then
// validates everything a later step relies on (sizes, tensor references, offsets inside the blob),
// so a damaged, truncated or corrupt file is a Corruption status naming the section and the
// problem, never a crash. Whether the code can run on this machine is the executor's check
// (CheckRunsOnHost, cpu_features.h), from `triple` and `cpu_features`.
#ifndef TUNEFARM_RUNTIME_ARTIFACT_H_
#define TUNEFARM_RUNTIME_ARTIFACT_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/runtime/device.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::runtime {

// 2: the "device" field and, for CUDA, PTX code with per-kernel launch dimensions. 3: inputs and
// outputs with an `edge_dtype`, kernels with `run_if`. 4: kernels with `condition_checks`. 5: a
// `symbolic_dim` and tensors with a `leading_scale` (one artifact for a range of sizes). Each
// version is written only by artifacts that need it, so older runtimes refuse exactly the files
// they would misread. Version-1 files (CPU only) still load.
inline constexpr int kArtifactFormatVersion = 5;

// Element types, in NumPy's spelling. Kernels compute on the first six (the storage types); the
// others exist only at a model's edges and are converted on the way in and out (element_convert.h).
enum class ElementType {
  kFloat32,
  kInt64,
  kInt32,
  kInt8,
  kUInt8,
  kBool,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt16,
  kUInt16,
  kUInt32,
  kUInt64,
};
const char* ElementTypeName(ElementType t);
Result<ElementType> ParseElementType(const std::string& name);
int ElementSize(ElementType t);

struct ArtifactTensor {
  enum Kind { kInput, kOutput, kParam, kIntermediate };
  std::string name;
  Kind kind = kIntermediate;
  ElementType dtype = ElementType::kFloat32;
  std::vector<int64_t> shape;
  int64_t param_offset = 0;  // kParam: byte offset in the parameter blob
  int view_of = -1;          // >= 0: shares that tensor's storage (same byte size; reshapes)
  // Inputs and outputs only: the type callers give and get when it is not a storage type (a
  // float16 input is stored as float32, `dtype`, and converted by the executor).
  std::optional<ElementType> edge_dtype;
  // > 0: dimension 0 follows the artifact's symbolic dimension, leading_scale x its size at run time;
  // `shape` holds the range's maximum (what storage is planned for), and a run at a smaller size
  // uses the leading rows of that storage. 0: every dimension fixed.
  int64_t leading_scale = 0;
  int64_t num_elements() const;
  int64_t bytes() const { return num_elements() * ElementSize(dtype); }  // as stored (at the maximum)
  ElementType caller_dtype() const { return edge_dtype.value_or(dtype); }
};

// A kernel's runtime indices (Gather, GatherElements, GatherND, ScatterElements): before the kernel
// runs, every element i of `tensor` (int64 or int32) must lie in [-e, e) for
// e = extents[i % extents.size()] (GatherND indexes several axes per innermost row),
// else the run fails naming `node`, the position and the index. The kernel itself also clamps, so an
// executor that does not check (an older runtime, CUDA tensors on the device) never reads outside.
struct IndexCheck {
  int tensor = -1;
  std::vector<int64_t> extents;
  std::string node;  // "node 'emb' (Gather)"
};

// A run that reaches the kernel fails with `message` when every (tensor, value) of `fails_when`
// holds, each tensor a one-element bool: an If branch the compiled shapes cannot run (the compiler
// keeps the other branch; see compiler/operators/control_ops.cc) is an error when a run takes it,
// as ONNX Runtime's is, never the other branch's numbers.
struct ConditionCheck {
  std::vector<std::pair<int, bool>> fails_when;
  std::string message;
};

// Where a tunable kernel's config came from: the records database (apply-history-best), or the
// template's fallback config. The artifact stores it as "records" or "fallback" (config_source).
enum class ConfigOrigin { kNone, kRecords, kFallback };
const char* ConfigOriginName(ConfigOrigin origin);  // "", "records", "fallback"

struct ArtifactKernel {
  std::string symbol;
  std::string op;             // what it computes, for profiles and errors: "conv2d_nchwc+bias+relu"
  std::vector<int> args;      // tensor indices in the kernel's argument order
  std::string workload;       // tunable kernels: the workload key ...
  int64_t config_index = -1;  // ... the config it was built with ...
  ConfigOrigin config_origin = ConfigOrigin::kNone;  // ... and where that came from
  // Device "cuda": the launch (blocks and threads per dimension, static shared memory per block).
  std::array<int64_t, 3> grid = {0, 0, 0}, block = {0, 0, 0};
  int64_t shared_bytes = 0;
  // A kernel of an If branch (format version 3, CPU): runs only when every (tensor, value) holds,
  // the tensor a one-element bool; otherwise the executor skips it.
  std::vector<std::pair<int, bool>> run_if;
  std::vector<IndexCheck> index_checks;
  std::vector<ConditionCheck> condition_checks;  // format version 4
};

// OK when every index of check.tensor, whose elements of type `dtype` are at `data`, lies in the
// range the check states; else InvalidArgument naming the node, the position and the index.
Status CheckIndices(const IndexCheck& check, ElementType dtype, const void* data, int64_t count);

// OK unless, for one of `checks`, every condition read through `read` (a tensor index -> its
// one-element bool) has its value; then InvalidArgument with that check's message.
Status CheckConditions(const std::vector<ConditionCheck>& checks, const std::function<Result<bool>(int)>& read);

// A dimension the artifact keeps symbolic (--input-shape NAME:1..8x3x224x224): every run gives it a
// size in [min, max], read off the inputs whose dimension 0 follows it (ArtifactTensor::leading_scale).
// Before each run the executor writes the size, as an int64, into `tensor` (one element, its own
// storage), which every kernel over such tensors takes as its last argument and bounds its loops by.
struct SymbolicDim {
  std::string name;  // the model's dim_param (e.g. "batch"), else "<input>.0"
  int64_t min = 0, max = 0;
  int tensor = -1;
};

struct Artifact {
  std::string target;
  std::string triple;                     // device cpu: the LLVM triple the library was built for
  std::string cpu;                        // ... its -mcpu
  std::vector<std::string> cpu_features;  // ... the features it needs that a runtime can detect
  std::string model;
  int opt_level = 3;
  // The thread count it was compiled for: its tuned configs are records measured at that many
  // threads, and `run` uses it unless told otherwise. 0: not stated (artifacts from before).
  int threads = 0;
  std::vector<ArtifactTensor> tensors;
  std::vector<ArtifactKernel> kernels;
  std::vector<int> inputs, outputs;         // tensor indices, in the model's order
  std::optional<SymbolicDim> symbolic_dim;  // format version 5
  std::string params;                       // the parameter blob
  std::string device = "cpu";               // "cpu" or "cuda": what `library` holds and what runs it
  std::string library;                      // device cpu: ELF shared library bytes; cuda: PTX module text
  Device::Kind device_kind() const { return device == "cuda" ? Device::Kind::kCuda : Device::Kind::kCpu; }

  Status Validate() const;
  Status ValidateSymbolicDim() const;  // part of Validate
  std::string MetadataJson() const;
  std::string Serialize() const;
  static Result<Artifact> Parse(const std::string& bytes);

  Status WriteFile(const std::string& path) const;  // atomically: temp file + rename
  static Result<Artifact> ReadFile(const std::string& path);
};

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_ARTIFACT_H_
