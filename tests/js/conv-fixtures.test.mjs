// conv2d (issue 12): every case of tests/fixtures/conv.json (PyTorch 1.13,
// made by tests/fixtures/gen_conv_fixtures.py; the native replay is
// tests/c/test_conv.c) through wt.ops.call on each wasm variant (the replay:
// ./case-replay.mjs). Then the generated spelling wt.conv2d(x, w, b?,
// { stride, padding, dilation, groups }) with padding as a number, an array,
// 'same' and 'valid'; the algorithm explain() reports for each memory format;
// the layouts of the results; and conv2d through a worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { initWorker } from 'weft';
import { init, WeftError, counts, VARIANTS } from './helpers.mjs';
import { problems } from './case-replay.mjs';

const { cases } = loadFixture('conv.json');

// x [1, 2, 3, 3] = 0..17, w [2, 2, 2, 2] = ones: each output sums a 2x2x2 window
function small(wt) {
  const base = wt.arange(18, { dtype: 'float32' });
  const x = base.view(1, 2, 3, 3);
  const w = wt.ones([2, 2, 2, 2], { dtype: 'float32' });
  const b = wt.tensor([0.5, -1], { dtype: 'float32' });
  return { base, x, w, b };
}

for (const variant of VARIANTS) {
  test(`${variant}: conv.json through ops.call`, async (t) => {
    const wt = await init({ variant });
    const bad = cases.flatMap((c) => problems(wt, c));
    t.diagnostic(`${cases.length} cases`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
  });

  test(`${variant}: wt.conv2d options, explain and layouts`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const { base, x, w, b } = small(wt);
    const made = [base, x, w, b];
    const keep = (t) => (made.push(t), t);
    // valid: windows at (0,0) (0,1) (1,0) (1,1); sums of x over both channels
    const r = keep(wt.conv2d(x, w, b));
    assert.deepEqual(r.toArray(), [[[[52.5, 60.5], [76.5, 84.5]], [[51, 59], [75, 83]]]]);
    assert.deepEqual(keep(wt.conv2d(x, w, null, { padding: 'valid' })).shape, [1, 2, 2, 2]);
    assert.deepEqual(keep(wt.conv2d(x, w, b, { padding: 1, stride: 2 })).shape, [1, 2, 2, 2]);
    assert.deepEqual(keep(wt.conv2d(x, w, b, { padding: [1, 0], dilation: [1, 2] })).shape, [1, 2, 4, 1]);
    assert.deepEqual(keep(wt.conv2d(x, w, b, { padding: 'same' })).shape, [1, 2, 3, 3]);
    const wg = keep(wt.ones([4, 1, 3, 3], { dtype: 'float32' }));
    assert.deepEqual(keep(wt.conv2d(x, wg, null, { groups: 2, padding: 1 })).shape, [1, 4, 3, 3]);
    // unbatched
    assert.deepEqual(keep(wt.conv2d(keep(x.view(2, 3, 3)), w)).shape, [2, 2, 2]);
    // channels_last in, channels_last out; the algorithms explain() reports
    const xcl = keep(x.contiguous({ memoryFormat: 'channels_last' }));
    const rcl = keep(wt.conv2d(xcl, w, b));
    assert.equal(rcl.isContiguous('channels_last'), true);
    assert.deepEqual(rcl.toArray(), r.toArray());
    assert.equal(wt.explain('conv2d', x, w, b).algorithm, 'im2col_gemm_nchw');
    const plan = wt.explain('conv2d', xcl, w, b, { padding: 1 });
    assert.equal(plan.algorithm, 'implicit_gemm_nhwc');
    assert.equal(plan.memory_format, 'channels_last');
    assert.deepEqual(plan.output, [1, 2, 4, 4]);
    assert.equal(wt.explain('conv2d', xcl, wg, null, { groups: 2, padding: 1 }).algorithm, 'implicit_gemm_nhwc');
    const wd = keep(wt.ones([2, 1, 3, 3], { dtype: 'float32' }));
    assert.equal(wt.explain('conv2d', xcl, wd, null, { groups: 2 }).algorithm, 'depthwise_nhwc');
    assert.equal(wt.explain('conv2d', x, wd, null, { groups: 2 }).algorithm, 'depthwise_nchw');
    const w1 = keep(wt.ones([3, 2, 1, 1], { dtype: 'float32' }));
    assert.equal(wt.explain('conv2d', xcl, w1).algorithm, 'gemm_1x1_nhwc');
    assert.equal(wt.explain('conv2d', x, w1).algorithm, 'gemm_1x1_nchw');
    // errors
    assert.throws(() => wt.conv2d(x, wg), (e) => e instanceof WeftError &&
      /Given groups=1, weight of size \[4, 1, 3, 3\], expected input\[1, 2, 3, 3\] to have 1 channels, but got 2/
        .test(e.message));
    assert.throws(() => wt.conv2d(x, w, b, { padding: 'same', stride: 2 }), (e) => e instanceof WeftError &&
      /padding='same' is not supported for strided convolutions/.test(e.message));
    assert.throws(() => wt.conv2d(x, w, b, { padding: 'full' }), /Invalid padding string: 'full'/);
    for (const t of made) t.dispose();
    assert.deepEqual(counts(wt), before);
  });
}

test('conv2d through a worker', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const x = ww.arange(18, { dtype: 'float32' }).view(1, 2, 3, 3);
    const w = ww.ones([2, 2, 2, 2], { dtype: 'float32' });
    const y = ww.conv2d(x, w, null, { padding: 'same' });
    assert.deepEqual(await y.shape, [1, 2, 3, 3]);
    const v = await ww.conv2d(x, w).toArray();
    assert.deepEqual(v, [[[[52, 60], [76, 84]], [[52, 60], [76, 84]]]]);
    assert.equal((await ww.explain('conv2d', x, w)).algorithm, 'im2col_gemm_nchw');
  } finally {
    await ww.terminate();
  }
});
