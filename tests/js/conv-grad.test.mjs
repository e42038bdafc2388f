// Gradients of conv2d and 2-D pooling (issue 15): every case of
// tests/fixtures/conv_grad.json (PyTorch 1.13's .grad after backward for the
// same inputs and output gradient, made by
// tests/fixtures/gen_conv_grad_fixtures.py; the float64 gradcheck is
// tests/c/test_conv_grad.c) on each wasm variant: node name, result strides,
// .grad values and strides, NCHW and channels_last. Then the backward ops
// called directly (PyTorch's message for a wrong grad_output), the digits
// CNN's layers trained one step, and no leak.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, counts, throwsWeft, VARIANTS } from './helpers.mjs';
import { gradProblems } from './grad-case-replay.mjs';

const FX = loadFixture('conv_grad.json');

// weft records conv2d of a 3-D input as one node (1.13: ConvolutionBackward0, then its squeeze)
const NAME = { conv_unbatched: 'ConvolutionBackward0' };

for (const variant of VARIANTS) {
  test(`${variant}: conv_grad.json (gradients of conv2d and the pools)`, async (t) => {
    const wt = await init({ variant });
    const before = counts(wt);
    const bad = FX.cases.flatMap((c) => gradProblems(wt, c, NAME));
    t.diagnostic(`${FX.cases.length} cases`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
    assert.deepEqual(counts(wt), before);
  });
}

test('the backward ops: results, messages, Meta', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.arange(16, { dtype: 'float32' }).view(1, 1, 4, 4);
    const gy = wt.full([1, 1, 2, 2], 4, { dtype: 'float32' });
    const [, idx] = wt.maxPool2dWithIndices(x, 2);
    const gm = wt.maxPool2dWithIndicesBackward(gy, x, [2, 2], [2, 2], [0, 0], [1, 1], false, idx);
    assert.deepEqual(gm.toArray()[0][0], [[0, 0, 0, 0], [0, 4, 0, 4], [0, 0, 0, 0], [0, 4, 0, 4]]);
    const ga = wt.avgPool2dBackward(gy, x, [2, 2], [2, 2], [0, 0], false, true, null);
    assert.deepEqual(ga.toArray().flat(Infinity), new Array(16).fill(1));
    const gd = wt._adaptiveAvgPool2dBackward(gy, x);
    assert.deepEqual(gd.toArray().flat(Infinity), new Array(16).fill(1));
    const wrong = wt.zeros([1, 1, 3, 2], { dtype: 'float32' });
    for (const e of FX.errors) {
      const fn = e.op === 'avg_pool2d_backward'
        ? () => wt.avgPool2dBackward(wt.zeros([2, 3, 3, 3]), wt.zeros([2, 3, 5, 5]), [2, 2], [2, 2], [0, 0], false, true)
        : () => wt.maxPool2dWithIndicesBackward(wt.zeros([2, 3, 2, 3]), wt.zeros([2, 3, 5, 5]), [2, 2], [2, 2], [0, 0],
          [1, 1], false, wt.zeros([2, 3, 2, 3], { dtype: 'int64' }));
      throwsWeft(fn, 'InvalidArgument', new RegExp(`^${e.op}: ${e.error.replace(/[[\]().*+?]/g, '\\$&')}$`));
    }
    throwsWeft(() => wt.avgPool2dBackward(wrong, x, [2, 2], [2, 2], [0, 0], false, true), 'InvalidArgument',
      /tensor\.size\[2\] == 2 but got: dimension 4 and tensor\.size\[2\] = 3/);
    const xm = wt.empty([8, 3, 32, 32], { device: 'meta' }).contiguous({ memoryFormat: 'channels_last' });
    const gmeta = wt.avgPool2dBackward(wt.empty([8, 3, 16, 16], { device: 'meta' }), xm, 2, 2, 0, false, true);
    assert.deepEqual(gmeta.shape, [8, 3, 32, 32]);
    assert.equal(gmeta.isContiguous('channels_last'), true);
  });
  assert.deepEqual(counts(wt), before);
});

test('the digits CNN layers: conv2d -> relu -> maxPool2d -> linear, one SGD step lowers the loss', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    wt.manualSeed(4);
    const x = wt.randn([16, 1, 8, 8]);
    const target = wt.randint(0, 10, [16]);
    const w1 = wt.randn([8, 1, 3, 3]).mul(0.3).requiresGrad_();
    const b1 = wt.zeros([8], { requiresGrad: true });
    const w2 = wt.randn([10, 128]).mul(0.1).requiresGrad_();
    const loss = () => {
      const h = wt.maxPool2d(wt.conv2d(x, w1, b1, { padding: 1 }).relu(), 2);
      return wt.crossEntropy(wt.linear(h.flatten(1), w2), target);
    };
    const l0 = loss();
    const fn = l0.gradFn;
    assert.equal(fn.name, 'NllLossBackward0');
    fn.dispose(); // a GradFn holds the graph (and so the leaves) until disposed
    l0.backward();
    for (const p of [w1, b1, w2]) assert.deepEqual(p.grad.shape, p.shape);
    const opt = new wt.optim.SGD([w1, b1, w2], { lr: 0.1 });
    opt.step();
    const l1 = loss();
    assert.ok(l1.item() < l0.item(), `${l1.item()} < ${l0.item()}`);
    opt.dispose();
  });
  assert.deepEqual(counts(wt), before);
});
