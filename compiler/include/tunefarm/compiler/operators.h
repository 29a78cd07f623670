// The ONNX operators tunefarm compiles, from its operator registry (what `tunefarm ops` prints and
// docs/onnx_support.md's table is generated from).
#ifndef TUNEFARM_COMPILER_OPERATORS_H_
#define TUNEFARM_COMPILER_OPERATORS_H_

#include <string>
#include <vector>

namespace tunefarm::compiler {

// The claimed ONNX op types, sorted.
std::vector<std::string> SupportedOperators();
// One markdown table row per operator: family, attributes read, CPU/CUDA lowering, notes.
std::string OperatorSupportMarkdown();

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_OPERATORS_H_
