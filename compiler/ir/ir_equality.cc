#include "compiler/ir/ir_equality.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/ir_visitor.h"
#include "compiler/ir/tensor.h"

namespace tunefarm::ir {
namespace {

// Flattens a tree into a token sequence that determines it up to variable renaming; equality and
// hashing then compare sequences. One visitor serves every node kind, so a new node needs one hook.
class Tokenizer : public IRVisitor {
 public:
  explicit Tokenizer(bool rename_vars) : rename_vars_(rename_vars) {}
  std::vector<uint64_t> tokens;

  void Visit(const Expr& e) override {
    if (!e.defined()) {
      tokens.push_back(0xdeadbeef);
      return;
    }
    Type t = e.type();
    tokens.push_back((uint64_t(e->node_type) << 32) | (uint64_t(t.code) << 24) | (uint64_t(t.bits) << 16) | t.lanes);
    IRVisitor::Visit(e);
  }
  void Visit(const Stmt& s) override {
    if (!s.defined()) {
      tokens.push_back(0xfeedface);
      return;
    }
    tokens.push_back(uint64_t(s->node_type) << 32);
    IRVisitor::Visit(s);
  }

 protected:
  void Id(const void* p) {
    if (!rename_vars_) {
      tokens.push_back(reinterpret_cast<uintptr_t>(p));
      return;
    }
    auto it = ids_.find(p);
    if (it == ids_.end()) it = ids_.emplace(p, next_id_++).first;
    tokens.push_back(it->second);
  }
  // A binding site (For, Let, LetStmt, Allocate) introduces a fresh variable even when the same
  // object is bound again elsewhere (unrolled or partitioned copies reuse loop variables).
  void Bind(const void* p) {
    if (rename_vars_) ids_[p] = next_id_++;
    Id(p);
  }
  void Visit_(const IntImm* op) override { tokens.push_back(uint64_t(op->value)); }
  void Visit_(const FloatImm* op) override {
    uint64_t bits;
    std::memcpy(&bits, &op->value, sizeof(bits));
    tokens.push_back(bits);
  }
  void Visit_(const VarNode* op) override { Id(op); }
  void Visit_(const Ramp* op) override {
    tokens.push_back(op->lanes);
    IRVisitor::Visit_(op);
  }
  void Visit_(const Broadcast* op) override {
    tokens.push_back(op->lanes);
    IRVisitor::Visit_(op);
  }
  void Visit_(const ProducerLoad* op) override {
    Id(op->tensor.get());
    IRVisitor::Visit_(op);
  }
  void Visit_(const Call* op) override {
    tokens.push_back(std::hash<std::string>()(op->name));
    tokens.push_back(op->args.size());
    IRVisitor::Visit_(op);
  }
  void Visit_(const Let* op) override {
    Visit(op->value);
    Bind(op->var.get());
    Visit(op->body);
  }
  void Visit_(const LetStmt* op) override {
    Visit(op->value);
    Bind(op->var.get());
    Visit(op->body);
  }
  void Visit_(const For* op) override {
    Bind(op->var.get());
    tokens.push_back(uint64_t(op->kind));
    IRVisitor::Visit_(op);
  }
  void Visit_(const ProducerStore* op) override {
    Id(op->tensor.get());
    IRVisitor::Visit_(op);
  }
  void Visit_(const ProducerRealize* op) override {
    Id(op->tensor.get());
    for (int64_t e : op->extents) tokens.push_back(uint64_t(e));
    tokens.push_back(uint64_t(op->scope));
    for (const RegionFold& f : op->folds) {
      tokens.push_back(uint64_t(f.stride));
      tokens.push_back(uint64_t(f.block));
    }
    IRVisitor::Visit_(op);
  }
  void Visit_(const Allocate* op) override {
    Bind(op->buffer.get());
    tokens.push_back(uint64_t(op->size));
    tokens.push_back((uint64_t(op->element_type.code) << 8) | op->element_type.bits);
    tokens.push_back(uint64_t(op->scope));
    IRVisitor::Visit_(op);
  }
  void Visit_(const Barrier* op) override { tokens.push_back(uint64_t(op->scope)); }
  void Visit_(const IfThenElse* op) override {
    tokens.push_back(op->likely);
    IRVisitor::Visit_(op);
  }
  void Visit_(const Block* op) override {
    tokens.push_back(op->stmts.size());
    IRVisitor::Visit_(op);
  }

 private:
  bool rename_vars_;
  uint64_t next_id_ = 0;
  std::unordered_map<const void*, uint64_t> ids_;
};

template <typename T>
std::vector<uint64_t> Tokens(const T& node, bool rename) {
  Tokenizer t(rename);
  t.Visit(node);
  return std::move(t.tokens);
}

std::vector<uint64_t> FunctionTokens(const std::vector<Var>& params, const Stmt& body) {
  Tokenizer t(true);
  t.tokens.push_back(params.size());
  for (const Var& v : params) t.Visit(AsExpr(v));
  t.Visit(body);
  return std::move(t.tokens);
}

size_t HashTokens(const std::vector<uint64_t>& tokens) {
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t t : tokens) h = (h ^ t) * 1099511628211ULL;
  return size_t(h);
}

}  // namespace

bool StructuralEqual(const Expr& a, const Expr& b) { return Tokens(a, true) == Tokens(b, true); }
bool StructuralEqual(const Stmt& a, const Stmt& b) { return Tokens(a, true) == Tokens(b, true); }
size_t StructuralHash(const Expr& e) { return HashTokens(Tokens(e, true)); }
size_t StructuralHash(const Stmt& s) { return HashTokens(Tokens(s, true)); }
bool StructuralEqual(const std::vector<Var>& params_a, const Stmt& body_a, const std::vector<Var>& params_b,
                     const Stmt& body_b) {
  return FunctionTokens(params_a, body_a) == FunctionTokens(params_b, body_b);
}
size_t StructuralHash(const std::vector<Var>& params, const Stmt& body) {
  return HashTokens(FunctionTokens(params, body));
}
bool ExprDeepEqual(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  return Tokens(a, false) == Tokens(b, false);
}

}  // namespace tunefarm::ir
