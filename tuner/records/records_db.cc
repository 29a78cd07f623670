#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tunefarm/tuner/records.h"
#include "tuner/records/sqlite_stmt.h"

namespace tunefarm::tuner {
namespace {

// Migration k takes the schema from version k to k+1. Append only: a released migration never
// changes, so every database reaches the same schema by the same steps.
const std::vector<std::string>& Migrations() {
  static const std::vector<std::string> kMigrations = {
      R"sql(
CREATE TABLE workloads (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  template TEXT NOT NULL,
  flops REAL NOT NULL DEFAULT 0
);
CREATE TABLE targets (
  id INTEGER PRIMARY KEY,
  target TEXT NOT NULL UNIQUE,
  model TEXT NOT NULL DEFAULT '',
  keys TEXT NOT NULL DEFAULT ''
);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  spec TEXT NOT NULL,
  state TEXT NOT NULL,
  progress TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE trials (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  config_index INTEGER NOT NULL,
  config_json TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  error_message TEXT NOT NULL DEFAULT '',
  costs_ms TEXT NOT NULL DEFAULT '[]',
  mean_ms REAL,
  threads INTEGER NOT NULL DEFAULT 1,
  device_key TEXT NOT NULL DEFAULT '',
  device_info TEXT NOT NULL DEFAULT '',
  build_ms REAL NOT NULL DEFAULT 0,
  run_ms REAL NOT NULL DEFAULT 0,
  job_id INTEGER,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX trials_by_workload_target ON trials(workload_id, target_id, status, mean_ms);
CREATE INDEX trials_by_job ON trials(job_id);
)sql",
  };
  return kMigrations;
}

std::string NewUid() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", (unsigned long long)rng(), (unsigned long long)rng());
  return buf;
}


}  // namespace

const char* const kSelectTrial =
    "SELECT t.id, t.uid, w.key, w.template, w.flops, g.target, g.model, g.keys, t.config_index, t.config_json, t.status,"
    " t.error_message, t.costs_ms, t.mean_ms, t.threads, t.device_key, t.device_info, t.build_ms, t.run_ms,"
    " IFNULL(t.job_id, 0), t.created_at FROM trials t JOIN workloads w ON w.id = t.workload_id"
    " JOIN targets g ON g.id = t.target_id ";

TrialRecord ReadTrial(const Stmt& s) {
  TrialRecord t;
  t.id = s.Int(0);
  t.uid = s.Text(1);
  t.workload_key = s.Text(2);
  t.template_name = s.Text(3);
  t.flops = s.Double(4);
  t.target = s.Text(5);
  t.target_model = s.Text(6);
  t.target_keys = s.Text(7);
  t.config_index = s.Int(8);
  t.config_json = s.Text(9);
  t.status = s.Text(10);
  t.error_message = s.Text(11);
  nlohmann::json costs = nlohmann::json::parse(s.Text(12), nullptr, false);
  if (costs.is_array()) {
    for (const auto& c : costs) {
      if (c.is_number()) t.costs_ms.push_back(c.get<double>());
    }
  }
  t.mean_ms = s.Double(13);
  t.threads = int(s.Int(14));
  t.device_key = s.Text(15);
  t.device_info = s.Text(16);
  t.build_ms = s.Double(17);
  t.run_ms = s.Double(18);
  t.job_id = s.Int(19);
  t.created_at = s.Text(20);
  return t;
}

namespace {
// The stored outcomes (docs/formats/records_db.md); rpc_server's OutcomeKindName uses the same words.
const char* const kTrialStatuses[] = {"ok", "instantiation_error", "compile_error", "runtime_error",
                                      "timeout", "wrong_answer", "bad_request"};
}  // namespace

bool IsTrialStatus(const std::string& status) {
  for (const char* s : kTrialStatuses) {
    if (status == s) return true;
  }
  return false;
}

std::string TrialStatusList() {
  std::string out;
  for (const char* s : kTrialStatuses) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

std::string TrialRecord::ToJson() const {
  nlohmann::ordered_json j;
  j["uid"] = uid;
  j["workload"] = workload_key;
  j["template"] = template_name;
  j["flops"] = flops;
  j["target"] = target;
  j["target_model"] = target_model;
  j["target_keys"] = target_keys;
  j["config_index"] = config_index;
  j["config"] = config_json;
  j["status"] = status;
  j["error_message"] = error_message;
  j["costs_ms"] = costs_ms;
  j["mean_ms"] = mean_ms;
  j["threads"] = threads;
  j["device_key"] = device_key;
  j["device_info"] = device_info;
  j["build_ms"] = build_ms;
  j["run_ms"] = run_ms;
  j["job_id"] = job_id;
  j["created_at"] = created_at;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // stored text need not be UTF-8
}

Result<TrialRecord> TrialRecord::FromJson(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("not a JSON object");
  TrialRecord t;
  auto str = [&](const char* key, std::string* out, bool required) -> Status {
    if (!j.contains(key)) return required ? Status::InvalidArgument(std::string("missing field '") + key + "'") : Status::OK();
    if (!j[key].is_string()) return Status::InvalidArgument(std::string("field '") + key + "' must be a string");
    *out = j[key].get<std::string>();
    return Status::OK();
  };
  auto num = [&](const char* key, double* out, bool required) -> Status {
    if (!j.contains(key)) return required ? Status::InvalidArgument(std::string("missing field '") + key + "'") : Status::OK();
    if (!j[key].is_number()) return Status::InvalidArgument(std::string("field '") + key + "' must be a number");
    *out = j[key].get<double>();
    return Status::OK();
  };
  TUNEFARM_RETURN_IF_ERROR(str("workload", &t.workload_key, true));
  TUNEFARM_RETURN_IF_ERROR(str("target", &t.target, true));
  TUNEFARM_RETURN_IF_ERROR(str("status", &t.status, true));
  TUNEFARM_RETURN_IF_ERROR(str("uid", &t.uid, false));
  TUNEFARM_RETURN_IF_ERROR(str("template", &t.template_name, false));
  TUNEFARM_RETURN_IF_ERROR(str("target_model", &t.target_model, false));
  TUNEFARM_RETURN_IF_ERROR(str("target_keys", &t.target_keys, false));
  TUNEFARM_RETURN_IF_ERROR(str("config", &t.config_json, false));
  TUNEFARM_RETURN_IF_ERROR(str("error_message", &t.error_message, false));
  TUNEFARM_RETURN_IF_ERROR(str("device_key", &t.device_key, false));
  TUNEFARM_RETURN_IF_ERROR(str("device_info", &t.device_info, false));
  TUNEFARM_RETURN_IF_ERROR(str("created_at", &t.created_at, false));
  double index = -1, threads = 1, job = 0;
  TUNEFARM_RETURN_IF_ERROR(num("config_index", &index, true));
  TUNEFARM_RETURN_IF_ERROR(num("flops", &t.flops, false));
  TUNEFARM_RETURN_IF_ERROR(num("mean_ms", &t.mean_ms, false));
  TUNEFARM_RETURN_IF_ERROR(num("threads", &threads, false));
  TUNEFARM_RETURN_IF_ERROR(num("build_ms", &t.build_ms, false));
  TUNEFARM_RETURN_IF_ERROR(num("run_ms", &t.run_ms, false));
  TUNEFARM_RETURN_IF_ERROR(num("job_id", &job, false));
  // Integers arrive as JSON numbers (doubles): each is checked integral and within range before
  // the cast, which is undefined past int64 (libFuzzer: "config_index":1e32).
  auto integer = [](const char* name, double v, double min, double max) -> Status {
    if (!(v >= min && v <= max) || v != std::floor(v)) {
      return Status::InvalidArgument(std::string("field '") + name + "' must be an integer in [" + std::to_string(int64_t(min)) + ", " +
                                     std::to_string(int64_t(max)) + "]");
    }
    return Status::OK();
  };
  constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53: every integer below is a double
  TUNEFARM_RETURN_IF_ERROR(integer("config_index", index, 0, kMaxExactInteger));
  TUNEFARM_RETURN_IF_ERROR(integer("threads", threads, 0, 1 << 20));
  TUNEFARM_RETURN_IF_ERROR(integer("job_id", job, 0, kMaxExactInteger));
  t.config_index = int64_t(index);
  t.threads = int(threads);
  t.job_id = int64_t(job);
  // Times and FLOPs are never negative: a negative mean would become the fastest record.
  for (const auto& [name, value] : {std::pair<const char*, double>{"flops", t.flops}, {"mean_ms", t.mean_ms},
                                    {"build_ms", t.build_ms}, {"run_ms", t.run_ms}}) {
    if (value < 0) return Status::InvalidArgument(std::string("field '") + name + "' must not be negative");
  }
  if (j.contains("costs_ms")) {
    if (!j["costs_ms"].is_array()) return Status::InvalidArgument("field 'costs_ms' must be an array");
    for (const auto& c : j["costs_ms"]) {
      if (!c.is_number() || c.get<double>() < 0) return Status::InvalidArgument("field 'costs_ms' must hold non-negative numbers");
      t.costs_ms.push_back(c.get<double>());
    }
  }
  if (t.status == "ok" && !(t.mean_ms > 0)) return Status::InvalidArgument("a trial with status 'ok' needs mean_ms > 0");
  if (!IsTrialStatus(t.status)) {
    return Status::InvalidArgument("field 'status' is '" + t.status.substr(0, 40) + "'; one of " + TrialStatusList());
  }
  for (const std::string* text : {&t.workload_key, &t.target, &t.uid, &t.template_name, &t.target_model, &t.target_keys,
                                  &t.config_json, &t.error_message, &t.device_key, &t.device_info, &t.created_at}) {
    if (text->find('\0') != std::string::npos) return Status::InvalidArgument("a text field holds a NUL byte");
  }
  if (t.workload_key.empty() || t.target.empty()) return Status::InvalidArgument("fields 'workload' and 'target' must not be empty");
  return t;
}

namespace {

// "file:" URI for sqlite3_open_v2 with SQLITE_OPEN_URI: the path with %, ? and # escaped.
std::string FileUri(const std::string& path, const std::string& query) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", unsigned(uint8_t(c)));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

}  // namespace

Result<std::unique_ptr<RecordsDb>> RecordsDb::Open(const std::string& path, Mode mode) {
  struct stat st;
  if (mode != Mode::kCreate && stat(path.c_str(), &st) != 0) {
    return Status::NotFound("records database " + path + " does not exist");
  }
  if (mode == Mode::kReadOnly) return OpenReadOnly(path);
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | (mode == Mode::kCreate ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::IOError("cannot open records database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<RecordsDb> r(new RecordsDb(db, path));
  TUNEFARM_RETURN_IF_ERROR(r->Migrate());
  return r;
}

Result<std::unique_ptr<RecordsDb>> RecordsDb::OpenReadOnly(const std::string& path) {
  // A WAL database needs its -shm file; where none exists and none can be made (a read-only
  // directory), SQLite reads the file as immutable -- nothing can be writing it there.
  for (const char* query : {"mode=ro", "mode=ro&immutable=1"}) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(FileUri(path, query).c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) {
      std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
      sqlite3_close(db);
      return Status::IOError("cannot open records database " + path + " for reading: " + msg);
    }
    sqlite3_busy_timeout(db, 5000);
    std::unique_ptr<RecordsDb> r(new RecordsDb(db, path));
    auto version = r->SchemaVersion();
    const int code = sqlite3_errcode(db) & 0xff;  // READONLY_CANTINIT, CANTOPEN: no -shm possible here
    if (!version.ok() && (code == SQLITE_READONLY || code == SQLITE_CANTOPEN) && std::string(query) == "mode=ro") continue;
    if (!version.ok()) return version.status();
    const int current = int(Migrations().size());
    if (*version < 0 || *version > current) return r->Migrate();  // refuses both, writing nothing
    if (*version == current) return r;
    // An older schema: upgrade it where the file can be written, else say why it cannot be read.
    r.reset();
    if (access(path.c_str(), W_OK) == 0) {
      TUNEFARM_ASSIGN_OR_RETURN(auto upgraded, Open(path, Mode::kMustExist));
      upgraded.reset();
      return OpenReadOnly(path);
    }
    return Status::FailedPrecondition("records database " + path + " has schema version " + std::to_string(*version) +
                                      " and this tunefarm reads version " + std::to_string(current) +
                                      "; it is read-only here, so open it once where it is writable to upgrade it");
  }
  return Status::IOError("cannot open records database " + path + " for reading: unable to open the database file");
}

RecordsDb::~RecordsDb() { sqlite3_close(db_); }

Status RecordsDb::Error(const std::string& what) {
  return Status::IOError("records database " + path_ + ": " + what + ": " + sqlite3_errmsg(db_));
}

// On an error path the first error is what the caller reports; a failed rollback adds nothing
// (SQLite rolls back an open transaction when the connection closes).
void RecordsDb::Rollback() { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

Status RecordsDb::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::IOError("records database " + path_ + ": " + msg);
  }
  return Status::OK();
}

Result<int> RecordsDb::SchemaVersion() {
  Stmt s(db_, "PRAGMA user_version");
  if (!s.ok() || s.Step() != SQLITE_ROW) {
    int code = sqlite3_errcode(db_);
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
      return Status::Corruption("records database " + path_ + " is not a SQLite database or is damaged (" + sqlite3_errmsg(db_) + ")");
    }
    return Error("cannot read the schema version");
  }
  return int(s.Int(0));
}

Status RecordsDb::Migrate() {
  // Read the version before writing anything: a newer database must stay untouched.
  TUNEFARM_ASSIGN_OR_RETURN(int version, SchemaVersion());
  const auto& migrations = Migrations();
  if (version < 0) {
    return Status::Corruption("records database " + path_ + " has schema version " + std::to_string(version) +
                              ", which no tunefarm writes: its header is damaged");
  }
  if (version > int(migrations.size())) {
    return Status::FailedPrecondition("records database " + path_ + " has schema version " + std::to_string(version) +
                                      ", newer than this tunefarm understands (" + std::to_string(migrations.size()) +
                                      "); use a newer tunefarm");
  }
  {
    Stmt wal(db_, "PRAGMA journal_mode=WAL");  // finalized before any transaction below
    if (!wal.ok() || wal.Step() != SQLITE_ROW) return Error("cannot enable WAL");
  }
  TUNEFARM_RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON"));
  for (int v = version; v < int(migrations.size()); ++v) {
    TUNEFARM_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    // Another process may have migrated while we waited for the lock.
    auto now = SchemaVersion();
    if (!now.ok() || *now > v) {
      Rollback();
      if (!now.ok()) return now.status();
      continue;
    }
    Status s = Exec(migrations[size_t(v)]);
    if (s.ok()) s = Exec("PRAGMA user_version = " + std::to_string(v + 1));
    if (!s.ok()) {
      Rollback();
      return s;
    }
    TUNEFARM_RETURN_IF_ERROR(Exec("COMMIT"));
  }
  return Status::OK();
}

Status RecordsDb::Insert(const TrialRecord& t, bool ignore_duplicates, bool* inserted) {
  Stmt w(db_, "INSERT INTO workloads(key, template, flops) VALUES(?, ?, ?) ON CONFLICT(key) DO NOTHING");
  w.Bind(1, t.workload_key).Bind(2, t.template_name).Bind(3, t.flops);
  if (w.Step() != SQLITE_DONE) return Error("cannot store workload");
  Stmt g(db_, "INSERT INTO targets(target, model, keys) VALUES(?, ?, ?) ON CONFLICT(target) DO NOTHING");
  g.Bind(1, t.target).Bind(2, t.target_model).Bind(3, t.target_keys);
  if (g.Step() != SQLITE_DONE) return Error("cannot store target");
  nlohmann::json costs = t.costs_ms;
  std::string sql = std::string("INSERT ") + (ignore_duplicates ? "OR IGNORE " : "") +
                    "INTO trials(uid, workload_id, target_id, config_index, config_json, status, error_message, costs_ms,"
                    " mean_ms, threads, device_key, device_info, build_ms, run_ms, job_id, created_at) VALUES(?,"
                    " (SELECT id FROM workloads WHERE key = ?), (SELECT id FROM targets WHERE target = ?), ?, ?, ?, ?, ?, ?, ?,"
                    " ?, ?, ?, ?, ?, COALESCE(NULLIF(?, ''), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))";
  Stmt s(db_, sql);
  if (!s.ok()) return Error("cannot prepare insert");
  s.Bind(1, t.uid).Bind(2, t.workload_key).Bind(3, t.target).Bind(4, t.config_index).Bind(5, t.config_json);
  s.Bind(6, t.status).Bind(7, t.error_message).Bind(8, costs.dump());
  if (t.status == "ok") s.Bind(9, t.mean_ms);
  else s.BindNull(9);
  s.Bind(10, int64_t(t.threads)).Bind(11, t.device_key).Bind(12, t.device_info).Bind(13, t.build_ms).Bind(14, t.run_ms);
  if (t.job_id > 0) s.Bind(15, t.job_id);
  else s.BindNull(15);
  s.Bind(16, t.created_at);
  if (s.Step() != SQLITE_DONE) return Error("cannot store trial");
  if (inserted) *inserted = sqlite3_changes(db_) > 0;
  return Status::OK();
}

Status RecordsDb::AddTrial(TrialRecord* t) {
  if (t->uid.empty()) t->uid = NewUid();
  TUNEFARM_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status s = Insert(*t, false, nullptr);
  if (!s.ok()) {
    Rollback();
    return s;
  }
  t->id = sqlite3_last_insert_rowid(db_);
  TUNEFARM_RETURN_IF_ERROR(Exec("COMMIT"));
  return Status::OK();
}

Result<std::optional<TrialRecord>> RecordsDb::Best(const std::string& workload_key, const TargetMatch& target,
                                                   std::string* matched_on) {
  std::vector<std::string> on;
  TUNEFARM_ASSIGN_OR_RETURN(auto ranked, Ranked(workload_key, target, 1, &on));
  if (ranked.empty()) return std::optional<TrialRecord>();
  if (matched_on) *matched_on = on[0];
  return std::optional<TrialRecord>(std::move(ranked[0]));
}

Result<std::vector<TrialRecord>> RecordsDb::Ranked(const std::string& workload_key, const TargetMatch& target, int limit,
                                                   std::vector<std::string>* matched_on) {
  const std::string order = " AND t.status = 'ok' AND t.mean_ms IS NOT NULL ORDER BY t.mean_ms ASC, t.id ASC LIMIT ?3";
  struct Step {
    const char* name;
    std::string where;
    std::string arg;
  };
  std::vector<Step> steps = {{"target", "WHERE w.key = ?1 AND g.target = ?2", target.target}};
  if (!target.model.empty()) steps.push_back({"model", "WHERE w.key = ?1 AND g.model = ?2", target.model});
  for (const auto& k : target.keys) {
    steps.push_back({"keys", "WHERE w.key = ?1 AND (',' || g.keys || ',') LIKE ('%,' || ?2 || ',%')", k});
  }
  std::vector<TrialRecord> out;
  std::set<int64_t> seen;
  for (const auto& step : steps) {
    if (int(out.size()) >= limit) break;
    Stmt s(db_, std::string(kSelectTrial) + step.where + order);
    if (!s.ok()) return Error("cannot query best trial");
    s.Bind(1, workload_key).Bind(2, step.arg).Bind(3, int64_t(limit));
    int rc;
    while (int(out.size()) < limit && (rc = s.Step()) == SQLITE_ROW) {
      TrialRecord t = ReadTrial(s);
      if (!seen.insert(t.id).second) continue;
      out.push_back(std::move(t));
      if (matched_on) matched_on->push_back(step.name);
    }
    if (int(out.size()) < limit && rc != SQLITE_DONE) return Error("cannot query best trial");
  }
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::List(const std::string& workload_key, int64_t limit) {
  Stmt s(db_, std::string(kSelectTrial) + (workload_key.empty() ? "WHERE ?1 = ''" : "WHERE w.key = ?1") + " ORDER BY t.id LIMIT ?2");
  if (!s.ok()) return Error("cannot list trials");
  s.Bind(1, workload_key).Bind(2, limit);
  std::vector<TrialRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadTrial(s));
  if (rc != SQLITE_DONE) return Error("cannot list trials");
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::ListSimilar(const std::string& template_name, const std::string& target,
                                                        const std::string& except_workload, int64_t limit) {
  Stmt s(db_, std::string(kSelectTrial) +
                  "WHERE w.template = ?1 AND g.target = ?2 AND w.key != ?3 AND t.status = 'ok' ORDER BY t.id DESC LIMIT ?4");
  if (!s.ok()) return Error("cannot list similar trials");
  s.Bind(1, template_name).Bind(2, target).Bind(3, except_workload).Bind(4, limit);
  std::vector<TrialRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadTrial(s));
  if (rc != SQLITE_DONE) return Error("cannot list similar trials");
  return out;
}

Result<int64_t> RecordsDb::AddJob(const std::string& spec_json) {
  TUNEFARM_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Stmt s(db_, "INSERT INTO jobs(spec, state) VALUES(?1, 'queued')");
  if (s.ok()) s.Bind(1, spec_json);
  if (!s.ok() || s.Step() != SQLITE_DONE) {
    Rollback();
    return Error("cannot add a job");
  }
  TUNEFARM_RETURN_IF_ERROR(Exec("COMMIT"));
  return int64_t(sqlite3_last_insert_rowid(db_));
}

Status RecordsDb::UpdateJob(int64_t id, const std::string& state, const std::string& progress_json) {
  Stmt s(db_,
         "UPDATE jobs SET state = ?2, progress = ?3, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1");
  if (!s.ok()) return Error("cannot update job " + std::to_string(id));
  s.Bind(1, id).Bind(2, state).Bind(3, progress_json);
  if (s.Step() != SQLITE_DONE) return Error("cannot update job " + std::to_string(id));
  if (sqlite3_changes(db_) == 0) return Status::NotFound("no job " + std::to_string(id) + " in " + path_);
  return Status::OK();
}

namespace {
JobRecord ReadJob(const Stmt& s) {
  JobRecord j;
  j.id = s.Int(0);
  j.spec_json = s.Text(1);
  j.state = s.Text(2);
  j.progress_json = s.Text(3);
  j.created_at = s.Text(4);
  j.updated_at = s.Text(5);
  return j;
}
constexpr const char* kSelectJob = "SELECT id, spec, state, progress, created_at, updated_at FROM jobs ";
}  // namespace

Result<std::vector<JobRecord>> RecordsDb::ListJobs() {
  Stmt s(db_, std::string(kSelectJob) + "ORDER BY id");
  if (!s.ok()) return Error("cannot list jobs");
  std::vector<JobRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadJob(s));
  if (rc != SQLITE_DONE) return Error("cannot list jobs");
  return out;
}

Result<JobRecord> RecordsDb::GetJob(int64_t id) {
  Stmt s(db_, std::string(kSelectJob) + "WHERE id = ?1");
  if (!s.ok()) return Error("cannot read job " + std::to_string(id));
  s.Bind(1, id);
  int rc = s.Step();
  if (rc == SQLITE_ROW) return ReadJob(s);
  if (rc == SQLITE_DONE) return Status::NotFound("no job " + std::to_string(id) + " in " + path_);
  return Error("cannot read job " + std::to_string(id));
}

Result<int64_t> RecordsDb::CountTrials() {
  Stmt s(db_, "SELECT COUNT(*) FROM trials");
  if (!s.ok() || s.Step() != SQLITE_ROW) return Error("cannot count trials");
  return s.Int(0);
}

Status RecordsDb::ExportJsonLines(std::ostream& out) {
  TUNEFARM_ASSIGN_OR_RETURN(auto trials, List());
  for (const auto& t : trials) out << t.ToJson() << "\n";
  if (!out) return Status::IOError("cannot write the export");
  return Status::OK();
}

Result<int64_t> RecordsDb::ImportJsonLines(std::istream& in, const std::function<Status(const TrialRecord&)>& check) {
  std::vector<TrialRecord> trials;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto t = TrialRecord::FromJson(line);
    if (!t.ok()) return Status::InvalidArgument("line " + std::to_string(n) + ": " + t.status().message());
    if (check) {
      if (Status s = check(*t); !s.ok()) return Status::InvalidArgument("line " + std::to_string(n) + ": " + s.message());
    }
    if (t->uid.empty()) t->uid = NewUid();
    trials.push_back(std::move(*t));
  }
  TUNEFARM_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  int64_t added = 0;
  for (const auto& t : trials) {
    bool inserted = false;
    Status s = Insert(t, true, &inserted);
    if (!s.ok()) {
      Rollback();
      return s;
    }
    added += inserted ? 1 : 0;
  }
  TUNEFARM_RETURN_IF_ERROR(Exec("COMMIT"));
  return added;
}

}  // namespace tunefarm::tuner
