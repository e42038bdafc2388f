// torch.linalg.eigh / eigvalsh (issue 25): every case of
// tests/fixtures/eigh.json (PyTorch 1.13, made by
// tests/fixtures/gen_eigh_fixtures.py) on each wasm variant at 1 and 2
// threads: dtypes, shapes, strides, eigenvalues (within the case's tolerance
// of the largest), and, since eigenvector signs are free, A V = V diag(L) and
// V^T V = I on the UPLO triangle's matrix plus |V|'s columns where the
// eigenvalue is well separated; gradients of a sign-independent loss; errors
// as WeftErrors with PyTorch's message; nothing leaks. Then a finite
// difference gradcheck in float64, a double backward against 1.13, the node
// name, and the JS spellings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkLayout, compareValues as compare, fixtureNumber as num, fixtureTensor as makeTensor, loadFixture, valuesOf as flat }
  from './fixtures-lib.mjs';
import { init, WeftError, counts, replayAtThreads, VARIANTS } from './helpers.mjs';

const { cases, double } = loadFixture('eigh.json');

// the symmetric matrix eigh solves: the UPLO triangle mirrored, in float64
function symmetric(a, uplo) {
  const d = a.double();
  const tri = (uplo ?? 'L').toUpperCase() === 'L' ? d.tril() : d.triu();
  const strict = (uplo ?? 'L').toUpperCase() === 'L' ? d.tril(-1) : d.triu(1);
  return tri.add(strict.transpose(-2, -1));
}

// A V = V diag(L), V^T V = I, relative to ||A||
function checkDecomposition(wt, a, c, vals, vecs) {
  const n = a.shape.at(-1);
  if (n === 0 || a.numel() === 0) return [];
  const tol = a.dtype === 'float32' ? 1e-5 : 1e-12;
  const s = symmetric(a, c.options.UPLO);
  const v = vecs.double(), l = vals.double();
  const scale = Math.max(1, s.abs().max().item());
  const res = s.matmul(v).sub(v.mul(l.unsqueeze(-2))).abs().max().item() / scale;
  const orth = v.transpose(-2, -1).matmul(v).sub(wt.eye(n, { dtype: 'float64' })).abs().max().item();
  const bad = [];
  if (!(res <= tol * n)) bad.push(`A V - V diag(L): ${res}`);
  if (!(orth <= tol * n)) bad.push(`V^T V - I: ${orth}`);
  return bad;
}

// |V|'s separated columns against PyTorch's
function checkColumns(vecs, want, c) {
  const n = want.size.at(-1);
  const got = flat(vecs); // toArray reads any layout
  const w = want.values.map(num);
  const bad = [];
  for (const [b, j] of c.separated) {
    for (let i = 0; i < n; i++) {
      const at = b * n * n + i * n + j;
      if (!(Math.abs(Math.abs(got[at]) - Math.abs(w[at])) <= c.vtol)) {
        bad.push(`|V|[${b}][${i}][${j}] ${Math.abs(got[at])}, want ${Math.abs(w[at])}`);
        break;
      }
    }
  }
  return bad;
}

const fnOf = (wt, c) => wt.linalg[c.fn];

// sum(cotL * L) + sum(cotV * V * V): independent of the eigenvectors' signs
function loss(wt, c, r, cot) {
  const [l, v] = c.fn === 'eigh' ? [r.eigenvalues, r.eigenvectors] : [r, null];
  const a = l.mul(cot[0]).sum();
  return v ? a.add(v.mul(v).mul(cot[1]).sum()) : a;
}

function checkGrads(wt, c, a, made) {
  const x = a.detach().requiresGrad_();
  made.push(x);
  const cot = c.cot.map((s) => makeTensor(wt, s, made));
  wt.tidy(() => loss(wt, c, fnOf(wt, c)(x, c.options), cot).backward());
  const g = x.grad;
  if (!g) return ['no gradient'];
  const tol = a.dtype === 'float32' ? 2e-3 : 1e-8;
  const bad = compare('grad', flat(g), c.grads[0].values, tol);
  g.dispose();
  return bad;
}

function replay(wt, c) {
  const made = [];
  const a = makeTensor(wt, c.args[0], made);
  const bad = [];
  let r;
  try {
    r = fnOf(wt, c)(a, c.options);
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
  }
  if (r && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
  const outs = r ? (c.fn === 'eigh' ? [...r] : [r]) : [];
  if (r && c.expect.error === undefined) {
    c.expect.forEach((w, k) => bad.push(...checkLayout(`out ${k}`, outs[k], w)));
    if (!bad.length) {
      bad.push(...compare('eigenvalues', flat(outs[0]), c.expect[0].values, c.tol, false));
      if (c.fn === 'eigh') {
        bad.push(...wt.tidy(() => checkDecomposition(wt, a, c, outs[0], outs[1])));
        bad.push(...checkColumns(outs[1], c.expect[1], c));
      }
    }
    if (c.grads) bad.push(...checkGrads(wt, c, a, made));
  }
  for (const t of [...outs, ...made]) t.dispose();
  return bad.map((b) => `${c.fn} ${JSON.stringify(c.options)} ${c.args.map((x) => `${x.dtype}[${x.size}]`)}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`linalg.eigh / eigvalsh match PyTorch 1.13 (${cases.length} cases, ${variant})`, async (t) => {
    const wt = await init({ variant });
    const before = counts(wt);
    replayAtThreads(t, wt, cases, replay);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

// d loss / dX against central differences, X -> (X + X^T) / 2 (a symmetric
// perturbation: eigh's gradient is 1.13's symmetric one, not the triangle's)
test('linalg.eigh / eigvalsh: gradcheck in float64', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const n = 5;
    const x0 = wt.tensor([...Array(n * n)].map((_, i) => Math.sin(1.7 * i + 0.3) + (i % (n + 1) === 0 ? i / 3 : 0)),
      { dtype: 'float64' }).reshape([n, n]);
    const cot = [wt.tensor([0.3, -1.2, 0.8, 0.5, -0.7], { dtype: 'float64' }),
      wt.tensor([...Array(n * n)].map((_, i) => Math.cos(0.9 * i)), { dtype: 'float64' }).reshape([n, n])];
    for (const fn of ['eigh', 'eigvalsh']) {
      for (const UPLO of ['L', 'U']) {
        const c = { fn, options: { UPLO } };
        const f = (x) => loss(wt, c, wt.linalg[fn](x.add(x.transpose(0, 1)).div(2), { UPLO }), cot);
        const x = x0.detach().requiresGrad_();
        f(x).backward();
        const gt = x.grad;
        const g = flat(gt);
        gt.dispose();
        const h = 1e-6, base = flat(x0);
        for (let i = 0; i < n * n; i++) {
          const at = (d) => f(wt.tensor(base.map((v, j) => (j === i ? v + d : v)), { dtype: 'float64' }).reshape([n, n])).item();
          const fd = (at(h) - at(-h)) / (2 * h);
          assert.ok(Math.abs(fd - g[i]) <= 1e-6 * (1 + Math.abs(fd)), `${fn} ${UPLO} d/dX[${i}]: ${g[i]}, finite differences ${fd}`);
        }
      }
    }
  });
  assert.deepEqual(counts(wt), before);
});

// the backward recorded (createGraph) and differentiated again, against 1.13's
test('linalg.eigh: double backward', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const made = [];
    const a = makeTensor(wt, double.a, made).detach().requiresGrad_();
    const w = makeTensor(wt, double.w, made);
    const { eigenvalues: l, eigenvectors: v } = wt.linalg.eigh(a);
    const [g] = wt.autograd.grad(l.pow(2).sum().add(w.mul(v).mul(v).sum()), [a], { createGraph: true });
    const [gg] = wt.autograd.grad(g.sum(), [a]);
    assert.deepEqual(compare('g', flat(g), double.g.values, 1e-10), []);
    assert.deepEqual(compare('gg', flat(gg), double.gg.values, 1e-9), []);
  });
  assert.deepEqual(counts(wt), before);
});

test('linalg.eigh: the node, the JS spellings, float32 reconstruction on a bigger batch', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const a = wt.tensor([[2, 1], [1, 2]], { dtype: 'float64' }).requiresGrad_();
    const { eigenvalues, eigenvectors } = wt.linalg.eigh(a);
    assert.deepEqual(eigenvalues.toArray().map((v) => Math.round(v * 1e12) / 1e12), [1, 3]);
    for (const t of [eigenvalues, eigenvectors, wt.linalg.eigvalsh(a)]) {
      const fn = t.gradFn;
      assert.equal(fn.name, 'LinalgEighBackward0');
      fn.dispose();
    }
    const [l2] = wt.linalg.eigh(a, { UPLO: 'U' });
    assert.deepEqual(flat(l2), flat(eigenvalues));
    assert.deepEqual(flat(wt.linalg.eigvalsh(a, 'U')), flat(wt.linalg.eigvalsh(a, { UPLO: 'U' })));
    // eigenvalues only when no gradient is wanted: an empty V from _linalg_eigh
    assert.deepEqual(wt._linalgEigh(a.detach(), 'L', false).eigenvectors.shape, [0]);
    for (const n of [3, 17, 64]) {
      const m = wt.randn([4, n, n]);
      const s = m.add(m.transpose(-2, -1));
      const [l, v] = wt.linalg.eigh(s);
      const res = s.matmul(v).sub(v.mul(l.unsqueeze(-2))).abs().max().item() / s.abs().max().item();
      assert.ok(res < 1e-5 * n, `float32 n=${n}: A V - V diag(L) ${res}`);
      const vals = flat(l);
      assert.ok(vals.every((x, i) => i % n === 0 || vals[i - 1] <= x), 'ascending');
    }
  });
  const eye = wt.eye(3);
  assert.throws(() => wt.linalg.eigh(eye, { uplo: 'L' }), /unexpected option 'uplo'/);
  eye.dispose();
  assert.deepEqual(counts(wt), before);
});
