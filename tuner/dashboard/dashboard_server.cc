// Dashboard: routes (one table), parameter validation, the records connection pool, the embedded
// page, and request metrics.
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <charconv>
#include <chrono>
#include <functional>
#include <memory>
#include <set>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/runtime/no_throw.h"
#include "tunefarm/service/http_server.h"
#include "tunefarm/tuner/dashboard.h"
#include "tunefarm/tuner/records.h"
#include "tuner/dashboard/assets.h"
#include "tuner/dashboard/dashboard_views.h"
#include "tuner/dashboard/farm_view.h"

namespace tunefarm::tuner {
namespace {

using dashboard::Json;
using service::HttpRequest;
using service::HttpResponse;
using Params = std::map<std::string, std::string>;

constexpr int64_t kMaxId = std::numeric_limits<int64_t>::max();
constexpr int64_t kDefaultTrialLimit = 50000, kMaxTrialLimit = 200000;
// Answers that read many trials (Task, Model, Compare, a page of trials) run at most this many at
// once; the rest are told to come back (503, Retry-After) at once rather than holding a handler, so
// the cheap answers (/api/last, /api/config, the page) stay answerable under any load.
constexpr int kExpensiveAtOnce = 2;

// A counting gate that never waits: a slot is a ticket, given back when the last copy of it goes
// (with the response it was attached to, once written: HttpResponse::held_until_written).
class Gate : public std::enable_shared_from_this<Gate> {
 public:
  explicit Gate(int slots) : free_(slots) {}
  // A ticket, or null when every slot is taken.
  std::shared_ptr<void> TryEnter() EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      if (free_ == 0) return nullptr;
      --free_;
    }
    // Not null (a ticket tests true); the deleter gives the slot back and keeps the gate alive.
    return std::shared_ptr<void>(static_cast<void*>(this), [gate = shared_from_this()](void*) { gate->Leave(); });
  }

 private:
  void Leave() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++free_;
  }
  Mutex mu_;
  int free_ GUARDED_BY(mu_);
};

// One records database: its path and idle connections (a RecordsDb is used by one thread at a
// time; requests run on their own threads).
class ConnectionPool {
 public:
  explicit ConnectionPool(std::string path) : path_(std::move(path)), shown_(DisplayRecordsLocation(path_)) {}
  // Never a password: the page shows it.
  const std::string& location() const { return shown_; }

  class Lease {
   public:
    Lease(ConnectionPool* pool, std::unique_ptr<RecordsDb> db) : pool_(pool), db_(std::move(db)) {}
    Lease(Lease&&) = default;
    ~Lease() {
      if (db_) pool_->Return(std::move(db_));
    }
    // The roles the views take: a view never holds the whole database.
    RecordsQueries& queries() { return *db_; }
    dashboard::DashboardRecords records() { return {*db_, *db_}; }

   private:
    ConnectionPool* pool_;
    std::unique_ptr<RecordsDb> db_;
  };

  Result<Lease> Take() EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      if (!idle_.empty()) {
        auto db = std::move(idle_.back());
        idle_.pop_back();
        return Lease(this, std::move(db));
      }
    }
    TUNEFARM_ASSIGN_OR_RETURN(auto db, RecordsDb::Open(path_, RecordsDb::Mode::kReadOnly));
    return Lease(this, std::move(db));
  }

 private:
  void Return(std::unique_ptr<RecordsDb> db) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (idle_.size() < 8) idle_.push_back(std::move(db));
  }
  std::string path_, shown_;
  Mutex mu_;
  std::vector<std::unique_ptr<RecordsDb>> idle_ GUARDED_BY(mu_);
};

Result<int64_t> IntParam(const Params& params, const std::string& name, int64_t min, int64_t max, int64_t def) {
  auto it = params.find(name);
  if (it == params.end()) return def;
  const std::string& text = it->second;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string shown = "'" + text.substr(0, 64) + (text.size() > 64 ? "...'" : "'");
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size()) {
    return Status::InvalidArgument("parameter " + name + " must be an integer: got " + shown);
  }
  if (ec == std::errc::result_out_of_range || value < min || value > max) {
    return Status::InvalidArgument("parameter " + name + " must be in [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "]: got " + shown);
  }
  return value;
}

bool SameToken(const std::string& a, const std::string& b) {  // no early exit on the first difference
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace

struct Dashboard::Impl {
  DashboardOptions options;
  std::vector<std::unique_ptr<ConnectionPool>> pools;
  std::unique_ptr<dashboard::FarmView> farm;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>* requests = nullptr;
  prometheus::Family<prometheus::Histogram>* durations = nullptr;
  std::unique_ptr<service::HttpServer> server;

  struct Route {
    std::string method, path;
    std::set<std::string> params;
    std::function<Result<Json>(const HttpRequest&, const Params&)> answer;
    bool expensive = false;  // reads many trials: through `expensive_gate`
  };
  std::shared_ptr<Gate> expensive_gate = std::make_shared<Gate>(kExpensiveAtOnce);
  std::vector<Route> routes;

  Result<ConnectionPool*> Pool(const Params& params) {
    TUNEFARM_ASSIGN_OR_RETURN(int64_t db, IntParam(params, "db", 0, kMaxId, 0));
    if (db >= int64_t(pools.size())) {
      return Status::NotFound("no records database " + std::to_string(db) + ": this dashboard has " +
                              std::to_string(pools.size()) + " (0.." + std::to_string(pools.size() - 1) + ")");
    }
    return pools[size_t(db)].get();
  }

  void AddRoutes() {
    auto with_db = [this](auto view) {
      return [this, view](const HttpRequest&, const Params& p) -> Result<Json> {
        TUNEFARM_ASSIGN_OR_RETURN(ConnectionPool * pool, Pool(p));
        TUNEFARM_ASSIGN_OR_RETURN(auto db, pool->Take());
        return view(db.records(), p);
      };
    };
    routes.push_back({"GET", "/api/config", {}, [this](const HttpRequest&, const Params&) -> Result<Json> {
                        Json records = Json::array();
                        for (const auto& p : pools) records.push_back(p->location());
                        return Json{{"records", records},
                                    {"tracker", options.tracker},
                                    {"daemon", options.daemon},
                                    {"can_cancel", !options.token.empty() && farm->has_daemon()}};
                      }});
    routes.push_back(
        {"GET", "/api/overview", {"db"}, with_db([this](dashboard::DashboardRecords db, const Params&) -> Result<Json> {
           TUNEFARM_ASSIGN_OR_RETURN(Json out, dashboard::OverviewView(db));
           out["farm"] = farm->Farm();
           return out;
         })});
    routes.push_back(
        {"GET", "/api/last", {"db"}, with_db([](dashboard::DashboardRecords db, const Params&) -> Result<Json> {
           TUNEFARM_ASSIGN_OR_RETURN(int64_t last, db.queries.LastTrialId());
           return Json{{"last_id", last}};
         })});
    routes.push_back(
        {"GET", "/api/workloads", {"db"}, with_db([](dashboard::DashboardRecords db, const Params&) -> Result<Json> {
           TUNEFARM_ASSIGN_OR_RETURN(auto list, db.queries.Workloads());
           Json out{{"workloads", Json::array()}};
           for (const auto& w : list) {
             out["workloads"].push_back(Json{{"id", w.id},
                                             {"key", w.key},
                                             {"name", dashboard::WorkloadDisplayName(w.key)},
                                             {"template", w.template_name},
                                             {"flops", w.flops}});
           }
           return out;
         })});
    routes.push_back({"GET", "/api/models", {"db"}, with_db([](dashboard::DashboardRecords db, const Params&) {
                        return dashboard::ModelsView(db);
                      })});
    routes.push_back({"GET",
                      "/api/model",
                      {"db", "job"},
                      with_db([](dashboard::DashboardRecords db, const Params& p) -> Result<Json> {
                        TUNEFARM_ASSIGN_OR_RETURN(int64_t job, IntParam(p, "job", 0, kMaxId, 0));
                        return dashboard::ModelView(db, job);
                      }),
                      true});
    routes.push_back({"GET",
                      "/api/task",
                      {"db", "id"},
                      with_db([](dashboard::DashboardRecords db, const Params& p) -> Result<Json> {
                        if (!p.count("id")) return Status::InvalidArgument("parameter id (the task id) is required");
                        TUNEFARM_ASSIGN_OR_RETURN(int64_t id, IntParam(p, "id", 1, kMaxId, 0));
                        return dashboard::TaskView(db.queries, id);
                      }),
                      true});
    routes.push_back({"GET",
                      "/api/trials",
                      {"db", "task", "after", "limit"},
                      with_db([](dashboard::DashboardRecords db, const Params& p) -> Result<Json> {
                        TUNEFARM_ASSIGN_OR_RETURN(int64_t task, IntParam(p, "task", 0, kMaxId, 0));
                        TUNEFARM_ASSIGN_OR_RETURN(int64_t after, IntParam(p, "after", 0, kMaxId, 0));
                        TUNEFARM_ASSIGN_OR_RETURN(int64_t limit,
                                                  IntParam(p, "limit", 1, kMaxTrialLimit, kDefaultTrialLimit));
                        return dashboard::TrialsView(db.queries, task, after, limit);
                      }),
                      true});
    routes.push_back({"GET",
                      "/api/compare",
                      {"workload"},
                      [this](const HttpRequest&, const Params& p) -> Result<Json> {
                        auto it = p.find("workload");
                        if (it == p.end() || it->second.empty()) {
                          return Status::InvalidArgument("parameter workload (a workload key) is required");
                        }
                        std::vector<ConnectionPool::Lease> leases;
                        std::vector<RecordsQueries*> dbs;
                        for (const auto& pool : pools) {
                          TUNEFARM_ASSIGN_OR_RETURN(auto lease, pool->Take());
                          dbs.push_back(&lease.queries());
                          leases.push_back(std::move(lease));
                        }
                        return dashboard::CompareView(dbs, it->second);
                      },
                      true});
    routes.push_back(
        {"POST", "/api/jobs/cancel", {"id"}, [this](const HttpRequest& req, const Params& p) -> Result<Json> {
           if (options.token.empty()) {
             return Status(StatusCode::kPermissionDenied,
                           "this dashboard is read-only: start it with the farm token (--token-file) to cancel jobs");
           }
           const std::string auth = req.Header("authorization");
           if (auth.rfind("Bearer ", 0) != 0 || !SameToken(auth.substr(7), options.token)) {
             return Status(StatusCode::kUnauthenticated,
                           "cancelling a job needs the farm token in \"Authorization: Bearer TOKEN\"");
           }
           if (!p.count("id")) return Status::InvalidArgument("parameter id (the job id) is required");
           TUNEFARM_ASSIGN_OR_RETURN(int64_t id, IntParam(p, "id", 1, kMaxId, 0));
           return farm->CancelJob(id);
         }});
  }

  // The label a request is counted under: a route's path, an asset, or "other" (bounded).
  std::string RouteLabel(const std::string& path) const {
    for (const auto& r : routes) {
      if (r.path == path) return path;
    }
    for (const auto& a : dashboard::Assets()) {
      if (a.path == path) return "static";
    }
    return "other";
  }

  HttpResponse Answer(const HttpRequest& req) {
    if (req.path.find("..") != std::string::npos || req.path.find('%') != std::string::npos ||
        req.path.find("//") != std::string::npos) {
      return HttpResponse::Text(
          400, "bad path " + req.path.substr(0, 200) + ": no '..', '//' or escapes in the dashboard's paths");
    }
    for (const auto& asset : dashboard::Assets()) {
      if (asset.path != req.path && !(asset.path == "/" && req.path == "/index.html")) continue;
      if (req.method != "GET") return MethodNotAllowed("GET");
      HttpResponse r;
      r.content_type = std::string(asset.content_type);
      r.body = std::string(asset.data);
      r.headers.push_back({"Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'"});
      return r;
    }
    const Route* route = nullptr;
    for (const auto& r : routes) {
      if (r.path == req.path) route = &r;
    }
    if (!route) {
      return HttpResponse::Text(
          404, "not found: " + req.path.substr(0, 200) + " (the API is under /api/, docs/dashboard.md)");
    }
    if (route->method != req.method) return MethodNotAllowed(route->method);
    auto params = service::ParseQuery(req.query);
    if (!params.ok()) return Error(params.status());
    for (const auto& [name, value] : *params) {
      if (!route->params.count(name)) {
        std::string accepted;
        for (const auto& a : route->params) accepted += (accepted.empty() ? "" : ", ") + a;
        return Error(Status::InvalidArgument("unknown parameter " + name + " for " + route->path +
                                             " (it takes: " + (accepted.empty() ? "none" : accepted) + ")"));
      }
    }
    // An expensive answer holds its slot until its bytes are written (a slow reader keeps it), so
    // at most kExpensiveAtOnce of them are in memory at once.
    std::shared_ptr<void> ticket = route->expensive ? expensive_gate->TryEnter() : nullptr;
    if (route->expensive && !ticket) {
      HttpResponse busy = Error(
          Status(StatusCode::kResourceExhausted, "the dashboard is answering " + std::to_string(kExpensiveAtOnce) +
                                                     " requests that read many trials; ask again in a second"));
      busy.headers.push_back({"Retry-After", "1"});
      return busy;
    }
    Result<Json> answer = NoThrow("answering " + route->path, [&] { return route->answer(req, *params); });
    // Invalid UTF-8 in stored text (a compiler message) is replaced, never an exception.
    HttpResponse r = answer.ok() ? HttpResponse::Json(200, answer->dump(-1, ' ', false, Json::error_handler_t::replace))
                                 : Error(answer.status());
    r.held_until_written = std::move(ticket);
    return r;
  }

  static HttpResponse MethodNotAllowed(const std::string& allowed) {
    HttpResponse r = HttpResponse::Text(405, "method not allowed: this path answers " + allowed);
    r.headers.push_back({"Allow", allowed});
    return r;
  }

  static HttpResponse Error(const Status& s) {
    return HttpResponse::Json(service::HttpStatusOf(s),
                              Json{{"error", s.message()}}.dump(-1, ' ', false, Json::error_handler_t::replace));
  }

  HttpResponse Handle(const HttpRequest& req) {
    const auto start = std::chrono::steady_clock::now();
    HttpResponse r = Answer(req);
    const std::string route = RouteLabel(req.path);
    const std::string code = std::to_string(r.status / 100) + "xx";
    requests->Add({{"route", route}, {"code", code}}).Increment();
    durations
        ->Add({{"route", route}}, prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5})
        .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return r;
  }
};

Dashboard::Dashboard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dashboard::~Dashboard() { impl_->server.reset(); }

Result<std::unique_ptr<Dashboard>> Dashboard::Start(const DashboardOptions& options) {
  if (options.records.empty()) return Status::InvalidArgument("the dashboard needs a records database (--records DB)");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  for (const auto& path : options.records) {
    // Opened once now, so a missing or foreign file is an error at start, not on the first page.
    TUNEFARM_ASSIGN_OR_RETURN(auto db, RecordsDb::Open(path, RecordsDb::Mode::kReadOnly));
    impl->pools.push_back(std::make_unique<ConnectionPool>(path));
  }
  impl->farm = std::make_unique<dashboard::FarmView>(options.tracker, options.daemon, options.token, options.tls);
  impl->requests = &prometheus::BuildCounter()
                        .Name("tunefarm_dashboard_requests_total")
                        .Help("Dashboard HTTP requests, by route and status class.")
                        .Register(*impl->registry);
  impl->durations = &prometheus::BuildHistogram()
                         .Name("tunefarm_dashboard_request_duration_seconds")
                         .Help("Time to answer a dashboard request, by route.")
                         .Register(*impl->registry);
  impl->AddRoutes();
  Impl* raw = impl.get();
  service::HttpServerOptions http;
  http.flag = "--listen";
  http.check_host = true;
  // Every answer but the gated expensive ones is quick and small: room for a burst of clients
  // without a 503 for the cheap ones (the expensive ones are told to come back at once).
  http.max_connections = 128;
  http.allowed_hosts = options.allowed_hosts;
  TUNEFARM_ASSIGN_OR_RETURN(impl->server,
                            service::HttpServer::Start(
                                options.listen, [raw](const HttpRequest& r) { return raw->Handle(r); }, http));
  return std::unique_ptr<Dashboard>(new Dashboard(std::move(impl)));
}

std::string Dashboard::address() const { return impl_->server->address(); }

std::shared_ptr<prometheus::Collectable> Dashboard::metrics() const { return impl_->registry; }

}  // namespace tunefarm::tuner
