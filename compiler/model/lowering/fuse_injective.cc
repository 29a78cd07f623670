// FuseInjectiveChains: on GPUs, an injective untuned kernel (element-wise, broadcast, layout and
// data movement: no reduction) whose output only one untuned kernel reads is computed inside that
// reader instead: the reader's definition is rebuilt with the producer's definition in place of
// the producer's output, ScheduleGenericGpu inlines it, and the intermediate tensor and a launch
// disappear. Chains collapse transitively (a producer may itself have absorbed its producers). A
// tensor that is a graph output, a view's storage, runtime indices the executor checks (the reader
// takes over the producer's checks), or read by a tuned template (whose schedule is fixed) stays
// materialized.
#include <cstddef>
#include <map>
#include <set>

#include "compiler/model/lowering/lower_context.h"

namespace tunefarm::lowering {

void LowerContext::FuseInjectiveChains() {
  auto& kernels = plan_.kernels;
  const auto& tensors = plan_.artifact.tensors;
  std::map<int, int> readers;  // tensor -> kernels reading it (an argument other than the output)
  for (const auto& k : kernels) {
    std::set<int> read(k.args.begin(), k.args.end() - 1);
    for (int t : read) ++readers[t];
  }
  std::set<int> pinned(plan_.artifact.outputs.begin(), plan_.artifact.outputs.end());
  for (const auto& t : tensors) {
    if (t.view_of >= 0) pinned.insert(t.view_of);
  }
  for (const auto& k : kernels) {  // indices and conditions the executor checks stay buffers it can read
    for (const auto& check : k.index_checks) pinned.insert(check.tensor);
    for (const auto& check : k.condition_checks) {
      for (const auto& [t, value] : check.fails_when) pinned.insert(t);
    }
  }
  std::map<int, size_t> producer;  // tensor -> the fusible kernel computing it
  std::vector<bool> removed(kernels.size(), false);
  for (size_t i = 0; i < kernels.size(); ++i) {
    compiler::PlannedKernel& k = kernels[i];
    if (!k.definition) continue;  // a tuned template
    bool changed = false;
    for (size_t pos = 0; pos + 1 < k.args.size();) {
      const int t = k.args[pos];
      auto it = producer.find(t);
      if (it == producer.end() || readers[t] != 1 || pinned.count(t) ||
          tensors[size_t(t)].kind != ArtifactTensor::kIntermediate) {
        ++pos;
        continue;
      }
      const compiler::PlannedKernel& p = kernels[it->second];
      // The reader's inputs other than t (which it may read at several positions), then the
      // producer's inputs; the producer's result goes wherever t was.
      std::vector<int> args;
      std::vector<int> source;  // per reader input: its index in the new inputs, or -1 for t
      for (size_t a = 0; a + 1 < k.args.size(); ++a) {
        if (k.args[a] == t) {
          source.push_back(-1);
        } else {
          source.push_back(int(args.size()));
          args.push_back(k.args[a]);
        }
      }
      const size_t theirs = p.args.size() - 1;
      args.insert(args.end(), p.args.begin(), p.args.end() - 1);
      args.push_back(k.args.back());
      auto reader = k.definition, inner = p.definition;
      k.definition = [reader, inner, source, theirs](const std::vector<ir::Tensor>& in) {
        const ir::Tensor computed = inner(std::vector<ir::Tensor>(in.end() - std::ptrdiff_t(theirs), in.end()));
        std::vector<ir::Tensor> reader_in;
        reader_in.reserve(source.size());
        for (int s : source) reader_in.push_back(s < 0 ? computed : in[size_t(s)]);
        return reader(reader_in);
      };
      k.args = std::move(args);
      k.op = p.op + "+" + k.op;
      k.index_checks.insert(k.index_checks.end(), p.index_checks.begin(), p.index_checks.end());
      k.condition_checks.insert(k.condition_checks.end(), p.condition_checks.begin(), p.condition_checks.end());
      removed[it->second] = true;
      producer.erase(it);
      changed = true;
      pos = 0;  // the producer's inputs may be fusible in turn
    }
    if (changed) BuildGenericKernel(&k);
    if (k.injective) producer[k.args.back()] = i;
  }
  std::vector<compiler::PlannedKernel> kept;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!removed[i]) kept.push_back(std::move(kernels[i]));
  }
  kernels = std::move(kept);
}

}  // namespace tunefarm::lowering
