#!/usr/bin/python3
"""Operator inventory of a directory of ONNX exports (the layout export_torchvision.py writes).

    /usr/bin/python3 tools/torchvision/onnx_ops.py DIR [--supported Add,Conv,...] [--models a,b]

For every op type in DIR/<model>/opset<N>/model.onnx it prints the models using it, per opset, and how
many of its nodes work on activations (downstream of the input 'data'), on shape arithmetic only
(downstream of a Shape, not of activations: the exporter's reshape/slice bookkeeping) or on constants only. For the ops
with interesting attribute/input forms (Resize, Pad, Clip, Slice, MatMul, Reshape, ...) it prints every
distinct form with the models using it. --supported lists the ops a backend has; the ones missing are
summarized first.
"""
import argparse
import collections
import glob
import os

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def short(v, limit=8):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, onnx.TensorProto):
        v = numpy_helper.to_array(v)
    if isinstance(v, np.ndarray):
        return str(v.tolist()) if v.size <= limit else "%s%s" % (v.dtype, list(v.shape))
    return str(v)


class Model:
    """One graph: which tensors are constants (initializer/Constant) and which carry activations."""

    def __init__(self, path):
        proto = onnx.load(path)
        try:
            proto = shape_inference.infer_shapes(proto)
        except Exception:
            pass
        g = proto.graph
        self.init = {t.name: t for t in g.initializer}
        self.const = {}
        for n in g.node:
            if n.op_type == "Constant":
                self.const[n.output[0]] = attrs(n).get("value")
        self.rank = {}
        for vi in list(g.value_info) + list(g.input) + list(g.output):
            if vi.type.tensor_type.HasField("shape"):
                self.rank[vi.name] = len(vi.type.tensor_type.shape.dim)
        for t in g.initializer:
            self.rank[t.name] = len(t.dims)
        self.fill_ranks(g)
        self.act = {i.name for i in g.input if i.name not in self.init}
        self.shape = set()  # computed from a Shape's output (and constants), not from activations
        self.nodes = []  # (node, kind): kind is act, shape or const
        for n in g.node:  # nodes are topologically sorted
            if n.op_type != "Shape" and any(i in self.act for i in n.input):
                kind = "act"
                self.act.update(n.output)
            elif n.op_type == "Shape" or any(i in self.shape for i in n.input):
                kind = "shape"
                self.shape.update(n.output)
            else:
                kind = "const"
            self.nodes.append((n, kind))

    def fill_ranks(self, g):
        """Ranks that onnx's shape inference leaves open (a Reshape to a computed shape stops it)."""
        length = {vi.name: vi.type.tensor_type.shape.dim[0].dim_value for vi in g.value_info
                  if len(vi.type.tensor_type.shape.dim) == 1 and vi.type.tensor_type.shape.dim[0].dim_value}
        for name, v in list(self.const.items()):
            self.rank[name] = len(v.dims)
            length[name] = v.dims[0] if len(v.dims) == 1 else None
        for t in g.initializer:
            length[t.name] = t.dims[0] if len(t.dims) == 1 else None
        for n in g.node:
            if n.output[0] in self.rank:
                continue
            ins = [self.rank.get(i) for i in n.input if i]
            if n.op_type == "Reshape":
                r = length.get(n.input[1])
            elif n.op_type == "Transpose":
                r = len(attrs(n)["perm"])
            elif n.op_type == "Gather":
                r = ins[0] + ins[1] - 1 if None not in ins else None
            elif n.op_type in ("Shape", "Range"):
                r = 1
            elif n.op_type == "Expand":
                r = max(ins[0], length.get(n.input[1]) or 0) if ins[0] is not None else None
            elif n.op_type.startswith("Reduce") and not attrs(n).get("keepdims", 1) or n.op_type in (
                    "Flatten", "Squeeze", "Unsqueeze", "ConstantOfShape", "Einsum"):
                r = None  # not needed here
            else:  # elementwise, MatMul, Softmax, Slice, Pad, LayerNormalization, ...: the largest input rank
                r = max(ins) if ins and None not in ins else None
            if r is not None:
                for o in n.output:
                    self.rank[o] = r

    def src(self, name):
        """How an input is given: absent, init (an initializer), const (a Constant node), act, or shape."""
        if not name:
            return "absent"
        if name in self.init:
            return "init=" + short(self.init[name])
        if name in self.const:
            return "const=" + short(self.const[name])
        return "act" if name in self.act else "shape-computed" if name in self.shape else "const-computed"

    def form(self, n):
        a, op, s = attrs(n), n.op_type, self.src
        ins = list(n.input)
        if op == "Resize":
            return "mode=%s ctm=%s nearest=%s roi=%s scales=%s sizes=%s" % (
                short(a.get("mode", b"nearest")), short(a.get("coordinate_transformation_mode", b"half_pixel")),
                short(a.get("nearest_mode", b"round_prefer_floor")), *(s(x) for x in (ins + ["", "", ""])[1:4]))
        if op == "Pad":
            return "mode=%s pads=%s value=%s" % (short(a.get("mode", b"constant")), s(ins[1]) if len(ins) > 1
                                                 else short(a.get("pads")), s(ins[2]) if len(ins) > 2 else "absent")
        if op == "Clip":
            return "min=%s max=%s" % tuple(s(x) for x in (ins + ["", ""])[1:3])
        if op == "Split":
            return "axis=%s split=%s outputs=%d" % (a.get("axis", 0), s(ins[1]) if len(ins) > 1
                                                    else short(a.get("split", "equal")), len(n.output))
        if op == "ReduceMean":
            return "axes=%s keepdims=%s rank=%s" % (a.get("axes"), a.get("keepdims", 1), self.rank.get(ins[0]))
        if op == "Gather":
            return "axis=%s data=%s indices=%s" % (a.get("axis", 0), s(ins[0]).split("=")[0], s(ins[1]))
        if op == "Slice":  # the kinds of starts and ends, the values of axes and steps
            return "data=%s starts=%s ends=%s axes=%s steps=%s" % (
                s(ins[0]).split("=")[0], *(s(x).split("=")[0] if i < 2 else s(x)
                                           for i, x in enumerate((ins + ["", "", "", ""])[1:5])))
        if op == "Expand":
            return "input=%s shape=%s" % (s(ins[0]).split("=")[0], s(ins[1]))
        if op == "Concat":
            kinds = sorted(set(s(x).split("=")[0] for x in ins))
            return "axis=%s inputs=%s n%s rank=%s" % (a.get("axis"), ",".join(kinds), "=%d" % len(ins) if len(ins) <= 4
                                                       else ">4", self.rank.get(ins[0]))
        if op in ("Where", "Equal", "Pow", "Sqrt", "Erf", "Range"):
            return "inputs=" + ",".join(s(x) if op in ("Pow", "Range") else s(x).split("=")[0] for x in ins)
        if op == "Einsum":
            return "equation=%s ranks=%s" % (short(a["equation"]), [self.rank.get(x) for x in ins])
        if op == "LayerNormalization":
            return "axis=%s epsilon=%.3g scale/bias=%s" % (a.get("axis", -1), a.get("epsilon", 1e-5),
                                                           [s(x).split("=")[0] for x in ins[1:]])
        if op == "Cast":
            return "to=%s input=%s" % (onnx.TensorProto.DataType.Name(a["to"]), s(ins[0]).split("=")[0])
        if op == "ConstantOfShape":
            return "value=%s shape=%s" % (short(a.get("value", "0.0f")), s(ins[0]).split("=")[0])
        if op == "AveragePool":
            return "kernel=%s strides=%s pads=%s ceil_mode=%s count_include_pad=%s" % (
                a.get("kernel_shape"), a.get("strides"), a.get("pads"), a.get("ceil_mode", 0),
                a.get("count_include_pad", 0))
        if op == "MatMul":
            return "ranks=%s B=%s" % ([self.rank.get(x) for x in ins], s(ins[1]).split("=")[0])
        if op == "Reshape":
            shape = s(ins[1])
            if "=" in shape:  # a constant: its rank, and whether it holds -1 or 0 (copy this dimension)
                v = numpy_helper.to_array(self.init[ins[1]]) if ins[1] in self.init \
                    else numpy_helper.to_array(self.const[ins[1]])
                shape = "%s(rank %d%s%s)" % (shape.split("=")[0], v.size, ", -1" * bool((v == -1).any()),
                                             ", 0" * bool((v == 0).any()))
            return "shape=%s in_rank=%s allowzero=%s" % (shape, self.rank.get(ins[0]), a.get("allowzero", 0))
        if op == "Softmax":
            return "axis=%s rank=%s" % (a.get("axis"), self.rank.get(ins[0]))
        return None


def models_str(models):
    return ", ".join(sorted(models))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--supported", default="", help="comma-separated op types the backend supports")
    parser.add_argument("--models", default="", help="only these models (comma-separated)")
    args = parser.parse_args()
    wanted = set(m for m in args.models.split(",") if m)
    uses = collections.defaultdict(lambda: collections.defaultdict(set))  # op -> opset -> models
    counts = collections.defaultdict(collections.Counter)  # op -> kind -> nodes
    forms = collections.defaultdict(lambda: collections.defaultdict(set))  # op -> form -> (model, opset)
    supported = set(o for o in args.supported.split(",") if o)
    missing = collections.defaultdict(set)  # (opset, missing ops, missing ops on activations) -> models
    paths = sorted(glob.glob(os.path.join(args.dir, "*", "opset*", "model.onnx")))
    opsets = set()
    for path in paths:
        model = path.split(os.sep)[-3]
        opset = int(path.split(os.sep)[-2][len("opset"):])
        if wanted and model not in wanted:
            continue
        opsets.add(opset)
        m = Model(path)
        missing[(opset, ",".join(sorted({n.op_type for n, _ in m.nodes} - supported)),
                 ",".join(sorted({n.op_type for n, k in m.nodes if k == "act"} - supported)))].add(model)
        for n, kind in m.nodes:
            uses[n.op_type][opset].add(model)
            counts[n.op_type][kind] += 1
            f = m.form(n)
            if f is not None:
                forms[n.op_type]["%-5s %s" % (kind, f)].add((model, opset))
    opsets = sorted(opsets)
    print("%d exports under %s, opsets %s, %d op types" % (len(paths), args.dir, opsets, len(uses)))
    if supported:
        print("\n== op types not in --supported (models needing each)")
        for op in sorted(set(uses) - supported):
            print("%-20s %s" % (op, models_str(set().union(*uses[op].values()))))
        print("\n== exports by missing ops: all of them / those on activations (the rest fold away)")
        for (opset, all_ops, act_ops), models in sorted(missing.items()):
            print("opset%d  all: %s\n        act: %s\n        %s" % (opset, all_ops or "-", act_ops or "-",
                                                                  models_str(models)))
    print("\n== op types: nodes on activations / on shape arithmetic / on constants only; models per opset")
    for op in sorted(uses):
        print("%-20s act=%d shape=%d const=%d" % (op, *(counts[op][k] for k in ("act", "shape", "const"))))
        per = [uses[op].get(o, set()) for o in opsets]
        if all(p == per[0] for p in per):
            print("    all opsets (%d): %s" % (len(per[0]), models_str(per[0])))
        else:
            for o, p in zip(opsets, per):
                print("    opset%d (%d): %s" % (o, len(p), models_str(p)))
    print("\n== forms (act: on activations; shape: downstream of Shape only; const: constants only)")
    for op in sorted(forms):
        print(op)
        for f, users in sorted(forms[op].items(), key=lambda kv: -len(kv[1])):
            by_model = collections.defaultdict(list)
            for model, opset in users:
                by_model[model].append(opset)
            label = ", ".join("%s%s" % (m, "" if len(o) == len(opsets) else "@" + "/".join(map(str, sorted(o))))
                              for m, o in sorted(by_model.items()))
            print("    %s\n        %s" % (f, label))


if __name__ == "__main__":
    main()
