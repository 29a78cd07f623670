// SqlConnection over PostgreSQL through libpq: the records database a team's tuning machines
// share (docs/formats/records_db.md, "PostgreSQL").
#include <libpq-fe.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "tuner/records/sql_engines.h"

namespace tunefarm::tuner {
namespace {

// ?N -> $N outside quoted text: RecordsDb's queries are written once for both engines.
std::string ToDollarParameters(const std::string& sql) {
  std::string out;
  out.reserve(sql.size());
  char quote = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out += '$';
      continue;
    }
    out += c;
  }
  return out;
}

// PostgreSQL text must be valid UTF-8 without NUL bytes; SQLite stores any bytes, and compiler
// messages or device strings may hold some. Invalid sequences become U+FFFD.
std::string ValidUtf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  const std::string replacement = "\xEF\xBF\xBD";
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    bool valid = n > 0 && b != 0 && i + n <= s.size();
    for (size_t k = 1; valid && k < n; ++k) valid = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (valid && n == 2) valid = b >= 0xC2;  // overlong
    if (valid && n == 3) {
      const auto b1 = static_cast<unsigned char>(s[i + 1]);
      valid = !(b == 0xE0 && b1 < 0xA0) && !(b == 0xED && b1 >= 0xA0);  // overlong, surrogates
    }
    if (valid && n == 4) {
      const auto b1 = static_cast<unsigned char>(s[i + 1]);
      valid = b <= 0xF4 && !(b == 0xF0 && b1 < 0x90) && !(b == 0xF4 && b1 >= 0x90);
    }
    if (valid) {
      out.append(s, i, n);
      i += n;
    } else {
      out += replacement;
      ++i;
    }
  }
  return out;
}

// The same per-value limit as SQLite's (sqlite_connection.cc): a field no tunefarm writer produces
// is an error naming it, never a string passed on to the dashboard, the tuner or the compiler.
// libpq has received the whole result by then; what this bounds is what every layer above copies.
constexpr int kMaxValueBytes = 8 << 20;

std::string LibpqMessage(PGconn* conn) {
  std::string msg = PQerrorMessage(conn);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

class PostgresConnection;
// Re-establishes a dropped connection (PQreset) and its session setup; false when it stays down.
bool EnsureConnected(PostgresConnection* c);

class PostgresQuery : public SqlQuery {
 public:
  PostgresQuery(PostgresConnection* owner, PGconn* conn, const std::string& sql)
      : owner_(owner), conn_(conn), sql_(ToDollarParameters(sql)) {}
  ~PostgresQuery() override { PQclear(result_); }
  SqlQuery& Bind(int i, const std::string& v) override { return Set(i, ValidUtf8(v)); }
  SqlQuery& Bind(int i, int64_t v) override { return Set(i, std::to_string(v)); }
  SqlQuery& Bind(int i, double v) override {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    return Set(i, buf);
  }
  SqlQuery& BindNull(int i) override {
    Grow(i);
    values_[size_t(i - 1)].reset();
    return *this;
  }
  Result<bool> Next() override {
    if (!result_) {
      if (!EnsureConnected(owner_)) return Status::IOError(LibpqMessage(conn_));
      std::vector<const char*> params;
      for (const auto& v : values_) params.push_back(v ? v->c_str() : nullptr);
      result_ = PQexecParams(conn_, sql_.c_str(), int(params.size()), nullptr, params.data(), nullptr, nullptr, 0);
      // A read that met a cut connection (the server restarted) is simply asked again; a write is
      // not, since whether it committed is unknown.
      if (PQresultStatus(result_) == PGRES_FATAL_ERROR && PQstatus(conn_) == CONNECTION_BAD &&
          sql_.rfind("SELECT", 0) == 0 && EnsureConnected(owner_)) {
        PQclear(result_);
        result_ = PQexecParams(conn_, sql_.c_str(), int(params.size()), nullptr, params.data(), nullptr, nullptr, 0);
      }
      const ExecStatusType st = PQresultStatus(result_);
      if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        std::string msg = PQresultErrorMessage(result_);
        while (!msg.empty() && msg.back() == '\n') msg.pop_back();
        if (msg.empty()) msg = LibpqMessage(conn_);
        PQclear(result_);
        result_ = nullptr;
        return Status::IOError(msg);
      }
      row_ = -1;
    }
    if (++row_ >= PQntuples(result_)) return false;
    for (int c = 0; c < PQnfields(result_); ++c) {
      const int bytes = PQgetlength(result_, row_, c);
      if (bytes > kMaxValueBytes) {
        return Status::IOError("column '" + std::string(PQfname(result_, c)) + "' of a row holds " +
                               std::to_string(bytes) + " bytes, over the " + std::to_string(kMaxValueBytes >> 20) +
                               " MiB a records value may hold (string or blob too big)");
      }
    }
    return true;
  }
  void Reset() override {
    PQclear(result_);
    result_ = nullptr;
  }
  std::string Text(int c) const override {
    return std::string(PQgetvalue(result_, row_, c), size_t(PQgetlength(result_, row_, c)));
  }
  int64_t Int(int c) const override {
    const char* v = PQgetvalue(result_, row_, c);
    if (v[0] == 't' || v[0] == 'f') return v[0] == 't';  // booleans
    return std::strtoll(v, nullptr, 10);
  }
  double Double(int c) const override { return std::strtod(PQgetvalue(result_, row_, c), nullptr); }

 private:
  void Grow(int i) {
    if (values_.size() < size_t(i)) values_.resize(size_t(i));
  }
  SqlQuery& Set(int i, std::string v) {
    Grow(i);
    values_[size_t(i - 1)] = std::move(v);
    return *this;
  }
  PostgresConnection* owner_;
  PGconn* conn_;
  std::string sql_;
  std::vector<std::optional<std::string>> values_;
  PGresult* result_ = nullptr;
  int row_ = -1;
};

class PostgresConnection : public SqlConnection {
 public:
  PostgresConnection(PGconn* conn, std::string location) : conn_(conn), location_(std::move(location)) {}
  ~PostgresConnection() override { PQfinish(conn_); }
  Engine engine() const override { return Engine::kPostgres; }
  const std::string& location() const override { return location_; }
  std::unique_ptr<SqlQuery> Query(const std::string& sql) override {
    return std::make_unique<PostgresQuery>(this, conn_, sql);
  }
  Status Exec(const std::string& sql) override {
    if (!EnsureConnected(this)) return Status::IOError(LibpqMessage(conn_));
    return ExecOnce(sql);
  }
  Status ExecOnce(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    Status s = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? Status::OK() : Status::IOError(LibpqMessage(conn_));
    PQclear(r);
    return s;
  }
  // Nothing is lost by starting a transaction again on a connection that was cut before it.
  Status BeginWrite() override {
    Status s = Exec("BEGIN");
    if (!s.ok() && PQstatus(conn_) == CONNECTION_BAD) s = Exec("BEGIN");
    return s;
  }
  Result<int> SchemaVersion() override {
    auto q = Query("SELECT to_regclass('tunefarm_schema') IS NOT NULL");
    TUNEFARM_ASSIGN_OR_RETURN(bool row, q->Next());
    if (!row || q->Int(0) == 0) return 0;
    auto v = Query("SELECT COALESCE(MAX(version), 0) FROM tunefarm_schema");
    TUNEFARM_ASSIGN_OR_RETURN(row, v->Next());
    return row ? int(v->Int(0)) : 0;
  }
  Status PrepareForWrites() override { return Status::OK(); }
  // Two tunefarm processes opening a new database at once: the second waits, then finds the
  // version moved on. The key is arbitrary but fixed ("tunefarm" in ASCII).
  Status LockSchema() override { return Exec("SELECT pg_advisory_lock(8391737768413262189)"); }
  void UnlockSchema() override { (void)Exec("SELECT pg_advisory_unlock(8391737768413262189)"); }
  Status SetSchemaVersion(int version) override {
    return Exec(
        "CREATE TABLE IF NOT EXISTS tunefarm_schema (version INTEGER NOT NULL); DELETE FROM tunefarm_schema;"
        " INSERT INTO tunefarm_schema VALUES (" +
        std::to_string(version) + ")");
  }
  const char* NowText() const override {
    return "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";
  }
  const char* NowMs() const override { return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"; }
  void KeepForSession(const std::string& sql) override { session_.push_back(sql); }
  std::string Quote(const std::string& text) const override {
    const std::string valid = ValidUtf8(text);
    char* quoted = PQescapeLiteral(conn_, valid.data(), valid.size());
    if (!quoted) return "''";
    std::string out = quoted;
    PQfreemem(quoted);
    return out;
  }

  // A connection that dropped (the server restarted, the network failed) is re-established before
  // the next statement, with its session setup; the statement that saw it drop failed.
  bool Reconnect() {
    if (PQstatus(conn_) == CONNECTION_OK) return true;
    PQreset(conn_);
    if (PQstatus(conn_) != CONNECTION_OK) return false;
    for (const auto& sql : session_) (void)ExecOnce(sql);
    return true;
  }

 private:
  PGconn* conn_;
  std::string location_;
  std::vector<std::string> session_;  // re-run after a reconnect, in order
};

bool EnsureConnected(PostgresConnection* c) { return c->Reconnect(); }

void IgnoreNotice(void*, const char*) {}  // "relation already exists, skipping" and the like

// postgresql://user@host:port/db from libpq's parse of the location: never the password.
std::string DisplayLocation(PQconninfoOption* options) {
  std::string user, host, port, db;
  for (PQconninfoOption* o = options; o && o->keyword; ++o) {
    const std::string key = o->keyword;
    const std::string value = o->val ? o->val : "";
    if (key == "user") user = value;
    if (key == "host" || (key == "hostaddr" && host.empty())) host = value;
    if (key == "port") port = value;
    if (key == "dbname") db = value;
  }
  return "postgresql://" + (user.empty() ? "" : user + "@") + host + (port.empty() ? "" : ":" + port) + "/" + db;
}

}  // namespace

bool IsPostgresLocation(const std::string& location) {
  if (location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0) return true;
  size_t i = 0;
  while (i < location.size() && (std::isalnum(static_cast<unsigned char>(location[i])) || location[i] == '_')) ++i;
  while (i < location.size() && location[i] == ' ') ++i;
  return i > 0 && i < location.size() && location[i] == '=';
}

std::string DisplayPostgresLocation(const std::string& location) {
  PQconninfoOption* options = PQconninfoParse(location.c_str(), nullptr);
  if (!options) return "postgresql://(unparsable)";
  std::string shown = DisplayLocation(options);
  PQconninfoFree(options);
  return shown;
}

Result<std::unique_ptr<SqlConnection>> OpenPostgres(const std::string& location) {
  char* parse_error = nullptr;
  PQconninfoOption* options = PQconninfoParse(location.c_str(), &parse_error);
  if (!options) {
    // libpq's reason quotes the text it stumbled on, which may be the password: not shown.
    PQfreemem(parse_error);
    return Status::InvalidArgument(
        "records database: not a valid PostgreSQL URL or keyword string (postgresql://USER[:PASSWORD]@HOST[:PORT]/DB, "
        "or key=value pairs such as host=HOST dbname=DB user=USER)");
  }
  const std::string shown = DisplayLocation(options);
  PQconninfoFree(options);
  // Earlier keywords give way to the location's own: a user's connect_timeout wins over ours.
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "tunefarm", location.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (!conn || PQstatus(conn) != CONNECTION_OK) {
    std::string why = conn ? LibpqMessage(conn) : "out of memory";
    PQfinish(conn);
    return Status::IOError("cannot connect to records database " + shown + ": " + why);
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  const std::string user = PQuser(conn), host = PQhost(conn), port = PQport(conn), db = PQdb(conn);
  auto result = std::make_unique<PostgresConnection>(conn, "postgresql://" + user + "@" + host + ":" + port + "/" + db);
  // Text columns hold UTF-8 (ValidUtf8); the server converts for a database in another encoding.
  result->KeepForSession("SET client_encoding = 'UTF8'");
  TUNEFARM_RETURN_IF_ERROR(result->Exec("SET client_encoding = 'UTF8'"));
  return std::unique_ptr<SqlConnection>(std::move(result));
}

}  // namespace tunefarm::tuner
