// Element types at a model's edges (element_convert.h): the conversions against their IEEE
// definitions, and the artifact fields that carry them.
#include "tunefarm/runtime/element_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace tunefarm::runtime {
namespace {

// float16's value from its fields, computed independently of HalfToFloat.
double HalfValue(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -magnitude : magnitude;
}

TEST(ElementConvert, EveryFloat16PatternRoundTripsThroughFloat32) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfToFloat(uint16_t(h));
    const int exponent = (h >> 10) & 31;
    if (exponent == 31) {
      EXPECT_EQ((h & 1023) != 0, std::isnan(f)) << h;
      if ((h & 1023) == 0) {
        EXPECT_TRUE(std::isinf(f)) << h;
      }
      continue;
    }
    ASSERT_EQ(double(f), HalfValue(uint16_t(h))) << h;
    ASSERT_EQ(FloatToHalf(f), uint16_t(h)) << h;
  }
}

TEST(ElementConvert, Float32ToFloat16RoundsToNearestEvenAndOverflowsToInfinity) {
  // Halfway between 1 and the next float16 (1 + 2^-10) rounds to the even one, 1.
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  // Halfway between 1 + 2^-10 (odd) and 1 + 2^-9 rounds up to the even one.
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11))), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(HalfToFloat(FloatToHalf(65519.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(65520.0f))));
  EXPECT_EQ(FloatToHalf(-1e9f), 0xfc00);
  // Subnormals: multiples of 2^-24; half of the smallest rounds to (even) zero, 1.5x to 2x.
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToHalf(1.5f * std::ldexp(1.0f, -24)), 0x0002);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  // Every float32 between two float16 neighbours rounds to the nearer one.
  for (float f = 0.001f; f < 60000.0f; f *= 1.37f) {
    const float h = HalfToFloat(FloatToHalf(f));
    const uint16_t bits = FloatToHalf(f);
    const float below = HalfToFloat(uint16_t(bits - 1)), above = HalfToFloat(uint16_t(bits + 1));
    EXPECT_LE(std::fabs(h - f), std::fabs(below - f)) << f;
    EXPECT_LE(std::fabs(h - f), std::fabs(above - f)) << f;
  }
}

TEST(ElementConvert, BFloat16KeepsTheTop16BitsRoundedToNearestEven) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16ToFloat(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even, 1. 1 + 3*2^-8 rounds up to 1 + 2^-6.
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(BFloat16ToFloat(FloatToBFloat16(std::numeric_limits<float>::infinity()))));
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = BFloat16ToFloat(uint16_t(b));
    if (!std::isnan(f)) {
      ASSERT_EQ(FloatToBFloat16(f), uint16_t(b)) << b;
    }
  }
}

TEST(ElementConvert, IntegerEdgeTypesWidenToInt64AndWrapBack) {
  const std::vector<uint32_t> u32 = {0, 1, 4000000000u};
  std::vector<int64_t> stored(3);
  ASSERT_TRUE(ConvertToStorage(ElementType::kUInt32, u32.data(), stored.data(), 3, "x").ok());
  EXPECT_EQ(stored, (std::vector<int64_t>{0, 1, 4000000000}));
  std::vector<uint32_t> back(3);
  ConvertFromStorage(ElementType::kUInt32, stored.data(), back.data(), 3);
  EXPECT_EQ(back, u32);
  const std::vector<int16_t> i16 = {-32768, -1, 32767};
  ASSERT_TRUE(ConvertToStorage(ElementType::kInt16, i16.data(), stored.data(), 3, "x").ok());
  EXPECT_EQ(stored, (std::vector<int64_t>{-32768, -1, 32767}));
  const std::vector<double> f64 = {0.1, -1e30, 3.0};
  std::vector<float> f32(3);
  ASSERT_TRUE(ConvertToStorage(ElementType::kFloat64, f64.data(), f32.data(), 3, "x").ok());
  EXPECT_EQ(f32, (std::vector<float>{0.1f, -1e30f, 3.0f}));
}

TEST(ElementConvert, AUInt64AboveInt64sRangeIsRefusedNamingTheElement) {
  const std::vector<uint64_t> u64 = {7, uint64_t(1) << 63};
  std::vector<int64_t> stored(2);
  Status s = ConvertToStorage(ElementType::kUInt64, u64.data(), stored.data(), 2, "input 'ids'");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(
      s.message(),
      "input 'ids': element 1 is 9223372036854775808; uint64 values are computed in int64 and must be at most 2^63-1");
}

TEST(ElementConvert, StorageTypesAreTheSixKernelsComputeOn) {
  for (ElementType t : {ElementType::kFloat32, ElementType::kInt64, ElementType::kInt32, ElementType::kInt8,
                        ElementType::kUInt8, ElementType::kBool}) {
    EXPECT_TRUE(IsStorageType(t)) << ElementTypeName(t);
  }
  EXPECT_EQ(StorageTypeOf(ElementType::kBFloat16), ElementType::kFloat32);
  EXPECT_EQ(StorageTypeOf(ElementType::kUInt16), ElementType::kInt64);
  for (int t = 0; t <= int(ElementType::kUInt64); ++t) {
    EXPECT_EQ(*ParseElementType(ElementTypeName(ElementType(t))), ElementType(t));
  }
}

Artifact EdgeTypedArtifact() {
  Artifact a;
  a.target = "llvm";
  a.tensors = {{"x", ArtifactTensor::kInput, ElementType::kFloat32, {2}, 0, -1, ElementType::kFloat16},
               {"y", ArtifactTensor::kOutput, ElementType::kInt64, {2}, 0, -1, ElementType::kUInt32}};
  a.inputs = {0};
  a.outputs = {1};
  return a;
}

TEST(ElementConvert, AnArtifactKeepsEdgeTypesAndSaysItNeedsAVersion3Runtime) {
  const Artifact a = EdgeTypedArtifact();
  ASSERT_TRUE(a.Validate().ok()) << a.Validate().message();
  EXPECT_NE(a.MetadataJson().find("\"format_version\": 3"), std::string::npos) << a.MetadataJson();
  auto back = Artifact::Parse(a.Serialize());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->tensors[0].caller_dtype(), ElementType::kFloat16);
  EXPECT_EQ(back->tensors[1].caller_dtype(), ElementType::kUInt32);
  Artifact plain = a;
  for (auto& t : plain.tensors) t.edge_dtype.reset();
  EXPECT_NE(plain.MetadataJson().find("\"format_version\": 2"), std::string::npos);
}

TEST(ElementConvert, AnEdgeTypeThatDoesNotMatchItsStorageIsCorrupt) {
  Artifact a = EdgeTypedArtifact();
  a.tensors[1].edge_dtype = ElementType::kFloat16;  // float16 is stored as float32, not int64
  EXPECT_EQ(a.Validate().message(),
            "corrupt artifact: tensor 'y' has edge type float16, which its kind and int64 storage cannot have");
  a = EdgeTypedArtifact();
  a.tensors[0].dtype = ElementType::kFloat64;
  EXPECT_EQ(a.Validate().message(), "corrupt artifact: tensor 'x' is stored as float64, which no kernel computes on");
}

}  // namespace
}  // namespace tunefarm::runtime
