#!/usr/bin/python3
"""Trains the digits CNN that the drawing demo (demo/digits.html), the Node example
(demo/node/digits_cnn.mjs) and tests/js/digits-cnn.test.mjs load with wt.load (issue 23).

A small PyTorch CNN over scikit-learn's 8x8 digits (demo/data/digits-*.npy, made by
gen_digits.py), trained on one core with a fixed seed in a few seconds:
    /usr/bin/python3 demo/data/train_digits_cnn.py
Writes (deterministic, committed):
    demo/data/digits_cnn.pt          torch.save(model.state_dict()): the weights, as a user's file
    demo/data/digits_cnn_logits.json PyTorch's eval-mode logits for every test image, with the
                                     split, the preprocessing and the repr, for the tests

Preprocessing (the JS side does exactly this): an image's pixels are counts 0..16 of ink in
4x4 blocks of a 32x32 bitmap (how optdigits was made); the input is pixels / 16 as float32,
shape [N, 1, 8, 8]. Split: every 6th image (index 5, 11, ...) is the test set, as the
training page's split in demo/train/digits.mjs. Training sees each image shifted by up to
one pixel (zeros shifted in), so a digit drawn off-centre still reads.
"""
import json
import os
import time

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_EVERY = 6
SEED = 0
EPOCHS = 40
BATCH = 64
LR = 3e-3


class DigitsCNN(nn.Module):
    """Two conv blocks (conv, batch norm, ReLU, 2x2 max pool: 8x8 -> 4x4 -> 2x2), then an MLP head."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Linear(64, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def load():
    images = np.load(os.path.join(HERE, "digits-images.npy"))  # uint8 [1797, 8, 8], 0..16
    labels = np.load(os.path.join(HERE, "digits-labels.npy"))  # int64 [1797]
    x = torch.from_numpy(images.astype(np.float32) / 16).unsqueeze(1)
    y = torch.from_numpy(labels)
    idx = np.arange(len(labels))
    test = idx % TEST_EVERY == TEST_EVERY - 1
    return x[~test], y[~test], x[test], y[test], idx[test]


def shift(x, gen):
    """Each image moved by dy, dx in {-1, 0, 1}: pad by one with zeros, crop at a random offset."""
    padded = F.pad(x, (1, 1, 1, 1))
    off = torch.randint(0, 3, (x.shape[0], 2), generator=gen)
    return torch.stack([padded[i, :, a:a + 8, b:b + 8] for i, (a, b) in enumerate(off.tolist())])


def train(model, x, y):
    gen = torch.Generator().manual_seed(SEED)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, EPOCHS)
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(y), generator=gen)
        total = 0.0
        for i in range(0, len(y), BATCH):
            b = perm[i:i + BATCH]
            loss = F.cross_entropy(model(shift(x[b], gen)), y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        sched.step()
        if epoch % 10 == 9:
            print(f"epoch {epoch + 1}: train loss {total / len(y):.4f}")


def main():
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    x_train, y_train, x_test, y_test, test_idx = load()
    model = DigitsCNN()
    t0 = time.time()
    train(model, x_train, y_train)
    model.eval()
    with torch.no_grad():
        logits = model(x_test)
    pred = logits.argmax(1)
    correct = int((pred == y_test).sum())
    print(f"trained in {time.time() - t0:.1f} s; test accuracy {correct}/{len(y_test)} = {correct / len(y_test):.4f}")
    torch.save(model.state_dict(), os.path.join(HERE, "digits_cnn.pt"))
    out = {
        "about": "PyTorch 1.13 eval-mode logits of demo/data/digits_cnn.pt (train_digits_cnn.py) on the test images",
        "preprocess": "x = pixels / 16 (float32 [N, 1, 8, 8])",
        "testEvery": TEST_EVERY,
        "testIndices": test_idx.tolist(),
        "labels": y_test.tolist(),
        "predictions": pred.tolist(),
        "correct": correct,
        "accuracy": correct / len(y_test),
        "repr": repr(model),
        "stateDict": {k: {"dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape)}
                      for k, v in model.state_dict().items()},
        "logits": [[float(f"{v:.9g}") for v in row] for row in logits.tolist()],
    }
    with open(os.path.join(HERE, "digits_cnn_logits.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
