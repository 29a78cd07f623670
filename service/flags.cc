#include "tunefarm/service/flags.h"

#include <cctype>

#include "tunefarm/command_line/command_line.h"

namespace tunefarm::service {
namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

bool ValidHostName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (char c : host) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) return false;
  }
  return true;
}

bool ValidIpv6(std::string_view host) {
  if (host.empty() || host.size() > 45) return false;
  for (char c : host) {
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
  }
  return host.find(':') != std::string_view::npos;
}

}  // namespace

std::string ListenAddress::ToString() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

Result<ListenAddress> ParseListenAddress(std::string_view text, std::string_view flag) {
  const std::string example =
      " (e.g. 127.0.0.1:9190 for this machine only, 0.0.0.0:9190 for every interface; port 0 picks a free port)";
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": expected HOST:PORT" + example);
  }
  std::string_view host = text.substr(0, colon), port_text = text.substr(colon + 1);
  ListenAddress out;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (!ValidIpv6(host)) {
      return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": " + Quote(host) +
                                     " is not an IPv6 address");
    }
  } else if (host.empty()) {
    return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": the host is missing" + example);
  } else if (!ValidHostName(host)) {
    return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": " + Quote(host) +
                                   " is not a host name or address (IPv6 goes in brackets: [::1]:9190)");
  }
  auto port = ParseIntFlag(std::string(flag) + " port", port_text, 0, 65535);
  if (!port.ok())
    return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": the port must be a number in 0..65535");
  out.host = std::string(host);
  out.port = int(*port);
  out.wildcard = out.host == "0.0.0.0" || out.host == "::" || out.host == "0:0:0:0:0:0:0:0";
  return out;
}

CLI::Option* AddListenFlag(CLI::App& app, const std::string& name, ListenAddress* out, std::string help,
                           bool required) {
  return AddCheckedFlag(
             app, name,
             [out, name](const std::string& value) -> Status {
               TUNEFARM_ASSIGN_OR_RETURN(*out, ParseListenAddress(value, name));
               return Status::OK();
             },
             std::move(help), "HOST:PORT")
      ->required(required);
}

void AddCommonDaemonFlags(CLI::App& app, CommonDaemonFlags* out) {
  AddListenFlag(app, "--listen", &out->listen,
                "where to serve: 127.0.0.1:9190 for this machine only, 0.0.0.0:9190 for every interface; port 0 picks "
                "a free port");
  app.add_option("--token-file", out->token_file, "the farm token (else $TUNEFARM_TOKEN); at least 16 characters")
      ->type_name("PATH");
  app.add_option("--tls-cert", out->tls_cert, "this process's certificate; with --tls-key and --tls-ca: mutual TLS")
      ->type_name("PEM");
  app.add_option("--tls-key", out->tls_key, "the certificate's private key")->type_name("PEM");
  app.add_option("--tls-ca", out->tls_ca, "the CA whose certificates peers must present")->type_name("PEM");
}

}  // namespace tunefarm::service
