// Fuzz target: the bytes of one HTTP request as a client sends them to the dashboard or a /metrics
// endpoint, through the parser the server uses (Boost.Beast with the server's header and body
// limits), then the Host check and the query parser a handler runs on what parsed.
#include "fuzz/fuzz_target.h"
#include "tunefarm/service/http_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fn = tunefarm::service;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto request = fn::ParseHttpRequest(bytes, 64 * 1024);
  if (!request.ok()) {
    if (request.status().message().empty()) std::abort();  // every refusal says why
    return 0;
  }
  (void)fn::HostAllowed(request->Header("host"), {"farm.example"});
  (void)fn::ParseQuery(request->query);
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  return {"GET /api/trials?task=1&after=0 HTTP/1.1\r\nHost: 127.0.0.1:8321\r\n\r\n",
          "HEAD /metrics HTTP/1.0\r\n\r\n",
          "POST /api/jobs/1/cancel HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}",
          "GET / HTTP/1.1\r\nHost: [::1]:80\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
          "GET /?a=%zz&a=1 HTTP/1.1\r\nHost: rebind.example\r\n\r\n",            // bad escape, repeat
          "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",  // conflicting lengths
          "GET / HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n",         // header limit
          "GET / HTTP/1.1\r\nHost: x\r\n"};                                      // incomplete
}

}  // namespace tunefarm::fuzz
