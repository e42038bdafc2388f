// Indexing and gathering (issue 13): every case of tests/fixtures/index.json
// (PyTorch 1.13, made by tests/fixtures/gen_index_fixtures.py) through
// wt.ops.call on each wasm variant (the replay: ./case-replay.mjs); the same
// cases at 1 and 3 threads give identical bytes; then the JS spellings
// (functions, methods, in-place forms, nonzero's asTuple, where(cond)), an
// index out of range leaving an out= or in-place target untouched, meta
// tensors, and worker mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { initWorker } from 'weft';
import { init, counts, noLeaks, throwsWeft, tracker, VARIANTS } from './helpers.mjs';
import { problems } from './case-replay.mjs';

const { cases } = loadFixture('index.json');

for (const variant of VARIANTS) {
  test(`${variant}: index.json through ops.call`, async (t) => {
    const wt = await init({ variant });
    const bad = cases.flatMap((c) => problems(wt, c));
    t.diagnostic(`${cases.length} cases`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
  });
}

test('simd-threads: large gathers and scatters give the same bytes on 1 and 3 threads', async () => {
  const wt = await init({ variant: 'simd-threads' });
  const track = tracker();
  const before = counts(wt);
  const run = () => {
    const x = track(track(wt.arange(300 * 257, { dtype: 'float32' })).view([300, 257]));
    const idx = track(wt.tensor(Array.from({ length: 700 }, (_, i) => (i * 31) % 257), { dtype: 'int64' }));
    const wide = track(track(idx.view([1, 700])).expand([300, 700]));
    const rows = track(track(wt.tensor(Array.from({ length: 257 * 200 }, (_, i) => (i * 7) % 300), { dtype: 'int64' }))
      .view([200, 257]));
    const mask = track(track(x.remainder(3)).eq(0));
    const top = track(x.narrow(0, 0, 200));
    const xt = track(x.t());
    const out = [
      wt.indexSelect(x, 1, idx), wt.indexSelect(xt, 0, idx), wt.gather(x, 1, wide), wt.gather(x, 0, rows),
      wt.scatterAdd(x, 0, rows, top), x.scatter(0, rows, 2.5, { reduce: 'multiply' }),
      wt.take(x, rows), x.maskedFill(mask, -1), wt.maskedSelect(x, mask), wt.nonzero(mask),
    ].map(track);
    return out.map((t) => Buffer.from(t.data().buffer).toString('base64'));
  };
  const was = wt.getNumThreads();
  wt.setNumThreads(1);
  const one = run();
  wt.setNumThreads(3);
  const three = run();
  wt.setNumThreads(was);
  track.disposeAll();
  assert.deepEqual(three, one);
  assert.deepEqual(counts(wt), before);
});

test('JS spellings: functions, methods, in-place forms, asTuple, where(cond)', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const track = tracker();
    const x = track(wt.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float32' }));
    const i = track(wt.tensor([2, 0], { dtype: 'int64' }));
    assert.deepEqual(track(x.indexSelect(1, i)).toArray(), [[3, 1], [6, 4]]);
    assert.deepEqual(track(wt.indexSelect(x, 0, track(i.narrow(0, 1, 1)))).toArray(), [[1, 2, 3]]);
    const gi = track(wt.tensor([[0, 0], [1, 0]], { dtype: 'int64' }));
    assert.deepEqual(track(x.gather(1, gi)).toArray(), [[1, 1], [5, 4]]);
    assert.deepEqual(track(x.gather(1, gi, { sparseGrad: true })).toArray(), [[1, 1], [5, 4]]);
    const out = track(wt.empty([0], { dtype: 'float32' }));
    assert.equal(wt.gather(x, 1, gi, { out }), out);
    assert.deepEqual(out.toArray(), [[1, 1], [5, 4]]);
    // the out dtype check names the op, as every other out= check does
    const outI = track(wt.empty([0], { dtype: 'int32' }));
    throwsWeft(() => wt.gather(x, 1, gi, { out: outI }), undefined,
      /^gather: Expected out tensor to have dtype float32, but got int32 instead$/);
    // scatter: src, value, reduce, in place
    const z = track(wt.zeros([2, 3], { dtype: 'float32' }));
    assert.deepEqual(track(z.scatter(1, track(gi.narrow(1, 1, 1)), 7)).toArray(), [[7, 0, 0], [7, 0, 0]]);
    assert.deepEqual(track(z.scatter(0, track(wt.tensor([[1, 0, 1]], { dtype: 'int64' })), x)).toArray(),
      [[0, 2, 0], [1, 0, 3]]);
    assert.equal(z.scatter_(1, gi, x, { reduce: 'add' }), z);
    assert.deepEqual(z.toArray(), [[3, 0, 0], [5, 4, 0]]);
    z.scatter_(1, gi, 2, { reduce: 'multiply' });
    assert.deepEqual(z.toArray(), [[12, 0, 0], [10, 8, 0]]);
    assert.deepEqual(track(wt.scatterAdd(z, 1, gi, x)).toArray(), [[15, 0, 0], [15, 12, 0]]);
    z.scatterAdd_(1, gi, x);
    assert.deepEqual(z.toArray(), [[15, 0, 0], [15, 12, 0]]);
    throwsWeft(() => z.scatter_(1, gi, 2, { reduce: 'max' }), 'InvalidArgument', /reduce argument must be either add or multiply/);
    // take, masks
    assert.deepEqual(track(x.take(track(wt.tensor([-1, 0], { dtype: 'int64' })))).toArray(), [6, 1]);
    const m = track(x.gt(2));
    assert.deepEqual(track(x.maskedFill(m, 0)).toArray(), [[1, 2, 0], [0, 0, 0]]);
    assert.deepEqual(track(x.maskedSelect(m)).toArray(), [3, 4, 5, 6]);
    const y = track(x.clone());
    assert.equal(y.maskedFill_(m, track(wt.tensor(9, { dtype: 'float64' }))), y);
    assert.deepEqual(y.toArray(), [[1, 2, 9], [9, 9, 9]]);
    // nonzero: a [n, ndim] tensor, or one 1-D tensor per dim; where(cond) is the tuple form
    assert.deepEqual(track(m.nonzero()).toArray(), [[0, 2], [1, 0], [1, 1], [1, 2]]);
    const cols = m.nonzero({ asTuple: true }).map(track);
    assert.deepEqual(cols.map((c) => c.toArray().map(Number)), [[0, 1, 1, 1], [2, 0, 1, 2]]);
    const w = wt.where(m).map(track);
    assert.deepEqual(w.map((c) => c.toArray().map(Number)), [[0, 1, 1, 1], [2, 0, 1, 2]]);
    const s0 = wt.nonzero(track(wt.tensor(5, { dtype: 'float32' })), { asTuple: true }).map(track);
    assert.deepEqual(s0.map((c) => c.toArray().map(Number)), [[0]]);
    assert.deepEqual(track(wt.where(m, x, 0)).toArray(), [[0, 0, 3], [4, 5, 6]]);
    track.disposeAll();
  });
});

test('an index out of range writes nothing and reads nothing', async () => {
  const wt = await init({ variant: 'simd-threads' });
  await noLeaks(wt, () => {
    const track = tracker();
    const x = track(track(wt.arange(20, { dtype: 'float32' })).view([4, 5]));
    const before = x.toArray();
    // the bad index comes last, after indices a loop would already have written
    const bad = track(track(wt.tensor([[0, 1, 2, 3, 4, 4, 3, 2, 1, 5]], { dtype: 'int64' })).view([2, 5]));
    const flat = track(bad.view([10]));
    const top = track(x.narrow(0, 0, 2));
    throwsWeft(() => x.scatter_(1, bad, 1), 'IndexError', /index 5 is out of bounds for dimension 1 with size 5/);
    throwsWeft(() => x.scatterAdd_(1, bad, top), 'IndexError', /index 5 is out of bounds/);
    assert.deepEqual(x.toArray(), before);
    const out = track(wt.full([2, 5], 7, { dtype: 'float32' }));
    throwsWeft(() => wt.gather(x, 1, bad, { out }), 'IndexError', /index 5 is out of bounds/);
    throwsWeft(() => wt.indexSelect(x, 1, flat, { out }), 'IndexError',
      /index_select\(\): index 5 is out of bounds for dimension 1 with size 5/);
    throwsWeft(() => wt.take(x, track(wt.tensor([0, 2 ** 40], { dtype: 'int64' })), { out }), 'IndexError',
      /tried to access index 1099511627776 on a tensor of 20 elements/);
    assert.deepEqual(out.toArray(), [[7, 7, 7, 7, 7], [7, 7, 7, 7, 7]]);
    throwsWeft(() => wt.gather(x, 1, track(wt.tensor([[-(2 ** 40)]], { dtype: 'int64' }))), 'IndexError',
      /index -1099511627776 is out of bounds/);
    track.disposeAll();
  });
});

test('meta tensors: shapes without data', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const track = tracker();
    const x = track(wt.empty([4, 5], { device: 'meta' }));
    const i = track(wt.empty([3], { dtype: 'int64', device: 'meta' }));
    const g = track(wt.empty([4, 2], { dtype: 'int64', device: 'meta' }));
    assert.deepEqual(track(x.indexSelect(1, i)).shape, [4, 3]);
    assert.deepEqual(track(x.gather(1, g)).shape, [4, 2]);
    assert.deepEqual(track(x.take(g)).shape, [4, 2]);
    assert.deepEqual(track(x.scatter(1, g, 1)).shape, [4, 5]);
    const m = track(wt.empty([5], { dtype: 'bool', device: 'meta' }));
    assert.deepEqual(track(x.maskedFill(m, 1)).shape, [4, 5]);
    track.disposeAll();
  });
});

test('worker mode: gather, scatter_, nonzero asTuple, where(cond), index and indexPut_', async () => {
  const wt = await initWorker({ variant: 'simd' });
  try {
    const x = wt.tensor([[1, 0, 3], [0, 5, 0]], { dtype: 'float32' });
    const i = wt.tensor([[2, 0], [1, 1]], { dtype: 'int64' });
    assert.deepEqual(await x.gather(1, i).toArray(), [[3, 1], [5, 5]]);
    assert.deepEqual(await wt.indexSelect(x, 1, wt.tensor([1], { dtype: 'int64' })).toArray(), [[0], [5]]);
    const cols = await wt.nonzero(x, { asTuple: true });
    assert.equal(cols.length, 2);
    assert.deepEqual((await cols[1].toArray()).map(Number), [0, 2, 1]);
    const w = await wt.where(x.ne(0));
    assert.deepEqual((await w[0].toArray()).map(Number), [0, 0, 1]);
    x.scatter_(1, i, 9);
    assert.deepEqual(await x.toArray(), [[9, 0, 9], [0, 9, 0]]);
    assert.deepEqual(await x.index(0, '1:').toArray(), [0, 9]);
    assert.deepEqual(await x.index(':', wt.tensor([2, 0], { dtype: 'int64' })).toArray(), [[9, 9], [0, 0]]);
    x.indexPut_([x.eq(9)], 1);
    assert.deepEqual(await x.toArray(), [[1, 0, 1], [0, 1, 0]]);
  } finally {
    await wt.terminate();
  }
});
