#include "compiler/ir/ir_printer.h"

#include <sstream>

#include "compiler/ir/ir_visitor.h"
#include "compiler/ir/tensor.h"

namespace tunefarm::ir {
namespace {

class Printer : public IRVisitor {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}
  using IRVisitor::Visit;

 protected:
  void Indent() {
    for (int i = 0; i < indent_; ++i) os_ << "  ";
  }
  void Binary(const Expr& a, const char* op, const Expr& b) {
    os_ << "(";
    Visit(a);
    os_ << " " << op << " ";
    Visit(b);
    os_ << ")";
  }
  void Func(const char* name, const Expr& a, const Expr& b) {
    os_ << name << "(";
    Visit(a);
    os_ << ", ";
    Visit(b);
    os_ << ")";
  }

  void Visit_(const IntImm* op) override {
    if (op->type.is_bool()) {
      os_ << (op->value ? "true" : "false");
    } else {
      os_ << op->value;
    }
  }
  void Visit_(const FloatImm* op) override {
    std::ostringstream s;
    s << op->value;
    std::string str = s.str();
    if (str.find_first_of(".en") == std::string::npos) str += ".0";
    os_ << str << "f";
  }
  void Visit_(const VarNode* op) override { os_ << op->name; }
  void Visit_(const Cast* op) override {
    os_ << op->type.ToString() << "(";
    Visit(op->value);
    os_ << ")";
  }
  void Visit_(const Add* op) override { Binary(op->a, "+", op->b); }
  void Visit_(const Sub* op) override { Binary(op->a, "-", op->b); }
  void Visit_(const Mul* op) override { Binary(op->a, "*", op->b); }
  void Visit_(const Div* op) override { Binary(op->a, "/", op->b); }
  void Visit_(const Mod* op) override { Binary(op->a, "%", op->b); }
  void Visit_(const Min* op) override { Func("min", op->a, op->b); }
  void Visit_(const Max* op) override { Func("max", op->a, op->b); }
  void Visit_(const EQ* op) override { Binary(op->a, "==", op->b); }
  void Visit_(const NE* op) override { Binary(op->a, "!=", op->b); }
  void Visit_(const LT* op) override { Binary(op->a, "<", op->b); }
  void Visit_(const LE* op) override { Binary(op->a, "<=", op->b); }
  void Visit_(const GT* op) override { Binary(op->a, ">", op->b); }
  void Visit_(const GE* op) override { Binary(op->a, ">=", op->b); }
  void Visit_(const And* op) override { Binary(op->a, "&&", op->b); }
  void Visit_(const Or* op) override { Binary(op->a, "||", op->b); }
  void Visit_(const Not* op) override {
    os_ << "!";
    Visit(op->a);
  }
  void Visit_(const Select* op) override {
    os_ << "select(";
    Visit(op->condition);
    os_ << ", ";
    Visit(op->true_value);
    os_ << ", ";
    Visit(op->false_value);
    os_ << ")";
  }
  void Visit_(const Ramp* op) override {
    os_ << "ramp(";
    Visit(op->base);
    os_ << ", ";
    Visit(op->stride);
    os_ << ", " << op->lanes << ")";
  }
  void Visit_(const Broadcast* op) override {
    os_ << "x" << op->lanes << "(";
    Visit(op->value);
    os_ << ")";
  }
  void Visit_(const Load* op) override {
    os_ << op->buffer->name << "[";
    Visit(op->index);
    os_ << "]";
  }
  void Visit_(const ProducerLoad* op) override {
    os_ << op->tensor->name << "(";
    for (size_t i = 0; i < op->indices.size(); ++i) {
      if (i) os_ << ", ";
      Visit(op->indices[i]);
    }
    os_ << ")";
  }
  void Visit_(const Call* op) override {
    os_ << op->name << "(";
    for (size_t i = 0; i < op->args.size(); ++i) {
      if (i) os_ << ", ";
      Visit(op->args[i]);
    }
    os_ << ")";
  }
  void Visit_(const Let* op) override {
    os_ << "(let " << op->var->name << " = ";
    Visit(op->value);
    os_ << " in ";
    Visit(op->body);
    os_ << ")";
  }

  void Visit_(const LetStmt* op) override {
    Indent();
    os_ << "let " << op->var->name << " = ";
    Visit(op->value);
    os_ << "\n";
    Visit(op->body);
  }
  void Visit_(const For* op) override {
    Indent();
    os_ << ForKindName(op->kind) << " (" << op->var->name << ", ";
    Visit(op->min);
    os_ << ", ";
    Visit(op->extent);
    os_ << ") {\n";
    ++indent_;
    Visit(op->body);
    --indent_;
    Indent();
    os_ << "}\n";
  }
  void Visit_(const Store* op) override {
    Indent();
    os_ << op->buffer->name << "[";
    Visit(op->index);
    os_ << "] = ";
    Visit(op->value);
    os_ << "\n";
  }
  void Visit_(const ProducerStore* op) override {
    Indent();
    os_ << op->tensor->name << "(";
    for (size_t i = 0; i < op->indices.size(); ++i) {
      if (i) os_ << ", ";
      Visit(op->indices[i]);
    }
    os_ << ") = ";
    Visit(op->value);
    os_ << "\n";
  }
  void Visit_(const ProducerRealize* op) override {
    Indent();
    os_ << "realize " << op->tensor->name;
    if (op->scope != MemoryScope::kGlobal) os_ << " scope=" << MemoryScopeName(op->scope);
    os_ << "(";
    for (size_t i = 0; i < op->mins.size(); ++i) {
      if (i) os_ << ", ";
      os_ << "[";
      Visit(op->mins[i]);
      os_ << ", " << op->extents[i];
      if (!op->folds.empty() && op->folds[i].folded())
        os_ << " fold " << op->folds[i].block << "/" << op->folds[i].stride;
      os_ << "]";
    }
    os_ << ") {\n";
    ++indent_;
    Visit(op->body);
    --indent_;
    Indent();
    os_ << "}\n";
  }
  void Visit_(const Allocate* op) override {
    Indent();
    os_ << "allocate " << op->buffer->name << "[" << op->element_type.ToString() << " * " << op->size << "]";
    if (op->scope != MemoryScope::kGlobal) os_ << " scope=" << MemoryScopeName(op->scope);
    os_ << "\n";
    Visit(op->body);
  }
  void Visit_(const IfThenElse* op) override {
    Indent();
    os_ << (op->likely ? "if (likely(" : "if (");
    Visit(op->condition);
    os_ << (op->likely ? ")) {\n" : ") {\n");
    ++indent_;
    Visit(op->then_case);
    --indent_;
    if (op->else_case.defined()) {
      Indent();
      os_ << "} else {\n";
      ++indent_;
      Visit(op->else_case);
      --indent_;
    }
    Indent();
    os_ << "}\n";
  }
  void Visit_(const Evaluate* op) override {
    Indent();
    Visit(op->value);
    os_ << "\n";
  }
  void Visit_(const Barrier* op) override {
    Indent();
    os_ << "barrier(" << MemoryScopeName(op->scope) << ")\n";
  }

 private:
  std::ostream& os_;
  int indent_ = 0;
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  if (!e.defined()) return os << "(undefined)";
  Printer(os).Visit(e);
  return os;
}
std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  if (!s.defined()) return os << "(undefined)\n";
  Printer(os).Visit(s);
  return os;
}
std::string ToString(const Expr& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}
std::string ToString(const Stmt& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace tunefarm::ir
