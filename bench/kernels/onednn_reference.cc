#include "bench/kernels/onednn_reference.h"

#include <omp.h>

#include <cstdint>
#include <dnnl.hpp>
#include <random>
#include <unordered_map>
#include <vector>

namespace tunefarm::bench {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

dnnl::memory Filled(const dnnl::memory::desc& md, const dnnl::engine& eng) {
  dnnl::memory m(md, eng);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  auto* p = static_cast<float*>(m.get_data_handle());
  for (size_t i = 0; i < md.get_size() / sizeof(float); ++i) p[i] = d(rng);
  return m;
}

// Random bytes of any data type (int8 and int32 arguments; the values only need to be finite).
dnnl::memory FilledBytes(const dnnl::memory::desc& md, const dnnl::engine& eng) {
  dnnl::memory m(md, eng);
  std::mt19937 rng(7);
  auto* p = static_cast<uint8_t*>(m.get_data_handle());
  for (size_t i = 0; i < md.get_size(); ++i) p[i] = uint8_t(rng() & 0x3f);
  return m;
}

class Primitive final : public OneDnnPrimitive {
 public:
  Primitive() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}
  void Run() override {
    prim_.execute(stream_, args_);
    stream_.wait();
  }

  // The fp32 conv, or its int8 form (u8 x s8 with an int32 bias, requantized to u8).
  void InitConv(const compiler::Conv2dParams& c, bool int8) {
    const int64_t g = c.groups;
    dnnl::memory::dims src = {c.batch, c.in_channels, c.height, c.width};
    dnnl::memory::dims wei = g == 1
                                 ? dnnl::memory::dims{c.out_channels, c.in_channels, c.kernel_h, c.kernel_w}
                                 : dnnl::memory::dims{g, c.out_channels / g, c.in_channels / g, c.kernel_h, c.kernel_w};
    dnnl::memory::dims dst = {c.batch, c.out_channels, c.out_height(), c.out_width()};
    const dt data = int8 ? dt::u8 : dt::f32;
    dnnl::memory::desc src_md(src, data, tag::any), wei_md(wei, int8 ? dt::s8 : dt::f32, tag::any),
        dst_md(dst, data, tag::any);
    const dnnl::memory::dims strides = {c.stride_h, c.stride_w}, dilation = {c.dilation_h - 1, c.dilation_w - 1};
    const dnnl::memory::dims pad_l = {c.pad_top, c.pad_left}, pad_r = {c.pad_bottom, c.pad_right};
    const auto inference = dnnl::prop_kind::forward_inference;
    const auto direct = dnnl::algorithm::convolution_direct;
    if (!int8) {
      dnnl::convolution_forward::desc desc(inference, direct, src_md, wei_md, dst_md, strides, dilation, pad_l, pad_r);
      dnnl::convolution_forward::primitive_desc pd(desc, engine_);
      prim_ = dnnl::convolution_forward(pd);
      args_ = {{DNNL_ARG_SRC, Filled(pd.src_desc(), engine_)},
               {DNNL_ARG_WEIGHTS, Filled(pd.weights_desc(), engine_)},
               {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), engine_)}};
      return;
    }
    dnnl::memory::desc bias_md({c.out_channels}, dt::s32, tag::x);
    dnnl::convolution_forward::desc desc(inference, direct, src_md, wei_md, bias_md, dst_md, strides, dilation, pad_l,
                                         pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, Int8Attributes(), engine_);
    prim_ = dnnl::convolution_forward(pd);
    SetInt8Args(pd);
  }

  void InitDense(const compiler::DenseParams& d) {
    dnnl::memory::desc src_md({d.batch, d.in_features}, dt::f32, tag::any);
    dnnl::memory::desc wei_md({d.out_features, d.in_features}, dt::f32, tag::any);
    dnnl::memory::desc dst_md({d.batch, d.out_features}, dt::f32, tag::any);
    dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, src_md, wei_md, dst_md);
    dnnl::inner_product_forward::primitive_desc pd(desc, engine_);
    prim_ = dnnl::inner_product_forward(pd);
    args_ = {{DNNL_ARG_SRC, Filled(pd.src_desc(), engine_)},
             {DNNL_ARG_WEIGHTS, Filled(pd.weights_desc(), engine_)},
             {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), engine_)}};
  }

  void InitInt8Dense(const compiler::DenseParams& d) {
    dnnl::memory::desc src_md({d.batch, d.in_features}, dt::u8, tag::any);
    dnnl::memory::desc wei_md({d.out_features, d.in_features}, dt::s8, tag::any);
    dnnl::memory::desc bias_md({d.out_features}, dt::s32, tag::x);
    dnnl::memory::desc dst_md({d.batch, d.out_features}, dt::u8, tag::any);
    dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, src_md, wei_md, bias_md, dst_md);
    dnnl::inner_product_forward::primitive_desc pd(desc, Int8Attributes(), engine_);
    prim_ = dnnl::inner_product_forward(pd);
    SetInt8Args(pd);
  }

  // An int8 primitive's arguments: random bytes in, the output allocated.
  template <typename PrimitiveDesc>
  void SetInt8Args(const PrimitiveDesc& pd) {
    args_ = {{DNNL_ARG_SRC, FilledBytes(pd.src_desc(), engine_)},
             {DNNL_ARG_WEIGHTS, FilledBytes(pd.weights_desc(), engine_)},
             {DNNL_ARG_BIAS, FilledBytes(pd.bias_desc(), engine_)},
             {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), engine_)}};
  }

  // oneDNN's matmul over plain row-major [B, M, K] x [B, K, N].
  void InitBatchMatmul(const compiler::BatchMatmulParams& p) {
    dnnl::memory::desc a_md({p.batch, p.m, p.k}, dt::f32, tag::abc);
    dnnl::memory::desc b_md({p.batch, p.k, p.n}, dt::f32, tag::abc);
    dnnl::memory::desc c_md({p.batch, p.m, p.n}, dt::f32, tag::abc);
    dnnl::matmul::desc desc(a_md, b_md, c_md);
    dnnl::matmul::primitive_desc pd(desc, engine_);
    prim_ = dnnl::matmul(pd);
    args_ = {{DNNL_ARG_SRC, Filled(pd.src_desc(), engine_)},
             {DNNL_ARG_WEIGHTS, Filled(pd.weights_desc(), engine_)},
             {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), engine_)}};
  }

 private:
  // The requantization to uint8: one output scale (the int32 sum times it, rounded and saturated).
  static dnnl::primitive_attr Int8Attributes() {
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {0.02f});
    return attr;
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::primitive prim_;
  std::unordered_map<int, dnnl::memory> args_;
};

}  // namespace

std::unique_ptr<OneDnnPrimitive> OneDnnPrimitive::Create(const compiler::Workload& w) {
  auto p = std::make_unique<Primitive>();
  if (w.is_dense()) {
    p->InitDense(w.dense);
  } else if (w.is_batch_matmul()) {
    p->InitBatchMatmul(w.batch_matmul);
  } else {
    p->InitConv(w.conv, /*int8=*/false);
  }
  return p;
}

std::unique_ptr<OneDnnPrimitive> OneDnnPrimitive::CreateInt8(const compiler::Workload& w) {
  auto p = std::make_unique<Primitive>();
  if (w.is_dense()) {
    p->InitInt8Dense(w.dense);
  } else {
    p->InitConv(w.conv, /*int8=*/true);
  }
  return p;
}

void SetOneDnnThreads(int threads) { omp_set_num_threads(threads); }

}  // namespace tunefarm::bench
