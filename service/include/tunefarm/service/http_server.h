// HttpServer: the small HTTP/1.1 server behind the services' web endpoints (/metrics, the
// dashboard), over Boost.Beast. Each request is one connection (Connection: close); a handler maps
// a parsed request to a response and never sees the socket.
//
// Contract:
//  - Start binds host:port (port 0: a free one; address() says which). A bind failure or a host
//    that is not an IP address is an InvalidArgument naming the flag and the address.
//  - One I/O thread reads every request without blocking, so a client that sends slowly holds a
//    socket, never a handler: a request must arrive whole within `request_deadline` (else 408).
//    At most `max_pending` connections may be sending their request at once, `max_pending_per_client`
//    from one address; a new connection past either cap evicts the oldest such one with a 503, so
//    slow clients can never keep a well-behaved one out, and the 503s stop once they go.
//  - A complete request runs its handler on a thread of its own, at most `max_connections` at once;
//    past that the request gets 503 at once. Headers over 8 KiB or a body over `max_body_bytes`:
//    400/413 before the handler runs. An exception out of a handler becomes a 500 naming it. A
//    response must be taken by the client within `write_deadline`.
//  - With `check_host`, a request whose Host header names anything but an IP address, localhost,
//    this machine's name or one of `allowed_hosts` gets 403 naming it (DNS rebinding: a page of
//    another site must not read the endpoint through a name that resolves to this machine).
//  - The destructor stops accepting, drops the connections still sending, waits for the handlers in
//    flight and gives their responses up to a second to leave.
//  - ParseQuery percent-decodes `a=1&b=x%20y`; a malformed escape, a repeated name or a name
//    outside [A-Za-z0-9_] is an InvalidArgument naming it.
//  - ParseHttpRequest parses one whole request from bytes the way the server does (the fuzz
//    target's entry); HostAllowed is the Host check alone.
#ifndef TUNEFARM_SERVICE_HTTP_SERVER_H_
#define TUNEFARM_SERVICE_HTTP_SERVER_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::service {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // before '?', still percent-encoded
  std::string query;                           // after '?', raw
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
  std::string Header(const std::string& lower_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones (Allow, Cache-Control, ...)
  // Released once the response is written or abandoned (its client gone or too slow): what a
  // handler reserved for it, such as one of the dashboard's slots for answers that read many trials,
  // stays reserved until its bytes have left the process.
  std::shared_ptr<void> held_until_written;
  static HttpResponse Text(int status, std::string text);  // text/plain, newline appended
  static HttpResponse Json(int status, std::string json);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string flag = "--listen";  // what errors call the address
  int max_connections = 32;       // handlers running at once
  size_t max_body_bytes = 64 * 1024;
  int max_pending = 512;                              // connections still sending their request (capped again by
                                                      // half the process's descriptor limit)
  int max_pending_per_client = 256;                   // of those, from one IP address
  std::chrono::milliseconds request_deadline{10000};  // accept to the request's last byte
  std::chrono::milliseconds write_deadline{10000};    // a response's first to last byte
  bool check_host = false;
  std::vector<std::string> allowed_hosts;  // names (no port) accepted besides the defaults
};

class HttpServer {
 public:
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& host_port, HttpHandler handler,
                                                   HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  std::string address() const;  // "127.0.0.1:43121"

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

Result<std::map<std::string, std::string>> ParseQuery(const std::string& query);

Result<HttpRequest> ParseHttpRequest(std::string_view bytes, size_t max_body_bytes);

// `host_header` as sent ("name:port", "[v6]:port", "name"); an absent header (HTTP/1.0) is allowed.
bool HostAllowed(const std::string& host_header, const std::vector<std::string>& allowed_hosts);

// The one Status -> HTTP status mapping: InvalidArgument/OutOfRange 400, Unauthenticated 401,
// PermissionDenied 403, NotFound 404, FailedPrecondition 409, Unavailable 502,
// DeadlineExceeded 504, anything else 500.
int HttpStatusOf(const Status& status);

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_HTTP_SERVER_H_
