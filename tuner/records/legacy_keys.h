// Workload keys of schema version 2 began with their implementation ("conv2d_nchwc|N1_C64...");
// version 3's begin with the operator ("conv2d|N1_C64..."), the implementation being the template
// field. Migration 3 rewrites a database's keys in SQL (records_schema.cc); these are the same rule,
// in one place, for what the migration does not reach: a version-2 file that a reader opens without
// upgrading it (RecordsDb converts its keys as it reads them and back for its queries), JSON lines
// exported before the change (TrialRecord::FromJson), and task names stored or typed in the old form
// (ParseStoredTaskName). Nothing outside tuner/records/ converts keys. Private to tuner/records/.
#ifndef TUNEFARM_TUNER_RECORDS_LEGACY_KEYS_H_
#define TUNEFARM_TUNER_RECORDS_LEGACY_KEYS_H_

#include <string>

namespace tunefarm::tuner {

// A version-2 key whose first field is `implementation` as version 3 writes it (the operator from
// its layout field, as migration 3 does); any other key as it is.
std::string KeyOfSchema3(const std::string& key, const std::string& implementation);
// The inverse: a version-3 key as a version-2 database stores it.
std::string KeyOfSchema2(const std::string& key, const std::string& implementation);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_LEGACY_KEYS_H_
