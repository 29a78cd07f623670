#include "compiler/passes/unroll_loops.h"

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_util.h"

namespace tunefarm::passes {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

class Unroller : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt Visit_(const For* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    const int64_t* mn = AsConstInt(op->min);
    const int64_t* ext = AsConstInt(op->extent);
    if (op->kind != ForKind::kUnrolled) {
      return body.same_as(op->body) ? self : For::Make(op->var, op->min, op->extent, op->kind, body);
    }
    if (!mn || !ext) return For::Make(op->var, op->min, op->extent, ForKind::kSerial, body);
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < *ext; ++i) copies.push_back(Substitute(body, {{op->var.get(), Expr(*mn + i)}}));
    return Block::Make(std::move(copies));
  }
};

}  // namespace

Stmt UnrollLoops(const Stmt& s) { return Unroller().Mutate(s); }

}  // namespace tunefarm::passes
