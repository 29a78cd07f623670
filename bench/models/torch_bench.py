"""PyTorch latency for bench_models.py: python3 torch_bench.py MODEL THREADS REPEAT -> one JSON line.

MODEL is resnet18 or mobilenet_v2 (torchvision, random init as ../shared/models was exported)."""
import json
import sys
import time

import torch
import torchvision


def main():
    name, threads, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    x = torch.randn(1, 3, 224, 224)
    with torch.inference_mode():
        for _ in range(3):
            model(x)
        ms = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(x)
            ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    mid = len(ms) // 2
    median = ms[mid] if len(ms) % 2 else (ms[mid - 1] + ms[mid]) / 2
    print(json.dumps({"median_ms": median, "min_ms": ms[0], "mean_ms": sum(ms) / len(ms)}))


if __name__ == "__main__":
    main()
