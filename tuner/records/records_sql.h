// What RecordsDb's files share: the trial query and the schema's migrations.
// Private to tuner/records/.
#ifndef TUNEFARM_TUNER_RECORDS_RECORDS_SQL_H_
#define TUNEFARM_TUNER_RECORDS_RECORDS_SQL_H_

#include <string>
#include <vector>

#include "tunefarm/tuner/records.h"
#include "tuner/records/sql.h"

namespace tunefarm::tuner {

// SELECT ... FROM trials joined with its workload and target, the columns RecordsDb::ReadTrial
// reads; the caller appends WHERE/ORDER.
const std::string& SelectTrialSql();

// A trial whose time may be applied (best configs, a task's best, the cost model's fastest):
// TrialRecord::usable() in SQL (its kMinUsableMs and kMaxUsableMs). A database edited by hand
// (`mean_ms = -1`, 5e-324) or by a hostile author cannot make a config "fastest"; the trial stays
// listed as stored.
inline constexpr const char* kUsableTrial = "t.status = 'ok' AND t.mean_ms >= 1e-6 AND t.mean_ms < 1e300";

// Migration k takes the schema from version k to k+1, in each engine's DDL (the same tables,
// columns and indexes; docs/formats/records_db.md). Append only: a released migration never
// changes, so every database reaches the same schema by the same steps.
struct Migration {
  const char* sqlite;
  const char* postgres;
};
const std::vector<Migration>& Migrations();

// Every row of q through read; the first error in *status.
template <typename Read>
auto Rows(SqlQuery& q, Read read, Status* status) {
  std::vector<decltype(read(q))> out;
  while (Step(q, status)) out.push_back(read(q));
  return out;
}

// A LIMIT for "no limit" (-1) that both engines accept.
inline int64_t SqlLimit(int64_t limit) { return limit < 0 ? INT64_MAX : limit; }

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_RECORDS_SQL_H_
