// FMA peak: fp32 GFLOP/s of independent vfmadd chains on every thread (16 chains of 16-wide FMAs
// with AVX-512, 8-wide with AVX2), the ceiling a conv kernel can approach on this machine.
#ifndef TUNEFARM_BENCH_KERNELS_FMA_PEAK_H_
#define TUNEFARM_BENCH_KERNELS_FMA_PEAK_H_

namespace tunefarm::bench {

double MeasureFmaPeakGflops(int threads);

}  // namespace tunefarm::bench

#endif  // TUNEFARM_BENCH_KERNELS_FMA_PEAK_H_
