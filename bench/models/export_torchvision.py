"""Exports a torchvision model (random init, seed 0, as ../shared/models were exported) to ONNX for
bench_models.py: python3 export_torchvision.py MODEL OUT.onnx [--dynamic-batch] (opset 13, input
'data' 1x3x224x224; with --dynamic-batch its dimension 0 is the symbolic 'batch', as torch's
dynamic_axes writes it, for one artifact over a range of batches: docs/dynamic_shapes.md)."""
import sys

import torch
import torchvision


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2 or any(a not in ("--dynamic-batch",) for a in sys.argv[1:] if a.startswith("--")):
        sys.exit("usage: export_torchvision.py MODEL OUT.onnx [--dynamic-batch]")
    name, out = args
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    x = torch.randn(1, 3, 224, 224)
    dynamic = {"data": {0: "batch"}, "output": {0: "batch"}} if "--dynamic-batch" in sys.argv else None
    torch.onnx.export(model, x, out, opset_version=13, input_names=["data"], output_names=["output"],
                      dynamic_axes=dynamic)


if __name__ == "__main__":
    main()
