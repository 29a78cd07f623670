// Device: where an artifact runs or a server measures -- "cpu", or "cuda[:N]" (GPU N, default 0).
// The one parser of that string: `tunefarm run --device`, `rpc_server --device` and the C API's
// tunefarm_model_load_on all read devices through ParseDevice, so they accept the same forms
// within the same bounds and refuse the rest with the same message.
#ifndef TUNEFARM_RUNTIME_DEVICE_H_
#define TUNEFARM_RUNTIME_DEVICE_H_

#include <string>
#include <string_view>

#include "tunefarm/runtime/result.h"

namespace tunefarm::runtime {

struct Device {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  int ordinal = 0;  // kCuda: the GPU's index among the visible ones

  // "cpu", "cuda:N": ParseDevice(ToString()) gives back an equal device.
  std::string ToString() const;
};

// The highest GPU index a device string may name.
constexpr int kMaxCudaOrdinal = 1023;

// "cpu", "cuda" (GPU 0) or "cuda:N" with N a decimal in [0, kMaxCudaOrdinal]; an InvalidArgument
// naming the text and the accepted forms otherwise.
Result<Device> ParseDevice(std::string_view text);

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_DEVICE_H_
