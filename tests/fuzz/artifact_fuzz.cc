// Fuzz target: the artifact reader. The first byte picks how the rest is read:
//   even: as a whole file -- the header, the checksums, truncations;
//   odd:  as the three sections (metadata JSON, parameters, library: two little-endian u16 say
//         how long the first two are, clamped to what follows) wrapped in a container with correct checksums, so the
//         fuzzer reaches the metadata and tensor validation behind them.
#include <algorithm>

#include "fuzz/fuzz_target.h"
#include "runtime/base/crc32c.h"
#include "tunefarm/runtime/artifact.h"

namespace {

void PutLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(char((v >> (8 * i)) & 0xff));
}

// Container version 2 around three raw sections, written from docs/formats/artifact.md.
std::string SealedContainer(const std::string& meta, const std::string& params, const std::string& library) {
  namespace crc = tunefarm::runtime::crc32c;
  std::string out = "TFARTIF2";
  PutLE(&out, 3, 4);
  for (const std::string* s : {&meta, &params, &library}) {
    PutLE(&out, s->size(), 8);
    PutLE(&out, crc::Value(s->data(), s->size()), 4);
  }
  PutLE(&out, crc::Value(out.data(), out.size()), 4);
  return out + meta + params + library;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    (void)tunefarm::runtime::Artifact::Parse(rest);
    return 0;
  }
  if (rest.size() < 4) return 0;
  const std::string body = rest.substr(4);
  const auto u16 = [&](size_t at) { return size_t(uint8_t(rest[at])) | size_t(uint8_t(rest[at + 1])) << 8; };
  const size_t a = std::min(body.size(), u16(0));
  const size_t b = std::min(body.size(), a + u16(2));
  auto parsed =
      tunefarm::runtime::Artifact::Parse(SealedContainer(body.substr(0, a), body.substr(a, b - a), body.substr(b)));
  if (parsed.ok()) (void)parsed->Validate();
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  runtime::Artifact a;
  a.target = "llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64";
  a.triple = "x86_64-unknown-linux-gnu";
  a.cpu = "x86-64";
  a.cpu_features = {"sse4.2"};
  a.model = "fuzz";
  // An input with an edge type, a kernel under a condition and a condition check: the seed is a
  // version-4 file and the fuzzer reaches each check.
  a.tensors = {{"x",
                runtime::ArtifactTensor::kInput,
                runtime::ElementType::kFloat32,
                {1, 4},
                0,
                -1,
                runtime::ElementType::kFloat16},
               {"w", runtime::ArtifactTensor::kParam, runtime::ElementType::kFloat32, {4}, 0, -1, std::nullopt},
               {"y", runtime::ArtifactTensor::kOutput, runtime::ElementType::kFloat32, {1, 4}, 0, -1, std::nullopt},
               {"c", runtime::ArtifactTensor::kInput, runtime::ElementType::kBool, {1}, 0, -1, std::nullopt}};
  a.kernels.push_back({"tf_k0",
                       "add",
                       {0, 1, 2},
                       "",
                       -1,
                       runtime::ConfigOrigin::kNone,
                       {0, 0, 0},
                       {0, 0, 0},
                       0,
                       {{3, true}},
                       {},
                       {{{{3, false}}, "node 'if' (If, opset 17): its else branch cannot run"}}});
  a.inputs = {0, 3};
  a.outputs = {2};
  a.params = std::string(16, '\1');
  a.library =
      "\x7f"
      "ELF not really";
  const std::string file = a.Serialize();
  std::string flipped = file;
  flipped[60] = char(flipped[60] ^ 4);  // a bit flip in the metadata
  // The odd-mode seed: the same sections, cut where they really end.
  const std::string meta = a.MetadataJson();
  const std::string lengths = {char(meta.size() & 0xff), char(meta.size() >> 8), char(a.params.size()), '\0'};
  const std::string whole(1, '\0');  // the mode byte of the whole-file seeds
  return {whole + file, whole + flipped, whole + file.substr(0, 40), "\1" + lengths + meta + a.params + a.library,
          "\1\100\0\0\0{\"format_version\":2,\"target\":\"llvm\",\"tensors\":[{\"name\":\"x\",\"shape\":[\"2\"]}]}"};
}

}  // namespace tunefarm::fuzz
