#include "compiler/codegen/codegen_llvm.h"

#include <unordered_map>
#include <unordered_set>

#include "compiler/codegen/llvm_headers.h"
#include "compiler/ir/ir_visitor.h"
#include "tunefarm/runtime/check.h"
#include "tunefarm/runtime/kernel_abi.h"

namespace tunefarm::compiler {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

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

class CodeGen {
 public:
  CodeGen(llvm::LLVMContext* ctx, llvm::Module* module, const Target& target)
      : ctx_(*ctx), module_(module), builder_(*ctx), target_(target) {
    i32_ = llvm::Type::getInt32Ty(ctx_);
    i64_ = llvm::Type::getInt64Ty(ctx_);
    ptr_ = llvm::PointerType::get(ctx_, 0);
    // The parallel-for slot, shared by every module linked into one library (weak definition).
    slot_ = new llvm::GlobalVariable(*module_, ptr_, false, llvm::GlobalValue::WeakAnyLinkage,
                                     llvm::ConstantPointerNull::get(ptr_), TUNEFARM_PARALLEL_SLOT);
    slot_->setVisibility(llvm::GlobalValue::DefaultVisibility);
  }

  void AddKernel(const KernelSource& k) {
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
  void SetFunctionAttributes(llvm::Function* fn) {
    if (!target_.cpu.empty()) fn->addFnAttr("target-cpu", target_.cpu);
    if (!target_.features.empty()) fn->addFnAttr("target-features", target_.features);
    // LLVM prefers 256-bit vectors on AVX-512 cores; the kernels are written for the full width.
    fn->addFnAttr("prefer-vector-width", std::to_string(target_.vector_lanes * 32));
    fn->addFnAttr(llvm::Attribute::NoUnwind);
  }

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
      case Type::kUInt: base = llvm::Type::getIntNTy(ctx_, t.bits); break;
      case Type::kBool: base = llvm::Type::getInt1Ty(ctx_); break;
      case Type::kFloat: base = t.bits == 64 ? llvm::Type::getDoubleTy(ctx_) : llvm::Type::getFloatTy(ctx_); break;
      case Type::kHandle: base = ptr_; break;
    }
    return t.lanes > 1 ? llvm::FixedVectorType::get(base, t.lanes) : base;
  }

  // ---------------------------------------------------------------- expressions
  llvm::Value* Emit(const Expr& e) {
    switch (e->node_type) {
#define TUNEFARM_EXPR_NODE(Name) \
  case IRNodeType::k##Name: return Emit_(static_cast<const Name*>(e.get()));
#include "compiler/ir/ir_nodes.def"
      default: TUNEFARM_CHECK(false);
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
    if (from.is_float() && to.is_float()) return builder_.CreateFPCast(v, t);
    if (from.is_float()) return builder_.CreateFPToSI(v, t);
    if (to.is_float()) return from.is_bool() ? builder_.CreateUIToFP(v, t) : builder_.CreateSIToFP(v, t);
    if (to.is_bool()) return builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    return builder_.CreateIntCast(v, t, !from.is_bool());
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
    // Floor division: truncating division, minus one when the remainder's sign differs from b's.
    llvm::Value* q = builder_.CreateSDiv(a, b);
    llvm::Value* r = builder_.CreateSRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* fix = builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                                          builder_.CreateICmpNE(builder_.CreateICmpSLT(r, zero), builder_.CreateICmpSLT(b, zero)));
    return builder_.CreateSub(q, builder_.CreateZExt(fix, a->getType()));
  }
  llvm::Value* Emit_(const Mod* op) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    if (op->type.is_float()) return builder_.CreateFRem(a, b);
    llvm::Value* r = builder_.CreateSRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* fix = builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                                          builder_.CreateICmpNE(builder_.CreateICmpSLT(r, zero), builder_.CreateICmpSLT(b, zero)));
    return builder_.CreateSelect(fix, builder_.CreateAdd(r, b), r);
  }
  llvm::Value* Emit_(const ir::Min* op) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    llvm::Value* c = op->type.is_float() ? builder_.CreateFCmpOLT(a, b) : builder_.CreateICmpSLT(a, b);
    return builder_.CreateSelect(c, a, b);
  }
  llvm::Value* Emit_(const ir::Max* op) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    llvm::Value* c = op->type.is_float() ? builder_.CreateFCmpOGT(a, b) : builder_.CreateICmpSGT(a, b);
    return builder_.CreateSelect(c, a, b);
  }
  template <typename T>
  llvm::Value* Compare(const T* op, llvm::CmpInst::Predicate fp, llvm::CmpInst::Predicate ip) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    return op->a.type().is_float() ? builder_.CreateFCmp(fp, a, b) : builder_.CreateICmp(ip, a, b);
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
  llvm::Value* Emit_(const Call* op) {
    std::vector<llvm::Value*> args;
    for (const auto& a : op->args) args.push_back(Emit(a));
    llvm::Type* t = LLVMType(op->type);
    static const std::unordered_map<std::string, llvm::Intrinsic::ID> kIntrinsics = {
        {"exp", llvm::Intrinsic::exp}, {"sqrt", llvm::Intrinsic::sqrt}, {"fabs", llvm::Intrinsic::fabs},
        {"log", llvm::Intrinsic::log}, {"floor", llvm::Intrinsic::floor}};
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
  case IRNodeType::k##Name: return Emit_(static_cast<const Name*>(s.get()));
#include "compiler/ir/ir_nodes.def"
      default: TUNEFARM_CHECK(false);
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
  void Emit_(const Allocate* op) {
    llvm::Type* elem = LLVMType(op->element_type);
    int64_t bytes = op->size * op->element_type.bytes();
    llvm::Value* buf;
    bool on_heap = bytes > kStackAllocBytes;
    if (on_heap) {
      llvm::FunctionCallee malloc_fn = module_->getOrInsertFunction("malloc", ptr_, i64_);
      buf = builder_.CreateCall(malloc_fn, {llvm::ConstantInt::get(i64_, bytes + 64)});
    } else {
      // In the entry block, so SROA/mem2reg can promote constant-indexed tiles to registers.
      llvm::IRBuilder<> entry(alloca_block_, alloca_block_->begin());
      auto* a = entry.CreateAlloca(elem, llvm::ConstantInt::get(i64_, op->size), op->buffer->name);
      a->setAlignment(llvm::Align(64));
      buf = a;
    }
    vars_[op->buffer.get()] = buf;
    Emit(op->body);
    vars_.erase(op->buffer.get());
    if (on_heap) {
      llvm::FunctionCallee free_fn = module_->getOrInsertFunction("free", llvm::Type::getVoidTy(ctx_), ptr_);
      builder_.CreateCall(free_fn, {buf});
    }
  }

  void Emit_(const For* op) {
    if (op->kind == ForKind::kParallel) return EmitParallelFor(op);
    TUNEFARM_CHECK_MSG(op->kind == ForKind::kSerial || op->kind == ForKind::kVectorized || op->kind == ForKind::kUnrolled,
                       "GPU loop kinds need the CUDA code generator");
    EmitSerialLoop(op->var.get(), Emit(op->min), builder_.CreateAdd(Emit(op->min), Emit(op->extent)), op->body);
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
    llvm::Value* body_min = builder_.CreateLoad(i64_, builder_.CreateStructGEP(closure_ty, env, unsigned(captured.size())));
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

  llvm::LLVMContext& ctx_;
  llvm::Module* module_;
  llvm::IRBuilder<> builder_;
  const Target& target_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::PointerType* ptr_;
  llvm::GlobalVariable* slot_;
  llvm::Function* function_ = nullptr;
  llvm::BasicBlock* alloca_block_ = nullptr;
  std::string kernel_name_;
  int parallel_count_ = 0;
  std::unordered_map<const VarNode*, llvm::Value*> vars_;
};

}  // namespace

Result<std::unique_ptr<llvm::Module>> GenerateModule(const std::vector<KernelSource>& kernels, const Target& target,
                                                     llvm::TargetMachine* tm, llvm::LLVMContext* context) {
  auto module = std::make_unique<llvm::Module>(kernels.empty() ? "tunefarm" : kernels[0].func.name, *context);
  module->setTargetTriple(target.triple);
  module->setDataLayout(tm->createDataLayout());
  CodeGen codegen(context, module.get(), target);
  for (const auto& k : kernels) codegen.AddKernel(k);

  std::string errors;
  llvm::raw_string_ostream err_stream(errors);
  if (llvm::verifyModule(*module, &err_stream)) {
    return Status::Internal("LLVM module failed verification: " + err_stream.str());
  }

  // O3 with the new pass manager; the TargetMachine gives the vectorizers the target's costs.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // The kernels arrive vectorized and unrolled by tunefarm's own passes, as the schedule chose;
  // LLVM's loop vectorizer, SLP vectorizer and unroller would only second-guess the config (and
  // they are most of O3's compile time on these fully unrolled tiles).
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = false;
  tuning.SLPVectorization = false;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder pb(tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*module, mam);
  return module;
}

}  // namespace tunefarm::compiler
