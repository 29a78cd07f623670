#include "tunefarm/runtime/c_api.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "tunefarm/runtime/cuda_executor.h"
#include "tunefarm/runtime/executor.h"

// One model on one device: the CPU executor or the GPU one (the same calls on either).
struct TunefarmModel {
  std::unique_ptr<tunefarm::runtime::Executor> cpu;
  std::unique_ptr<tunefarm::runtime::CudaExecutor> cuda;
  template <class F>
  auto With(F f) const {
    return cpu ? f(*cpu) : f(*cuda);
  }
};

namespace {

void SetError(char** error, const std::string& message) {
  if (!error) return;
  *error = static_cast<char*>(std::malloc(message.size() + 1));
  if (*error) std::memcpy(*error, message.c_str(), message.size() + 1);
}

int Shape(const std::vector<tunefarm::runtime::TensorInfo>& infos, int i, int64_t* dims, int max_dims) {
  if (i < 0 || i >= int(infos.size())) return -1;
  const auto& shape = infos[size_t(i)].shape;
  for (int d = 0; d < int(shape.size()) && d < max_dims; ++d) dims[d] = shape[size_t(d)];
  return int(shape.size());
}

}  // namespace

extern "C" {

TunefarmModel* tunefarm_model_load(const char* artifact_path, char** error) {
  return tunefarm_model_load_on(artifact_path, "cpu", error);
}

TunefarmModel* tunefarm_model_load_on(const char* artifact_path, const char* device, char** error) {
  const std::string path = artifact_path ? artifact_path : "", where = device ? device : "cpu";
  auto model = std::make_unique<TunefarmModel>();
  tunefarm::Status status;
  if (where == "cpu") {
    auto ex = tunefarm::runtime::Executor::LoadFile(path);
    if (ex.ok()) model->cpu = std::move(*ex);
    status = ex.status();
  } else if (where == "cuda" || (where.rfind("cuda:", 0) == 0 && where.size() > 5 && where.size() <= 9 &&
                                 where.find_first_not_of("0123456789", 5) == std::string::npos)) {
    tunefarm::runtime::CudaExecutorOptions options;
    if (where.size() > 5) options.ordinal = std::atoi(where.c_str() + 5);
    auto ex = tunefarm::runtime::CudaExecutor::LoadFile(path, options);
    if (ex.ok()) model->cuda = std::move(*ex);
    status = ex.status();
  } else {
    status = tunefarm::Status::InvalidArgument("unknown device '" + where + "' (cpu, cuda, cuda:N with N < 10000)");
  }
  if (!status.ok()) {
    SetError(error, status.message());
    return nullptr;
  }
  return model.release();
}

void tunefarm_model_free(TunefarmModel* model) { delete model; }

int tunefarm_model_num_inputs(const TunefarmModel* model) {
  return model->With([](const auto& ex) { return int(ex.inputs().size()); });
}
int tunefarm_model_num_outputs(const TunefarmModel* model) {
  return model->With([](const auto& ex) { return int(ex.outputs().size()); });
}

const char* tunefarm_model_input_name(const TunefarmModel* model, int i) {
  return model->With([i](const auto& ex) -> const char* {
    const auto& in = ex.inputs();
    return i >= 0 && i < int(in.size()) ? in[size_t(i)].name.c_str() : nullptr;
  });
}

const char* tunefarm_model_output_name(const TunefarmModel* model, int i) {
  return model->With([i](const auto& ex) -> const char* {
    const auto& out = ex.outputs();
    return i >= 0 && i < int(out.size()) ? out[size_t(i)].name.c_str() : nullptr;
  });
}

int tunefarm_model_input_shape(const TunefarmModel* model, int i, int64_t* dims, int max_dims) {
  return model->With([&](const auto& ex) { return Shape(ex.inputs(), i, dims, max_dims); });
}

int tunefarm_model_output_shape(const TunefarmModel* model, int i, int64_t* dims, int max_dims) {
  return model->With([&](const auto& ex) { return Shape(ex.outputs(), i, dims, max_dims); });
}

int tunefarm_model_set_input(TunefarmModel* model, const char* name, const void* data, size_t bytes, char** error) {
  tunefarm::Status s = model->cpu ? model->cpu->SetInput(name ? name : "", data, bytes)
                                  : model->cuda->SetInput(name ? name : "", data, bytes);
  if (!s.ok()) SetError(error, s.message());
  return s.ok() ? 0 : 1;
}

int tunefarm_model_run(TunefarmModel* model, char** error) {
  tunefarm::Status s = model->cpu ? model->cpu->Run() : model->cuda->Run();
  if (!s.ok()) SetError(error, s.message());
  return s.ok() ? 0 : 1;
}

const void* tunefarm_model_output(const TunefarmModel* model, int i, size_t* bytes) {
  return model->With([&](const auto& ex) -> const void* {
    const auto& out = ex.outputs();
    if (i < 0 || i >= int(out.size())) return nullptr;
    if (bytes) *bytes = size_t(out[size_t(i)].bytes());
    return ex.Output(size_t(i));
  });
}

void tunefarm_free_string(char* s) { std::free(s); }

}  // extern "C"
