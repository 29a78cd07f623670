// LoadExecutor: the executor for a device's kind (graph_executor.h).
#include "tunefarm/runtime/cuda_executor.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/graph_executor.h"

namespace tunefarm::runtime {

Result<std::unique_ptr<GraphExecutor>> LoadExecutor(Artifact artifact, const Device& device) {
  switch (device.kind) {
    case Device::Kind::kCpu: {
      TUNEFARM_ASSIGN_OR_RETURN(auto ex, Executor::Load(std::move(artifact)));
      return std::unique_ptr<GraphExecutor>(std::move(ex));
    }
    case Device::Kind::kCuda: {
      CudaExecutorOptions options;
      options.ordinal = device.ordinal;
      TUNEFARM_ASSIGN_OR_RETURN(auto ex, CudaExecutor::Load(std::move(artifact), options));
      return std::unique_ptr<GraphExecutor>(std::move(ex));
    }
  }
  return Status::InvalidArgument("no executor for device " + device.ToString());
}

Result<std::unique_ptr<GraphExecutor>> LoadExecutorFile(const std::string& path, const Device& device) {
  switch (device.kind) {
    case Device::Kind::kCpu: {
      TUNEFARM_ASSIGN_OR_RETURN(auto ex, Executor::LoadFile(path));
      return std::unique_ptr<GraphExecutor>(std::move(ex));
    }
    case Device::Kind::kCuda: {
      CudaExecutorOptions options;
      options.ordinal = device.ordinal;
      TUNEFARM_ASSIGN_OR_RETURN(auto ex, CudaExecutor::LoadFile(path, options));
      return std::unique_ptr<GraphExecutor>(std::move(ex));
    }
  }
  return Status::InvalidArgument("no executor for device " + device.ToString());
}

}  // namespace tunefarm::runtime
