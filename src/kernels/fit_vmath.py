#!/usr/bin/env python3
"""Minimax polynomials of vunary_math.c (Remez exchange on a dense grid, mpmath).

Each fit is the polynomial P in the variable v minimizing max |w(v) (g(v) - P(v))|
over [a, b]; the kernel rounds the coefficients to float (printed with 10
significant digits, lowest degree first). Run: python3 src/kernels/fit_vmath.py [name]
(about a minute per fit)."""
import struct
import sys

import mpmath as mp

mp.mp.dps = 40


def remez(g, w, a, b, deg, iters=30, M=1500):
    a, b = mp.mpf(a), mp.mpf(b)
    n = deg + 1
    grid = [a + (b - a) * (1 - mp.cos(mp.pi * i / (M - 1))) / 2 for i in range(M)]
    gv, wv = [g(x) for x in grid], [w(x) for x in grid]
    ref = [a + (b - a) * (1 - mp.cos(mp.pi * i / n)) / 2 for i in range(n + 1)]
    best = None
    for _ in range(iters):
        A, rhs = mp.matrix(n + 1, n + 1), mp.matrix(n + 1, 1)
        for i, x in enumerate(ref):
            for j in range(n):
                A[i, j] = x**j
            A[i, n] = (-1) ** i / (w(x) + mp.mpf(10) ** -30)
            rhs[i] = g(x)
        sol = mp.lu_solve(A, rhs)
        c = [sol[j] for j in range(n)]
        err = [wv[i] * (gv[i] - mp.polyval(c[::-1], grid[i])) for i in range(M)]
        runs, cur = [], None  # one extremum per run of equal sign
        for i, e in enumerate(err):
            s = e >= 0
            if cur is None or s != cur[0]:
                cur = [s, i]
                runs.append(cur)
            elif abs(e) > abs(err[cur[1]]):
                cur[1] = i
        idx = [r[1] for r in runs]
        while len(idx) > n + 1:
            idx.pop(0 if abs(err[idx[0]]) < abs(err[idx[-1]]) else -1)
        mx = max(abs(e) for e in err)
        if best is None or mx < best[0]:
            best = (mx, c)
        if len(idx) < n + 1:
            break
        ref = [grid[i] for i in idx]
    return best


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


sq = mp.sqrt
L = mp.log(2) / 2 * mp.mpf("1.002")  # exp's |r| after the float reduction
ZLOG = ((sq(2) - 1) / (sq(2) + 1)) ** 2 * mp.mpf("1.001")  # s^2 for m in [sqrt(1/2), sqrt(2))
PI4 = (mp.pi / 4 * mp.mpf("1.01")) ** 2
G = lambda u: mp.erfc(u) * mp.exp(u * u)  # erfcx
C = mp.mpf(0.48)  # centre of t = 2/(2+a) over a in [0.5, 10.5]

FITS = {
    # exp(r) = 1 + r + r^2 P(r), relative
    "exp": (lambda r: (mp.exp(r) - 1 - r) / r**2 if r else mp.mpf(1) / 2, lambda r: r**2 / mp.exp(r), -L, L, 4),
    # expm1(r) = r + r^2 P(r), relative
    "expm1": (lambda r: (mp.exp(r) - 1 - r) / r**2 if r else mp.mpf(1) / 2,
              lambda r: abs(r**2 / mp.expm1(r)) if r else 0 * r, -L, L, 5),
    # log1p(f) = 2s + s z Q(z), z = s^2 (fdlibm's R = z Q)
    "log": (lambda z: (2 * mp.atanh(sq(z)) / sq(z) - 2) / z if z else mp.mpf(2) / 3, lambda z: z, 0, ZLOG, 3),
    # tanh(x) = x + x z P(z), z = x^2 <= 0.81
    "tanh": (lambda z: (mp.tanh(sq(z)) / sq(z) - 1) / z if z else -mp.mpf(1) / 3,
             lambda z: z / (mp.tanh(sq(z)) / sq(z)) if z else 0 * z, 0, mp.mpf(0.81), 7),
    # erf(x) = x + x Q(z), z = x^2 <= 1
    "erf": (lambda z: mp.erf(sq(z)) / sq(z) - 1 if z else 2 / sq(mp.pi) - 1,
            lambda z: 1 / (mp.erf(sq(z)) / sq(z)) if z else sq(mp.pi) / 2, 0, 1, 7),
    # erfcx(a) = t Q(t - C), t = 2/(2+a), a in [0.5, 10.5]
    "erfc": (lambda s: G(2 / (s + C) - 2) / (s + C), lambda s: 1 / (G(2 / (s + C) - 2) / (s + C)),
             2 / (2 + mp.mpf(10.5)) - C, 2 / (2 + mp.mpf(0.5)) - C, 9),
    # sin(r) = r + r z S(z), |r| <= pi/4 * 1.01
    "sin": (lambda z: (mp.sin(sq(z)) / sq(z) - 1) / z if z else -mp.mpf(1) / 6,
            lambda z: z / (mp.sin(sq(z)) / sq(z)) if z else 0 * z, 0, PI4, 3),
    # cos(r) = 1 - z/2 + z^2 C(z)
    "cos": (lambda z: (mp.cos(sq(z)) - 1 + z / 2) / z**2 if z else mp.mpf(1) / 24,
            lambda z: z**2 / mp.cos(sq(z)), 0, PI4, 3),
}

if __name__ == "__main__":
    for name in sys.argv[1:] or FITS:
        g, w, a, b, deg = FITS[name]
        mx, c = remez(g, w, a, b, deg)
        print(f"{name}: max weighted error {float(mx):.3g}")
        print("  " + ", ".join(f"{f32(x):.9e}f" for x in c))
