// CodeGenLLVM: the target-independent half of LLVM code generation. It translates the kernel IR's
// expressions, loads and stores, lets, conditionals and serial loops into LLVM IR; what depends on
// the kind of target is a subclass's: how a kernel becomes functions (the CPU's C ABI entry, a GPU
// kernel and its launch), parallel and GPU loops, where allocations live (stack/heap, shared or
// local memory), barriers and function attributes. CodeGenCPU (codegen_cpu.h) is the CPU's; an
// NVPTX subclass is the GPU's.
//
// One object per LLVM module; not thread-safe (each thread builds its own module and context).
#ifndef TUNEFARM_COMPILER_CODEGEN_CODEGEN_LLVM_BASE_H_
#define TUNEFARM_COMPILER_CODEGEN_CODEGEN_LLVM_BASE_H_

#include <string>
#include <unordered_map>

#include "compiler/codegen/codegen_llvm.h"
#include "compiler/codegen/llvm_headers.h"
#include "compiler/ir/ir.h"
#include "compiler/ir/ir_operators.h"
#include "tunefarm/runtime/check.h"

// The code generators' own namespace: the IR's node names read unqualified, as in every pass.
namespace tunefarm::compiler::codegen {

using namespace ir;  // NOLINT(google-build-using-namespace): private header, this namespace only

class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::LLVMContext* ctx, llvm::Module* module, const Target& target)
      : ctx_(*ctx), module_(module), builder_(*ctx), target_(target) {
    i32_ = llvm::Type::getInt32Ty(ctx_);
    i64_ = llvm::Type::getInt64Ty(ctx_);
    ptr_ = llvm::PointerType::get(ctx_, 0);
  }
  virtual ~CodeGenLLVM() = default;

  // Adds one lowered kernel (and whatever entry points the target's ABI needs) to the module.
  virtual void AddKernel(const KernelSource& k) = 0;

 protected:
  // --- what subclasses decide ---
  virtual void SetFunctionAttributes(llvm::Function* fn) = 0;
  // Loops of a kind other than serial, vectorized (already lanes) and unrolled (already copies).
  virtual void EmitSpecialFor(const ir::For* op) = 0;
  // The storage of an allocation, valid while its body is emitted; FreeAllocation ends it.
  virtual llvm::Value* EmitAllocation(const ir::Allocate* op) = 0;
  virtual void FreeAllocation(const ir::Allocate* op, llvm::Value* buffer) = 0;
  virtual void EmitBarrier(const ir::Barrier* op) = 0;

  void BeginFunction(llvm::Function* fn) {
    function_ = fn;
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
    builder_.SetInsertPoint(entry);
    alloca_block_ = entry;
  }

  llvm::Type* LLVMType(Type t) {
    llvm::Type* base = nullptr;
    switch (t.code) {
      case Type::kInt:
      case Type::kUInt:
        base = llvm::Type::getIntNTy(ctx_, t.bits);
        break;
      case Type::kBool:
        base = llvm::Type::getInt1Ty(ctx_);
        break;
      case Type::kFloat:
        base = t.bits == 64 ? llvm::Type::getDoubleTy(ctx_) : llvm::Type::getFloatTy(ctx_);
        break;
      case Type::kHandle:
        base = ptr_;
        break;
    }
    return t.lanes > 1 ? llvm::FixedVectorType::get(base, t.lanes) : base;
  }

  // ---------------------------------------------------------------- expressions
  llvm::Value* Emit(const Expr& e) {
    switch (e->node_type) {
#define TUNEFARM_EXPR_NODE(Name) \
  case IRNodeType::k##Name:      \
    return Emit_(static_cast<const Name*>(e.get()));
#include "compiler/ir/ir_nodes.def"
      default:
        TUNEFARM_CHECK(false);
    }
    return nullptr;
  }

  llvm::Value* Emit_(const IntImm* op) { return llvm::ConstantInt::getSigned(LLVMType(op->type), op->value); }
  llvm::Value* Emit_(const FloatImm* op) { return llvm::ConstantFP::get(LLVMType(op->type), op->value); }
  llvm::Value* Emit_(const VarNode* op) {
    auto it = vars_.find(op);
    TUNEFARM_CHECK_MSG(it != vars_.end(), ("unbound variable " + op->name).c_str());
    return it->second;
  }
  llvm::Value* Emit_(const Cast* op) {
    llvm::Value* v = Emit(op->value);
    Type from = op->value.type(), to = op->type;
    llvm::Type* t = LLVMType(to);
    // Unsigned types (uint8, bool) convert and widen as unsigned.
    const bool from_unsigned = from.is_bool() || from.code == Type::kUInt;
    if (from.is_float() && to.is_float()) return builder_.CreateFPCast(v, t);
    if (from.is_float()) return to.code == Type::kUInt ? builder_.CreateFPToUI(v, t) : builder_.CreateFPToSI(v, t);
    if (to.is_float()) return from_unsigned ? builder_.CreateUIToFP(v, t) : builder_.CreateSIToFP(v, t);
    if (to.is_bool()) return builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    return builder_.CreateIntCast(v, t, !from_unsigned);
  }
  llvm::Value* Emit_(const Add* op) {
    if (op->type.is_float()) {
      // a + b*c -> fmuladd: one FMA per multiply-accumulate, the instruction kernels live on.
      if (const auto* m = op->b.as<Mul>()) return FMulAdd(m->a, m->b, op->a);
      if (const auto* m = op->a.as<Mul>()) return FMulAdd(m->a, m->b, op->b);
      return builder_.CreateFAdd(Emit(op->a), Emit(op->b));
    }
    return builder_.CreateAdd(Emit(op->a), Emit(op->b));
  }
  llvm::Value* FMulAdd(const Expr& a, const Expr& b, const Expr& c) {
    llvm::Value* va = Emit(a);
    llvm::Value* vb = Emit(b);
    llvm::Value* vc = Emit(c);
    return builder_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {va->getType()}, {va, vb, vc});
  }
  llvm::Value* Emit_(const Sub* op) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    return op->type.is_float() ? builder_.CreateFSub(a, b) : builder_.CreateSub(a, b);
  }
  llvm::Value* Emit_(const ir::Mul* op) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    return op->type.is_float() ? builder_.CreateFMul(a, b) : builder_.CreateMul(a, b);
  }
  llvm::Value* Emit_(const Div* op) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    if (op->type.is_float()) return builder_.CreateFDiv(a, b);
    if (op->type.code == Type::kUInt) return builder_.CreateUDiv(a, b);  // floor = truncation
    // Floor division: truncating division, minus one when the remainder's sign differs from b's.
    llvm::Value* q = builder_.CreateSDiv(a, b);
    llvm::Value* r = builder_.CreateSRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* fix =
        builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                           builder_.CreateICmpNE(builder_.CreateICmpSLT(r, zero), builder_.CreateICmpSLT(b, zero)));
    return builder_.CreateSub(q, builder_.CreateZExt(fix, a->getType()));
  }
  llvm::Value* Emit_(const Mod* op) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    if (op->type.is_float()) return builder_.CreateFRem(a, b);
    if (op->type.code == Type::kUInt) return builder_.CreateURem(a, b);
    llvm::Value* r = builder_.CreateSRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* fix =
        builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                           builder_.CreateICmpNE(builder_.CreateICmpSLT(r, zero), builder_.CreateICmpSLT(b, zero)));
    return builder_.CreateSelect(fix, builder_.CreateAdd(r, b), r);
  }
  llvm::Value* Emit_(const ir::Min* op) { return MinMax(op->a, op->b, op->type, true); }
  llvm::Value* Emit_(const ir::Max* op) { return MinMax(op->a, op->b, op->type, false); }
  llvm::Value* MinMax(const Expr& ea, const Expr& eb, Type t, bool is_min) {
    llvm::Value* a = Emit(ea);
    llvm::Value* b = Emit(eb);
    llvm::Value* c =
        t.is_float()            ? builder_.CreateFCmp(is_min ? llvm::CmpInst::FCMP_OLT : llvm::CmpInst::FCMP_OGT, a, b)
        : t.code == Type::kUInt ? builder_.CreateICmp(is_min ? llvm::CmpInst::ICMP_ULT : llvm::CmpInst::ICMP_UGT, a, b)
                                : builder_.CreateICmp(is_min ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_SGT, a, b);
    return builder_.CreateSelect(c, a, b);
  }
  template <typename T>
  llvm::Value* Compare(const T* op, llvm::CmpInst::Predicate fp, llvm::CmpInst::Predicate ip) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    if (op->a.type().is_float()) return builder_.CreateFCmp(fp, a, b);
    // Unsigned operands compare unsigned (the predicates for == and != are the same).
    if (op->a.type().code == Type::kUInt) ip = llvm::ICmpInst::getUnsignedPredicate(ip);
    return builder_.CreateICmp(ip, a, b);
  }
  llvm::Value* Emit_(const EQ* op) { return Compare(op, llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::ICMP_EQ); }
  llvm::Value* Emit_(const NE* op) { return Compare(op, llvm::CmpInst::FCMP_UNE, llvm::CmpInst::ICMP_NE); }
  llvm::Value* Emit_(const LT* op) { return Compare(op, llvm::CmpInst::FCMP_OLT, llvm::CmpInst::ICMP_SLT); }
  llvm::Value* Emit_(const LE* op) { return Compare(op, llvm::CmpInst::FCMP_OLE, llvm::CmpInst::ICMP_SLE); }
  llvm::Value* Emit_(const GT* op) { return Compare(op, llvm::CmpInst::FCMP_OGT, llvm::CmpInst::ICMP_SGT); }
  llvm::Value* Emit_(const GE* op) { return Compare(op, llvm::CmpInst::FCMP_OGE, llvm::CmpInst::ICMP_SGE); }
  llvm::Value* Emit_(const And* op) { return builder_.CreateAnd(Emit(op->a), Emit(op->b)); }
  llvm::Value* Emit_(const Or* op) { return builder_.CreateOr(Emit(op->a), Emit(op->b)); }
  llvm::Value* Emit_(const Not* op) { return builder_.CreateNot(Emit(op->a)); }
  llvm::Value* Emit_(const Select* op) {
    llvm::Value* c = Emit(op->condition);
    return builder_.CreateSelect(c, Emit(op->true_value), Emit(op->false_value));
  }
  llvm::Value* Emit_(const Ramp* op) {
    llvm::Value* base = Emit(op->base);
    llvm::Value* stride = Emit(op->stride);
    llvm::Value* vec = llvm::PoisonValue::get(LLVMType(op->type));
    for (int i = 0; i < op->lanes; ++i) {
      llvm::Value* lane = builder_.CreateAdd(base, builder_.CreateMul(stride, llvm::ConstantInt::get(i64_, i)));
      vec = builder_.CreateInsertElement(vec, lane, uint64_t(i));
    }
    return vec;
  }
  llvm::Value* Emit_(const Broadcast* op) { return builder_.CreateVectorSplat(op->lanes, Emit(op->value)); }

  // Dense ramps are one vector access; other vector indices access lane by lane.
  const Ramp* DenseRamp(const Expr& index) {
    const auto* r = index.as<Ramp>();
    return r && IsConstInt(r->stride, 1) ? r : nullptr;
  }
  llvm::Value* Emit_(const Load* op) {
    llvm::Value* buf = Emit(AsExpr(op->buffer));
    llvm::Type* elem = LLVMType(op->type.element_of());
    llvm::Align align(op->type.bytes());
    if (op->type.lanes == 1) {
      return builder_.CreateAlignedLoad(elem, builder_.CreateInBoundsGEP(elem, buf, Emit(op->index)), align);
    }
    if (const Ramp* r = DenseRamp(op->index)) {
      llvm::Value* addr = builder_.CreateInBoundsGEP(elem, buf, Emit(r->base));
      return builder_.CreateAlignedLoad(LLVMType(op->type), addr, align);
    }
    llvm::Value* idx = Emit(op->index);
    llvm::Value* vec = llvm::PoisonValue::get(LLVMType(op->type));
    for (int i = 0; i < op->type.lanes; ++i) {
      llvm::Value* lane_idx = builder_.CreateExtractElement(idx, uint64_t(i));
      llvm::Value* v = builder_.CreateAlignedLoad(elem, builder_.CreateInBoundsGEP(elem, buf, lane_idx), align);
      vec = builder_.CreateInsertElement(vec, v, uint64_t(i));
    }
    return vec;
  }
  llvm::Value* Emit_(const ProducerLoad*) {
    TUNEFARM_CHECK_MSG(false, "ProducerLoad reached codegen: StorageFlatten did not run");
    return nullptr;
  }
  // A target's own lowering of a call (NVPTX: warp shuffles); null: the LLVM intrinsics below.
  virtual llvm::Value* EmitTargetMath(const Call* op, const std::vector<llvm::Value*>& args) {
    (void)op;
    (void)args;
    return nullptr;
  }
  llvm::Value* Emit_(const Call* op) {
    std::vector<llvm::Value*> args;
    for (const auto& a : op->args) args.push_back(Emit(a));
    if (llvm::Value* v = EmitTargetMath(op, args)) return v;
    llvm::Type* t = LLVMType(op->type);
    if (op->name == kReinterpret) return builder_.CreateBitCast(args[0], t);
    if (op->name == kDot4U8S8) return EmitDot4Widening(args[0], args[1], args[2], op->type.lanes, false);
    if (op->name == kDot4S8S8) return EmitDot4Widening(args[0], args[1], args[2], op->type.lanes, true);
    if (op->name == kDot2I16) return EmitDot2Widening(args[0], args[1], args[2], op->type.lanes);
    if (op->name == kBytePair) return EmitBytePair(op, args);
    if (op->name == kRoundToInt32) {
      llvm::Value* rounded = builder_.CreateIntrinsic(llvm::Intrinsic::roundeven, {args[0]->getType()}, args);
      return builder_.CreateFPToSI(rounded, t);
    }
    if (op->name == "shift_left") return builder_.CreateShl(args[0], args[1]);
    if (op->name == "shift_right") return builder_.CreateLShr(args[0], args[1]);  // unsigned: logical
    if (op->name == kBitwiseXor) return builder_.CreateXor(args[0], args[1]);
    static const std::unordered_map<std::string, llvm::Intrinsic::ID> kIntrinsics = {
        {"exp", llvm::Intrinsic::exp}, {"sqrt", llvm::Intrinsic::sqrt},   {"fabs", llvm::Intrinsic::fabs},
        {"log", llvm::Intrinsic::log}, {"floor", llvm::Intrinsic::floor}, {"roundeven", llvm::Intrinsic::roundeven}};
    auto it = kIntrinsics.find(op->name);
    if (it != kIntrinsics.end()) return builder_.CreateIntrinsic(it->second, {t}, args);
    if (op->name == "tanh") {
      // tanh(x) = 1 - 2 / (exp(2x) + 1): only llvm.exp needed, vectorizes like the rest.
      llvm::Value* two = llvm::ConstantFP::get(t, 2.0);
      llvm::Value* one = llvm::ConstantFP::get(t, 1.0);
      llvm::Value* e = builder_.CreateIntrinsic(llvm::Intrinsic::exp, {t}, {builder_.CreateFMul(args[0], two)});
      return builder_.CreateFSub(one, builder_.CreateFDiv(two, builder_.CreateFAdd(e, one)));
    }
    TUNEFARM_CHECK_MSG(false, ("unknown intrinsic " + op->name).c_str());
    return nullptr;
  }
  // The bytes of `lanes` int32 lanes as 4*lanes i8 lanes, widened to `wide` (zero- or sign-extended).
  llvm::Value* WidenBytes(llvm::Value* v, int lanes, llvm::Type* wide, bool is_signed) {
    llvm::Value* bytes =
        builder_.CreateBitCast(v, llvm::FixedVectorType::get(builder_.getInt8Ty(), unsigned(4 * lanes)));
    llvm::Type* to = llvm::FixedVectorType::get(wide, unsigned(4 * lanes));
    return is_signed ? builder_.CreateSExt(bytes, to) : builder_.CreateZExt(bytes, to);
  }
  // Lanes first, first + step, ... of an n-lane vector (n / step of them).
  llvm::Value* Strided(llvm::Value* v, int n, int first, int step) {
    llvm::SmallVector<int, 64> mask;
    for (int i = first; i < n; i += step) mask.push_back(i);
    return builder_.CreateShuffleVector(v, mask);
  }
  // acc + the sum of each lane's four u8 (a_signed: s8) x s8 products: the bytes widened to int32,
  // multiplied, then lanes added in pairs twice (the form instruction selection turns into widening
  // multiply-adds where the target has them).
  llvm::Value* EmitDot4Widening(llvm::Value* acc, llvm::Value* a, llvm::Value* b, int lanes, bool a_signed) {
    llvm::Value* products = builder_.CreateMul(WidenBytes(a, lanes, i32_, a_signed), WidenBytes(b, lanes, i32_, true));
    llvm::Value* pairs = builder_.CreateAdd(Strided(products, 4 * lanes, 0, 2), Strided(products, 4 * lanes, 1, 2));
    llvm::Value* quads = builder_.CreateAdd(Strided(pairs, 2 * lanes, 0, 2), Strided(pairs, 2 * lanes, 1, 2));
    if (lanes == 1) quads = builder_.CreateExtractElement(quads, uint64_t(0));
    return builder_.CreateAdd(acc, quads);
  }
  // byte_pair(lo, hi): lo | hi << 16 in int32 lanes. Scalar pairs stay in general-purpose
  // registers (two byte loads, a shift and an or, then one broadcast): a 16-bit load spread by
  // vpmovzxbw puts a second shuffle on the vector ports and ran ResNet-18's int8 3x3 convs 10%
  // slower (AVX2 code on a Zen 5).
  llvm::Value* EmitBytePair(const Call* op, const std::vector<llvm::Value*>& args) {
    llvm::Type* wide = LLVMType(op->type);
    llvm::Value* lo = builder_.CreateZExt(args[0], wide);
    llvm::Value* hi = builder_.CreateShl(builder_.CreateZExt(args[1], wide), llvm::ConstantInt::get(wide, 16));
    return builder_.CreateOr(lo, hi);
  }
  // acc + the sum of each lane's two int16 products, in the same widening form.
  llvm::Value* EmitDot2Widening(llvm::Value* acc, llvm::Value* a, llvm::Value* b, int lanes) {
    auto halves = [&](llvm::Value* v) {
      llvm::Value* h =
          builder_.CreateBitCast(v, llvm::FixedVectorType::get(builder_.getInt16Ty(), unsigned(2 * lanes)));
      return builder_.CreateSExt(h, llvm::FixedVectorType::get(i32_, unsigned(2 * lanes)));
    };
    llvm::Value* products = builder_.CreateMul(halves(a), halves(b));
    llvm::Value* pairs = builder_.CreateAdd(Strided(products, 2 * lanes, 0, 2), Strided(products, 2 * lanes, 1, 2));
    if (lanes == 1) pairs = builder_.CreateExtractElement(pairs, uint64_t(0));
    return builder_.CreateAdd(acc, pairs);
  }
  llvm::Value* Emit_(const Let* op) {
    vars_[op->var.get()] = Emit(op->value);
    llvm::Value* v = Emit(op->body);
    vars_.erase(op->var.get());
    return v;
  }

  // ---------------------------------------------------------------- statements
  void Emit(const Stmt& s) {
    if (!s.defined()) return;
    switch (s->node_type) {
#define TUNEFARM_STMT_NODE(Name) \
  case IRNodeType::k##Name:      \
    return Emit_(static_cast<const Name*>(s.get()));
#include "compiler/ir/ir_nodes.def"
      default:
        TUNEFARM_CHECK(false);
    }
  }

  void Emit_(const LetStmt* op) {
    vars_[op->var.get()] = Emit(op->value);
    Emit(op->body);
    vars_.erase(op->var.get());
  }
  void Emit_(const Store* op) {
    llvm::Value* buf = Emit(AsExpr(op->buffer));
    llvm::Value* value = Emit(op->value);
    Type vt = op->value.type();
    llvm::Type* elem = LLVMType(vt.element_of());
    llvm::Align align(vt.bytes());
    if (vt.lanes == 1) {
      builder_.CreateAlignedStore(value, builder_.CreateInBoundsGEP(elem, buf, Emit(op->index)), align);
      return;
    }
    if (const Ramp* r = DenseRamp(op->index)) {
      builder_.CreateAlignedStore(value, builder_.CreateInBoundsGEP(elem, buf, Emit(r->base)), align);
      return;
    }
    llvm::Value* idx = Emit(op->index);
    for (int i = 0; i < vt.lanes; ++i) {
      llvm::Value* lane_idx = builder_.CreateExtractElement(idx, uint64_t(i));
      builder_.CreateAlignedStore(builder_.CreateExtractElement(value, uint64_t(i)),
                                  builder_.CreateInBoundsGEP(elem, buf, lane_idx), align);
    }
  }
  void Emit_(const ProducerStore*) { TUNEFARM_CHECK_MSG(false, "ProducerStore reached codegen"); }
  void Emit_(const ProducerRealize*) { TUNEFARM_CHECK_MSG(false, "ProducerRealize reached codegen"); }
  void Emit_(const Evaluate* op) { Emit(op->value); }
  void Emit_(const ir::Barrier* op) { EmitBarrier(op); }
  void Emit_(const Block* op) {
    for (const auto& s : op->stmts) Emit(s);
  }
  void Emit_(const IfThenElse* op) {
    llvm::Value* cond = Emit(op->condition);
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", function_);
    auto* end_bb = llvm::BasicBlock::Create(ctx_, "endif", function_);
    auto* else_bb = op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "else", function_) : end_bb;
    llvm::MDNode* weights = op->likely ? llvm::MDBuilder(ctx_).createLikelyBranchWeights() : nullptr;
    builder_.CreateCondBr(cond, then_bb, else_bb, weights);
    builder_.SetInsertPoint(then_bb);
    Emit(op->then_case);
    builder_.CreateBr(end_bb);
    if (op->else_case.defined()) {
      builder_.SetInsertPoint(else_bb);
      Emit(op->else_case);
      builder_.CreateBr(end_bb);
    }
    builder_.SetInsertPoint(end_bb);
  }
  void Emit_(const ir::Allocate* op) {
    llvm::Value* buf = EmitAllocation(op);
    vars_[op->buffer.get()] = buf;
    Emit(op->body);
    vars_.erase(op->buffer.get());
    FreeAllocation(op, buf);
  }

  void Emit_(const ir::For* op) {
    if (op->kind == ir::ForKind::kSerial || op->kind == ir::ForKind::kVectorized ||
        op->kind == ir::ForKind::kUnrolled) {
      EmitSerialLoop(op->var.get(), Emit(op->min), builder_.CreateAdd(Emit(op->min), Emit(op->extent)), op->body);
      return;
    }
    EmitSpecialFor(op);
  }

  // for (var = begin; var < end; ++var) body, with a guard when the trip count may be zero.
  void EmitSerialLoop(const VarNode* var, llvm::Value* begin, llvm::Value* end, const Stmt& body) {
    auto* pre_bb = builder_.GetInsertBlock();
    auto* loop_bb = llvm::BasicBlock::Create(ctx_, "for." + var->name, function_);
    auto* exit_bb = llvm::BasicBlock::Create(ctx_, "for.end", function_);
    builder_.CreateCondBr(builder_.CreateICmpSLT(begin, end), loop_bb, exit_bb);
    builder_.SetInsertPoint(loop_bb);
    llvm::PHINode* phi = builder_.CreatePHI(i64_, 2, var->name);
    phi->addIncoming(begin, pre_bb);
    vars_[var] = phi;
    Emit(body);
    vars_.erase(var);
    llvm::Value* next = builder_.CreateAdd(phi, llvm::ConstantInt::get(i64_, 1), "", true, true);
    phi->addIncoming(next, builder_.GetInsertBlock());
    builder_.CreateCondBr(builder_.CreateICmpSLT(next, end), loop_bb, exit_bb);
    builder_.SetInsertPoint(exit_bb);
  }

  llvm::LLVMContext& ctx_;
  llvm::Module* module_;
  llvm::IRBuilder<> builder_;
  const Target& target_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::PointerType* ptr_;
  llvm::Function* function_ = nullptr;
  llvm::BasicBlock* alloca_block_ = nullptr;
  std::unordered_map<const ir::VarNode*, llvm::Value*> vars_;
};

}  // namespace tunefarm::compiler::codegen

#endif  // TUNEFARM_COMPILER_CODEGEN_CODEGEN_LLVM_BASE_H_
