#!/usr/bin/python3
"""Export every torchvision classification model to ONNX, with a reference input and output.

tunefarm's torchvision agreement test reads these exports: it compiles each OUT/<model>/opset<N>/model.onnx,
runs it on input.npy and compares with output.npy (PyTorch's own output). The test finds the directory
through the environment variable TUNEFARM_TORCHVISION_DIR.

Run with an interpreter that has torch, torchvision and onnx (on Debian: /usr/bin/python3):

    /usr/bin/python3 tools/torchvision/export_torchvision.py --out DIR [--opsets 13,17] [--models a,b]
        [--max-params N] [--seed 2026] [--threads N] [--retry]

Models are built with random weights (weights=None, torch.manual_seed(seed) before construction; nothing is
downloaded), in eval mode, batch 1, input 1x3x224x224 (inception_v3: 299) drawn from a normal distribution
seeded by --seed. Each (model, opset) gets OUT/<model>/opset<N>/{model.onnx, input.npy, output.npy,
meta.json}; OUT/manifest.json lists every entry's meta (model, opset, input/output shape, params, onnx
bytes, export seconds, status: "ok", "skipped: ..." or the error message). meta.json is written last, so a
rerun skips entries already done (ok or failed; --retry redoes the failed ones) and one model's failure is
recorded without stopping the rest. Models whose weights exceed ~1.8 GB (vit_h_14,
regnet_y_128gf) are exported to a path, so torch writes their weights as ONNX external data beside
model.onnx; the others go through memory. torch 1.13 cannot export aten::zero
(swin_v2_*), so a symbolic for it is registered below.
"""
import argparse
import gc
import io
import json
import os
import sys
import time
import traceback
import warnings

import numpy as np
import torch
import torchvision

# Models whose weights exceed this are exported with external data (protobuf's limit is 2 GB).
LARGE_MODEL_BYTES = 1800 * 2**20

# Constructor arguments so that construction without pretrained weights works and the graph has one output.
EXTRA_KWARGS = {
    "inception_v3": {"aux_logits": False, "init_weights": True},
    "googlenet": {"aux_logits": False, "init_weights": True},
}
IMAGE_SIZE = {"inception_v3": 299}  # every other model's constructor default is 224


def zero_symbolic(g, self):
    """aten::zero (swin_v2's qkv_bias[k:2k].zero_()), which torch 1.13's exporter lacks: zeros like self."""
    return torch.onnx.symbolic_opset9.zeros_like(g, self)


torch.onnx.register_custom_op_symbolic("aten::zero", zero_symbolic, 9)


def input_shape(name):
    size = IMAGE_SIZE.get(name, 224)
    return [1, 3, size, size]


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def write_manifest(out):
    entries = []
    for model in sorted(os.listdir(out)):
        model_dir = os.path.join(out, model)
        if not os.path.isdir(model_dir):
            continue
        for sub in sorted(os.listdir(model_dir)):
            meta = os.path.join(model_dir, sub, "meta.json")
            if os.path.exists(meta):
                with open(meta) as f:
                    entries.append(json.load(f))
    entries.sort(key=lambda e: (e["model"], e["opset"]))
    text = '{"torch": "%s", "torchvision": "%s", "entries": [\n%s\n]}\n' % (
        torch.__version__, torchvision.__version__, ",\n".join(json.dumps(e) for e in entries))
    with open(os.path.join(out, "manifest.json.tmp"), "w") as f:
        f.write(text)
    os.replace(os.path.join(out, "manifest.json.tmp"), os.path.join(out, "manifest.json"))
    return entries


def export_model(name, opsets, args):
    """Exports one model at every requested opset that is not done yet; writes a meta.json per opset."""
    todo = []
    for opset in opsets:
        meta_path = os.path.join(args.out, name, "opset%d" % opset, "meta.json")
        if os.path.exists(meta_path):
            with open(meta_path) as f:
                status = json.load(f)["status"]
            if status == "ok" or (not status.startswith("skipped") and not args.retry):
                print("%-22s opset%-2d already done (%s)" % (name, opset, status[:60]), flush=True)
                continue
        todo.append(opset)
    if not todo:
        return
    torch.manual_seed(args.seed)
    model = getattr(torchvision.models, name)(weights=None, **EXTRA_KWARGS.get(name, {})).eval()
    # Some layers start at zero (the ViT heads: weight and bias); an all-zero output would compare
    # nothing, so every all-zero parameter tensor is redrawn (seeded, small).
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() > 0 and not p.any():
                p.normal_(0.0, 0.02)
    params = sum(p.numel() for p in model.parameters())
    shape = input_shape(name)
    x = torch.from_numpy(np.random.default_rng(args.seed).standard_normal(shape).astype(np.float32))
    y = None
    if not args.max_params or params <= args.max_params:
        with torch.no_grad():
            y = model(x).numpy().astype(np.float32)
    for opset in todo:
        entry_dir = os.path.join(args.out, name, "opset%d" % opset)
        os.makedirs(entry_dir, exist_ok=True)
        meta = {"model": name, "opset": opset, "input_shape": shape, "output_shape": None, "params": params,
                "onnx_bytes": None, "export_seconds": None, "status": "ok"}
        if y is None:
            meta["status"] = "skipped: %d params > --max-params %d" % (params, args.max_params)
        else:
            meta["output_shape"] = list(y.shape)
            try:
                t0 = time.perf_counter()
                path = os.path.join(entry_dir, "model.onnx")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if params * 4 < LARGE_MODEL_BYTES:
                        buf = io.BytesIO()
                        torch.onnx.export(model, (x,), buf, opset_version=opset, do_constant_folding=True,
                                          input_names=["data"], output_names=["output"])
                        with open(path, "wb") as f:
                            f.write(buf.getbuffer())
                        del buf
                    else:
                        # Over protobuf's 2 GB: exported to a path, torch writes the weights as ONNX
                        # external data files beside model.onnx (tunefarm's importer reads them).
                        torch.onnx.export(model, (x,), path, opset_version=opset, do_constant_folding=True,
                                          input_names=["data"], output_names=["output"])
                meta["export_seconds"] = round(time.perf_counter() - t0, 2)
                meta["onnx_bytes"] = sum(os.path.getsize(os.path.join(entry_dir, f)) for f in os.listdir(entry_dir))
                np.save(os.path.join(entry_dir, "input.npy"), x.numpy())
                np.save(os.path.join(entry_dir, "output.npy"), y)
            except Exception as e:  # recorded, and the next export goes on
                msg = str(e).strip().splitlines()
                meta["status"] = "%s: %s" % (type(e).__name__, msg[0] if msg else "")
                traceback.print_exc(limit=2)
        write_json(os.path.join(entry_dir, "meta.json"), meta)
        print("%-22s opset%-2d %6.1fM params  %-8s %7s s  %s" % (
            name, opset, params / 1e6, "%.0fMB" % (meta["onnx_bytes"] / 2**20) if meta["onnx_bytes"] else "-",
            meta["export_seconds"] or "-", meta["status"][:100]), flush=True)
        write_manifest(args.out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output directory (TUNEFARM_TORCHVISION_DIR for the test)")
    parser.add_argument("--opsets", default="13,17", help="comma-separated ONNX opsets (default 13,17)")
    parser.add_argument("--models", default="", help="comma-separated model names (default: all)")
    parser.add_argument("--max-params", type=int, default=0, help="skip models with more parameters")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the weights and of the input")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    parser.add_argument("--retry", action="store_true", help="redo entries that failed before")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    known = torchvision.models.list_models(module=torchvision.models)
    names = [m for m in args.models.split(",") if m] or known
    unknown = [m for m in names if m not in known]
    if unknown:
        parser.error("unknown models: %s" % ",".join(unknown))
    opsets = [int(o) for o in args.opsets.split(",")]
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        try:
            export_model(name, opsets, args)
        except Exception as e:  # construction or the PyTorch run failed: record it for every opset
            traceback.print_exc(limit=2)
            for opset in opsets:
                entry_dir = os.path.join(args.out, name, "opset%d" % opset)
                if os.path.exists(os.path.join(entry_dir, "model.onnx")):
                    continue  # done by an earlier run
                os.makedirs(entry_dir, exist_ok=True)
                write_json(os.path.join(entry_dir, "meta.json"), {
                    "model": name, "opset": opset, "input_shape": input_shape(name), "output_shape": None,
                    "params": None, "onnx_bytes": None, "export_seconds": None,
                    "status": "%s: %s" % (type(e).__name__, str(e).strip().split("\n")[0])})
            print("%-22s failed: %s" % (name, e), flush=True)
        gc.collect()
    entries = write_manifest(args.out)
    ok = sum(e["status"] == "ok" for e in entries)
    skipped = sum(e["status"].startswith("skipped") for e in entries)
    print("manifest: %d entries, %d ok, %d skipped, %d failed" % (len(entries), ok, skipped,
                                                                    len(entries) - ok - skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
