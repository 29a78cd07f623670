#include "tunefarm/runtime/c_api.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "tunefarm/runtime/device.h"
#include "tunefarm/runtime/graph_executor.h"

// One model on one device, through the executor interface (the same calls on any device).
struct TunefarmModel {
  std::unique_ptr<tunefarm::runtime::GraphExecutor> ex;
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
  auto parsed = tunefarm::runtime::ParseDevice(where);
  if (!parsed.ok()) {
    status = parsed.status();
  } else {
    auto ex = tunefarm::runtime::LoadExecutorFile(path, *parsed);
    if (ex.ok()) model->ex = std::move(*ex);
    status = ex.status();
  }
  if (!status.ok()) {
    SetError(error, status.message());
    return nullptr;
  }
  return model.release();
}

void tunefarm_model_free(TunefarmModel* model) { delete model; }

int tunefarm_model_num_inputs(const TunefarmModel* model) { return int(model->ex->inputs().size()); }
int tunefarm_model_num_outputs(const TunefarmModel* model) { return int(model->ex->outputs().size()); }

const char* tunefarm_model_input_name(const TunefarmModel* model, int i) {
  const auto& in = model->ex->inputs();
  return i >= 0 && i < int(in.size()) ? in[size_t(i)].name.c_str() : nullptr;
}

const char* tunefarm_model_output_name(const TunefarmModel* model, int i) {
  const auto& out = model->ex->outputs();
  return i >= 0 && i < int(out.size()) ? out[size_t(i)].name.c_str() : nullptr;
}

int tunefarm_model_input_shape(const TunefarmModel* model, int i, int64_t* dims, int max_dims) {
  return Shape(model->ex->inputs(), i, dims, max_dims);
}

int tunefarm_model_output_shape(const TunefarmModel* model, int i, int64_t* dims, int max_dims) {
  return Shape(model->ex->outputs(), i, dims, max_dims);
}

int tunefarm_model_set_input(TunefarmModel* model, const char* name, const void* data, size_t bytes, char** error) {
  tunefarm::Status s = model->ex->SetInput(std::string(name ? name : ""), data, bytes);
  if (!s.ok()) SetError(error, s.message());
  return s.ok() ? 0 : 1;
}

int tunefarm_model_run(TunefarmModel* model, char** error) {
  tunefarm::Status s = model->ex->Run();
  if (!s.ok()) SetError(error, s.message());
  return s.ok() ? 0 : 1;
}

const void* tunefarm_model_output(const TunefarmModel* model, int i, size_t* bytes) {
  const auto& out = model->ex->outputs();
  if (i < 0 || i >= int(out.size())) return nullptr;
  if (bytes) *bytes = size_t(out[size_t(i)].bytes());
  return model->ex->Output(size_t(i));
}

void tunefarm_free_string(char* s) { std::free(s); }

}  // extern "C"
