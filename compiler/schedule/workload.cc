#include "tunefarm/compiler/workload.h"

#include <cstdio>
#include <sstream>
#include <vector>

namespace tunefarm::compiler {

namespace {

// Every template's operator family, in one place: the key's shape fields follow the family.
enum class Family { kUnknown, kConv2d, kDense };
Family FamilyOf(const std::string& template_name) {
  static const std::pair<const char*, Family> kTemplates[] = {
      {"conv2d_nchwc", Family::kConv2d},         {"depthwise_conv2d_nchwc", Family::kConv2d},
      {"conv2d_nchw_cuda", Family::kConv2d},     {"depthwise_conv2d_nchw_cuda", Family::kConv2d},
      {"dense_pack", Family::kDense},            {"dense_nopack", Family::kDense},
      {"conv2d_nchw_winograd_cuda", Family::kConv2d},
      {"dense_cuda", Family::kDense},            {"dense_small_batch_cuda", Family::kDense},
  };
  for (const auto& [name, family] : kTemplates) {
    if (template_name == name) return family;
  }
  return Family::kUnknown;
}

}  // namespace

bool Workload::is_dense() const { return FamilyOf(template_name) == Family::kDense; }

std::string Workload::Key() const {
  char buf[256];
  if (is_dense()) {
    std::snprintf(buf, sizeof(buf), "%s|N%lld_I%lld|O%lld|NC|%s", template_name.c_str(), (long long)dense.batch,
                  (long long)dense.in_features, (long long)dense.out_features, dtype.c_str());
    return buf;
  }
  const Conv2dParams& c = conv;
  std::snprintf(buf, sizeof(buf), "%s|N%lld_C%lld_H%lld_W%lld|K%lld_R%lldx%lld_S%lldx%lld_P%lld_%lld_%lld_%lld_D%lldx%lld_G%lld|NCHW|%s",
                template_name.c_str(), (long long)c.batch, (long long)c.in_channels, (long long)c.height,
                (long long)c.width, (long long)c.out_channels, (long long)c.kernel_h, (long long)c.kernel_w,
                (long long)c.stride_h, (long long)c.stride_w, (long long)c.pad_top, (long long)c.pad_left,
                (long long)c.pad_bottom, (long long)c.pad_right, (long long)c.dilation_h, (long long)c.dilation_w,
                (long long)c.groups, dtype.c_str());
  return buf;
}

double Workload::Flops() const {
  if (is_dense()) {
    return 2.0 * double(dense.batch) * double(dense.in_features) * double(dense.out_features);
  }
  const Conv2dParams& c = conv;
  return 2.0 * double(c.batch) * double(c.out_channels) * double(c.out_height()) * double(c.out_width()) *
         double(c.in_channels / c.groups) * double(c.kernel_h) * double(c.kernel_w);
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
  w.template_name = parts[0];
  w.dtype = parts[4];
  long long a[16] = {0};
  if (w.is_dense()) {
    if (std::sscanf(parts[1].c_str(), "N%lld_I%lld", &a[0], &a[1]) != 2 || std::sscanf(parts[2].c_str(), "O%lld", &a[2]) != 1) {
      return bad("dense shape fields");
    }
    w.dense = {a[0], a[1], a[2]};
    return w;
  }
  if (FamilyOf(w.template_name) != Family::kConv2d) {
    return bad("unknown template '" + w.template_name + "'");
  }
  if (std::sscanf(parts[1].c_str(), "N%lld_C%lld_H%lld_W%lld", &a[0], &a[1], &a[2], &a[3]) != 4 ||
      std::sscanf(parts[2].c_str(), "K%lld_R%lldx%lld_S%lldx%lld_P%lld_%lld_%lld_%lld_D%lldx%lld_G%lld", &a[4], &a[5],
                  &a[6], &a[7], &a[8], &a[9], &a[10], &a[11], &a[12], &a[13], &a[14], &a[15]) != 12) {
    return bad("conv shape fields");
  }
  Conv2dParams& c = w.conv;
  c.batch = a[0]; c.in_channels = a[1]; c.height = a[2]; c.width = a[3]; c.out_channels = a[4];
  c.kernel_h = a[5]; c.kernel_w = a[6]; c.stride_h = a[7]; c.stride_w = a[8];
  c.pad_top = a[9]; c.pad_left = a[10]; c.pad_bottom = a[11]; c.pad_right = a[12];
  c.dilation_h = a[13]; c.dilation_w = a[14]; c.groups = a[15];
  return w;
}

Workload Conv2dWorkload(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t kh, int64_t kw, int64_t stride,
                        int64_t pad, int64_t dilation, int64_t groups) {
  Workload wl;
  bool depthwise = groups > 1 && groups == c && k == c;
  wl.template_name = depthwise ? "depthwise_conv2d_nchwc" : "conv2d_nchwc";
  wl.conv = {n, c, h, w, k, kh, kw, stride, stride, pad, pad, pad, pad, dilation, dilation, groups};
  return wl;
}

Workload DenseWorkload(int64_t batch, int64_t in_features, int64_t out_features, bool packed) {
  Workload wl;
  wl.template_name = packed ? "dense_pack" : "dense_nopack";
  wl.dense = {batch, in_features, out_features};
  return wl;
}

std::string Epilogue::ToString() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : "+") + part; };
  if (bias) add("bias");
  if (residual) add("residual");
  switch (activation) {
    case Activation::kNone: break;
    case Activation::kRelu: add("relu"); break;
    case Activation::kRelu6: add("relu6"); break;
    case Activation::kClip: add("clip(" + std::to_string(clip_min) + "," + std::to_string(clip_max) + ")"); break;
  }
  return s.empty() ? "none" : s;
}

}  // namespace tunefarm::compiler
