// The --records flag as every command reads it (README.md, the CLI): empty means
// ./tunefarm.db when it exists (and says so), "none" means no records, a path must exist.
#ifndef TUNEFARM_TOOLS_TUNEFARM_RECORDS_OPTION_H_
#define TUNEFARM_TOOLS_TUNEFARM_RECORDS_OPTION_H_

#include <memory>
#include <string>

#include "tunefarm/compiler/config_source.h"

namespace tunefarm::cli {

inline constexpr const char* kDefaultRecordsDb = "./tunefarm.db";

// Null when compiling with fallback configs only. Offers the records measured at `threads` (0: any).
Result<std::unique_ptr<compiler::ConfigSource>> OpenRecordsForCompile(const std::string& flag, int threads);

}  // namespace tunefarm::cli

#endif  // TUNEFARM_TOOLS_TUNEFARM_RECORDS_OPTION_H_
