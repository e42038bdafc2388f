#!/usr/bin/python3
"""Trains the character-level GPT that the generation page (demo/gpt.html), the Node example
(demo/node/char_gpt.mjs) and tests/js/char-gpt.test.mjs load with wt.load into weft/models' gpt.

The model is nanoGPT's GPT written out here (same module names: transformer.wte, transformer.wpe,
transformer.h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, transformer.ln_f,
lm_head tied to wte; exact GELU; LayerNorm eps 1e-5), so its state dict loads unchanged. The text is
"Pride and Prejudice" (public domain) as Debian's r-cran-janeaustenr ships it, extracted by
extract_austen.py (see TEXT-LICENSE.md). The vocabulary is every printable ASCII character plus
newline, so the page can fine-tune on pasted text whose characters the novel lacks.
    nice -n 10 /usr/bin/python3 demo/gpt/train_char_gpt.py   [env STEPS=n THREADS=n SNAPSHOTS=folder]
One thread does a step (16 windows of 128 characters) in about 0.3 s of CPU with OpenBLAS, so the
committed STEPS take about 8 minutes on an idle machine. Debian's torch links the reference BLAS
(libblas3), 4x slower here; OpenBLAS's libblas.so.3 can be used without touching the system's
choice: apt-get download libopenblas0-pthread, dpkg-deb -x it into a folder and run with
LD_LIBRARY_PATH=<folder>/usr/lib/x86_64-linux-gnu/openblas-pthread OPENBLAS_NUM_THREADS=1.
The learning rate does not depend on STEPS (warmup, then 1/sqrt(step)), so a run of n steps is the
first n steps of any longer one, and SNAPSHOTS keeps the outputs every 100 steps of a long run.
Writes (deterministic for a given machine, committed):
    demo/gpt/char_gpt.pt    torch.save(model.state_dict()): float32 weights, as a user's file
    demo/gpt/char_gpt.json  config (weft/models' gpt config names), vocabulary, training summary
"""
import json
import math
import os
import time

import torch
from torch import nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = "\n" + "".join(chr(c) for c in range(32, 127))
CONFIG = dict(vocabSize=len(VOCAB), blockSize=128, nLayer=4, nHead=4, nEmbd=128, bias=True, dropout=0.0)
SEED = 1337
STEPS = 1600
BATCH = 16
LR, WARMUP = 2e-3, 50
WEIGHT_DECAY = 0.1
VAL_FRACTION = 0.1


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_head = c["nHead"]
        self.c_attn = nn.Linear(c["nEmbd"], 3 * c["nEmbd"], bias=c["bias"])
        self.c_proj = nn.Linear(c["nEmbd"], c["nEmbd"], bias=c["bias"])
        n = c["blockSize"]
        self.register_buffer("mask", torch.ones(n, n, dtype=torch.bool).tril(), persistent=False)
        self.keep_att = False  # the fixture generator reads the probabilities (self.att) when set

    def forward(self, x):
        B, T, C = x.shape
        # [B, T, 3C] -> three [B, nHead, T, headDim]
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                   for t in self.c_attn(x).split(C, dim=2))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = att.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        if self.keep_att:
            self.att = att.detach()
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["nEmbd"], 4 * c["nEmbd"], bias=c["bias"])
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c["nEmbd"], c["nEmbd"], bias=c["bias"])

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c["nEmbd"], elementwise_affine=True)
        self.attn = CausalSelfAttention(c)
        self.ln_2 = nn.LayerNorm(c["nEmbd"], elementwise_affine=True)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocabSize"], c["nEmbd"]),
            wpe=nn.Embedding(c["blockSize"], c["nEmbd"]),
            h=nn.ModuleList([Block(c) for _ in range(c["nLayer"])]),
            ln_f=nn.LayerNorm(c["nEmbd"]),
        ))
        self.lm_head = nn.Linear(c["nEmbd"], c["vocabSize"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT and GPT-2
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2's scaled init of the residual projections
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * c["nLayer"]))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx):
        T = idx.shape[1]
        pos = torch.arange(T, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def encode(text):
    lookup = {ch: i for i, ch in enumerate(VOCAB)}
    return torch.tensor([lookup[ch] for ch in text], dtype=torch.long)


def load_text():
    with open(os.path.join(HERE, "pride-and-prejudice.txt"), encoding="utf-8") as f:
        data = encode(f.read())
    split = int(len(data) * (1 - VAL_FRACTION))
    return data[:split], data[split:]


def batch(data, gen, n=BATCH):
    T = CONFIG["blockSize"]
    start = torch.randint(len(data) - T - 1, (n,), generator=gen)
    x = torch.stack([data[s:s + T] for s in start.tolist()])
    y = torch.stack([data[s + 1:s + T + 1] for s in start.tolist()])
    return x, y


def lr_at(step):
    """Linear warmup, then inverse square-root decay: independent of the run's length, so a
    run of STEPS steps is the first STEPS steps of any longer one."""
    return LR * min((step + 1) / WARMUP, math.sqrt(WARMUP / (step + 1)))


@torch.no_grad()
def evaluate(model, data, gen, batches=4):
    model.eval()
    losses = [F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
              for x, y in (batch(data, gen) for _ in range(batches))]
    model.train()
    return sum(losses) / len(losses)


def optimizer(model):
    # weight decay on matrices only (nanoGPT's split): not on biases, LayerNorm or position rows
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "wpe" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "wpe" not in n)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                              {"params": rest, "weight_decay": 0.0}], lr=LR, betas=(0.9, 0.99))


@torch.no_grad()
def sample(model, prompt, n, gen, temperature=0.8, top_k=20):
    ids = encode(prompt)[None]
    model.eval()
    for _ in range(n):
        logits = model(ids[:, -CONFIG["blockSize"]:])[:, -1] / temperature
        kth = logits.topk(top_k).values[:, -1:]
        probs = logits.masked_fill(logits < kth, float("-inf")).softmax(-1)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=gen)], dim=1)
    model.train()
    return "".join(VOCAB[i] for i in ids[0].tolist())


def save(model, folder, steps, seconds, history):
    state = model.state_dict()
    torch.save(state, os.path.join(folder, "char_gpt.pt"))
    meta = {
        "about": "character-level GPT (nanoGPT's module names) trained by demo/gpt/train_char_gpt.py "
                 "on Pride and Prejudice (demo/gpt/pride-and-prejudice.txt, public domain)",
        "config": CONFIG,
        "vocab": VOCAB,
        "training": {"steps": steps, "batch": BATCH, "lr": LR, "warmup": WARMUP,
                     "weightDecay": WEIGHT_DECAY, "seed": SEED, "seconds": round(seconds, 1),
                     "torch": torch.__version__, "history": history},
        "parameters": sum(p.numel() for p in model.parameters()),
        "stateDict": {k: list(v.shape) for k, v in state.items()},
    }
    with open(os.path.join(folder, "char_gpt.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def main():
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    torch.manual_seed(SEED)
    train, val = load_text()
    model = GPT(CONFIG)
    opt = optimizer(model)
    gen = torch.Generator().manual_seed(SEED)
    eval_gen = torch.Generator().manual_seed(SEED + 1)
    steps = int(os.environ.get("STEPS", STEPS))
    snapshots = os.environ.get("SNAPSHOTS")  # a folder: a numbered copy of the outputs every 100 steps
    t0 = time.time()
    history = []
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        x, y = batch(train, gen)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 99 or step == steps - 1:
            val_loss = evaluate(model, val, eval_gen)
            history.append({"step": step + 1, "train": round(loss.item(), 4), "val": round(val_loss, 4)})
            el = time.time() - t0
            print(f"step {step + 1}/{steps}: loss {loss.item():.4f}, val {val_loss:.4f}, "
                  f"{el:.0f} s (eta {el / (step + 1) * (steps - step - 1):.0f} s)", flush=True)
            if snapshots:
                folder = os.path.join(snapshots, str(step + 1))
                os.makedirs(folder, exist_ok=True)
                save(model, folder, step + 1, el, history)
    print(sample(model, "\"My dear", 300, torch.Generator().manual_seed(0)))
    save(model, HERE, steps, time.time() - t0, history)


if __name__ == "__main__":
    main()
