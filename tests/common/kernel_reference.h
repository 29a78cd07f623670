// Naive C++ references for the operator templates, written independently of the kernel IR: plain
// loops over the logical (unblocked) indices, mapped into whatever blocked layout the kernel's
// metadata declares. What every kernel correctness test compares against.
#ifndef TUNEFARM_TESTS_COMMON_KERNEL_REFERENCE_H_
#define TUNEFARM_TESTS_COMMON_KERNEL_REFERENCE_H_

#include <random>
#include <vector>

#include "tunefarm/compiler/kernel.h"

namespace tunefarm::testing {

using Buffers = std::vector<std::vector<float>>;

// Random values in [-1, 1) for every argument (outputs zeroed); a Winograd kernel's weights are
// random 3x3 filters transformed as a model's are (WinogradWeightTransform).
Buffers RandomArguments(const compiler::KernelInfo& info, std::mt19937_64& rng);

// The expected output buffer for these arguments.
std::vector<float> ReferenceOutput(const compiler::KernelSpec& spec, const compiler::KernelInfo& info,
                                   const Buffers& args);

// A random workload for a template: odd sizes, strides 1-2, padding, dilation, groups.
compiler::Workload RandomWorkload(const std::string& template_name, std::mt19937_64& rng);
compiler::Epilogue RandomEpilogue(std::mt19937_64& rng);

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_KERNEL_REFERENCE_H_
