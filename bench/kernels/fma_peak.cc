#include "bench/kernels/fma_peak.h"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_ps feeding the reductions).
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/runtime/cpu_features.h"

namespace tunefarm::bench {
namespace {

constexpr int64_t kIterations = 20'000'000;

__attribute__((target("avx512f"))) float Avx512Chains(int64_t iters) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) float Avx2Chains(int64_t iters) {
  __m256 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm256_set1_ps(float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 16; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0];
}

// 16 chains of vpdpbusd (64 u8 x s8 multiply-adds each on 512 bits), the accumulators' sum kept
// so the loop is not dead.
__attribute__((target("avx512f,avx512vnni"))) int Vnni512Chains(int64_t iters) {
  __m512i acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x01ff01ff);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
  }
  __m512i s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_epi32(s, acc[i]);
  return _mm512_reduce_add_epi32(s);
}

__attribute__((target("avx2,avxvnni"))) int VnniAvx256Chains(int64_t iters) {
  __m256i acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm256_set1_epi32(i);
  const __m256i a = _mm256_set1_epi32(0x01020304), b = _mm256_set1_epi32(0x01ff01ff);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 16; ++i) acc[i] = _mm256_dpbusd_avx_epi32(acc[i], a, b);
  }
  __m256i s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm256_add_epi32(s, acc[i]);
  return _mm256_extract_epi32(s, 0);
}

// vpmaddwd then vpaddd (16 int16 multiply-adds per pair on 256 bits): the AVX2 kernels' inner step.
__attribute__((target("avx2"))) int PairChains(int64_t iters) {
  __m256i acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm256_set1_epi32(i);
  __m256i a = _mm256_set1_epi32(0x00030004), b = _mm256_set1_epi32(0xfff90005);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 16; ++i) acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(a, b));
    // An opaque step so the products are not hoisted out of the loop.
    __asm__ volatile("" : "+x"(a), "+x"(b));
  }
  __m256i s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm256_add_epi32(s, acc[i]);
  return _mm256_extract_epi32(s, 0);
}

// Best of 3 rounds of `threads` threads each running chains(iters), in G operations per second (two
// per multiply-add); multiply_adds_per_iteration: those of one iteration of chains' loop.
template <typename Chains>
double BestGops(int threads, Chains chains, double multiply_adds_per_iteration) {
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::thread> pool;
    pool.reserve(size_t(threads));
    std::vector<double> sink(static_cast<size_t>(threads), 0.0);
    auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&sink, &chains, t] { sink[size_t(t)] = double(chains(kIterations)); });
    }
    for (auto& th : pool) th.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * multiply_adds_per_iteration * double(kIterations) * threads / s / 1e9);
  }
  return best;
}

}  // namespace

Int8Peak MeasureInt8Peak(int threads, compiler::Int8Products form, int vector_lanes) {
  using compiler::Int8Products;
  const std::vector<std::string> features = runtime::HostCpuFeatures();  // LLVM's names, as the targets use
  auto has = [&](const char* f) { return std::find(features.begin(), features.end(), f) != features.end(); };
  if (form == Int8Products::kU8S8Quads && vector_lanes == 16 && has("avx512vnni")) {
    return {BestGops(threads, Vnni512Chains, 16.0 * 64), "vpdpbusd zmm"};
  }
  if (form == Int8Products::kU8S8Quads && has("avxvnni")) {
    return {BestGops(threads, VnniAvx256Chains, 16.0 * 32), "vpdpbusd ymm (AVX-VNNI)"};
  }
  if (form == Int8Products::kI16Pairs && has("avx2")) {
    return {BestGops(threads, PairChains, 16.0 * 16), "vpmaddwd+vpaddd ymm"};
  }
  return {};
}

double MeasureFmaPeakGflops(int threads) {
  if (__builtin_cpu_supports("avx512f")) return BestGops(threads, Avx512Chains, 16.0 * 16);
  return BestGops(threads, Avx2Chains, 16.0 * 8);
}

}  // namespace tunefarm::bench
