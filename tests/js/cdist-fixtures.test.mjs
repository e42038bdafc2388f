// torch.cdist (issue 25): every case of tests/fixtures/cdist.json (PyTorch
// 1.13, made by tests/fixtures/gen_cdist_fixtures.py) through
// wt.cdist(x1, x2, { p, computeMode }) on each wasm variant, at 1 and 2
// threads: dtype, shape, strides and values; the gradients of
// sum(cdist * w) for x1 and x2 (every p, both paths, broadcast batch dims,
// ties and zero distances); PyTorch's errors as WeftErrors; nothing leaks.
// Then the gradients added with it: linalg.det at singular matrices and
// slogdet's logabsdet, against 1.13 and against central differences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, replayAtThreads, VARIANTS } from './helpers.mjs';

const fx = loadFixture('cdist.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
// the GEMM path rounds |a|^2 - 2ab + |b|^2 in float32: its errors are those of the squared norms
const TOL = { float32: 2e-5, float64: 1e-11 };

function input(wt, s, made, requiresGrad) {
  const data = s.values.map((v) => (s.dtype === 'int64' ? BigInt(v) : num(v)));
  const base = wt.tensor(data, { dtype: s.dtype, requiresGrad: requiresGrad && s.dtype.startsWith('float') });
  const leaf = base.reshape(s.size);
  made.push(base, leaf);
  if (!s.t) return { t: leaf, leaf: base };
  const t = leaf.t();
  made.push(t);
  return { t, leaf: base };
}

function flatOf(t) {
  const v = t.toArray();
  return Array.isArray(v) ? v.flat(Infinity) : [v];
}

function compare(bad, what, got, want, tol) {
  if (got.length !== want.length) return bad.push(`${what}: ${got.length} values, want ${want.length}`);
  const i = want.findIndex((x, j) => !close(got[j], num(x), tol));
  if (i >= 0) bad.push(`${what}[${i}] ${got[i]}, want ${want[i]}`);
}

// a gradient in the input's logical order (a transposed input's leaf holds its transpose)
function gradOf(x, spec, made) {
  const g = x.leaf.grad;
  made.push(g);
  if (!spec.t) return flatOf(g);
  const m = g.reshape(spec.size), tt = m.t();
  made.push(m, tt);
  return flatOf(tt);
}

function replayCdist(wt, c) {
  const made = [], bad = [];
  const what = `cdist(${JSON.stringify(c.x1.size)}${c.x1.t ? 'ᵀ' : ''}, ${JSON.stringify(c.x2.size)}, p=${c.p}, ${c.mode}) ${c.x1.dtype}`;
  const grads = !!c.grads;
  const x1 = input(wt, c.x1, made, grads), x2 = input(wt, c.x2, made, grads);
  let r;
  try {
    r = wt.cdist(x1.t, x2.t, { p: num(c.p), computeMode: c.mode });
    made.push(r);
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`${what}: unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`${what}: threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`${what}: message "${e.message}" lacks "${c.expect.error}"`);
  }
  if (r && c.expect.error !== undefined) bad.push(`${what}: expected "${c.expect.error}", got a result`);
  if (r && c.expect.error === undefined) {
    const w = c.expect, tol = TOL[w.dtype];
    if (r.dtype !== w.dtype) bad.push(`${what}: dtype ${r.dtype}, want ${w.dtype}`);
    else if (JSON.stringify(r.shape) !== JSON.stringify(w.size)) bad.push(`${what}: shape ${r.shape}, want ${w.size}`);
    else if (JSON.stringify(r.stride()) !== JSON.stringify(w.stride)) bad.push(`${what}: stride ${r.stride()}, want ${w.stride}`);
    else compare(bad, what, flatOf(r), w.values, tol);
    if (grads && !bad.length) {
      const wflat = wt.tensor(c.grads.w.map(num), { dtype: w.dtype }), weights = wflat.reshape(w.size);
      const prod = r.mul(weights), loss = prod.sum();
      made.push(wflat, weights, prod, loss);
      loss.backward();
      compare(bad, `${what} x1.grad`, gradOf(x1, c.x1, made), c.grads.x1, tol * 10);
      compare(bad, `${what} x2.grad`, gradOf(x2, c.x2, made), c.grads.x2, tol * 10);
    }
  }
  for (const t of made) t.dispose();
  return bad;
}

for (const variant of VARIANTS) {
  test(`cdist matches PyTorch 1.13 (${fx.cdist.length} cases, ${variant})`, async (t) => {
    const wt = await init({ variant });
    const before = counts(wt);
    replayAtThreads(t, wt, fx.cdist, replayCdist);
    assert.deepEqual(counts(wt), before);
  });
}

test('cdist: the GEMM path when PyTorch takes it (more than 25 rows, p = 2), its gradient nodes', async () => {
  const wt = await init({ variant: VARIANTS[0] });
  const a = wt.randn([30, 3], { requiresGrad: true }), b = wt.randn([4, 3], { requiresGrad: true });
  const small = wt.randn([4, 3], { requiresGrad: true });
  const mm = wt.cdist(a, b), exact = wt.cdist(small, b), forced = wt.cdist(small, b, { computeMode: 'use_mm_for_euclid_dist' });
  const p1 = wt.cdist(a, b, { p: 1 });
  assert.equal(mm.gradFn.name, 'ViewBackward0'); // _euclidean_dist viewed to the output shape, as 1.13
  assert.equal(exact.gradFn.name, 'CdistBackward0');
  assert.equal(forced.gradFn.name, 'ViewBackward0');
  assert.equal(p1.gradFn.name, 'CdistBackward0');
  assert.equal(typeof a.cdist, 'undefined', 'torch.Tensor has no cdist');
  for (const x of [a, b, small, mm, exact, forced, p1]) x.dispose();
});

// ---- linalg gradients ----
function replayLinalg(wt, c) {
  const made = [], bad = [];
  const what = `${c.op}(${JSON.stringify(c.A.size)}) ${c.A.dtype}${c.create_graph ? ' createGraph' : ''}`;
  const A = input(wt, c.A, made, true).leaf;
  const shaped = A.reshape(c.A.size);
  made.push(shaped);
  try {
    const both = c.op === 'det' ? null : wt.linalg.slogdet(shaped);
    const out = both ? both[1] : wt.linalg.det(shaped);
    if (both) made.push(both[0]);
    const wflat = wt.tensor(c.w, { dtype: c.A.dtype }), w = wflat.reshape(out.shape);
    const prod = out.mul(w), loss = prod.sum();
    made.push(out, wflat, w, prod, loss);
    const [g] = wt.autograd.grad(loss, shaped, { createGraph: c.create_graph });
    made.push(g);
    if (c.expect.error) bad.push(`${what}: expected "${c.expect.error}", got a gradient`);
    else {
      const tol = TOL[c.A.dtype] * 10;
      compare(bad, `${what} values`, flatOf(out), c.expect.values, tol);
      compare(bad, `${what} grad`, flatOf(g), c.expect.grad, tol);
      if (c.create_graph && !g.requiresGrad) bad.push(`${what}: createGraph gradient does not require grad`);
    }
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`${what}: unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`${what}: threw ${e.name}: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`${what}: message "${e.message}" lacks "${c.expect.error}"`);
  }
  for (const t of made) t.dispose();
  return bad;
}

for (const variant of VARIANTS) {
  test(`linalg.det / slogdet gradients match PyTorch 1.13 (${fx.linalg.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const bad = fx.linalg.flatMap((c) => replayLinalg(wt, c));
    assert.deepEqual(bad, []);
    assert.deepEqual(counts(wt), before);
  });
}

// central differences in float64: f(A) = sum(w * op(A)) along each entry of A
test('gradcheck: cdist (every p), det, slogdet in float64', async () => {
  const wt = await init({ variant: VARIANTS[0] });
  const before = counts(wt);
  const h = 1e-6;
  const check = (name, sizes, f) => {
    const leaves = sizes.map((s) => wt.randn(s, { dtype: 'float64', requiresGrad: true }));
    const y = f(...leaves);
    const grads = wt.autograd.grad(y, leaves);
    leaves.forEach((x, i) => {
      const base = flatOf(leaves[i]), analytic = flatOf(grads[i]);
      for (let k = 0; k < base.length; k++) {
        const at = (d) => {
          const v = base.slice(); v[k] += d;
          const flat = wt.tensor(v, { dtype: 'float64' }), t = flat.reshape(sizes[i]);
          const args = leaves.map((l, j) => (j === i ? t : l.detach()));
          const out = f(...args), val = out.item();
          out.dispose(); flat.dispose(); t.dispose(); args.forEach((a, j) => j !== i && a.dispose());
          return val;
        };
        const numeric = (at(h) - at(-h)) / (2 * h);
        assert.ok(close(analytic[k], numeric, 1e-5), `${name}: d/dx${i}[${k}] ${analytic[k]}, numeric ${numeric}`);
      }
    });
    y.dispose(); grads.forEach((g) => g.dispose()); leaves.forEach((l) => l.dispose());
  };
  const w = wt.randn([3, 30], { dtype: 'float64' });
  for (const p of [1, 1.5, 2, 3, Infinity, 0.5]) {
    check(`cdist p=${p}`, [[3, 4], [30, 4]], (a, b) => { const d = wt.cdist(a, b, { p }), m = d.mul(w), s = m.sum(); d.dispose(); m.dispose(); return s; });
  }
  check('cdist mm', [[3, 4], [30, 4]], (a, b) => {
    const d = wt.cdist(a, b, { computeMode: 'use_mm_for_euclid_dist' }), m = d.mul(w), s = m.sum();
    d.dispose(); m.dispose(); return s;
  });
  check('det', [[2, 3, 3]], (a) => { const d = wt.linalg.det(a), s = d.sum(); d.dispose(); return s; });
  check('slogdet', [[2, 3, 3]], (a) => {
    const [sg, l] = wt.linalg.slogdet(a), s = l.sum(); sg.dispose(); l.dispose(); return s;
  });
  w.dispose();
  assert.deepEqual(counts(wt), before);
});
