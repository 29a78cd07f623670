// HttpServer: the small HTTP/1.1 server behind the services' web endpoints (/metrics, the
// dashboard), over Boost.Beast. Each request is one connection (Connection: close); a handler maps
// a parsed request to a response and never sees the socket.
//
// Contract:
//  - Start binds host:port (port 0: a free one; address() says which). A bind failure or a host
//    that is not an IP address is an InvalidArgument naming the flag and the address.
//  - Connections are served on their own threads, at most `max_connections` at once; past that a
//    client gets 503 at once. A client that sends nothing for 5 s is dropped, so one idle socket
//    never stalls the others. Headers over 8 KiB or a body over `max_body_bytes`: 400/413 before
//    the handler runs. An exception out of a handler becomes a 500 naming it.
//  - The destructor stops accepting and waits for the connections in flight.
//  - ParseQuery percent-decodes `a=1&b=x%20y`; a malformed escape, a repeated name or a name
//    outside [A-Za-z0-9_] is an InvalidArgument naming it.
#ifndef TUNEFARM_FARM_NET_HTTP_SERVER_H_
#define TUNEFARM_FARM_NET_HTTP_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::farm_net {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // before '?', still percent-encoded
  std::string query;   // after '?', raw
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
  std::string Header(const std::string& lower_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones (Allow, Cache-Control, ...)
  static HttpResponse Text(int status, std::string text);   // text/plain, newline appended
  static HttpResponse Json(int status, std::string json);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string flag = "--listen";  // what errors call the address
  int max_connections = 32;
  size_t max_body_bytes = 64 * 1024;
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

// The one Status -> HTTP status mapping: InvalidArgument/OutOfRange 400, Unauthenticated 401,
// PermissionDenied 403, NotFound 404, FailedPrecondition 409, Unavailable 502,
// DeadlineExceeded 504, anything else 500.
int HttpStatusOf(const Status& status);

}  // namespace tunefarm::farm_net

#endif  // TUNEFARM_FARM_NET_HTTP_SERVER_H_
