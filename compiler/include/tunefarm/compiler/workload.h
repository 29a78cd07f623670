// Workload: what one tunable operator computes (the operator + its parameters), and which
// implementation (schedule template) computes it.
//
// The workload key is a canonical string of the operator and every parameter that changes the
// computation (shapes, strides, pads, dilation, groups, layout, dtype): target-neutral and stable
// across runs and machines. The implementation is a field of its own, never part of the key: the
// same convolution is one workload whether conv2d_nchwc (CPU), conv2d_nchw_cuda or a Winograd
// template computes it, and tasks and tuning records are keyed by (workload key, implementation).
// Fused epilogues (bias, activation, residual add) are in neither: they do not change the config
// space, so one tuning result serves every epilogue.
#ifndef TUNEFARM_COMPILER_WORKLOAD_H_
#define TUNEFARM_COMPILER_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

struct Conv2dParams {
  int64_t batch = 1, in_channels = 0, height = 0, width = 0, out_channels = 0;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;

  // 0 when the dilated kernel is larger than the padded input (floor division: C++'s truncation
  // would give 1 there).
  int64_t out_height() const {
    return OutSize(height + pad_top + pad_bottom, dilation_h * (kernel_h - 1) + 1, stride_h);
  }
  int64_t out_width() const { return OutSize(width + pad_left + pad_right, dilation_w * (kernel_w - 1) + 1, stride_w); }

 private:
  static int64_t OutSize(int64_t padded, int64_t window, int64_t stride) {
    return padded < window || stride < 1 ? 0 : (padded - window) / stride + 1;
  }
};

struct DenseParams {
  int64_t batch = 1, in_features = 0, out_features = 0;
};

// A product of two activations, batched: out[b, m, n] = sum_k a[b, m, k] * b[b, k, n] (attention's
// Q K^T and A V, with the heads and the batch folded into b).
struct BatchMatmulParams {
  int64_t batch = 1, m = 0, k = 0, n = 0;
};

// Bounds every workload keeps, so each size computed from one (output extents, FLOPs, buffer bytes)
// stays far from overflow; no real model comes near them (docs/onnx_support.md, Limits). The ONNX
// import refuses attributes past them (operators/infer_context.h) and FromKey refuses keys past them.
constexpr int64_t kMaxWindowAttribute = int64_t(1) << 16;  // kernel, stride, dilation, pad
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;   // elements of any one tensor

// The tunable operators; each names the parameter struct its workloads fill.
enum class OpKind { kConv2d, kDense, kBatchMatmul };
const char* OpKindName(OpKind op);  // "conv2d", "dense", "batch_matmul": the key's first field

struct Workload {
  OpKind op = OpKind::kConv2d;
  Conv2dParams conv;               // kConv2d
  DenseParams dense;               // kDense
  BatchMatmulParams batch_matmul;  // kBatchMatmul
  // "float32", or for an int8 workload the activations' type, "uint8" or "int8": the kernel reads
  // them in that type with int8 weights (their zero point subtracted when packed) and accumulates
  // in int32 (docs/quantization.md). A different key: float and int8 records never mix.
  std::string dtype = "float32";
  bool is_int8() const { return dtype == "uint8" || dtype == "int8"; }
  // The schedule template computing it (the template table, schedule/template_table.h): CPUs
  // conv2d_nchwc, depthwise_conv2d_nchwc, conv2d_nchwc_winograd, dense_pack, dense_nopack,
  // batch_matmul; CUDA conv2d_nchw_cuda, depthwise_conv2d_nchw_cuda, conv2d_nchw_winograd_cuda,
  // dense_cuda, dense_small_batch_cuda, batch_matmul_cuda. Empty for a workload recognized in a
  // graph before an implementation is chosen (Implementations lists them per target).
  std::string implementation;

  // Target-neutral: e.g. "conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32",
  // "batch_matmul|B12_M197_K64|N197|BMN|float32".
  std::string Key() const;
  // What tasks, records lookups and messages name: "conv2d_nchwc:" + Key(), or Key() alone
  // without an implementation.
  std::string ImplementationKey() const;
  bool is_dense() const { return op == OpKind::kDense; }
  bool is_batch_matmul() const { return op == OpKind::kBatchMatmul; }
  // Multiply-adds count as 2 FLOPs; bias and epilogue are not counted.
  double Flops() const;
  // Parses Key()'s form (implementation left empty); a key whose numbers Validate refuses is an
  // error naming the field.
  static Result<Workload> FromKey(const std::string& key);
  // Parses ImplementationKey()'s form.
  static Result<Workload> FromImplementationKey(const std::string& key);
  // Every extent at least 1 (pads at least 0), window attributes within kMaxWindowAttribute, groups
  // dividing both channel counts, and the input, weight and output within kMaxTensorElements.
  Status Validate() const;
};

// Workloads with their CPU default implementation (conv2d_nchwc or depthwise_conv2d_nchwc,
// dense_pack or dense_nopack, batch_matmul), for tools, tests and benchmarks; set `implementation`
// for another.
Workload Conv2dWorkload(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t kh, int64_t kw, int64_t stride,
                        int64_t pad, int64_t dilation = 1, int64_t groups = 1);
Workload DenseWorkload(int64_t batch, int64_t in_features, int64_t out_features, bool packed = true);
Workload BatchMatmulWorkload(int64_t batch, int64_t m, int64_t k, int64_t n);

// A task's name, as tasks, records lookups, messages and the JSON APIs write it: "IMPLEMENTATION:KEY"
// ("conv2d_nchwc:conv2d|N1_C64..."), or the key alone without an implementation. The one builder and
// the one parser of that form (neither an implementation nor a key holds a ':'); inside a process a
// task travels as a Workload, and the string only where it is stored or sent.
std::string TaskName(std::string_view implementation, std::string_view key);
struct TaskNameParts {
  std::string implementation;  // empty for a bare key
  std::string key;
};
TaskNameParts ParseTaskName(std::string_view name);

enum class Activation { kNone, kRelu, kRelu6, kClip, kPRelu, kGelu, kGeluTanh };

// What the kernel applies to the accumulator, in this order: + bias[channel], + residual (same
// shape and layout as the output), then the activation (kPRelu: v < 0 ? slope[channel] * v : v,
// the slopes an argument laid out as the bias; kGelu and kGeluTanh: ONNX Gelu's erf and tanh forms).
//
// An int8 workload's kernel subtracts input_zero_point from every input element (padding reads the
// zero point, so it contributes nothing; input_zero_point_argument: the zero point is a one-element
// argument instead, as DynamicQuantizeLinear computes it at run time; an int8 batch_matmul's second
// operand is an activation of the first's type, weight_zero_point subtracted from it) and accumulates (x -
// input_zero_point) * w in int32, adds the int32 bias, and then, when requantize.enabled, writes
//   clamp(round_half_to_even(float(acc) * scale[channel]) + zero_point, min, max)
// in uint8 (int8 when is_signed), the scales an argument laid out as the bias; otherwise the int32
// accumulator itself. A float activation becomes min and max (Relu: the zero point; Clip: its
// quantized bounds), so int8 epilogues take no float activation and no residual.
struct Requantize {
  bool enabled = false;
  bool is_signed = false;
  int32_t zero_point = 0, min = 0, max = 255;
};

// An int8 workload's fused residual add (ONNX Runtime's QLinearAdd of the requantized output q and
// an 8-bit residual r, the residual argument in residual_signed's type): the kernel saturates q to
// its type (Requantize's is_signed), then writes
//   clamp(round_half_to_even(((q - zero_point) * scale + (r - residual_zero_point) * residual_scale)
//         / sum_scale) + sum_zero_point, min, max)
// in sum_signed's type, min and max Requantize's (the activation after the add).
struct IntegerResidual {
  bool enabled = false;
  bool residual_signed = false, sum_signed = false;
  float scale = 1.0f, residual_scale = 1.0f, sum_scale = 1.0f;
  int32_t residual_zero_point = 0, sum_zero_point = 0;
};

struct Epilogue {
  bool bias = false;
  bool residual = false;
  Activation activation = Activation::kNone;
  float clip_min = 0.0f, clip_max = 6.0f;  // kClip only
  int32_t input_zero_point = 0;            // int8 workloads only
  bool input_zero_point_argument = false;  // int8 workloads only
  int32_t weight_zero_point = 0;           // int8 batch_matmul only: its second operand's
  Requantize requantize{};                 // int8 workloads only
  IntegerResidual integer_residual{};      // int8 workloads only (with residual set)
  std::string ToString() const;            // "bias+residual+relu", "none", "bias+requantize(128,128,255,u8)"
};

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_WORKLOAD_H_
