// Issue 24's ops against PyTorch: every case of tests/fixtures/transformer.json
// (made by tests/fixtures/gen_transformer_fixtures.py: embedding and
// index_copy from PyTorch 1.13, rms_norm from PyTorch 2.4's formula in
// float64) through wt.embedding(ids, weight, { paddingIdx, maxNorm, normType,
// scaleGradByFreq }), wt.rmsNorm(x, normalizedShape, weight, { eps }) and
// wt.indexCopy / x.indexCopy_ on each wasm variant: dtype, shape, strides,
// values, the gradients of sum(result * gradOut), the weight maxNorm
// renormalized, errors (WeftErrors with PyTorch's message), and no leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, throwsWeft, VARIANTS } from './helpers.mjs';

const fixture = loadFixture('transformer.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
// rms_norm's expectations are float64 values of 2.4's formula: float32 within a few ulps; a
// float64 weight on float32 input gives float64 values of float32 precision
const TOL = { float32: 4e-6, float64: 1e-12, float16: 4e-3, bfloat16: 2e-2 };
const GRAD_TOL = { float32: 2e-5, float64: 1e-10, float16: 1e-2, bfloat16: 5e-2 };
const flat = (t) => [t.toArray()].flat(Infinity).map(Number);

function call(wt, c, t) {
  const o = Object.fromEntries(Object.entries(c.options).map(([k, v]) => [k, num(v)]));
  if (c.fn === 'embedding') return wt.embedding(t.input, t.weight, o);
  if (c.fn === 'rms_norm') return wt.rmsNorm(t.input, o.normalizedShape, t.weight ?? null, { eps: o.eps });
  const index = wt.tensor(o.index, { dtype: 'int64' });
  try { return wt.indexCopy(t.self, o.dim, index, t.source); } finally { index.dispose(); }
}

function compare(bad, what, got, want, tol) {
  const i = want.findIndex((w, j) => !close(got[j], num(w), tol));
  if (got.length !== want.length) bad.push(`${what}: ${got.length} values, want ${want.length}`);
  else if (i >= 0) bad.push(`${what}[${i}] ${got[i]}, want ${want[i]}`);
}

function replay(wt, c) {
  const made = [];
  const tensor = (s, grad) => {
    const isInt = s.dtype.startsWith('int');
    const base = wt.tensor(s.storage.map((v) => (isInt ? BigInt(v) : num(v))), { dtype: s.dtype });
    let t = base.asStrided(s.size, s.stride, s.offset);
    made.push(base, t);
    if (grad) made.push(t = t.detach().requiresGrad_());
    return t;
  };
  const grads = c.grads ?? {};
  const t = Object.fromEntries(Object.entries(c.args).map(([k, s]) => [k, tensor(s, k in grads)]));
  const bad = [];
  let r;
  try {
    r = call(wt, c, t);
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
      if (JSON.stringify(r.stride()) !== JSON.stringify(w.stride)) bad.push(`strides ${r.stride()}, want ${w.stride}`);
      compare(bad, 'value', flat(r), w.values, TOL[w.precision ?? w.dtype]);
      if (c.weight_after) compare(bad, 'weight after maxNorm', flat(t.weight), c.weight_after, TOL[w.dtype]);
      if (c.grad_out) {
        wt.tidy(() => r.mul(tensor(c.grad_out)).sum().backward());
        for (const [k, want] of Object.entries(grads)) {
          const g = t[k].grad;
          if (!g) bad.push(`no gradient for ${k}`);
          else compare(bad, `grad ${k}`, flat(g), want, GRAD_TOL[w.precision ?? t[k].dtype]);
          g?.dispose();
        }
      }
    }
  }
  r?.dispose();
  for (const x of made) x.dispose();
  return bad;
}

for (const variant of VARIANTS) {
  test(`embedding, rms_norm, index_copy match PyTorch (${fixture.cases.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const failures = [];
    for (const c of fixture.cases) {
      const bad = replay(wt, c);
      if (bad.length) failures.push(`${c.fn} ${JSON.stringify(c.options)}: ${bad.join('; ')}`);
    }
    assert.deepEqual(failures.slice(0, 10), []);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

test('indexCopy_ in place, an int32 index, option errors', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.zeros([3, 4]);
    const r = x.indexCopy_(1, wt.tensor([3n, 0n]), wt.tensor([[1, 2], [3, 4], [5, 6]]));
    assert.equal(r, x);
    assert.deepEqual(x.toArray(), [[2, 0, 0, 1], [4, 0, 0, 3], [6, 0, 0, 5]]);
    // in place on a non-leaf: IndexCopyBackward0 zeroes the overwritten rows of the input's gradient
    const leaf = wt.randn([4, 2]).requiresGrad_();
    const src = wt.randn([2, 2]).requiresGrad_();
    const twice = leaf.mul(2);
    twice.indexCopy_(0, wt.tensor([3n, 1n]), src);
    const fn = twice.gradFn;
    assert.equal(fn.name, 'IndexCopyBackward0');
    fn.dispose();
    twice.mul(wt.tensor([[1, 2], [3, 4], [5, 6], [7, 8]])).sum().backward();
    assert.deepEqual(leaf.grad.toArray(), [[2, 4], [0, 0], [10, 12], [0, 0]]);
    assert.deepEqual(src.grad.toArray(), [[7, 8], [3, 4]]);
    throwsWeft(() => x.indexCopy_(0, wt.tensor([1, 2], { dtype: 'int32' }), wt.ones([2, 4])), 'TypeError',
      new RegExp(fixture.index_int32_error.replace(/[()]/g, '\\$&')));
    throwsWeft(() => wt.embedding(wt.tensor([1n]), wt.ones([3, 2]), { padIdx: 1 }), 'TypeError',
      /unexpected option 'padIdx'.*paddingIdx/);
    // int32 ids give the same rows as int64 ones
    const w = wt.randn([5, 3]);
    const a = wt.embedding(wt.tensor([[4, 0], [2, 2]], { dtype: 'int32' }), w);
    const b = wt.embedding(wt.tensor([[4n, 0n], [2n, 2n]]), w);
    assert.deepEqual(a.toArray(), b.toArray());
    assert.deepEqual(wt.nn.functional.rmsNorm === wt.rmsNorm, true);
    // explain names the dedicated kernels; meta tensors give shapes only
    assert.equal(wt.explain('embedding', w, wt.tensor([1n, 2n])).path, 'row_gather');
    assert.equal(wt.explain('rms_norm', w, [3]).path, 'rms_norm_rows');
    const meta = { device: 'meta' };
    assert.deepEqual(wt.embedding(wt.empty([2, 7], { ...meta, dtype: 'int64' }), wt.empty([9, 4], meta)).shape, [2, 7, 4]);
    assert.deepEqual(wt.rmsNorm(wt.empty([2, 6], meta), [6]).shape, [2, 6]);
    assert.deepEqual(wt.indexCopy(wt.empty([5, 3], meta), 0, wt.empty([2], { ...meta, dtype: 'int64' }),
      wt.empty([2, 3], meta)).shape, [5, 3]);
  });
  assert.deepEqual(counts(wt), before);
});

// a KV cache's write: narrow(...).copy_() of a dense slice runs the copy driver's
// row memcpy (explain names the path), and writes only the slice
test('narrow(dim, start, len).copy_(src) of dense slices is a row copy', async () => {
  const wt = await init();
  wt.tidy(() => {
    const cache = wt.zeros([2, 4, 16, 8]); // [batch, heads, positions, headDim]
    const step = wt.randn([2, 4, 1, 8]);
    const slot = cache.narrow(2, 5, 1);
    const plan = wt.explain('copy_', slot, step);
    // contiguous rows of headDim elements (batch x heads coalesced): one memcpy each
    assert.equal(plan.loop, 'vectorized');
    assert.deepEqual(plan.shape, [8, 8]);
    assert.equal(cache.abs().sum().item(), 0, 'explain does not run the copy');
    cache.narrow(2, 5, 1).copy_(step);
    assert.deepEqual(cache.narrow(2, 5, 1).toArray(), step.toArray());
    assert.ok(close(cache.abs().sum().item(), step.abs().sum().item(), 1e-6), 'nothing else written');
  });
});

// createGraph: rms_norm's gradients as differentiable ops (the same first
// derivatives as its backward op, second derivatives against central
// differences of them), embedding_dense_backward's own derivative
test('createGraph through rmsNorm and embedding', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const opt = { dtype: 'float64' };
    const x = wt.randn([3, 5], opt).requiresGrad_();
    const w = wt.randn([5], opt).requiresGrad_();
    const G = wt.randn([3, 5], opt);
    const loss = (a, b) => wt.rmsNorm(a, [5], b, { eps: 1e-3 }).mul(G).sum();
    const plain = wt.autograd.grad(loss(x, w), [x, w]);
    const graph = wt.autograd.grad(loss(x, w), [x, w], { createGraph: true });
    for (let i = 0; i < 2; i++) {
      flat(plain[i]).forEach((v, j) => assert.ok(close(flat(graph[i])[j], v, 1e-12), `first derivative ${i}[${j}]`));
    }
    const H = wt.randn([3, 5], opt);
    const [hx] = wt.autograd.grad(graph[0].mul(H).sum(), [x]);
    // d/dx of <dL/dx, H>: central differences of the plain backward along each x element
    const xs = flat(x);
    const h = 1e-6;
    const dot = (vals) => wt.tidy(() => {
      const xi = wt.tensor(vals, opt).reshape([3, 5]).requiresGrad_();
      const [gx] = wt.autograd.grad(loss(xi, w), [xi]);
      return gx.mul(H).sum().item();
    });
    flat(hx).forEach((v, j) => {
      const up = xs.slice(), dn = xs.slice();
      up[j] += h, dn[j] -= h;
      assert.ok(close(v, (dot(up) - dot(dn)) / (2 * h), 1e-5), `second derivative [${j}]`);
    });
    // embedding: d<dense_backward(g), H>/dg = the rows of H the ids read, padding positions zero
    const weight = wt.randn([4, 2], opt).requiresGrad_();
    const ids = wt.tensor([3n, 1n, 3n]);
    const g = wt.randn([3, 2], opt).requiresGrad_();
    const [gw] = wt.autograd.grad(wt.embedding(ids, weight, { paddingIdx: 1 }), [weight], { gradOutputs: g, createGraph: true });
    const Hw = wt.randn([4, 2], opt);
    const [gg] = wt.autograd.grad(gw.mul(Hw).sum(), [g]);
    const rows = Hw.toArray();
    assert.deepEqual(gg.toArray(), [rows[3], [0, 0], rows[3]]);
  });
  assert.deepEqual(counts(wt), before);
});
