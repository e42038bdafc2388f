"""PyTorch native's rows of bench/cast_bench.mjs: 4,194,304 float32 copied
with y.copy_(x) into preallocated float16 / bfloat16 tensors and back, on
--threads threads (torch.set_num_threads). Warm-up, then the median of --reps
runs. One JSON line per workload: name, build 'pytorch-native', threads, ms,
GB/s (bytes read + written / time).

    /usr/bin/python3 bench/torch_cast_bench.py --threads 1 --reps 15
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'models'))
from torch_cnn_bench import median_ms  # noqa: E402  (warm-up, then the median)

N = 4194304


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--reps', type=int, default=15)
    ap.add_argument('--clock', choices=['wall', 'cpu'], default='wall')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    f = (torch.arange(N) % 997).float() * 0.125
    g = torch.empty(N)
    h = torch.empty(N, dtype=torch.float16).copy_(f)
    b = torch.empty(N, dtype=torch.bfloat16).copy_(f)
    work = {
        'f32_to_f16': lambda: h.copy_(f),
        'f16_to_f32': lambda: g.copy_(h),
        'f32_to_bf16': lambda: b.copy_(f),
        'bf16_to_f32': lambda: g.copy_(b),
    }
    for name, fn in work.items():
        ms = median_ms(fn, a.reps, a.clock)
        print(json.dumps({'name': name, 'build': 'pytorch-native', 'threads': a.threads, 'ms': round(ms, 3),
                          'GB/s': round(6 * N / (ms * 1e6), 2), 'reps': a.reps}))


if __name__ == '__main__':
    main()
