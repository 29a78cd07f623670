// HttpServer against hostile clients: slowloris connections never keep a well-behaved client out,
// a request must arrive whole within its deadline, the per-client and global caps evict the
// oldest slow connection with a 503, busy handlers answer 503, the Host allow-list refuses a
// foreign name, and the server stops at once with slow clients still open. Plus the request
// parser and the Host check on their own (the fuzz target's entries).
#include "tunefarm/service/http_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/http_client.h"

namespace tunefarm::service {
namespace {

using tunefarm::testing::Http;
using tunefarm::testing::SlowClients;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::unique_ptr<HttpServer> StartOk(HttpServerOptions options = {}) {
  auto server = HttpServer::Start(
      "127.0.0.1:0", [](const HttpRequest&) { return HttpResponse::Text(200, "ok"); }, options);
  EXPECT_TRUE(server.ok()) << server.status().message();
  return server.ok() ? std::move(*server) : nullptr;
}

// Waits up to timeout_s for `slow` to have `n` answers.
std::vector<std::string> AwaitAnswers(SlowClients& slow, size_t n, double timeout_s) {
  const auto start = Clock::now();
  auto answers = slow.Answers();
  while (answers.size() < n && SecondsSince(start) < timeout_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    answers = slow.Answers();
  }
  return answers;
}

TEST(HttpServer, TwoHundredSlowClientsNeverKeepAWellBehavedOneOut) {
  auto server = StartOk();
  ASSERT_NE(server, nullptr);
  SlowClients slow(server->address(), 200, 500);
  ASSERT_EQ(slow.opened(), 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // a few drips each
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    const auto r = Http(server->address(), "/");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_LT(SecondsSince(start), 1.0);
  }
  EXPECT_TRUE(slow.Answers().empty()) << "a slow client was dropped although under every cap: " << slow.Answers()[0];
}

TEST(HttpServer, ARequestMustArriveWholeWithinItsDeadline) {
  HttpServerOptions options;
  options.request_deadline = std::chrono::milliseconds(600);
  auto server = StartOk(options);
  ASSERT_NE(server, nullptr);
  SlowClients slow(server->address(), 3, 100);
  const auto answers = AwaitAnswers(slow, 3, 5.0);
  ASSERT_EQ(answers.size(), 3u);
  for (const auto& a : answers) EXPECT_EQ(a, "HTTP/1.1 408 Request Timeout");
  EXPECT_EQ(Http(server->address(), "/").status, 200);
}

TEST(HttpServer, SlowClientsPastTheCapsEvictTheOldestWithA503) {
  HttpServerOptions options;
  options.max_pending_per_client = 4;
  auto server = StartOk(options);
  ASSERT_NE(server, nullptr);
  SlowClients first(server->address(), 4, 200);
  ASSERT_EQ(first.opened(), 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(first.Answers().empty());
  SlowClients second(server->address(), 2, 200);
  const auto evicted = AwaitAnswers(first, 2, 5.0);
  ASSERT_EQ(evicted.size(), 2u) << "the two oldest slow connections should have been evicted";
  for (const auto& a : evicted) EXPECT_EQ(a, "HTTP/1.1 503 Service Unavailable");
  // A well-behaved client gets in past the cap, evicting one more slow one.
  const auto r = Http(server->address(), "/");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(second.Answers().empty());

  HttpServerOptions global;
  global.max_pending = 3;
  auto small = StartOk(global);
  ASSERT_NE(small, nullptr);
  SlowClients many(small->address(), 5, 200);
  EXPECT_EQ(AwaitAnswers(many, 2, 5.0).size(), 2u);
  EXPECT_EQ(Http(small->address(), "/").status, 200);
}

TEST(HttpServer, BusyHandlersAnswer503AndTheWaitersStillFinish) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  HttpServerOptions options;
  options.max_connections = 1;
  auto server = HttpServer::Start(
      "127.0.0.1:0",
      [&](const HttpRequest&) {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return release; });
        return HttpResponse::Text(200, "done");
      },
      options);
  ASSERT_TRUE(server.ok()) << server.status().message();
  tunefarm::testing::HttpResult held;
  std::thread first([&] { held = Http((*server)->address(), "/"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto busy = Http((*server)->address(), "/");
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.body, "busy: 1 requests in flight\n");
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  first.join();
  EXPECT_EQ(held.status, 200);
  EXPECT_EQ(held.body, "done\n");
}

TEST(HttpServer, TheHostAllowListRefusesAForeignNameByName) {
  HttpServerOptions options;
  options.check_host = true;
  options.allowed_hosts = {"farm.example.lan"};
  auto server = StartOk(options);
  ASSERT_NE(server, nullptr);
  const std::string port = server->address().substr(server->address().rfind(':'));
  const auto evil = Http(server->address(), "/", "GET", {"Host: rebind.attacker.example" + port});
  EXPECT_EQ(evil.status, 403);
  EXPECT_NE(evil.body.find("Host \"rebind.attacker.example" + port + "\" is not allowed"), std::string::npos)
      << evil.body;
  EXPECT_NE(evil.body.find("--allow-host"), std::string::npos) << evil.body;
  for (const std::string& host :
       std::vector<std::string>{"127.0.0.1" + port, "localhost" + port, "LOCALHOST", "[::1]" + port,
                                "farm.example.lan" + port, "Farm.Example.Lan", ""}) {
    EXPECT_TRUE(HostAllowed(host, options.allowed_hosts)) << host;
  }
  for (const std::string host : {"evil.example", "localhost.evil.example:80", "127.0.0.1.nip.io", "[::1",
                                 "farm.example.lan.evil", "127.0.0.1:80@evil.example", "127.0.0.1 evil.example"}) {
    EXPECT_FALSE(HostAllowed(host, options.allowed_hosts)) << host;
  }
  // Two Host headers (issue 46, P19): the last one used to win; now neither does.
  const auto twice = Http(server->address(), "/", "GET", {"Host: evil.example", "Host: 127.0.0.1" + port});
  EXPECT_EQ(twice.status, 403) << twice.body;
  EXPECT_EQ(Http(server->address(), "/").status, 200);
}

TEST(HttpServer, StopsAtOnceWithSlowClientsOpen) {
  auto server = StartOk();
  ASSERT_NE(server, nullptr);
  SlowClients slow(server->address(), 100, 200);
  ASSERT_EQ(slow.opened(), 100);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = Clock::now();
  server.reset();
  EXPECT_LT(SecondsSince(start), 0.5);
  EXPECT_EQ(AwaitAnswers(slow, 100, 3.0).size(), 100u) << "every slow connection is closed by the stop";
}

TEST(HttpServer, TheRequestParserNamesWhatIsWrong) {
  struct Case {
    std::string bytes, error;  // error "": parses
  };
  const std::vector<Case> cases = {
      {"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n", ""},
      {"POST /p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", ""},
      {"GET / HTTP/1.1\r\nHost: x\r\n", "incomplete request"},
      {"NOT A REQUEST\r\n\r\n", "bad request: "},
      {"GET / HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n", "request headers over 8192 bytes"},
      {"POST /p HTTP/1.1\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'b'), "request body over 64 bytes"},
      {"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "bad request: "},
  };
  for (const auto& c : cases) {
    const auto r = ParseHttpRequest(c.bytes, 64);
    if (c.error.empty()) {
      EXPECT_TRUE(r.ok()) << c.bytes.substr(0, 40) << ": " << r.status().message();
    } else {
      ASSERT_FALSE(r.ok()) << c.bytes.substr(0, 40);
      EXPECT_EQ(r.status().message().rfind(c.error, 0), 0u) << r.status().message();
    }
  }
  const auto ok = ParseHttpRequest("HEAD /x?y=%20 HTTP/1.1\r\nHost: H\r\n\r\n", 64);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->method, "GET");
  EXPECT_EQ(ok->path, "/x");
  EXPECT_EQ(ok->query, "y=%20");
  EXPECT_EQ(ok->Header("host"), "H");
}

}  // namespace
}  // namespace tunefarm::service
