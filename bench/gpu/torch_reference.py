#!/usr/bin/env python3
"""PyTorch's latency for resnet18 / mobilenet_v2 at batch 1 on the first CUDA device: strict fp32
(no TF32 in cuDNN or matmul), cuDNN autotuning on, the forward pass captured in a CUDA graph and
replayed, GPU time from CUDA events (best of 5 rounds of 100 replays). This is the reference the
GPU check kit (scripts/gpu_check.sh) compares `tunefarm run --device cuda` against.

torchvision's definitions are used when torchvision is installed; otherwise the same
architectures are defined here (random weights either way: latency does not depend on them).

Usage: torch_reference.py MODEL [MODEL...]     MODEL: resnet18 | mobilenet_v2
Prints one JSON object per model: {"model", "ms", "torch", "device", "definition"}.
"""
import json
import sys

import torch
from torch import nn


def conv_bn(cin, cout, k, stride, groups=1, relu6=False, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU6(inplace=True) if relu6 else nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(conv_bn(cin, cout, 3, stride), conv_bn(cout, cout, 3, 1, act=False))
        self.down = None if stride == 1 and cin == cout else conv_bn(cin, cout, 1, stride, act=False)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.body(x) + (x if self.down is None else self.down(x)))


def resnet18():
    layers = [conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [conv_bn(cin, hidden, 1, 1, relu6=True)]
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden, relu6=True), conv_bn(hidden, cout, 1, 1, act=False)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


def mobilenet_v2():
    layers = [conv_bn(3, 32, 3, 2, relu6=True)]
    cin = 32
    for expand, cout, repeats, stride in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                                          (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(repeats):
            layers.append(InvertedResidual(cin, cout, stride if i == 0 else 1, expand))
            cin = cout
    layers += [conv_bn(cin, 1280, 1, 1, relu6=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers)


def build(name):
    try:
        import torchvision  # noqa: F401

        return getattr(torchvision.models, name)(), "torchvision " + torchvision.__version__
    except ImportError:
        return {"resnet18": resnet18, "mobilenet_v2": mobilenet_v2}[name](), "torch.nn (torchvision absent)"


def time_model(name):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    model, definition = build(name)
    model = model.cuda().eval()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    with torch.no_grad():
        for _ in range(20):
            model(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            model(x)
        best = float("inf")
        for _ in range(5):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(100):
                graph.replay()
            stop.record()
            stop.synchronize()
            best = min(best, start.elapsed_time(stop) / 100)
    return {"model": name, "ms": best, "torch": torch.__version__, "device": torch.cuda.get_device_name(0),
            "definition": definition}


if __name__ == "__main__":
    if len(sys.argv) < 2 or any(m not in ("resnet18", "mobilenet_v2") for m in sys.argv[1:]):
        sys.exit("usage: torch_reference.py resnet18|mobilenet_v2 [...]")
    if not torch.cuda.is_available():
        sys.exit("torch_reference.py: PyTorch sees no CUDA device")
    for m in sys.argv[1:]:
        print(json.dumps(time_model(m)), flush=True)
