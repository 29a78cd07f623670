// Runs a compiled model's artifact on the CPU executor with one float input; the first output.
// For model tests (expectations inside: a failed load or run fails the test).
#ifndef TUNEFARM_TESTS_COMMON_RUN_ARTIFACT_H_
#define TUNEFARM_TESTS_COMMON_RUN_ARTIFACT_H_

#include <gtest/gtest.h>

#include <vector>

#include "tunefarm/runtime/executor.h"

namespace tunefarm::testing {

inline std::vector<float> RunArtifact(runtime::Artifact artifact, const std::vector<float>& input) {
  auto ex = runtime::Executor::Load(std::move(artifact));
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (!ex.ok()) return {};
  EXPECT_TRUE((*ex)->SetInput(0, input.data(), input.size() * 4).ok());
  Status s = (*ex)->Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  const float* y = static_cast<const float*>((*ex)->Output(0));
  return std::vector<float>(y, y + (*ex)->outputs()[0].bytes() / 4);
}

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_RUN_ARTIFACT_H_
