#include "tunefarm/compiler/config_space.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "tunefarm/runtime/check.h"

namespace tunefarm::compiler {
namespace {

// Ascending; O(sqrt(n)) divisions (pairs i, n / i), so a huge extent costs milliseconds, not hours.
std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t i = 1; i <= n / i; ++i) {
    if (n % i != 0) continue;
    small.push_back(i);
    if (i != n / i) large.push_back(n / i);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// All tuples (outer, ..., inner) of num_outputs parts whose inner parts come from `inner_choices`
// and whose outermost part is ceil(extent / product(inner parts)).
void EnumerateSplits(int64_t extent, int num_outputs, const std::vector<int64_t>& inner_choices, bool exact,
                     std::vector<int64_t>* prefix, std::set<std::vector<int64_t>>* out) {
  int64_t product = 1;
  for (int64_t f : *prefix) product *= f;
  if (int(prefix->size()) == num_outputs - 1) {
    if (exact && extent % product != 0) return;
    std::vector<int64_t> tuple = {(extent + product - 1) / product};
    tuple.insert(tuple.end(), prefix->rbegin(), prefix->rend());
    out->insert(tuple);
    return;
  }
  for (int64_t f : inner_choices) {
    if (product * f > extent && f != 1) continue;
    prefix->push_back(f);
    EnumerateSplits(extent, num_outputs, inner_choices, exact, prefix, out);
    prefix->pop_back();
  }
}

}  // namespace

const std::vector<int64_t>& Config::Get(const std::string& knob) const {
  int k = space_->KnobIndex(knob);
  TUNEFARM_CHECK_MSG(k >= 0, ("config has no knob " + knob).c_str());
  return space_->knobs_[size_t(k)].candidates[size_t(choices_[size_t(k)])];
}

std::string Config::Annotation(const std::string& knob) const {
  int k = space_->KnobIndex(knob);
  TUNEFARM_CHECK(k >= 0);
  const Knob& kn = space_->knobs_[size_t(k)];
  return kn.labels[size_t(kn.candidates[size_t(choices_[size_t(k)])][0])];
}

std::string Config::ToJson() const {
  nlohmann::ordered_json j;
  j["index"] = index_;
  nlohmann::ordered_json knobs = nlohmann::ordered_json::object();
  for (size_t k = 0; k < space_->knobs_.size(); ++k) {
    const Knob& kn = space_->knobs_[k];
    const auto& v = kn.candidates[size_t(choices_[k])];
    if (kn.kind == Knob::kAnnotate) {
      knobs[kn.name] = kn.labels[size_t(v[0])];
    } else {
      knobs[kn.name] = v;
    }
  }
  j["knobs"] = knobs;
  return j.dump();
}

int ConfigSpace::KnobIndex(const std::string& name) const {
  for (size_t i = 0; i < knobs_.size(); ++i) {
    if (knobs_[i].name == name) return int(i);
  }
  return -1;
}

void ConfigSpace::DefineSplit(const std::string& name, int64_t extent, int num_outputs, SplitPolicy policy,
                              int64_t max_factor) {
  TUNEFARM_CHECK(extent >= 1 && num_outputs >= 2);
  if (max_factor <= 0) max_factor = extent;
  std::set<std::vector<int64_t>> tuples;
  std::vector<int64_t> prefix;
  if (policy == SplitPolicy::kFactors || policy == SplitPolicy::kVerbose) {
    std::vector<int64_t> d;
    for (int64_t f : Divisors(extent)) {
      if (f <= max_factor) d.push_back(f);
    }
    EnumerateSplits(extent, num_outputs, d, /*exact=*/true, &prefix, &tuples);
  }
  if (policy == SplitPolicy::kPower2 || policy == SplitPolicy::kVerbose) {
    std::vector<int64_t> p2;
    for (int64_t f = 1; f <= std::min(max_factor, extent); f *= 2) p2.push_back(f);
    EnumerateSplits(extent, num_outputs, p2, /*exact=*/false, &prefix, &tuples);
  }
  Knob k{name, Knob::kSplit, {tuples.begin(), tuples.end()}, {}};
  // Order by the innermost factor, then outward: neighbouring indices are similar tiles.
  std::sort(k.candidates.begin(), k.candidates.end(), [](const auto& a, const auto& b) {
    return std::lexicographical_compare(a.rbegin(), a.rend(), b.rbegin(), b.rend());
  });
  knobs_.push_back(std::move(k));
}

void ConfigSpace::DefineReorder(const std::string& name, std::vector<std::vector<int64_t>> permutations) {
  knobs_.push_back({name, Knob::kReorder, std::move(permutations), {}});
}

void ConfigSpace::DefineAnnotate(const std::string& name, std::vector<std::string> options) {
  Knob k{name, Knob::kAnnotate, {}, std::move(options)};
  for (size_t i = 0; i < k.labels.size(); ++i) k.candidates.push_back({int64_t(i)});
  knobs_.push_back(std::move(k));
}

void ConfigSpace::DefineOther(const std::string& name, const std::vector<int64_t>& values) {
  Knob k{name, Knob::kOther, {}, {}};
  for (int64_t v : values) k.candidates.push_back({v});
  knobs_.push_back(std::move(k));
}

void ConfigSpace::FilterKnob(const std::string& name, const std::function<bool(const std::vector<int64_t>&)>& pred) {
  int idx = KnobIndex(name);
  TUNEFARM_CHECK(idx >= 0);
  auto& c = knobs_[size_t(idx)].candidates;
  std::vector<std::vector<int64_t>> kept;
  for (const auto& v : c) {
    if (pred(v)) kept.push_back(v);
  }
  if (kept.empty()) kept.push_back(c.front());
  c = std::move(kept);
}

int64_t ConfigSpace::size() const {
  int64_t n = 1;
  for (const Knob& k : knobs_) n *= int64_t(k.candidates.size());
  return n;
}

Result<Config> ConfigSpace::Get(int64_t index) const {
  if (index < 0 || index >= size()) {
    return Status::OutOfRange("config index " + std::to_string(index) + " out of range [0, " + std::to_string(size()) +
                              ") for " + description_);
  }
  Config c;
  c.space_ = this;
  c.index_ = index;
  int64_t rest = index;
  for (const Knob& k : knobs_) {
    int64_t n = int64_t(k.candidates.size());
    c.choices_.push_back(int(rest % n));
    rest /= n;
  }
  return c;
}

Result<Config> ConfigSpace::FromChoices(const std::vector<int>& choices) const {
  if (choices.size() != knobs_.size()) {
    return Status::InvalidArgument("config has " + std::to_string(choices.size()) + " knob choices, " + description_ +
                                   " has " + std::to_string(knobs_.size()) + " knobs");
  }
  int64_t index = 0, radix = 1;
  for (size_t k = 0; k < knobs_.size(); ++k) {
    int64_t n = int64_t(knobs_[k].candidates.size());
    if (choices[k] < 0 || choices[k] >= n) {
      return Status::InvalidArgument("choice " + std::to_string(choices[k]) + " out of range for knob " +
                                     knobs_[k].name);
    }
    index += choices[k] * radix;
    radix *= n;
  }
  return Get(index);
}

Result<Config> ConfigSpace::FromValues(const std::vector<std::pair<std::string, std::vector<int64_t>>>& values) const {
  std::vector<int> choices(knobs_.size(), -1);
  for (const auto& [name, v] : values) {
    int k = KnobIndex(name);
    if (k < 0) return Status::NotFound("knob '" + name + "' is not part of " + description_);
    const auto& cands = knobs_[size_t(k)].candidates;
    auto it = std::find(cands.begin(), cands.end(), v);
    if (it == cands.end())
      return Status::NotFound("value for knob '" + name + "' is not a candidate of " + description_);
    choices[size_t(k)] = int(it - cands.begin());
  }
  for (size_t k = 0; k < choices.size(); ++k) {
    if (choices[k] < 0) return Status::NotFound("no value for knob '" + knobs_[k].name + "'");
  }
  return FromChoices(choices);
}

Result<Config> ConfigSpace::FromJson(const std::string& json) const {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("knobs") || !j["knobs"].is_object()) {
    return Status::InvalidArgument("malformed config JSON (expected {\"index\": N, \"knobs\": {...}}): " +
                                   json.substr(0, 200));
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> values;
  for (auto it = j["knobs"].begin(); it != j["knobs"].end(); ++it) {
    int k = KnobIndex(it.key());
    if (k < 0) return Status::NotFound("knob '" + it.key() + "' is not part of " + description_);
    const Knob& kn = knobs_[size_t(k)];
    std::vector<int64_t> v;
    if (kn.kind == Knob::kAnnotate) {
      if (!it->is_string()) return Status::InvalidArgument("knob '" + it.key() + "' must be a string");
      auto lab = std::find(kn.labels.begin(), kn.labels.end(), it->get<std::string>());
      if (lab == kn.labels.end())
        return Status::NotFound("annotation '" + it->get<std::string>() + "' unknown for " + it.key());
      v.push_back(lab - kn.labels.begin());
    } else {
      if (!it->is_array()) return Status::InvalidArgument("knob '" + it.key() + "' must be an array of integers");
      for (const auto& x : *it) {
        if (!x.is_number_integer())
          return Status::InvalidArgument("knob '" + it.key() + "' must be an array of integers");
        v.push_back(x.get<int64_t>());
      }
    }
    values.emplace_back(it.key(), std::move(v));
  }
  return FromValues(values);
}

bool ConfigSpace::IsValid(const Config& c) const {
  return std::all_of(filters_.begin(), filters_.end(), [&](const auto& f) { return f(c); });
}

int64_t ConfigSpace::CountValid(int64_t limit) const {
  int64_t n = 0;
  for (int64_t i = 0; i < size() && i < limit; ++i) {
    if (IsValid(*Get(i))) ++n;
  }
  return n;
}

Result<Config> ConfigSpace::RandomValid(std::mt19937_64& rng) const {
  std::uniform_int_distribution<int64_t> dist(0, size() - 1);
  for (int attempt = 0; attempt < 100000; ++attempt) {
    Config c = *Get(dist(rng));
    if (IsValid(c)) return c;
  }
  return Status::NotFound("no valid config found by sampling " + description_);
}

}  // namespace tunefarm::compiler
