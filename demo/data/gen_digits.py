#!/usr/bin/python3
"""The 8x8 handwritten digits that scikit-learn ships (UCI optdigits test set: 1,797
images of 8x8 pixels, values 0..16, classes 0..9), converted once to .npy for the
autograd demo's training page and the Node training example (issue 15).

Run with Debian's interpreter (apt-get install python3-sklearn):
    /usr/bin/python3 demo/data/gen_digits.py
Writes (deterministic, committed):
    demo/data/digits-images.npy  uint8 [1797, 8, 8], 0..16 (divide by 16 for [0, 1])
    demo/data/digits-labels.npy  int64 [1797], 0..9 (class indices, as cross_entropy takes them)
"""
import os

import numpy as np
from sklearn.datasets import load_digits

here = os.path.dirname(os.path.abspath(__file__))
d = load_digits()
images = d.images.astype(np.uint8)
assert images.shape == (1797, 8, 8) and (images == d.images).all()
labels = d.target.astype(np.int64)
np.save(os.path.join(here, "digits-images.npy"), images)
np.save(os.path.join(here, "digits-labels.npy"), labels)
print("digits:", images.shape, np.bincount(labels).tolist())
