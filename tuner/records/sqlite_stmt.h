// Stmt: one prepared SQLite statement with chained binds and typed column reads -- the records
// layer's only way to run SQL with parameters (values are always bound, never spliced into SQL).
// Private to tuner/records/.
#ifndef TUNEFARM_TUNER_RECORDS_SQLITE_STMT_H_
#define TUNEFARM_TUNER_RECORDS_SQLITE_STMT_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner {

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) { rc_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& Bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& BindNull(int i) {
    sqlite3_bind_null(s_, i);
    return *this;
  }
  int Step() { return sqlite3_step(s_); }
  sqlite3_stmt* raw() const { return s_; }
  std::string Text(int c) const {
    const unsigned char* t = sqlite3_column_text(s_, c);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  int64_t Int(int c) const { return sqlite3_column_int64(s_, c); }
  double Double(int c) const { return sqlite3_column_double(s_, c); }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_OK;
};

// SELECT ... FROM trials joined with its workload and target, in ReadTrial's column order; the
// caller appends WHERE/ORDER.
extern const char* const kSelectTrial;
TrialRecord ReadTrial(const Stmt& s);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_SQLITE_STMT_H_
