#include "compiler/codegen/codegen_cpu.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/codegen/codegen_llvm_base.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_visitor.h"
#include "tunefarm/runtime/kernel_abi.h"

namespace tunefarm::compiler {
namespace {

using namespace codegen;  // NOLINT(google-build-using-namespace): CodeGenLLVM and the IR's names

// Variables a statement reads that are bound outside it (the closure of an outlined loop body).
class FreeVarCollector : public IRVisitor {
 public:
  std::vector<const VarNode*> free;
  using IRVisitor::Visit;

 protected:
  void Use(const VarNode* v) {
    if (!defined_.count(v) && !seen_.count(v)) {
      seen_.insert(v);
      free.push_back(v);
    }
  }
  void Visit_(const VarNode* op) override { Use(op); }
  void Visit_(const Load* op) override {
    Use(op->buffer.get());
    Visit(op->index);
  }
  void Visit_(const Store* op) override {
    Use(op->buffer.get());
    Visit(op->value);
    Visit(op->index);
  }
  void Visit_(const For* op) override {
    defined_.insert(op->var.get());
    IRVisitor::Visit_(op);
  }
  void Visit_(const LetStmt* op) override {
    Visit(op->value);
    defined_.insert(op->var.get());
    Visit(op->body);
  }
  void Visit_(const Let* op) override {
    Visit(op->value);
    defined_.insert(op->var.get());
    Visit(op->body);
  }
  void Visit_(const Allocate* op) override {
    defined_.insert(op->buffer.get());
    Visit(op->body);
  }

 private:
  std::unordered_set<const VarNode*> defined_, seen_;
};

class CodeGenCPU final : public CodeGenLLVM {
 public:
  CodeGenCPU(llvm::LLVMContext* ctx, llvm::Module* module, const Target& target) : CodeGenLLVM(ctx, module, target) {
    // The parallel-for slot, shared by every module linked into one library (weak definition).
    slot_ = new llvm::GlobalVariable(*module_, ptr_, false, llvm::GlobalValue::WeakAnyLinkage,
                                     llvm::ConstantPointerNull::get(ptr_), TUNEFARM_PARALLEL_SLOT);
    slot_->setVisibility(llvm::GlobalValue::DefaultVisibility);
  }

  void AddKernel(const KernelSource& k) override {
    const auto& f = k.func;
    kernel_name_ = f.name;
    parallel_count_ = 0;
    std::vector<llvm::Type*> params(f.buffers.size(), ptr_);
    auto* impl_ty = llvm::FunctionType::get(i32_, params, false);
    auto* impl = llvm::Function::Create(impl_ty, llvm::GlobalValue::InternalLinkage, f.name + ".impl", module_);
    SetFunctionAttributes(impl);
    for (size_t i = 0; i < f.buffers.size(); ++i) {
      impl->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
      impl->getArg(unsigned(i))->setName(f.buffers[i]->name);
    }
    BeginFunction(impl);
    for (size_t i = 0; i < f.buffers.size(); ++i) vars_[f.buffers[i].get()] = impl->getArg(unsigned(i));
    Emit(f.body);
    builder_.CreateRet(llvm::ConstantInt::get(i32_, 0));
    vars_.clear();

    // The packed entry point of the C ABI.
    auto* entry_ty = llvm::FunctionType::get(i32_, {ptr_}, false);
    auto* entry = llvm::Function::Create(entry_ty, llvm::GlobalValue::ExternalLinkage, f.name, module_);
    SetFunctionAttributes(entry);
    BeginFunction(entry);
    std::vector<llvm::Value*> args;
    for (size_t i = 0; i < f.buffers.size(); ++i) {
      llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(ptr_, entry->getArg(0), i);
      args.push_back(builder_.CreateLoad(ptr_, slot));
    }
    builder_.CreateRet(builder_.CreateCall(impl, args));

    auto* meta = llvm::ConstantDataArray::getString(ctx_, k.metadata_json, true);
    auto* gv = new llvm::GlobalVariable(*module_, meta->getType(), true, llvm::GlobalValue::ExternalLinkage, meta,
                                        f.name + TUNEFARM_METADATA_SUFFIX);
    gv->setAlignment(llvm::Align(1));
  }

 private:
  // Whether the target's CPU and feature string enable `feature` (LLVM's name), asked of the
  // target's subtarget once.
  bool Has(const char* feature) {
    if (!subtarget_) {
      std::string error;
      const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target_.triple, error);
      TUNEFARM_CHECK_MSG(t, ("no LLVM target for " + target_.triple + ": " + error).c_str());
      subtarget_.reset(t->createMCSubtargetInfo(target_.triple, target_.cpu, target_.features));
    }
    return subtarget_->checkFeatures(std::string("+") + feature);
  }

  // The int8 dot products (ir_operators.h): dot4_s8s8 on aarch64 (EmitAArch64Dot4); on x86,
  // dot4_u8s8 is vpdpbusd where the CPU has it,
  // else vpmaddwd on the bytes widened to int16 (exact: a u8 and an s8 are int16 values and two of
  // their products fit int32) and one add of neighbouring lanes; dot2_i16 is vpmaddwd itself.
  // Other targets, and lane counts no instruction fits: the base class's widening arithmetic.
  llvm::Value* EmitTargetMath(const Call* op, const std::vector<llvm::Value*>& args) override {
    const llvm::Triple triple(target_.triple);
    if (triple.isAArch64() && op->name == kDot4S8S8) return EmitAArch64Dot4(args, op->type.lanes);
    if (triple.isARM() && op->name == "roundeven") return EmitRoundEvenByFloor(args[0]);
    if (op->name == kRoundToInt32) return EmitRoundToInt32(args[0], op->type.lanes);
    if (!triple.isX86()) return nullptr;
    const int lanes = op->type.lanes;
    if (op->name == kDot2I16) {
      llvm::Type* halves = llvm::FixedVectorType::get(builder_.getInt16Ty(), unsigned(2 * lanes));
      llvm::Value* pairs =
          Pmaddwd(builder_.CreateBitCast(args[1], halves), builder_.CreateBitCast(args[2], halves), 2 * lanes);
      return pairs ? builder_.CreateAdd(args[0], pairs) : nullptr;
    }
    if (op->name != kDot4U8S8) return nullptr;
    // vpdpbusd in parts of 16, 8 and 4 lanes (a block of 12 channels: 8 + 4), as the CPU has them.
    std::vector<int> widths;
    if (Has("avx512vnni")) widths.push_back(16);
    if (Has("avxvnni") || (Has("avx512vnni") && Has("avx512vl"))) widths.insert(widths.end(), {8, 4});
    const std::vector<std::pair<int, int>> parts = Cover(lanes, widths);
    if (!parts.empty()) {
      std::vector<llvm::Value*> sums;
      for (const auto& [first, n] : parts) {
        const llvm::Intrinsic::ID id = n == 16  ? llvm::Intrinsic::x86_avx512_vpdpbusd_512
                                       : n == 8 ? llvm::Intrinsic::x86_avx512_vpdpbusd_256
                                                : llvm::Intrinsic::x86_avx512_vpdpbusd_128;
        sums.push_back(builder_.CreateIntrinsic(
            id, {}, {Lanes(args[0], first, n), Lanes(args[1], first, n), Lanes(args[2], first, n)}));
      }
      return Join(sums);
    }
    llvm::Value* pairs = Pmaddwd(WidenBytes(args[1], lanes, builder_.getInt16Ty(), false),
                                 WidenBytes(args[2], lanes, builder_.getInt16Ty(), true), 4 * lanes);
    if (!pairs) return nullptr;
    llvm::Value* quads = builder_.CreateAdd(Strided(pairs, 2 * lanes, 0, 2), Strided(pairs, 2 * lanes, 1, 2));
    return builder_.CreateAdd(args[0], quads);
  }

  // round_to_int32: the conversion that rounds half to even itself, in parts of the widths the CPU
  // has. x86's vcvtps2dq rounds as MXCSR says, half to even unless the process changed it (ONNX
  // Runtime's MLAS assumes the same); AVX-512's form names round-to-nearest-even in the instruction.
  // Null (the base class's roundeven and truncating conversion) where no width covers the lanes.
  llvm::Value* EmitRoundToInt32(llvm::Value* x, int lanes) {
    const llvm::Triple triple(target_.triple);
    if (triple.isARM()) {
      llvm::Type* ints = i32_;
      if (lanes > 1) ints = llvm::FixedVectorType::get(i32_, unsigned(lanes));
      return builder_.CreateFPToSI(EmitRoundEvenByFloor(x), ints);
    }
    std::vector<int> widths;
    if (triple.isAArch64()) widths.push_back(4);
    if (triple.isX86()) {
      if (Has("avx512f")) widths.push_back(16);
      if (Has("avx")) widths.push_back(8);
      widths.push_back(4);
    }
    const std::vector<std::pair<int, int>> parts =
        lanes > 1 ? Cover(lanes, widths) : std::vector<std::pair<int, int>>{};
    if (parts.empty()) return nullptr;
    std::vector<llvm::Value*> converted;
    for (const auto& [first, n] : parts) {
      llvm::Value* part = Lanes(x, first, n);
      llvm::Type* ints = llvm::FixedVectorType::get(i32_, unsigned(n));
      if (triple.isAArch64()) {
        converted.push_back(
            builder_.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_fcvtns, {ints, part->getType()}, {part}));
      } else if (n == 16) {
        constexpr int kRoundToNearestEven = 8;  // _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC
        converted.push_back(builder_.CreateIntrinsic(
            llvm::Intrinsic::x86_avx512_mask_cvtps2dq_512, {},
            {part, llvm::UndefValue::get(ints), builder_.getInt16(0xffff), builder_.getInt32(kRoundToNearestEven)}));
      } else {
        converted.push_back(builder_.CreateIntrinsic(
            n == 8 ? llvm::Intrinsic::x86_avx_cvt_ps2dq_256 : llvm::Intrinsic::x86_sse2_cvtps2dq, {}, {part}));
      }
    }
    return Join(converted);
  }

  // Round half to even from floor, for 32-bit ARM, whose backend cannot select llvm.roundeven on
  // NEON vectors: floor(x + 0.5), one less on an odd tie; from 2^23 on every float is an integer
  // already (and x + 0.5 would round).
  llvm::Value* EmitRoundEvenByFloor(llvm::Value* x) {
    llvm::Type* t = x->getType();
    auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
    auto floor = [&](llvm::Value* v) { return builder_.CreateIntrinsic(llvm::Intrinsic::floor, {t}, {v}); };
    llvm::Value* r = floor(builder_.CreateFAdd(x, c(0.5)));
    llvm::Value* tie = builder_.CreateFCmpOEQ(builder_.CreateFSub(r, x), c(0.5));
    llvm::Value* odd = builder_.CreateFCmpUNE(builder_.CreateFMul(floor(builder_.CreateFMul(r, c(0.5))), c(2.0)), r);
    llvm::Value* nearest = builder_.CreateSelect(builder_.CreateAnd(tie, odd), builder_.CreateFSub(r, c(1.0)), r);
    llvm::Value* big = builder_.CreateFCmpOGE(builder_.CreateIntrinsic(llvm::Intrinsic::fabs, {t}, {x}), c(8388608.0));
    return builder_.CreateSelect(big, x, nearest);
  }

  // vpmaddwd over two n-lane int16 vectors: n / 2 int32 sums of neighbouring products, in parts of
  // the int16 widths the CPU has (32, 16, 8); null when they do not cover n (a block of 3 channels).
  llvm::Value* Pmaddwd(llvm::Value* a, llvm::Value* b, int n) {
    std::vector<int> widths;
    if (Has("avx512bw")) widths.push_back(32);
    if (Has("avx2")) widths.push_back(16);
    widths.push_back(8);
    const std::vector<std::pair<int, int>> parts = Cover(n, widths);
    if (parts.empty()) return nullptr;
    std::vector<llvm::Value*> sums;  // n / 2 int32 lanes each
    for (const auto& [first, width] : parts) {
      const llvm::Intrinsic::ID pmaddwd = width == 32   ? llvm::Intrinsic::x86_avx512_pmaddw_d_512
                                          : width == 16 ? llvm::Intrinsic::x86_avx2_pmadd_wd
                                                        : llvm::Intrinsic::x86_sse2_pmadd_wd;
      sums.push_back(builder_.CreateIntrinsic(pmaddwd, {}, {Lanes(a, first, width), Lanes(b, first, width)}));
    }
    return Join(sums);
  }

  // The parts (first lane, lane count) of `n` lanes in the given widths, widest first while it fits
  // (each width a multiple of the next, so every part starts at a multiple of its own width); empty
  // when the widths cannot cover n exactly.
  static std::vector<std::pair<int, int>> Cover(int n, const std::vector<int>& widths) {
    std::vector<std::pair<int, int>> parts;
    int first = 0;
    for (int w : widths) {
      for (; n - first >= w; first += w) parts.emplace_back(first, w);
    }
    return first == n ? parts : std::vector<std::pair<int, int>>{};
  }

  // Lanes [first, first + n) of vector v (v itself when that is all of it).
  llvm::Value* Lanes(llvm::Value* v, int first, int n) {
    const int all = int(llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements());
    if (first == 0 && n == all) return v;
    llvm::SmallVector<int, 64> mask;
    for (int i = 0; i < n; ++i) mask.push_back(first + i);
    return builder_.CreateShuffleVector(v, mask);
  }

  // Vectors of one element type joined in order (each at a multiple of its own length: Cover's parts).
  llvm::Value* Join(const std::vector<llvm::Value*>& parts) {
    if (parts.size() == 1) return parts[0];
    auto* first = llvm::cast<llvm::FixedVectorType>(parts[0]->getType());
    int total = 0;
    for (llvm::Value* p : parts) total += int(llvm::cast<llvm::FixedVectorType>(p->getType())->getNumElements());
    llvm::Type* whole = llvm::FixedVectorType::get(first->getElementType(), unsigned(total));
    llvm::Value* out = llvm::PoisonValue::get(whole);
    int at = 0;
    for (llvm::Value* p : parts) {
      out = builder_.CreateInsertVector(whole, out, p, builder_.getInt64(uint64_t(at)));
      at += int(llvm::cast<llvm::FixedVectorType>(p->getType())->getNumElements());
    }
    return out;
  }

  // dot4_s8s8 on aarch64, four int32 lanes at a time: sdot with the dot-product extension; else
  // smull of each half's bytes (eight int16 products, exact: |-128 x -128| fits), saddlp
  // (neighbouring products summed into int32) and addp (each lane's two pairs). Lane counts other
  // than multiples of four: null (the base class's widening arithmetic).
  llvm::Value* EmitAArch64Dot4(const std::vector<llvm::Value*>& args, int lanes) {
    if (lanes % 4 != 0) return nullptr;
    llvm::Type* i8x16 = llvm::FixedVectorType::get(builder_.getInt8Ty(), 16);
    llvm::Type* i16x8 = llvm::FixedVectorType::get(builder_.getInt16Ty(), 8);
    llvm::Type* i32x4 = llvm::FixedVectorType::get(i32_, 4);
    const bool sdot = Has("dotprod");
    std::vector<llvm::Value*> parts;
    for (int first = 0; first < lanes; first += 4) {
      auto part = [&](llvm::Value* v) { return Lanes(v, first, 4); };
      llvm::Value* acc = part(args[0]);
      llvm::Value* a = builder_.CreateBitCast(part(args[1]), i8x16);
      llvm::Value* b = builder_.CreateBitCast(part(args[2]), i8x16);
      if (sdot) {
        parts.push_back(builder_.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_sdot, {i32x4, i8x16}, {acc, a, b}));
        continue;
      }
      auto pairs = [&](int half) {  // saddlp(smull(a's half, b's half))
        llvm::SmallVector<int, 8> bytes;
        for (int i = 0; i < 8; ++i) bytes.push_back(8 * half + i);
        llvm::Value* products = builder_.CreateMul(builder_.CreateSExt(builder_.CreateShuffleVector(a, bytes), i16x8),
                                                   builder_.CreateSExt(builder_.CreateShuffleVector(b, bytes), i16x8));
        return builder_.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_saddlp, {i32x4, i16x8}, {products});
      };
      llvm::Value* quads = builder_.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_addp, {i32x4}, {pairs(0), pairs(1)});
      parts.push_back(builder_.CreateAdd(acc, quads));
    }
    return Join(parts);
  }

  void SetFunctionAttributes(llvm::Function* fn) override {
    if (!target_.cpu.empty()) fn->addFnAttr("target-cpu", target_.cpu);
    if (!target_.features.empty()) fn->addFnAttr("target-features", target_.features);
    // LLVM prefers 256-bit vectors on AVX-512 cores; the kernels are written for the full width.
    fn->addFnAttr("prefer-vector-width", std::to_string(target_.vector_lanes * 32));
    fn->addFnAttr(llvm::Attribute::NoUnwind);
  }

  // Up to kStackAllocBytes on the stack (in the entry block, so SROA/mem2reg can promote
  // constant-indexed tiles to registers), larger ones on the heap.
  llvm::Value* EmitAllocation(const Allocate* op) override {
    TUNEFARM_CHECK_MSG(op->scope == MemoryScope::kGlobal, "shared and local memory scopes need a GPU target");
    llvm::Type* elem = LLVMType(op->element_type);
    const int64_t bytes = op->size * op->element_type.bytes();
    if (bytes > kStackAllocBytes) {
      llvm::FunctionCallee malloc_fn = module_->getOrInsertFunction("malloc", ptr_, i64_);
      return builder_.CreateCall(malloc_fn, {llvm::ConstantInt::get(i64_, bytes + 64)});
    }
    llvm::IRBuilder<> entry(alloca_block_, alloca_block_->begin());
    auto* a = entry.CreateAlloca(elem, llvm::ConstantInt::get(i64_, op->size), op->buffer->name);
    a->setAlignment(llvm::Align(64));
    return a;
  }
  void FreeAllocation(const Allocate* op, llvm::Value* buffer) override {
    if (op->size * op->element_type.bytes() <= kStackAllocBytes) return;
    llvm::FunctionCallee free_fn = module_->getOrInsertFunction("free", llvm::Type::getVoidTy(ctx_), ptr_);
    builder_.CreateCall(free_fn, {buffer});
  }

  void EmitBarrier(const Barrier*) override { TUNEFARM_CHECK_MSG(false, "barriers need a GPU target"); }

  void EmitSpecialFor(const For* op) override {
    TUNEFARM_CHECK_MSG(op->kind == ForKind::kParallel, "GPU loop kinds need a GPU target");
    EmitParallelFor(op);
  }

  // Outlines the body into NAME.par.K(begin, end, closure) and launches it through the slot.
  void EmitParallelFor(const For* op) {
    FreeVarCollector fv;
    fv.Visit(op->body);
    std::vector<const VarNode*> captured;
    std::vector<llvm::Type*> field_types;
    for (const VarNode* v : fv.free) {
      if (v == op->var.get()) continue;
      captured.push_back(v);
      field_types.push_back(vars_.at(v)->getType());
    }

    // Pack the closure in the caller; the loop's min rides along as the last field.
    field_types.push_back(i64_);
    auto* closure_ty = llvm::StructType::get(ctx_, field_types);
    llvm::Value* min = Emit(op->min);
    llvm::Value* extent = Emit(op->extent);
    llvm::IRBuilder<> entry(alloca_block_, alloca_block_->begin());
    llvm::Value* closure = entry.CreateAlloca(closure_ty);
    for (size_t i = 0; i < captured.size(); ++i) {
      builder_.CreateStore(vars_.at(captured[i]), builder_.CreateStructGEP(closure_ty, closure, unsigned(i)));
    }
    builder_.CreateStore(min, builder_.CreateStructGEP(closure_ty, closure, unsigned(captured.size())));

    // The outlined body.
    auto* body_ty = llvm::FunctionType::get(i32_, {i64_, i64_, ptr_}, false);
    auto* body_fn = llvm::Function::Create(body_ty, llvm::GlobalValue::InternalLinkage,
                                           kernel_name_ + ".par." + std::to_string(parallel_count_++), module_);
    SetFunctionAttributes(body_fn);
    llvm::Function* saved_fn = function_;
    llvm::BasicBlock* saved_alloca = alloca_block_;
    llvm::BasicBlock* saved_block = builder_.GetInsertBlock();
    auto saved_vars = vars_;
    vars_.clear();
    BeginFunction(body_fn);
    llvm::Value* env = body_fn->getArg(2);
    for (size_t i = 0; i < captured.size(); ++i) {
      vars_[captured[i]] = builder_.CreateLoad(field_types[i], builder_.CreateStructGEP(closure_ty, env, unsigned(i)));
    }
    llvm::Value* body_min =
        builder_.CreateLoad(i64_, builder_.CreateStructGEP(closure_ty, env, unsigned(captured.size())));
    // Iterations [begin, end) of the launch are loop indices min + [begin, end).
    llvm::Value* begin = builder_.CreateAdd(body_min, body_fn->getArg(0));
    llvm::Value* end = builder_.CreateAdd(body_min, body_fn->getArg(1));
    EmitSerialLoop(op->var.get(), begin, end, op->body);
    builder_.CreateRet(llvm::ConstantInt::get(i32_, 0));
    function_ = saved_fn;
    alloca_block_ = saved_alloca;
    builder_.SetInsertPoint(saved_block);
    vars_ = std::move(saved_vars);

    // Launch: through the runtime's pool when the loader bound the slot, else inline.
    llvm::Value* launcher = builder_.CreateLoad(ptr_, slot_);
    auto* pool_bb = llvm::BasicBlock::Create(ctx_, "par.pool", function_);
    auto* inline_bb = llvm::BasicBlock::Create(ctx_, "par.inline", function_);
    auto* done_bb = llvm::BasicBlock::Create(ctx_, "par.done", function_);
    builder_.CreateCondBr(builder_.CreateIsNull(launcher), inline_bb, pool_bb);
    builder_.SetInsertPoint(pool_bb);
    auto* launch_ty = llvm::FunctionType::get(i32_, {i64_, ptr_, ptr_}, false);
    builder_.CreateCall(launch_ty, launcher, {extent, body_fn, closure});
    builder_.CreateBr(done_bb);
    builder_.SetInsertPoint(inline_bb);
    builder_.CreateCall(body_fn, {llvm::ConstantInt::get(i64_, 0), extent, closure});
    builder_.CreateBr(done_bb);
    builder_.SetInsertPoint(done_bb);
  }

  llvm::GlobalVariable* slot_;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget_;  // Has()'s, made on first use
  std::string kernel_name_;
  int parallel_count_ = 0;
};

}  // namespace

std::unique_ptr<codegen::CodeGenLLVM> MakeCodeGenCPU(llvm::LLVMContext* ctx, llvm::Module* module,
                                                     const Target& target) {
  return std::make_unique<CodeGenCPU>(ctx, module, target);
}

}  // namespace tunefarm::compiler
