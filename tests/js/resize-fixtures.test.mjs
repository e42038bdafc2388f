// Padding and resizing (issue 23): every case of tests/fixtures/resize.json
// (PyTorch 1.13, made by tests/fixtures/gen_resize_fixtures.py) through
// wt.pad(x, pads, { mode, value }) and wt.interpolate(x, { size, scaleFactor,
// mode, alignCorners, recomputeScaleFactor }) on each wasm variant, at 1 and
// 2 threads: dtype, shape, strides (memory format) and values must match,
// the node autograd records is PyTorch's, the gradient of sum(y * G) and
// its strides too; errors are WeftErrors with PyTorch's message (JS words);
// nothing leaks. Then the method forms, positional options and the option
// checks of the JS layer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, throwsWeft, VARIANTS, replayAtThreads } from './helpers.mjs';

const { cases } = loadFixture('resize.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const TOL = { float32: 3e-6, float64: 1e-12, uint8: 0, int64: 0 };

function upstream(wt, shape, dtype) {
  const n = shape.reduce((a, b) => a * b, 1);
  const vals = Array.from({ length: n }, (_, i) => ((i * 7 + 3) % 11 - 5) / 4);
  return wt.tensor(vals, { dtype }).reshape(shape);
}

function compare(bad, what, got, want, dtype) {
  const flat = [got].flat(Infinity).map(Number);
  const i = want.findIndex((x, j) => !close(flat[j], num(x), TOL[dtype]));
  if (flat.length !== want.length) bad.push(`${what}: ${flat.length} values, want ${want.length}`);
  else if (i >= 0) bad.push(`${what}[${i}] ${flat[i]}, want ${want[i]}`);
}

function replay(wt, c) {
  const s = c.input;
  const isInt = s.dtype === 'int64';
  const base = wt.tensor(s.storage.map((v) => (isInt ? BigInt(v) : num(v))), { dtype: s.dtype });
  const x0 = base.asStrided(s.size, s.stride, s.offset);
  const x = c.grad ? x0.detach().requiresGrad_() : x0;
  const bad = [];
  const made = [base, x0, x];
  let y;
  try {
    y = c.fn === 'pad' ? wt.pad(x, c.args, c.options) : wt.interpolate(x, c.options);
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
  }
  if (y) made.push(y);
  if (y && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
  if (y && c.expect.error === undefined) {
    const w = c.expect;
    if (y.dtype !== w.dtype) bad.push(`dtype ${y.dtype}, want ${w.dtype}`);
    else if (JSON.stringify(y.shape) !== JSON.stringify(w.size)) bad.push(`shape ${y.shape}, want ${w.size}`);
    else {
      if (JSON.stringify(y.stride()) !== JSON.stringify(w.stride)) bad.push(`stride ${y.stride()}, want ${w.stride}`);
      compare(bad, 'value', y.toArray(), w.values, w.dtype);
      if (c.grad) {
        const fn = y.gradFn;
        if (fn?.name !== w.gradFn) bad.push(`gradFn ${fn?.name}, want ${w.gradFn}`);
        fn?.dispose();
        wt.tidy(() => y.mul(upstream(wt, w.size, w.dtype)).sum().backward());
        const g = x.grad;
        if (JSON.stringify(g.stride()) !== JSON.stringify(c.grad.stride)) bad.push(`grad stride ${g.stride()}, want ${c.grad.stride}`);
        compare(bad, 'grad', g.toArray(), c.grad.values, w.dtype);
        g.dispose();
      }
    }
  }
  for (const t of made.reverse()) t.dispose();
  return bad;
}

const label = (c) => `${c.fn} ${JSON.stringify(c.args)} ${JSON.stringify(c.options)} ${c.input.dtype} ${c.input.size}` +
  ` ${c.input.stride}`;

for (const variant of VARIANTS) {
  test(`pad and interpolate match PyTorch 1.13 (${cases.length} cases, ${variant})`, async (t) => {
    const wt = await init({ variant });
    const before = counts(wt);
    replayAtThreads(t, wt, cases, (w, c) => replay(w, c).map((b) => `${label(c)}: ${b}`));
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

test('pad and interpolate: methods, positional options, JS checks', async () => {
  const wt = await init();
  const x = wt.arange(0, 12, 1, { dtype: 'float32' }).reshape([1, 3, 4]);
  const a = x.pad([1, 1], { mode: 'reflect' });
  const b = wt.pad(x, [1, 1], 'reflect');
  assert.deepEqual(a.toArray(), b.toArray());
  assert.deepEqual(a.toArray()[0][0], [1, 0, 1, 2, 3, 2]);
  const c = wt.pad(x, [1, 0], 'constant', 9);
  assert.deepEqual(c.toArray()[0][0], [9, 0, 1, 2, 3]);
  const x4 = x.unsqueeze(0);
  const d = x4.interpolate({ scaleFactor: 2 });
  const e = wt.interpolate(x4, [6, 8]);
  const f = wt.interpolate(x4, null, 2, 'nearest');
  assert.deepEqual(d.toArray(), e.toArray());
  assert.deepEqual(d.toArray(), f.toArray());
  const g = wt.interpolate(x4, { size: [6, 8], mode: 'bilinear', align_corners: true });
  assert.deepEqual(g.shape, [1, 1, 6, 8]);
  throwsWeft(() => wt.interpolate(x4, { size: 4, sizes: 3 }), 'TypeError', /unexpected keyword argument 'sizes'/);
  throwsWeft(() => wt.interpolate(x4, 4, { size: 4 }), 'TypeError', /multiple values for argument 'size'/);
  throwsWeft(() => wt.interpolate(x4, { size: 2.5 }), 'TypeError', /size must be an integer/);
  throwsWeft(() => wt.interpolate(x4, { size: 4, mode: 'bilinear', alignCorners: 1 }), 'TypeError', /alignCorners must be a boolean/);
  throwsWeft(() => wt.interpolate(wt.zeros([1, 1, 2, 2, 2]), { size: 4 }), 'NotImplemented', /not supported by weft/);
  throwsWeft(() => wt.pad(x, [1, 1], { mode: 'reflect', fill: 0 }), 'TypeError', /unexpected keyword argument 'fill'/);
  throwsWeft(() => wt.interpolate(3, { size: 4 }), 'TypeError', /must be a Tensor/);
  for (const r of [a, b, c, d, e, f, g, x4, x]) r.dispose();
});

test('interpolate: the image pipeline (uint8 -> float, bilinear 224 x 224, channels_last kept)', async () => {
  const wt = await init();
  const before = counts(wt);
  const data = Array.from({ length: 3 * 40 * 50 }, (_, i) => (i * 37) % 256);
  const u8 = wt.tidy(() => wt.tensor(data, { dtype: 'uint8' }).reshape([1, 3, 40, 50]));
  const xf = wt.tidy(() => u8.float().div(255));
  const y = wt.interpolate(xf, { size: [224, 224], mode: 'bilinear', alignCorners: false });
  assert.deepEqual(y.shape, [1, 3, 224, 224]);
  const cl = xf.contiguous({ memoryFormat: 'channels_last' });
  const ycl = wt.interpolate(cl, { size: [224, 224], mode: 'bilinear' });
  assert.deepEqual(ycl.stride(), [224 * 224 * 3, 1, 224 * 3, 3]);
  const diff = wt.tidy(() => ycl.sub(y).abs().max().item());
  assert.ok(diff < 1e-6, `channels_last and NCHW agree (${diff})`);
  const n = wt.interpolate(u8, { size: [224, 224] });
  assert.equal(n.dtype, 'uint8');
  for (const t of [u8, xf, y, cl, ycl, n]) t.dispose();
  assert.deepEqual(counts(wt), before);
});

// The backward ops are linear in grad_output, so the derivative of
// <backward(gy), v> with respect to gy is the forward op of v: checked for
// every backward op through createGraph (their BackwardBackward formulas).
test('pad and interpolate: second derivatives (createGraph)', async () => {
  const wt = await init();
  const before = counts(wt);
  const runs = [
    ['bilinear', (t) => wt.interpolate(t, { size: [7, 5], mode: 'bilinear' }), [1, 2, 4, 3]],
    ['bicubic', (t) => wt.interpolate(t, { scaleFactor: 1.5, mode: 'bicubic', alignCorners: true }), [1, 2, 4, 3]],
    ['nearest', (t) => wt.interpolate(t, { size: [7, 5] }), [1, 2, 4, 3]],
    ['nearest-exact 1d', (t) => wt.interpolate(t, { size: 7, mode: 'nearest-exact' }), [1, 2, 4]],
    ['linear', (t) => wt.interpolate(t, { size: 7, mode: 'linear' }), [1, 2, 4]],
    ['reflect', (t) => wt.pad(t, [1, 2, 2, 0], { mode: 'reflect' }), [1, 2, 4, 3]],
    ['replicate', (t) => wt.pad(t, [1, 2], { mode: 'replicate' }), [2, 4, 3]],
    ['constant', (t) => wt.pad(t, [1, -1, 2, 0]), [1, 2, 4, 3]],
  ];
  for (const [name, f, shape] of runs) {
    wt.tidy(() => {
      const x = wt.randn(shape).requiresGrad_();
      const v = wt.randn(shape);
      const y = f(x);
      const gy = wt.randn(y.shape).requiresGrad_();
      const [gx] = wt.autograd.grad([y], [x], { gradOutputs: [gy], createGraph: true });
      const [ggy] = wt.autograd.grad([gx.mul(v).sum()], [gy]);
      const want = f(v);
      const diff = ggy.sub(want).abs().max().item();
      assert.ok(diff < 1e-5, `${name}: d<gx, v>/dgy is the forward of v (${diff})`);
    });
  }
  assert.deepEqual(counts(wt), before);
});
