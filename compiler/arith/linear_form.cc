#include "compiler/arith/linear_form.h"

#include <cstddef>

#include "compiler/ir/ir_equality.h"
#include "compiler/ir/ir_operators.h"

namespace tunefarm::arith {

using ir::Expr;

void LinearForm::AddTerm(const Expr& atom, int64_t coeff) {
  if (coeff == 0) return;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (ir::ExprDeepEqual(terms[i].atom, atom)) {
      terms[i].coeff += coeff;
      if (terms[i].coeff == 0) terms.erase(terms.begin() + std::ptrdiff_t(i));
      return;
    }
  }
  terms.push_back({atom, coeff});
}

void LinearForm::AddScaled(const LinearForm& other, int64_t scale) {
  constant += other.constant * scale;
  for (const auto& t : other.terms) AddTerm(t.atom, t.coeff * scale);
}

int64_t LinearForm::CoeffOfVar(const ir::VarNode* v) const {
  for (const auto& t : terms) {
    if (t.atom.get() == v) return t.coeff;
  }
  return 0;
}

LinearForm ToLinearForm(const Expr& e) {
  LinearForm f;
  if (const auto* i = e.as<ir::IntImm>()) {
    f.constant = i->value;
  } else if (const auto* a = e.as<ir::Add>()) {
    f = ToLinearForm(a->a);
    f.AddScaled(ToLinearForm(a->b), 1);
  } else if (const auto* s = e.as<ir::Sub>()) {
    f = ToLinearForm(s->a);
    f.AddScaled(ToLinearForm(s->b), -1);
  } else if (const auto* m = e.as<ir::Mul>()) {
    LinearForm fa = ToLinearForm(m->a), fb = ToLinearForm(m->b);
    if (fb.IsConstant()) {
      f.AddScaled(fa, fb.constant);
    } else if (fa.IsConstant()) {
      f.AddScaled(fb, fa.constant);
    } else {
      f.AddTerm(e, 1);
    }
  } else {
    f.AddTerm(e, 1);
  }
  return f;
}

Expr FromLinearForm(const LinearForm& form) {
  Expr result;
  for (const auto& t : form.terms) {
    Expr term = t.coeff == 1 ? t.atom : (t.coeff == -1 ? t.atom : t.atom * Expr(t.coeff));
    if (!result.defined()) {
      result = t.coeff == -1 ? Expr(int64_t(0)) - term : term;
    } else {
      result = t.coeff == -1 ? result - term : result + term;
    }
  }
  if (!result.defined()) return Expr(form.constant);
  if (form.constant > 0) return result + Expr(form.constant);
  if (form.constant < 0) return result - Expr(-form.constant);
  return result;
}

}  // namespace tunefarm::arith
