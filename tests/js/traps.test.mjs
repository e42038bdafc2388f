// JS without traps (issue 25, js/traps.js): plain arrays as index tensors,
// floating indices refused with the fix, int32 class targets, integer
// overflow refused as PyTorch refuses it, missing names with the closest
// ones, for..of over dim 0, to(dtype, options), and worker mode's
// non-op names. Expected values from PyTorch 1.13 (noted beside each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initWorker } from 'weft';
import { init, counts, throwsWeft, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`traps: integer arrays as indices (${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const x = wt.tensor([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]);
    const check = (r, want, dtype = 'float32') => {
      assert.equal(r.dtype, dtype);
      assert.deepEqual(r.toArray(), want);
      r.dispose();
    };
    check(x.indexSelect(0, [0, 2]), [[0, 1, 2, 3], [8, 9, 10, 11]]);
    check(wt.indexSelect(x, 1, new Int32Array([3])), [[3], [7], [11]]);
    check(wt.gather(x, 1, [[0], [1], [3]]), [[0], [5], [11]]);
    check(x.gather(1, [[0n], [1n], [3n]]), [[0], [5], [11]]);
    check(x.scatter(1, [[0], [1], [3]], 7), [[7, 1, 2, 3], [4, 7, 6, 7], [8, 9, 10, 7]]);
    const ones = wt.ones([1, 4]);
    check(x.scatterAdd(0, [[1, 0, 2, 0]], ones), [[0, 2, 2, 4], [5, 5, 6, 7], [8, 9, 11, 11]]);
    ones.dispose();
    check(wt.take(x, [0, 11, 5]), [0, 11, 5]);
    check(x.take(new BigInt64Array([1n, -1n])), [1, 11]);
    // indexPut_ takes arrays too (as x.index does)
    const y = x.clone();
    y.indexPut_([[0, 2]], 5);
    check(y, [[5, 5, 5, 5], [4, 5, 6, 7], [5, 5, 5, 5]]);
    // a non-integer in the array is no index
    throwsWeft(() => x.indexSelect(0, [0, 1.5]), 'TypeError',
      /^index_select\(\): argument 'index' must be a Tensor or an array of integers, but found 1\.5$/);
    throwsWeft(() => wt.take(x, new Float32Array([0.5])), 'TypeError', /found 0\.5/);
    // an out-of-range entry fails as the op does
    throwsWeft(() => x.indexSelect(0, [3]), undefined, /index_select|out of range/);
    x.dispose();
    assert.deepEqual(counts(wt), before, 'the index tensors made from arrays are freed, on errors too');
  });
}

test('traps: a floating tensor as an index names its dtype and the fix', async () => {
  const wt = await init();
  const x = wt.tensor([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]);
  const idx = wt.tensor([0, 2]); // JS numbers: float32
  const fix = /\(got a float32 tensor: convert it with \.long\(\), or make it with \{ dtype: 'int64' \}/;
  for (const [fn, pytorch] of [
    [() => x.indexSelect(0, idx), /^index_select\(\): Expected dtype int32 or int64 for index /],
    [() => wt.gather(x, 0, idx.view([1, 2])), /^gather\(\): Expected dtype int64 for index /],
    [() => wt.take(x, idx), /^take\(\): Expected a long tensor for index, but got float32 /],
    [() => x.index(idx), /^tensors used as indices must be long, byte or bool tensors /],
  ]) {
    throwsWeft(fn, undefined, pytorch);
    throwsWeft(fn, undefined, fix);
  }
  const f64 = idx.double();
  throwsWeft(() => x.indexSelect(0, f64), undefined, /got a float64 tensor/);
  // the fix works
  const long = idx.long();
  assert.deepEqual(x.indexSelect(0, long).toArray(), [[0, 1, 2, 3], [8, 9, 10, 11]]);
  for (const t of [x, idx, f64, long]) t.dispose();
});

test('traps: numbers beyond an integer dtype are refused as PyTorch refuses them', async () => {
  const wt = await init();
  // torch.tensor([2**63], dtype=torch.int64): RuntimeError: Overflow when unpacking long
  throwsWeft(() => wt.tensor([2 ** 63], { dtype: 'int64' }), 'OverflowError', /^Overflow when unpacking long$/);
  throwsWeft(() => wt.tensor([-(2 ** 64)], { dtype: 'int64' }), 'OverflowError', /^Overflow when unpacking long$/);
  throwsWeft(() => wt.tensor([2n ** 63n]), 'OverflowError', /^Overflow when unpacking long$/);
  throwsWeft(() => wt.sort(2 ** 63), 'OverflowError', /^Overflow when unpacking long$/);
  throwsWeft(() => wt.full([2], 2 ** 63, { dtype: 'int64' }), 'OverflowError', /^Overflow when unpacking long$/);
  const six = wt.zeros([6]);
  throwsWeft(() => six.view(2 ** 64), 'OverflowError', /^Overflow when unpacking long$/);
  // 2 ** 63 as an integer argument is int64's max (JS cannot spell 2 ** 63 - 1): a slice to the end
  const end = six.slice(0, 2, 2 ** 63);
  assert.deepEqual(end.shape, [4]);
  end.dispose();
  throwsWeft(() => six.select(0, -(2 ** 64)), 'OverflowError', /^Overflow when unpacking long$/);
  six.dispose();
  // torch.tensor([2**31], dtype=torch.int32) / ([300], uint8) / ([nan], int64)
  throwsWeft(() => wt.tensor([2 ** 31], { dtype: 'int32' }), 'OverflowError',
    /^value cannot be converted to type int32 without overflow$/);
  throwsWeft(() => wt.tensor([300], { dtype: 'uint8' }), 'OverflowError', /type uint8 without overflow/);
  throwsWeft(() => wt.tensor([-129], { dtype: 'int8' }), 'OverflowError', /type int8 without overflow/);
  throwsWeft(() => wt.tensor([NaN], { dtype: 'int64' }), 'OverflowError', /type int64 without overflow/);
  // what PyTorch keeps: int64's extremes, uint8's -1 (255), int32's limits
  const keep = [
    wt.tensor([-(2 ** 63), 2 ** 53], { dtype: 'int64' }), wt.tensor([-1, 255], { dtype: 'uint8' }),
    wt.tensor([2 ** 31 - 1, -(2 ** 31)], { dtype: 'int32' }),
  ];
  assert.deepEqual(keep[0].toArray({ bigint: true }), [-(2n ** 63n), 2n ** 53n]);
  assert.deepEqual(keep[1].toArray(), [255, 255]);
  assert.deepEqual(keep[2].toArray(), [2 ** 31 - 1, -(2 ** 31)]);
  // a Scalar beyond int64 is a float (JS cannot tell 1e300 from an integer)
  const f = wt.ones([2]);
  const g = f.mul(1e300);
  assert.deepEqual(g.toArray(), [Infinity, Infinity]); // float32 overflow, not int64's saturated max
  for (const t of [...keep, f, g]) t.dispose();
});

test('traps: missing names of wt and wt.nn.functional say the closest ones', async () => {
  const wt = await init();
  throwsWeft(() => wt.layerNrom, 'AttributeError', /^wt has no attribute 'layerNrom' \(did you mean wt\.layerNorm\?\)$/);
  throwsWeft(() => wt.indexselect(), 'AttributeError', /did you mean wt\.indexSelect\?/);
  throwsWeft(() => wt.nn.functional.softmx, 'AttributeError',
    /^wt\.nn\.functional has no attribute 'softmx' \(did you mean wt\.nn\.functional\.softmax/);
  throwsWeft(() => wt.nn.F.relu6x, 'AttributeError', /did you mean wt\.nn\.functional\.relu6, wt\.nn\.functional\.relu/);
  throwsWeft(() => wt.qwertyuiop, 'AttributeError', /^wt has no attribute 'qwertyuiop'$/);
  // what is there, probes and `in` are untouched
  assert.equal(typeof wt.layerNorm, 'function');
  assert.equal('fooBar' in wt, false);
  assert.equal(wt.then, undefined);
  assert.equal(typeof wt.toString, 'function');
  assert.equal(wt[Symbol.toStringTag], undefined);
  assert.equal(await Promise.resolve(wt), wt);
  assert.ok(JSON.stringify({ a: 1 }));
  wt.myHelper = 1; // assignments still define own names
  assert.equal(wt.myHelper, 1);
  delete wt.myHelper;
});

test('traps: for..of iterates over dim 0; a 0-dim tensor refuses', async () => {
  const wt = await init();
  const before = counts(wt);
  const t = wt.tensor([[0, 1], [2, 3], [4, 5]], { dtype: 'int64' });
  const rows = [];
  for (const row of t) {
    assert.deepEqual(row.shape, [2]);
    rows.push(row.toArray());
    row.dispose();
  }
  assert.deepEqual(rows, [[0, 1], [2, 3], [4, 5]]);
  const s = wt.tensor(1);
  // PyTorch: TypeError: iteration over a 0-d tensor
  throwsWeft(() => { for (const _ of s) assert.fail(); }, 'TypeError', /^iteration over a 0-d tensor$/);
  const e = wt.zeros([0, 3]);
  assert.equal([...e].length, 0);
  for (const x of [t, s, e]) x.dispose();
  assert.deepEqual(counts(wt), before);
});

test('traps: to(dtype, { memoryFormat }) as PyTorch\'s to(dtype, memory_format=)', async () => {
  const wt = await init();
  const x = wt.ones([2, 3, 4, 5], { dtype: 'float64' });
  // PyTorch: y.to(torch.float32, memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
  for (const y of [x.to('float32', { memoryFormat: 'channels_last' }), wt.to(x, 'float32', { memoryFormat: 'channels_last' }),
    x.to('cpu', 'float32', { memoryFormat: 'channels_last' })]) {
    assert.equal(y.dtype, 'float32');
    assert.deepEqual(y.stride(), [60, 1, 15, 3]);
    y.dispose();
  }
  x.dispose();
});

test('traps: a worker call of a non-op name rejects its own call only', async () => {
  const ww = await initWorker({ variant: 'simd' });
  let unhandled = null;
  const onUnhandled = (e) => { unhandled = e; };
  process.on('unhandledRejection', onUnhandled);
  try {
    const t = ww.ones([2]).constructor(1);
    await assert.rejects(() => t.shape, /constructor: not a weft Tensor method/);
    assert.deepEqual(await ww.ones([2]).toArray(), [1, 1]); // the worker goes on
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(unhandled, null);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await ww.terminate?.();
  }
});
