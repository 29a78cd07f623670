#include "tunefarm/service/http_server.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/flags.h"

namespace tunefarm::service {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

using Parser = http::request_parser<http::string_body>;
using Response = http::response<http::string_body>;

constexpr size_t kHeaderLimit = 8192;

Response BuildResponse(const HttpResponse& r, bool head) {
  Response res;
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
  return res;
}

void ConfigureParser(Parser& parser, size_t max_body_bytes) {
  parser.header_limit(kHeaderLimit);
  parser.body_limit(max_body_bytes);
}

// The parsed message as handlers see it (names lower-case, HEAD served as GET).
HttpRequest ToHttpRequest(const http::request<http::string_body>& req) {
  HttpRequest request;
  request.method = std::string(req.method_string());
  const std::string target(req.target());
  const size_t q = target.find('?');
  request.path = target.substr(0, q);
  if (q != std::string::npos) request.query = target.substr(q + 1);
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // Two Host headers name two hosts: kept as a value no check accepts (a ',' is in no host name),
    // rather than letting the last one win.
    auto [it, inserted] = request.headers.emplace(name, std::string(field.value()));
    if (!inserted && name == "host") it->second += "," + std::string(field.value());
    if (!inserted && name != "host") it->second = std::string(field.value());
  }
  request.body = req.body();
  if (req.method() == http::verb::head) request.method = "GET";
  return request;
}

// What a failed read answers, or nullopt when there is nobody to answer (the client left).
std::optional<HttpResponse> ReadErrorResponse(const beast::error_code& ec, size_t max_body_bytes) {
  if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
      ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
    return std::nullopt;
  }
  if (ec == http::error::body_limit) {
    return HttpResponse::Text(413, "request body over " + std::to_string(max_body_bytes) + " bytes");
  }
  if (ec == http::error::header_limit) {
    return HttpResponse::Text(431, "request headers over " + std::to_string(kHeaderLimit) + " bytes");
  }
  return HttpResponse::Text(400, "bad request: " + ec.message());
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string ThisMachinesName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return Lower(name);
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
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kUnavailable:
      return 502;
    case StatusCode::kResourceExhausted:  // the server's own capacity: busy, or out of memory
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

bool HostAllowed(const std::string& host_header, const std::vector<std::string>& allowed_hosts) {
  if (host_header.empty()) return true;  // HTTP/1.0 clients send none; browsers always do
  // A host and a port, nothing else: "127.0.0.1:80@evil.example" (userinfo) and two hosts are not.
  for (char c : host_header) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view(".-:[]_").find(c) == std::string_view::npos)
      return false;
  }
  std::string host = host_header;
  if (host.front() == '[') {  // [v6]:port
    const size_t close = host.find(']');
    if (close == std::string::npos) return false;
    host = host.substr(1, close - 1);
  } else if (std::count(host.begin(), host.end(), ':') == 1) {
    host = host.substr(0, host.find(':'));
  }
  host = Lower(host);
  if (!host.empty() && host.back() == '.') host.pop_back();  // "localhost." is localhost
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  if (!ec || host == "localhost") return true;
  static const std::string self = ThisMachinesName();
  if (!self.empty() && host == self) return true;
  for (const auto& name : allowed_hosts) {
    if (Lower(name) == host) return true;
  }
  return false;
}

Result<HttpRequest> ParseHttpRequest(std::string_view bytes, size_t max_body_bytes) {
  Parser parser;
  ConfigureParser(parser, max_body_bytes);
  parser.eager(true);
  beast::error_code ec;
  size_t used = 0;
  while (used < bytes.size() && !parser.is_done()) {
    const size_t n = parser.put(asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec == http::error::need_more) {
      ec = {};
      break;
    }
    if (ec || n == 0) break;
    used += n;
  }
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  if (ec) {
    auto response = ReadErrorResponse(ec, max_body_bytes);
    return Status::InvalidArgument(response ? response->body.substr(0, response->body.size() - 1)
                                            : "incomplete request: " + ec.message());
  }
  if (!parser.is_done()) return Status::InvalidArgument("incomplete request");
  return ToHttpRequest(parser.get());
}

// Threads: the I/O thread owns the acceptor, every socket, the pending list and the timers (so
// they need no lock); handler threads touch only `mu`'s fields and post their response back.
struct HttpServer::Impl {
  struct Conn {
    explicit Conn(asio::io_context& io) : socket(io), timer(io) {}
    enum class State { kReading, kHandling, kWriting, kClosed };
    tcp::socket socket;
    asio::steady_timer timer;
    beast::flat_buffer buffer{kHeaderLimit};
    std::optional<Parser> parser;
    Response response;
    std::shared_ptr<void> held;  // the response's held_until_written, released by Close
    std::string client;          // the peer's IP address
    State state = State::kReading;
    std::list<std::shared_ptr<Conn>>::iterator pending_it;
  };
  using ConnPtr = std::shared_ptr<Conn>;

  asio::io_context io;
  // Keeps io.run() going while the server lives, so a response posted late is still written.
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  HttpHandler handler;
  HttpServerOptions options;
  std::thread io_thread;
  std::string address;

  // I/O thread only.
  std::list<ConnPtr> pending;  // oldest first
  std::unordered_map<std::string, int> pending_per_client;
  bool stopping = false;

  Mutex mu;
  CondVar idle;
  int handling GUARDED_BY(mu) = 0;  // handler threads running
  int writing GUARDED_BY(mu) = 0;   // responses not yet sent

  int PendingCap() const {
    rlimit limit{};
    int cap = options.max_pending;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      cap = std::min<int>(cap, static_cast<int>(limit.rlim_cur / 2));
    }
    return std::max(cap, 1);
  }

  void Accept() {
    auto conn = std::make_shared<Conn>(io);
    acceptor.async_accept(conn->socket, [this, conn](const beast::error_code& ec) {
      if (stopping || ec == asio::error::operation_aborted) return;
      if (ec) {
        // Out of descriptors, most likely: make room, then try again shortly rather than spin.
        if (!pending.empty()) Refuse(pending.front(), 503, "busy: the server is out of connections");
        accept_retry.expires_after(std::chrono::milliseconds(20));
        accept_retry.async_wait([this](const beast::error_code& e) {
          if (!e && !stopping) Accept();
        });
        return;
      }
      Admit(conn);
      Accept();
    });
  }

  void Admit(const ConnPtr& conn) {
    beast::error_code ec;
    const auto peer = conn->socket.remote_endpoint(ec);
    conn->client = ec ? "?" : peer.address().to_string();
    int& mine = pending_per_client[conn->client];
    if (mine >= options.max_pending_per_client) {
      for (const auto& old : pending) {
        if (old->client == conn->client) {
          Refuse(old, 503,
                 "busy: too many connections from " + conn->client +
                     " are still sending their request; this one was the oldest");
          break;
        }
      }
    }
    if (static_cast<int>(pending.size()) >= PendingCap()) {
      Refuse(pending.front(), 503,
             "busy: too many connections are still sending their request; this one was the oldest");
    }
    ++pending_per_client[conn->client];
    conn->pending_it = pending.insert(pending.end(), conn);
    conn->parser.emplace();
    ConfigureParser(*conn->parser, options.max_body_bytes);
    conn->timer.expires_after(options.request_deadline);
    conn->timer.async_wait([this, conn](const beast::error_code& e) {
      if (e || conn->state != Conn::State::kReading) return;
      Refuse(conn, 408,
             "the request did not arrive whole within " + std::to_string(options.request_deadline.count()) + " ms");
    });
    http::async_read(conn->socket, conn->buffer, *conn->parser,
                     [this, conn](const beast::error_code& e, size_t) { OnRead(conn, e); });
  }

  void Unpend(const ConnPtr& conn) {
    if (conn->state != Conn::State::kReading) return;
    pending.erase(conn->pending_it);
    if (--pending_per_client[conn->client] == 0) pending_per_client.erase(conn->client);
    conn->timer.cancel();
  }

  // Stops reading `conn` and answers it (I/O thread). By value: callers pass list elements that
  // Unpend erases.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): a reference would dangle once Unpend erases
  void Refuse(ConnPtr conn, int status, const std::string& why) {
    Unpend(conn);
    beast::error_code ec;
    conn->socket.cancel(ec);
    Write(conn, HttpResponse::Text(status, why), false);
  }

  void OnRead(const ConnPtr& conn, const beast::error_code& ec) {
    if (conn->state != Conn::State::kReading) return;  // refused meanwhile
    Unpend(conn);
    if (ec) {
      if (auto response = ReadErrorResponse(ec, options.max_body_bytes)) {
        Write(conn, *response, false);
      } else {
        Close(conn);
      }
      return;
    }
    const bool head = conn->parser->get().method() == http::verb::head;
    HttpRequest request = ToHttpRequest(conn->parser->get());
    conn->parser.reset();
    if (options.check_host && !HostAllowed(request.Header("host"), options.allowed_hosts)) {
      Write(conn,
            HttpResponse::Text(403,
                               "Host \"" + request.Header("host").substr(0, 256) +
                                   "\" is not allowed: this server answers its IP addresses, localhost, this machine's "
                                   "name and the names given with --allow-host (a guard against DNS rebinding)"),
            head);
      return;
    }
    std::string busy;  // non-empty: refused, its response counted in `writing` under the same lock
    {
      MutexLock lock(&mu);
      if (handling >= options.max_connections) {
        busy = "busy: " + std::to_string(handling) + " requests in flight";
        ++writing;
      } else {
        ++handling;
      }
    }
    if (!busy.empty()) {
      conn->state = Conn::State::kHandling;  // Write moves it on
      Write(conn, HttpResponse::Text(503, busy), head, /*counted=*/true);
      return;
    }
    conn->state = Conn::State::kHandling;
    std::thread([this, owned = ConnPtr(conn), request = std::move(request), head]() mutable {
      HttpResponse response;
      try {
        response = handler(request);
      } catch (const std::exception& e) {  // never out of the handler's thread
        response = HttpResponse::Text(500, std::string("internal error: ") + e.what());
      }
      {
        MutexLock lock(&mu);
        ++writing;
      }
      asio::post(io, [this, conn = owned, response = std::move(response), head] {
        Write(conn, response, head, /*counted=*/true);
      });
      owned.reset();  // the post holds it now: nothing of this thread touches the Impl after the count drops
      MutexLock lock(&mu);
      if (--handling == 0) idle.SignalAll();
    }).detach();
  }

  // Sends `r` and closes (I/O thread). `counted`: `writing` was raised for it already.
  void Write(const ConnPtr& conn, const HttpResponse& r, bool head, bool counted = false) EXCLUDES(mu) {
    if (!counted) {
      MutexLock lock(&mu);
      ++writing;
    }
    if (stopping && !conn->socket.is_open()) {
      Written(conn);
      return;
    }
    conn->state = Conn::State::kWriting;
    conn->response = BuildResponse(r, head);
    conn->held = r.held_until_written;
    conn->timer.expires_after(options.write_deadline);
    conn->timer.async_wait([conn](const beast::error_code& e) {
      if (e) return;
      beast::error_code ignored;
      conn->socket.close(ignored);  // the client does not take its response
    });
    // The write completes only through the I/O thread's run loop, never inline here.
    http::async_write(conn->socket, conn->response, [this, conn](const beast::error_code&, size_t) { Written(conn); });
  }

  void Written(const ConnPtr& conn) EXCLUDES(mu) {
    Close(conn);
    MutexLock lock(&mu);
    if (--writing == 0) idle.SignalAll();
  }

  void Close(const ConnPtr& conn) {
    conn->state = Conn::State::kClosed;
    conn->held.reset();
    conn->timer.cancel();
    beast::error_code ec;
    conn->socket.shutdown(tcp::socket::shutdown_both, ec);
    conn->socket.close(ec);
  }

  void Stop() {
    asio::post(io, [this] {
      stopping = true;
      beast::error_code ec;
      acceptor.close(ec);
      accept_retry.cancel();
      while (!pending.empty()) {
        const ConnPtr conn = pending.front();
        Unpend(conn);
        Close(conn);
      }
    });
    MutexLock lock(&mu);
    while (handling != 0) idle.Wait(&mu);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (writing != 0 && idle.WaitUntil(&mu, deadline)) {
    }
    lock.Unlock();
    work.reset();
    io.stop();
    io_thread.join();
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
  if (ec)
    return Status::InvalidArgument(flag + " " + host_port + ": the host must be an IP address (" + ec.message() + ")");
  const tcp::endpoint endpoint(ip, static_cast<uint16_t>(listen.port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::InvalidArgument(flag + " " + host_port + ": cannot listen: " + ec.message());
  const tcp::endpoint bound = impl->acceptor.local_endpoint(ec);
  impl->address = (bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string()) +
                  ":" + std::to_string(bound.port());
  Impl* raw = impl.get();
  raw->work.emplace(raw->io.get_executor());
  raw->Accept();
  impl->io_thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::~HttpServer() { impl_->Stop(); }

std::string HttpServer::address() const { return impl_->address; }

}  // namespace tunefarm::service
