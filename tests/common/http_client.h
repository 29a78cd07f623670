// Plain-socket HTTP for tests of the services' web endpoints (/metrics, the dashboard): one
// HTTP/1.0 request, read until the server closes, status and body -- so the tests check the wire
// format itself -- and promtool's verdict on a metrics text.
#ifndef TUNEFARM_TESTS_COMMON_HTTP_CLIENT_H_
#define TUNEFARM_TESTS_COMMON_HTTP_CLIENT_H_

#include <string>
#include <utility>
#include <vector>

namespace tunefarm::testing {

struct HttpResult {
  int status = -1;       // -1: no answer (the body says why)
  std::string headers;   // the raw header block
  std::string body;
};

// address "127.0.0.1:PORT"; extra_headers as "Name: value".
HttpResult Http(const std::string& address, const std::string& target, const std::string& method = "GET",
                const std::vector<std::string>& extra_headers = {});

// `promtool check metrics` on text: exit code and output.
std::pair<int, std::string> Promtool(const std::string& text);

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_HTTP_CLIENT_H_
