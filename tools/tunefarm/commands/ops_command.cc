// tunefarm ops [--markdown]: the ONNX operators tunefarm compiles (its operator registry).
#include <cstdio>

#include "tools/tunefarm/command_table.h"
#include "tunefarm/compiler/operators.h"

namespace tunefarm::cli {

Action DeclareOps(CLI::App& app) {
  auto markdown = std::make_shared<bool>(false);
  app.add_flag("--markdown", *markdown, "the support table as Markdown (docs/onnx_support.md)");
  return [markdown] {
    if (*markdown) {
      std::printf("%s", compiler::OperatorSupportMarkdown().c_str());
      return 0;
    }
    const auto names = compiler::SupportedOperators();
    std::printf("%zu ONNX operators (default domain, opsets 1-21):\n", names.size());
    for (size_t i = 0; i < names.size(); ++i)
      std::printf("%s%s", names[i].c_str(), i + 1 == names.size() ? "\n" : (i % 8 == 7 ? "\n" : ", "));
    return 0;
  };
}

}  // namespace tunefarm::cli
