// 2-D pooling (issue 12): every case of tests/fixtures/pool.json (PyTorch 1.13,
// made by tests/fixtures/gen_pool_fixtures.py; the native replay is
// tests/c/test_pool.c) through the JS calling forms on each wasm variant:
// wt.maxPool2d(x, k, { stride, padding, dilation, ceilMode, returnIndices }),
// wt.maxPool2dWithIndices(x, k, { ..., out, indices }),
// wt.avgPool2d(x, k, { stride, padding, ceilMode, countIncludePad,
// divisorOverride, out }), wt.adaptiveAvgPool2d(x, size, { out }) and
// wt.ops.call('_adaptive_avg_pool2d', ...). dtype, shape, the strides of dims
// longer than 1 (so the memory format) and values must match (NaN as NaN,
// float32 within 2e-6, bfloat16 within 1.6e-2 relative); errors are
// WeftErrors with PyTorch's message; out= returns the out tensor; nothing
// leaks. Then the JS-only forms: stride null, null output sizes, methods,
// explain's path, worker mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { initWorker } from 'weft';
import { init, WeftError, counts, VARIANTS, replayAtThreads } from './helpers.mjs';

const { cases } = loadFixture('pool.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const TOL = { float32: 2e-6, float64: 1e-12, bfloat16: 1.6e-2 };

function close(got, want, tol) {
  if (Number.isNaN(want)) return Number.isNaN(got);
  if (!Number.isFinite(want)) return got === want;
  return Math.abs(got - want) <= tol * (1 + Math.abs(want));
}

// The result: a tensor, or [values, indices] for max pooling with indices.
function call(wt, c, x, out, indices) {
  const opt = out ? { out } : {};
  const max = { stride: c.stride, padding: c.padding, dilation: c.dilation, ceilMode: c.ceil_mode };
  switch (c.op.split('.')[0]) {
    case 'max_pool2d':
      return c.expect.indices ? wt.maxPool2d(x, c.kernel_size, { ...max, returnIndices: true })
        : wt.maxPool2d(x, c.kernel_size, max);
    case 'max_pool2d_with_indices':
      return wt.maxPool2dWithIndices(x, c.kernel_size, { ...max, ...(out ? { out, indices } : {}) });
    case 'avg_pool2d':
      return wt.avgPool2d(x, c.kernel_size, { stride: c.stride, padding: c.padding, ceilMode: c.ceil_mode,
        countIncludePad: c.count_include_pad, divisorOverride: c.divisor_override, ...opt });
    case 'adaptive_avg_pool2d':
      return wt.adaptiveAvgPool2d(x, c.output_size, opt);
    default:
      return wt.ops.call(c.op, x, c.output_size);
  }
}

function problems(wt, c) {
  const made = [];
  const before = counts(wt);
  const bad = [];
  let r;
  try {
    const a = c.input;
    const base = wt.tensor(a.storage.map(num), { dtype: a.dtype });
    made.push(base);
    const x = base.asStrided(a.size, a.stride, a.offset);
    made.push(x);
    const out = c.out ? wt.empty([0], { dtype: c.out }) : null;
    const indices = c.indices_out ? wt.empty([0], { dtype: c.indices_out }) : null;
    for (const t of [out, indices]) if (t) made.push(t);
    try {
      r = call(wt, c, x, out, indices);
    } catch (e) {
      if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
      else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError`);
      else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
    }
    if (r && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
    let idx = null;
    if (Array.isArray(r)) {
      [r, idx] = r;
      if (!made.includes(idx)) made.push(idx);
      if (indices && idx !== indices) bad.push('did not return its indices tensor');
      if (idx.dtype !== 'int64') bad.push(`indices dtype ${idx.dtype}`);
      else if (c.expect.indices && JSON.stringify(Array.from(idx.data(), Number)) !== JSON.stringify(c.expect.indices)) {
        bad.push('indices differ');
      }
    }
    if (r && c.expect.error === undefined) {
      const w = c.expect;
      if (out && r !== out) bad.push('did not return its out tensor');
      if (r.dtype !== w.dtype) bad.push(`dtype ${r.dtype}, want ${w.dtype}`);
      else if (JSON.stringify(r.shape) !== JSON.stringify(w.size)) bad.push(`shape ${r.shape}, want ${w.size}`);
      else {
        const st = r.stride();
        if (w.size.some((n, d) => n > 1 && st[d] !== w.stride[d])) bad.push(`stride ${st}, want ${w.stride}`);
        const got = Array.from(r.data(), Number);
        const i = w.values.findIndex((v, j) => !close(got[j], num(v), TOL[w.dtype] ?? 0));
        if (i >= 0) bad.push(`value[${i}] ${got[i]}, want ${w.values[i]}`);
      }
    }
  } finally {
    if (r && !made.includes(r)) r.dispose();
    for (const t of made) t.dispose();
  }
  const after = counts(wt);
  if (JSON.stringify(after) !== JSON.stringify(before)) bad.push(`leak: ${JSON.stringify(after)} was ${JSON.stringify(before)}`);
  const args = JSON.stringify({ ...c, input: c.input.size, expect: undefined });
  return bad.map((b) => `${c.op} ${args.slice(0, 200)}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`${variant}: pool.json through maxPool2d / avgPool2d / adaptiveAvgPool2d`, async (t) => {
    replayAtThreads(t, await init({ variant }), cases, problems);
  });

  test(`${variant}: the JS calling forms`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const base = wt.arange(0, 32, 1, { dtype: 'float32' });
    const x = base.view(1, 2, 4, 4);
    // stride null (or omitted) is the kernel size
    const a = wt.maxPool2d(x, 2, { stride: null });
    assert.deepEqual(a.toArray(), [[[[5, 7], [13, 15]], [[21, 23], [29, 31]]]]);
    const b = x.maxPool2d(2, 1);
    assert.deepEqual(b.shape, [1, 2, 3, 3]);
    const c = x.avgPool2d([2, 2]);
    assert.deepEqual(c.toArray(), [[[[2.5, 4.5], [10.5, 12.5]], [[18.5, 20.5], [26.5, 28.5]]]]);
    // null output sizes keep the input's
    const d = wt.adaptiveAvgPool2d(x, [null, 2]);
    assert.deepEqual(d.shape, [1, 2, 4, 2]);
    const e = x.adaptiveAvgPool2d(1);
    assert.deepEqual(e.toArray(), [[[[7.5]], [[23.5]]]]);
    // channels_last in, channels_last out
    const xc = x.contiguous({ memoryFormat: 'channels_last' });
    const f = wt.maxPool2d(xc, 2);
    assert.equal(f.suggestMemoryFormat(), 'channels_last');
    assert.deepEqual(f.toArray(), a.toArray());
    assert.throws(() => wt.maxPool2d(x, 2, { returnIndices: 1 }), (err) => err instanceof WeftError);
    // returnIndices: what max_pool2d_with_indices returns, [values, indices]
    const [v, i] = x.maxPool2d(2, { returnIndices: true });
    assert.deepEqual(v.toArray(), a.toArray());
    assert.equal(i.dtype, 'int64');
    assert.deepEqual(Array.from(i.data(), Number), [5, 7, 13, 15, 5, 7, 13, 15]);
    v.dispose();
    i.dispose();
    assert.throws(() => wt.maxPool2d(x, 5), (err) => err instanceof WeftError &&
      /Given input size: \(2x4x4\)\. Calculated output size: \(2x0x0\)\. Output size is too small/.test(err.message));
    for (const t of [base, x, a, b, c, d, e, xc, f]) t.dispose();
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: explain() names the pooling path`, async () => {
    const wt = await init({ variant });
    const x = wt.empty([2, 8, 16, 16]);
    const xc = x.contiguous({ memoryFormat: 'channels_last' });
    const p1 = wt.explain('max_pool2d', x, [2, 2], [2, 2]);
    assert.equal(p1.path, 'nchw_s2');
    assert.equal(p1.memoryFormat, 'contiguous_format');
    const p2 = wt.explain('max_pool2d', xc, [3, 3], [1, 1], [1, 1]);
    assert.equal(p2.path, 'nhwc');
    const p3 = wt.explain('avg_pool2d', x, [3, 3], [1, 1]);
    assert.equal(p3.path, 'nchw_s1');
    const p4 = wt.explain('adaptive_avg_pool2d', xc, [3, 3]);
    assert.equal(p4.path, 'nhwc_adaptive');
    x.dispose();
    xc.dispose();
  });
}

test('worker mode: the pools, returnIndices as a promise of [values, indices]', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const x = ww.arange(32, { dtype: 'float32' }).view(1, 2, 4, 4);
    const y = ww.maxPool2d(x, 2, { stride: null });
    assert.deepEqual(await y.toArray(), [[[[5, 7], [13, 15]], [[21, 23], [29, 31]]]]);
    const [v, i] = await ww.maxPool2d(x, 2, { returnIndices: true });
    assert.deepEqual(await v.shape, [1, 2, 2, 2]);
    assert.deepEqual(Array.from(await i.data(), Number), [5, 7, 13, 15, 5, 7, 13, 15]);
    const g = x.adaptiveAvgPool2d([null, 1]);
    assert.deepEqual(await g.shape, [1, 2, 4, 1]);
    const a = ww.avgPool2d(x, 2);
    assert.deepEqual(await a.toArray(), [[[[2.5, 4.5], [10.5, 12.5]], [[18.5, 20.5], [26.5, 28.5]]]]);
    await assert.rejects(ww.maxPool2d(x, 5).toArray(), (e) => e instanceof WeftError && /Output size is too small/.test(e.message));
  } finally {
    await ww.terminate();
  }
});
