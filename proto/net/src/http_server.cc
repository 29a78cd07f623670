#include "tunefarm/farm_net/http_server.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "tunefarm/farm_net/flags.h"

namespace tunefarm::farm_net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

void WriteResponse(tcp::socket& socket, const HttpResponse& r, bool head) {
  http::response<http::string_body> res;
  res.version(11);
  res.result(static_cast<unsigned>(r.status));
  res.set(http::field::server, "tunefarm");
  res.set(http::field::content_type, r.content_type);
  res.set("X-Content-Type-Options", "nosniff");
  for (const auto& [name, value] : r.headers) res.set(name, value);
  res.keep_alive(false);
  res.body() = r.body;
  res.prepare_payload();
  if (head) res.body().clear();  // Content-Length stays that of the GET
  beast::error_code ec;
  http::write(socket, res, ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> PercentDecode(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      const int hi = i + 2 < s.size() ? HexValue(s[i + 1]) : -1;
      const int lo = i + 2 < s.size() ? HexValue(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) return Status::InvalidArgument("malformed percent escape in \"" + s.substr(0, 64) + "\"");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string HttpRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

HttpResponse HttpResponse::Text(int status, std::string text) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(text) + "\n";
  return r;
}

HttpResponse HttpResponse::Json(int status, std::string json) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(json);
  r.headers.push_back({"Cache-Control", "no-store"});
  return r;
}

Result<std::map<std::string, std::string>> ParseQuery(const std::string& query) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string pair = query.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) {
      if (end == query.size()) break;
      continue;
    }
    const size_t eq = pair.find('=');
    const std::string name = pair.substr(0, eq);
    bool name_ok = !name.empty() && name.size() <= 32;
    for (char c : name) name_ok = name_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!name_ok) return Status::InvalidArgument("bad query parameter name \"" + name.substr(0, 64) + "\"");
    TUNEFARM_ASSIGN_OR_RETURN(std::string value, PercentDecode(eq == std::string::npos ? "" : pair.substr(eq + 1)));
    if (!out.emplace(name, std::move(value)).second) {
      return Status::InvalidArgument("query parameter \"" + name + "\" is given twice");
    }
    if (end == query.size()) break;
  }
  return out;
}

int HttpStatusOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kUnavailable: return 502;
    case StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

struct HttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  HttpHandler handler;
  HttpServerOptions options;
  std::atomic<bool> stopping{false};
  std::thread accept_thread;
  std::string address;
  std::mutex mu;
  std::condition_variable idle;
  int active = 0;

  void Serve(tcp::socket socket) {
    timeval timeout{5, 0};
    setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    beast::flat_buffer buffer(8192);
    http::request_parser<http::string_body> parser;
    parser.header_limit(8192);
    parser.body_limit(options.max_body_bytes);
    beast::error_code ec;
    http::read(socket, buffer, parser, ec);
    if (ec == http::error::end_of_stream || ec == asio::error::timed_out || ec == asio::error::would_block ||
        ec == asio::error::connection_reset) {
      return;  // nothing (complete) was asked
    }
    if (ec == http::error::body_limit) {
      WriteResponse(socket, HttpResponse::Text(413, "request body over " + std::to_string(options.max_body_bytes) + " bytes"),
                    false);
      return;
    }
    if (ec) {
      WriteResponse(socket, HttpResponse::Text(400, "bad request: " + ec.message()), false);
      return;
    }
    const auto& req = parser.get();
    HttpRequest request;
    request.method = std::string(req.method_string());
    const std::string target(req.target());
    const size_t q = target.find('?');
    request.path = target.substr(0, q);
    if (q != std::string::npos) request.query = target.substr(q + 1);
    for (const auto& field : req) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers[name] = std::string(field.value());
    }
    request.body = req.body();
    const bool head = req.method() == http::verb::head;
    if (head) request.method = "GET";
    HttpResponse response;
    try {
      response = handler(request);
    } catch (const std::exception& e) {  // never out of the connection's thread
      response = HttpResponse::Text(500, std::string("internal error: ") + e.what());
    }
    WriteResponse(socket, response, head);
  }

  void Run() {
    while (!stopping) {
      tcp::socket socket(io);
      beast::error_code ec;
      acceptor.accept(socket, ec);
      if (stopping) break;
      if (ec) continue;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (active >= options.max_connections) {
          WriteResponse(socket, HttpResponse::Text(503, "busy: " + std::to_string(active) + " connections in flight"), false);
          continue;
        }
        ++active;
      }
      // The socket (even moved-from, it refers to `io`) is destroyed before the count drops: once
      // it reaches 0 the destructor may free this Impl while the detached thread is still unwinding.
      auto owned = std::make_unique<tcp::socket>(std::move(socket));
      std::thread([this, owned = std::move(owned)]() mutable {
        Serve(std::move(*owned));
        owned.reset();
        std::lock_guard<std::mutex> lock(mu);
        if (--active == 0) idle.notify_all();
      }).detach();
    }
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& host_port, HttpHandler handler,
                                                      HttpServerOptions options) {
  const std::string flag = options.flag;
  TUNEFARM_ASSIGN_OR_RETURN(ListenAddress listen, ParseListenAddress(host_port, flag));
  auto impl = std::make_unique<Impl>();
  impl->handler = std::move(handler);
  impl->options = std::move(options);
  beast::error_code ec;
  const auto ip = asio::ip::make_address(listen.host, ec);
  if (ec) return Status::InvalidArgument(flag + " " + host_port + ": the host must be an IP address (" + ec.message() + ")");
  const tcp::endpoint endpoint(ip, static_cast<unsigned short>(listen.port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::InvalidArgument(flag + " " + host_port + ": cannot listen: " + ec.message());
  const tcp::endpoint bound = impl->acceptor.local_endpoint(ec);
  impl->address = (bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string()) + ":" +
                  std::to_string(bound.port());
  Impl* raw = impl.get();
  impl->accept_thread = std::thread([raw] { raw->Run(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::~HttpServer() {
  impl_->stopping = true;
  // Wake the blocking accept with one connection to ourselves, then wait for those in flight.
  beast::error_code ec;
  tcp::socket poke(impl_->io);
  poke.connect(impl_->acceptor.local_endpoint(ec), ec);
  impl_->accept_thread.join();
  impl_->acceptor.close(ec);
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->idle.wait(lock, [this] { return impl_->active == 0; });
}

std::string HttpServer::address() const { return impl_->address; }

}  // namespace tunefarm::farm_net
