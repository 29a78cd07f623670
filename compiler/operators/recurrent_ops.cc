// LSTM, GRU and RNN (ONNX's equations, gate orders i-o-f-c and z-r-h), forward, reverse or
// bidirectional, layout 0 and 1, initial states, clip, LSTM's peepholes and input_forget, GRU's
// linear_before_reset, and sequence_lens when every sequence has the full length. The activations
// are ONNX's defaults (Sigmoid, Tanh, Tanh; RNN: Tanh): a model naming others fails at import
// (their attribute is a list of strings, which the importer refuses by name).
//
// Shapes are static, so the recurrence is unrolled at compile time: per direction, one kernel
// projects every time step's input at once (X W^T + the biases that do not depend on the state),
// then one kernel per step computes the gates from that projection and the previous state (its
// recurrent product H R^T in the same kernel) and writes the new state [S, B, H] (S = 2 for LSTM:
// H and C). Y, Y_h and Y_c gather the step states.
#include <algorithm>

#include "compiler/ir/ir_operators.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/recurrent_inputs.h"
#include "compiler/operators/registry.h"
#include "compiler/te/tensor.h"

namespace tunefarm::operators {
namespace {

using graph::DataType;
using graph::Node;
using ir::Expr;
using ir::Tensor;

enum class Cell { kLstm, kGru, kRnn };

struct RecurrentSpec {
  Cell cell = Cell::kLstm;
  int gates = 4;  // LSTM 4 (i, o, f, c), GRU 3 (z, r, h), RNN 1
  int64_t hidden = 0, batch = 0, steps = 0, input = 0;
  int directions = 1;
  bool reverse_only = false;         // direction "reverse"
  bool batch_first = false;          // layout 1
  float clip = 0;                    // 0: none
  bool input_forget = false;         // LSTM
  bool linear_before_reset = false;  // GRU
};

Result<RecurrentSpec> ParseRecurrent(const NodeView& v) {
  const Node& n = v.node();
  RecurrentSpec s;
  s.cell = n.op_type == "LSTM" ? Cell::kLstm : n.op_type == "GRU" ? Cell::kGru : Cell::kRnn;
  s.gates = s.cell == Cell::kLstm ? 4 : s.cell == Cell::kGru ? 3 : 1;
  const std::string direction = n.GetString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return v.Fail("direction '" + direction + "' is not one of forward, reverse, bidirectional");
  }
  s.directions = direction == "bidirectional" ? 2 : 1;
  s.reverse_only = direction == "reverse";
  s.batch_first = n.GetInt("layout", 0) != 0;
  s.clip = n.GetFloat("clip", 0.0f);
  if (s.clip < 0) return v.Fail("clip must be positive");
  s.input_forget = n.GetInt("input_forget", 0) != 0;
  s.linear_before_reset = n.GetInt("linear_before_reset", 0) != 0;
  if (n.Has("activation_alpha") || n.Has("activation_beta")) {
    return v.Fail("activation_alpha and activation_beta are not supported (only the default activations)");
  }
  const auto& x = v.Shape(0);
  if (x.size() != 3) return v.Fail("X must be 3-D, got " + ShapeStr(x));
  if (v.In(0).dtype != DataType::kFloat32) return v.Fail("takes float32 tensors");
  s.steps = s.batch_first ? x[1] : x[0];
  s.batch = s.batch_first ? x[0] : x[1];
  s.input = x[2];
  const auto& w = v.Shape(1);
  if (w.size() != 3 || w[0] != s.directions || w[2] != s.input || w[1] % s.gates != 0) {
    return v.Fail("W " + ShapeStr(w) + " must be [" + std::to_string(s.directions) + ", " + std::to_string(s.gates) +
                  "*hidden_size, " + std::to_string(s.input) + "]");
  }
  s.hidden = w[1] / s.gates;
  if (n.Has("hidden_size") && n.GetInt("hidden_size", 0) < 1) {
    return v.Fail("hidden_size " + std::to_string(n.GetInt("hidden_size", 0)) + " must be positive");
  }
  if (n.Has("hidden_size") && n.GetInt("hidden_size", 0) != s.hidden) {
    return v.Fail("hidden_size " + std::to_string(n.GetInt("hidden_size", 0)) + " differs from W's " +
                  std::to_string(s.hidden));
  }
  const int64_t gh = s.gates * s.hidden;
  auto expect = [&](size_t i, const std::vector<int64_t>& shape, const char* what) -> Status {
    if (!v.HasInput(i) || v.Shape(i) == shape) return Status::OK();
    return v.Fail(std::string(what) + " " + ShapeStr(v.Shape(i)) + " must be " + ShapeStr(shape));
  };
  TUNEFARM_RETURN_IF_ERROR(expect(2, {s.directions, gh, s.hidden}, "R"));
  TUNEFARM_RETURN_IF_ERROR(expect(3, {s.directions, 2 * gh}, "B"));
  const std::vector<int64_t> state = s.batch_first ? std::vector<int64_t>{s.batch, s.directions, s.hidden}
                                                   : std::vector<int64_t>{s.directions, s.batch, s.hidden};
  TUNEFARM_RETURN_IF_ERROR(expect(5, state, "initial_h"));
  if (s.cell == Cell::kLstm) {
    TUNEFARM_RETURN_IF_ERROR(expect(6, state, "initial_c"));
    TUNEFARM_RETURN_IF_ERROR(expect(7, {s.directions, 3 * s.hidden}, "P"));
  }
  if (v.HasInput(4)) {  // sequence_lens: only the full length for every sequence
    auto lens = v.ConstInts(4, "sequence_lens");
    if (!lens.ok())
      return v.Fail("sequence_lens must be a constant (sequences of different lengths are not supported)");
    for (int64_t len : *lens) {
      if (len != s.steps) {
        return v.Fail("sequence_lens holds " + std::to_string(len) + " but X has " + std::to_string(s.steps) +
                      " steps: sequences shorter than X are not supported");
      }
    }
  }
  if (s.steps < 1 || s.steps > 4096)
    return v.Fail("X has " + std::to_string(s.steps) + " steps; at most 4096 are unrolled");
  return s;
}

Status InferRecurrent(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(RecurrentSpec s, ParseRecurrent(cx));
  const std::vector<int64_t> y = s.batch_first ? std::vector<int64_t>{s.batch, s.steps, s.directions, s.hidden}
                                               : std::vector<int64_t>{s.steps, s.directions, s.batch, s.hidden};
  const std::vector<int64_t> state = s.batch_first ? std::vector<int64_t>{s.batch, s.directions, s.hidden}
                                                   : std::vector<int64_t>{s.directions, s.batch, s.hidden};
  if (cx.num_outputs() > 0) cx.SetOut(0, DataType::kFloat32, y);
  for (size_t k = 1; k < cx.num_outputs(); ++k) cx.SetOut(k, DataType::kFloat32, state);
  return Status::OK();
}

Expr F(float v) { return Expr(v); }
Expr Sigmoid(const Expr& x) { return F(1.0f) / (F(1.0f) + ir::Call::Make(x.type(), "exp", {F(0.0f) - x})); }
Expr Tanh(const Expr& x) { return ir::Call::Make(x.type(), "tanh", {x}); }

// The kernels of one direction; returns the state tensors by time step (index t holds the state
// after the input at time t).
struct DirectionKernels {
  std::vector<int> state_at;  // tensor ids, by time
};

Result<DirectionKernels> LowerDirection(LowerApi& cx, const Node& n, const RecurrentSpec& s, int d, bool reverse) {
  const std::string base = cx.V(n.outputs[0]).name + ".d" + std::to_string(d);
  const int64_t H = s.hidden, B = s.batch, T = s.steps, I = s.input, G = s.gates;
  const bool has_bias = n.inputs.size() > 3 && n.inputs[3] >= 0;
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  TUNEFARM_ASSIGN_OR_RETURN(int w, cx.Get(n.inputs[1], 0));
  // The recurrent weights R [D, G*H, H], transposed at compile time to [H, G*H] for this direction
  // when constant: every step's product H_{t-1} R^T then reads R along the gates, contiguously in
  // the vector lanes (the generic schedule vectorizes the output axis), not a gather of H-strided
  // elements -- the step kernels were most of a small LSTM's time.
  const graph::Value& r_value = cx.V(n.inputs[2]);
  const bool transposed = r_value.constant && r_value.constant->dtype == graph::DataType::kFloat32 &&
                          int64_t(r_value.constant->f32.size()) == s.directions * G * H * H;
  int r = -1;
  if (transposed) {
    std::vector<float> rt(size_t(H * G * H));
    const float* rd = r_value.constant->f32.data() + size_t(d) * size_t(G * H * H);
    for (int64_t g = 0; g < G * H; ++g) {
      for (int64_t k = 0; k < H; ++k) rt[size_t(k * G * H + g)] = rd[size_t(g * H + k)];
    }
    r = cx.ParamFloats(base + ".recurrence_transposed", {H, G * H}, rt);
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(r, cx.Get(n.inputs[2], 0));
  }
  // R[d, gate row, k] as read from whichever layout r has.
  auto read_r = [transposed, d](const Tensor& rw, const Expr& row, const Expr& k) {
    return transposed ? te::Read(rw, {k, row}) : te::Read(rw, {Expr(int64_t(d)), row, k});
  };
  int bias = -1;
  if (has_bias) {
    TUNEFARM_ASSIGN_OR_RETURN(bias, cx.Get(n.inputs[3], 0));
  }

  // Projection [T, B, G*H]: x_t W^T + Wb + the recurrent biases that add outside the state (all of
  // them but GRU's h gate with linear_before_reset). The graph gives it as a dense layer's output
  // where the weights are constant (compiler/model/passes/recurrent_input_projections.h).
  std::vector<int> proj_inputs = {x, w};
  if (has_bias) proj_inputs.push_back(bias);
  const RecurrentSpec spec = s;
  const size_t given = size_t(kRecurrentProjectionInput + d);
  const bool projected = n.inputs.size() > given && n.inputs[given] >= 0;
  int proj = -1;
  if (projected) {
    TUNEFARM_ASSIGN_OR_RETURN(proj, cx.Get(n.inputs[given], 0));
  } else {
    proj = cx.Emit(
        n.op_type, proj_inputs,
        [spec, d, has_bias, T, B, I, G, H](const std::vector<Tensor>& in) {
          const te::IterVar k = te::MakeIterVar("ri", I, true);
          Tensor mm = te::ComputeReduce(
              in[0]->name + ".proj", {T, B, G * H}, te::ReduceKind::kSum, {k}, [&](const std::vector<Expr>& i) {
                const Expr xv = spec.batch_first ? te::Read(in[0], {i[1], i[0], te::AxisExpr(k)})
                                                 : te::Read(in[0], {i[0], i[1], te::AxisExpr(k)});
                return xv * te::Read(in[1], {Expr(int64_t(d)), i[2], te::AxisExpr(k)});
              });
          if (!has_bias) return mm;
          return te::Compute(in[0]->name + ".proj_bias", {T, B, G * H}, [&](const std::vector<Expr>& i) {
            Expr b = te::Read(in[2], {Expr(int64_t(d)), i[2]});
            const Expr rb = te::Read(in[2], {Expr(int64_t(d)), i[2] + Expr(G * H)});
            const bool gru_h_inside = spec.cell == Cell::kGru && spec.linear_before_reset;
            b = gru_h_inside ? b + ir::select(i[2] < Expr(2 * H), rb, F(0.0f)) : b + rb;
            return te::Read(mm, i) + b;
          });
        },
        ElementType::kFloat32, base + ".projection");
  }

  // The initial state [S, B, H].
  const int64_t S = s.cell == Cell::kLstm ? 2 : 1;
  std::vector<int> init_inputs;
  for (size_t k : {size_t(5), size_t(6)}) {
    if (k == 6 && s.cell != Cell::kLstm) break;
    if (n.inputs.size() > k && n.inputs[k] >= 0) {
      TUNEFARM_ASSIGN_OR_RETURN(int t, cx.Get(n.inputs[k], 0));
      init_inputs.push_back(t);
    } else {
      init_inputs.push_back(-1);
    }
  }
  std::vector<int> present;
  for (int t : init_inputs) {
    if (t >= 0) present.push_back(t);
  }
  const std::vector<int> init_layout = init_inputs;
  int state = cx.Emit(
      n.op_type, present,
      [spec, d, init_layout, S, B, H](const std::vector<Tensor>& in) {
        return te::Compute("init_state", {S, B, H}, [&](const std::vector<Expr>& i) {
          Expr v = F(0.0f);
          size_t next = 0;
          for (int64_t s_i = 0; s_i < S; ++s_i) {
            if (init_layout[size_t(s_i)] < 0) continue;
            const Tensor& t = in[next++];
            const Expr read = spec.batch_first ? te::Read(t, {i[1], Expr(int64_t(d)), i[2]})
                                               : te::Read(t, {Expr(int64_t(d)), i[1], i[2]});
            v = ir::select(i[0] == Expr(s_i), read, v);
          }
          return v;
        });
      },
      ElementType::kFloat32, base + ".initial");

  int peephole = -1;
  if (s.cell == Cell::kLstm && n.inputs.size() > 7 && n.inputs[7] >= 0) {
    TUNEFARM_ASSIGN_OR_RETURN(peephole, cx.Get(n.inputs[7], 0));
  }
  DirectionKernels out;
  out.state_at.assign(size_t(T), -1);
  const bool reset_first = s.cell == Cell::kGru && !s.linear_before_reset;
  for (int64_t step = 0; step < T; ++step) {
    const int64_t t = reverse ? T - 1 - step : step;
    // GRU without linear_before_reset multiplies the state by the reset gate before its recurrent
    // product: r ⊙ H_{t-1} is a kernel of its own, so the step reads it whole (a reduction over a
    // stage that is itself a reduction would be computed only where its reader's bounds reach).
    int gated = -1;
    if (reset_first) {
      gated = cx.Emit(
          n.op_type, {proj, state, r},
          [spec, t, B, H, read_r](const std::vector<Tensor>& in) {
            const te::IterVar k = te::MakeIterVar("rk", H, true);
            Tensor rec = te::ComputeReduce(in[1]->name + ".rec_r", {B, H}, te::ReduceKind::kSum, {k},
                                           [&](const std::vector<Expr>& i) {
                                             return te::Read(in[1], {Expr(0), i[0], te::AxisExpr(k)}) *
                                                    read_r(in[2], Expr(H) + i[1], te::AxisExpr(k));
                                           });
            return te::Compute(in[1]->name + ".gated", {B, H}, [&](const std::vector<Expr>& i) {
              Expr pre = te::Read(in[0], {Expr(t), i[0], Expr(H) + i[1]}) + te::Read(rec, i);
              if (spec.clip > 0) pre = ir::min(ir::max(pre, F(-spec.clip)), F(spec.clip));
              return Sigmoid(pre) * te::Read(in[1], {Expr(0), i[0], i[1]});
            });
          },
          ElementType::kFloat32, base + ".t" + std::to_string(t) + ".reset");
    }
    std::vector<int> inputs = {proj, state, r};
    if (has_bias) inputs.push_back(bias);
    if (peephole >= 0) inputs.push_back(peephole);
    if (gated >= 0) inputs.push_back(gated);
    const bool has_peephole = peephole >= 0;
    state = cx.Emit(
        n.op_type, inputs,
        [spec, d, t, has_bias, has_peephole, S, B, H, G, read_r](const std::vector<Tensor>& in) {
          const Tensor& proj_t = in[0];
          const Tensor& prev = in[1];
          const Tensor& rw = in[2];
          const Tensor bias_t = has_bias ? in[3] : Tensor();
          const Tensor peep = has_peephole ? in[has_bias ? 4 : 3] : Tensor();
          const Expr dd = Expr(int64_t(d));
          const Expr tt = Expr(t);
          // The recurrent product H_{t-1} R^T for every gate: [B, G*H].
          const te::IterVar k = te::MakeIterVar("rk", H, true);
          Tensor rec = te::ComputeReduce(
              prev->name + ".rec", {B, G * H}, te::ReduceKind::kSum, {k}, [&](const std::vector<Expr>& i) {
                return te::Read(prev, {Expr(0), i[0], te::AxisExpr(k)}) * read_r(rw, i[1], te::AxisExpr(k));
              });
          auto clip = [&](const Expr& e) {
            return spec.clip > 0 ? ir::min(ir::max(e, F(-spec.clip)), F(spec.clip)) : e;
          };
          // Gate g's pre-activation at (b, j).
          auto pre = [&](int64_t g, const Expr& b, const Expr& j) {
            return te::Read(proj_t, {tt, b, Expr(g * H) + j}) + te::Read(rec, {b, Expr(g * H) + j});
          };
          Tensor reset_applied;  // GRU without linear_before_reset: (r ⊙ H_{t-1}) R_h^T
          if (spec.cell == Cell::kGru && !spec.linear_before_reset) {
            const Tensor& gated = in.back();
            const te::IterVar k2 = te::MakeIterVar("rk2", H, true);
            reset_applied = te::ComputeReduce(
                prev->name + ".reset", {B, H}, te::ReduceKind::kSum, {k2}, [&](const std::vector<Expr>& i) {
                  return te::Read(gated, {i[0], te::AxisExpr(k2)}) * read_r(rw, Expr(2 * H) + i[1], te::AxisExpr(k2));
                });
          }
          return te::Compute(prev->name + ".step", {S, B, H}, [&](const std::vector<Expr>& i) {
            const Expr& b = i[1];
            const Expr& j = i[2];
            const Expr h_prev = te::Read(prev, {Expr(0), b, j});
            if (spec.cell == Cell::kRnn) return Tanh(clip(pre(0, b, j)));
            if (spec.cell == Cell::kGru) {
              const Expr z = Sigmoid(clip(pre(0, b, j)));
              Expr candidate;
              if (spec.linear_before_reset) {
                const Expr r_gate = Sigmoid(clip(pre(1, b, j)));
                Expr rh = te::Read(rec, {b, Expr(2 * H) + j});
                if (bias_t) rh = rh + te::Read(bias_t, {dd, Expr(5 * H) + j});  // Rbh
                candidate = Tanh(clip(te::Read(proj_t, {tt, b, Expr(2 * H) + j}) + r_gate * rh));
              } else {
                candidate = Tanh(clip(te::Read(proj_t, {tt, b, Expr(2 * H) + j}) + te::Read(reset_applied, {b, j})));
              }
              return (F(1.0f) - z) * candidate + z * h_prev;
            }
            // LSTM: i, o, f, c.
            const Expr c_prev = te::Read(prev, {Expr(1), b, j});
            auto peep_of = [&](int64_t g) { return peep ? te::Read(peep, {dd, Expr(g * H) + j}) : F(0.0f); };
            const Expr in_gate = Sigmoid(clip(pre(0, b, j) + peep_of(0) * c_prev));
            const Expr forget =
                spec.input_forget ? F(1.0f) - in_gate : Sigmoid(clip(pre(2, b, j) + peep_of(2) * c_prev));
            const Expr cell = Tanh(clip(pre(3, b, j)));
            const Expr c_new = forget * c_prev + in_gate * cell;
            const Expr out_gate = Sigmoid(clip(pre(1, b, j) + peep_of(1) * c_new));
            return ir::select(i[0] == Expr(0), out_gate * Tanh(c_new), c_new);
          });
        },
        ElementType::kFloat32, base + ".t" + std::to_string(t));
    out.state_at[size_t(t)] = state;
  }
  return out;
}

Status LowerRecurrent(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(RecurrentSpec s, ParseRecurrent(NodeView(cx.graph(), n)));
  TUNEFARM_RETURN_IF_ERROR(cx.AddUnrolledSteps(n, s.steps * s.directions));
  std::vector<DirectionKernels> dirs;
  for (int d = 0; d < s.directions; ++d) {
    const bool reverse = s.reverse_only || d == 1;
    TUNEFARM_ASSIGN_OR_RETURN(DirectionKernels k, LowerDirection(cx, n, s, d, reverse));
    dirs.push_back(std::move(k));
  }
  const int64_t T = s.steps;
  const RecurrentSpec spec = s;
  // Y: every step's H, by time and direction.
  if (!n.outputs.empty() && n.outputs[0] >= 0) {
    std::vector<int> inputs;
    for (const auto& dk : dirs) inputs.insert(inputs.end(), dk.state_at.begin(), dk.state_at.end());
    const std::vector<int64_t> shape = cx.V(n.outputs[0]).shape;
    const int y = cx.Emit(
        n.op_type, inputs,
        [spec, T, shape](const std::vector<Tensor>& in) {
          return te::Compute("recurrent_y", shape, [&](const std::vector<Expr>& i) {
            const Expr t = spec.batch_first ? i[1] : i[0];
            const Expr b = spec.batch_first ? i[0] : i[2];
            const Expr dir = spec.batch_first ? i[2] : i[1];
            Expr v;
            for (int64_t dd = spec.directions - 1; dd >= 0; --dd) {
              for (int64_t tt = T - 1; tt >= 0; --tt) {
                const Expr read = te::Read(in[size_t(dd * T + tt)], {Expr(0), b, i[3]});
                v = v.defined() ? ir::select(t == Expr(tt) && dir == Expr(dd), read, v) : read;
              }
            }
            return v;
          });
        },
        ElementType::kFloat32, cx.V(n.outputs[0]).name);
    cx.Define(n.outputs[0], y, 0);
  }
  // Y_h (and LSTM's Y_c): each direction's last state (time T-1 forward, time 0 backward).
  for (size_t k = 1; k < n.outputs.size() && k < 3; ++k) {
    if (n.outputs[k] < 0) continue;
    std::vector<int> inputs;
    for (int d = 0; d < s.directions; ++d) {
      const bool reverse = s.reverse_only || d == 1;
      inputs.push_back(dirs[size_t(d)].state_at[size_t(reverse ? 0 : T - 1)]);
    }
    const std::vector<int64_t> shape = cx.V(n.outputs[k]).shape;
    const int64_t which = int64_t(k) - 1;  // 0: H, 1: C
    const int out = cx.Emit(
        n.op_type, inputs,
        [spec, shape, which](const std::vector<Tensor>& in) {
          return te::Compute("recurrent_last", shape, [&](const std::vector<Expr>& i) {
            const Expr dir = spec.batch_first ? i[1] : i[0];
            const Expr b = spec.batch_first ? i[0] : i[1];
            Expr v = te::Read(in.back(), {Expr(which), b, i[2]});
            for (int64_t dd = int64_t(in.size()) - 2; dd >= 0; --dd) {
              v = ir::select(dir == Expr(dd), te::Read(in[size_t(dd)], {Expr(which), b, i[2]}), v);
            }
            return v;
          });
        },
        ElementType::kFloat32, cx.V(n.outputs[k]).name);
    cx.Define(n.outputs[k], out, 0);
  }
  return Status::OK();
}

const std::vector<AttrSpec>& RecurrentAttrs() {
  static const std::vector<AttrSpec> kAttrs = {
      {"activation_alpha", kFloats}, {"activation_beta", kFloats}, {"clip", kFloat},
      {"direction", kString},        {"hidden_size", kInt},        {"layout", kInt}};
  return kAttrs;
}

std::vector<AttrSpec> With(std::vector<AttrSpec> extra) {
  std::vector<AttrSpec> attrs = RecurrentAttrs();
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  return attrs;
}

}  // namespace

std::vector<OperatorDef> RecurrentOperators() {
  const char* notes =
      "unrolled over the static sequence; default activations; forward, reverse, bidirectional; layout 0/1; "
      "sequence_lens only at full length";
  return {
      {"LSTM", "recurrent", With({{"input_forget", kInt}}), InferRecurrent, nullptr, LowerRecurrent, notes, false, 3},
      {"GRU", "recurrent", With({{"linear_before_reset", kInt}}), InferRecurrent, nullptr, LowerRecurrent, notes, false,
       3},
      {"RNN", "recurrent", With({}), InferRecurrent, nullptr, LowerRecurrent, notes, false, 3},
  };
}

}  // namespace tunefarm::operators
