// conv1d, conv_transpose2d and conv_transpose1d (issue 23): every case of
// tests/fixtures/conv_transpose.json (PyTorch 1.13, made by
// tests/fixtures/gen_conv_transpose_fixtures.py) on each wasm variant: the
// forward cases through wt.ops.call (values, strides, errors; the replay:
// ./case-replay.mjs), the gradient cases through wt.conv1d /
// wt.convTranspose2d / wt.convTranspose1d / wt.adaptiveAvgPool2d and backward (node names,
// result strides, .grad values and strides; ./grad-case-replay.mjs). Then
// the JS spellings with their options, explain(), the Meta device and the
// convolution_backward op with transposed=true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, counts, throwsWeft, VARIANTS } from './helpers.mjs';
import { problems } from './case-replay.mjs';
import { gradProblems } from './grad-case-replay.mjs';

const FX = loadFixture('conv_transpose.json');

// PyTorch's global pooling of NHWC restrides its mean with as_strided_
// (AsStridedBackward1); weft takes the mean over the NHWC view and permutes
// it back: the same strides and gradients, another node. conv1d (and
// conv_transpose1d) of an unbatched input is one node (1.13: ConvolutionBackward0, then its squeeze), as conv2d's.
const NAME = Object.fromEntries(FX.grads.flatMap((c) => {
  if (c.name.startsWith('adaptive_1x1_') && c.name.endsWith('_cl')) return [[c.name, 'PermuteBackward0']];
  return /^(conv1d_unbatched|convt1d_dilated_unbatched)/.test(c.name) ? [[c.name, 'ConvolutionBackward0']] : [];
}));

for (const variant of VARIANTS) {
  test(`${variant}: conv_transpose.json forward cases through ops.call`, async (t) => {
    const wt = await init({ variant });
    const bad = FX.cases.flatMap((c) => problems(wt, c).map((p) => `${c.op} ${JSON.stringify(c.args.map((a) =>
      a.tensor ? a.tensor.size : a.list ?? a.str ?? a.scalar ?? null))}: ${p}`));
    t.diagnostic(`${FX.cases.length} cases`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
  });

  test(`${variant}: conv_transpose.json gradients`, async (t) => {
    const wt = await init({ variant });
    const before = counts(wt);
    const bad = FX.grads.flatMap((c) => gradProblems(wt, c, NAME));
    t.diagnostic(`${FX.grads.length} cases`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
    assert.deepEqual(counts(wt), before);
  });
}

test('wt.convTranspose2d and wt.conv1d: options, explain, Meta, layouts', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    // x [1, 1, 2, 2] = 1..4, w ones [1, 1, 2, 2], stride 2: each input value fills its own 2x2 block
    const x = wt.arange(1, 5, { dtype: 'float32' }).view(1, 1, 2, 2);
    const w = wt.ones([1, 1, 2, 2], { dtype: 'float32' });
    const y = wt.convTranspose2d(x, w, wt.tensor([0.5]), { stride: 2 });
    assert.deepEqual(y.toArray()[0][0], [[1.5, 1.5, 2.5, 2.5], [1.5, 1.5, 2.5, 2.5], [3.5, 3.5, 4.5, 4.5],
      [3.5, 3.5, 4.5, 4.5]]);
    // stride 1: overlapping windows add up
    assert.deepEqual(wt.convTranspose2d(x, w).toArray()[0][0], [[1, 3, 2], [4, 10, 6], [3, 7, 4]]);
    assert.deepEqual(wt.convTranspose2d(x, w, null, { stride: 2, padding: 1, outputPadding: 1 }).shape, [1, 1, 3, 3]);
    assert.deepEqual(wt.convTranspose2d(x, w, null, { stride: [1, 2], dilation: 2 }).shape, [1, 1, 4, 5]);
    const wg = wt.ones([2, 3, 3, 3], { dtype: 'float32' });
    const x2 = wt.ones([1, 2, 4, 4], { dtype: 'float32' });
    assert.deepEqual(wt.convTranspose2d(x2, wg, null, { groups: 2 }).shape, [1, 6, 6, 6]);
    // unbatched, and a channels_last input: contiguous output, as 1.13's slow_conv_transpose2d
    assert.deepEqual(wt.convTranspose2d(x2.view(2, 4, 4), wg, null, { groups: 2 }).shape, [6, 6, 6]);
    const ycl = wt.convTranspose2d(x2.contiguous({ memoryFormat: 'channels_last' }), wg, null, { groups: 2 });
    assert.equal(ycl.isContiguous(), true);
    const plan = wt.explain('conv_transpose2d', x2, wg, null, { groups: 2, stride: 2 });
    assert.equal(plan.op, 'conv_transpose2d');
    assert.equal(plan.algorithm, 'gemm_col2im_nchw');
    assert.deepEqual(plan.output, [1, 6, 9, 9]);
    assert.deepEqual(plan.gemm, { m: 27, n: 16, k: 1, count: 2 });
    const meta = wt.convTranspose2d(wt.empty([8, 16, 7, 7], { device: 'meta' }), wt.empty([16, 8, 4, 4],
      { device: 'meta' }), null, { stride: 2, padding: 1 });
    assert.deepEqual(meta.shape, [8, 8, 14, 14]);
    throwsWeft(() => wt.convTranspose2d(x, w, null, { stride: 2, outputPadding: 2 }), 'InvalidArgument',
      /^conv_transpose2d: output padding must be smaller than either stride or dilation/);
    throwsWeft(() => wt.convTranspose2d(x.long(), w.long()), 'InvalidArgument',
      /"slow_conv_transpose2d_out_cpu" not implemented for 'int64'/);
    // conv_transpose1d: [1, 1, 3] = 1..3 with ones [1, 1, 2], stride 2: each value fills two places
    const v = wt.arange(1, 4, { dtype: 'float32' }).view(1, 1, 3);
    assert.deepEqual(wt.convTranspose1d(v, wt.ones([1, 1, 2], { dtype: 'float32' }), null, { stride: 2, outputPadding: 1 })
      .toArray(), [[[1, 1, 2, 2, 3, 3, 0]]]);
    throwsWeft(() => wt.convTranspose1d(v, wt.ones([1, 1, 2]), null, { outputPadding: 1 }), 'InvalidArgument',
      /^conv_transpose1d: output padding must be smaller than either stride or dilation, but got output_padding_height: 0 /);
    // conv1d: [1, 2, 4] with ones [1, 2, 2]
    const s = wt.arange(8, { dtype: 'float32' }).view(1, 2, 4);
    const k = wt.ones([1, 2, 2], { dtype: 'float32' });
    assert.deepEqual(wt.conv1d(s, k).toArray(), [[[10, 14, 18]]]);
    assert.deepEqual(wt.conv1d(s, k, null, { padding: 'same' }).shape, [1, 1, 4]);
    assert.deepEqual(wt.conv1d(s, k, null, { stride: 2, padding: 1, dilation: 2 }).shape, [1, 1, 2]);
    assert.deepEqual(wt.conv1d(s.view(2, 4), k).toArray(), [[10, 14, 18]]);
    const p1 = wt.explain('conv1d', s, k, null, { padding: 1 });
    assert.equal(p1.op, 'conv1d');
    assert.equal(p1.algorithm, 'im2col_gemm_nchw');
    assert.deepEqual([p1.input, p1.output, p1.padding], [[1, 2, 1, 4], [1, 1, 1, 5], [0, 1]]);
    throwsWeft(() => wt.conv1d(s, k, null, { stride: [1, 1] }), 'InvalidArgument',
      /^conv1d: expected stride to be a single integer value or a list of 1 values/);
    throwsWeft(() => wt.conv1d(x, k), 'InvalidArgument',
      /^conv1d: Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d, but got input of size: \[1, 1, 2, 2\]$/);
    throwsWeft(() => wt.conv1d(s, w), 'InvalidArgument',
      /^conv1d: Expected 4-dimensional input for 4-dimensional weight \[1, 1, 2, 2\], but got 3-dimensional input/);
  });
  assert.deepEqual(counts(wt), before);
});

test('convolution_backward with transposed=true: the three gradients, masked, and its checks', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    wt.manualSeed(23);
    const x = wt.randn([2, 4, 3, 3], { dtype: 'float64' }).requiresGrad_();
    const w = wt.randn([4, 3, 2, 2], { dtype: 'float64' }).requiresGrad_();
    const b = wt.randn([6], { dtype: 'float64' }).requiresGrad_();
    const y = wt.convTranspose2d(x, w, b, { stride: 2, outputPadding: 1, groups: 2 });
    const gy = wt.randnLike(y);
    y.backward(gy);
    // (all three outputs at once from tensors that need no gradient: one autograd node per output for now)
    const [xd, wd] = [x.detach(), w.detach()];
    const [gx, gw, gb] = wt.convolutionBackward(gy, xd, wd, [6], [2, 2], [0, 0], [1, 1], true, [1, 1], 2,
      [true, true, true]);
    for (const [a, e] of [[gx, x.grad], [gw, w.grad], [gb, b.grad]])
      assert.ok(a.sub(e).abs().max().item() < 1e-12);
    const [nx, , nb] = wt.convolutionBackward(gy, xd, wd, null, [2, 2], [0, 0], [1, 1], true, [1, 1], 2,
      [false, true, false]);
    assert.equal(nx, null);
    assert.equal(nb, null);
    throwsWeft(() => wt.convolutionBackward(gy.narrow(2, 0, 3), xd, wd, null, [2, 2], [0, 0], [1, 1], true, [1, 1], 2,
      [true, false, false]), 'InvalidArgument',
    /^convolution_backward: expected grad_output of size \[2, 6, 7, 7\] but got \[2, 6, 3, 7\]/);
  });
  assert.deepEqual(counts(wt), before);
});
