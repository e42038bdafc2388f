"""PyTorch native's row of benchmark W9: the models of gen_cnn_models.py
(same seed, same weights), eval, batch 1, 3x224x224, under no_grad, NCHW and
channels_last, on --threads threads (torch.set_num_threads). Warm-up, then
the median of --reps runs. One JSON line per model and layout:
name, build 'pytorch-native', layout, threads, ms, reps.

    /usr/bin/python3 bench/models/torch_cnn_bench.py --threads 1 --reps 15
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_cnn_models import build  # noqa: E402


def median_ms(fn, reps, clock):
    now = time.process_time if clock == 'cpu' else time.perf_counter
    warm_end = time.perf_counter() + 1.0
    r = 0
    while r < 3 or time.perf_counter() < warm_end:
        fn()
        r += 1
    times = []
    for _ in range(reps):
        t0 = now()
        fn()
        times.append((now() - t0) * 1000)
    return sorted(times)[reps // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--reps', type=int, default=15)
    ap.add_argument('--clock', choices=['wall', 'cpu'], default='wall')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x = torch.rand(1, 3, 224, 224)
    for name in ['resnet18', 'mobilenet_v2']:
        for layout in ['nchw', 'channels_last']:
            fmt = torch.channels_last if layout == 'channels_last' else torch.contiguous_format
            model = build(name).to(memory_format=fmt)
            xi = x.contiguous(memory_format=fmt)
            with torch.no_grad():
                ms = median_ms(lambda: model(xi), a.reps, a.clock)
            print(json.dumps({'name': f'W9 {name}', 'build': 'pytorch-native', 'layout': layout,
                              'threads': torch.get_num_threads(), 'ms': round(ms, 3), 'reps': a.reps,
                              **({'clock': 'cpu'} if a.clock == 'cpu' else {})}), flush=True)


if __name__ == '__main__':
    main()
