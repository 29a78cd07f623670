// SqlConnection and SqlQuery: the records layer's one way to run SQL, over SQLite or PostgreSQL.
// RecordsDb writes its queries once, in the SQL both engines accept, with numbered parameters
// (?1, ?2, ...; PostgreSQL's connection rewrites them to $1, $2, ...) and values always bound,
// never spliced into the text. What differs between the engines -- schema versioning, the clock,
// the DDL of the migrations, how a write transaction starts -- is a method here.
// Private to tuner/records/.
#ifndef TUNEFARM_TUNER_RECORDS_SQL_H_
#define TUNEFARM_TUNER_RECORDS_SQL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "tunefarm/runtime/result.h"

namespace tunefarm::tuner {

class SqlQuery {
 public:
  virtual ~SqlQuery() = default;
  // Parameter i is ?i in the statement text.
  virtual SqlQuery& Bind(int i, const std::string& v) = 0;
  virtual SqlQuery& Bind(int i, int64_t v) = 0;
  virtual SqlQuery& Bind(int i, double v) = 0;
  virtual SqlQuery& BindNull(int i) = 0;
  // Runs the statement on the first call; then true while a row is available. An error carries
  // the engine's message (a statement that failed to prepare reports it here).
  virtual Result<bool> Next() = 0;
  // Ready to run again with new bindings.
  virtual void Reset() = 0;
  // Columns of the current row, 0-based; NULL reads as "" or 0.
  virtual std::string Text(int c) const = 0;
  virtual int64_t Int(int c) const = 0;
  virtual double Double(int c) const = 0;
};

class SqlConnection {
 public:
  enum class Engine { kSqlite, kPostgres };
  virtual ~SqlConnection() = default;
  virtual Engine engine() const = 0;
  // What messages name: the SQLite file, or the PostgreSQL URL without a password.
  virtual const std::string& location() const = 0;
  virtual std::unique_ptr<SqlQuery> Query(const std::string& sql) = 0;
  // One or more statements without parameters.
  virtual Status Exec(const std::string& sql) = 0;
  // A write transaction that holds its locks from the start (SQLite: BEGIN IMMEDIATE, so a second
  // writer waits instead of failing on upgrade).
  virtual Status BeginWrite() = 0;
  // The schema version stored in the database (0: none yet). Read before anything is written.
  virtual Result<int> SchemaVersion() = 0;
  // Before the first write, once the schema version was found acceptable (SQLite: WAL journal).
  virtual Status PrepareForWrites() = 0;
  // Around a migration's transaction: serializes migrators (taken before BEGIN, so the
  // transaction starts after the previous migrator's commit and sees it).
  virtual Status LockSchema() = 0;
  virtual void UnlockSchema() = 0;
  // Inside the migration's transaction: records the new version.
  virtual Status SetSchemaVersion(int version) = 0;
  // SQL expressions for the database's clock: ISO 8601 UTC text, and Unix milliseconds. The
  // database's clock, not the caller's: tuners on several machines compare claim expiries.
  virtual const char* NowText() const = 0;
  // A statement that sets up the session (a read-only mode, an advisory lock), run again after the
  // connection is re-established: a PostgreSQL server that restarted, a network that dropped.
  virtual void KeepForSession(const std::string& sql) = 0;
  // A string literal for SQL text that cannot take parameters (KeepForSession).
  virtual std::string Quote(const std::string& text) const = 0;
  virtual const char* NowMs() const = 0;
};

// Result<bool> to a loop condition, keeping the first error: while (Step(q, &status)) ...
inline bool Step(SqlQuery& q, Status* status) {
  auto row = q.Next();
  if (!row.ok()) {
    *status = row.status();
    return false;
  }
  return *row;
}

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_SQL_H_
