#include "tunefarm/farm_net/metrics.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <thread>

#include <prometheus/text_serializer.h>

#include "tunefarm/farm_net/flags.h"

namespace tunefarm::farm_net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class FunctionCollectable final : public prometheus::Collectable {
 public:
  explicit FunctionCollectable(std::function<std::vector<prometheus::MetricFamily>()> f) : f_(std::move(f)) {}
  std::vector<prometheus::MetricFamily> Collect() const override { return f_(); }

 private:
  std::function<std::vector<prometheus::MetricFamily>()> f_;
};

int CountOpenFds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
    --n;  // the directory's own descriptor
  }
  return n;
}

std::vector<prometheus::MetricFamily> CollectProcess() {
  std::vector<prometheus::MetricFamily> out;
  const double ticks = double(sysconf(_SC_CLK_TCK)), page = double(sysconf(_SC_PAGESIZE));
  // /proc/self/stat: fields after the parenthesized command; utime 14, stime 15, starttime 22,
  // vsize 23, rss 24 (1-based, proc(5)).
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  std::vector<std::string> fields;
  if (close != std::string::npos) {
    std::istringstream rest(text.substr(close + 2));
    for (std::string f; rest >> f;) fields.push_back(f);
  }
  auto field = [&](size_t one_based) { return one_based - 3 < fields.size() ? std::stod(fields[one_based - 3]) : 0.0; };
  double boot_time = 0;
  std::ifstream procstat("/proc/stat");
  for (std::string line; std::getline(procstat, line);) {
    if (line.rfind("btime ", 0) == 0) boot_time = std::stod(line.substr(6));
  }
  rlimit fd_limit{};
  getrlimit(RLIMIT_NOFILE, &fd_limit);

  auto one = [&](const char* name, const char* help, prometheus::MetricType type, double v) {
    prometheus::MetricFamily f = Family(name, help, type);
    AddSample(&f, v);
    out.push_back(std::move(f));
  };
  one("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", prometheus::MetricType::Counter,
      (field(14) + field(15)) / ticks);
  one("process_resident_memory_bytes", "Resident memory size in bytes.", prometheus::MetricType::Gauge, field(24) * page);
  one("process_virtual_memory_bytes", "Virtual memory size in bytes.", prometheus::MetricType::Gauge, field(23));
  one("process_open_fds", "Number of open file descriptors.", prometheus::MetricType::Gauge, CountOpenFds());
  one("process_max_fds", "Maximum number of open file descriptors.", prometheus::MetricType::Gauge, double(fd_limit.rlim_cur));
  one("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
      prometheus::MetricType::Gauge, boot_time + field(22) / ticks);
  return out;
}

}  // namespace

prometheus::MetricFamily Family(const std::string& name, const std::string& help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void AddSample(prometheus::MetricFamily* family, double value, const std::vector<std::pair<std::string, std::string>>& labels) {
  prometheus::ClientMetric m;
  for (const auto& [name, v] : labels) m.label.push_back({name, v});
  switch (family->type) {
    case prometheus::MetricType::Counter: m.counter.value = value; break;
    case prometheus::MetricType::Gauge: m.gauge.value = value; break;
    default: m.untyped.value = value; break;
  }
  family->metric.push_back(std::move(m));
}

std::shared_ptr<prometheus::Collectable> CollectWith(std::function<std::vector<prometheus::MetricFamily>()> collect) {
  return std::make_shared<FunctionCollectable>(std::move(collect));
}

std::shared_ptr<prometheus::Collectable> ProcessMetrics() { return CollectWith(CollectProcess); }

struct MetricsEndpoint::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::vector<std::shared_ptr<prometheus::Collectable>> sources;
  std::atomic<bool> stopping{false};
  std::thread thread;
  std::string address;

  std::string Body() const {
    std::vector<prometheus::MetricFamily> families;
    for (const auto& s : sources) {
      for (auto& f : s->Collect()) families.push_back(std::move(f));
    }
    return prometheus::TextSerializer().Serialize(families);
  }

  void Serve(tcp::socket socket) {
    timeval timeout{5, 0};  // a client that sends nothing is dropped, never stalls the endpoint
    setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    beast::flat_buffer buffer(8192);
    http::request_parser<http::empty_body> parser;
    parser.header_limit(8192);
    beast::error_code ec;
    http::read(socket, buffer, parser, ec);
    http::response<http::string_body> res;
    res.version(11);
    res.set(http::field::server, "tunefarm");
    res.keep_alive(false);
    if (ec) {
      if (ec == http::error::end_of_stream || ec == asio::error::timed_out || ec == asio::error::would_block) return;
      res.result(http::status::bad_request);
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.body() = "bad request: " + ec.message() + "\n";
    } else {
      const auto& req = parser.get();
      const std::string target(req.target());
      if (req.method() != http::verb::get && req.method() != http::verb::head) {
        res.result(http::status::method_not_allowed);
        res.set(http::field::allow, "GET, HEAD");
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "method not allowed: /metrics answers GET\n";
      } else if (target != "/metrics" && target.rfind("/metrics?", 0) != 0) {
        res.result(http::status::not_found);
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "not found: this endpoint serves /metrics only\n";
      } else {
        res.result(http::status::ok);
        res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        try {
          res.body() = Body();
        } catch (const std::exception& e) {  // the serializer's stream errors; never out of the thread
          res.result(http::status::internal_server_error);
          res.body() = std::string("cannot serialize the metrics: ") + e.what() + "\n";
        }
        if (req.method() == http::verb::head) res.body().clear();
      }
    }
    res.prepare_payload();
    http::write(socket, res, ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
  }

  void Run() {
    while (!stopping) {
      tcp::socket socket(io);
      beast::error_code ec;
      acceptor.accept(socket, ec);
      if (stopping) break;
      if (ec) continue;
      Serve(std::move(socket));
    }
  }
};

MetricsEndpoint::MetricsEndpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(const std::string& host_port,
                                                                std::vector<std::shared_ptr<prometheus::Collectable>> sources) {
  TUNEFARM_ASSIGN_OR_RETURN(ListenAddress listen, ParseListenAddress(host_port, "--metrics"));
  auto impl = std::make_unique<Impl>();
  impl->sources = std::move(sources);
  impl->sources.push_back(ProcessMetrics());
  beast::error_code ec;
  const auto ip = asio::ip::make_address(listen.host, ec);
  if (ec) return Status::InvalidArgument("--metrics " + host_port + ": the host must be an IP address (" + ec.message() + ")");
  const tcp::endpoint endpoint(ip, static_cast<unsigned short>(listen.port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::InvalidArgument("--metrics " + host_port + ": cannot listen: " + ec.message());
  const tcp::endpoint bound = impl->acceptor.local_endpoint(ec);
  impl->address = (bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string()) + ":" +
                  std::to_string(bound.port());
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->Run(); });
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(std::move(impl)));
}

MetricsEndpoint::~MetricsEndpoint() {
  impl_->stopping = true;
  // Wake the blocking accept with one connection to ourselves, then close.
  beast::error_code ec;
  tcp::socket poke(impl_->io);
  poke.connect(impl_->acceptor.local_endpoint(ec), ec);
  impl_->thread.join();
  impl_->acceptor.close(ec);
}

std::string MetricsEndpoint::address() const { return impl_->address; }

}  // namespace tunefarm::farm_net
