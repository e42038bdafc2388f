// Issue 25's data ops against PyTorch 1.13: every case of
// tests/fixtures/dataops.json (made by tests/fixtures/gen_dataops_fixtures.py)
// through wt.bincount, wt.histc, wt.oneHot, wt.indexAdd / x.indexAdd_,
// wt.indexFill / x.indexFill_, wt.normalize, wt.cosineSimilarity and
// wt.pairwiseDistance on each wasm variant: dtype, shape, strides, values,
// the gradients of sum(result * gradOut), errors (WeftErrors with PyTorch's
// message) and no leaks. Then indexAdd and bincount give the same bits at 1
// and 3 threads, the modules, and the wt.nn.functional names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, throwsWeft, VARIANTS } from './helpers.mjs';

const fixture = loadFixture('dataops.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const TOL = { float32: 5e-6, float64: 1e-12 };
const GRAD_TOL = { float32: 3e-5, float64: 1e-10 };
const flat = (t) => [t.toArray()].flat(Infinity).map(Number);

function compare(bad, what, got, want, tol) {
  const w = want.map((v) => Number(num(v)));
  const i = w.findIndex((x, j) => !(Object.is(got[j], x) || (Number.isNaN(x) && Number.isNaN(got[j])) || close(got[j], x, tol)));
  if (got.length !== w.length) bad.push(`${what}: ${got.length} values, want ${w.length}`);
  else if (i >= 0) bad.push(`${what}[${i}] ${got[i]}, want ${w[i]}`);
}

function replay(wt, c) {
  const made = [];
  const tensor = (s, grad) => {
    const conv = s.dtype === 'int64' ? BigInt : s.dtype === 'bool' ? Boolean : (v) => Number(num(v));
    const base = wt.tensor(s.storage.map(conv), { dtype: s.dtype });
    let t = base.asStrided(s.size, s.stride, 0);
    made.push(base, t);
    if (grad) made.push(t = t.detach().requiresGrad_());
    return t;
  };
  const grads = c.grads ?? {};
  const args = c.args.map((a, i) => ('t' in a ? tensor(a.t, String(i) in grads) : num(a.v)));
  const opts = Object.fromEntries(Object.entries(c.options).map(([k, v]) => [k, num(v)]));
  const tail = Object.keys(opts).length ? [opts] : [];
  const bad = [];
  let r;
  try {
    r = c.method ? args[0][c.fn](...args.slice(1), ...tail) : wt[c.fn](...args, ...tail);
    if (c.method && r !== args[0]) bad.push('an in-place method returns its tensor');
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
  }
  if (r && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
  if (r && c.expect.error === undefined) {
    const w = c.expect;
    if (r.dtype !== w.dtype) bad.push(`dtype ${r.dtype}, want ${w.dtype}`);
    else if (JSON.stringify(r.shape) !== JSON.stringify(w.size)) bad.push(`shape ${r.shape}, want ${w.size}`);
    else {
      if (!c.method && JSON.stringify(r.stride()) !== JSON.stringify(w.stride)) bad.push(`strides ${r.stride()}, want ${w.stride}`);
      compare(bad, 'value', flat(r), w.values, TOL[w.dtype] ?? 0);
      if (c.grad_out && Object.keys(grads).length) {
        try {
          wt.tidy(() => r.mul(tensor(c.grad_out)).sum().backward());
        } catch (e) {
          bad.push(`backward: ${e.message}`);
        }
        for (const [k, want] of Object.entries(grads)) {
          const g = args[k].grad;
          if (!g) bad.push(`no gradient for argument ${k}`);
          else compare(bad, `grad ${k}`, flat(g), want, GRAD_TOL[args[k].dtype]);
          g?.dispose();
        }
      }
    }
  }
  if (!c.method) r?.dispose();
  for (const x of made) x.dispose();
  return bad;
}

for (const variant of VARIANTS) {
  test(`data ops match PyTorch 1.13 (${fixture.cases.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const failures = [];
    for (const c of fixture.cases) {
      const bad = replay(wt, c);
      if (bad.length) failures.push(`${c.fn} ${JSON.stringify(c.args.map((a) => a.t?.size ?? a.v))} ${JSON.stringify(c.options)}: ${bad.join('; ')}`);
    }
    assert.deepEqual(failures.slice(0, 12), []);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

test('indexAdd and bincount: the same bits at 1 and 3 threads, duplicates accumulating', async () => {
  const wt = await init({ variant: 'simd-threads' });
  const before = counts(wt);
  wt.tidy(() => {
    wt.manualSeed(7);
    const self = wt.randn([64, 300]);
    const src = wt.randn([500, 300]).mul(1e3);
    const idx = wt.randint(0, 64, [500]); // each row about 8 times
    const labels = wt.randint(0, 50, [20000]);
    const weights = wt.randn([20000]);
    const run = (n) => {
      wt.setNumThreads(n);
      return [self.indexAdd(0, idx, src, { alpha: 0.3 }), self.t().indexAdd(1, idx, src.t()),
        wt.bincount(labels, { weights }), wt.bincount(labels)].map((t) => Array.from(t.contiguous().data()));
    };
    const one = run(1);
    const three = run(3);
    wt.setNumThreads(1);
    one.forEach((a, i) => assert.deepEqual(three[i], a, `result ${i}`));
    assert.equal(one[3].reduce((s, v) => s + Number(v), 0), 20000);
  });
  assert.deepEqual(counts(wt), before);
});

test('in place with autograd, modules, wt.nn.functional, options', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const leaf = wt.randn([4, 2]).requiresGrad_();
    const src = wt.randn([3, 2]).requiresGrad_();
    const y = leaf.mul(2);
    y.indexAdd_(0, wt.tensor([3n, 1n, 3n]), src, { alpha: 2 });
    const fn = y.gradFn;
    assert.equal(fn.name, 'IndexAddBackward0');
    fn.dispose();
    y.mul(wt.tensor([[1, 2], [3, 4], [5, 6], [7, 8]])).sum().backward();
    assert.deepEqual(leaf.grad.toArray(), [[2, 4], [6, 8], [10, 12], [14, 16]]);
    assert.deepEqual(src.grad.toArray(), [[14, 16], [6, 8], [14, 16]]);
    const z = wt.ones([3, 2]).indexFill_(1, wt.tensor([0n]), 5);
    assert.deepEqual(z.toArray(), [[5, 1], [5, 1], [5, 1]]);
    assert.deepEqual(wt.oneHot(wt.tensor([2n, 0n]), 3).toArray(), [[0, 0, 1], [1, 0, 0]]);
    const a = wt.tensor([[1, 2, 3], [0, 1, 0]]);
    const b = wt.tensor([[1, 2, 2], [1, 1, 0]]);
    const cos = new wt.nn.CosineSimilarity({ dim: 1 });
    assert.ok(close(cos.forward(a, b).toArray()[1], Math.SQRT1_2, 1e-6));
    assert.equal(String(cos), 'CosineSimilarity()');
    const pd = new wt.nn.PairwiseDistance({ p: 1, keepdim: true });
    assert.deepEqual(pd.forward(a, b).shape, [2, 1]);
    for (const name of ['oneHot', 'normalize', 'cosineSimilarity', 'pairwiseDistance']) {
      assert.equal(wt.nn.functional[name], wt[name], name);
    }
    // PyTorch's positional order works too
    assert.deepEqual(wt.normalize(a, 1, 1).toArray(), wt.normalize(a, { p: 1 }).toArray());
    throwsWeft(() => wt.normalize(a, { dims: 1 }), 'TypeError', /unexpected option 'dims'.*dim/);
    throwsWeft(() => wt.cosineSimilarity(a, b, 1, 1e-8, 3), 'TypeError', /takes 4 positional arguments but 5/);
    // Meta: shapes without data; one_hot and bincount need the values
    const m = wt.empty([4, 3], { device: 'meta' });
    assert.deepEqual(m.indexAdd(0, wt.empty([2], { dtype: 'int64', device: 'meta' }), wt.empty([2, 3], { device: 'meta' })).shape, [4, 3]);
    assert.deepEqual(wt.histc(m, { bins: 7 }).shape, [7]);
    throwsWeft(() => wt.oneHot(wt.empty([2], { dtype: 'int64', device: 'meta' }), 3), 'InvalidArgument',
      /Can not infer total number of classes from meta tensor/);
  });
  assert.deepEqual(counts(wt), before);
});
