"""Weights and PyTorch's reference token ids for benchmark W10.

llama2.c's stories15M configuration (dim 288, hidden_dim 768, 6 layers,
6 heads, 6 key/value heads, vocab 32000, seq_len 256) with random weights
from a seed (llama_torch.random_model: N(0, 0.02), norm weights 1 + N(0, 0.1)),
an output classifier of its own (not tied to the embedding, so that greedy
tokens depend on the context instead of repeating the current one). Written
to bench/models/out/ (gitignored, ~120 MB):

  stories15M.bin     llama2.c's legacy (v0) checkpoint: 7 int32 (dim, hidden_dim,
                     n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative
                     vocab_size says the classifier is not shared), then float32
                     token_embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3
                     (each over all layers), rms_final, the rotary cos and sin
                     tables, and the classifier when not shared
  stories15M.pt      torch.save(state_dict()) with model.py's names
  llama_check.json   the config, the 256-token prompt (ids from the seed), and
                     PyTorch's greedy ids: 128 from token 1, and the one after the prompt

Run with /usr/bin/python3 (torch 1.13): python3 gen_llama_models.py [outdir]
"""
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_torch import Config, random_model  # noqa: E402

SEED = 24
GEN_STEPS = 128
PROMPT_LEN = 256


def write_legacy(model, path):
    """llama2.c's v0 checkpoint of model (run.c reads it)."""
    c = model.config
    tied = model.output.weight is model.tok_embeddings.weight
    layers = model.layers
    tensors = [model.tok_embeddings.weight]
    for pick in (lambda l: l.attention_norm.weight, lambda l: l.attention.wq.weight, lambda l: l.attention.wk.weight,
                 lambda l: l.attention.wv.weight, lambda l: l.attention.wo.weight, lambda l: l.ffn_norm.weight,
                 lambda l: l.feed_forward.w1.weight, lambda l: l.feed_forward.w2.weight,
                 lambda l: l.feed_forward.w3.weight):
        tensors += [pick(layer) for layer in layers]
    tensors += [model.norm.weight, model.freqs_cos[:c.seq_len], model.freqs_sin[:c.seq_len]]
    if not tied:
        tensors.append(model.output.weight)
    with open(path, 'wb') as f:
        f.write(struct.pack('<7i', c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
                            c.vocab_size if tied else -c.vocab_size, c.seq_len))
        for t in tensors:
            f.write(t.detach().contiguous().float().numpy().astype('<f4').tobytes())


def reference(model, prompt, steps):
    """PyTorch's greedy ids: steps from token 1, and the one after prompt with its logits."""
    gen_ids, _ = model.greedy([1], steps)
    prefill, logits = model.greedy(prompt, 1)
    return {'gen_start': 1, 'gen_ids': gen_ids, 'prompt': prompt, 'prefill_next': prefill[0],
            'prefill_logits': logits[0].tolist()}


def config_json(c, tied):
    return {'dim': c.dim, 'hidden_dim': c.hidden_dim, 'n_layers': c.n_layers, 'n_heads': c.n_heads,
            'n_kv_heads': c.n_kv_heads, 'vocab_size': c.vocab_size, 'seq_len': c.seq_len, 'norm_eps': c.norm_eps,
            'tied': tied}


def generate(c, seed, out_dir, name, steps, prompt_len, tied=False, keep_logits=False):
    """Writes <name>.bin and <name>.pt into out_dir; returns the config and PyTorch's reference ids."""
    torch.manual_seed(seed)
    model = random_model(c, seed, tied)
    write_legacy(model, os.path.join(out_dir, f'{name}.bin'))
    torch.save(model.state_dict(), os.path.join(out_dir, f'{name}.pt'))
    gen = torch.Generator().manual_seed(seed + 1)
    prompt = torch.randint(0, c.vocab_size, (prompt_len,), generator=gen).tolist()
    ref = reference(model, prompt, steps)
    if not keep_logits:
        del ref['prefill_logits']
    return {'name': name, 'seed': seed, 'config': config_json(c, tied), **ref}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'out')
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(2)
    check = generate(Config(), SEED, out, 'stories15M', GEN_STEPS, PROMPT_LEN)
    with open(os.path.join(out, 'llama_check.json'), 'w') as f:
        json.dump(check, f)
    print(f'wrote {out}/stories15M.bin, stories15M.pt, llama_check.json')


if __name__ == '__main__':
    main()
