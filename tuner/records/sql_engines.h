// Opening a SqlConnection on each engine RecordsDb supports. Private to tuner/records/.
#ifndef TUNEFARM_TUNER_RECORDS_SQL_ENGINES_H_
#define TUNEFARM_TUNER_RECORDS_SQL_ENGINES_H_

#include <memory>
#include <string>

#include "tuner/records/sql.h"

namespace tunefarm::tuner {

// SQLite, read-write; `create` makes the file when it is missing. Busy timeout 5 s.
Result<std::unique_ptr<SqlConnection>> OpenSqlite(const std::string& path, bool create);
// SQLite, read-only; where the WAL's -shm file cannot be made (a read-only directory), the file is
// read as immutable -- nothing can be writing it there. The schema version is readable on success.
// salvage: a schema holding triggers or views is opened instead of refused (they stay disabled),
// for `records check` and `records repair`.
Result<std::unique_ptr<SqlConnection>> OpenSqliteReadOnly(const std::string& path, bool salvage = false);

// The parts of an SQLite schema that would run SQL inside tunefarm, which writes only tables with
// plain columns and its two indexes: triggers, views, generated columns (computed when a row is read
// or written), CHECK constraints and DEFAULT expressions other than tunefarm's own constants and
// timestamp (evaluated on every insert), and any other index (an expression or a partial index's
// WHERE runs on every write). Rows of (what, name). Opening refuses a file that has any; `records
// check` lists them.
inline constexpr const char* kSqliteSchemaCode =
    "SELECT type, name FROM sqlite_schema WHERE type IN ('trigger', 'view')"
    " UNION ALL SELECT 'generated column', m.name || '.' || c.name FROM sqlite_schema m,"
    " pragma_table_xinfo(m.name) c WHERE m.type = 'table' AND c.hidden IN (2, 3)"
    " UNION ALL SELECT 'check constraint in table', name FROM sqlite_schema"
    " WHERE type = 'table' AND (upper(sql) LIKE '%CHECK (%' OR upper(sql) LIKE '%CHECK(%')"
    " UNION ALL SELECT 'default expression of column', m.name || '.' || c.name FROM sqlite_schema m,"
    " pragma_table_info(m.name) c WHERE m.type = 'table' AND c.dflt_value IS NOT NULL AND c.dflt_value NOT IN"
    " ('0', '1', '''''', '''{}''', '''[]''', 'strftime(''%Y-%m-%dT%H:%M:%fZ'', ''now'')')"
    " UNION ALL SELECT 'index', name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND sql NOT IN"
    " ('CREATE INDEX trials_by_workload_target ON trials(workload_id, target_id, status, mean_ms)',"
    " 'CREATE INDEX trials_by_job ON trials(job_id)') ORDER BY 2";

// True for a PostgreSQL location: a postgresql:// or postgres:// URL, or a libpq keyword string
// ("host=db dbname=records user=tuner"): text that starts with a keyword and '='.
bool IsPostgresLocation(const std::string& location);
// postgresql://user@host:port/db without the password; "postgresql://(unparsable)" when libpq cannot parse it.
std::string DisplayPostgresLocation(const std::string& location);
// A libpq connection (password from the URL, PGPASSWORD or ~/.pgpass, as psql). Errors name the
// location without its password and give libpq's reason.
Result<std::unique_ptr<SqlConnection>> OpenPostgres(const std::string& location);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_SQL_ENGINES_H_
