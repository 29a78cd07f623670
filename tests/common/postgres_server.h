// PostgresServer: a real PostgreSQL server for tests -- Debian's postgresql package
// (/usr/lib/postgresql/N/bin), a new data directory under /tmp, run as an unprivileged user (the
// server refuses root: under root it runs as "postgres", else "nobody"), listening on 127.0.0.1 at
// a free port with trust authentication for the user "tunefarm". Stopped (fast shutdown) and its
// directory removed when destroyed.
#ifndef TUNEFARM_TESTS_COMMON_POSTGRES_SERVER_H_
#define TUNEFARM_TESTS_COMMON_POSTGRES_SERVER_H_

#include <string>

#include "common/test_files.h"

namespace tunefarm::testing {

class PostgresServer {
 public:
  // The directory of initdb and postgres; "" when PostgreSQL is not installed.
  static std::string BinDir();
  // durable: fsync on, as a production server (benchmarks); tests run without it.
  bool Start(std::string* error, bool durable = false);
  ~PostgresServer();

  // Stops the server (fast: every client connection is cut) and starts it again with the same
  // settings, as an administrator's restart or a crash recovery does.
  bool Restart(std::string* error);
  // Creates a database; its postgresql:// URL ("" and *error on failure).
  std::string CreateDatabase(const std::string& name, std::string* error);
  std::string Url(const std::string& db) const;
  int port() const { return port_; }

 private:
  std::string dir_;
  int port_ = 0;
  std::string prefix_;  // pg_ctl as the server's user
  bool running_ = false;
};

// Skips (or fails, under TUNEFARM_REQUIRE_FIXTURES=1) when no server can start; else `server`
// holds a running one.
#define TUNEFARM_START_POSTGRES(server)                                                               \
  do {                                                                                                \
    if (::tunefarm::testing::PostgresServer::BinDir().empty()) {                                      \
      TUNEFARM_MISSING_FIXTURE("PostgreSQL is not installed (scripts/setup.sh installs postgresql)"); \
    }                                                                                                 \
    std::string pg_error;                                                                             \
    ASSERT_TRUE((server).Start(&pg_error)) << pg_error;                                               \
  } while (0)

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_POSTGRES_SERVER_H_
