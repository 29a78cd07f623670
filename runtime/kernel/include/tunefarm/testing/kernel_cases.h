// Kernel check cases: a small binary file of (kernel name, argument buffers, expected outputs)
// written on the workstation and replayed on a board (or under qemu) by kernel_check.
//
// Layout (little-endian): "TFKC" u32 version=1, u32 case_count, then per case:
//   u32 name_len, name bytes, u32 buffer_count, then per buffer:
//     u8 is_output, u64 element_count, float32[element_count] data
//   (inputs: the argument values; outputs: the expected result).
#ifndef TUNEFARM_TESTING_KERNEL_CASES_H_
#define TUNEFARM_TESTING_KERNEL_CASES_H_

#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::runtime {

struct KernelCaseBuffer {
  bool is_output = false;
  std::vector<float> data;
};
struct KernelCase {
  std::string kernel_name;
  std::vector<KernelCaseBuffer> buffers;
};

Status WriteKernelCases(const std::string& path, const std::vector<KernelCase>& cases);
Result<std::vector<KernelCase>> ReadKernelCases(const std::string& path);
// The same from the file's bytes; `what` names the source in errors.
Result<std::vector<KernelCase>> ParseKernelCases(const std::string& bytes, const std::string& what);

// max|actual - expected| / max(max|expected|, 1e-6).
double MaxRelativeError(const std::vector<float>& actual, const std::vector<float>& expected);

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_TESTING_KERNEL_CASES_H_
