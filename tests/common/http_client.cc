#include "common/http_client.h"

#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>
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
  std::string request = method + " " + target + " HTTP/1.0\r\nHost: " + address + "\r\n";
  for (const auto& h : extra_headers) request += h + "\r\n";
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
