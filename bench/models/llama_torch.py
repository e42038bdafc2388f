"""A Llama-style decoder in PyTorch eager with a preallocated KV cache.

The module names and shapes are llama2.c's model.py (tok_embeddings,
layers.N.attention.wq/wk/wv/wo, layers.N.feed_forward.w1/w2/w3,
layers.N.attention_norm, layers.N.ffn_norm, norm, output), so its
state_dict() is the one the benchmark's weft row loads; the rotary tables
are non-persistent buffers as there. RMSNorm (eps 1e-5), rotary embeddings
on interleaved (even, odd) pairs with theta 10000, SwiGLU feed-forward,
grouped key/value heads when n_kv_heads < n_heads.

Used by gen_llama_models.py (reference token ids) and torch_llama_bench.py
(the benchmark's PyTorch rows). torch 1.13 has no fused attention, so
attention is softmax(q k^T / sqrt(d) + causal mask) v.
"""
import math
from dataclasses import dataclass

import torch
from torch import nn
import torch.nn.functional as F


@dataclass
class Config:
    dim: int = 288
    hidden_dim: int = 768
    n_layers: int = 6
    n_heads: int = 6
    n_kv_heads: int = 6
    vocab_size: int = 32000
    seq_len: int = 256
    norm_eps: float = 1e-5

    @property
    def head_dim(self):
        return self.dim // self.n_heads


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary_tables(head_dim, seq_len, theta=10000.0):
    """cos and sin of pos * theta^(-2i/head_dim), [seq_len, head_dim / 2]."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(seq_len).float(), inv)
    return torch.cos(angles), torch.sin(angles)


def rotate(x, cos, sin):
    """Rotates each (even, odd) pair of x [B, L, H, D] by the angles of its position (cos, sin [L, D/2])."""
    pairs = x.float().reshape(*x.shape[:-1], -1, 2)
    re, im = pairs[..., 0], pairs[..., 1]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((re * cos - im * sin, re * sin + im * cos), dim=-1).flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = c.n_heads, c.n_kv_heads, c.head_dim
        self.wq = nn.Linear(c.dim, c.n_heads * c.head_dim, bias=False)
        self.wk = nn.Linear(c.dim, c.n_kv_heads * c.head_dim, bias=False)
        self.wv = nn.Linear(c.dim, c.n_kv_heads * c.head_dim, bias=False)
        self.wo = nn.Linear(c.n_heads * c.head_dim, c.dim, bias=False)
        # the cache: [1, n_kv_heads, seq_len, head_dim], written in place at each step's positions
        self.register_buffer('k_cache', torch.zeros(1, c.n_kv_heads, c.seq_len, c.head_dim), persistent=False)
        self.register_buffer('v_cache', torch.zeros(1, c.n_kv_heads, c.seq_len, c.head_dim), persistent=False)

    def forward(self, x, start, cos, sin):
        b, length, _ = x.shape
        q = self.wq(x).view(b, length, self.n_heads, self.head_dim)
        k = self.wk(x).view(b, length, self.n_kv_heads, self.head_dim)
        v = self.wv(x).view(b, length, self.n_kv_heads, self.head_dim)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        end = start + length
        self.k_cache[:, :, start:end] = k.transpose(1, 2)
        self.v_cache[:, :, start:end] = v.transpose(1, 2)
        keys, values = self.k_cache[:, :, :end], self.v_cache[:, :, :end]
        rep = self.n_heads // self.n_kv_heads
        if rep > 1:
            keys, values = keys.repeat_interleave(rep, dim=1), values.repeat_interleave(rep, dim=1)
        q = q.transpose(1, 2)
        scores = torch.matmul(q, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if length > 1:  # query i (position start + i) sees keys 0 .. start + i
            mask = torch.full((length, end), float('-inf')).triu(start + 1)
            scores = scores + mask
        out = torch.matmul(F.softmax(scores.float(), dim=-1).type_as(q), values)
        return self.wo(out.transpose(1, 2).reshape(b, length, -1))


class FeedForward(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.w1 = nn.Linear(c.dim, c.hidden_dim, bias=False)
        self.w2 = nn.Linear(c.hidden_dim, c.dim, bias=False)
        self.w3 = nn.Linear(c.dim, c.hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Attention(c)
        self.feed_forward = FeedForward(c)
        self.attention_norm = RMSNorm(c.dim, c.norm_eps)
        self.ffn_norm = RMSNorm(c.dim, c.norm_eps)

    def forward(self, x, start, cos, sin):
        h = x + self.attention(self.attention_norm(x), start, cos, sin)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, c, tied=False):
        super().__init__()
        self.config = c
        self.tok_embeddings = nn.Embedding(c.vocab_size, c.dim)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.n_layers))
        self.norm = RMSNorm(c.dim, c.norm_eps)
        self.output = nn.Linear(c.dim, c.vocab_size, bias=False)
        if tied:
            self.output.weight = self.tok_embeddings.weight
        cos, sin = rotary_tables(c.head_dim, c.seq_len)
        self.register_buffer('freqs_cos', cos, persistent=False)
        self.register_buffer('freqs_sin', sin, persistent=False)

    def forward(self, tokens, start=0):
        """Logits of the last position of tokens [1, L] at positions start .. start + L - 1."""
        length = tokens.shape[1]
        cos, sin = self.freqs_cos[start:start + length], self.freqs_sin[start:start + length]
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, start, cos, sin)
        return self.output(self.norm(h[:, -1:, :]))[:, 0]

    @torch.no_grad()
    def greedy(self, prompt, steps):
        """The steps token ids that follow prompt (a list), greedy, one forward per new token but the last."""
        logits = self(torch.tensor([prompt]), 0)
        out = [int(logits.argmax(-1))]
        pos = len(prompt)
        while len(out) < steps:
            logits = self(torch.tensor([[out[-1]]]), pos)
            out.append(int(logits.argmax(-1)))
            pos += 1
        return out, logits


def random_model(c, seed, tied=False):
    """Weights ~ N(0, 0.02) (model.py's init scale), norm weights 1 + N(0, 0.1), from seed."""
    model = Transformer(c, tied)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith('norm.weight'):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(0.02 * torch.randn(p.shape, generator=gen))
    return model.eval()
