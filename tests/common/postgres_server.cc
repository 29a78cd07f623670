#include "common/postgres_server.h"

#include <glob.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "common/test_files.h"

namespace tunefarm::testing {
namespace {

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace

std::string PostgresServer::BinDir() {
  glob_t g;
  std::string found;
  if (glob("/usr/lib/postgresql/*/bin/initdb", 0, nullptr, &g) == 0 && g.gl_pathc > 0) {
    found = g.gl_pathv[g.gl_pathc - 1];  // the newest installed
    found.resize(found.size() - std::string("/initdb").size());
  }
  globfree(&g);
  return found;
}

bool PostgresServer::Start(std::string* error, bool durable) {
  const std::string bin = BinDir();
  char templ[] = "/tmp/tunefarm-pg-XXXXXX";
  if (bin.empty() || !mkdtemp(templ)) {
    *error = bin.empty() ? "PostgreSQL is not installed" : "cannot make a temporary directory";
    return false;
  }
  dir_ = templ;
  std::vector<std::string> as_user;
  if (geteuid() == 0) {
    const char* user = getpwnam("postgres") ? "postgres" : "nobody";
    const passwd* pw = getpwnam(user);
    if (!pw || chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      *error = std::string("cannot hand ") + dir_ + " to the user " + user;
      return false;
    }
    as_user = {"runuser", "-u", user, "--"};
  }
  std::string prefix;
  for (const auto& a : as_user) prefix += a + " ";
  const auto init = RunCommand(prefix + bin + "/initdb -D " + dir_ + "/data -U tunefarm -A trust -E UTF8 --no-sync");
  if (init.code != 0) {
    *error = "initdb failed: " + init.output;
    return false;
  }
  port_ = FreePort();
  prefix_ = prefix + bin + "/pg_ctl -D " + dir_ + "/data";
  const std::string options = "-p " + std::to_string(port_) + " -k " + dir_ + " -c listen_addresses=127.0.0.1" +
                              " -c log_min_error_statement=panic -c fsync=" + (durable ? "on" : "off");
  const auto start = RunCommand(prefix_ + " -l " + dir_ + "/server.log -w -t 60 -o '" + options + "' start");
  running_ = start.code == 0;
  if (!running_) {
    *error = "pg_ctl start failed: " + start.output + ReadFile(dir_ + "/server.log");
    return false;
  }
  const std::string ping = "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=postgres user=tunefarm";
  if (PQping(ping.c_str()) != PQPING_OK) {
    *error = "postgres does not answer on port " + std::to_string(port_) + ": " + ReadFile(dir_ + "/server.log");
    return false;
  }
  return true;
}

PostgresServer::~PostgresServer() {
  if (running_) RunCommand(prefix_ + " -m fast -w stop");  // fast: no waiting for clients
  if (!dir_.empty()) RunCommand("rm -rf " + dir_);
}

bool PostgresServer::Restart(std::string* error) {
  const auto r = RunCommand(prefix_ + " -l " + dir_ + "/server.log -m fast -w -t 60 restart");
  if (r.code != 0) *error = "pg_ctl restart failed: " + r.output + ReadFile(dir_ + "/server.log");
  return r.code == 0;
}

std::string PostgresServer::Url(const std::string& db) const {
  return "postgresql://tunefarm@127.0.0.1:" + std::to_string(port_) + "/" + db;
}

std::string PostgresServer::CreateDatabase(const std::string& name, std::string* error) {
  PGconn* conn =
      PQconnectdb(("host=127.0.0.1 port=" + std::to_string(port_) + " dbname=postgres user=tunefarm").c_str());
  PGresult* r = PQexec(conn, ("CREATE DATABASE \"" + name + "\"").c_str());
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) *error = PQerrorMessage(conn);
  PQclear(r);
  PQfinish(conn);
  return ok ? Url(name) : "";
}

}  // namespace tunefarm::testing
