// Issue 25's elementwise ops: every case of tests/fixtures/elem25.json
// (PyTorch 1.13, made by tests/fixtures/gen_elem25_fixtures.py) through the JS
// calling forms wt.<fn>(...args, options) on each wasm variant: dtype, shape,
// strides and values (within the dtype's tolerance) must match, JS boolean
// results (allclose, equal) must be PyTorch's bool, errors are WeftErrors
// with PyTorch's message, nothing leaks. Then gradients, the in-place, out=
// and method forms, and the Meta device.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, throwsWeft, VARIANTS } from './helpers.mjs';

// a fixture's function by its dotted path on wt ('isclose', 'linalg.cross')
const fnOf = (wt, name) => name.split('.').reduce((o, k) => o[k], wt);

const { cases, grads } = loadFixture('elem25.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const TOL = { float32: 3e-6, float64: 1e-12, float16: 2e-3, bfloat16: 1.6e-2 };

function argMaker(wt, made) {
  return (s) => {
    if ('number' in s) return num(s.number);
    const isInt = s.dtype.startsWith('int') || s.dtype === 'uint8';
    const data = s.storage.map((v) => (isInt ? BigInt(v) : typeof v === 'boolean' ? v : num(v)));
    const base = wt.tensor(data, { dtype: s.dtype });
    const t = base.asStrided(s.size, s.stride, s.offset);
    made.push(base, t);
    return t;
  };
}

function callOf(wt, c, arg) {
  const args = c.args.map(arg);
  return Object.keys(c.options).length ? fnOf(wt, c.fn)(...args, c.options) : fnOf(wt, c.fn)(...args);
}

function checkValues(r, w, bad) {
  if (r.dtype !== w.dtype) return bad.push(`dtype ${r.dtype}, want ${w.dtype}`);
  if (JSON.stringify(r.shape) !== JSON.stringify(w.size)) return bad.push(`shape ${r.shape}, want ${w.size}`);
  if (w.values.length > 1 && JSON.stringify(r.stride()) !== JSON.stringify(w.stride)) {
    bad.push(`strides ${r.stride()}, want ${w.stride}`);
  }
  const v = r.toArray();
  const got = Array.isArray(v) ? v.flat(Infinity) : [v];
  const want = w.values.map(num);
  const i = want.findIndex((x, j) => (typeof x === 'number' && w.dtype.startsWith('float')
    ? !close(got[j], x, TOL[w.dtype]) : Number(got[j]) !== Number(x)));
  if (i >= 0) bad.push(`value[${i}] ${got[i]}, want ${w.values[i]}`);
}

function replay(wt, c) {
  const made = [];
  const bad = [];
  let r;
  try {
    r = callOf(wt, c, argMaker(wt, made));
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
  }
  if (r !== undefined && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
  else if (r !== undefined && 'bool' in c.expect) {
    if (r !== c.expect.bool) bad.push(`${r}, want ${c.expect.bool}`);
  } else if (r !== undefined) {
    checkValues(r, c.expect, bad);
    r.dispose();
  }
  for (const t of made) t.dispose();
  return bad;
}

const label = (c) => `${c.fn}(${c.args.map((a) => ('number' in a ? a.number : `${a.dtype}${JSON.stringify(a.size)}`))}` +
  `${Object.keys(c.options).length ? `, ${JSON.stringify(c.options)}` : ''})`;

for (const variant of VARIANTS) {
  test(`issue 25 elementwise ops match PyTorch 1.13 (${cases.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const failures = [];
    for (const c of cases) {
      const bad = replay(wt, c);
      if (bad.length) failures.push(`${label(c)}: ${bad.join('; ')}`);
    }
    assert.deepEqual(failures.slice(0, 12), []);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

// d sum(weight * f) / d each floating argument, against PyTorch's autograd
test('issue 25 elementwise gradients match PyTorch 1.13', async () => {
  const wt = await init();
  const before = counts(wt);
  const failures = [];
  for (const c of grads) {
    const made = [];
    const arg = argMaker(wt, made);
    const leaves = c.args.map((s) => {
      const v = arg(s);
      if (typeof v === 'number' || !v.dtype.startsWith('float')) return v;
      const leaf = v.detach().requiresGrad_();
      made.push(leaf);
      return leaf;
    });
    const w = arg(c.weight);
    wt.tidy(() => {
      const r = Object.keys(c.options).length ? fnOf(wt, c.fn)(...leaves, c.options) : fnOf(wt, c.fn)(...leaves);
      r.mul(w).sum().backward();
    });
    c.grads.forEach((want, k) => {
      if (want === null) return;
      const g = leaves[k].grad;
      const got = [g.toArray()].flat(Infinity);
      const i = want.findIndex((x, j) => !close(got[j], num(x), g.dtype === 'float64' ? 1e-10 : 3e-6));
      if (i >= 0) failures.push(`${label(c)} arg ${k}: grad[${i}] ${got[i]}, want ${want[i]}`);
      g.dispose();
    });
    for (const t of made) t.dispose();
  }
  assert.deepEqual(failures, []);
  assert.deepEqual(counts(wt), before);
});

test('issue 25 elementwise ops: in-place, out= and method forms equal the functions', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.tensor([[0.2, -1.5, NaN], [Infinity, 0.7, -Infinity]]);
    const y = wt.tensor([[1.0, 2.0, -3.0], [0.5, -0.25, 4.0]]);
    const z = wt.tensor([[2.0, -1.0, 0.5], [3.0, 1.5, -2.0]]);
    const same = (a, b, what) => assert.deepEqual(a.toArray(), b.toArray(), what);
    same(x.clone().nanToNum_({ nan: 1 }), wt.nanToNum(x, { nan: 1 }), 'nanToNum_');
    same(y.clone().square_(), wt.square(y), 'square_');
    same(z.sigmoid().logit_({ eps: 0.3 }), wt.logit(z.sigmoid(), { eps: 0.3 }), 'logit_');
    same(y.clone().lerp_(z, 0.75), wt.lerp(y, z, 0.75), 'lerp_ Scalar');
    same(y.clone().lerp_(z, z.sigmoid()), wt.lerp(y, z, z.sigmoid()), 'lerp_ Tensor');
    same(y.clone().addcmul_(z, x.nanToNum(), { value: 2 }), wt.addcmul(y, z, x.nanToNum(), { value: 2 }), 'addcmul_');
    same(y.clone().addcdiv_(z, y, { value: -1 }), wt.addcdiv(y, z, y, { value: -1 }), 'addcdiv_');
    same(y.clone().atan2_(z), wt.atan2(y, z), 'atan2_');
    same(y.clone().hypot_(z), wt.hypot(y, z), 'hypot_');
    same(y.lerp(z, 0.2), wt.lerp(y, z, 0.2), 'lerp method');
    same(y.cross(z, { dim: 1 }), wt.linalg.cross(y, z), 'cross method');
    same(x.isnan(), wt.tensor([[false, false, true], [false, false, false]]), 'isnan method');
    same(x.isfinite(), wt.tensor([[true, true, false], [false, true, false]]), 'isfinite method');
    assert.equal(y.allclose(y.add(1e-9)), true);
    assert.equal(y.equal(z), false);
    const out = wt.empty([2, 3]);
    wt.addcmul(y, z, z, { out });
    same(out, wt.addcmul(y, z, z), 'addcmul out=');
    const mask = wt.empty([2, 3], { dtype: 'bool' });
    wt.isposinf(x, { out: mask });
    same(mask, wt.tensor([[false, false, false], [true, false, false]]), 'isposinf out=');
    throwsWeft(() => wt.isposinf(x, { out: wt.empty([2, 3]) }), 'TypeError', /isposinf does not support non-boolean outputs/);
    throwsWeft(() => wt.tensor([1n, 2n]).logit_(), 'TypeError', /result type float32 can't be cast to the desired output type int64/);
    throwsWeft(() => wt.ones([3]).lerp_(wt.ones([2, 3]), 0.5), 'InvalidArgument', /output with shape \[3\] doesn't match the broadcast shape \[2, 3\]/);
    throwsWeft(() => wt.nanToNum(x, { out: wt.empty([2, 3], { dtype: 'float64' }) }), 'TypeError',
      /nan_to_num: dtype of out: float64 should be same as input: float32/);
    throwsWeft(() => wt.allclose(x, [1, 2]), 'TypeError', /allclose\(\): argument 'other' must be a Tensor/);
  });
  assert.deepEqual(counts(wt), before);
});

test('issue 25 elementwise ops on the Meta device: shapes and dtypes only', async () => {
  const wt = await init();
  wt.tidy(() => {
    const a = wt.empty([4, 1, 3], { device: 'meta' });
    const b = wt.empty([1, 5, 3], { device: 'meta' });
    for (const r of [wt.lerp(a, b, 0.5), wt.addcdiv(a, b, b), wt.atan2(a, b), wt.hypot(a, b), wt.linalg.cross(a, b)]) {
      assert.equal(r.device, 'meta');
      assert.deepEqual(r.shape, [4, 5, 3]);
    }
    const m = wt.isclose(a, b);
    assert.deepEqual([m.device, m.dtype, m.shape], ['meta', 'bool', [4, 5, 3]]);
    assert.deepEqual(wt.nanToNum(a).shape, [4, 1, 3]);
  });
});
