// FMA peak: fp32 GFLOP/s of independent vfmadd chains on every thread (16 chains of 16-wide FMAs
// with AVX-512, 8-wide with AVX2), the ceiling a conv kernel can approach on this machine; and the
// int8 multiply-add peak of the int8 kernels' instruction.
#ifndef TUNEFARM_BENCH_KERNELS_FMA_PEAK_H_
#define TUNEFARM_BENCH_KERNELS_FMA_PEAK_H_

#include "tunefarm/compiler/target.h"

namespace tunefarm::bench {

double MeasureFmaPeakGflops(int threads);

// The int8 kernels' peak: GOP/s (two per multiply-add) of independent chains of the instruction
// their form uses on every thread -- vpdpbusd on 512-bit (AVX-512 VNNI) or 256-bit (AVX-VNNI)
// registers, or vpmaddwd and vpaddd on 256-bit ones (AVX2) -- and that instruction's name. Forms
// with no chain here (int32 vectors, Arm) give 0.
struct Int8Peak {
  double gops = 0;
  const char* instruction = "none";
};
Int8Peak MeasureInt8Peak(int threads, compiler::Int8Products form, int vector_lanes);

}  // namespace tunefarm::bench

#endif  // TUNEFARM_BENCH_KERNELS_FMA_PEAK_H_
