#include "compiler/ir/ir.h"

#include "compiler/ir/tensor.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::ir {

std::string Type::ToString() const {
  std::string s;
  switch (code) {
    case kInt:
      s = "int" + std::to_string(bits);
      break;
    case kUInt:
      s = "uint" + std::to_string(bits);
      break;
    case kFloat:
      s = "float" + std::to_string(bits);
      break;
    case kBool:
      s = "bool";
      break;
    case kHandle:
      s = "handle";
      break;
  }
  if (lanes > 1) s += "x" + std::to_string(lanes);
  return s;
}

Expr::Expr(int64_t v) : Expr(IntImm::Make(Type::Int(64), v)) {}
Expr::Expr(int v) : Expr(IntImm::Make(Type::Int(64), v)) {}
Expr::Expr(float v) : Expr(FloatImm::Make(Type::Float(32), v)) {}
Expr::Expr(double v) : Expr(FloatImm::Make(Type::Float(32), v)) {}

Expr IntImm::Make(Type t, int64_t v) {
  TUNEFARM_CHECK((t.is_int() || t.is_bool()) && t.lanes == 1);
  return Expr(std::make_shared<const IntImm>(t, v));
}
Expr FloatImm::Make(Type t, double v) {
  TUNEFARM_CHECK(t.is_float() && t.lanes == 1);
  return Expr(std::make_shared<const FloatImm>(t, v));
}
Var MakeVar(const std::string& name, Type t) { return std::make_shared<const VarNode>(t, name); }

Expr Cast::Make(Type t, Expr v) {
  TUNEFARM_CHECK(v.defined() && t.lanes == v.type().lanes);
  return Expr(std::make_shared<const Cast>(t, std::move(v)));
}

template <typename T>
Expr BinaryNode<T>::Make(Expr a, Expr b) {
  TUNEFARM_CHECK(a.defined() && b.defined());
  TUNEFARM_CHECK_MSG(a.type() == b.type(), (a.type().ToString() + " vs " + b.type().ToString()).c_str());
  Type t = a.type();
  constexpr bool kIsCompare = T::kNodeType == IRNodeType::kEQ || T::kNodeType == IRNodeType::kNE ||
                              T::kNodeType == IRNodeType::kLT || T::kNodeType == IRNodeType::kLE ||
                              T::kNodeType == IRNodeType::kGT || T::kNodeType == IRNodeType::kGE;
  if (kIsCompare) t = Type::Bool(t.lanes);
  if (T::kNodeType == IRNodeType::kAnd || T::kNodeType == IRNodeType::kOr) TUNEFARM_CHECK(t.is_bool());
  return Expr(std::make_shared<const T>(t, std::move(a), std::move(b)));
}
template struct BinaryNode<Add>;
template struct BinaryNode<Sub>;
template struct BinaryNode<Mul>;
template struct BinaryNode<Div>;
template struct BinaryNode<Mod>;
template struct BinaryNode<Min>;
template struct BinaryNode<Max>;
template struct BinaryNode<EQ>;
template struct BinaryNode<NE>;
template struct BinaryNode<LT>;
template struct BinaryNode<LE>;
template struct BinaryNode<GT>;
template struct BinaryNode<GE>;
template struct BinaryNode<And>;
template struct BinaryNode<Or>;

Expr Not::Make(Expr a) {
  TUNEFARM_CHECK(a.type().is_bool());
  Type t = a.type();
  return Expr(std::make_shared<const Not>(t, std::move(a)));
}

Expr Select::Make(Expr c, Expr tv, Expr fv) {
  TUNEFARM_CHECK(c.type().is_bool() && tv.type() == fv.type());
  TUNEFARM_CHECK(c.type().lanes == 1 || c.type().lanes == tv.type().lanes);
  Type t = tv.type();
  return Expr(std::make_shared<const Select>(t, std::move(c), std::move(tv), std::move(fv)));
}

Expr Ramp::Make(Expr base, Expr stride, int lanes) {
  TUNEFARM_CHECK(base.type().is_int() && base.type().lanes == 1 && stride.type() == base.type());
  TUNEFARM_CHECK(lanes > 1);
  Type t = base.type().with_lanes(lanes);
  return Expr(std::make_shared<const Ramp>(t, std::move(base), std::move(stride), lanes));
}

Expr Broadcast::Make(Expr value, int lanes) {
  TUNEFARM_CHECK(value.type().lanes == 1 && lanes > 1);
  Type t = value.type().with_lanes(lanes);
  return Expr(std::make_shared<const Broadcast>(t, std::move(value), lanes));
}

Expr Load::Make(Type element_type, Var buffer, Expr index) {
  TUNEFARM_CHECK(buffer && buffer->type.is_handle() && index.type().is_int());
  Type t = element_type.with_lanes(index.type().lanes);
  return Expr(std::make_shared<const Load>(t, std::move(buffer), std::move(index)));
}

Expr ProducerLoad::Make(const Tensor& tensor, std::vector<Expr> indices) {
  TUNEFARM_CHECK(tensor && indices.size() == tensor->shape.size());
  for (const Expr& i : indices) TUNEFARM_CHECK(i.type() == Type::Int(64));
  return Expr(std::make_shared<const ProducerLoad>(tensor->dtype, tensor, std::move(indices)));
}

Expr Call::Make(Type t, const std::string& name, std::vector<Expr> args) {
  return Expr(std::make_shared<const Call>(t, name, std::move(args)));
}

Expr Let::Make(Var var, Expr value, Expr body) {
  TUNEFARM_CHECK(var->type == value.type());
  Type t = body.type();
  return Expr(std::make_shared<const Let>(t, std::move(var), std::move(value), std::move(body)));
}

Stmt LetStmt::Make(Var var, Expr value, Stmt body) {
  TUNEFARM_CHECK(var->type == value.type());
  auto n = std::make_shared<LetStmt>();
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "for";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unrolled";
    case ForKind::kGpuBlockX:
      return "gpu_block_x";
    case ForKind::kGpuBlockY:
      return "gpu_block_y";
    case ForKind::kGpuBlockZ:
      return "gpu_block_z";
    case ForKind::kGpuThreadX:
      return "gpu_thread_x";
    case ForKind::kGpuThreadY:
      return "gpu_thread_y";
    case ForKind::kGpuThreadZ:
      return "gpu_thread_z";
  }
  return "?";
}

Stmt For::Make(Var var, Expr min, Expr extent, ForKind kind, Stmt body) {
  TUNEFARM_CHECK(min.type() == Type::Int(64) && extent.type() == Type::Int(64) && body.defined());
  auto n = std::make_shared<For>();
  n->var = std::move(var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->kind = kind;
  n->body = std::move(body);
  return Stmt(std::move(n));
}

Stmt Store::Make(Var buffer, Expr value, Expr index) {
  TUNEFARM_CHECK(buffer && buffer->type.is_handle());
  TUNEFARM_CHECK(value.type().lanes == index.type().lanes);
  auto n = std::make_shared<Store>();
  n->buffer = std::move(buffer);
  n->value = std::move(value);
  n->index = std::move(index);
  return Stmt(std::move(n));
}

Stmt ProducerStore::Make(Tensor tensor, Expr value, std::vector<Expr> indices) {
  TUNEFARM_CHECK(tensor && indices.size() == tensor->shape.size());
  auto n = std::make_shared<ProducerStore>();
  n->tensor = std::move(tensor);
  n->value = std::move(value);
  n->indices = std::move(indices);
  return Stmt(std::move(n));
}

Stmt ProducerRealize::Make(Tensor tensor, std::vector<Expr> mins, std::vector<int64_t> extents, Stmt body,
                           MemoryScope scope, std::vector<RegionFold> folds) {
  TUNEFARM_CHECK(mins.size() == tensor->shape.size() && extents.size() == mins.size());
  TUNEFARM_CHECK(folds.empty() || folds.size() == mins.size());
  bool any = false;
  for (const RegionFold& f : folds) any = any || f.folded();
  if (!any) folds.clear();
  auto n = std::make_shared<ProducerRealize>();
  n->tensor = std::move(tensor);
  n->mins = std::move(mins);
  n->extents = std::move(extents);
  n->body = std::move(body);
  n->scope = scope;
  n->folds = std::move(folds);
  return Stmt(std::move(n));
}

Stmt Allocate::Make(Var buffer, Type element_type, int64_t size, Stmt body, MemoryScope scope) {
  TUNEFARM_CHECK(buffer->type.is_handle() && size > 0);
  auto n = std::make_shared<Allocate>();
  n->buffer = std::move(buffer);
  n->element_type = element_type;
  n->size = size;
  n->body = std::move(body);
  n->scope = scope;
  return Stmt(std::move(n));
}

Stmt Barrier::Make(MemoryScope scope) {
  auto n = std::make_shared<Barrier>();
  n->scope = scope;
  return Stmt(std::move(n));
}

const char* MemoryScopeName(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::kGlobal:
      return "global";
    case MemoryScope::kShared:
      return "shared";
    case MemoryScope::kLocal:
      return "local";
  }
  return "?";
}

Stmt IfThenElse::Make(Expr condition, Stmt then_case, Stmt else_case, bool likely) {
  TUNEFARM_CHECK(condition.type() == Type::Bool() && then_case.defined());
  auto n = std::make_shared<IfThenElse>();
  n->condition = std::move(condition);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  n->likely = likely;
  return Stmt(std::move(n));
}

Stmt Block::Make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s.defined()) continue;
    if (const Block* b = s.as<Block>()) {
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  auto n = std::make_shared<Block>();
  n->stmts = std::move(flat);
  return Stmt(std::move(n));
}

Stmt Evaluate::Make(Expr value) {
  auto n = std::make_shared<Evaluate>();
  n->value = std::move(value);
  return Stmt(std::move(n));
}

const int64_t* AsConstInt(const Expr& e) {
  if (const IntImm* i = e.as<IntImm>()) return &i->value;
  if (const Broadcast* b = e.as<Broadcast>()) return AsConstInt(b->value);
  return nullptr;
}
bool IsConstInt(const Expr& e, int64_t value) {
  const int64_t* v = AsConstInt(e);
  return v && *v == value;
}

int64_t TensorNode::NumElements() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

}  // namespace tunefarm::ir
