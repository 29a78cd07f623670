"""Exports a torchvision model (random init, seed 0, as ../shared/models were exported) to ONNX for
bench_models.py: python3 export_torchvision.py MODEL OUT.onnx (opset 13, input 'data' 1x3x224x224)."""
import sys

import torch
import torchvision


def main():
    name, out = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, x, out, opset_version=13, input_names=["data"], output_names=["output"])


if __name__ == "__main__":
    main()
