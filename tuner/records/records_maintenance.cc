// RecordsDb as RecordsMaintenance. Salvage and Check read what can be kept from a database that the
// other commands refuse (SQL objects in its schema, values over the limits, rows import would
// reject), without running any of it (Mode::kSalvage keeps triggers and views disabled); export and
// import move trials as JSON lines, a page or a line at a time.
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
  auto one = conn_->Query(SelectTrialSql() + "WHERE t.id = ?1");
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

Status RecordsDb::ExportJsonLines(std::ostream& out) {
  // A page of trials at a time, each written as it is read: an export holds a page, never the
  // database (trials with 16 MB of text each took 1.1 GB when it held them all).
  constexpr int64_t kPage = 256;
  for (int64_t after = 0;;) {
    auto q = conn_->Query(SelectTrialSql() + "WHERE t.id > ?1 ORDER BY t.id LIMIT ?2");
    q->Bind(1, after).Bind(2, kPage);
    Status status;
    int64_t rows = 0;
    while (Step(*q, &status)) {
      const TrialRecord t = ReadTrial(*q);
      out << t.ToJson() << "\n";
      after = t.id;
      ++rows;
    }
    if (!status.ok()) return Error("cannot list trials", status);
    if (!out) return Status::IOError("cannot write the export");
    if (rows < kPage) return Status::OK();
  }
}

namespace {

// A trial's JSON is a few KiB, and no stored value is over 8 MiB: a longer line is refused as soon
// as it passes this, instead of being held whole (a 300 MB line cost 1.3 GB).
constexpr size_t kMaxImportLineBytes = size_t(16) << 20;

// One line without its '\n'; false at the end of the input. *too_long: the line passed `max`
// bytes (what was read of it is dropped).
bool ReadLineUpTo(std::istream& in, size_t max, std::string* line, bool* too_long) {
  line->clear();
  *too_long = false;
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (int c; (c = buf->sbumpc()) != std::char_traits<char>::eof();) {
    any = true;
    if (c == '\n') return true;
    if (line->size() >= max) {
      *too_long = true;
      line->clear();
      return true;
    }
    line->push_back(char(c));
  }
  return any;
}

}  // namespace

Result<int64_t> RecordsDb::ImportJsonLines(std::istream& in, const std::function<Status(const TrialRecord&)>& check) {
  std::vector<TrialRecord> trials;
  std::string line;
  bool too_long = false;
  for (int64_t n = 1; ReadLineUpTo(in, kMaxImportLineBytes, &line, &too_long); ++n) {
    if (too_long) {
      return Status::InvalidArgument("line " + std::to_string(n) + " is over " +
                                     std::to_string(kMaxImportLineBytes >> 20) +
                                     " MiB, which no trial is: nothing was imported");
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto t = TrialRecord::FromJson(line);
    if (!t.ok()) return Status::InvalidArgument("line " + std::to_string(n) + ": " + t.status().message());
    if (check) {
      if (Status s = check(*t); !s.ok())
        return Status::InvalidArgument("line " + std::to_string(n) + ": " + s.message());
    }
    trials.push_back(std::move(*t));
  }
  return AddTrials(trials);
}

}  // namespace tunefarm::tuner
