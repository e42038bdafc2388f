// _inverted_residual (issue 23; wt._invertedResidual): MobileNetV2's block
// with its BatchNorms folded, one op. Its result equals the three
// _conv2d_fused convolutions it stands for bit for bit (channels_last
// float32 runs the fused row-band driver, the rest the convolutions
// themselves), and the plain conv2d + clamp + add to 1e-5 of the values'
// scale; stride 1 and 2, with and without expansion and skip, odd sizes,
// both memory formats, 1 and 3 threads. weft/models' MobileNetV2 runs it in
// eval (a trace shows one call per block) and its logits equal those of the
// _conv2d_fused path (the op hidden) bit for bit, in both formats. explain,
// the refusals, no gradient. Every variant; nothing leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks, throwsWeft, VARIANTS } from './helpers.mjs';
import { models } from '../../dist/models/index.js';

const values = (t) => [t.toArray()].flat(Infinity);

// a block's weights, folded-BatchNorm-like scales (relu6 clamps some, not all)
function makeBlock(wt, cin, t, cout, k, stride, biases = true) {
  const ch = cin * t;
  const r = (shape, s, o = 0) => wt.tidy(() => wt.randn(shape).mul(s).add(o));
  return {
    we: t === 1 ? null : r([ch, cin, 1, 1], 0.4),
    be: t === 1 || !biases ? null : r([ch], 1, 1),
    wd: r([ch, 1, k, k], 0.4),
    bd: biases ? r([ch], 1, 1) : null,
    wp: r([cout, ch, 1, 1], 0.2),
    bp: biases ? r([cout], 0.5) : null,
    stride,
    residual: stride === 1 && cin === cout,
  };
}
const disposeBlock = (b) => { for (const t of [b.we, b.be, b.wd, b.bd, b.wp, b.bp]) t?.dispose(); };

const run = (wt, x, b) => wt._invertedResidual(x, b.we, b.be, b.wd, b.bd, b.wp, b.bp, { stride: b.stride, residual: b.residual });

// the same block as the three fused convolutions, and as plain ops
function convs(wt, x, b) {
  const pad = (b.wd.shape[2] - 1) / 2;
  return wt.tidy(() => {
    const h = b.we ? wt._conv2dFused(x, b.we, b.be, { activation: 'relu6' }) : x;
    const d = wt._conv2dFused(h, b.wd, b.bd, { stride: b.stride, padding: pad, groups: b.wd.shape[0], activation: 'relu6' });
    return wt._conv2dFused(d, b.wp, b.bp, { residual: b.residual ? x : null });
  });
}
function plain(wt, x, b) {
  const pad = (b.wd.shape[2] - 1) / 2;
  return wt.tidy(() => {
    const h = b.we ? wt.conv2d(x, b.we, b.be).clamp(0, 6) : x;
    const d = wt.conv2d(h, b.wd, b.bd, { stride: b.stride, padding: pad, groups: b.wd.shape[0] }).clamp(0, 6);
    const y = wt.conv2d(d, b.wp, b.bp);
    return b.residual ? y.add(x) : y;
  });
}

// [n, cin, t, cout, h, w, k, stride, biases]
const CASES = [[1, 16, 6, 16, 9, 7, 3, 1, true], [1, 16, 6, 24, 9, 7, 3, 2, true], [3, 8, 1, 8, 5, 6, 3, 1, true],
  [1, 8, 1, 12, 11, 13, 3, 2, false], [2, 24, 6, 32, 14, 13, 3, 2, true], [1, 12, 6, 12, 1, 1, 3, 1, true],
  [1, 5, 3, 5, 30, 3, 3, 1, false], [1, 20, 4, 20, 17, 2, 5, 1, true], [1, 32, 6, 32, 4, 70, 3, 1, true]];

for (const variant of VARIANTS) {
  test(`_invertedResidual equals its three convolutions, both formats, 1 and 3 threads (${variant})`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      wt.manualSeed(11);
      for (const [n, cin, t, cout, h, w, k, stride, biases] of CASES) {
        const b = makeBlock(wt, cin, t, cout, k, stride, biases);
        const x = wt.randn([n, cin, h, w]);
        for (const threads of [1, 3]) {
          if (threads > wt.maxThreads()) continue;
          wt.setNumThreads(threads);
          for (const cl of [false, true]) {
            const xi = cl ? x.contiguous({ memoryFormat: 'channels_last' }) : x;
            const what = `${[n, cin, t, cout, h, w, k, stride]} ${threads}T channels_last=${cl}`;
            const y = run(wt, xi, b);
            const want = convs(wt, xi, b);
            const ref = plain(wt, xi, b);
            assert.equal(y.isContiguous(cl ? 'channels_last' : 'contiguous_format'), true, what);
            assert.deepEqual(y.shape, ref.shape, what);
            const got = values(y);
            const exact = values(want);
            assert.ok(got.every((v, i) => Object.is(v, exact[i])), `${what}: equals the convolutions bit for bit`);
            const [d, m] = wt.tidy(() => [y.sub(ref).abs().max().item(), ref.abs().max().item()]);
            assert.ok(d <= 1e-5 * (1 + m), `${what}: ${d} from conv2d + clamp + add`);
            for (const r of [y, want, ref]) r.dispose();
            if (cl) xi.dispose();
          }
        }
        wt.setNumThreads(1);
        x.dispose();
        disposeBlock(b);
      }
    });
  });

  test(`_invertedResidual: explain, refusals, no gradient (${variant})`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      wt.manualSeed(5);
      const b = makeBlock(wt, 8, 6, 8, 3, 1);
      const x0 = wt.randn([1, 8, 12, 10]);
      const x = x0.contiguous({ memoryFormat: 'channels_last' });
      const threads = wt.getNumThreads();
      wt.setNumThreads(1);
      const p = wt.explain('_inverted_residual', x, b.we, b.be, b.wd, b.bd, b.wp, b.bp, { residual: true });
      assert.equal(p.algorithm, 'fused_row_bands_nhwc');
      assert.deepEqual([p.input, p.hidden, p.output, p.band_rows, p.expansion, p.residual],
        [[1, 8, 12, 10], 48, [1, 8, 12, 10], 7, true, true]);
      if (wt.maxThreads() >= 2) {
        wt.setNumThreads(2);
        const p2 = wt.explain('_inverted_residual', x, b.we, b.be, b.wd, b.bd, b.wp, b.bp, { residual: true });
        assert.deepEqual([p2.algorithm, p2.tasks], ['fused_staged_nhwc', 2], 'one small image on 2 threads: staged');
      }
      wt.setNumThreads(threads);
      const pn = wt.explain('_inverted_residual', x0, b.we, b.be, b.wd, b.bd, b.wp, b.bp, { residual: true });
      assert.equal(pn.op, 'conv2d', 'NCHW runs the convolutions');
      throwsWeft(() => run(wt, x, { ...b, stride: 2 }), undefined,
        /^_inverted_residual: residual needs stride 1 and as many output channels as input channels \(stride 2, 8 -> 8 channels\)$/);
      throwsWeft(() => run(wt, x, { ...b, we: b.wp }), undefined,
        /^_inverted_residual: expected expandWeight of size \[48, 8, 1, 1\] but got \[8, 48, 1, 1\]$/);
      throwsWeft(() => run(wt, x, { ...b, bp: b.bd }), undefined,
        /^_inverted_residual: Given weight of size \[8, 48, 1, 1\], expected bias to be 1-dimensional with 8 elements/);
      const xd = x.double();
      throwsWeft(() => run(wt, xd, b), undefined, /^_inverted_residual: .*(dtype|type)/);
      xd.dispose();
      b.wd.requiresGrad_(true);
      throwsWeft(() => run(wt, x, b), undefined, /the derivative for '_inverted_residual' is not implemented/);
      const y = wt.noGrad(() => run(wt, x, b));
      assert.equal(y.requiresGrad, false);
      b.wd.requiresGrad_(false);
      for (const t of [x0, x, y]) t.dispose();
      disposeBlock(b);
    });
  });

  test(`mobilenetV2 in eval runs one _inverted_residual per block, equal to the _conv2d_fused path (${variant})`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      wt.manualSeed(2);
      const model = models(wt).mobilenetV2({ widthMult: 0.5, numClasses: 10 });
      // BatchNorm statistics away from the identity
      wt.noGrad(() => {
        for (const m of model.modules()) {
          if (m instanceof wt.nn.BatchNorm2d) {
            wt.tidy(() => {
              m.running_mean.copy_(wt.randn(m.running_mean.shape).mul(0.1));
              m.running_var.copy_(wt.rand(m.running_var.shape).add(0.5));
            });
          }
        }
      });
      model.eval();
      const x0 = wt.randn([1, 3, 40, 36]);
      for (const cl of [false, true]) {
        if (cl) model.to({ memoryFormat: 'channels_last' });
        const x = cl ? x0.contiguous({ memoryFormat: 'channels_last' }) : x0.clone();
        let y;
        const ops = wt.trace(() => { y = wt.noGrad(() => model(x)); }).filter((e) => e.depth === 0).map((e) => e.op.replace(/^aten::/, ''));
        assert.equal(ops.filter((o) => o === '_inverted_residual').length, 17, `${ops}`);
        const saved = wt._invertedResidual;
        wt._invertedResidual = undefined;
        let want;
        try {
          want = wt.noGrad(() => model(x));
        } finally {
          wt._invertedResidual = saved;
        }
        const got = values(y);
        const exact = values(want);
        assert.ok(got.every((v, i) => Object.is(v, exact[i])), `channels_last=${cl}: logits equal bit for bit`);
        for (const t of [x, y, want]) t.dispose();
      }
      x0.dispose();
      model.dispose();
    });
  });
}
