// Second derivatives through createGraph (issue 15) against PyTorch 1.13:
// every case of tests/fixtures/double_backward.json (made by
// tests/fixtures/gen_double_backward_fixtures.py) on each wasm variant: the
// node names of the first gradients (SelectBackwardBackward0,
// ConvolutionBackwardBackward0, MaxPool2DWithIndicesBackwardBackward0, ...)
// and the gradient of sum(g_i * v_i) w.r.t. every input, NCHW and
// channels_last. Then the backward ops called directly, convolution_backward's
// output_mask and messages, the refusals that remain, and no leak. The
// float64 finite-difference checks are tests/js/gradcheck.test.mjs's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { initWorker } from 'weft';
import { init, counts, close, throwsWeft, VARIANTS } from './helpers.mjs';

const FX = loadFixture('double_backward.json');

const CASES = {
  select: (wt, a) => a.select(1, 2).pow(3).sum(),
  slice: (wt, a) => a.slice(1, 1, null, 2).pow(3).sum(),
  narrow: (wt, a) => a.narrow(0, 1, 2).pow(3).sum(),
  diagonal: (wt, a) => a.diagonal(1, 0, 2).pow(3).sum(),
  conv2d: (wt, x, w, b) => wt.conv2d(x, w, b, [2, 1], [1, 0], [1, 2], 2).pow(2).sum(),
  conv2d_cl: (wt, x, w, b) => wt.conv2d(x, w, b, 1, 1).pow(2).sum(),
  conv2d_same: (wt, x, w) => wt.conv2d(x, w, null, 1, 'same').pow(2).sum(),
  conv2d_same_even: (wt, x, w) => wt.conv2d(x, w, null, 1, 'same', [1, 3]).pow(2).sum(),
  conv2d_twice: (wt, x, w1, w2) => wt.conv2d(wt.conv2d(x, w1).tanh(), w2).sum(),
  max_pool2d: (wt, a) => wt.maxPool2d(a, 3, { stride: 2, padding: 1 }).pow(2).sum(),
  max_pool2d_cl: (wt, a) => wt.maxPool2d(a, 2, { dilation: 2, ceilMode: true }).pow(3).sum(),
  avg_pool2d: (wt, a) => wt.avgPool2d(a, 3, { stride: 2, padding: 1, countIncludePad: false }).pow(2).sum(),
  avg_pool2d_cl: (wt, a) => wt.avgPool2d(a, 2, { divisorOverride: 3 }).pow(3).sum(),
  adaptive_avg_pool2d: (wt, a) => wt.adaptiveAvgPool2d(a, [2, 3]).pow(2).sum(),
  adaptive_avg_pool2d_cl: (wt, a) => wt.adaptiveAvgPool2d(a, [3, 2]).pow(2).sum(),
  copy_slices: (wt, a, b) => {
    const c = a.mul(1);
    c.select(0, 1).mul_(b);
    return c.pow(3).sum();
  },
  as_strided: (wt, a) => {
    const c = a.mul(1);
    const v = c.narrow(1, 1, 2);
    c.sin_();
    return v.pow(3).sum();
  },
};

const f64 = { dtype: 'float64' };
const values = (wt, s) => wt.tensor(Float64Array.from(s.values), f64).reshape(s.size);

function leaf(wt, s) {
  const t = values(wt, s);
  return (s.cl ? t.contiguous({ memoryFormat: 'channels_last' }) : t).requiresGrad_();
}

function problems(wt, c) {
  const bad = [];
  wt.tidy(() => {
    const ins = c.inputs.map((s) => leaf(wt, s));
    const gs = wt.autograd.grad(CASES[c.name](wt, ...ins), ins, { createGraph: true });
    gs.forEach((g, i) => {
      const fn = g.gradFn; // holds its node until disposed
      const want = c.grad_fns[i];
      if (want && fn?.name !== want) bad.push(`${c.name}: gradient ${i} node ${fn?.name}, not ${want}`);
      fn?.dispose();
    });
    const total = gs.map((g, i) => g.mul(values(wt, { values: c.v[i], size: c.inputs[i].size })).sum())
      .reduce((a, b) => a.add(b));
    const g2 = wt.autograd.grad(total, ins, { allowUnused: true });
    g2.forEach((g, i) => {
      const got = g ? g.contiguous().toArray().flat(Infinity) : c.grad2[i].map(() => 0);
      const j = c.grad2[i].findIndex((v, k) => !close(got[k], v, 1e-10));
      if (j >= 0) bad.push(`${c.name}: second derivative ${i} [${j}]: ${got[j]} vs ${c.grad2[i][j]}`);
    });
  });
  return bad;
}

const flat = (t) => t.contiguous().toArray().flat(Infinity);
const same = (got, want) => got.length === want.length && want.every((v, k) => close(got[k], v, 1e-12));

for (const variant of VARIANTS) {
  test(`${variant}: double_backward.json (second derivatives and node names)`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const bad = FX.cases.flatMap((c) => problems(wt, c));
    assert.deepEqual(bad, []);
    assert.deepEqual(counts(wt), before);
  });
}

test('select_backward, slice_backward, diagonal_backward and convolution_backward as ops', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const fns = { select_backward: wt.selectBackward, slice_backward: wt.sliceBackward,
      diagonal_backward: wt.diagonalBackward };
    for (const d of FX.direct) {
      const r = fns[d.op](values(wt, d.grad), ...d.args);
      assert.ok(same(flat(r), d.result), d.op);
    }
    // the view's own range check, and a grad_output that does not fit the view (PyTorch's words)
    throwsWeft(() => wt.selectBackward(wt.ones([3]), [3, 4], 1, 7), 'IndexError',
      /^select\(\): index 7 out of range for tensor of size \[3, 4\] at dimension 1$/);
    throwsWeft(() => wt.selectBackward(wt.ones([5]), [3, 4], 1, 0), 'ShapeError',
      /^select_backward: The size of tensor a \(3\) must match the size of tensor b \(5\) at non-singleton dimension 0$/);
    const c = FX.convolution_backward;
    const r = wt.convolutionBackward(values(wt, c.go), values(wt, c.x), values(wt, c.w), ...c.args);
    assert.equal(r.length, 3);
    assert.equal(r[1], null); // output_mask [true, false, true]
    assert.ok(same(flat(r[0]), c.result[0]) && same(flat(r[2]), c.result[2]));
    assert.deepEqual(r[0].shape, c.x.size);
    // the mask is three booleans
    throwsWeft(() => wt.convolutionBackward(values(wt, c.go), values(wt, c.x), values(wt, c.w), [6], [1, 1], [1, 1],
      [1, 1], false, [0, 0], 2, [1, 0, 1]), 'TypeError', /argument 'output_mask' \(position 11\) must be an array of 3 booleans/);
    throwsWeft(() => wt.convolutionBackward(values(wt, c.go), values(wt, c.x), values(wt, c.w), [6], [1, 1], [1, 1],
      [1, 1], false, [0, 0], 2, [true, false]), 'InvalidArgument',
    /^convolution_backward: expected outputMask to be a list of 3 booleans, but got 2$/);
    // transposed (conv_transpose2d's gradients): its checks, the weight [C_in, C_out / groups, ...]
    throwsWeft(() => wt.convolutionBackward(values(wt, c.go), values(wt, c.x), values(wt, c.w), [6], [1, 1], [1, 1],
      [1, 1], true, [0, 0], 2, [true, true, true]), 'InvalidArgument',
    /^convolution_backward: Given transposed=1, weight of size \[6, 2, 3, 3\], expected input\[2, 4, 5, 5\] to have 6 channels/);
  });
  assert.deepEqual(counts(wt), before);
});

test("convolution_backward's messages for bad shapes are PyTorch's", async () => {
  const wt = await init();
  const before = counts(wt);
  const [, , ...rest] = FX.convolution_backward.args;
  for (const e of FX.errors) {
    wt.tidy(() => {
      const [a, b, c] = e.sizes.map((s) => wt.zeros(s, f64));
      throwsWeft(() => wt.convolutionBackward(a, b, c, [6], [1, 1], ...rest), 'InvalidArgument',
        new RegExp(`^convolution_backward: ${e.error.replace(/[[\]().*+?^$|\\]/g, '\\$&')}$`));
    });
  }
  assert.deepEqual(counts(wt), before);
});

test('createGraph: what is still refused says so precisely', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    // a recorded convolution_backward call gives one output (one autograd node per output)
    const x = wt.randn([1, 2, 4, 4], f64).requiresGrad_();
    const w = wt.randn([2, 2, 2, 2], f64).requiresGrad_();
    const go = wt.randn([1, 2, 5, 5], f64).requiresGrad_();
    throwsWeft(() => wt.convolutionBackward(go, x, w, null, [1, 1], [1, 1], [1, 1], false, [0, 0], 1,
      [true, true, false]), 'NotImplemented', /^convolution_backward: with inputs that require grad, ask for one output/);
    const [gi] = wt.convolutionBackward(go, x, w.detach(), null, [1, 1], [1, 1], [1, 1], false, [0, 0], 1,
      [true, false, false]);
    const fn = gi.gradFn;
    assert.equal(fn.name, 'ConvolutionBackwardBackward0');
    fn.dispose();
  });
  assert.deepEqual(counts(wt), before);
});

test('worker mode: convolutionBackward gives [null, gradWeight, gradBias] for outputMask [false, true, true]', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const c = FX.convolution_backward;
    const t = (s) => ww.tensor(Float64Array.from(s.values), f64).reshape(s.size);
    const r = await ww.convolutionBackward(t(c.go), t(c.x), t(c.w), ...c.args.slice(0, -1), [false, false, true]);
    assert.equal(r.length, 3);
    assert.equal(r[0], null);
    assert.equal(r[1], null);
    const gb = (await r[2].toArray()).flat(Infinity);
    assert.ok(same(gb, c.result[2]));
    const s = await ww.selectBackward(ww.ones([4], f64), [3, 4], 0, 1);
    assert.deepEqual(await s.toArray(), [[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]]);
  } finally {
    await ww.terminate();
  }
});
