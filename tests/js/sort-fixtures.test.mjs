// Sorting and selecting (issue 13): every case of tests/fixtures/sort.json
// (PyTorch 1.13, made by tests/fixtures/gen_sort_fixtures.py) through
// wt.ops.call on each wasm variant at 1 and 2 threads: dtype, shape, the
// strides of dims longer than 1 and every value exact (NaN as NaN, -0.0 as
// -0.0: values are the input's elements), indices exact (ties in input
// order); errors are WeftErrors with PyTorch's message; out= returns the out
// tensors; nothing leaks. Then the JS forms: wt.sort / x.sort with options,
// argsort, topk, kthvalue, msort, { out: [values, indices] }, worker mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { initWorker } from 'weft';
import { init, WeftError, counts, VARIANTS, noLeaks, throwsWeft, replayAtThreads } from './helpers.mjs';

const { cases } = loadFixture('sort.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
// the argument order of each op's schema (keyword-only ones go in the options)
const POS = { sort: ['dim', 'descending'], argsort: ['dim', 'descending'], topk: ['k', 'dim', 'largest', 'sorted'],
  kthvalue: ['k', 'dim', 'keepdim'], msort: [] };

function call(wt, c, x, outs) {
  const base = c.op.split('.')[0];
  if (base === '_unique2') return wt.ops.call('_unique2', x, c.args.sorted, c.args.return_inverse, c.args.return_counts);
  const kwOnly = c.op.includes('stable'); // sort.stable's arguments are keyword-only
  const pos = kwOnly ? [] : POS[base].filter((n) => n in c.args).map((n) => c.args[n]);
  const kw = kwOnly ? { ...c.args } : {};
  if (outs && base === 'msort') kw.out = outs[0];
  else if (outs) Object.assign(kw, { values: outs[0], indices: outs[1] });
  const r = wt.ops.call(c.op, x, ...pos, kw);
  return base === 'argsort' || base === 'msort' ? [r] : [...r];
}

function check(r, w) {
  if (r.dtype !== w.dtype) return `dtype ${r.dtype}, want ${w.dtype}`;
  if (JSON.stringify(r.shape) !== JSON.stringify(w.size)) return `shape ${r.shape}, want ${w.size}`;
  const st = r.stride();
  if (w.size.some((n, d) => n > 1 && st[d] !== w.stride[d])) return `stride ${st}, want ${w.stride}`;
  const c = r.contiguous();
  const got = Array.from(c.data(), Number);
  if (c !== r) c.dispose();
  const i = w.values.findIndex((v, j) => !Object.is(got[j], num(v)) && !(Object.is(num(v), 0) && got[j] === 0 &&
    r.dtype !== 'float32' && r.dtype !== 'float64'));
  return i >= 0 ? `value[${i}] ${got[i]}, want ${w.values[i]}` : null;
}

function problems(wt, c) {
  const made = [];
  const before = counts(wt);
  const bad = [];
  let rs = null;
  try {
    const a = c.input;
    const base = wt.tensor(a.storage.map(num), { dtype: a.dtype });
    made.push(base);
    const x = base.asStrided(a.size, a.stride, a.offset);
    made.push(x);
    const outs = c.outs ? c.outs.map((o) => {
      const n = o.size.reduce((p, s, d) => p + (s - 1) * o.stride[d], 1);
      const s = wt.empty([Math.max(n, 0)], { dtype: o.dtype });
      made.push(s);
      const v = s.asStrided(o.size, o.stride, 0);
      made.push(v);
      return v;
    }) : null;
    try {
      rs = call(wt, c, x, outs);
    } catch (e) {
      if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
      else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError`);
      else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
    }
    if (rs && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
    if (rs && c.expect.error === undefined) {
      if (outs && rs.some((r, i) => r !== outs[i])) bad.push('did not return its out tensors');
      c.expect.results.forEach((w, i) => {
        const p = check(rs[i], w);
        if (p) bad.push(`result ${i}: ${p}`);
      });
    }
  } finally {
    for (const r of rs ?? []) if (!made.includes(r)) r.dispose();
    for (const t of made) t.dispose();
  }
  const after = counts(wt);
  if (JSON.stringify(after) !== JSON.stringify(before)) bad.push(`leak: ${JSON.stringify(after)} was ${JSON.stringify(before)}`);
  const args = JSON.stringify({ args: c.args, size: c.input.size, stride: c.input.stride, dtype: c.input.dtype });
  return bad.map((b) => `${c.op} ${args.slice(0, 200)}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`${variant}: sort.json through wt.ops.call`, async (t) => {
    replayAtThreads(t, await init({ variant }), cases, problems);
  });
}

test('the JS forms: methods, wt.*, options, out=, tuples', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const x = wt.tensor([[3, NaN, 1, -0, 0, 1], [2, 2, -Infinity, 5, 0, 2]]);
    const a = x.sort();
    assert.deepEqual(a.values.toArray(), [[-0, 0, 1, 1, 3, NaN], [-Infinity, 0, 2, 2, 2, 5]]);
    assert.deepEqual(Array.from(a.indices.data(), Number), [3, 4, 2, 5, 0, 1, 2, 4, 0, 1, 5, 3]);
    const [v, i] = a; // iterable, as torch.return_types
    assert.equal(v, a.values);
    assert.equal(i, a.indices);
    const b = wt.sort(x, 0, true);
    assert.deepEqual(Array.from(b.indices.data(), Number), [0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0]);
    const c = x.sort({ stable: true, descending: true });
    assert.deepEqual(c.values.toArray(), [[NaN, 3, 1, 1, -0, 0], [5, 2, 2, 2, 0, -Infinity]]);
    assert.deepEqual(Array.from(c.indices.data(), Number), [1, 0, 2, 5, 3, 4, 3, 0, 1, 5, 4, 2]);
    const d = x.argsort({ stable: true, dim: 0 });
    assert.deepEqual(d.shape, [2, 6]);
    const d2 = wt.argsort(x, 1, true);
    assert.deepEqual(Array.from(d2.data(), Number), [1, 0, 2, 5, 3, 4, 3, 0, 1, 5, 4, 2]);
    const e = x.topk(2);
    assert.deepEqual(e.values.toArray(), [[NaN, 3], [5, 2]]);
    assert.deepEqual(Array.from(e.indices.data(), Number), [1, 0, 3, 0]);
    const f = wt.topk(x, 2, 1, false);
    assert.deepEqual(f.values.toArray(), [[-0, 0], [-Infinity, 0]]);
    const g = x.kthvalue(3, 1, true);
    assert.deepEqual(g.values.toArray(), [[1], [2]]);
    assert.deepEqual(Array.from(g.indices.data(), Number), [2, 0]);
    const ov = wt.empty([0]);
    const oi = wt.empty([0], { dtype: 'int64' });
    const h = wt.topk(x, 1, 0, true, true, { out: [ov, oi] });
    assert.equal(h.values, ov);
    assert.equal(h.indices, oi);
    assert.deepEqual(ov.shape, [1, 6]);
    const m = x.msort();
    assert.deepEqual(m.toArray(), [[2, 2, -Infinity, -0, 0, 1], [3, NaN, 1, 5, 0, 2]]);
    throwsWeft(() => x.topk(7), undefined, /selected index k out of range/);
    throwsWeft(() => x.sort(2), 'IndexError', /Dimension out of range/);
    throwsWeft(() => x.sort({ stabel: true }), 'TypeError', /stabel/);
    const bool = wt.tensor([true, false]);
    throwsWeft(() => bool.topk(1), undefined, /"topk_cpu" not implemented for 'bool'/);
    for (const t of [x, bool, d2, a.values, a.indices, b.values, b.indices, c.values, c.indices, d, e.values, e.indices,
      f.values, f.indices, g.values, g.indices, ov, oi, m]) t.dispose();
  });
});

test('unique: a Tensor, or { values, inverse?, counts? }; NaNs distinct; _unique', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const x = wt.tensor([[3, NaN, 1], [1, NaN, -0]]);
    const u = x.unique();
    assert.deepEqual(u.toArray(), [-0, 1, 3, NaN, NaN]); // every NaN its own value, after the others
    const r = wt.unique(x, { returnInverse: true, returnCounts: true });
    assert.deepEqual(Object.keys(r), ['values', 'inverse', 'counts']);
    assert.deepEqual(Array.from(r.inverse.data(), Number), [2, 3, 1, 1, 4, 0]);
    assert.deepEqual(r.inverse.shape, [2, 3]);
    assert.deepEqual(Array.from(r.counts.data(), Number), [1, 2, 1, 1, 1]);
    const [v, c] = x.unique({ returnCounts: true, sorted: false });
    assert.equal(r.length, 3);
    assert.deepEqual(Array.from(c.data(), Number), [1, 2, 1, 1, 1]);
    const [v2, i2] = wt.ops.call('_unique', x, true, true);
    assert.deepEqual(Array.from(i2.data(), Number), [2, 3, 1, 1, 4, 0]);
    throwsWeft(() => x.unique({ dim: 0 }), 'NotImplemented', /dim/);
    throwsWeft(() => x.unique({ returnInverse: 1 }), 'TypeError', /returnInverse/);
    throwsWeft(() => x.unique({ inverse: true }), 'TypeError', /unexpected option 'inverse'/);
    const h = wt.tensor([1, 2], { dtype: 'float16' });
    throwsWeft(() => h.unique(), undefined, /"unique" not implemented for 'float16'/);
    for (const t of [x, u, r.values, r.inverse, r.counts, v, c, v2, i2, h]) t.dispose();
  });
});

test('simd-threads: 1 and 2 threads give the same bytes on long lines and many lines', async () => {
  const wt = await init({ variant: 'simd-threads' });
  if (wt.maxThreads() < 2) return;
  const data = Float32Array.from({ length: 64 * 700 }, (_, j) => (j % 97 === 0 ? NaN : ((j * 7919) % 211) - 105));
  const x = wt.tensor(data).view(64, 700);
  const xt = x.t();
  const runs = [1, 2].map((n) => {
    wt.setNumThreads(n);
    const r = [x.sort({ stable: true }), xt.sort(1, true), x.topk(9), xt.topk(5, 0, false), x.kthvalue(350)];
    const bytes = r.flatMap((p) => [Array.from(p.values.data()), Array.from(p.indices.data(), Number)]);
    for (const p of r) { p.values.dispose(); p.indices.dispose(); }
    return JSON.stringify(bytes.map((a) => a.map((v) => (Number.isNaN(v) ? 'nan' : v))));
  });
  wt.setNumThreads(1);
  assert.equal(runs[0], runs[1]);
  xt.dispose();
  x.dispose();
});

test('worker mode: sort, topk and kthvalue as promises of { values, indices }', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const x = ww.tensor([[4, 1, 3], [0, 5, 2]]);
    const { values, indices } = await x.sort({ descending: true });
    assert.deepEqual(await values.toArray(), [[4, 3, 1], [5, 2, 0]]);
    assert.deepEqual(Array.from(await indices.data(), Number), [0, 2, 1, 1, 2, 0]);
    const t = await ww.topk(x, 1, 0);
    assert.deepEqual(await t.values.toArray(), [[4, 5, 3]]);
    const k = await x.kthvalue(2);
    assert.deepEqual(await k.values.toArray(), [3, 2]);
    assert.deepEqual(Array.from(await x.argsort().data(), Number), [1, 2, 0, 0, 2, 1]);
    assert.deepEqual(await x.unique().toArray(), [0, 1, 2, 3, 4, 5]);
    const { values: uv, counts } = await ww.unique(x, { returnCounts: true });
    assert.deepEqual(Array.from(await counts.data(), Number), [1, 1, 1, 1, 1, 1]);
    assert.equal((await uv.shape)[0], 6);
    await assert.rejects(async () => x.topk(4), (e) => e instanceof WeftError && /selected index k out of range/.test(e.message));
  } finally {
    await ww.terminate();
  }
});
