#include "tuner/records/legacy_keys.h"

#include "tunefarm/compiler/workload.h"
#include "tunefarm/tuner/records_rows.h"

namespace tunefarm::tuner {

std::string KeyOfSchema3(const std::string& key, const std::string& implementation) {
  const size_t bar = key.find('|');
  if (bar == std::string::npos || bar == 0 || key.compare(0, bar, implementation) != 0) return key;
  // The layout field names the operator's parameters (tunefarm/compiler/workload.h's Key()).
  const char* op = key.find("|NCHW|") != std::string::npos  ? "conv2d"
                   : key.find("|NC|") != std::string::npos  ? "dense"
                   : key.find("|BMN|") != std::string::npos ? "batch_matmul"
                                                            : nullptr;
  return op ? op + key.substr(bar) : key;
}

std::string KeyOfSchema2(const std::string& key, const std::string& implementation) {
  const size_t bar = key.find('|');
  if (implementation.empty() || bar == std::string::npos) return key;
  return implementation + key.substr(bar);  // "conv2d|N1..." by conv2d_nchwc was "conv2d_nchwc|N1..."
}

StoredTaskName ParseStoredTaskName(const std::string& name) {
  const compiler::TaskNameParts parts = compiler::ParseTaskName(name);
  if (!parts.implementation.empty()) return {parts.implementation, parts.key};
  const std::string first = parts.key.substr(0, parts.key.find('|'));
  const std::string key = KeyOfSchema3(parts.key, first);
  if (key == parts.key) return {"", parts.key};
  return {first, key};
}

}  // namespace tunefarm::tuner
