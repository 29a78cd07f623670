/* The graph executor for C programs: load a compiled model (.tfa), set inputs, run, read outputs.
 * The C face of tunefarm/runtime/executor.h (and cuda_executor.h), for deploying on a board or a GPU
 * host without C++.
 *
 * Errors: functions that can fail return NULL or non-zero and, when `error` is not NULL, store a
 * malloc'd one-line message there (free it with tunefarm_free_string). Thread safety: one run at a
 * time per model; TunefarmSetNumThreads (kernel_abi.h) sizes the shared thread pool. */
#ifndef TUNEFARM_RUNTIME_C_API_H_
#define TUNEFARM_RUNTIME_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TunefarmModel TunefarmModel;

TunefarmModel* tunefarm_model_load(const char* artifact_path, char** error);
/* The same on a device: "cpu", "cuda" (GPU 0) or "cuda:N", for an artifact compiled for it (a CUDA
 * artifact runs on the GPU executor: CUDA graph replay, outputs copied back after each run). */
TunefarmModel* tunefarm_model_load_on(const char* artifact_path, const char* device, char** error);
void tunefarm_model_free(TunefarmModel* model);

int tunefarm_model_num_inputs(const TunefarmModel* model);
int tunefarm_model_num_outputs(const TunefarmModel* model);
/* Name of input/output i (valid while the model lives); NULL when i is out of range. */
const char* tunefarm_model_input_name(const TunefarmModel* model, int i);
const char* tunefarm_model_output_name(const TunefarmModel* model, int i);
/* Writes up to max_dims dimensions of input/output i; returns its rank, or -1 when out of range. An
 * artifact compiled over a range of sizes (docs/dynamic_shapes.md) gives an input's largest shape and
 * an output's shape in the last run. */
int tunefarm_model_input_shape(const TunefarmModel* model, int i, int64_t* dims, int max_dims);
int tunefarm_model_output_shape(const TunefarmModel* model, int i, int64_t* dims, int max_dims);

/* Copies `bytes` bytes into the input called `name` (row-major, the input's dtype). An input whose
 * dimension 0 follows a symbolic size takes the bytes of any size in its range. */
int tunefarm_model_set_input(TunefarmModel* model, const char* name, const void* data, size_t bytes, char** error);
int tunefarm_model_run(TunefarmModel* model, char** error);
/* Output i's bytes, valid until the next run; *bytes receives the size when not NULL. */
const void* tunefarm_model_output(const TunefarmModel* model, int i, size_t* bytes);

void tunefarm_free_string(char* s);

#ifdef __cplusplus
}
#endif

#endif /* TUNEFARM_RUNTIME_C_API_H_ */
