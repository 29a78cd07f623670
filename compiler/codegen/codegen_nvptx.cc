#include "compiler/codegen/codegen_nvptx.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compiler/codegen/codegen_llvm_base.h"
#include "compiler/codegen/llvm_headers.h"
#include "compiler/codegen/llvm_init.h"
#include "compiler/codegen/object_emitter.h"
#include "compiler/ir/gpu_intrinsics.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_visitor.h"
#include "tunefarm/runtime/atomic_file.h"

namespace tunefarm::compiler {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

class CodeGenNVPTX final : public codegen::CodeGenLLVM {
 public:
  using CodeGenLLVM::CodeGenLLVM;

  void AddKernel(const KernelSource& k) override {
    const passes::LoweredFunc& f = k.func;
    TUNEFARM_CHECK_MSG(f.form == passes::KernelForm::kThreadProgram, "CodeGenNVPTX needs a GPU thread program");
    std::vector<llvm::Type*> params(f.buffers.size(), ptr_);
    auto* fn_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), params, false);
    auto* fn = llvm::Function::Create(fn_ty, llvm::GlobalValue::ExternalLinkage, f.name, module_);
    for (size_t i = 0; i < f.buffers.size(); ++i) {
      fn->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
      fn->getArg(unsigned(i))->setName(f.buffers[i]->name);
    }
    SetFunctionAttributes(fn);
    Annotate(fn, "kernel", 1);
    const char* bounds[3] = {"maxntidx", "maxntidy", "maxntidz"};
    for (int d = 0; d < 3; ++d) Annotate(fn, bounds[d], f.launch.block[size_t(d)]);

    BeginFunction(fn);
    static const llvm::Intrinsic::ID kBlock[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    static const llvm::Intrinsic::ID kThread[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                                   llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                                   llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
    for (int d = 0; d < 3; ++d) {
      vars_[f.gpu_vars.block[size_t(d)].get()] = ReadIndex(kBlock[d], f.launch.grid[size_t(d)]);
      vars_[f.gpu_vars.thread[size_t(d)].get()] = ReadIndex(kThread[d], f.launch.block[size_t(d)]);
    }
    for (size_t i = 0; i < f.buffers.size(); ++i) vars_[f.buffers[i].get()] = fn->getArg(unsigned(i));
    Emit(f.body);
    builder_.CreateRetVoid();
    vars_.clear();
  }

 private:
  void Annotate(llvm::Function* fn, const char* key, int64_t value) {
    llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx_, key),
                            llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32_, value))};
    module_->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx_, md));
  }

  // An index register as int64; a dimension of size 1 is the constant 0.
  llvm::Value* ReadIndex(llvm::Intrinsic::ID id, int64_t size) {
    if (size == 1) return llvm::ConstantInt::get(i64_, 0);
    llvm::Value* v = builder_.CreateIntrinsic(id, {}, {});
    // The index is below the launch size: tell LLVM (it narrows the index arithmetic with it).
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(v)) {
      llvm::MDBuilder mdb(ctx_);
      call->setMetadata(llvm::LLVMContext::MD_range,
                        mdb.createRange(llvm::APInt(32, 0), llvm::APInt(32, uint64_t(size))));
    }
    return builder_.CreateZExt(v, i64_);
  }

  void SetFunctionAttributes(llvm::Function* fn) override {
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr("target-cpu", target_.arch);
  }

  llvm::Value* EmitAllocation(const Allocate* op) override {
    llvm::Type* elem = LLVMType(op->element_type);
    auto* array_ty = llvm::ArrayType::get(elem, uint64_t(op->size));
    if (op->scope == MemoryScope::kShared) {
      // Unrolled copies of one allocation run one after another: they share one array.
      llvm::GlobalVariable*& gv = shared_arrays_[op->buffer.get()];
      if (!gv) {
        gv = new llvm::GlobalVariable(*module_, array_ty, false, llvm::GlobalValue::InternalLinkage,
                                      llvm::UndefValue::get(array_ty), op->buffer->name, nullptr,
                                      llvm::GlobalValue::NotThreadLocal, 3);
        gv->setAlignment(llvm::Align(16));
      }
      return builder_.CreateAddrSpaceCast(gv, ptr_);
    }
    TUNEFARM_CHECK_MSG(op->scope == MemoryScope::kLocal,
                       ("GPU kernels allocate shared or local memory only, not global: " + op->buffer->name).c_str());
    llvm::IRBuilder<> entry(alloca_block_, alloca_block_->begin());
    auto* a = entry.CreateAlloca(array_ty, nullptr, op->buffer->name);
    a->setAlignment(llvm::Align(16));
    return a;
  }
  void FreeAllocation(const Allocate*, llvm::Value*) override {}

  std::unordered_map<const VarNode*, llvm::GlobalVariable*> shared_arrays_;

  // sqrt, fabs and floor lower natively (the base class's LLVM intrinsics).
  llvm::Value* EmitTargetMath(const Call* op, const std::vector<llvm::Value*>& args) override {
    if (IsShuffle(op)) {
      // shfl.sync.bfly over the threads that reach it: lower_thread_allreduce emits shuffles that
      // every thread executes, so activemask names exactly the warp's live lanes (all 32, or the
      // lanes of a partial last warp).
      TUNEFARM_CHECK_MSG(op->type == Type::Float(32), "warp shuffles of float32 values only");
      llvm::Value* members = builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_activemask, {}, {});
      llvm::Value* lane_mask = llvm::ConstantInt::get(i32_, uint64_t(*AsConstInt(op->args[1])));
      llvm::Value* clamp = llvm::ConstantInt::get(i32_, 0x1f);
      return builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_f32, {},
                                      {members, args[0], lane_mask, clamp});
    }
    if (op->name == kDot4U8S8 && op->type.lanes == 1 && target_.arch.size() > 3 &&
        std::atoi(target_.arch.c_str() + 3) >= 61) {
      // dp4a (sm_61 on): LLVM has no NVVM intrinsic for it, so the one PTX instruction, inline.
      auto* type = llvm::FunctionType::get(i32_, {i32_, i32_, i32_}, false);
      auto* dp4a = llvm::InlineAsm::get(type, "dp4a.u32.s32 $0, $1, $2, $3;", "=r,r,r,r", /*hasSideEffects=*/false);
      return builder_.CreateCall(type, dp4a, {args[1], args[2], args[0]});
    }
    // exp, log and tanh became arithmetic in lower_gpu_math; NVPTX has no lowering of llvm.exp/log.
    TUNEFARM_CHECK_MSG(op->name != "exp" && op->name != "log" && op->name != "tanh",
                       ("'" + op->name + "' reached NVPTX codegen: lower_gpu_math did not run").c_str());
    return nullptr;
  }

  void EmitBarrier(const Barrier*) override { builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

  void EmitSpecialFor(const For* op) override {
    TUNEFARM_CHECK_MSG(
        false, ("loop '" + op->var->name + "' of kind " + ForKindName(op->kind) +
                " reached NVPTX codegen: BindGpuThreads binds GPU loops, and GPU kernels have no parallel loops")
                   .c_str());
  }
};

}  // namespace

std::unique_ptr<codegen::CodeGenLLVM> MakeCodeGenNVPTX(llvm::LLVMContext* ctx, llvm::Module* module,
                                                       const Target& target) {
  return std::make_unique<CodeGenNVPTX>(ctx, module, target);
}

Result<std::string> EmitPtx(const std::vector<KernelSource>& kernels, const Target& target) {
  for (const auto& k : kernels) {
    if (k.func.form != passes::KernelForm::kThreadProgram) {
      return Status::InvalidArgument("kernel " + k.func.name + " is not a GPU thread program: PTX needs kernels " +
                                     "lowered for a GPU launch, not for " + target.ToString());
    }
  }
  TUNEFARM_ASSIGN_OR_RETURN(auto tm, CreateTargetMachine(kNvptxTriple, target.arch, ""));
  llvm::LLVMContext context;
  TUNEFARM_ASSIGN_OR_RETURN(auto module, GenerateModule(kernels, target, tm.get(), &context, MakeCodeGenNVPTX));
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen_pm;
  if (tm->addPassesToEmitFile(codegen_pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile, /*DisableVerify=*/true)) {
    return Status::Internal("LLVM cannot emit PTX for " + target.arch);
  }
  codegen_pm.run(*module);
  return std::string(buffer.begin(), buffer.end());
}

std::string FindPtxas() {
  if (const char* env = std::getenv("TUNEFARM_PTXAS"); env && *env) return access(env, X_OK) == 0 ? env : "";
  if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return "/usr/local/cuda/bin/ptxas";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = dir + "/ptxas";
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

Result<std::map<std::string, PtxasKernelReport>> RunPtxas(const std::string& ptxas, const std::string& ptx,
                                                          const std::string& arch, std::string* cubin,
                                                          const ToolLimits& limits) {
  char dir_template[] = "/tmp/tunefarm-ptxas-XXXXXX";
  if (!mkdtemp(dir_template)) return Status::IOError("cannot create a temporary directory for ptxas");
  const std::string dir = dir_template, in = dir + "/kernels.ptx", out = dir + "/kernels.cubin";
  {
    std::ofstream f(in, std::ios::binary);
    f << ptx;
    if (!f) return Status::IOError("cannot write " + in);
  }
  Result<std::string> output =
      RunTool({ptxas, "-v", "-arch=" + arch, "-o", out, in}, "assembling PTX for " + arch, limits);
  if (output.ok() && cubin) {
    Result<std::string> bytes = ReadFile(out);
    if (bytes.ok()) {
      *cubin = std::move(*bytes);
    } else {
      output = bytes.status();
    }
  }
  std::remove(in.c_str());
  std::remove(out.c_str());
  rmdir(dir.c_str());
  TUNEFARM_RETURN_IF_ERROR(output.status());

  // ptxas -v prints, per entry:
  //   ptxas info    : Compiling entry function 'NAME' for 'sm_80'
  //       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 40 registers, used 1 barriers, 4608 bytes smem, 392 bytes cmem[0]
  // (no <regex>: GCC 12's regex trips -Wmaybe-uninitialized in sanitizer builds)
  auto number_before = [](const std::string& line, const std::string& unit) -> int64_t {
    size_t at = line.find(unit);
    if (at == std::string::npos || at == 0) return -1;
    size_t end = at;
    while (end > 0 && line[end - 1] == ' ') --end;
    size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
    return begin == end ? -1 : std::stoll(line.substr(begin, end - begin));
  };
  std::map<std::string, PtxasKernelReport> reports;
  std::string current;
  std::stringstream lines(*output);
  for (std::string line; std::getline(lines, line);) {
    const std::string entry = "Compiling entry function '";
    if (size_t at = line.find(entry); at != std::string::npos) {
      size_t begin = at + entry.size(), end = line.find('\'', begin);
      current = line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
      reports[current];
    } else if (!current.empty() && line.find("bytes stack frame") != std::string::npos) {
      reports[current].stack_frame_bytes = number_before(line, "bytes stack frame");
      reports[current].spill_store_bytes = number_before(line, "bytes spill stores");
      reports[current].spill_load_bytes = number_before(line, "bytes spill loads");
    } else if (!current.empty() && line.find("Used ") != std::string::npos) {
      reports[current].registers = int(std::max<int64_t>(0, number_before(line, "registers")));
      reports[current].shared_bytes = std::max<int64_t>(0, number_before(line, "bytes smem"));
    }
  }
  return reports;
}

Result<std::map<std::string, int>> CheckPtxRegisters(const std::string& ptx, const Target& target,
                                                     const std::map<std::string, int64_t>& threads_per_block,
                                                     std::string* cubin, const ToolLimits& limits) {
  std::map<std::string, int> registers;
  const std::string ptxas = FindPtxas();
  if (ptxas.empty()) return registers;
  TUNEFARM_ASSIGN_OR_RETURN(auto reports, RunPtxas(ptxas, ptx, target.arch, cubin, limits));
  for (const auto& [symbol, threads] : threads_per_block) {
    auto it = reports.find(symbol);
    if (it == reports.end()) return Status::Internal("ptxas did not report kernel " + symbol);
    const int regs = it->second.registers;
    // Registers are allocated per warp, in units of 256 (8 per thread): round both up.
    const int64_t warps = (threads + target.gpu.warp_size - 1) / target.gpu.warp_size;
    const int64_t allocated = warps * target.gpu.warp_size * ((regs + 7) / 8 * 8);
    if (regs > target.gpu.max_registers_per_thread || allocated > target.gpu.max_registers_per_block) {
      return Status::InvalidArgument("kernel " + symbol + " needs " + std::to_string(regs) + " registers x " +
                                     std::to_string(threads) + " threads, more than the " +
                                     std::to_string(target.gpu.max_registers_per_block) + "-register file of " +
                                     target.ToString() + " (ptxas -v): it would fail to launch");
    }
    registers[symbol] = regs;
  }
  return registers;
}

}  // namespace tunefarm::compiler
