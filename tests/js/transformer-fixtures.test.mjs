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
    assert.equal(cache.abs().sum().item(), step.abs().sum().item());
  });
});
