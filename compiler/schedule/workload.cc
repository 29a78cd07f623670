#include "tunefarm/compiler/workload.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace tunefarm::compiler {

const char* OpKindName(OpKind op) {
  switch (op) {
    case OpKind::kConv2d:
      return "conv2d";
    case OpKind::kDense:
      return "dense";
    case OpKind::kBatchMatmul:
      return "batch_matmul";
  }
  return "?";
}

std::string Workload::Key() const {
  char buf[256];
  if (is_batch_matmul()) {
    const BatchMatmulParams& b = batch_matmul;
    std::snprintf(buf, sizeof(buf), "%s|B%lld_M%lld_K%lld|N%lld|BMN|%s", OpKindName(op), (long long)b.batch,
                  (long long)b.m, (long long)b.k, (long long)b.n, dtype.c_str());
    return buf;
  }
  if (is_dense()) {
    std::snprintf(buf, sizeof(buf), "%s|N%lld_I%lld|O%lld|NC|%s", OpKindName(op), (long long)dense.batch,
                  (long long)dense.in_features, (long long)dense.out_features, dtype.c_str());
    return buf;
  }
  const Conv2dParams& c = conv;
  std::snprintf(buf, sizeof(buf),
                "%s|N%lld_C%lld_H%lld_W%lld|K%lld_R%lldx%lld_S%lldx%lld_P%lld_%lld_%lld_%lld_D%lldx%lld_G%lld|NCHW|%s",
                OpKindName(op), (long long)c.batch, (long long)c.in_channels, (long long)c.height, (long long)c.width,
                (long long)c.out_channels, (long long)c.kernel_h, (long long)c.kernel_w, (long long)c.stride_h,
                (long long)c.stride_w, (long long)c.pad_top, (long long)c.pad_left, (long long)c.pad_bottom,
                (long long)c.pad_right, (long long)c.dilation_h, (long long)c.dilation_w, (long long)c.groups,
                dtype.c_str());
  return buf;
}

std::string TaskName(std::string_view implementation, std::string_view key) {
  if (implementation.empty()) return std::string(key);
  return std::string(implementation) + ":" + std::string(key);
}

TaskNameParts ParseTaskName(std::string_view name) {
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos) return {"", std::string(name)};
  return {std::string(name.substr(0, colon)), std::string(name.substr(colon + 1))};
}

std::string Workload::ImplementationKey() const { return TaskName(implementation, Key()); }

double Workload::Flops() const {
  if (is_batch_matmul()) {
    return 2.0 * double(batch_matmul.batch) * double(batch_matmul.m) * double(batch_matmul.k) * double(batch_matmul.n);
  }
  if (is_dense()) {
    return 2.0 * double(dense.batch) * double(dense.in_features) * double(dense.out_features);
  }
  const Conv2dParams& c = conv;
  // Exact: Validate() requires groups to divide the input channels.
  const int64_t channels_per_group = c.in_channels / c.groups;
  return 2.0 * double(c.batch) * double(c.out_channels) * double(c.out_height()) * double(c.out_width()) *
         double(channels_per_group) * double(c.kernel_h) * double(c.kernel_w);
}

Result<Workload> Workload::FromKey(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '|');) parts.push_back(p);
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("malformed workload key '" + key + "': " + why);
  };
  if (parts.size() != 5) return bad("expected 5 '|'-separated fields");
  Workload w;
  const OpKind kOps[] = {OpKind::kConv2d, OpKind::kDense, OpKind::kBatchMatmul};
  const OpKind* op =
      std::find_if(std::begin(kOps), std::end(kOps), [&](OpKind k) { return parts[0] == OpKindName(k); });
  if (op == std::end(kOps)) return bad("unknown operator '" + parts[0] + "' (conv2d, dense, batch_matmul)");
  w.op = *op;
  w.dtype = parts[4];
  long long a[16] = {0};  // NOLINT(google-runtime-int): what sscanf's %lld writes, the format Key() prints
  if (w.is_batch_matmul()) {
    if (std::sscanf(parts[1].c_str(), "B%lld_M%lld_K%lld", &a[0], &a[1], &a[2]) != 3 ||
        std::sscanf(parts[2].c_str(), "N%lld", &a[3]) != 1) {
      return bad("batch_matmul shape fields");
    }
    w.batch_matmul = {a[0], a[1], a[2], a[3]};
    if (Status s = w.Validate(); !s.ok()) return bad(s.message());
    if (w.Key() != key) return bad("not in the canonical form '" + w.Key() + "'");
    return w;
  }
  if (w.is_dense()) {
    if (std::sscanf(parts[1].c_str(), "N%lld_I%lld", &a[0], &a[1]) != 2 ||
        std::sscanf(parts[2].c_str(), "O%lld", &a[2]) != 1) {
      return bad("dense shape fields");
    }
    w.dense = {a[0], a[1], a[2]};
    if (Status s = w.Validate(); !s.ok()) return bad(s.message());
    if (w.Key() != key) return bad("not in the canonical form '" + w.Key() + "'");
    return w;
  }
  if (std::sscanf(parts[1].c_str(), "N%lld_C%lld_H%lld_W%lld", &a[0], &a[1], &a[2], &a[3]) != 4 ||
      std::sscanf(parts[2].c_str(), "K%lld_R%lldx%lld_S%lldx%lld_P%lld_%lld_%lld_%lld_D%lldx%lld_G%lld", &a[4], &a[5],
                  &a[6], &a[7], &a[8], &a[9], &a[10], &a[11], &a[12], &a[13], &a[14], &a[15]) != 12) {
    return bad("conv shape fields");
  }
  Conv2dParams& c = w.conv;
  c.batch = a[0];
  c.in_channels = a[1];
  c.height = a[2];
  c.width = a[3];
  c.out_channels = a[4];
  c.kernel_h = a[5];
  c.kernel_w = a[6];
  c.stride_h = a[7];
  c.stride_w = a[8];
  c.pad_top = a[9];
  c.pad_left = a[10];
  c.pad_bottom = a[11];
  c.pad_right = a[12];
  c.dilation_h = a[13];
  c.dilation_w = a[14];
  c.groups = a[15];
  if (Status s = w.Validate(); !s.ok()) return bad(s.message());
  // sscanf skips spaces, takes '+' and leading zeros and ignores what follows a number: only the
  // form Key() writes is a key, so one workload has one key (records group and match by it).
  if (w.Key() != key) return bad("not in the canonical form '" + w.Key() + "'");
  return w;
}

Result<Workload> Workload::FromImplementationKey(const std::string& key) {
  TaskNameParts parts = ParseTaskName(key);
  TUNEFARM_ASSIGN_OR_RETURN(Workload w, FromKey(parts.key));
  if (parts.implementation.empty() && parts.key != key) {
    return Status::InvalidArgument("malformed workload key '" + key + "': empty implementation");
  }
  w.implementation = std::move(parts.implementation);
  return w;
}

namespace {

// a * b * ..., or -1 once the product passes kMaxTensorElements (each factor is at least 1).
int64_t BoundedProduct(std::initializer_list<int64_t> factors) {
  int64_t n = 1;
  for (int64_t f : factors) {
    if (f > kMaxTensorElements / n) return -1;
    n *= f;
  }
  return n;
}

struct Field {
  const char* name;
  int64_t value, min, max;
};

Status CheckFields(std::initializer_list<Field> fields) {
  for (const Field& f : fields) {
    if (f.value < f.min || f.value > f.max) {
      return Status::InvalidArgument(std::string(f.name) + " " + std::to_string(f.value) + " is outside [" +
                                     std::to_string(f.min) + ", " + std::to_string(f.max) + "]");
    }
  }
  return Status::OK();
}

}  // namespace

Status Workload::Validate() const {
  if (is_batch_matmul()) {
    const BatchMatmulParams& b = batch_matmul;
    TUNEFARM_RETURN_IF_ERROR(CheckFields({{"batch", b.batch, 1, kMaxTensorElements},
                                          {"m", b.m, 1, kMaxTensorElements},
                                          {"k", b.k, 1, kMaxTensorElements},
                                          {"n", b.n, 1, kMaxTensorElements}}));
    if (BoundedProduct({b.batch, b.m, b.k}) < 0 || BoundedProduct({b.batch, b.k, b.n}) < 0 ||
        BoundedProduct({b.batch, b.m, b.n}) < 0) {
      return Status::InvalidArgument("a tensor would have more than " + std::to_string(kMaxTensorElements) +
                                     " elements");
    }
    return Status::OK();
  }
  TUNEFARM_RETURN_IF_ERROR(is_dense() ? CheckFields({{"batch", dense.batch, 1, kMaxTensorElements},
                                                     {"in_features", dense.in_features, 1, kMaxTensorElements},
                                                     {"out_features", dense.out_features, 1, kMaxTensorElements}})
                                      : CheckFields({{"batch", conv.batch, 1, kMaxTensorElements},
                                                     {"in_channels", conv.in_channels, 1, kMaxTensorElements},
                                                     {"height", conv.height, 1, kMaxTensorElements},
                                                     {"width", conv.width, 1, kMaxTensorElements},
                                                     {"out_channels", conv.out_channels, 1, kMaxTensorElements},
                                                     {"kernel_h", conv.kernel_h, 1, kMaxWindowAttribute},
                                                     {"kernel_w", conv.kernel_w, 1, kMaxWindowAttribute},
                                                     {"stride_h", conv.stride_h, 1, kMaxWindowAttribute},
                                                     {"stride_w", conv.stride_w, 1, kMaxWindowAttribute},
                                                     {"pad_top", conv.pad_top, 0, kMaxWindowAttribute},
                                                     {"pad_left", conv.pad_left, 0, kMaxWindowAttribute},
                                                     {"pad_bottom", conv.pad_bottom, 0, kMaxWindowAttribute},
                                                     {"pad_right", conv.pad_right, 0, kMaxWindowAttribute},
                                                     {"dilation_h", conv.dilation_h, 1, kMaxWindowAttribute},
                                                     {"dilation_w", conv.dilation_w, 1, kMaxWindowAttribute},
                                                     {"groups", conv.groups, 1, kMaxTensorElements}}));
  int64_t input = 0, weight = 0, output = 0;
  if (is_dense()) {
    input = BoundedProduct({dense.batch, dense.in_features});
    weight = BoundedProduct({dense.in_features, dense.out_features});
    output = BoundedProduct({dense.batch, dense.out_features});
  } else {
    const Conv2dParams& c = conv;
    if (c.in_channels % c.groups != 0 || c.out_channels % c.groups != 0) {
      return Status::InvalidArgument("groups " + std::to_string(c.groups) + " must divide both channel counts (" +
                                     std::to_string(c.in_channels) + " in, " + std::to_string(c.out_channels) +
                                     " out)");
    }
    // Extents and window attributes are within bounds above, so these sums cannot overflow.
    input = BoundedProduct({c.batch, c.in_channels, c.height, c.width});
    weight = BoundedProduct({c.out_channels, c.in_channels / c.groups, c.kernel_h, c.kernel_w});
    output = c.out_height() < 1 || c.out_width() < 1
                 ? 0
                 : BoundedProduct({c.batch, c.out_channels, c.out_height(), c.out_width()});
    if (output == 0) return Status::InvalidArgument("the window is larger than the padded input (no output)");
  }
  if (input < 0 || weight < 0 || output < 0) {
    return Status::InvalidArgument("a tensor would have more than " + std::to_string(kMaxTensorElements) + " elements");
  }
  return Status::OK();
}

Workload Conv2dWorkload(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t kh, int64_t kw, int64_t stride,
                        int64_t pad, int64_t dilation, int64_t groups) {
  Workload wl;
  bool depthwise = groups > 1 && groups == c && k == c;
  wl.op = OpKind::kConv2d;
  wl.implementation = depthwise ? "depthwise_conv2d_nchwc" : "conv2d_nchwc";
  wl.conv = {n, c, h, w, k, kh, kw, stride, stride, pad, pad, pad, pad, dilation, dilation, groups};
  return wl;
}

Workload DenseWorkload(int64_t batch, int64_t in_features, int64_t out_features, bool packed) {
  Workload wl;
  wl.op = OpKind::kDense;
  wl.implementation = packed ? "dense_pack" : "dense_nopack";
  wl.dense = {batch, in_features, out_features};
  return wl;
}

Workload BatchMatmulWorkload(int64_t batch, int64_t m, int64_t k, int64_t n) {
  Workload wl;
  wl.op = OpKind::kBatchMatmul;
  wl.implementation = "batch_matmul";
  wl.batch_matmul = {batch, m, k, n};
  return wl;
}

std::string Epilogue::ToString() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : "+") + part; };
  if (bias) add("bias");
  if (residual) add("residual");
  switch (activation) {
    case Activation::kNone:
      break;
    case Activation::kRelu:
      add("relu");
      break;
    case Activation::kRelu6:
      add("relu6");
      break;
    case Activation::kClip:
      add("clip(" + std::to_string(clip_min) + "," + std::to_string(clip_max) + ")");
      break;
    case Activation::kPRelu:
      add("prelu");
      break;
    case Activation::kGelu:
      add("gelu");
      break;
    case Activation::kGeluTanh:
      add("gelu_tanh");
      break;
  }
  // The zero points and bounds are compiled into the kernel: two epilogues differing in them are
  // two kernels.
  if (input_zero_point_argument) {
    add("input_zero_point(argument)");
  } else if (input_zero_point != 0) {
    add("input_zero_point(" + std::to_string(input_zero_point) + ")");
  }
  if (weight_zero_point != 0) add("weight_zero_point(" + std::to_string(weight_zero_point) + ")");
  if (integer_residual.enabled) {
    const IntegerResidual& r = integer_residual;
    add("residual_sum(" + std::to_string(r.scale) + "," + std::to_string(r.residual_scale) + "," +
        std::to_string(r.residual_zero_point) + "," + std::to_string(r.sum_scale) + "," +
        std::to_string(r.sum_zero_point) + (r.residual_signed ? ",s8" : ",u8") + (r.sum_signed ? ",s8)" : ",u8)"));
  }
  if (requantize.enabled) {
    add("requantize(" + std::to_string(requantize.zero_point) + "," + std::to_string(requantize.min) + "," +
        std::to_string(requantize.max) + (requantize.is_signed ? ",s8)" : ",u8)"));
  }
  return s.empty() ? "none" : s;
}

}  // namespace tunefarm::compiler
