// Ops returning two tensors (opgen.h's TENSOR2): max/min along a dim and
// var_mean/std_mean from JS, on every variant, through the typed entry points
// (wt.max, x.max) and the boxed stack (wt.ops.call); the result shapes
// ({ values, indices } also iterable and indexable; [var, mean]), out= as an
// array and by the schema's names, tidy, dispose accounting, errors, and
// worker mode. Values are checked against the fixtures elsewhere
// (reduce2-fixtures.test.mjs); here, the plumbing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initWorker } from 'weft';
import { init, counts, throwsWeft, VARIANTS } from './helpers.mjs';

const X = [[1, 5, 5, 2], [7, Number.NaN, 3, Number.NaN], [0, -1, -1, 4]];

function checkMax(r, keepdim) {
  assert.deepEqual(Object.keys(r), ['values', 'indices']);
  assert.equal(r.length, 2);
  assert.equal(r[0], r.values);
  assert.equal(r[1], r.indices);
  const [v, i] = r;
  assert.equal(v, r.values);
  assert.equal(i, r.indices);
  assert.equal(v.dtype, 'float32');
  assert.equal(i.dtype, 'int64');
  assert.deepEqual(i.shape, keepdim ? [3, 1] : [3]);
  const vals = v.toArray().flat();
  assert.equal(vals[0], 5);
  assert.ok(Number.isNaN(vals[1]));
  assert.equal(vals[2], 4);
  assert.deepEqual(i.toArray().flat().map(Number), [1, 1, 3]); // the first of ties, the first NaN
}

for (const variant of VARIANTS) {
  test(`${variant}: { values, indices } from wt.max, x.max and ops.call`, async () => {
    const wt = await init({ variant });
    const x = wt.tensor(X, { dtype: 'float32' });
    const before = counts(wt);
    const calls = [
      [() => wt.max(x, 1), false],
      [() => x.max(1), false],
      [() => x.max(-1, true), true],
      [() => wt.max(x, 1, { keepdim: true }), true],
      [() => wt.ops.call('max.dim', x, 1), false],
      [() => wt.ops.call('max', x, 1, { keepdim: true }), true],
    ];
    for (const [f, keepdim] of calls) {
      const r = f();
      checkMax(r, keepdim);
      r.values.dispose();
      r.indices.dispose();
    }
    assert.deepEqual(counts(wt), before);
    const m = x.min(0);
    assert.deepEqual(m.indices.toArray().map(Number), [2, 1, 2, 1]);
    for (const t of m) t.dispose();
    // without a dim: one tensor, as before
    const all = wt.max(x);
    assert.ok(Number.isNaN(all.item()));
    all.dispose();
    assert.deepEqual(counts(wt), before);
    x.dispose();
  });

  test(`${variant}: out= as an array, by the schema's names, through the stack`, async () => {
    const wt = await init({ variant });
    const x = wt.tensor(X, { dtype: 'float32' });
    const v = wt.empty([3]);
    const i = wt.empty([3], { dtype: 'int64' });
    const before = counts(wt);
    for (const f of [() => wt.max(x, 1, { out: [v, i] }), () => x.max(1, { max: v, maxValues: i }),
      () => wt.ops.call('max.dim_max', x, 1, false, { max: v, max_values: i }),
      () => wt.ops.call('max', x, 1, { out: [v, i] })]) {
      const r = f();
      assert.equal(r.values, v);
      assert.equal(r.indices, i);
      assert.deepEqual(v.shape, [3]);
      assert.deepEqual(i.toArray().map(Number), [1, 1, 3]);
      assert.deepEqual(counts(wt), before);
    }
    const r = wt.min(x, 0, { keepdim: true, out: [v, i] });
    assert.deepEqual(r.indices.shape, [1, 4]);
    assert.deepEqual(i.shape, [1, 4]);
    assert.deepEqual(r.values.toArray(), [[0, Number.NaN, -1, Number.NaN]]);
    throwsWeft(() => wt.max(x, 1, { out: [v] }), 'TypeError', /argument 'out' must be an array of 2 Tensors/);
    throwsWeft(() => wt.max(x, 1, { out: [i, i] }), undefined, /Expected out tensor to have dtype float32, but got int64/);
    throwsWeft(() => wt.max(x, 1, { out: [v, v] }), undefined, /Expected out tensor to have dtype int64, but got float32/);
    for (const t of [x, v, i]) t.dispose();
  });

  test(`${variant}: varMean and stdMean give [a, b]; out0/out1`, async () => {
    const wt = await init({ variant });
    const x = wt.tensor([[1, 2, 3, 4], [2, 4, 6, 8]], { dtype: 'float64' });
    const before = counts(wt);
    const [v, m] = wt.varMean(x, 1);
    assert.deepEqual(v.toArray(), [5 / 3, 20 / 3]);
    assert.deepEqual(m.toArray(), [2.5, 5]);
    v.dispose();
    m.dispose();
    const r = x.stdMean(null, { correction: 0, keepdim: true });
    assert.ok(Array.isArray(r) && r.length === 2);
    assert.deepEqual(r[0].shape, [1, 1]);
    assert.equal(r[1].item(), 3.75);
    r.forEach((t) => t.dispose());
    const [a, b] = wt.ops.call('var_mean', x);
    assert.deepEqual(a.shape, []);
    a.dispose();
    b.dispose();
    const o0 = wt.empty([0], { dtype: 'float32' });
    const o1 = wt.empty([0], { dtype: 'float32' });
    const o = wt.varMean(x, 0, { correction: 0, out: [o0, o1] });
    assert.equal(o[0], o0);
    assert.equal(o[1], o1);
    assert.deepEqual(o1.toArray(), [1.5, 3, 4.5, 6]);
    assert.equal(o0.dtype, 'float32');
    const n = wt.tensor([1, 2], { dtype: 'int32' });
    throwsWeft(() => wt.varMean(n), undefined, /var_mean only support floating point and complex dtypes/);
    n.dispose();
    o0.dispose();
    o1.dispose();
    assert.deepEqual(counts(wt), before);
    x.dispose();
  });

  // var.correction_out / std.correction_out (values from PyTorch 1.13)
  test(`${variant}: var and std with out=`, async () => {
    const wt = await init({ variant });
    const x = wt.tensor([[1, 2, 4], [3, 5, 9]]);
    const before = counts(wt);
    const o = wt.empty([0]);
    assert.equal(wt.var(x, 1, { correction: 0, out: o }), o);
    assert.deepEqual(o.shape, [2]);
    assert.ok(o.toArray().every((v, i) => Math.abs(v - [1.5555555820465088, 6.222222328186035][i]) < 1e-6));
    const d = wt.empty([5], { dtype: 'float64' });
    x.std(0, { keepdim: true, out: d });
    assert.deepEqual([d.dtype, d.shape], ['float64', [1, 3]]);
    assert.ok(d.toArray()[0].every((v, i) => Math.abs(v - [1.4142135623730951, 2.1213203435596424, 3.5355339059327378][i]) < 1e-6));
    assert.equal(wt.var(x, null, { out: o }), o);
    assert.equal(o.item(), 8);
    const n = wt.tensor([1, 2], { dtype: 'int32' });
    throwsWeft(() => wt.var(n, 0, { out: o }), undefined, /std and var only support floating point/);
    // the out= cast rule of every other op (issue 14): a float result into an integer out is refused,
    // before anything is written (1.13's var/var_mean outs would copy into any dtype)
    const oi = wt.empty([0], { dtype: 'int32' });
    throwsWeft(() => wt.std(x, 1, { out: oi }), 'TypeError', /^std: result type float32 can't be cast to the desired output type int32$/);
    throwsWeft(() => wt.varMean(x, 1, { correction: 0, out: [o, oi] }), 'TypeError',
      /^var_mean: result type float32 can't be cast to the desired output type int32$/);
    assert.deepEqual([oi.shape, o.item()], [[0], 8]);
    for (const t of [n, oi]) t.dispose();
    o.dispose();
    d.dispose();
    assert.deepEqual(counts(wt), before);
    x.dispose();
  });

  test(`${variant}: tidy keeps a returned tuple, disposes the rest; errors leave nothing`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const r = wt.tidy(() => {
      const x = wt.rand([4, 5]);
      wt.min(x, 0); // dropped
      return wt.max(x.mul(2), 1);
    });
    assert.deepEqual(r.values.shape, [4]);
    assert.equal(r.indices.isDisposed, false);
    const [m, s] = wt.tidy(() => wt.varMean(wt.rand([3, 3]), 0));
    assert.equal(m.isDisposed, false);
    for (const t of [...r, m, s]) t.dispose();
    assert.deepEqual(counts(wt), before);
    const e = wt.zeros([0, 3]);
    throwsWeft(() => wt.max(e, 0), 'IndexError', /max\(\): Expected reduction dim 0 to have non-zero size/);
    throwsWeft(() => e.min(2), 'IndexError', /Dimension out of range/);
    const [ev, ei] = e.max(1);
    assert.deepEqual(ev.shape, [0]);
    assert.deepEqual(ei.shape, [0]);
    ev.dispose();
    ei.dispose();
    e.dispose();
    assert.deepEqual(counts(wt), before);
  });
}

test('worker mode: { values, indices } and [var, mean] through a promise', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const x = ww.tensor(X, { dtype: 'float32' });
    const r = await ww.max(x, 1);
    assert.deepEqual(Object.keys(r), ['values', 'indices']);
    const [v, i] = r;
    assert.equal(v, r.values);
    assert.deepEqual((await i.toArray()).map(Number), [1, 1, 3]);
    assert.deepEqual(await v.shape, [3]);
    const { indices } = await x.min(0, { keepdim: true });
    assert.deepEqual(await indices.shape, [1, 4]);
    const [vm, mm] = await ww.varMean(ww.tensor([1, 2, 3, 4], { dtype: 'float64' }));
    assert.equal(await mm.item(), 2.5);
    assert.ok(Math.abs((await vm.item()) - 5 / 3) < 1e-12);
    const all = await ww.max(x);
    assert.ok(Number.isNaN(await all.item()));
    await assert.rejects(ww.max(ww.zeros([0, 2]), 0), /Expected reduction dim 0 to have non-zero size/);
    const before = (await ww.memory()).tensors;
    const kept = await ww.tidy(async () => ww.max(x, 0));
    for (const t of [v, i, indices, vm, mm, all, ...kept]) t.dispose();
    await ww.memory();
    assert.ok((await ww.memory()).tensors < before);
    x.dispose();
  } finally {
    await ww.terminate();
  }
});
