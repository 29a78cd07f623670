// RecordsDb::Salvage and RecordsDb::Check: reading what can be kept from a database that the other
// commands refuse (SQL objects in its schema, values over the limits, rows import would reject),
// without running any of it (Mode::kSalvage keeps triggers and views disabled).
#include "tunefarm/tuner/records.h"
#include "tuner/records/records_sql.h"
#include "tuner/records/sql.h"
#include "tuner/records/sql_engines.h"

namespace tunefarm::tuner {

Result<std::vector<TrialRecord>> RecordsDb::Salvage(std::vector<std::string>* skipped) {
  auto ids = conn_->Query("SELECT id FROM trials ORDER BY id");
  std::vector<int64_t> all;
  Status status;
  while (Step(*ids, &status)) all.push_back(ids->Int(0));
  if (!status.ok()) return Error("cannot list the trials", status);
  std::vector<TrialRecord> kept;
  auto one = conn_->Query(std::string(kSelectTrial) + "WHERE t.id = ?1");
  for (int64_t id : all) {
    one->Reset();
    one->Bind(1, id);
    auto row = one->Next();
    const std::string name = "trial " + std::to_string(id);
    if (!row.ok()) {
      skipped->push_back(name + ": " + row.status().message());
      continue;
    }
    if (!*row) {
      skipped->push_back(name + ": its workload or target row is missing");
      continue;
    }
    // Exactly what `records import` accepts: the trial's JSON line read back by its validator.
    const TrialRecord read = ReadTrial(*one);
    auto valid = TrialRecord::FromJson(read.ToJson());
    if (!valid.ok()) {
      skipped->push_back(name + ": " + valid.status().message());
      continue;
    }
    kept.push_back(read);
  }
  return kept;
}

Result<std::vector<std::string>> RecordsDb::Check() {
  std::vector<std::string> problems;
  if (conn_->engine() == SqlConnection::Engine::kSqlite) {
    auto code = conn_->Query(kSqliteSchemaCode);
    Status status;
    while (Step(*code, &status)) {
      problems.push_back(code->Text(0) + " '" + code->Text(1) +
                         "': SQL that would run inside tunefarm, which writes only tables and indexes (every other "
                         "command refuses the file)");
    }
    if (!status.ok()) problems.push_back("the schema cannot be read: " + status.message());
    auto integrity = conn_->Query("PRAGMA integrity_check(20)");
    while (Step(*integrity, &status)) {
      if (integrity->Text(0) != "ok") problems.push_back("integrity check: " + integrity->Text(0));
    }
    if (!status.ok()) problems.push_back("integrity check: " + status.message());
  }
  std::vector<std::string> skipped;
  auto kept = Salvage(&skipped);
  if (!kept.ok()) {
    problems.push_back(kept.status().message());
    return problems;
  }
  problems.insert(problems.end(), skipped.begin(), skipped.end());
  return problems;
}

}  // namespace tunefarm::tuner
