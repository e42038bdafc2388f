// Normalizations (issue 23): every case of tests/fixtures/norm_ops.json
// (PyTorch 1.13, made by tests/fixtures/gen_norm_op_fixtures.py) through the
// JS calling forms wt.batchNorm(x, runningMean, runningVar, weight, bias,
// { training, momentum, eps }), wt.layerNorm(x, normalizedShape, weight,
// bias, { eps }) and wt.groupNorm(x, numGroups, weight, bias, { eps }), on
// each wasm variant at 1 and 2 threads: dtype, shape, strides, values, the
// node name, running statistics after the call, the gradients of
// sum(out * gout) for input, weight and bias (values and strides); errors are
// WeftErrors with PyTorch's message; nothing leaks. Then the calling forms,
// createGraph, Meta tensors and explain().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, throwsWeft, replayAtThreads, VARIANTS } from './helpers.mjs';

const { cases } = loadFixture('norm_ops.json');
const TOL = { float32: 3e-5, float64: 1e-10 };

function maxAbs(values) {
  let m = 0;
  for (const v of values) m = Math.max(m, Math.abs(v));
  return m;
}

function call(wt, c, a) {
  const o = c.options;
  if (c.fn === 'batch_norm') {
    return wt.batchNorm(a.input, a.running_mean ?? null, a.running_var ?? null, a.weight ?? null, a.bias ?? null,
      { training: o.training, momentum: o.momentum, eps: o.eps });
  }
  if (c.fn === 'layer_norm') return wt.layerNorm(a.input, o.normalized_shape, a.weight ?? null, a.bias ?? null, { eps: o.eps });
  return wt.groupNorm(a.input, o.num_groups, a.weight ?? null, a.bias ?? null, { eps: o.eps });
}

function compare(bad, what, got, want, tol) {
  if (got.length !== want.length) {
    bad.push(`${what}: ${got.length} values, want ${want.length}`);
    return;
  }
  const i = want.findIndex((w, j) => !close(got[j], w, tol));
  if (i >= 0) bad.push(`${what}[${i}] ${got[i]}, want ${want[i]}`);
}

const flat = (t) => [t.toArray()].flat(Infinity).map(Number);

function replay(wt, c) {
  const made = [];
  const track = (t) => { made.push(t); return t; };
  const tensor = (s) => {
    const isInt = s.dtype.startsWith('int');
    const base = track(wt.tensor(s.storage.map((v) => (isInt ? BigInt(v) : v)), { dtype: s.dtype }));
    return track(base.asStrided(s.size, s.stride, 0));
  };
  const a = {};
  for (const [k, s] of Object.entries(c.args)) {
    if (k === 'gout') continue;
    const t = tensor(s);
    a[k] = ['input', 'weight', 'bias'].includes(k) && !s.dtype.startsWith('int') ? track(t.detach().requiresGrad_()) : t;
  }
  const bad = [];
  let y;
  try {
    y = call(wt, c, a);
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
  }
  const w = c.expect;
  if (y && w.error !== undefined) bad.push(`expected "${w.error}", got a result`);
  if (y && w.error === undefined) {
    track(y);
    // float32's fold x * a + b loses what the input's magnitude rounds off
    const tol = TOL[w.dtype] + (w.dtype === 'float32' ? maxAbs(c.args.input.storage) * 4e-7 : 0);
    if (y.dtype !== w.dtype) bad.push(`dtype ${y.dtype}, want ${w.dtype}`);
    if (JSON.stringify(y.shape) !== JSON.stringify(w.size)) bad.push(`shape ${y.shape}, want ${w.size}`);
    if (JSON.stringify(y.stride()) !== JSON.stringify(w.stride)) bad.push(`stride ${y.stride()}, want ${w.stride}`);
    if (!bad.length) compare(bad, 'value', flat(y), w.values, tol);
    const fn = y.gradFn;
    if (!fn || fn.name !== w.grad_fn) bad.push(`gradFn ${fn && fn.name}, want ${w.grad_fn}`);
    if (fn) fn.dispose();
    for (const k of ['running_mean', 'running_var']) if (w[k]) compare(bad, k, flat(a[k]), w[k], tol);
    if (w.grads && !bad.length) {
      wt.tidy(() => y.mul(tensor(c.args.gout)).sum().backward());
      for (const [k, g] of Object.entries(w.grads)) {
        const got = a[k].grad;
        if (!got) { bad.push(`no gradient for ${k}`); continue; }
        track(got);
        if (JSON.stringify(got.stride()) !== JSON.stringify(g.stride)) bad.push(`${k}.grad stride ${got.stride()}, want ${g.stride}`);
        compare(bad, `${k}.grad`, flat(got), g.values, tol * 4);
      }
    }
  }
  for (const t of made) t.dispose();
  return bad.map((b) => `${c.fn} ${JSON.stringify(c.options)} ${c.args.input.size}/${c.args.input.stride}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`normalizations match PyTorch 1.13 (${cases.length} cases, ${variant})`, async (t) => {
    const wt = await init({ variant });
    const before = counts(wt);
    replayAtThreads(t, wt, cases, replay);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

test('batchNorm: F.batch_norm\'s argument order, positional or options, null statistics', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.tensor([[1, 2], [3, 6], [5, 10]]);
    const rm = wt.zeros([2]), rv = wt.ones([2]);
    const y = wt.batchNorm(x, rm, rv, null, null, { training: true, momentum: 0.5 });
    assert.deepEqual(rm.toArray(), [1.5, 3]);
    assert.ok(Math.abs(rv.toArray()[1] - (0.5 + 0.5 * 16)) < 1e-5);
    // positional weight, bias, training, momentum, eps as F takes them
    const z = wt.batchNorm(x, null, null, wt.tensor([2, 2]), wt.tensor([1, 1]), true, 0.1, 1e-5);
    assert.ok(close(z.toArray()[0][0], 2 * y.toArray()[0][0] + 1, 1e-5));
    // evaluation: (x - rm) / sqrt(rv + eps) * w + b
    const e = wt.batchNorm(x, wt.tensor([1, 2]), wt.tensor([4, 4]), null, null, { eps: 0 });
    assert.deepEqual(e.toArray(), [[0, 0], [1, 2], [2, 4]]);
    throwsWeft(() => wt.batchNorm(x, null, null), 'InvalidArgument', /running_mean must be defined in evaluation mode/);
    throwsWeft(() => wt.batchNorm(x, null, null, null, null, true, 0.1, 1e-5, 3), 'TypeError', /positional arguments/);
    throwsWeft(() => wt.batchNorm(x, null, null, null, { weight: null, training: true }), 'TypeError', /multiple values/);
    throwsWeft(() => wt.batchNorm(x, null, null, { trainig: true }), 'TypeError',
      /^batch_norm\(\) got an unexpected option 'trainig' \(did you mean training\?\)$/);
  });
  assert.deepEqual(counts(wt), before);
});

test('normalizations: layerNorm / groupNorm defaults, Meta tensors, explain, createGraph', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.arange(24).reshape([2, 3, 4]).float();
    const ln = wt.layerNorm(x, [4]);
    assert.ok(Math.abs(ln.sum().item()) < 1e-4);
    const gn = wt.groupNorm(x, 3);
    assert.deepEqual(gn.shape, [2, 3, 4]);
    // Meta: shapes and strides only
    const m = wt.empty([2, 6, 3, 4], { device: 'meta' }).contiguous({ memoryFormat: 'channels_last' });
    const bm = wt.batchNorm(m, null, null, null, null, { training: true });
    assert.equal(bm.device, 'meta');
    assert.deepEqual(bm.stride(), [72, 1, 24, 6]);
    assert.deepEqual(wt.groupNorm(m, 2).stride(), [72, 1, 24, 6]);
    assert.deepEqual(wt.layerNorm(m, [3, 4]).stride(), [72, 12, 4, 1]);
    const cl = wt.randn([2, 6, 3, 4]).contiguous({ memoryFormat: 'channels_last' });
    const plan = wt.explain('batch_norm', cl, null, null, null, null, true, 0.1, 1e-5, true);
    assert.ok(JSON.stringify(plan).includes('batch_norm_train_channels_last'), JSON.stringify(plan));
    // createGraph: the gradient is itself differentiable (d/dv of sum(bn(v)) is 0 for every v,
    // since sum over the batch of the normalized values is 0 whatever v; its gradient must be ~0 too)
    const v = wt.randn([4, 3], { dtype: 'float64' }).requiresGrad_();
    const out = wt.batchNorm(v, null, null, null, null, { training: true });
    const [gv] = wt.autograd.grad([out.sum()], [v], { createGraph: true });
    assert.ok(gv.requiresGrad);
    assert.ok(Math.max(...gv.abs().flatten().toArray()) < 1e-12);
    const [hv] = wt.autograd.grad([out.pow(2).sum()], [v], { createGraph: true });
    const [h2] = wt.autograd.grad([hv.pow(2).sum()], [v]);
    assert.deepEqual(h2.shape, [4, 3]);
  });
  assert.deepEqual(counts(wt), before);
});
