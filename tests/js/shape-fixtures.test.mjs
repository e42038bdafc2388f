// Shape, fill and random ops (issue 13): every case of
// tests/fixtures/shape.json (PyTorch 1.13, made by
// tests/fixtures/gen_shape_fixtures.py) through wt.ops.call on each wasm
// variant (tests/js/case-replay.mjs: dtype, shape, strides, values, PyTorch's
// messages, no leaks); seeded cases first call wt.manualSeed with the seed
// torch.manual_seed had. Then the generated spellings (functions, methods,
// { out }, in place), views, threads 1 vs 4 alike, the distribution of
// multinomial without replacement, meta tensors and worker mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { initWorker } from 'weft';
import { init, counts, tracker, throwsWeft, VARIANTS } from './helpers.mjs';
import { problems } from './case-replay.mjs';

const { cases } = loadFixture('shape.json');

function replay(wt, c) {
  if (c.seed !== undefined) wt.manualSeed(c.seed);
  return problems(wt, c);
}

for (const variant of VARIANTS) {
  test(`${variant}: shape.json through ops.call`, async (t) => {
    const wt = await init({ variant });
    const bad = cases.flatMap((c) => replay(wt, c));
    t.diagnostic(`${cases.length} cases`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
  });
}

test('the generated shape API: functions, methods, options, in place, out=', async () => {
  const wt = await init({ variant: 'simd' });
  const before = counts(wt);
  const track = tracker();
  try {
    const x = track(track(wt.arange(6, { dtype: 'float32' })).view(2, 3));
    assert.deepEqual(track(x.flip(1)).toArray(), [[2, 1, 0], [5, 4, 3]]);
    assert.deepEqual(track(wt.flip(x, [0, 1])).toArray(), [[5, 4, 3], [2, 1, 0]]);
    assert.deepEqual(track(x.roll(1, 1)).toArray(), [[2, 0, 1], [5, 3, 4]]);
    assert.deepEqual(track(x.roll(1)).toArray(), [[5, 0, 1], [2, 3, 4]]);
    assert.deepEqual(track(x.repeat(1, 2)).toArray(), [[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]]);
    assert.deepEqual(track(x.tile([2, 1])).shape, [4, 3]);
    // a repeat whose size overflows int64 is an error (the fuzzer's 4 * -2^63: undefined behaviour before)
    assert.throws(() => x.repeat(1, -(2n ** 63n)), (e) => e.name === 'WeftError' && /^repeat: size 3 repeated -9223372036854775808 times overflows int64$/.test(e.message));
    assert.throws(() => x.repeat(1, -1), /Trying to create tensor with negative dimension -3/);
    // a split size near int64's max is one piece, as PyTorch's (the fuzzer's dim + size - 1 overflowed)
    const pieces = x.split(2n ** 63n - 1n, 1);
    assert.deepEqual(pieces.map((p) => track(p).shape), [[2, 3]]);
    assert.deepEqual(track(x.repeatInterleave(2, { dim: 0 })).shape, [4, 3]);
    assert.deepEqual(track(x.repeatInterleave(2)).shape, [12]);
    const reps = track(wt.tensor([1, 0, 2], { dtype: 'int64' }));
    assert.deepEqual(track(x.repeatInterleave(reps, { dim: 1 })).toArray(), [[0, 2, 2], [3, 5, 5]]);
    assert.deepEqual(Array.from(track(wt.repeatInterleave(reps)).data(), Number), [0, 2, 2]);
    assert.deepEqual(track(x.tril()).toArray(), [[0, 0, 0], [3, 4, 0]]);
    assert.deepEqual(track(wt.triu(x, 1)).toArray(), [[0, 1, 2], [0, 0, 5]]);
    // a diagonal offset at int64's ends (the fuzzer's 2^63 - 1: overflow before the clamp)
    assert.deepEqual(track(x.tril(2n ** 63n - 1n)).toArray(), [[0, 1, 2], [3, 4, 5]]);
    assert.deepEqual(track(x.triu(2n ** 63n - 1n)).toArray(), [[0, 0, 0], [0, 0, 0]]);
    assert.deepEqual(track(x.tril(-(2n ** 63n))).toArray(), [[0, 0, 0], [0, 0, 0]]);
    const y = track(x.clone());
    assert.equal(y.tril_(-1), y);
    assert.deepEqual(y.toArray(), [[0, 0, 0], [3, 0, 0]]);
    const out = track(wt.empty([0]));
    assert.equal(wt.triu(x, { diagonal: 1, out }), out);
    assert.deepEqual(out.toArray(), [[0, 1, 2], [0, 0, 5]]);
    assert.deepEqual(track(x.diag()).toArray(), [0, 4]);
    assert.deepEqual(track(wt.diag(track(wt.tensor([1, 2])), 1)).toArray(), [[0, 1, 0], [0, 0, 2], [0, 0, 0]]);
    assert.deepEqual(track(x.clamp(1, 4)).toArray(), [[1, 1, 2], [3, 4, 4]]);
    assert.deepEqual(track(x.clamp({ max: 2 })).toArray(), [[0, 1, 2], [2, 2, 2]]);
    assert.deepEqual(track(x.clampMin(3)).toArray(), [[3, 3, 3], [3, 4, 5]]);
    assert.deepEqual(track(wt.clampMax(x, 1)).toArray(), [[0, 1, 1], [1, 1, 1]]);
    const lo = track(wt.tensor([1, 0, 5], { dtype: 'float32' }));
    assert.deepEqual(track(x.clamp(lo)).toArray(), [[1, 1, 5], [3, 4, 5]]);
    assert.equal(y.clamp_(0, 1), y);
    throwsWeft(() => x.clamp(), 'InvalidArgument', /^clamp: At least one of 'min' or 'max' must not be null$/);
    throwsWeft(() => track(wt.arange(3)).clamp_(0.5), 'TypeError', /result type float32 can't be cast/);
    assert.deepEqual(track(wt.linspace(0, 1, 5)).toArray(), [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual(track(wt.logspace(0, 2, 3, { dtype: 'float64' })).toArray(), [1, 10, 100]);
    assert.deepEqual(track(wt.logspace(0, 2, 3, 2)).toArray(), [1, 2, 4]);
    assert.deepEqual(track(wt.eye(2)).toArray(), [[1, 0], [0, 1]]);
    assert.deepEqual(track(wt.eye(2, 3, { dtype: 'int32' })).toArray(), [[1, 0, 0], [0, 1, 0]]);
    const nhwc = track(wt.empty([2, 3, 4, 5], { memoryFormat: 'channels_last' }));
    assert.deepEqual(track(wt.zerosLike(nhwc)).stride(), nhwc.stride());
    assert.deepEqual(track(wt.onesLike(nhwc, { memoryFormat: 'contiguous_format' })).stride(), [60, 20, 5, 1]);
    assert.equal(track(wt.fullLike(x, 7, { dtype: 'int8' })).dtype, 'int8');
    assert.equal(track(wt.randint(3, 5, [4])).dtype, 'int64');
    assert.equal(track(wt.randperm(4)).dtype, 'int64');
    const p = track(wt.full([50], 0.5));
    assert.equal(track(p.bernoulli()).shape[0], 50);
    assert.equal(p.bernoulli_(0.25), p);
    assert.equal(track(wt.multinomial(track(wt.ones([4])), 4)).shape[0], 4);
  } finally {
    track.disposeAll();
  }
  assert.deepEqual(counts(wt), before);
});

test('diagonal is a view; clamp works on every layout', async () => {
  const wt = await init({ variant: 'simd' });
  const track = tracker();
  try {
    const x = track(wt.zeros([3, 3]));
    const d = track(x.diagonal());
    d.fill_(1);
    assert.deepEqual(x.toArray(), [[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
    assert.deepEqual(d.stride(), [4]);
    const off = track(x.diagonal(1));
    assert.equal(off.storageOffset(), 1);
    const e = track(wt.empty([2, 3, 4]));
    assert.deepEqual(track(e.diagonal(0, -1, 0)).shape, [3, 2]);
  } finally {
    track.disposeAll();
  }
});

test('threads: 1 and 4 give the same results', async () => {
  const wt = await init({ variant: 'simd-threads' });
  const track = tracker();
  const run = () => {
    const x = track(track(wt.arange(300 * 257, { dtype: 'float32' })).view(300, 257));
    const xt = track(x.t());
    return [track(xt.flip([0, 1])), track(x.roll([7, -3], [0, 1])), track(xt.repeat(2, 3)),
      track(x.repeatInterleave(3, { dim: 1 })), track(xt.tril(5)), track(x.triu(-7))].map((t) => t.data());
  };
  try {
    wt.setNumThreads(1);
    const one = run();
    wt.setNumThreads(4);
    const four = run();
    assert.deepEqual(four, one);
  } finally {
    wt.setNumThreads(wt.maxThreads ? wt.maxThreads() : 4);
    track.disposeAll();
  }
});

test('multinomial without replacement: distinct samples, heavier weights first more often', async () => {
  const wt = await init({ variant: 'simd' });
  const track = tracker();
  try {
    wt.manualSeed(7);
    const w = track(wt.tensor([[1, 2, 4, 8, 0], [0, 0, 1, 0, 1]], { dtype: 'float32' }));
    const first = [0, 0, 0, 0, 0];
    for (let i = 0; i < 400; i++) {
      const s = track(w.multinomial(2));
      const v = Array.from(s.data(), Number);
      assert.notEqual(v[0], v[1]);
      assert.ok(v[0] !== 4 && v[1] !== 4, 'a zero weight was drawn');
      assert.deepEqual([v[2], v[3]].sort(), [2, 4]);
      first[v[0]]++;
      s.dispose();
    }
    assert.ok(first[3] > first[2] && first[2] > first[1] && first[1] > first[0], JSON.stringify(first));
  } finally {
    track.disposeAll();
  }
});

test('meta tensors: shapes without data', async () => {
  const wt = await init({ variant: 'simd' });
  const track = tracker();
  try {
    const m = track(wt.empty([3, 4], { device: 'meta' }));
    assert.deepEqual(track(m.flip(0)).shape, [3, 4]);
    assert.deepEqual(track(m.repeat(2, 1)).shape, [6, 4]);
    assert.deepEqual(track(m.tril()).shape, [3, 4]);
    assert.deepEqual(track(m.diag()).shape, [3]);
    assert.deepEqual(track(m.clamp(0, 1)).device, 'meta');
    assert.deepEqual(track(wt.eye(2, { device: 'meta' })).shape, [2, 2]);
    assert.deepEqual(track(wt.randint(5, [2, 2], { device: 'meta' })).shape, [2, 2]);
  } finally {
    track.disposeAll();
  }
});

test('worker mode: shape ops through the worker', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const x = ww.arange(6, { dtype: 'float32' }).view(2, 3);
    assert.deepEqual(await x.flip(1).toArray(), [[2, 1, 0], [5, 4, 3]]);
    assert.deepEqual(await ww.eye(2).toArray(), [[1, 0], [0, 1]]);
    assert.deepEqual(await x.clamp(1, 4).toArray(), [[1, 1, 2], [3, 4, 4]]);
    assert.deepEqual(await ww.zerosLike(x).toArray(), [[0, 0, 0], [0, 0, 0]]);
  } finally {
    await ww.terminate();
  }
});
