// The search strategies of search.h.
#include "tunefarm/tuner/search.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tunefarm/tuner/features.h"

namespace tunefarm::tuner {
namespace {

using compiler::Config;
using compiler::ConfigSpace;
using compiler::Knob;

// The choice index of every knob of a config.
std::vector<int> ChoicesOf(const ConfigSpace& space, const Config& c) {
  std::vector<int> out;
  for (const Knob& k : space.knobs()) {
    const auto& v = c.Get(k.name);
    int idx = 0;
    for (size_t i = 0; i < k.candidates.size(); ++i) {
      if (k.candidates[i] == v) idx = int(i);
    }
    out.push_back(idx);
  }
  return out;
}

using Accept = std::function<bool(const Config&)>;

bool Accepted(const Accept& accept, const Config& c) { return !accept || accept(c); }

// A valid, accepted config not proposed before, or -1 after a bounded number of tries.
int64_t FreshRandom(const ConfigSpace& space, const std::set<int64_t>& proposed, std::mt19937_64& rng,
                    const Accept& accept) {
  for (int attempt = 0; attempt < 4096; ++attempt) {
    auto c = space.RandomValid(rng);
    if (c.ok() && !proposed.count(c->index()) && Accepted(accept, *c)) return c->index();
  }
  return -1;
}

// Changes one random knob to another choice; -1 when the result is invalid.
int64_t Mutate(const ConfigSpace& space, int64_t index, std::mt19937_64& rng, const Accept& accept) {
  auto c = space.Get(index);
  if (!c.ok()) return -1;
  std::vector<int> choices = ChoicesOf(space, *c);
  const auto& knobs = space.knobs();
  size_t k = size_t(rng() % knobs.size());
  if (knobs[k].candidates.size() < 2) return -1;
  choices[k] = int(rng() % knobs[k].candidates.size());
  auto m = space.FromChoices(choices);
  return m.ok() && space.IsValid(*m) && Accepted(accept, *m) ? m->index() : -1;
}

class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(const ConfigSpace& space, uint64_t seed, Accept accept)
      : space_(space), rng_(seed), accept_(std::move(accept)) {}
  std::vector<int64_t> NextBatch(int n) override {
    std::vector<int64_t> out;
    while (int(out.size()) < n) {
      int64_t c = FreshRandom(space_, proposed_, rng_, accept_);
      if (c < 0) break;
      proposed_.insert(c);
      out.push_back(c);
    }
    return out;
  }
  void Update(const std::vector<int64_t>&, const std::vector<double>&) override {}

 private:
  const ConfigSpace& space_;
  std::mt19937_64 rng_;
  Accept accept_;
};

class GridSearch : public SearchStrategy {
 public:
  GridSearch(const ConfigSpace& space, Accept accept) : space_(space), accept_(std::move(accept)) {}
  std::vector<int64_t> NextBatch(int n) override {
    std::vector<int64_t> out;
    for (; next_ < space_.size() && int(out.size()) < n; ++next_) {
      auto c = space_.Get(next_);
      if (!c.ok() || !space_.IsValid(*c) || proposed_.count(next_) || !Accepted(accept_, *c)) continue;
      proposed_.insert(next_);
      out.push_back(next_);
    }
    return out;
  }
  void Update(const std::vector<int64_t>&, const std::vector<double>&) override {}

 private:
  const ConfigSpace& space_;
  Accept accept_;
  int64_t next_ = 0;
};

class GeneticSearch : public SearchStrategy {
 public:
  GeneticSearch(const ConfigSpace& space, uint64_t seed, Accept accept)
      : space_(space), rng_(seed), accept_(std::move(accept)) {}
  std::vector<int64_t> NextBatch(int n) override {
    std::vector<int64_t> out;
    std::vector<std::pair<double, int64_t>> population;  // (score, index)
    for (const auto& [index, score] : scores_) population.emplace_back(score, index);
    std::sort(population.rbegin(), population.rend());
    if (population.size() > 32) population.resize(32);
    for (int attempt = 0; int(out.size()) < n && attempt < 64 * n; ++attempt) {
      int64_t child = -1;
      if (population.size() >= 2) {
        // Tournament of two for each parent, knob-wise crossover, then mutation.
        auto pick = [&] {
          auto& a = population[rng_() % population.size()];
          auto& b = population[rng_() % population.size()];
          return a.first >= b.first ? a.second : b.second;
        };
        auto pa = space_.Get(pick()), pb = space_.Get(pick());
        if (!pa.ok() || !pb.ok()) continue;
        std::vector<int> ca = ChoicesOf(space_, *pa), cb = ChoicesOf(space_, *pb);
        for (size_t k = 0; k < ca.size(); ++k) {
          if (rng_() % 2) ca[k] = cb[k];
          if (rng_() % 10 == 0) ca[k] = int(rng_() % space_.knobs()[k].candidates.size());
        }
        auto c = space_.FromChoices(ca);
        if (c.ok() && space_.IsValid(*c) && Accepted(accept_, *c)) child = c->index();
      } else {
        child = FreshRandom(space_, proposed_, rng_, accept_);
      }
      if (child < 0 || proposed_.count(child)) continue;
      proposed_.insert(child);
      out.push_back(child);
    }
    while (int(out.size()) < n) {  // the population has converged: explore
      int64_t c = FreshRandom(space_, proposed_, rng_, accept_);
      if (c < 0) break;
      proposed_.insert(c);
      out.push_back(c);
    }
    return out;
  }
  void Update(const std::vector<int64_t>& configs, const std::vector<double>& gflops) override {
    for (size_t i = 0; i < configs.size(); ++i) scores_[configs[i]] = gflops[i];
  }

 private:
  const ConfigSpace& space_;
  std::mt19937_64 rng_;
  Accept accept_;
  std::map<int64_t, double> scores_;
};

// An XGBoost booster over config features.
class XgbModel {
 public:
  ~XgbModel() {
    if (booster_) XGBoosterFree(booster_);
  }
  // groups: row counts of consecutive rank groups (one per workload); empty: one group.
  bool Fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y, const std::string& objective,
           const std::vector<unsigned>& groups = {}) {
    if (booster_) XGBoosterFree(booster_);
    booster_ = nullptr;
    const size_t d = x[0].size();
    std::vector<float> flat;
    for (const auto& row : x) flat.insert(flat.end(), row.begin(), row.end());
    DMatrixHandle m;
    if (XGDMatrixCreateFromMat(flat.data(), x.size(), d, NAN, &m) != 0) return false;
    XGDMatrixSetFloatInfo(m, "label", y.data(), y.size());
    if (objective == "rank") {
      std::vector<unsigned> g = groups.empty() ? std::vector<unsigned>{unsigned(x.size())} : groups;
      XGDMatrixSetUIntInfo(m, "group", g.data(), g.size());
    }
    XGBoosterCreate(&m, 1, &booster_);
    XGBoosterSetParam(booster_, "objective", objective == "rank" ? "rank:pairwise" : "reg:squarederror");
    XGBoosterSetParam(booster_, "tree_method", "hist");
    XGBoosterSetParam(booster_, "max_depth", "6");
    XGBoosterSetParam(booster_, "eta", "0.3");
    XGBoosterSetParam(booster_, "nthread", "1");
    XGBoosterSetParam(booster_, "verbosity", "0");
    bool ok = true;
    for (int it = 0; it < 40 && ok; ++it) ok = XGBoosterUpdateOneIter(booster_, it, m) == 0;
    XGDMatrixFree(m);
    return ok;
  }
  std::vector<float> Predict(const std::vector<std::vector<float>>& x) const {
    std::vector<float> flat;
    for (const auto& row : x) flat.insert(flat.end(), row.begin(), row.end());
    DMatrixHandle m;
    std::vector<float> out(x.size(), 0.0f);
    if (!booster_ || XGDMatrixCreateFromMat(flat.data(), x.size(), x[0].size(), NAN, &m) != 0) return out;
    bst_ulong n = 0;
    const float* p = nullptr;
    if (XGBoosterPredict(booster_, m, 0, 0, 0, &n, &p) == 0) out.assign(p, p + std::min<bst_ulong>(n, x.size()));
    XGDMatrixFree(m);
    return out;
  }
  bool trained() const { return booster_ != nullptr; }

 private:
  BoosterHandle booster_ = nullptr;
};

class XgbSearch : public SearchStrategy {
 public:
  XgbSearch(const ConfigSpace& space, const SearchOptions& o) : space_(space), options_(o), rng_(o.seed) {
    FitModel();  // transfer data alone already ranks the first batch
  }

  std::vector<int64_t> NextBatch(int n) override {
    std::vector<int64_t> out;
    if (model_.trained()) {
      for (int64_t c : Anneal(std::max(n, options_.plan_size))) {
        if (int(out.size()) >= n - int(std::ceil(options_.epsilon * n))) break;
        if (proposed_.count(c)) continue;
        proposed_.insert(c);
        out.push_back(c);
      }
    }
    while (int(out.size()) < n) {  // exploration (and everything before the model has data)
      int64_t c = FreshRandom(space_, proposed_, rng_, options_.accept);
      if (c < 0) break;
      proposed_.insert(c);
      out.push_back(c);
    }
    return out;
  }

  void Update(const std::vector<int64_t>& configs, const std::vector<double>& gflops) override {
    for (size_t i = 0; i < configs.size(); ++i) {
      if (configs[i] < 0 || configs[i] >= space_.size()) continue;
      measured_.push_back(configs[i]);
      y_.push_back(float(gflops[i]));
      best_.emplace_back(gflops[i], configs[i]);
    }
    std::sort(best_.rbegin(), best_.rend());
    FitModel();
  }

 private:
  void FitModel() {
    const bool own = measured_.size() >= 8;
    if (!own && options_.transfer.empty()) return;
    std::vector<std::vector<float>> x;
    std::vector<float> y;
    std::vector<unsigned> groups;
    for (const auto& g : options_.transfer) {
      if (g.x.empty() || g.x[0].size() != FeatureWidth()) continue;
      x.insert(x.end(), g.x.begin(), g.x.end());
      y.insert(y.end(), g.y.begin(), g.y.end());
      groups.push_back(unsigned(g.x.size()));
    }
    if (own) {
      // Labels scaled to [0, 1] by the best so far (as AutoTVM does), so rank and regression see
      // the same scale across tasks and transfer groups.
      auto rows = Features(measured_);
      float top = *std::max_element(y_.begin(), y_.end());
      for (size_t i = 0; i < rows.size(); ++i) {
        x.push_back(std::move(rows[i]));
        y.push_back(top > 0 ? y_[i] / top : y_[i]);
      }
      groups.push_back(unsigned(rows.size()));
    }
    if (!x.empty()) model_.Fit(x, y, options_.xgb_objective, groups);
  }

  size_t FeatureWidth() {
    if (options_.features) return options_.features->Width();
    auto c = space_.Get(0);
    return c.ok() ? ConfigFeatures(space_, *c).size() : 0;
  }

  std::vector<std::vector<float>> Features(const std::vector<int64_t>& configs) {
    if (options_.features) return options_.features->Get(configs);
    std::vector<std::vector<float>> x;
    for (int64_t c : configs) {
      auto cfg = space_.Get(c);
      x.push_back(cfg.ok() ? ConfigFeatures(space_, *cfg) : std::vector<float>(FeatureWidth(), 0.0f));
    }
    return x;
  }

  // Simulated annealing on the model's predictions: walkers start at the best measured configs,
  // mutate one knob per step, accept by the Metropolis rule as the temperature falls; returns the
  // best unmeasured configs seen, best first.
  std::vector<int64_t> Anneal(int keep) {
    const int walkers = 64, steps = options_.anneal_steps;
    std::vector<int64_t> points;
    for (size_t i = 0; i < best_.size() && int(points.size()) < walkers / 2; ++i) points.push_back(best_[i].second);
    while (int(points.size()) < walkers) {
      int64_t c = FreshRandom(space_, {}, rng_, options_.accept);
      if (c < 0) break;
      points.push_back(c);
    }
    std::vector<float> scores = Score(points);
    std::map<int64_t, float> seen;
    for (size_t i = 0; i < points.size(); ++i) seen[points[i]] = scores[i];
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int s = 0; s < steps; ++s) {
      const double temp = 1.0 * (1.0 - double(s) / steps) + 1e-3;
      std::vector<int64_t> next = points;
      for (auto& p : next) {
        int64_t m = Mutate(space_, p, rng_, options_.accept);
        if (m >= 0) p = m;
      }
      std::vector<float> ns = Score(next);
      for (size_t i = 0; i < points.size(); ++i) {
        seen[next[i]] = ns[i];
        if (ns[i] >= scores[i] || u(rng_) < std::exp((ns[i] - scores[i]) / temp)) {
          points[i] = next[i];
          scores[i] = ns[i];
        }
      }
    }
    std::vector<std::pair<float, int64_t>> ranked;
    for (const auto& [c, s] : seen) {
      if (!proposed_.count(c)) ranked.emplace_back(s, c);
    }
    std::sort(ranked.rbegin(), ranked.rend());
    std::vector<int64_t> out;
    for (size_t i = 0; i < ranked.size() && int(out.size()) < keep; ++i) out.push_back(ranked[i].second);
    return out;
  }

  std::vector<float> Score(const std::vector<int64_t>& configs) { return model_.Predict(Features(configs)); }

  const ConfigSpace& space_;
  SearchOptions options_;
  std::mt19937_64 rng_;
  XgbModel model_;
  std::vector<int64_t> measured_;
  std::vector<float> y_;
  std::vector<std::pair<double, int64_t>> best_;
};

}  // namespace

std::vector<float> ConfigFeatures(const ConfigSpace& space, const Config& config) {
  std::vector<float> f;
  for (const Knob& k : space.knobs()) {
    const auto& v = config.Get(k.name);
    if (k.kind == Knob::kSplit) {
      for (int64_t part : v) f.push_back(float(std::log2(double(std::max<int64_t>(part, 1)))));
    } else if (k.kind == Knob::kOther) {
      f.push_back(float(v.empty() ? 0 : v[0]));
    } else {
      int idx = 0;
      for (size_t i = 0; i < k.candidates.size(); ++i) {
        if (k.candidates[i] == v) idx = int(i);
      }
      f.push_back(float(idx));
    }
  }
  return f;
}

Result<std::unique_ptr<SearchStrategy>> MakeSearch(TunerKind kind, const ConfigSpace& space,
                                                   const SearchOptions& options) {
  switch (kind) {
    case TunerKind::kRandom:
      return std::unique_ptr<SearchStrategy>(new RandomSearch(space, options.seed, options.accept));
    case TunerKind::kGrid:
      return std::unique_ptr<SearchStrategy>(new GridSearch(space, options.accept));
    case TunerKind::kGa:
      return std::unique_ptr<SearchStrategy>(new GeneticSearch(space, options.seed, options.accept));
    case TunerKind::kXgb:
      if (options.xgb_objective != "rank" && options.xgb_objective != "reg") {
        return Status::InvalidArgument("unknown cost-model objective '" + options.xgb_objective + "' (rank, reg)");
      }
      return std::unique_ptr<SearchStrategy>(new XgbSearch(space, options));
  }
  return Status::InvalidArgument("unknown tuner " + std::to_string(int(kind)));
}

}  // namespace tunefarm::tuner
