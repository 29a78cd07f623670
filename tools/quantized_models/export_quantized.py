#!/usr/bin/python3
"""Export the quantized models of tunefarm's int8 test set (issue 48) to ONNX, in the three forms
exporters write: QDQ (QuantizeLinear/DequantizeLinear around float operators), QOperator (QLinearConv,
QLinearMatMul) and dynamic (DynamicQuantizeLinear + MatMulInteger/ConvInteger).

References come from ONNX Runtime, not PyTorch: PyTorch's qnnpack rounds differently from ONNX's
spec. After this script, run tools/quantized_models/ort_reference.mjs on the same directory (npm
onnxruntime-node) to write each model's output.npy. tunefarm's test
(tests/compiler/quantized_models_test.cc, QuantizedModels) compiles OUT/<model>/model.onnx with
`--records none` semantics, runs it on input.npy and compares with output.npy; it finds the
directory through TUNEFARM_QUANTIZED_DIR.

Run with an interpreter that has torch, torchvision and onnx (Debian 12: apt install python3-torch
python3-torchvision python3-onnx; /usr/bin/python3):

    /usr/bin/python3 tools/quantized_models/export_quantized.py --out DIR [--models a,b]

Random weights (torch.manual_seed(--seed); nothing is downloaded), calibrated on random inputs,
batch 1. Each model gets OUT/<model>/{model.onnx, input.npy, meta.json}.
"""
import argparse
import json
import os
import traceback

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision
from onnx import TensorProto, helper, numpy_helper


# --- QDQ: PyTorch eager post-training static quantization ----------------------------------------
def torchvision_ptq(name, engine):
    """torchvision's quantizable model, fused, observed on random batches and converted for `engine`
    (qnnpack: per-tensor weights; onednn: per-channel weights), exported at opset 13."""

    def build(seed):
        torch.backends.quantized.engine = engine
        torch.manual_seed(seed)
        ctor = getattr(torchvision.models.quantization, name)
        model = ctor(weights=None, quantize=False)
        # Batch-norm statistics from random batches: with a fresh init's (mean 0, variance 1) a deep
        # net's activations vanish or blow up, and a quantized output that is all one value checks
        # nothing. Trained weights have statistics that fit them; these now do too.
        model.train()
        with torch.no_grad():
            for _ in range(8):
                model(torch.randn(4, 3, 224, 224))
        model.eval()
        model.fuse_model()
        model.qconfig = torch.ao.quantization.get_default_qconfig(engine)
        torch.ao.quantization.prepare(model, inplace=True)
        with torch.no_grad():
            for _ in range(4):
                model(torch.randn(2, 3, 224, 224))
        torch.ao.quantization.convert(model, inplace=True)
        return model, torch.randn(1, 3, 224, 224)

    return build


# --- QDQ: QAT-style fake quantization (symmetric int8 activations, per-channel weights) -----------
class FakeQuantCnn(nn.Module):
    """What a quantization-aware-trained model exports: fake-quant pairs around each float Conv,
    int8 symmetric activations (zero point 0), per-channel int8 weights, a residual add."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1)
        self.c3 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc = nn.Linear(32, 10)
        # The weight scales a QAT run ends with are constants of the model: each channel's max / 127.
        for m in (self.c1, self.c2, self.c3):
            m.register_buffer("w_scale", m.weight.detach().abs().amax(dim=(1, 2, 3)).clamp(min=1e-8) / 127)

    @staticmethod
    def act(x, scale):
        return torch.fake_quantize_per_tensor_affine(x, scale, 0, -128, 127)

    @staticmethod
    def weight(m):
        zero = torch.zeros(m.w_scale.shape, dtype=torch.int32)
        return torch.fake_quantize_per_channel_affine(m.weight, m.w_scale, zero, 0, -128, 127)

    def conv(self, m, x):
        return nn.functional.conv2d(x, self.weight(m), m.bias, m.stride, m.padding)

    def forward(self, x):
        x = self.act(x, 0.03)
        y = self.act(torch.relu(self.conv(self.c1, x)), 0.02)
        y = self.act(torch.relu(self.conv(self.c2, y)) + y, 0.02)
        y = self.act(torch.relu(self.conv(self.c3, y)), 0.02)
        return self.fc(y.mean(dim=(2, 3)))


def fake_quant_cnn(seed):
    torch.manual_seed(seed)
    return FakeQuantCnn().eval(), torch.randn(1, 3, 32, 32)


# --- QOperator and dynamic forms, written with onnx.helper ------------------------------------------
def quantize_weights(w, per_channel, dtype):
    """Symmetric int8 or asymmetric uint8 weights of a float array (axis 0 = output channels)."""
    axes = tuple(range(1, w.ndim))
    if dtype == np.int8:
        m = np.abs(w).max(axis=axes) if per_channel else np.array(np.abs(w).max())
        scale = (np.maximum(m, 1e-8) / 127).astype(np.float32)
        zero = np.zeros_like(scale, dtype=np.int8)
        s = scale.reshape((-1,) + (1,) * (w.ndim - 1)) if per_channel else scale
        return np.clip(np.rint(w / s), -128, 127).astype(np.int8), scale, zero
    lo, hi = np.minimum(w.min(), 0), np.maximum(w.max(), 0)
    scale = np.array((hi - lo) / 255, dtype=np.float32)
    zero = np.array(np.clip(np.rint(-lo / scale), 0, 255), dtype=np.uint8)
    return np.clip(np.rint(w / scale) + zero, 0, 255).astype(np.uint8), scale, zero


def qoperator_cnn(seed):
    """QuantizeLinear -> QLinearConv (per-channel int8 weights, int32 bias) x 2 with a stride and a
    dilation -> QLinearMatMul over the flattened features -> DequantizeLinear; uint8 activations
    (asymmetric), as quantize_static(..., quant_format=QOperator) writes them."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    const("x_scale", np.float32(0.02))
    const("x_zero", np.uint8(128))
    nodes.append(helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]))
    prev, prev_scale, channels = "xq", 0.02, 3
    for i, (out_c, stride, dil) in enumerate([(16, 1, 1), (24, 2, 2)]):
        w = rng.normal(0, 0.3, (out_c, channels, 3, 3)).astype(np.float32)
        wq, ws, wz = quantize_weights(w, True, np.int8)
        b = rng.normal(0, 0.1, out_c).astype(np.float32)
        bq = np.rint(b / (prev_scale * ws)).astype(np.int32)
        y_scale, y_zero = np.float32(0.05 + 0.02 * i), np.uint8(100 + 10 * i)
        inputs = [prev, "x_scale" if i == 0 else f"y{i - 1}_scale", "x_zero" if i == 0 else f"y{i - 1}_zero",
                  const(f"w{i}", wq), const(f"w{i}_scale", ws), const(f"w{i}_zero", wz),
                  const(f"y{i}_scale", y_scale), const(f"y{i}_zero", y_zero), const(f"b{i}", bq)]
        nodes.append(helper.make_node("QLinearConv", inputs, [f"c{i}"], pads=[dil] * 4, strides=[stride] * 2,
                                      dilations=[dil] * 2))
        prev, prev_scale, channels = f"c{i}", float(y_scale), out_c
    const("flat_shape", np.array([1, -1], dtype=np.int64))
    nodes.append(helper.make_node("Reshape", [prev, "flat_shape"], ["flat"]))
    features = channels * 8 * 8
    wm = rng.normal(0, 0.05, (features, 10)).astype(np.float32)
    wmq, wms, wmz = quantize_weights(wm, False, np.int8)
    nodes.append(helper.make_node("QLinearMatMul", ["flat", "y1_scale", "y1_zero", const("wm", wmq),
                                                    const("wm_scale", wms), const("wm_zero", wmz),
                                                    const("out_scale", np.float32(0.1)),
                                                    const("out_zero", np.uint8(128))], ["logits_q"]))
    nodes.append(helper.make_node("DequantizeLinear", ["logits_q", "out_scale", "out_zero"], ["logits"]))
    graph = helper.make_graph(nodes, "qoperator_cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    return graph, rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32)


def dynamic_transformer_block(seed, weight_dtype):
    """A transformer encoder block as quantize_dynamic writes it (the shape of Transformers.js "q8"
    models): each projection DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q, x_zero, W_zero) ->
    Cast -> Mul(x_scale * W_scale) -> Add(bias); attention, softmax, LayerNorm and GELU in float."""
    rng = np.random.default_rng(seed)
    seq, d, heads, ff = 16, 64, 4, 128
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def dense(name, x, d_in, d_out):
        w = rng.normal(0, 1 / np.sqrt(d_in), (d_in, d_out)).astype(np.float32)
        # Per tensor (uint8 or int8 weights), as quantize_dynamic writes MatMul weights by default.
        wq, ws, wz = quantize_weights(w.T, False, weight_dtype)
        wq = wq.T.copy()
        nodes.extend([
            helper.make_node("DynamicQuantizeLinear", [x], [f"{name}_xq", f"{name}_xs", f"{name}_xz"]),
            helper.make_node("MatMulInteger", [f"{name}_xq", const(f"{name}_w", wq), f"{name}_xz",
                                               const(f"{name}_wz", wz)], [f"{name}_acc"]),
            helper.make_node("Cast", [f"{name}_acc"], [f"{name}_accf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [f"{name}_xs", const(f"{name}_ws", ws)], [f"{name}_scale"]),
            helper.make_node("Mul", [f"{name}_accf", f"{name}_scale"], [f"{name}_scaled"]),
            helper.make_node("Add", [f"{name}_scaled", const(f"{name}_b", rng.normal(0, 0.02, d_out).astype(
                np.float32))], [name]),
        ])
        return name

    def heads_of(x, name):  # [1, seq, d] -> [1, heads, seq, d / heads]
        nodes.append(helper.make_node("Reshape", [x, "head_shape"], [name + "_r"]))
        nodes.append(helper.make_node("Transpose", [name + "_r"], [name], perm=[0, 2, 1, 3]))
        return name

    const("head_shape", np.array([1, seq, heads, d // heads], dtype=np.int64))
    const("merge_shape", np.array([1, seq, d], dtype=np.int64))
    const("inv_sqrt_dk", np.float32(1 / np.sqrt(d // heads)))
    q = heads_of(dense("q", "x", d, d), "qh")
    k = heads_of(dense("k", "x", d, d), "kh")
    v = heads_of(dense("v", "x", d, d), "vh")
    nodes.extend([
        helper.make_node("Transpose", [k], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", [q, "kt"], ["scores_raw"]),
        helper.make_node("Mul", ["scores_raw", "inv_sqrt_dk"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["attn"], axis=-1),
        helper.make_node("MatMul", ["attn", v], ["ctx_h"]),
        helper.make_node("Transpose", ["ctx_h"], ["ctx_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx_t", "merge_shape"], ["ctx"]),
    ])
    o = dense("o", "ctx", d, d)
    nodes.append(helper.make_node("Add", ["x", o], ["res1"]))
    nodes.append(helper.make_node("LayerNormalization", ["res1", const("ln1_g", np.ones(d, np.float32)),
                                                         const("ln1_b", np.zeros(d, np.float32))], ["h1"],
                                  axis=-1, epsilon=1e-5))
    f1 = dense("f1", "h1", d, ff)
    nodes.append(helper.make_node("Relu", [f1], ["f1g"]))
    f2 = dense("f2", "f1g", ff, d)
    nodes.append(helper.make_node("Add", ["h1", f2], ["y"]))
    graph = helper.make_graph(nodes, "dynamic_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                     [1, seq, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, d])], inits)
    return graph, rng.normal(0, 1, (1, seq, d)).astype(np.float32)


def dynamic_conv(seed):
    """quantize_dynamic on a CNN (a background-removal net's form): DynamicQuantizeLinear ->
    ConvInteger with uint8 weights -> Cast -> Mul(scales) -> Add(bias), ReLU between."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    prev, channels = "x", 3
    for i, out_c in enumerate([8, 16]):
        w = rng.normal(0, 0.3, (out_c, channels, 3, 3)).astype(np.float32)
        wq, ws, wz = quantize_weights(w, False, np.uint8)
        n = f"conv{i}"
        nodes.extend([
            helper.make_node("DynamicQuantizeLinear", [prev], [f"{n}_xq", f"{n}_xs", f"{n}_xz"]),
            helper.make_node("ConvInteger", [f"{n}_xq", const(f"{n}_w", wq), f"{n}_xz", const(f"{n}_wz", wz)],
                             [f"{n}_acc"], pads=[1, 1, 1, 1]),
            helper.make_node("Cast", [f"{n}_acc"], [f"{n}_accf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [f"{n}_xs", const(f"{n}_ws", ws)], [f"{n}_scale"]),
            helper.make_node("Mul", [f"{n}_accf", f"{n}_scale"], [f"{n}_scaled"]),
            helper.make_node("Add", [f"{n}_scaled", const(f"{n}_b", rng.normal(0, 0.1, (1, out_c, 1, 1)).astype(
                np.float32))], [f"{n}_out"]),
            helper.make_node("Relu", [f"{n}_out"], [f"{n}_relu"]),
        ])
        prev, channels = f"{n}_relu", out_c
    graph = helper.make_graph(nodes, "dynamic_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                    [1, 3, 32, 32])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, channels, 32, 32])],
                              inits)
    return graph, rng.normal(0, 1, (1, 3, 32, 32)).astype(np.float32)


def qoperator_contrib(seed):
    """ONNX Runtime's QOperator form with its com.microsoft operators, as quantize_static(...,
    quant_format=QOperator) writes a CNN: QLinearConv, QLinearLeakyRelu, QLinearSigmoid, QLinearAdd,
    QLinearMul, QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool, QGemm with per-column
    weights and an int32 bias, QLinearSoftmax, all on uint8 activations."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def params(name, scale, zero):
        return [const(name + "_s", np.float32(scale)), const(name + "_z", np.uint8(zero))]

    def q(op, inputs, out, **attrs):
        nodes.append(helper.make_node(op, inputs, [out], domain="com.microsoft", **attrs))
        return out

    x = params("x", 0.05, 128)
    nodes.append(helper.make_node("QuantizeLinear", ["x"] + x, ["xq"]))
    w = rng.normal(0, 0.2, (16, 8, 3, 3)).astype(np.float32)
    wq, ws, wz = quantize_weights(w, True, np.int8)
    c1 = params("c1", 0.04, 100)
    nodes.append(helper.make_node("QLinearConv", ["xq"] + x + [const("w", wq), const("w_s", ws), const("w_z", wz)] +
                                  c1, ["c1"], pads=[1, 1, 1, 1]))
    l1 = params("l1", 0.03, 110)
    q("QLinearLeakyRelu", ["c1"] + c1 + l1, "l1", alpha=0.1)
    s1 = params("s1", 1 / 256, 0)
    q("QLinearSigmoid", ["l1"] + l1 + s1, "s1")
    a1 = params("a1", 0.05, 90)
    q("QLinearAdd", ["l1"] + l1 + ["s1"] + s1 + a1, "a1")
    m1 = params("m1", 0.02, 60)
    q("QLinearMul", ["a1"] + a1 + ["s1"] + s1 + m1, "m1")
    cat = params("cat", 0.06, 120)
    q("QLinearConcat", cat + ["m1"] + m1 + ["a1"] + a1, "cat", axis=1)
    pool = params("pool", 0.05, 120)
    q("QLinearAveragePool", ["cat"] + cat + pool, "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
      count_include_pad=0)
    g = params("g", 0.05, 125)
    q("QLinearGlobalAveragePool", ["pool"] + pool + g, "gap", channels_last=0)
    nodes.append(helper.make_node("Reshape", ["gap", const("flat", np.array([1, 32], np.int64))], ["flat_q"]))
    wg = rng.normal(0, 0.2, (10, 32)).astype(np.float32)
    wgq, wgs, wgz = quantize_weights(wg, True, np.int8)  # per output column (B transposed: [N, K])
    bias = np.rint(rng.normal(0, 0.1, 10) / (0.05 * wgs)).astype(np.int32)
    y = params("y", 0.1, 128)
    q("QGemm", ["flat_q"] + g + [const("wg", wgq), const("wg_s", wgs), const("wg_z", wgz), const("c", bias)] + y,
      "logits_q", transB=1)
    probs = params("probs", 1 / 256, 0)
    q("QLinearSoftmax", ["logits_q"] + y + probs, "probs_q", axis=-1, opset=13)
    nodes.append(helper.make_node("DequantizeLinear", ["probs_q"] + probs, ["logits"]))
    graph = helper.make_graph(nodes, "qoperator_contrib",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    return graph, rng.normal(0, 1, (1, 8, 8, 8)).astype(np.float32)


def dynamic_contrib(seed):
    """The com.microsoft forms of dynamic quantization ONNX Runtime's optimizer writes for a
    transformer's projections: DynamicQuantizeMatMul (int8 weights per column, a bias), then
    DynamicQuantizeLinear + MatMulIntegerToFloat (uint8 weights), and QGemm with a float output."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    w1 = rng.normal(0, 1 / 8, (64, 96)).astype(np.float32)
    w1q, w1s, w1z = quantize_weights(w1.T, True, np.int8)
    nodes.append(helper.make_node("DynamicQuantizeMatMul", ["x", const("w1", w1q.T.copy()), const("w1_s", w1s),
                                                            const("w1_z", w1z),
                                                            const("b1", rng.normal(0, 0.1, 96).astype(np.float32))],
                                  ["h"], domain="com.microsoft"))
    nodes.append(helper.make_node("Relu", ["h"], ["hr"]))
    nodes.append(helper.make_node("DynamicQuantizeLinear", ["hr"], ["hq", "hs", "hz"]))
    w2 = rng.normal(0, 1 / 10, (96, 64)).astype(np.float32)
    w2q, w2s, w2z = quantize_weights(w2, False, np.uint8)
    nodes.append(helper.make_node("MatMulIntegerToFloat", ["hq", const("w2", w2q), "hs", const("w2_s", w2s), "hz",
                                                           const("w2_z", w2z),
                                                           const("b2", rng.normal(0, 0.1, 64).astype(np.float32))],
                                  ["y"], domain="com.microsoft"))
    graph = helper.make_graph(nodes, "dynamic_contrib",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 64])], inits)
    return graph, rng.normal(0, 1, (16, 64)).astype(np.float32)


def float16_unsorted(seed):
    """A graph computing in float16 as a float16 converter writes it: Cast to float16 at the input,
    Conv, Relu, MatMul and Add on float16 weights, Cast back to float at the output -- and the node
    list in reverse (such a converter appends its Casts at the end; ONNX Runtime sorts the graph)."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(v, n) for n, v in [
        ("w", rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float16)),
        ("b", rng.normal(0, 0.1, 8).astype(np.float16)),
        ("wm", rng.normal(0, 0.1, (8 * 16 * 16, 10)).astype(np.float16)),
        ("shape", np.array([1, -1], np.int64)),
        ("bias", rng.normal(0, 0.1, 10).astype(np.float16))]]
    nodes = [helper.make_node("Cast", ["x"], ["xh"], to=TensorProto.FLOAT16),
             helper.make_node("Conv", ["xh", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Reshape", ["r", "shape"], ["f"]),
             helper.make_node("MatMul", ["f", "wm"], ["m"]),
             helper.make_node("Add", ["m", "bias"], ["a"]),
             helper.make_node("Cast", ["a"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(list(reversed(nodes)), "float16_unsorted",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return graph, rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32)


TORCH_MODELS = {
    "resnet18_ptq_qnnpack": torchvision_ptq("resnet18", "qnnpack"),
    "mobilenet_v2_ptq_qnnpack": torchvision_ptq("mobilenet_v2", "qnnpack"),
    "resnet18_ptq_onednn": torchvision_ptq("resnet18", "onednn"),
    # The int8 speed anchor (issue 49): ResNet-50 as ONNX Runtime runs it, 1.77x its fp32 on AVX2.
    "resnet50_ptq_qnnpack": torchvision_ptq("resnet50", "qnnpack"),
    "fake_quant_cnn": fake_quant_cnn,
}
HELPER_MODELS = {
    "qoperator_cnn": qoperator_cnn,
    "dynamic_block_u8": lambda seed: dynamic_transformer_block(seed, np.uint8),
    "dynamic_block_s8": lambda seed: dynamic_transformer_block(seed, np.int8),
    "dynamic_conv": dynamic_conv,
    "qoperator_contrib": qoperator_contrib,
    "dynamic_contrib": dynamic_contrib,
    "float16_unsorted": float16_unsorted,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="", help="comma-separated subset")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    wanted = set(filter(None, args.models.split(",")))
    for name in list(TORCH_MODELS) + list(HELPER_MODELS):
        if wanted and name not in wanted:
            continue
        out = os.path.join(args.out, name)
        os.makedirs(out, exist_ok=True)
        meta = {"model": name, "seed": args.seed}
        try:
            if name in TORCH_MODELS:
                model, x = TORCH_MODELS[name](args.seed)
                meta["form"] = "QDQ"
                with torch.no_grad():
                    torch.onnx.export(model, x, os.path.join(out, "model.onnx"), opset_version=13,
                                      input_names=["input"], output_names=["output"])
                x = x.numpy()
            else:
                graph, x = HELPER_MODELS[name](args.seed)
                meta["form"] = ("QOperator" if name.startswith("qoperator") else
                                "dynamic" if name.startswith("dynamic") else
                                "float16")
                # Opset 17: LayerNormalization's first; the quantization operators are unchanged since 13.
                model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid("com.microsoft", 1)])
                model.ir_version = 8
                if meta["form"] != "float16":  # the checker refuses the unsorted list this model is about
                    onnx.checker.check_model(model)
                onnx.save(model, os.path.join(out, "model.onnx"))
            np.save(os.path.join(out, "input.npy"), np.ascontiguousarray(x, dtype=np.float32))
            ops = sorted({n.op_type for n in onnx.load(os.path.join(out, "model.onnx")).graph.node})
            meta.update(status="exported", operators=ops)
            print(f"{name}: {meta['form']}, operators {', '.join(ops)}", flush=True)
        except Exception as e:  # one model's failure is recorded; the others still export
            meta.update(status="failed", error=f"{type(e).__name__}: {e}")
            traceback.print_exc()
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
