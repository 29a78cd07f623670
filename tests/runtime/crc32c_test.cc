// CRC-32C against the standard check values and against the portable table, across the lengths
// and alignments where the hardware path switches between its three-stream blocks and its tail.
#include "runtime/base/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace tunefarm::runtime::crc32c {
namespace {

TEST(Crc32c, StandardCheckValues) {
  EXPECT_EQ(Value("123456789", 9), 0xE3069283u) << Implementation();
  EXPECT_EQ(ExtendWithTable(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(Value("", 0), 0u);
  const std::string zeros(32, '\0'), ones(32, '\xff');
  EXPECT_EQ(Value(zeros.data(), 32), 0x8A9136AAu);  // RFC 3720 B.4
  EXPECT_EQ(Value(ones.data(), 32), 0x62A8AB43u);
}

TEST(Crc32c, HardwareAgreesWithTheTableAtEveryBoundary) {
  std::mt19937_64 rng(7);
  std::string data(3 * 4096 * 3 + 123, '\0');
  for (char& c : data) c = char(rng());
  for (size_t offset : {0, 1, 3, 7}) {
    for (size_t n : {0, 1, 7, 8, 9, 4095, 12287, 12288, 12289, 3 * 12288 + 5, 3 * 12288 + 100}) {
      if (offset + n > data.size()) continue;
      EXPECT_EQ(Value(data.data() + offset, n), ExtendWithTable(0, data.data() + offset, n))
          << Implementation() << " offset " << offset << " length " << n;
    }
  }
}

TEST(Crc32c, ExtendingEqualsTheWhole) {
  std::string data(50000, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char(i * 31 + 7);
  for (size_t cut : {0, 1, 4096, 12288, 30001, 50000}) {
    EXPECT_EQ(Extend(Value(data.data(), cut), data.data() + cut, data.size() - cut), Value(data.data(), data.size()))
        << "cut at " << cut;
  }
}

}  // namespace
}  // namespace tunefarm::runtime::crc32c
