#include "tunefarm/service/metrics.h"

#include <dirent.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/service/http_server.h"

namespace tunefarm::service {
namespace {

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
  const std::string text = ReadFile("/proc/self/stat").value_or("");
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
  one("process_resident_memory_bytes", "Resident memory size in bytes.", prometheus::MetricType::Gauge,
      field(24) * page);
  one("process_virtual_memory_bytes", "Virtual memory size in bytes.", prometheus::MetricType::Gauge, field(23));
  one("process_open_fds", "Number of open file descriptors.", prometheus::MetricType::Gauge, CountOpenFds());
  one("process_max_fds", "Maximum number of open file descriptors.", prometheus::MetricType::Gauge,
      double(fd_limit.rlim_cur));
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

void AddSample(prometheus::MetricFamily* family, double value,
               const std::vector<std::pair<std::string, std::string>>& labels) {
  prometheus::ClientMetric m;
  for (const auto& [name, v] : labels) m.label.push_back({name, v});
  switch (family->type) {
    case prometheus::MetricType::Counter:
      m.counter.value = value;
      break;
    case prometheus::MetricType::Gauge:
      m.gauge.value = value;
      break;
    default:
      m.untyped.value = value;
      break;
  }
  family->metric.push_back(std::move(m));
}

std::shared_ptr<prometheus::Collectable> CollectWith(std::function<std::vector<prometheus::MetricFamily>()> collect) {
  return std::make_shared<FunctionCollectable>(std::move(collect));
}

std::shared_ptr<prometheus::Collectable> ProcessMetrics() { return CollectWith(CollectProcess); }

struct MetricsEndpoint::Impl {
  std::vector<std::shared_ptr<prometheus::Collectable>> sources;
  std::unique_ptr<HttpServer> server;

  std::string Body() const {
    std::vector<prometheus::MetricFamily> families;
    for (const auto& s : sources) {
      for (auto& f : s->Collect()) families.push_back(std::move(f));
    }
    return prometheus::TextSerializer().Serialize(families);
  }

  HttpResponse Handle(const HttpRequest& req) const {
    if (req.path != "/metrics") return HttpResponse::Text(404, "not found: this endpoint serves /metrics only");
    if (req.method != "GET") {
      HttpResponse r = HttpResponse::Text(405, "method not allowed: /metrics answers GET");
      r.headers.push_back({"Allow", "GET, HEAD"});
      return r;
    }
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    try {
      r.body = Body();
    } catch (const std::exception& e) {  // the serializer's stream errors
      return HttpResponse::Text(500, std::string("cannot serialize the metrics: ") + e.what());
    }
    return r;
  }
};

MetricsEndpoint::MetricsEndpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& host_port, std::vector<std::shared_ptr<prometheus::Collectable>> sources) {
  auto impl = std::make_unique<Impl>();
  impl->sources = std::move(sources);
  impl->sources.push_back(ProcessMetrics());
  const Impl* raw = impl.get();
  HttpServerOptions options;
  options.flag = "--metrics";
  options.max_connections = 8;
  options.check_host = true;  // a scraper addresses it by IP, localhost or this machine's name
  TUNEFARM_ASSIGN_OR_RETURN(impl->server,
                            HttpServer::Start(
                                host_port, [raw](const HttpRequest& r) { return raw->Handle(r); }, options));
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(std::move(impl)));
}

MetricsEndpoint::~MetricsEndpoint() = default;

std::string MetricsEndpoint::address() const { return impl_->server->address(); }

}  // namespace tunefarm::service
