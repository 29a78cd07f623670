#include "tunefarm/farm_net/flags.h"

#include <cctype>

namespace tunefarm::farm_net {
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
  const std::string example = " (e.g. 127.0.0.1:9190 for this machine only, 0.0.0.0:9190 for every interface; port 0 picks a free port)";
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": expected HOST:PORT" + example);
  }
  std::string_view host = text.substr(0, colon), port_text = text.substr(colon + 1);
  ListenAddress out;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (!ValidIpv6(host)) return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": " + Quote(host) + " is not an IPv6 address");
  } else if (host.empty()) {
    return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": the host is missing" + example);
  } else if (!ValidHostName(host)) {
    return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": " + Quote(host) +
                                   " is not a host name or address (IPv6 goes in brackets: [::1]:9190)");
  }
  auto port = ParseIntFlag(std::string(flag) + " port", port_text, 0, 65535);
  if (!port.ok()) return Status::InvalidArgument(std::string(flag) + " " + Quote(text) + ": the port must be a number in 0..65535");
  out.host = std::string(host);
  out.port = int(*port);
  out.wildcard = out.host == "0.0.0.0" || out.host == "::" || out.host == "0:0:0:0:0:0:0:0";
  return out;
}

Result<int64_t> ParseIntFlag(std::string_view flag, std::string_view value, int64_t min, int64_t max) {
  const std::string range = " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  size_t i = 0;
  bool negative = false;
  if (i < value.size() && (value[i] == '-' || value[i] == '+')) negative = value[i++] == '-';
  if (i == value.size()) return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": expected an integer" + range);
  // Accumulate negatively so INT64_MIN parses; stop at the first non-digit or overflow.
  int64_t acc = 0;
  for (; i < value.size(); ++i) {
    const char c = value[i];
    if (c < '0' || c > '9') return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": expected an integer" + range);
    if (acc < (INT64_MIN + (c - '0')) / 10) return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": out of range, expected" + range);
    acc = acc * 10 - (c - '0');
  }
  if (!negative && acc == INT64_MIN) return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": out of range, expected" + range);
  const int64_t v = negative ? acc : -acc;
  if (v < min || v > max) return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": out of range, expected" + range);
  return v;
}

void FlagSet::String(std::string name, std::string* out, bool required) {
  flags_.push_back({std::move(name), required, false, [out](std::string_view v) {
                      *out = std::string(v);
                      return Status::OK();
                    }});
}

void FlagSet::Int(std::string name, int64_t* out, int64_t min, int64_t max) {
  const std::string flag = name;
  flags_.push_back({std::move(name), false, false, [out, flag, min, max](std::string_view v) {
                      TUNEFARM_ASSIGN_OR_RETURN(*out, ParseIntFlag(flag, v, min, max));
                      return Status::OK();
                    }});
}

void FlagSet::Int(std::string name, int* out, int min, int max) {
  const std::string flag = name;
  flags_.push_back({std::move(name), false, false, [out, flag, min, max](std::string_view v) {
                      TUNEFARM_ASSIGN_OR_RETURN(int64_t parsed, ParseIntFlag(flag, v, min, max));
                      *out = int(parsed);
                      return Status::OK();
                    }});
}

void FlagSet::Listen(std::string name, ListenAddress* out, bool required) {
  const std::string flag = name;
  flags_.push_back({std::move(name), required, false, [out, flag](std::string_view v) {
                      TUNEFARM_ASSIGN_OR_RETURN(*out, ParseListenAddress(v, flag));
                      return Status::OK();
                    }});
}

Status FlagSet::Parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view name = argv[i];
    if (name == "--help" || name == "-h") {
      help_ = true;
      return Status::OK();
    }
    Flag* flag = nullptr;
    for (Flag& f : flags_) flag = f.name == name ? &f : flag;
    if (!flag) return Status::InvalidArgument("unknown flag " + Quote(name));
    if (i + 1 >= argc) return Status::InvalidArgument(std::string(name) + " needs a value");
    TUNEFARM_RETURN_IF_ERROR(flag->set(argv[++i]));
    flag->seen = true;
  }
  for (const Flag& f : flags_) {
    if (f.required && !f.seen) return Status::InvalidArgument(f.name + " is required");
  }
  return Status::OK();
}

void AddCommonDaemonFlags(FlagSet& flags, CommonDaemonFlags* out) {
  flags.Listen("--listen", &out->listen);
  flags.String("--token-file", &out->token_file);
  flags.String("--tls-cert", &out->tls_cert);
  flags.String("--tls-key", &out->tls_key);
  flags.String("--tls-ca", &out->tls_ca);
}

}  // namespace tunefarm::farm_net
