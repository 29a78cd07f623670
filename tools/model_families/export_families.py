#!/usr/bin/python3
"""Export models of the families users bring (segmentation, U-Nets, super-resolution, PReLU nets,
recurrent models, dynamic-axes exports, every interpolation mode, transformers) to ONNX with PyTorch's outputs.

tunefarm's agreement test (tests/compiler/torchvision_test.cc, ModelFamilies) compiles each
OUT/<model>/opset<N>/model.onnx with the shapes in input_shapes.txt (when the export has symbolic
axes), runs it on input.npy and compares with output.npy. It finds the directory through
TUNEFARM_FAMILIES_DIR.

Run with an interpreter that has torch, torchvision and onnx (Debian 12: apt install python3-torch
python3-torchvision python3-onnx; /usr/bin/python3):

    /usr/bin/python3 tools/model_families/export_families.py --out DIR [--opsets 11,13,17] [--models a,b]

Random weights (torch.manual_seed(--seed) before each construction; nothing is downloaded), eval mode,
batch 1. Each (model, opset) gets OUT/<model>/opset<N>/{model.onnx, input.npy, output.npy, meta.json}
and, for dynamic-axes exports, input_shapes.txt (one NAME:DIMS line per input). A model the exporter
cannot write at an opset is recorded in meta.json ("status") and skipped.
"""
import argparse
import json
import os
import time
import traceback

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class Unwrap(nn.Module):
    """torchvision's segmentation models return a dict; the export takes its 'out'."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class UNet(nn.Module):
    """A small U-Net: two down steps (conv, max pool), two up steps (ConvTranspose 2x2 stride 2, skip concat)."""

    def __init__(self, c=16):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                                 nn.Conv2d(o, o, 3, padding=1), nn.ReLU(inplace=True))

        self.e1, self.e2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.u2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.d2 = block(4 * c, 2 * c)
        self.u1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.d1 = block(2 * c, c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.d2(torch.cat([self.u2(m), e2], 1))
        d1 = self.d1(torch.cat([self.u1(d2), e1], 1))
        return self.head(d1)


class ESPCN(nn.Module):
    """Shi et al.'s sub-pixel super-resolution net: three convolutions and PixelShuffle (DepthToSpace CRD)."""

    def __init__(self, r=3):
        super().__init__()
        self.c1, self.c2, self.c3 = nn.Conv2d(1, 64, 5, padding=2), nn.Conv2d(64, 32, 3, padding=1), nn.Conv2d(32, r * r, 3, padding=1)
        self.shuffle = nn.PixelShuffle(r)

    def forward(self, x):
        return self.shuffle(self.c3(torch.tanh(self.c2(torch.tanh(self.c1(x))))))


class PReLUNet(nn.Module):
    """A face-embedding style net: conv, batch norm and PReLU stages, a linear embedding with PReLU."""

    def __init__(self):
        super().__init__()
        layers, c = [], 3
        for o in (16, 32, 64):
            layers += [nn.Conv2d(c, o, 3, stride=2, padding=1), nn.BatchNorm2d(o), nn.PReLU(o)]
            c = o
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(64 * 14 * 14, 128)
        self.act = nn.PReLU()

    def forward(self, x):
        return self.act(self.fc(torch.flatten(self.body(x), 1)))


class Interpolations(nn.Module):
    """Every F.interpolate mode PyTorch exports as Resize/Upsample, summed after a shared conv."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        out = F.interpolate(y, scale_factor=2, mode="nearest")
        out = out + F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
        out = out + F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=True)
        out = out + F.interpolate(y, scale_factor=2, mode="bicubic", align_corners=False)
        out = out + F.interpolate(y, size=(y.shape[2] * 2, y.shape[3] * 2), mode="bilinear", align_corners=False)
        return out + F.interpolate(F.interpolate(y, scale_factor=0.5, mode="bilinear", align_corners=False), scale_factor=4,
                                   mode="nearest")


class Recurrent(nn.Module):
    """A sequence model: an embedding-sized input through a stacked (bi)directional LSTM or GRU, then a linear head."""

    def __init__(self, cell, bidirectional):
        super().__init__()
        self.rnn = cell(32, 48, num_layers=2, batch_first=True, bidirectional=bidirectional)
        self.head = nn.Linear(48 * (2 if bidirectional else 1), 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


class Encoder(nn.Module):
    """A BERT-like encoder over embeddings [batch, sequence, hidden]: torch's nn.TransformerEncoder
    (post-norm, GELU FFN), then a linear head. torch 1.13 exports it only with grad mode on: its fused
    inference path has no ONNX form."""

    def __init__(self, layers, hidden, heads, ffn):
        super().__init__()
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(hidden, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


def vit_b_16():
    """torchvision's vit_b_16 with a random head: torchvision zeroes it, and an output check would compare zeros."""
    model = torchvision.models.vit_b_16(weights=None)
    nn.init.normal_(model.heads.head.weight, std=0.02)
    nn.init.normal_(model.heads.head.bias, std=0.02)
    return model


# name -> (constructor, input shape, dynamic axes of the input or None)
MODELS = {
    "fcn_resnet50": (lambda: Unwrap(torchvision.models.segmentation.fcn_resnet50(weights=None, weights_backbone=None,
                                                                                  aux_loss=False)), [1, 3, 224, 224], None),
    "deeplabv3_mobilenet_v3_large": (lambda: Unwrap(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False)), [1, 3, 224, 224], None),
    "lraspp_mobilenet_v3_large": (lambda: Unwrap(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None)), [1, 3, 224, 224], None),
    "unet": (UNet, [1, 3, 128, 128], None),
    "espcn": (ESPCN, [1, 1, 96, 96], None),
    "prelu_net": (PReLUNet, [1, 3, 112, 112], None),
    "interpolations": (Interpolations, [1, 3, 32, 40], None),
    "resnet18_dynamic": (lambda: torchvision.models.resnet18(weights=None), [1, 3, 224, 224], {0: "batch", 2: "height", 3: "width"}),
    "lstm": (lambda: Recurrent(nn.LSTM, True), [1, 16, 32], None),
    "gru": (lambda: Recurrent(nn.GRU, False), [1, 16, 32], None),
    # Transformers (issue 32): the small encoder, BERT-base's configuration, ViT-B/16.
    "encoder_small": (lambda: Encoder(4, 256, 4, 1024), [1, 128, 256], None),
    "bert_base": (lambda: Encoder(12, 768, 12, 3072), [1, 128, 768], None),
    "vit_b_16": (vit_b_16, [1, 3, 224, 224], None),
}


def export(name, opset, out_dir, seed):
    make, shape, dynamic = MODELS[name]
    torch.manual_seed(seed)
    model = make().eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        y = model(x)
    os.makedirs(out_dir, exist_ok=True)
    start = time.time()
    torch.onnx.export(model, x, os.path.join(out_dir, "model.onnx"), opset_version=opset, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": dynamic} if dynamic else None, do_constant_folding=True)
    np.save(os.path.join(out_dir, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(out_dir, "output.npy"), y.numpy().astype(np.float32))
    if dynamic:
        with open(os.path.join(out_dir, "input_shapes.txt"), "w") as f:
            f.write("input:" + "x".join(str(d) for d in shape) + "\n")
    return time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--opsets", default="11,13,17")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    manifest = []
    for name in args.models.split(","):
        for opset in [int(o) for o in args.opsets.split(",")]:
            out_dir = os.path.join(args.out, name, "opset%d" % opset)
            meta = {"model": name, "opset": opset, "input_shape": MODELS[name][1]}
            try:
                meta["export_s"] = round(export(name, opset, out_dir, args.seed), 2)
                meta["status"] = "ok"
            except Exception as e:  # recorded, the rest go on
                meta["status"] = "".join(traceback.format_exception_only(type(e), e)).strip()[:400]
                os.makedirs(out_dir, exist_ok=True)
            with open(os.path.join(out_dir, "meta.json"), "w") as f:
                json.dump(meta, f, indent=1)
            manifest.append(meta)
            print("%-30s opset %2d  %s" % (name, opset, meta["status"]), flush=True)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
