#include "common/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>

namespace tunefarm::testing {

HttpResult Http(const std::string& address, const std::string& target, const std::string& method,
                const std::vector<std::string>& extra_headers) {
  using tcp = boost::asio::ip::tcp;
  HttpResult r;
  boost::asio::io_context io;
  tcp::socket socket(io);
  const size_t colon = address.rfind(':');
  boost::system::error_code ec;
  socket.connect(tcp::endpoint(boost::asio::ip::make_address(address.substr(0, colon)),
                               static_cast<unsigned short>(std::stoi(address.substr(colon + 1)))),
                 ec);
  if (ec) {
    r.body = ec.message();
    return r;
  }
  std::string request = method + " " + target + " HTTP/1.0\r\n";
  bool has_host = false;
  for (const auto& h : extra_headers) {
    request += h + "\r\n";
    has_host = has_host || h.rfind("Host:", 0) == 0;
  }
  if (!has_host) request += "Host: " + address + "\r\n";
  request += "\r\n";
  boost::asio::write(socket, boost::asio::buffer(request), ec);
  if (ec) {
    r.body = ec.message();
    return r;
  }
  std::string response;
  boost::asio::read(socket, boost::asio::dynamic_buffer(response), ec);  // until the server closes
  if (ec && ec != boost::asio::error::eof) {
    r.body = ec.message();
    return r;
  }
  // "HTTP/1.1 200 OK\r\n...headers...\r\n\r\nbody"
  const size_t space = response.find(' '), end = response.find("\r\n\r\n");
  if (space == std::string::npos || end == std::string::npos) {
    r.body = "malformed response: " + response;
    return r;
  }
  r.status = std::atoi(response.c_str() + space + 1);
  r.headers = response.substr(0, end);
  r.body = response.substr(end + 4);
  return r;
}

SlowClients::SlowClients(const std::string& address, int count, int drip_ms) : drip_ms_(drip_ms) {
  const size_t colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  const std::string first = "GET / HTTP/1.1\r\nHost: " + address + "\r\n";
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        send(fd, first.data(), first.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(first.size())) {
      close(fd);
      break;
    }
    fds_.push_back(fd);
  }
  answers_.assign(fds_.size(), "");
  thread_ = std::thread([this] { Drip(); });
}

SlowClients::~SlowClients() {
  stop_ = true;
  thread_.join();
  for (int fd : fds_) close(fd);
}

void SlowClients::Drip() {
  while (!stop_) {
    {
      MutexLock lock(&mu_);
      for (size_t i = 0; i < fds_.size(); ++i) {
        if (!answers_[i].empty()) continue;
        char buf[256];
        const ssize_t got = recv(fds_[i], buf, sizeof(buf), MSG_DONTWAIT);
        if (got > 0) {
          const std::string text(buf, static_cast<size_t>(got));
          answers_[i] = text.substr(0, text.find("\r\n"));
          continue;
        }
        if (got == 0) {
          answers_[i] = "(closed)";
          continue;
        }
        send(fds_[i], "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);  // one byte of a header name that never ends
      }
    }
    for (int waited = 0; waited < drip_ms_ && !stop_; waited += 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<std::string> SlowClients::Answers() {
  MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& a : answers_) {
    if (!a.empty()) out.push_back(a);
  }
  return out;
}

std::pair<int, std::string> Promtool(const std::string& text) {
  const std::string path = "/tmp/tunefarm_promtool_" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << text;
  FILE* p = popen(("promtool check metrics < " + path + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (p && fgets(buf, sizeof(buf), p)) out += buf;
  const int status = p ? pclose(p) : -1;
  std::remove(path.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace tunefarm::testing
