// Plain-socket HTTP for tests of the services' web endpoints (/metrics, the dashboard): one
// HTTP/1.0 request, read until the server closes, status and body -- so the tests check the wire
// format itself -- and promtool's verdict on a metrics text.
#ifndef TUNEFARM_TESTS_COMMON_HTTP_CLIENT_H_
#define TUNEFARM_TESTS_COMMON_HTTP_CLIENT_H_

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tunefarm/runtime/mutex.h"

namespace tunefarm::testing {

struct HttpResult {
  int status = -1;      // -1: no answer (the body says why)
  std::string headers;  // the raw header block
  std::string body;
};

// address "127.0.0.1:PORT"; extra_headers as "Name: value" (a Host among them replaces the address).
HttpResult Http(const std::string& address, const std::string& target, const std::string& method = "GET",
                const std::vector<std::string>& extra_headers = {});

// Slowloris: `count` connections to `address`, each sending a request's first line and then one
// header byte every `drip_ms` from a thread of its own, never finishing. Responses the server
// sends them (a 408, a 503) are collected. Closed by the destructor.
class SlowClients {
 public:
  SlowClients(const std::string& address, int count, int drip_ms);
  ~SlowClients();
  SlowClients(const SlowClients&) = delete;
  SlowClients& operator=(const SlowClients&) = delete;
  int opened() const { return static_cast<int>(fds_.size()); }
  // Connections the server has answered or closed so far, and the first answer line of each.
  std::vector<std::string> Answers() EXCLUDES(mu_);

 private:
  void Drip() EXCLUDES(mu_);
  std::vector<int> fds_;                              // set by the constructor
  std::vector<std::string> answers_ GUARDED_BY(mu_);  // per connection; "" while still open
  int drip_ms_;
  std::atomic<bool> stop_{false};
  Mutex mu_;
  std::thread thread_;
};

// `promtool check metrics` on text: exit code and output.
std::pair<int, std::string> Promtool(const std::string& text);

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_HTTP_CLIENT_H_
