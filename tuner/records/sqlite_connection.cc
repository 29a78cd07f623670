// SqlConnection over SQLite: the embedded default records database.
//
// A records database is a file users share (a team directory, `records import`, copies between
// machines), so opening one must not run its author's code or let it exhaust the process:
//  - SQLITE_DBCONFIG_DEFENSIVE, trusted_schema off, triggers and views disabled outright; and a
//    schema holding a trigger or a view is refused on open, naming it (tunefarm writes neither);
//  - values and rows are limited to kMaxValueBytes (a 100 MB text field is "string or blob too
//    big", not 1.5 GB of memory);
//  - every step of a statement has a deadline (kStepDeadline) through the progress handler;
//  - a symbolic link at the database's path or at its -wal, -shm or -journal file (planted by
//    whoever can write a shared directory) is refused by name, and writers open with
//    SQLITE_OPEN_NOFOLLOW.
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>

#include "tuner/records/sql_engines.h"

namespace tunefarm::tuner {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxValueBytes = 8 << 20;
constexpr std::chrono::seconds kStepDeadline{60};

// The progress handler's state: the deadline of the step in progress.
struct StepClock {
  Clock::time_point deadline = Clock::time_point::max();
  static int Check(void* self) { return Clock::now() > static_cast<StepClock*>(self)->deadline ? 1 : 0; }
};

class SqliteQuery : public SqlQuery {
 public:
  SqliteQuery(sqlite3* db, const std::string& sql, StepClock* clock) : db_(db), clock_(clock) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK) prepare_error_ = Error();
  }
  ~SqliteQuery() override { sqlite3_finalize(s_); }
  // A value over the length limit is refused by sqlite3_bind_text (SQLITE_TOOBIG) and would go in
  // as NULL: the statement fails instead, before it runs.
  SqlQuery& Bind(int i, const std::string& v) override {
    if (v.size() > size_t(kMaxValueBytes)) {
      if (bind_error_.ok()) {
        bind_error_ = Status::InvalidArgument("a value of " + std::to_string(v.size()) + " bytes is over the " +
                                              std::to_string(kMaxValueBytes >> 20) +
                                              " MiB a records value may hold (string or blob too big)");
      }
      return *this;
    }
    sqlite3_bind_text(s_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  SqlQuery& Bind(int i, int64_t v) override {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  SqlQuery& Bind(int i, double v) override {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  SqlQuery& BindNull(int i) override {
    sqlite3_bind_null(s_, i);
    return *this;
  }
  Result<bool> Next() override {
    if (!s_) return prepare_error_;
    if (!bind_error_.ok()) return bind_error_;
    clock_->deadline = Clock::now() + kStepDeadline;
    const int rc = sqlite3_step(s_);
    clock_->deadline = Clock::time_point::max();
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if (rc == SQLITE_INTERRUPT) {
      return Status::DeadlineExceeded("a statement ran past its " + std::to_string(kStepDeadline.count()) +
                                      " s deadline and was stopped");
    }
    return Error();
  }
  void Reset() override {
    sqlite3_reset(s_);
    bind_error_ = Status::OK();
  }
  std::string Text(int c) const override {
    const unsigned char* t = sqlite3_column_text(s_, c);
    return t ? std::string(reinterpret_cast<const char*>(t), size_t(sqlite3_column_bytes(s_, c))) : "";
  }
  int64_t Int(int c) const override { return sqlite3_column_int64(s_, c); }
  double Double(int c) const override { return sqlite3_column_double(s_, c); }

 private:
  sqlite3* db_;
  StepClock* clock_;
  sqlite3_stmt* s_ = nullptr;
  Status prepare_error_;
  Status bind_error_;

  Status Error() const {
    const int code = sqlite3_errcode(db_) & 0xff;
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) return Status::Corruption(sqlite3_errmsg(db_));
    return Status::IOError(sqlite3_errmsg(db_));
  }
};

class SqliteConnection : public SqlConnection {
 public:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {
    sqlite3_progress_handler(db_, 10000, &StepClock::Check, &clock_);
  }
  ~SqliteConnection() override { sqlite3_close(db_); }
  Engine engine() const override { return Engine::kSqlite; }
  const std::string& location() const override { return path_; }
  std::unique_ptr<SqlQuery> Query(const std::string& sql) override {
    return std::make_unique<SqliteQuery>(db_, sql, &clock_);
  }
  Status Exec(const std::string& sql) override {
    char* err = nullptr;
    clock_.deadline = Clock::now() + kStepDeadline;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    clock_.deadline = Clock::time_point::max();
    if (rc != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      return Status::IOError(msg);
    }
    return Status::OK();
  }
  Status BeginWrite() override { return Exec("BEGIN IMMEDIATE"); }
  Result<int> SchemaVersion() override {
    SqliteQuery q(db_, "PRAGMA user_version", &clock_);
    TUNEFARM_ASSIGN_OR_RETURN(bool row, q.Next());
    if (!row) return Status::IOError("PRAGMA user_version returned nothing");
    return int(q.Int(0));
  }
  Status PrepareForWrites() override {
    {
      SqliteQuery wal(db_, "PRAGMA journal_mode=WAL", &clock_);  // finalized before any transaction
      auto row = wal.Next();
      if (!row.ok()) return Status::IOError("cannot enable WAL: " + row.status().message());
    }
    return Exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
  }
  // BEGIN IMMEDIATE already holds the write lock.
  Status LockSchema() override { return Status::OK(); }
  void UnlockSchema() override {}
  Status SetSchemaVersion(int version) override { return Exec("PRAGMA user_version = " + std::to_string(version)); }
  const char* NowText() const override { return "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"; }
  const char* NowMs() const override { return "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"; }
  void KeepForSession(const std::string&) override {}  // a file does not drop its connection
  std::string Quote(const std::string& text) const override {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }
  int error_code() const { return sqlite3_errcode(db_) & 0xff; }

 private:
  sqlite3* db_;
  std::string path_;
  StepClock clock_;
};

// Switches off what lets a database file run code in this process, and bounds values.
void Harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
}

// tunefarm writes tables and indexes only: a trigger, a view, a generated column or a CHECK in the
// file is someone's code (triggers and views cannot run -- Harden disabled both -- but a generated
// column or a CHECK would; either way the user learns why the file is refused). A
// schema that cannot be read is left to the first query, whose error says why (not a database,
// damaged, a read-only directory without the WAL index).
Status RefuseCodeInTheSchema(sqlite3* db, const std::string& path) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, kSqliteSchemaCode, -1, &s, nullptr) != SQLITE_OK) {
    sqlite3_finalize(s);
    return Status::OK();
  }
  std::string found;
  while (sqlite3_step(s) == SQLITE_ROW) {
    if (!found.empty()) found += ", ";
    const unsigned char* type = sqlite3_column_text(s, 0);
    const unsigned char* name = sqlite3_column_text(s, 1);
    found += std::string(type ? reinterpret_cast<const char*>(type) : "?") + " '" +
             (name ? reinterpret_cast<const char*>(name) : "") + "'";
  }
  sqlite3_finalize(s);
  if (found.empty()) return Status::OK();
  return Status::FailedPrecondition(
      "records database " + path + " holds " + found +
      ": SQL that would run inside tunefarm, which writes only tables and indexes; "
      "refusing to open it (`tunefarm records check` lists what is wrong; `tunefarm records repair` copies "
      "the trials into a new database without it)");
}

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

Result<std::unique_ptr<SqliteConnection>> OpenWithFlags(const std::string& path, const std::string& name, int flags,
                                                        const char* purpose, bool salvage = false) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::IOError("cannot open records database " + path + purpose + ": " + msg);
  }
  sqlite3_busy_timeout(db, 5000);
  Harden(db);
  if (Status s = salvage ? Status::OK() : RefuseCodeInTheSchema(db, path); !s.ok()) {
    sqlite3_close(db);
    return s;
  }
  return std::make_unique<SqliteConnection>(db, path);
}

// The files SQLite opens beside a database: a symlink planted at any of them by whoever can write
// the directory would have SQLite write (or fail) through it. Refused here, naming the link; the
// database itself is opened with SQLITE_OPEN_NOFOLLOW as well.
Status RefuseLinks(const std::string& path, bool writing) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string file = path + suffix;
    struct stat st;
    if (lstat(file.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode) && (writing || *suffix != '\0')) {
      return Status::FailedPrecondition("records database " + path + ": " + file +
                                        " is a symbolic link: tunefarm writes a database and its -wal, -shm and "
                                        "-journal files only at their own paths; refusing to follow it");
    }
  }
  return Status::OK();
}

// SQLITE_OPEN_NOFOLLOW refuses a symlink anywhere in the path, but the folders on the way are the
// user's own path (a symlinked home or data directory): the folder is resolved first, and only the
// file's own name (and its side files, RefuseLinks) must not be a link.
std::string WithResolvedFolder(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  char resolved[PATH_MAX];
  if (!realpath(dir.c_str(), resolved)) return path;  // the open then says what is wrong
  const std::string folder = resolved;
  return (folder == "/" ? "" : folder) + "/" + (slash == std::string::npos ? path : path.substr(slash + 1));
}

}  // namespace

Result<std::unique_ptr<SqlConnection>> OpenSqlite(const std::string& path, bool create) {
  TUNEFARM_RETURN_IF_ERROR(RefuseLinks(path, /*writing=*/true));
  TUNEFARM_ASSIGN_OR_RETURN(
      auto conn, OpenWithFlags(path, WithResolvedFolder(path),
                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | (create ? SQLITE_OPEN_CREATE : 0), ""));
  return std::unique_ptr<SqlConnection>(std::move(conn));
}

Result<std::unique_ptr<SqlConnection>> OpenSqliteReadOnly(const std::string& path, bool salvage) {
  TUNEFARM_RETURN_IF_ERROR(RefuseLinks(path, /*writing=*/false));
  for (const char* query : {"mode=ro", "mode=ro&immutable=1"}) {
    TUNEFARM_ASSIGN_OR_RETURN(
        auto conn,
        OpenWithFlags(path, FileUri(path, query), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, " for reading", salvage));
    auto version = conn->SchemaVersion();
    const int code = conn->error_code();  // READONLY_CANTINIT, CANTOPEN: no -shm possible here
    if (!version.ok() && (code == SQLITE_READONLY || code == SQLITE_CANTOPEN) && std::string(query) == "mode=ro")
      continue;
    return std::unique_ptr<SqlConnection>(std::move(conn));
  }
  return Status::IOError("cannot open records database " + path + " for reading: unable to open the database file");
}

}  // namespace tunefarm::tuner
