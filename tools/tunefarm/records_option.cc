#include "tools/tunefarm/records_option.h"

#include <sys/stat.h>

#include <cstdio>

#include "tunefarm/tuner/records.h"
#include "tunefarm/tuner/records_config_source.h"

namespace tunefarm::cli {

Result<std::unique_ptr<compiler::ConfigSource>> OpenRecordsForCompile(const std::string& flag, int threads) {
  if (flag == "none") return std::unique_ptr<compiler::ConfigSource>();
  std::string path = flag;
  if (path.empty()) {
    struct stat st;
    if (stat(kDefaultRecordsDb, &st) != 0) return std::unique_ptr<compiler::ConfigSource>();
    path = kDefaultRecordsDb;
    std::fprintf(stderr, "using records database %s (--records none to compile without it)\n", path.c_str());
  }
  TUNEFARM_ASSIGN_OR_RETURN(auto db, tuner::RecordsDb::Open(path, tuner::RecordsDb::Mode::kReadOnly));
  return std::unique_ptr<compiler::ConfigSource>(new tuner::RecordsConfigSource(std::move(db), threads));
}

}  // namespace tunefarm::cli
