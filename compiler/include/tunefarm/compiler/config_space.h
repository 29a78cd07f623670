// ConfigSpace: the tunable knobs of one (template, workload, target), and Config: one point in it.
//
// Knob kinds follow AutoTVM: split (factor tuples for a loop extent, under a policy), reorder
// (permutations), annotate (loop annotations such as unroll/vec/none) and other (free integer
// choices). A point has a stable integer index: mixed radix over the knobs in definition order,
// the first knob least significant, so an index means the same config on every machine. Spaces
// carry validity filters (e.g. a register tile must fit the register file); `size()` counts every
// point, `CountValid()` only the valid ones.
//
// Thread safety: a ConfigSpace is immutable once built; share it freely across threads.
#ifndef TUNEFARM_COMPILER_CONFIG_SPACE_H_
#define TUNEFARM_COMPILER_CONFIG_SPACE_H_

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

enum class SplitPolicy {
  kFactors,  // exact factorizations: every part divides the extent
  kPower2,   // inner parts powers of two (outermost part rounds up: non-divisible allowed)
  kVerbose,  // both of the above
};

struct Knob {
  enum Kind { kSplit, kReorder, kAnnotate, kOther };
  std::string name;
  Kind kind;
  // One entry per choice: split -> factors outer..inner; reorder -> a permutation; annotate ->
  // {option index}; other -> {value}.
  std::vector<std::vector<int64_t>> candidates;
  std::vector<std::string> labels;  // annotate: the option names
};

class ConfigSpace;

// One point of a ConfigSpace. A Config borrows the space it came from (to name its knobs): it is
// valid only while that ConfigSpace object is alive and unmoved; keep the space beside its configs
// (the tuner holds one space per task for the task's lifetime), or keep index() and ask the space
// again. Copying a Config copies the borrow, not the space.
class Config {
 public:
  int64_t index() const { return index_; }
  // The chosen factors / permutation / value of a knob; the knob must exist (template bug if not).
  const std::vector<int64_t>& Get(const std::string& knob) const;
  int64_t Int(const std::string& knob) const { return Get(knob)[0]; }
  int64_t Inner(const std::string& knob) const { return Get(knob).back(); }
  std::string Annotation(const std::string& knob) const;
  // {"index": 42, "knobs": {"tile_ic": [4, 16], "unroll_kw": [1]}}
  std::string ToJson() const;

 private:
  friend class ConfigSpace;
  const ConfigSpace* space_ = nullptr;
  int64_t index_ = 0;
  std::vector<int> choices_;  // per knob
};

class ConfigSpace {
 public:
  explicit ConfigSpace(std::string description) : description_(std::move(description)) {}

  void DefineSplit(const std::string& name, int64_t extent, int num_outputs, SplitPolicy policy,
                   int64_t max_factor = 0);
  void DefineReorder(const std::string& name, std::vector<std::vector<int64_t>> permutations);
  void DefineAnnotate(const std::string& name, std::vector<std::string> options);
  void DefineOther(const std::string& name, const std::vector<int64_t>& values);
  // Restricts the choices of an already defined knob to those pred accepts (keeps at least one).
  void FilterKnob(const std::string& name, const std::function<bool(const std::vector<int64_t>&)>& pred);
  void AddFilter(std::function<bool(const Config&)> valid) { filters_.push_back(std::move(valid)); }

  int64_t size() const;
  const std::vector<Knob>& knobs() const { return knobs_; }
  const std::string& description() const { return description_; }

  // OutOfRange naming the index, the range and the space when index is outside [0, size()).
  Result<Config> Get(int64_t index) const;
  // The point with these choices (one per knob); InvalidArgument if a choice is out of range.
  Result<Config> FromChoices(const std::vector<int>& choices) const;
  // The point whose knob values equal these; NotFound if some value is not a candidate.
  Result<Config> FromValues(const std::vector<std::pair<std::string, std::vector<int64_t>>>& values) const;
  // Parses Config::ToJson output (the knobs, not the index, are authoritative).
  Result<Config> FromJson(const std::string& json) const;
  bool IsValid(const Config& c) const;
  // Valid points; enumerates the space (stops counting at limit).
  int64_t CountValid(int64_t limit = int64_t(1) << 22) const;
  // A uniformly random valid point (rejection sampling; NotFound if none found in many tries).
  Result<Config> RandomValid(std::mt19937_64& rng) const;

 private:
  int KnobIndex(const std::string& name) const;
  friend class Config;
  std::string description_;
  std::vector<Knob> knobs_;
  std::vector<std::function<bool(const Config&)>> filters_;
};

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_CONFIG_SPACE_H_
