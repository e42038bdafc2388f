"""PyTorch eager's row of benchmark W10: stories15M.pt of gen_llama_models.py
loaded into llama_torch.Transformer (model.py's names, a preallocated KV
cache), batch 1, under no_grad, on --threads threads (torch.set_num_threads).
128 greedy tokens from token 1 (one forward per token), and the 256-token
prompt of llama_check.json in one forward (its next token). One warm-up,
then the median of --reps runs. One JSON line: name, build 'pytorch',
threads, ids, prefill_next, decode_ms, tok_s, prefill_ms, reps.

    /usr/bin/python3 bench/models/torch_llama_bench.py --threads 1 --reps 5
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_torch import Config, Transformer  # noqa: E402


def load(out):
    with open(os.path.join(out, 'llama_check.json')) as f:
        check = json.load(f)
    c = check['config']
    model = Transformer(Config(c['dim'], c['hidden_dim'], c['n_layers'], c['n_heads'], c['n_kv_heads'],
                               c['vocab_size'], c['seq_len'], c['norm_eps']), tied=c['tied'])
    model.load_state_dict(torch.load(os.path.join(out, 'stories15M.pt')))
    return model.eval(), check


def timed(fn, reps):
    fn()
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return sorted(times)[reps // 2], result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--out', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'out'))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, check = load(a.out)
    steps = len(check['gen_ids'])
    decode_ms, (ids, _) = timed(lambda: model.greedy([check['gen_start']], steps), a.reps)
    prefill_ms, (nxt, _) = timed(lambda: model.greedy(check['prompt'], 1), a.reps)
    print(json.dumps({'name': 'W10 stories15M', 'build': 'pytorch', 'threads': torch.get_num_threads(), 'ids': ids,
                      'prefill_next': nxt[0], 'decode_ms': round(decode_ms, 3),
                      'tok_s': round(steps * 1000 / decode_ms, 2), 'prefill_ms': round(prefill_ms, 3),
                      'reps': a.reps}))


if __name__ == '__main__':
    main()
