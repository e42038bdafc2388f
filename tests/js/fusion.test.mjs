// Eval-mode fusion (issue 23): wt.nn.utils.fuseConvBnWeights against
// torch.nn.utils.fusion.fuse_conv_bn_weights (tests/fixtures/fusion.json,
// made by tests/fixtures/gen_fusion_fixtures.py: 1-3 kernel dims, with and
// without conv bias / BatchNorm affine, transposed, float64), fuseConvBnEval
// on module-shaped objects against fuse_conv_bn_eval (the fused conv's
// weight, bias and output), its refusals; and the _conv2d_fused op
// (wt._conv2dFused) against conv2d + add + relu / relu6 in both memory
// formats at 1 and 2 threads, its explain() plan and its refusals. Every
// variant; nothing leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, close, noLeaks, throwsWeft, VARIANTS } from './helpers.mjs';

const fx = loadFixture('fusion.json');
const TOL = { float32: 2e-6, float64: 1e-12 };

function fromFx(wt, s) {
  if (s === null) return null;
  const flat = wt.tensor(s.values, { dtype: s.dtype });
  const t = flat.reshape(s.size);
  flat.dispose();
  return t;
}
const values = (t) => [t.toArray()].flat(Infinity);

function sameValues(t, want, what) {
  assert.deepEqual(t.shape, want.size, `${what} shape`);
  assert.equal(t.dtype, want.dtype, `${what} dtype`);
  const got = values(t);
  const i = want.values.findIndex((v, j) => !close(got[j], v, TOL[want.dtype]));
  assert.equal(i, -1, `${what}[${i}] ${got[i]}, want ${want.values[i]}`);
}

// A conv module's fields (what wt.nn.Conv2d carries), built as wt.nn's would be
class FakeConv {
  constructor(inChannels, outChannels, kernelSize, opts) {
    this.made = { inChannels, outChannels, kernelSize, opts };
    Object.assign(this, { stride: opts.stride, padding: opts.padding, dilation: opts.dilation, groups: opts.groups });
    this.training = true;
    this.weight = null;
    this.bias = null;
  }

  eval() { this.training = false; return this; }
}

for (const variant of VARIANTS) {
  test(`fuseConvBnWeights: PyTorch 1.13's values (${variant})`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      for (const c of fx.weights) {
        const a = Object.fromEntries(Object.entries(c.args).map(([k, v]) => [k, fromFx(wt, v)]));
        const [w, b] = wt.nn.utils.fuseConvBnWeights(a.convW, a.convB, a.bnRm, a.bnRv, c.eps, a.bnW, a.bnB,
          { transpose: c.transpose });
        sameValues(w, c.expect.weight, 'weight');
        sameValues(b, c.expect.bias, 'bias');
        assert.deepEqual([w.requiresGrad, b.requiresGrad], c.expect.requires_grad);
        for (const t of [w, b, ...Object.values(a)]) t?.dispose();
      }
    });
  });

  test(`fuseConvBnEval: a new conv with the fused weights (${variant})`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      for (const c of fx.eval) {
        const conv = new FakeConv(0, 0, [], { ...c.conv, weight: undefined }).eval();
        conv.weight = fromFx(wt, c.conv.weight);
        conv.bias = fromFx(wt, c.conv.bias);
        const bn = { training: false, eps: c.bn.eps, runningMean: fromFx(wt, c.bn.running_mean),
          runningVar: fromFx(wt, c.bn.running_var), weight: fromFx(wt, c.bn.weight), bias: fromFx(wt, c.bn.bias) };
        const fused = wt.nn.utils.fuseConvBnEval(conv, bn);
        assert.ok(fused instanceof FakeConv && fused !== conv && !fused.training);
        const [cout, cin] = conv.weight.shape;
        assert.deepEqual(fused.made.inChannels, cin * c.conv.groups);
        assert.deepEqual(fused.made.outChannels, cout);
        assert.deepEqual(fused.made.kernelSize, [3, 3]);
        assert.equal(fused.made.opts.bias, true);
        sameValues(fused.weight, c.expect.weight, 'weight');
        sameValues(fused.bias, c.expect.bias, 'bias');
        const x = fromFx(wt, c.input);
        const y = wt.conv2d(x, fused.weight, fused.bias, { stride: fused.stride, padding: fused.padding,
          dilation: fused.dilation, groups: fused.groups });
        const want = c.expect.output;
        assert.ok(values(y).every((v, i) => close(v, want.values[i], 1e-5)));
        bn.training = true;
        throwsWeft(() => wt.nn.utils.fuseConvBnEval(conv, bn), 'ValueError', /^fuseConvBnEval\(\): Fusion only for eval!$/);
        for (const t of [x, y, fused.weight, fused.bias, conv.weight, conv.bias, ...Object.values(bn)]) {
          if (t instanceof wt.Tensor) t.dispose();
        }
      }
    });
  });

  test(`fuseConvBnEval over wt.nn's Conv2d and BatchNorm2d: a Conv2d of Parameters, no draw (${variant})`, async () => {
    const wt = await init({ variant });
    const { nn } = wt;
    await noLeaks(wt, () => {
      for (const c of fx.eval) {
        const [cout, cinG, kh, kw] = c.conv.weight.size;
        const conv = new nn.Conv2d(cinG * c.conv.groups, cout, [kh, kw], { stride: c.conv.stride, padding: c.conv.padding,
          dilation: c.conv.dilation, groups: c.conv.groups, bias: c.conv.bias !== null });
        const bn = new nn.BatchNorm2d(cout, { eps: c.bn.eps, affine: c.bn.weight !== null });
        const sd = { weight: c.conv.weight, bias: c.conv.bias };
        const bsd = { running_mean: c.bn.running_mean, running_var: c.bn.running_var, weight: c.bn.weight, bias: c.bn.bias };
        const load = (m, entries) => {
          const d = Object.fromEntries(Object.entries(entries).filter(([, v]) => v).map(([k, v]) => [k, fromFx(wt, v)]));
          m.loadStateDict(d, { strict: false });
          for (const t of Object.values(d)) t.dispose();
        };
        load(conv, sd);
        load(bn, bsd);
        conv.eval();
        bn.eval();
        wt.manualSeed(3);
        const fused = nn.utils.fuseConvBnEval(conv, bn);
        const draw = () => wt.tidy(() => Array.from(wt.rand(4).data()));
        const after = draw();
        wt.manualSeed(3);
        const fresh = draw();
        assert.deepEqual(after, fresh, 'fusing draws nothing from the generator');
        assert.ok(fused instanceof nn.Conv2d && fused !== conv && !fused.training);
        assert.ok(fused.weight instanceof nn.Parameter && fused.bias instanceof nn.Parameter);
        assert.equal(String(fused), String(conv).replace(', bias=False', ''));
        sameValues(fused.weight, c.expect.weight, 'weight');
        sameValues(fused.bias, c.expect.bias, 'bias');
        wt.tidy(() => {
          const y = wt.noGrad(() => fused(fromFx(wt, c.input)));
          assert.ok(values(y).every((v, i) => close(v, c.expect.output.values[i], 1e-5)));
        });
        for (const m of [conv, bn, fused]) m.dispose();
      }
    });
  });

  test(`_conv2d_fused equals conv2d + add + activation, both formats (${variant})`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      for (const threads of [1, 2]) {
        if (threads > wt.maxThreads()) continue;
        wt.setNumThreads(threads);
        wt.manualSeed(7);
        // a 3x3, a 1x1, a depthwise, the stem's 7x7 stride 2 on 3 channels, and a 3x3 of 96 channels
        // on 11x10 (channels_last: Winograd F(2x2, 3x3), partial tiles)
        const shapes = [[[2, 6, 9, 7], [10, 6, 3, 3], 1, 1, 1], [[1, 16, 7, 7], [24, 16, 1, 1], 1, 0, 1],
          [[1, 96, 11, 10], [100, 96, 3, 3], 1, 1, 1],
          [[1, 12, 8, 9], [12, 1, 3, 3], 2, 1, 12], [[1, 3, 20, 18], [8, 3, 7, 7], 2, 3, 1]];
        for (const [sx, sw, stride, padding, groups] of shapes) {
          const x = wt.randn(sx);
          const w = wt.randn(sw);
          const b = wt.randn([sw[0]]);
          for (const cl of [false, true]) {
            const xi = cl ? x.contiguous({ memoryFormat: 'channels_last' }) : x;
            const plain = wt.conv2d(xi, w, b, { stride, padding, groups });
            const r = wt.randn(plain.shape);
            for (const activation of ['none', 'relu', 'relu6']) {
              for (const residual of [null, r]) {
                const y = wt._conv2dFused(xi, w, b, { stride, padding, groups, activation, residual });
                const sum = residual ? plain.add(residual) : plain.clone();
                const want = activation === 'relu' ? sum.relu() : activation === 'relu6' ? sum.clamp(0, 6) : sum.clone();
                assert.equal(y.isContiguous(cl ? 'channels_last' : 'contiguous_format'), true);
                const [d, m] = wt.tidy(() => [y.sub(want).abs().max().item(), want.abs().max().item()]);
                assert.ok(d < 2e-6 * (1 + m) * sx[1], `${sx} ${activation} residual=${!!residual} channels_last=${cl}: ${d}`);
                for (const t of [y, sum, want]) t.dispose();
              }
            }
            for (const t of [plain, r]) t.dispose();
            if (cl) xi.dispose();
          }
          for (const t of [x, w, b]) t.dispose();
        }
      }
      wt.setNumThreads(1);
    });
  });

  // (the SIMD builds: weft-scalar gives +0 for some of them, its compiled compare-selects folded into
  // f32.max, whose max(-0, 0) is +0)
  test(`_conv2d_fused keeps -0 through relu / relu6 as the unfused ops do (${variant})`, { skip: variant === 'scalar' }, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      // zero input, negative weights and a -0 bias: every depthwise sum is -0 (the kernel starts
      // from the bias), which clamp(x, 0, 6) keeps; a max-based clamp would give +0
      const x = wt.zeros([1, 8, 5, 5]);
      const w = wt.full([8, 1, 3, 3], -1);
      const b = wt.tensor(new Array(8).fill(-0));
      for (const cl of [false, true]) {
        const xi = cl ? x.contiguous({ memoryFormat: 'channels_last' }) : x.clone();
        const plain = wt.conv2d(xi, w, b, { padding: 1, groups: 8 });
        for (const activation of ['relu', 'relu6']) {
          const want = activation === 'relu' ? plain.relu() : wt.relu6(plain);
          const y = wt._conv2dFused(xi, w, b, { padding: 1, groups: 8, activation });
          const got = values(y), exp = values(want);
          assert.ok(exp.every((v) => Object.is(v, -0)), `unfused ${activation}: all -0`);
          assert.ok(got.every((v, i) => Object.is(v, exp[i])), `${activation} channels_last=${cl}: ${got.slice(0, 4)}`);
          for (const t of [y, want]) t.dispose();
        }
        for (const t of [xi, plain]) t.dispose();
      }
      for (const t of [x, w, b]) t.dispose();
    });
  });

  test(`_conv2d_fused: explain, refusals, no gradient (${variant})`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      const x0 = wt.randn([1, 4, 6, 6]);
      const x = x0.contiguous({ memoryFormat: 'channels_last' });
      x0.dispose();
      const w = wt.randn([8, 4, 3, 3]);
      const r = wt.randn([1, 8, 6, 6]);
      const plan = wt.explain('_conv2d_fused', x, w, null, { padding: 1, activation: 'relu6', residual: r });
      const p = Array.isArray(plan) ? plan[0] : plan;
      assert.equal(p.algorithm, 'implicit_gemm_nhwc');
      const w32 = wt.randn([96, 96, 3, 3]);
      const z = wt.zeros([1, 96, 10, 10]);
      const x32 = z.contiguous({ memoryFormat: 'channels_last' });
      z.dispose();
      const pw = wt.explain('_conv2d_fused', x32, w32, null, { padding: 1, activation: 'relu' });
      assert.equal(pw.algorithm, 'winograd_f2x2_3x3_nhwc');
      assert.deepEqual(pw.gemm, { m: 25, n: 96, k: 96, count: 16 });
      assert.equal(pw.epilogue.where, 'output transform store');
      assert.equal(wt.explain('conv2d', x32, w32, null, { padding: 1 }).algorithm, 'implicit_gemm_nhwc');
      w32.dispose();
      x32.dispose();
      assert.deepEqual(p.epilogue, { bias: 'tile start', residual: 'tile start', activation: 'relu6',
        where: 'micro-kernel store' });
      throwsWeft(() => wt._conv2dFused(x, w, null, { padding: 1, activation: 'gelu' }), undefined,
        /^_conv2d_fused: unknown activation 'gelu' \(expected 'none', 'relu' or 'relu6'\)$/);
      throwsWeft(() => wt._conv2dFused(x, w, null, { activation: 'relu', residual: r }), undefined,
        /^_conv2d_fused: expected residual of size \[1, 8, 4, 4\] \(the output's\) but got \[1, 8, 6, 6\]$/);
      const w3 = wt.randn([8, 3, 3, 3]);
      throwsWeft(() => wt._conv2dFused(x, w3, null), undefined, /^_conv2d_fused: Given groups=1/);
      w3.dispose();
      w.requiresGrad_(true);
      throwsWeft(() => wt._conv2dFused(x, w, null, { padding: 1 }), undefined,
        /the derivative for '_conv2d_fused' is not implemented/);
      const y = wt.noGrad(() => wt._conv2dFused(x, w, null, { padding: 1, activation: 'relu' }));
      assert.equal(y.requiresGrad, false);
      for (const t of [x, w, r, y]) t.dispose();
    });
  });
}
