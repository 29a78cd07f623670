#include "tunefarm/service/server.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpcpp/health_check_service_interface.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <thread>

#include "tunefarm/runtime/mutex.h"

namespace tunefarm::service {

class TokenGuard {
 public:
  TokenGuard(std::string name, const std::string& token) : name_(std::move(name)), expected_("Bearer " + token) {
    delayer_ = std::thread([this] { DelayLoop(); });
  }
  ~TokenGuard() {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
    }
    cv_.SignalAll();
    delayer_.join();
  }

  // The core auth metadata processor: called on each call's headers, before its message is read.
  static void Process(void* state, grpc_auth_context*, const grpc_metadata* md, size_t num_md,
                      grpc_process_auth_metadata_done_cb done, void* user_data) {
    static_cast<TokenGuard*>(state)->Check(md, num_md, done, user_data);
  }

  int64_t refused() const { return refused_.load(); }

  // Answers every held-back refusal now (before the server shuts down).
  void Flush() EXCLUDES(mu_) {
    std::deque<Pending> pending;
    {
      MutexLock lock(&mu_);
      pending.swap(pending_);
    }
    for (const Pending& p : pending) {
      p.done(p.user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_UNAUTHENTICATED, "missing or wrong farm token");
    }
  }

 private:
  struct Pending {
    std::chrono::steady_clock::time_point at;
    grpc_process_auth_metadata_done_cb done;
    void* user_data;
  };

  static bool Equals(const grpc_slice& slice, std::string_view s) {
    return GRPC_SLICE_LENGTH(slice) == s.size() && std::equal(s.begin(), s.end(), GRPC_SLICE_START_PTR(slice));
  }

  void Check(const grpc_metadata* md, size_t num_md, grpc_process_auth_metadata_done_cb done, void* user_data)
      EXCLUDES(mu_) {
    const grpc_slice* auth = nullptr;
    bool health = false;
    for (size_t i = 0; i < num_md; ++i) {
      if (Equals(md[i].key, "authorization")) auth = &md[i].value;
      if (Equals(md[i].key, ":path")) {
        const std::string_view prefix = "/grpc.health.v1.Health/";
        health = GRPC_SLICE_LENGTH(md[i].value) > prefix.size() &&
                 std::equal(prefix.begin(), prefix.end(), GRPC_SLICE_START_PTR(md[i].value));
      }
    }
    if (health || (auth && ConstantTimeEquals(*auth))) {
      done(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_OK, nullptr);
      return;
    }
    refused_.fetch_add(1);
    const char* why = auth ? "wrong token" : "no token";
    const auto now = std::chrono::steady_clock::now();
    bool delay = false;
    {
      MutexLock lock(&mu_);
      if (now - window_start_ >= std::chrono::seconds(1)) {
        if (suppressed_ > 0) {
          std::fprintf(stderr, "%s: refused %lld more calls without a valid token in the last second\n", name_.c_str(),
                       static_cast<long long>(suppressed_));
        }
        window_start_ = now;
        in_window_ = 0;
        suppressed_ = 0;
      }
      if (++in_window_ == 1) {
        std::fprintf(stderr, "%s: refused a call: %s (further refusals this second are counted, not logged)\n",
                     name_.c_str(), why);
      } else {
        ++suppressed_;
      }
      // Over the budget, refusals wait (the call holds no request body: it was never read).
      if (in_window_ > kRefusalBudgetPerSecond && pending_.size() < 4096) {
        pending_.push_back({now + std::chrono::milliseconds(kRefusalDelayMs), done, user_data});
        delay = true;
      }
    }
    if (delay) {
      cv_.SignalAll();
      return;
    }
    done(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_UNAUTHENTICATED, "missing or wrong farm token");
  }

  bool ConstantTimeEquals(const grpc_slice& value) const {
    if (GRPC_SLICE_LENGTH(value) != expected_.size()) return false;
    unsigned char diff = 0;
    const uint8_t* p = GRPC_SLICE_START_PTR(value);
    for (size_t i = 0; i < expected_.size(); ++i) diff |= static_cast<unsigned char>(p[i] ^ uint8_t(expected_[i]));
    return diff == 0;
  }

  void DelayLoop() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (true) {
      if (pending_.empty()) {
        if (stopping_) return;
        cv_.Wait(&mu_);
        continue;
      }
      if (!stopping_ && std::chrono::steady_clock::now() < pending_.front().at) {
        // A copy: Flush() may free the front entry while this waits (the wait reads its deadline after).
        const auto at = pending_.front().at;
        cv_.WaitUntil(&mu_, at);
        continue;
      }
      Pending p = pending_.front();
      pending_.pop_front();
      lock.Unlock();
      p.done(p.user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_UNAUTHENTICATED, "missing or wrong farm token");
      lock.Lock();
    }
  }

  const std::string name_, expected_;
  std::atomic<int64_t> refused_{0};
  Mutex mu_;
  CondVar cv_;
  std::chrono::steady_clock::time_point window_start_ GUARDED_BY(mu_){};
  int64_t in_window_ GUARDED_BY(mu_) = 0;
  int64_t suppressed_ GUARDED_BY(mu_) = 0;
  std::deque<Pending> pending_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread delayer_;
};

namespace {

// Server credentials whose core credentials carry TokenGuard as the auth metadata processor.
// grpc::InsecureServerCredentials() cannot take a processor (it asserts), so the port is added
// with core credentials made here: insecure ones or TLS ones requiring a client certificate.
class GuardedServerCredentials final : public grpc::ServerCredentials {
 public:
  GuardedServerCredentials(TlsFiles tls, std::shared_ptr<TokenGuard> guard)
      : tls_(std::move(tls)), guard_(std::move(guard)) {}
  void SetAuthMetadataProcessor(const std::shared_ptr<grpc::AuthMetadataProcessor>&) override {}

 private:
  int AddPortToServer(const std::string& addr, grpc_server* server) override {
    grpc_server_credentials* creds = nullptr;
    if (tls_.enabled()) {
      grpc_ssl_pem_key_cert_pair pair{tls_.key.c_str(), tls_.cert.c_str()};
      creds = grpc_ssl_server_credentials_create_ex(
          tls_.ca.c_str(), &pair, 1, GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY, nullptr);
    } else {
      creds = grpc_insecure_server_credentials_create();
    }
    grpc_server_credentials_set_auth_metadata_processor(creds, {&TokenGuard::Process, nullptr, guard_.get()});
    const int port = grpc_server_add_http2_port(server, addr.c_str(), creds);
    grpc_server_credentials_release(creds);
    return port;
  }

  TlsFiles tls_;
  std::shared_ptr<TokenGuard> guard_;
};

}  // namespace

int64_t FarmServer::refused_calls() const { return guard ? guard->refused() : 0; }

void FarmServer::Shutdown(int64_t deadline_ms) {
  if (guard) guard->Flush();
  if (server) server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
}

Result<FarmServer> StartFarmServer(const FarmServerOptions& options, const std::vector<FarmService>& services) {
  FarmServer out;
  out.guard = std::make_shared<TokenGuard>(options.name, options.token);
  const std::string listen = options.listen.ToString();
  if (options.listen.wildcard) {
    std::fprintf(stderr,
                 "warning: %s listens on every interface (%s): any host that reaches this port can call it; "
                 "keep the token secret, prefer --tls-cert/--tls-key/--tls-ca on shared networks\n",
                 options.name.c_str(), listen.c_str());
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, std::make_shared<GuardedServerCredentials>(options.tls, out.guard), &port);
  builder.SetMaxReceiveMessageSize(options.max_request_bytes);
  // gRPC listens with SO_REUSEPORT by default: a second server on a port in use would start and
  // share its connections, and the two would take turns registering in the tracker. One per port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (const FarmService& s : services) builder.RegisterService(s.service);
  out.server = builder.BuildAndStart();
  if (!out.server || port == 0) {
    return Status::IOError("cannot listen on " + listen + " (is the address in use, by another " + options.name +
                           " or another program?)");
  }
  if (auto* health = out.server->GetHealthCheckService()) {
    health->SetServingStatus("", true);
    for (const FarmService& s : services) health->SetServingStatus(s.name, true);
  }
  const std::string host =
      options.listen.host.find(':') != std::string::npos ? "[" + options.listen.host + "]" : options.listen.host;
  out.address = host + ":" + std::to_string(port);
  std::printf("%s listening on %s\n", options.name.c_str(), out.address.c_str());
  std::fflush(stdout);
  return out;
}

}  // namespace tunefarm::service
