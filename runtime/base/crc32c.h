// CRC-32C (Castagnoli, the iSCSI/ext4/LevelDB polynomial), as every artifact section's checksum.
// Contract: Crc32c(data, n) equals the standard CRC-32C (initial value and final XOR 0xFFFFFFFF),
// e.g. Crc32c("123456789") == 0xE3069283, on every machine; Extend(Crc32c(a), b) == Crc32c(a || b).
// It uses the CPU's CRC instructions where there are any (x86 SSE4.2, AArch64 CRC, chosen at run
// time) and a table otherwise (armv7), so a board and a workstation agree on every file.
#ifndef TUNEFARM_RUNTIME_BASE_CRC32C_H_
#define TUNEFARM_RUNTIME_BASE_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace tunefarm::runtime::crc32c {

uint32_t Extend(uint32_t crc, const void* data, size_t n);
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// The portable table implementation, whatever the CPU has (tests compare the two).
uint32_t ExtendWithTable(uint32_t crc, const void* data, size_t n);

// Which implementation runs here: "sse4.2", "armv8-crc" or "table" (for tests and benchmarks).
const char* Implementation();

}  // namespace tunefarm::runtime::crc32c

#endif  // TUNEFARM_RUNTIME_BASE_CRC32C_H_
