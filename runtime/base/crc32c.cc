#include "runtime/base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#elif defined(__aarch64__)
#include <arm_acle.h>
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

namespace tunefarm::runtime::crc32c {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // reflected Castagnoli
// The hardware loop runs three independent CRCs over three adjacent blocks of this many bytes (the
// instruction's latency is three times its throughput) and joins them by "advancing a register over
// kStride zero bytes", a linear map precomputed into four byte tables.
constexpr size_t kStride = 4096;

struct Tables {
  uint32_t slice[8][256];
  uint32_t advance[4][256];
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? kPolynomial : 0);
      slice[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) slice[s][i] = (slice[s - 1][i] >> 8) ^ slice[0][slice[s - 1][i] & 0xff];
    }
    uint32_t basis[32];
    for (int b = 0; b < 32; ++b) {
      uint32_t c = uint32_t(1) << b;
      for (size_t z = 0; z < kStride; ++z) c = (c >> 8) ^ slice[0][c & 0xff];
      basis[b] = c;
    }
    for (int k = 0; k < 4; ++k) {
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t c = 0;
        for (int bit = 0; bit < 8; ++bit) {
          if (v & (1u << bit)) c ^= basis[8 * k + bit];
        }
        advance[k][v] = c;
      }
    }
  }
};

const Tables& T() {
  static const Tables tables;
  return tables;
}

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // the machines tunefarm runs on are little-endian
}

// Register -> register after kStride zero bytes (unused where there is no CRC instruction).
[[maybe_unused]] uint32_t Advance(uint32_t c) {
  const Tables& t = T();
  return t.advance[0][c & 0xff] ^ t.advance[1][(c >> 8) & 0xff] ^ t.advance[2][(c >> 16) & 0xff] ^
         t.advance[3][c >> 24];
}

// The raw register update (no pre/post inversion), slicing by 8.
uint32_t RawTable(uint32_t c, const uint8_t* p, size_t n) {
  const Tables& t = T();
  for (; n >= 8; p += 8, n -= 8) {
    const uint64_t v = Load64(p) ^ c;
    c = t.slice[7][v & 0xff] ^ t.slice[6][(v >> 8) & 0xff] ^ t.slice[5][(v >> 16) & 0xff] ^
        t.slice[4][(v >> 24) & 0xff] ^ t.slice[3][(v >> 32) & 0xff] ^ t.slice[2][(v >> 40) & 0xff] ^
        t.slice[1][(v >> 48) & 0xff] ^ t.slice[0][v >> 56];
  }
  for (; n > 0; ++p, --n) c = (c >> 8) ^ t.slice[0][(c ^ *p) & 0xff];
  return c;
}

// The three-stream loop of the hardware paths, a macro so that it compiles inside each path's
// target-attributed function (GCC does not inline across target attributes).
#define TUNEFARM_CRC32C_INTERLEAVED(STEP8, STEP1)                \
  (void)T(); /* build the tables before the hot loop */          \
  for (; n >= 3 * kStride; p += 3 * kStride, n -= 3 * kStride) { \
    uint32_t c1 = 0, c2 = 0;                                     \
    for (size_t i = 0; i < kStride; i += 8) {                    \
      c = STEP8(c, Load64(p + i));                               \
      c1 = STEP8(c1, Load64(p + kStride + i));                   \
      c2 = STEP8(c2, Load64(p + 2 * kStride + i));               \
    }                                                            \
    c = Advance(Advance(c) ^ c1) ^ c2;                           \
  }                                                              \
  for (; n >= 8; p += 8, n -= 8) c = STEP8(c, Load64(p));        \
  for (; n > 0; ++p, --n) c = STEP1(c, *p);                      \
  return c

#if defined(__x86_64__)
#define TUNEFARM_SSE_CRC8(r, v) uint32_t(_mm_crc32_u64(r, v))
__attribute__((target("sse4.2"))) uint32_t RawHardware(uint32_t c, const uint8_t* p, size_t n) {
  TUNEFARM_CRC32C_INTERLEAVED(TUNEFARM_SSE_CRC8, _mm_crc32_u8);
}
bool HardwareAvailable() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
}
constexpr const char* kHardwareName = "sse4.2";
#elif defined(__aarch64__)
__attribute__((target("+crc"))) uint32_t RawHardware(uint32_t c, const uint8_t* p, size_t n) {
  TUNEFARM_CRC32C_INTERLEAVED(__crc32cd, __crc32cb);
}
bool HardwareAvailable() { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
constexpr const char* kHardwareName = "armv8-crc";
#else
uint32_t RawHardware(uint32_t c, const uint8_t* p, size_t n) { return RawTable(c, p, n); }
bool HardwareAvailable() { return false; }
constexpr const char* kHardwareName = "table";
#endif

using RawFn = uint32_t (*)(uint32_t, const uint8_t*, size_t);

RawFn Chosen() {
  static const RawFn fn = HardwareAvailable() ? RawHardware : RawTable;
  return fn;
}

}  // namespace

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  return ~Chosen()(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t ExtendWithTable(uint32_t crc, const void* data, size_t n) {
  return ~RawTable(~crc, static_cast<const uint8_t*>(data), n);
}

const char* Implementation() { return Chosen() == RawTable ? "table" : kHardwareName; }

}  // namespace tunefarm::runtime::crc32c
