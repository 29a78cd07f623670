// IR printer: a readable C-like text form used by dumps (`lower` with a dump request), test failure
// messages and docs. Not a serialization format: names may repeat and are not re-parsable.
#ifndef TUNEFARM_COMPILER_IR_IR_PRINTER_H_
#define TUNEFARM_COMPILER_IR_IR_PRINTER_H_

#include <ostream>
#include <string>

#include "compiler/ir/ir.h"

namespace tunefarm::ir {

std::string ToString(const Expr& e);
std::string ToString(const Stmt& s);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_IR_PRINTER_H_
