// The device string (tunefarm/runtime/device.h).
#include "tunefarm/runtime/device.h"

namespace tunefarm::runtime {

std::string Device::ToString() const { return kind == Kind::kCuda ? "cuda:" + std::to_string(ordinal) : "cpu"; }

Result<Device> ParseDevice(std::string_view text) {
  Device d;
  if (text == "cpu") return d;
  d.kind = Device::Kind::kCuda;
  if (text == "cuda") return d;
  const std::string_view prefix = "cuda:";
  if (text.substr(0, prefix.size()) == prefix) {
    const std::string_view digits = text.substr(prefix.size());
    // At most 4 digits: no overflow before the bound is checked.
    bool ok = !digits.empty() && digits.size() <= 4;
    int n = 0;
    for (char c : digits) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) n = n * 10 + (c - '0');
    }
    if (ok && n <= kMaxCudaOrdinal) {
      d.ordinal = n;
      return d;
    }
  }
  return Status::InvalidArgument("unknown device '" + std::string(text) +
                                 "': expected cpu, cuda or cuda:N (N from 0 to " + std::to_string(kMaxCudaOrdinal) +
                                 ")");
}

}  // namespace tunefarm::runtime
