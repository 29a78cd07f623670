// The kernel IR: one loop-nest IR for every operator template and every target.
//
// Nodes are immutable structs with public fields and a static Make that checks its invariants;
// they are shared by reference count through the Expr and Stmt handles, so a pass that changes
// nothing returns the very same node (see IRMutator) and `same_as` detects "no change".
//
// ir_semantics:
//  - Integer expressions are int64 unless a Cast says otherwise. Div and Mod on integers are floor
//    division and floor modulo (Python semantics; the divisor is never zero in generated code);
//    on floats Div is IEEE division. Overflow of int64 index arithmetic is undefined.
//  - Vectors: Ramp(base, stride, lanes) is <base, base+stride, ...>; Broadcast(value, lanes)
//    repeats a scalar. Binary operators require operands of the same type (the operators in
//    ir_operators.h broadcast scalars). A vector Load/Store reads/writes lanes elements at the
//    lanes of its index; a dense Ramp (stride 1) is one contiguous access.
//  - Before StorageFlatten, tensors are read with ProducerLoad and written with ProducerStore under
//    a ProducerRealize that gives the region the tensor covers; after it only Load/Store on buffer
//    variables (of handle type) with flat element indices remain.
//  - For loops run var from min to min+extent-1 in order, except kinds kParallel (iterations
//    may run concurrently and in any order), kVectorized and kUnrolled (hints the lowering passes
//    remove) and the GPU bind kinds (iterations are threads or blocks; CUDA codegen only).
//  - Evaluation order inside an expression is unspecified; expressions have no side effects.
#ifndef TUNEFARM_COMPILER_IR_IR_H_
#define TUNEFARM_COMPILER_IR_IR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/type.h"

namespace tunefarm::ir {

enum class IRNodeType : uint8_t {
#define TUNEFARM_EXPR_NODE(Name) k##Name,
#define TUNEFARM_STMT_NODE(Name) k##Name,
#include "compiler/ir/ir_nodes.def"
};

struct IRNode {
  explicit IRNode(IRNodeType t) : node_type(t) {}
  virtual ~IRNode() = default;
  const IRNodeType node_type;
};

struct ExprNode : IRNode {
  ExprNode(IRNodeType t, Type ty) : IRNode(t), type(ty) {}
  const Type type;
};
struct StmtNode : IRNode {
  explicit StmtNode(IRNodeType t) : IRNode(t) {}
};

// A reference-counted handle to an immutable node. Null handles are allowed (e.g. a missing else).
template <typename NodeBase>
class NodeRef {
 public:
  NodeRef() = default;
  NodeRef(std::shared_ptr<const NodeBase> p) : ptr_(std::move(p)) {}  // NOLINT
  const NodeBase* get() const { return ptr_.get(); }
  const NodeBase* operator->() const { return ptr_.get(); }
  bool defined() const { return ptr_ != nullptr; }
  bool same_as(const NodeRef& o) const { return ptr_ == o.ptr_; }
  // The node as T when it is one, else null. T::kNodeType identifies the kind.
  template <typename T>
  const T* as() const {
    if (ptr_ && ptr_->node_type == T::kNodeType) return static_cast<const T*>(ptr_.get());
    return nullptr;
  }
  const std::shared_ptr<const NodeBase>& ptr() const { return ptr_; }

 private:
  std::shared_ptr<const NodeBase> ptr_;
};

class Expr : public NodeRef<ExprNode> {
 public:
  using NodeRef::NodeRef;
  Expr() = default;
  Expr(int64_t v);  // NOLINT: an int64 IntImm
  Expr(int v);      // NOLINT
  Expr(float v);    // NOLINT: a float32 FloatImm
  Expr(double v);   // NOLINT: a float32 FloatImm (kernels compute in float32)
  Type type() const { return get()->type; }
};
using Stmt = NodeRef<StmtNode>;

struct VarNode;
// A variable: loop index, let binding, or buffer pointer (handle type). Identity is the node, not
// the name: two Vars named "i" are different variables.
using Var = std::shared_ptr<const VarNode>;

struct TensorNode;  // defined in compiler/ir/tensor.h
using Tensor = std::shared_ptr<const TensorNode>;

template <typename T>
struct ExprNodeBase : ExprNode {
  explicit ExprNodeBase(Type t) : ExprNode(T::kNodeType, t) {}
};
template <typename T>
struct StmtNodeBase : StmtNode {
  StmtNodeBase() : StmtNode(T::kNodeType) {}
};

#define TUNEFARM_NODE_TYPE(Name) static constexpr IRNodeType kNodeType = IRNodeType::k##Name

struct IntImm : ExprNodeBase<IntImm> {
  TUNEFARM_NODE_TYPE(IntImm);
  int64_t value;
  IntImm(Type t, int64_t v) : ExprNodeBase(t), value(v) {}
  static Expr Make(Type t, int64_t v);
};

struct FloatImm : ExprNodeBase<FloatImm> {
  TUNEFARM_NODE_TYPE(FloatImm);
  double value;
  FloatImm(Type t, double v) : ExprNodeBase(t), value(v) {}
  static Expr Make(Type t, double v);
};

struct VarNode : ExprNodeBase<VarNode> {
  static constexpr IRNodeType kNodeType = IRNodeType::kVarNode;
  std::string name;
  VarNode(Type t, std::string n) : ExprNodeBase(t), name(std::move(n)) {}
};
Var MakeVar(const std::string& name, Type t = Type::Int(64));
inline Expr AsExpr(const Var& v) { return Expr(std::shared_ptr<const ExprNode>(v)); }

struct Cast : ExprNodeBase<Cast> {
  TUNEFARM_NODE_TYPE(Cast);
  Expr value;
  Cast(Type t, Expr v) : ExprNodeBase(t), value(std::move(v)) {}
  static Expr Make(Type t, Expr v);
};

// Binary nodes share one shape; comparison and logical nodes produce Bool.
template <typename T>
struct BinaryNode : ExprNodeBase<T> {
  Expr a, b;
  BinaryNode(Type t, Expr a_, Expr b_) : ExprNodeBase<T>(t), a(std::move(a_)), b(std::move(b_)) {}
  static Expr Make(Expr a, Expr b);
};
#define TUNEFARM_BINARY(Name)      \
  struct Name : BinaryNode<Name> { \
    TUNEFARM_NODE_TYPE(Name);      \
    using BinaryNode::BinaryNode;  \
  };
TUNEFARM_BINARY(Add)
TUNEFARM_BINARY(Sub)
TUNEFARM_BINARY(Mul)
TUNEFARM_BINARY(Div)
TUNEFARM_BINARY(Mod)
TUNEFARM_BINARY(Min)
TUNEFARM_BINARY(Max)
TUNEFARM_BINARY(EQ)
TUNEFARM_BINARY(NE)
TUNEFARM_BINARY(LT)
TUNEFARM_BINARY(LE)
TUNEFARM_BINARY(GT)
TUNEFARM_BINARY(GE)
TUNEFARM_BINARY(And)
TUNEFARM_BINARY(Or)
#undef TUNEFARM_BINARY

struct Not : ExprNodeBase<Not> {
  TUNEFARM_NODE_TYPE(Not);
  Expr a;
  Not(Type t, Expr a_) : ExprNodeBase(t), a(std::move(a_)) {}
  static Expr Make(Expr a);
};

struct Select : ExprNodeBase<Select> {
  TUNEFARM_NODE_TYPE(Select);
  Expr condition, true_value, false_value;
  Select(Type t, Expr c, Expr tv, Expr fv)
      : ExprNodeBase(t), condition(std::move(c)), true_value(std::move(tv)), false_value(std::move(fv)) {}
  static Expr Make(Expr c, Expr tv, Expr fv);
};

struct Ramp : ExprNodeBase<Ramp> {
  TUNEFARM_NODE_TYPE(Ramp);
  Expr base, stride;
  int lanes;
  Ramp(Type t, Expr b, Expr s, int l) : ExprNodeBase(t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  static Expr Make(Expr base, Expr stride, int lanes);
};

struct Broadcast : ExprNodeBase<Broadcast> {
  TUNEFARM_NODE_TYPE(Broadcast);
  Expr value;
  int lanes;
  Broadcast(Type t, Expr v, int l) : ExprNodeBase(t), value(std::move(v)), lanes(l) {}
  static Expr Make(Expr value, int lanes);
};

// Reads buffer[index] (flat, in elements of `type`'s element type); index lanes = result lanes.
struct Load : ExprNodeBase<Load> {
  TUNEFARM_NODE_TYPE(Load);
  Var buffer;
  Expr index;
  Load(Type t, Var buf, Expr idx) : ExprNodeBase(t), buffer(std::move(buf)), index(std::move(idx)) {}
  static Expr Make(Type element_type, Var buffer, Expr index);
};

// Reads tensor[indices...] before storage flattening.
struct ProducerLoad : ExprNodeBase<ProducerLoad> {
  TUNEFARM_NODE_TYPE(ProducerLoad);
  Tensor tensor;
  std::vector<Expr> indices;
  ProducerLoad(Type t, Tensor ten, std::vector<Expr> idx)
      : ExprNodeBase(t), tensor(std::move(ten)), indices(std::move(idx)) {}
  static Expr Make(const Tensor& tensor, std::vector<Expr> indices);
};

// A pure math intrinsic applied lane-wise: exp, tanh, sqrt, fabs.
struct Call : ExprNodeBase<Call> {
  TUNEFARM_NODE_TYPE(Call);
  std::string name;
  std::vector<Expr> args;
  Call(Type t, std::string n, std::vector<Expr> a) : ExprNodeBase(t), name(std::move(n)), args(std::move(a)) {}
  static Expr Make(Type t, const std::string& name, std::vector<Expr> args);
};

struct Let : ExprNodeBase<Let> {
  TUNEFARM_NODE_TYPE(Let);
  Var var;
  Expr value, body;
  Let(Type t, Var v, Expr val, Expr b)
      : ExprNodeBase(t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static Expr Make(Var var, Expr value, Expr body);
};

struct LetStmt : StmtNodeBase<LetStmt> {
  TUNEFARM_NODE_TYPE(LetStmt);
  Var var;
  Expr value;
  Stmt body;
  static Stmt Make(Var var, Expr value, Stmt body);
};

enum class ForKind : uint8_t {
  kSerial,
  kParallel,
  kVectorized,
  kUnrolled,
  // GPU kinds, for the CUDA code generator: the loop becomes a block or thread index.
  kGpuBlockX,
  kGpuBlockY,
  kGpuBlockZ,
  kGpuThreadX,
  kGpuThreadY,
  kGpuThreadZ,
};
const char* ForKindName(ForKind kind);
// Block and thread loops stay loops whatever their extent until GPU lowering binds them to the
// block and thread indices (passes/bind_gpu_threads.h).
inline bool IsGpuLoop(ForKind kind) { return kind >= ForKind::kGpuBlockX; }
inline bool IsGpuBlockLoop(ForKind kind) { return kind >= ForKind::kGpuBlockX && kind <= ForKind::kGpuBlockZ; }
inline bool IsGpuThreadLoop(ForKind kind) { return kind >= ForKind::kGpuThreadX; }
// 0, 1, 2 for x, y, z of a GPU kind.
inline int GpuDimension(ForKind kind) {
  return IsGpuThreadLoop(kind) ? int(kind) - int(ForKind::kGpuThreadX) : int(kind) - int(ForKind::kGpuBlockX);
}

// Where a buffer lives. On CPUs every allocation is kGlobal (stack or heap); GPUs put kShared in
// the block's shared memory and kLocal in a thread's registers/local memory.
enum class MemoryScope : uint8_t { kGlobal, kShared, kLocal };
const char* MemoryScopeName(MemoryScope scope);

struct For : StmtNodeBase<For> {
  TUNEFARM_NODE_TYPE(For);
  Var var;
  Expr min, extent;
  ForKind kind;
  Stmt body;
  static Stmt Make(Var var, Expr min, Expr extent, ForKind kind, Stmt body);
};

struct Store : StmtNodeBase<Store> {
  TUNEFARM_NODE_TYPE(Store);
  Var buffer;
  Expr value, index;
  static Stmt Make(Var buffer, Expr value, Expr index);
};

struct ProducerStore : StmtNodeBase<ProducerStore> {
  TUNEFARM_NODE_TYPE(ProducerStore);
  Tensor tensor;
  Expr value;
  std::vector<Expr> indices;
  static Stmt Make(Tensor tensor, Expr value, std::vector<Expr> indices);
};

// A strided footprint along one dimension: `count` blocks of `block` consecutive indices, `stride`
// apart (a GPU thread's outputs under virtual threads). stride 0: a plain interval.
struct RegionFold {
  int64_t stride = 0, block = 0;
  bool folded() const { return stride > 0; }
};

// Declares that `body` computes the region [mins, mins+extents) of tensor; StorageFlatten turns it
// into an Allocate of the region's size (extents must be constants) with offset indices. A folded
// dimension (folds[d].folded()) holds extents[d] = count x block indices: index i is stored at
// ((i - min) / stride) * block + (i - min) % stride.
struct ProducerRealize : StmtNodeBase<ProducerRealize> {
  TUNEFARM_NODE_TYPE(ProducerRealize);
  Tensor tensor;
  std::vector<Expr> mins;
  std::vector<int64_t> extents;
  Stmt body;
  MemoryScope scope;              // carried to the Allocate
  std::vector<RegionFold> folds;  // empty, or one per dimension
  static Stmt Make(Tensor tensor, std::vector<Expr> mins, std::vector<int64_t> extents, Stmt body,
                   MemoryScope scope = MemoryScope::kGlobal, std::vector<RegionFold> folds = {});
};

// Scope of a buffer of `size` elements of `element_type`, valid inside body only.
struct Allocate : StmtNodeBase<Allocate> {
  TUNEFARM_NODE_TYPE(Allocate);
  Var buffer;
  Type element_type;
  int64_t size;
  Stmt body;
  MemoryScope scope;
  static Stmt Make(Var buffer, Type element_type, int64_t size, Stmt body, MemoryScope scope = MemoryScope::kGlobal);
};

// Waits until every thread of the block reaches it and their writes to `scope` memory are visible
// (CUDA's __syncthreads for kShared). GPU lowering inserts it between a cooperative fetch into
// shared memory and its readers; CPU code generation refuses it.
struct Barrier : StmtNodeBase<Barrier> {
  TUNEFARM_NODE_TYPE(Barrier);
  MemoryScope scope;
  static Stmt Make(MemoryScope scope);
};

struct IfThenElse : StmtNodeBase<IfThenElse> {
  TUNEFARM_NODE_TYPE(IfThenElse);
  Expr condition;
  Stmt then_case, else_case;  // else_case may be null
  // A guard from a non-divisible split: true on all but the boundary iterations, so PartitionLoops
  // may peel those iterations and drop the test from the main loop.
  bool likely;
  static Stmt Make(Expr condition, Stmt then_case, Stmt else_case = Stmt(), bool likely = false);
};

struct Block : StmtNodeBase<Block> {
  TUNEFARM_NODE_TYPE(Block);
  std::vector<Stmt> stmts;
  // Flattens nested blocks and drops null statements; returns the single statement if only one.
  static Stmt Make(std::vector<Stmt> stmts);
};

struct Evaluate : StmtNodeBase<Evaluate> {
  TUNEFARM_NODE_TYPE(Evaluate);
  Expr value;
  static Stmt Make(Expr value);
};

#undef TUNEFARM_NODE_TYPE

// Convenience: the constant value of an integer immediate (possibly inside a Broadcast).
const int64_t* AsConstInt(const Expr& e);
bool IsConstInt(const Expr& e, int64_t value);

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_IR_H_
