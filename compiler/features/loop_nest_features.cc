#include "compiler/features/loop_nest_features.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compiler/arith/linear_form.h"
#include "compiler/ir/ir_util.h"
#include "compiler/ir/ir_visitor.h"

namespace tunefarm::features {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

// Layout (version 2): kNestFeatures about the main store's loop nest, then kSlotFeatures for each
// of kSlots buffer accesses (the stored buffer, then up to three loaded buffers in the order the
// stored value reads them), then kGpuFeatures (zero for CPU kernels).
constexpr int kNestFeatures = 13;
constexpr int kGpuFeatures = 6;
constexpr int kSlots = 4;
constexpr int kLevels[] = {1, 2, 3, 4, 6, 8};  // footprint within the innermost L loops
constexpr int kReuseLevels[] = {2, 4, 8};
constexpr int kSlotFeatures = 2 + 6 + 3 + 1;

struct Loop {
  const VarNode* var;
  int64_t extent;
  ForKind kind;
};

struct Access {
  const VarNode* buffer;
  Expr index;
};

struct StoreSite {
  std::vector<Loop> loops;       // outermost first
  std::vector<Access> accesses;  // the write first
  double iterations = 1;
};

class LoadCollector : public IRVisitor {
 public:
  std::vector<Access> loads;
  using IRVisitor::Visit;

 protected:
  void Visit_(const Load* op) override {
    bool seen = false;
    for (const auto& a : loads) seen = seen || a.buffer == op->buffer.get();
    if (!seen) loads.push_back({op->buffer.get(), op->index});
    IRVisitor::Visit_(op);
  }
};

class NestCollector : public IRVisitor {
 public:
  std::vector<StoreSite> sites;
  double allocated_bytes = 0, shared_bytes = 0, local_bytes = 0;
  using IRVisitor::Visit;

 protected:
  void Visit_(const For* op) override {
    const int64_t* extent = AsConstInt(op->extent);
    loops_.push_back({op->var.get(), extent ? std::max<int64_t>(*extent, 1) : 1, op->kind});
    Visit(op->body);
    loops_.pop_back();
  }
  void Visit_(const Allocate* op) override {
    const double bytes = double(op->size) * op->element_type.bytes();
    allocated_bytes += bytes;
    if (op->scope == MemoryScope::kShared) shared_bytes += bytes;
    if (op->scope == MemoryScope::kLocal) local_bytes += bytes;
    IRVisitor::Visit_(op);
  }
  void Visit_(const Store* op) override {
    StoreSite site;
    site.loops = loops_;
    for (const auto& l : loops_) site.iterations *= double(l.extent);
    site.accesses.push_back({op->buffer.get(), op->index});
    LoadCollector loads;
    loads.Visit(op->value);
    // An accumulation reads the stored buffer too; the write slot already describes it.
    for (auto& a : loads.loads) {
      if (a.buffer != op->buffer.get()) site.accesses.push_back(std::move(a));
    }
    sites.push_back(std::move(site));
  }

 private:
  std::vector<Loop> loops_;
};

float Log2p(double v) { return float(std::log2(1.0 + std::max(0.0, v))); }

// The element stride of a loop in an index: its linear coefficient; -1 when the loop variable
// appears only inside a non-linear term (a fused loop's / and %); 0 when absent.
int64_t StrideOf(const VarNode* var, const arith::LinearForm& form) {
  int64_t c = form.CoeffOfVar(var);
  if (c != 0) return c;
  for (const auto& t : form.terms) {
    if (UsesVar(t.atom, var)) return -1;
  }
  return 0;
}

}  // namespace

int LoopNestFeatureCount() { return kNestFeatures + kSlots * kSlotFeatures + kGpuFeatures; }

namespace {

// What decides a GPU kernel's speed beyond its loops: threads per block and blocks (from the main
// store's bound loops), shared and local memory, an occupancy estimate (resident warps of 64 on
// an SM of 2048 threads and ~100 KiB of shared memory, the common ground of sm_75..sm_90), and
// whether consecutive threads store consecutive elements (coalescing).
void GpuFeatures(const NestCollector& nest, const StoreSite& s, float* f) {
  double threads = 1, blocks = 1;
  for (const auto& l : s.loops) {
    if (IsGpuThreadLoop(l.kind)) threads *= double(l.extent);
    if (IsGpuBlockLoop(l.kind)) blocks *= double(l.extent);
  }
  // The kernel's output is written last (after the accumulation in registers).
  const StoreSite& out = nest.sites.back();
  const VarNode* thread_x = nullptr;
  for (const auto& l : out.loops) {
    if (l.kind == ForKind::kGpuThreadX) thread_x = l.var;
  }
  if (blocks == 1 && threads == 1) return;  // a CPU kernel
  const double blocks_by_threads = std::floor(2048.0 / threads);
  const double blocks_by_shared = nest.shared_bytes > 0 ? std::floor(100.0 * 1024 / nest.shared_bytes) : 32.0;
  const double resident_warps = std::min(64.0, std::min(blocks_by_threads, blocks_by_shared) * std::ceil(threads / 32));
  f[0] = Log2p(threads);
  f[1] = Log2p(blocks);
  f[2] = Log2p(nest.shared_bytes);
  f[3] = Log2p(nest.local_bytes);
  f[4] = float(resident_warps / 64.0);
  const int64_t stride = thread_x ? StrideOf(thread_x, arith::ToLinearForm(out.accesses[0].index)) : -1;
  f[5] = stride == 1 ? 1.0f : 0.0f;
}

}  // namespace

std::vector<float> ExtractLoopNestFeatures(const Stmt& body) {
  std::vector<float> f(size_t(LoopNestFeatureCount()), 0.0f);
  NestCollector nest;
  nest.Visit(body);
  if (nest.sites.empty()) return f;
  // The main store is the one run most often (the reduction's update); the rest (padding copies,
  // initialization, epilogue) count as overhead.
  size_t main = 0;
  for (size_t i = 1; i < nest.sites.size(); ++i) {
    if (nest.sites[i].iterations > nest.sites[main].iterations) main = i;
  }
  double other_iterations = 0;
  for (size_t i = 0; i < nest.sites.size(); ++i) {
    if (i != main) other_iterations += nest.sites[i].iterations;
  }
  const StoreSite& s = nest.sites[main];
  const int depth = int(s.loops.size());
  double vec = 1, unroll = 1, par = 1, per_task = s.iterations;
  int unrolled_loops = 0;
  for (const auto& l : s.loops) {
    if (l.kind == ForKind::kVectorized) vec *= double(l.extent);
    if (l.kind == ForKind::kUnrolled) {
      unroll *= double(l.extent);
      ++unrolled_loops;
    }
    if (l.kind == ForKind::kParallel) {
      par *= double(l.extent);
      per_task /= double(l.extent);
    }
  }
  f[0] = Log2p(s.iterations);
  f[1] = Log2p(other_iterations);
  f[2] = float(nest.sites.size());
  f[3] = float(depth);
  f[4] = depth ? Log2p(double(s.loops.back().extent)) : 0.0f;
  f[5] = depth && s.loops.back().kind == ForKind::kVectorized ? 1.0f : 0.0f;
  f[6] = Log2p(vec);
  f[7] = Log2p(unroll);
  f[8] = Log2p(par);
  f[9] = float(unrolled_loops);
  f[10] = Log2p(per_task);
  f[11] = Log2p(nest.allocated_bytes);
  f[12] = float(s.accesses.size() - 1);

  for (size_t a = 0; a < s.accesses.size() && a < size_t(kSlots); ++a) {
    float* slot = &f[size_t(kNestFeatures) + a * size_t(kSlotFeatures)];
    const arith::LinearForm form = arith::ToLinearForm(s.accesses[a].index);
    std::vector<int64_t> stride(static_cast<size_t>(depth));
    for (int l = 0; l < depth; ++l) stride[size_t(l)] = StrideOf(s.loops[size_t(l)].var, form);
    if (depth) {
      slot[0] = stride.back() < 0 ? 0.0f : Log2p(double(std::llabs(stride.back())));
      slot[1] = stride.back() < 0 ? 1.0f : 0.0f;
    }
    // Elements touched within the innermost `levels` loops (a loop whose variable the index does
    // not use re-reads the same elements), and the iterations those loops run.
    auto footprint = [&](int levels, double* iterations) {
      double touched = 1;
      *iterations = 1;
      for (int l = std::max(0, depth - levels); l < depth; ++l) {
        *iterations *= double(s.loops[size_t(l)].extent);
        if (stride[size_t(l)] != 0) touched *= double(s.loops[size_t(l)].extent);
      }
      return touched;
    };
    int k = 2;
    for (int levels : kLevels) {
      double it;
      slot[k++] = Log2p(footprint(levels, &it) * 4.0);
    }
    for (int levels : kReuseLevels) {
      double it;
      double touched = footprint(levels, &it);
      slot[k++] = Log2p(it / touched);
    }
    bool vector_contiguous = false;
    for (int l = 0; l < depth; ++l) {
      if (s.loops[size_t(l)].kind == ForKind::kVectorized) vector_contiguous = stride[size_t(l)] == 1;
    }
    slot[k] = vector_contiguous ? 1.0f : 0.0f;
  }
  GpuFeatures(nest, s, &f[size_t(kNestFeatures + kSlots * kSlotFeatures)]);
  return f;
}

}  // namespace tunefarm::features
