// The int8 templates (conv2d, depthwise conv2d, dense and batch_matmul on CPUs; their CUDA forms
// emulated on this CPU): random workloads in uint8 and int8, random configs and epilogues (input zero point, int32
// bias, requantization with a zero point and activation bounds, or the int32 accumulator), against
// a reference built from the float templates' naive reference (the input zero point a constant or,
// as DynamicQuantizeLinear makes it, an argument): the accumulator of (x - zero point)
// times the weights is exact in float while it stays below 2^24, which the weights' range here
// keeps, and the requantization is recomputed from it in the same float32 operations the kernel
// does. Every output must be equal, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/kernel_reference.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::compiler {
namespace {

constexpr int kCasesPerTemplate = 40;
constexpr int kCasesPerModule = 20;

int Find(const KernelInfo& info, const char* role) {
  for (size_t i = 0; i < info.buffers.size(); ++i) {
    if (info.buffers[i].role == role) return int(i);
  }
  return -1;
}

size_t ElementBytes(const std::string& dtype) { return dtype == "uint8" || dtype == "int8" ? 1 : 4; }

Epilogue RandomInt8Epilogue(const Workload& w, std::mt19937_64& rng) {
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const bool is_signed_input = w.dtype == "int8";
  Epilogue e;
  e.bias = uniform(0, 1) == 1;
  e.input_zero_point = is_signed_input ? uniform(-128, 127) : uniform(0, 255);
  // A batched product's second operand is an activation of the same type, with its zero point.
  if (w.is_batch_matmul()) e.weight_zero_point = is_signed_input ? uniform(-128, 127) : uniform(0, 255);
  // DynamicQuantizeLinear's zero point: an argument the kernel reads at run time.
  e.input_zero_point_argument = uniform(0, 3) == 0;
  if (uniform(0, 3) == 0) return e;  // the int32 accumulator, as ConvInteger and MatMulInteger
  Requantize& r = e.requantize;
  r.enabled = true;
  r.is_signed = uniform(0, 1) == 1;
  const int lo = r.is_signed ? -128 : 0, hi = r.is_signed ? 127 : 255;
  r.zero_point = uniform(lo, hi);
  r.min = uniform(0, 1) ? r.zero_point : lo;  // a fused Relu, or the type's range
  r.max = uniform(0, 2) == 0 ? uniform(r.min, hi) : hi;
  // A fused residual add (QLinearAdd after the product), where the template takes one.
  if (!w.is_batch_matmul() && uniform(0, 2) == 0) {
    IntegerResidual& s = e.integer_residual;
    e.residual = s.enabled = true;
    s.residual_signed = uniform(0, 1) == 1;
    s.sum_signed = r.is_signed;  // min and max bound the sum, in its type
    s.scale = std::uniform_real_distribution<float>(0.01f, 0.1f)(rng);
    s.residual_scale = std::uniform_real_distribution<float>(0.01f, 0.1f)(rng);
    s.sum_scale = std::uniform_real_distribution<float>(0.02f, 0.2f)(rng);
    s.residual_zero_point = s.residual_signed ? uniform(-128, 127) : uniform(0, 255);
    s.sum_zero_point = uniform(lo, hi);
  }
  return e;
}

// The output element's channel: the axis the bias and scales run along.
size_t ChannelOf(const KernelBufferInfo& out, int64_t index) {
  const std::vector<int64_t>& s = out.shape;
  if (s.size() == 5) {  // NCHW[x]c: [N, K/ocb, OH, OW, ocb]
    const int64_t block = s[4], chunk = (index / (s[2] * s[3] * block)) % s[1];
    return size_t(chunk * block + index % block);
  }
  if (s.size() == 4) return size_t((index / (s[2] * s[3])) % s[1]);  // NCHW
  return size_t(index % s.back());                                   // [rows, features]
}

class Int8Templates : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(Int8Templates, RandomCasesEqualTheReferenceExactly) {
  const std::string tmpl = GetParam().first;
  auto target = ParseTarget(GetParam().second);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  std::mt19937_64 rng(std::hash<std::string>()(tmpl) + 8);
  int checked = 0, requantized = 0, residuals = 0, steps = 0, dot_products = 0;
  while (checked < kCasesPerTemplate) {
    std::vector<KernelSpec> specs, float_specs;
    for (int i = 0; i < kCasesPerModule; ++i) {
      KernelSpec spec;
      spec.workload = testing::RandomWorkload(tmpl, rng);
      spec.workload.dtype = rng() % 2 ? "uint8" : "int8";
      spec.epilogue = RandomInt8Epilogue(spec.workload, rng);
      spec.target = *target;
      auto space = GetConfigSpace(spec.workload, *target);
      ASSERT_TRUE(space.ok()) << space.status().ToString();
      // The fallback config, named by its index: the float reference's own fallback may choose
      // other blocks (an int8 conv over fewer than 4 channels reads whole pixels).
      auto fallback = FallbackConfigIndex(spec.workload, *target);
      ASSERT_TRUE(fallback.ok()) << fallback.status().ToString();
      spec.config_index = *fallback;
      if (i % 4 != 0) {
        auto cfg = space->RandomValid(rng);
        ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
        spec.config_index = cfg->index();
      }
      spec.symbol = "q" + std::to_string(checked + i);
      // A GPU config the launch verifier refuses is not a case (cuda_kernel_test.cc counts them).
      if (!DescribeKernel(spec).ok()) continue;
      KernelSpec reference = spec;
      reference.workload.dtype = "float32";
      reference.epilogue = Epilogue{};
      reference.epilogue.bias = spec.epilogue.bias;
      specs.push_back(spec);
      float_specs.push_back(reference);
    }
    std::vector<KernelInfo> infos;
    auto jit = BuildJit(specs, &infos);
    ASSERT_TRUE(jit.ok()) << jit.status().ToString();
    for (size_t i = 0; i < specs.size(); ++i) {
      const KernelSpec& spec = specs[i];
      const KernelInfo& info = infos[i];
      auto float_info = DescribeKernel(float_specs[i]);
      ASSERT_TRUE(float_info.ok()) << float_info.status().ToString();
      // The int8 arguments, and the float ones the reference reads: x - zero point, the weights
      // in [-16, 16], the bias.
      std::vector<std::vector<uint8_t>> raw(info.buffers.size());
      testing::Buffers as_float(float_info->buffers.size());
      std::vector<int64_t> weight_sums;  // per output channel, for a dot-product kernel's compensation
      for (size_t b = 0; b < info.buffers.size(); ++b) {
        const KernelBufferInfo& buf = info.buffers[b];
        // A batched product's second operand (an "input" too): within 16 of its zero point, as
        // the weights are, so the float accumulator stays exact.
        const bool second_operand = buf.role == "input" && b == 1;
        const size_t n = size_t(buf.num_elements());
        raw[b].assign(n * ElementBytes(buf.dtype), 0);
        const int fb = second_operand ? 1 : Find(*float_info, buf.role.c_str());
        // (A dot-product kernel's weight words hold four of the float kernel's weights each.)
        if (fb >= 0) as_float[size_t(fb)].assign(size_t(float_info->buffers[size_t(fb)].num_elements()), 0.0f);
        for (size_t e = 0; e < n && buf.role != "output"; ++e) {
          float value = 0;
          if (second_operand) {
            const int lo = buf.dtype == "uint8" ? 0 : -128, hi = lo + 255;
            const int v = std::min(hi, std::max(lo, spec.epilogue.weight_zero_point + int(rng() % 33) - 16));
            raw[b][e] = uint8_t(v);
            value = float(v - spec.epilogue.weight_zero_point);
          } else if (buf.role == "input") {
            const int v = buf.dtype == "uint8" ? int(rng() % 256) : int(rng() % 256) - 128;
            raw[b][e] = uint8_t(v);
            value = float(v - spec.epilogue.input_zero_point);
          } else if (buf.role == "weight" && buf.dtype == "int32") {
            // A dot-product kernel's words of n reduction steps' weights (n = 4 int8 bytes, or 2
            // int16 halves): [chunks, ..., icb/n, ocb] here, [chunks, ..., icb, ocb] in the float
            // kernel (conv2d_nchwc; dense_pack's icb is K).
            const int64_t words_of = target->int8_products == Int8Products::kI16Pairs ? 2 : 4;
            const std::vector<int64_t>& fs = float_info->buffers[size_t(fb)].shape;
            const int64_t ocb = fs.back(), icb = fs[fs.size() - 2];
            int64_t per_chunk = 1;
            for (size_t d = 1; d < fs.size(); ++d) per_chunk *= fs[d];
            weight_sums.resize(size_t(fs[0] * ocb), 0);
            auto put = [&](int64_t j, int v, int64_t at) {  // element j of word e, float weight `at`
              raw[b][e * 4 + size_t(j * 4 / words_of)] = uint8_t(int8_t(v));
              if (words_of == 2) raw[b][e * 4 + size_t(j * 2 + 1)] = v < 0 ? 0xff : 0;  // int16
              as_float[size_t(fb)][size_t(at)] = float(v);
              weight_sums[size_t(at / per_chunk * ocb + at % ocb)] += v;
            };
            if (buf.shape.size() == 4) {
              // conv2d_nchwc's tap words, [occ, icc, ceil(KH*KW*icb/n), ocb]: a chunk's (kh, kw, icb)
              // taps flattened n to a word, the taps past the last of weight 0.
              const int64_t words = buf.shape[2], kh = fs[2], kw = fs[3], taps = kh * kw * icb;
              const int64_t chunk = int64_t(e) / (words * ocb), word = int64_t(e) / ocb % words, o = int64_t(e) % ocb;
              for (int64_t j = 0; j < words_of; ++j) {
                const int64_t tap = word * words_of + j;
                if (tap >= taps) continue;  // stays 0
                put(j, int(rng() % 33) - 16,
                    ((chunk * kh + tap / (kw * icb)) * kw + tap / icb % kw) * icb * ocb + (tap % icb) * ocb + o);
              }
              continue;
            }
            const int64_t tile = int64_t(e) / (icb / words_of * ocb), word = int64_t(e) % (icb / words_of * ocb);
            for (int64_t j = 0; j < words_of; ++j) {
              put(j, int(rng() % 33) - 16, tile * icb * ocb + (word / ocb * words_of + j) * ocb + word % ocb);
            }
            continue;
          } else if (buf.role == "weight") {
            const int v = int(rng() % 33) - 16;
            raw[b][e] = uint8_t(int8_t(v));
            value = float(v);
          } else if (buf.role == "bias") {
            const int32_t v = int32_t(rng() % 4001) - 2000;
            std::memcpy(&raw[b][e * 4], &v, 4);
            value = float(v);
          } else if (buf.role == "residual") {
            raw[b][e] = uint8_t(rng() % 256);
          } else if (buf.role == "zero_point") {
            raw[b][e] = uint8_t(spec.epilogue.input_zero_point);
          } else if (buf.role == "scale") {
            const float v = std::uniform_real_distribution<float>(1e-3f, 5e-2f)(rng);
            std::memcpy(&raw[b][e * 4], &v, 4);
          }
          if (fb >= 0) as_float[size_t(fb)][e] = value;
        }
      }
      if (const int at = Find(info, "compensation"); at >= 0) {
        ++dot_products;
        // The zero point as the kernel reads the input: uint8 (int8 x as x + 128), or int8 for sdot's
        // form (uint8 x as x - 128).
        const bool reads_signed = target->int8_products == Int8Products::kS8S8Quads;
        const int32_t zero_point = spec.epilogue.input_zero_point + ((spec.workload.dtype == "int8") == reads_signed ? 0
                                                                     : reads_signed ? -128
                                                                                    : 128);
        // (A dense layer's last chunk may be padded past the real output channels.)
        for (size_t c = 0; c < std::min(weight_sums.size(), size_t(info.buffers[size_t(at)].num_elements())); ++c) {
          const int32_t v = -zero_point * int32_t(weight_sums[c]);
          std::memcpy(&raw[size_t(at)][c * 4], &v, 4);
        }
      }
      const std::vector<float> acc = testing::ReferenceOutput(float_specs[i], *float_info, as_float);
      auto fn = (*jit)->Lookup(spec.symbol);
      ASSERT_TRUE(fn.ok());
      std::vector<void*> ptrs(raw.size());
      for (size_t b = 0; b < raw.size(); ++b) ptrs[b] = raw[b].data();
      ASSERT_EQ((*fn)(ptrs.data()), 0);
      const KernelBufferInfo& out = info.buffers.back();
      const int scale_at = Find(info, "scale");
      const Requantize& r = spec.epilogue.requantize;
      const IntegerResidual& fused = spec.epilogue.integer_residual;
      const int residual_at = Find(info, "residual");
      int wrong = 0, one_step = 0;
      for (int64_t e = 0; e < out.num_elements() && wrong < 3; ++e) {
        int64_t expected = int64_t(acc[size_t(e)]), actual = 0;
        if (r.enabled) {
          float scale = 0;
          std::memcpy(&scale, &raw[size_t(scale_at)][ChannelOf(out, e) * 4], 4);
          float q = std::nearbyint(float(int32_t(expected)) * scale) + float(r.zero_point);
          if (fused.enabled) {
            // QLinearAdd's arithmetic: the product saturated to its type, each operand scaled by its
            // scale over the sum's, summed, rounded, offset by the sum's zero point.
            q = std::min(std::max(q, r.is_signed ? -128.0f : 0.0f), r.is_signed ? 127.0f : 255.0f);
            const uint8_t byte = raw[size_t(residual_at)][size_t(e)];
            const int residual = fused.residual_signed ? int(int8_t(byte)) : int(byte);
            const float sum = (q - float(r.zero_point)) * (fused.scale / fused.sum_scale) +
                              float(residual - fused.residual_zero_point) * (fused.residual_scale / fused.sum_scale);
            q = std::nearbyint(sum) + float(fused.sum_zero_point);
          }
          expected = int64_t(std::min(std::max(q, float(r.min)), float(r.max)));
          const bool out_signed = fused.enabled ? fused.sum_signed : r.is_signed;
          actual = out_signed ? int64_t(int8_t(raw.back()[size_t(e)])) : int64_t(raw.back()[size_t(e)]);
        } else {
          int32_t v = 0;
          std::memcpy(&v, &raw.back()[size_t(e) * 4], 4);
          actual = v;
        }
        // A fused sum's two products may be contracted into one multiply-add, which can move a
        // value across a rounding boundary: one step, as ONNX Runtime's own kernels differ.
        if (fused.enabled && std::abs(actual - expected) == 1) {
          ++one_step;
          continue;
        }
        if (actual != expected) {
          ++wrong;
          ADD_FAILURE() << spec.workload.Key() << " epilogue " << spec.epilogue.ToString() << " config "
                        << info.config_json << ": output " << e << " is " << actual << ", expected " << expected;
        }
      }
      requantized += r.enabled ? 1 : 0;
      residuals += fused.enabled ? 1 : 0;
      steps += one_step;
    }
    checked += int(specs.size());
  }
  std::printf(
      "%s on %s: %d int8 cases, %d requantized, %d of them with a fused residual add, %d with int8 dot products "
      "(%d outputs one step off)\n",
      tmpl.c_str(), GetParam().second.c_str(), checked, requantized, residuals, dot_products, steps);
  // The CPU conv and dense templates multiply with int8 dot products wherever the CPU has them, the
  // reduction block holds groups of four and the zero point is a constant: most cases.
  if ((tmpl == "conv2d_nchwc" || tmpl == "dense_pack") && target->int8_products != Int8Products::kInt32Vectors) {
    EXPECT_GE(dot_products, kCasesPerTemplate / 4);
  }
}

INSTANTIATE_TEST_SUITE_P(CpuAndEmulatedCuda, Int8Templates,
                         ::testing::Values(std::make_pair("conv2d_nchwc", "llvm"),
                                           std::make_pair("depthwise_conv2d_nchwc", "llvm"),
                                           std::make_pair("dense_pack", "llvm"), std::make_pair("batch_matmul", "llvm"),
                                           // AVX2 alone (Zen 3): vpmaddwd over int16 weight pairs
                                           std::make_pair("conv2d_nchwc", "llvm -mcpu=znver3"),
                                           std::make_pair("dense_pack", "llvm -mcpu=znver3"),
                                           std::make_pair("conv2d_nchw_cuda", "h100 -emulate=host"),
                                           std::make_pair("depthwise_conv2d_nchw_cuda", "h100 -emulate=host"),
                                           std::make_pair("dense_cuda", "h100 -emulate=host"),
                                           std::make_pair("batch_matmul_cuda", "h100 -emulate=host")),
                         [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& p) {
                           return p.param.first + (p.param.second.find("znver3") != std::string::npos ? "_avx2" : "");
                         });

// The templates that have no int8 form refuse an int8 workload by name, and the table lists none of
// them for it.
TEST(Int8Templates, TemplatesWithoutAnInt8FormRefuseIt) {
  Workload w = Conv2dWorkload(1, 16, 14, 14, 16, 3, 3, 1, 1);
  w.dtype = "uint8";
  w.implementation = "conv2d_nchwc_winograd";
  auto host = ParseTarget("llvm");
  ASSERT_TRUE(host.ok());
  auto space = GetConfigSpace(w, *host);
  ASSERT_FALSE(space.ok());
  EXPECT_NE(space.status().message().find("unsupported dtype 'uint8' for conv2d_nchwc_winograd; supported: float32"),
            std::string::npos)
      << space.status().ToString();
  Workload d = DenseWorkload(4, 64, 32);
  d.dtype = "int8";
  d.implementation = "dense_nopack";
  EXPECT_FALSE(GetConfigSpace(d, *host).ok());
  d.implementation = "dense_pack";
  EXPECT_TRUE(GetConfigSpace(d, *host).ok());
  d.dtype = "int16";
  auto refused = GetConfigSpace(d, *host);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(
      refused.status().message().find("unsupported dtype 'int16' for dense_pack; supported: float32, uint8, int8"),
      std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace tunefarm::compiler
