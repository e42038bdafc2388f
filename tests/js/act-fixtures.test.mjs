// Activations, regression losses and dropout (issue 23) against PyTorch 1.13
// (tests/fixtures/act.json, made by tests/fixtures/gen_act_fixtures.py):
//   the loss op cases through wt.ops.call on every wasm variant at 1 and 2
//   threads (values within the dtype's tolerance, dtype, shape, output
//   strides, errors, no leaks; the activations' op cases are in ops.json,
//   replayed by ops-fixtures.test.mjs and tests/c/test_ops.c);
//   gradients through the JS functions (wt.elu(x, alpha), wt.leakyRelu(x,
//   slope, { inplace: true }), ...): PyTorch's node names, first derivatives
//   and (createGraph) second ones;
//   dropout / dropout2d masks after wt.manualSeed(s), equal to PyTorch's
//   after torch.manual_seed(s), in both calling forms, in place too;
//   then the JS spellings and their errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { problems } from './case-replay.mjs';
import { init, close, counts, throwsWeft, replayAtThreads, VARIANTS } from './helpers.mjs';

const { cases, grads, lossGrads, dropout } = loadFixture('act.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const flat = (t) => [t.toArray()].flat(Infinity);

for (const variant of VARIANTS) {
  test(`regression losses match PyTorch 1.13 (${cases.length} cases, ${variant})`, async (t) => {
    const wt = await init({ variant });
    replayAtThreads(t, wt, cases, problems);
  });
}

// t.gradFn's name (null: none); the node object is let go at once (it holds the graph)
function nodeName(t) {
  const fn = t.gradFn;
  if (!fn) return null;
  const name = fn.name;
  fn.dispose();
  return name;
}

function firstMismatch(got, want, tol) {
  return want.findIndex((w, i) => !close(got[i], num(w), tol));
}

for (const variant of VARIANTS) {
  test(`activation gradients: nodes, first and second derivatives (${grads.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const failures = [];
    for (const c of grads) {
      const tol = c.dtype === 'float64' ? 1e-10 : 2e-5;
      wt.tidy(() => {
        const x = wt.tensor(c.x.map(num), { dtype: c.dtype }).requiresGrad_();
        const w = wt.tensor(c.w.map(num), { dtype: c.dtype });
        let y;
        if (c.inplace) {
          y = x.mul(1);
          const r = wt[c.fn](y, ...c.args, { inplace: true });
          if (r !== y) failures.push(`${c.fn} inplace: did not return its input`);
        } else {
          y = wt[c.fn](x, ...c.args);
        }
        const what = `${c.fn}(${JSON.stringify(c.args)})${c.inplace ? ' inplace' : ''} ${c.dtype}`;
        const node = nodeName(y);
        if (node !== c.node) failures.push(`${what}: node ${node}, want ${c.node}`);
        const [g] = wt.autograd.grad(y.mul(w).sum(), [x], { createGraph: !!c.grad2 });
        let i = firstMismatch(flat(g), c.grad, tol);
        if (i >= 0) failures.push(`${what}: grad[${i}] ${flat(g)[i]}, want ${c.grad[i]} (x ${c.x[i]})`);
        if (c.grad2) {
          const v = wt.tensor(c.v.map(num), { dtype: c.dtype });
          const [gg] = wt.autograd.grad(g.mul(v).sum(), [x], { allowUnused: true });
          const got = gg ? flat(gg) : c.x.map(() => 0);
          i = firstMismatch(got, c.grad2, tol * 10);
          if (i >= 0) failures.push(`${what}: second derivative [${i}] ${got[i]}, want ${c.grad2[i]} (x ${c.x[i]})`);
        }
      });
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(counts(wt), before, 'nothing leaks');
  });
}

for (const variant of VARIANTS) {
  test(`loss gradients: d/dself, d/dtarget and nodes (${lossGrads.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const failures = [];
    for (const c of lossGrads) {
      wt.tidy(() => {
        const x = wt.tensor(c.x.map(num), { dtype: c.dtype }).reshape(c.size).requiresGrad_();
        const t = wt.tensor(c.t.map(num), { dtype: c.dtype }).reshape(c.size).requiresGrad_();
        const w = wt.tensor(c.w.map(num), { dtype: c.dtype });
        const loss = wt[c.fn](x, t, c.options);
        const what = `${c.fn} ${JSON.stringify(c.options)} ${c.dtype}`;
        const node = nodeName(loss);
        if (node !== c.node) failures.push(`${what}: node ${node}, want ${c.node}`);
        const out = loss.mul(c.options.reduction === 'none' ? w.reshape(c.size) : w).sum();
        if (c.error) {
          try {
            wt.autograd.grad(out, [x, t]);
            failures.push(`${what}: no error, want ${c.error}`);
          } catch (e) {
            if (!e.message.includes(c.error)) failures.push(`${what}: "${e.message}" lacks "${c.error}"`);
          }
          return;
        }
        const [gx, gt] = wt.autograd.grad(out, [x, t]);
        const tol = { float64: 1e-12, float16: 2e-3, bfloat16: 1.6e-2 }[c.dtype];
        for (const [name, g, want] of [['self', gx, c.gradSelf], ['target', gt, c.gradTarget]]) {
          const i = firstMismatch(flat(g), want, tol);
          if (i >= 0) failures.push(`${what}: d/d${name}[${i}] ${flat(g)[i]}, want ${want[i]}`);
        }
      });
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(counts(wt), before, 'nothing leaks');
  });
}

function dropoutInput(wt, c) {
  const n = c.size.reduce((a, b) => a * b, 1);
  const x = wt.arange(1, n + 1, 1, { dtype: 'float64' }).reshape(c.size).to(c.dtype);
  return c.channelsLast ? x.contiguous({ memoryFormat: 'channels_last' }) : x;
}

for (const variant of VARIANTS) {
  test(`dropout masks equal PyTorch's after manualSeed (${dropout.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const failures = [];
    for (const c of dropout) {
      const what = `${c.fn} ${JSON.stringify(c.size)} p=${c.p} training=${c.training} seed=${c.seed}${c.channelsLast ? ' channels_last' : ''} ${c.dtype}`;
      wt.tidy(() => {
        const x = dropoutInput(wt, c);
        const fn = c.fn === 'dropout' ? wt.dropout : wt.dropout2d;
        if (c.error) {
          try {
            fn(x, c.p, c.training);
            failures.push(`${what}: no error, want ${c.error}`);
          } catch (e) {
            if (!e.message.includes(c.error)) failures.push(`${what}: "${e.message}" lacks "${c.error}"`);
          }
          return;
        }
        const tol = c.dtype === 'bfloat16' ? 1e-2 : 1e-6;
        wt.manualSeed(c.seed);
        const y = fn(x, c.p, c.training);
        let i = firstMismatch(flat(y), c.values, tol);
        if (i >= 0) failures.push(`${what}: value[${i}] ${flat(y)[i]}, want ${c.values[i]}`);
        if (c.size.every((s) => s > 1) && JSON.stringify(y.stride()) !== JSON.stringify(c.stride)) {
          failures.push(`${what}: stride ${y.stride()}, want ${c.stride}`);
        }
        // the options form, and in place on a copy
        wt.manualSeed(c.seed);
        const y2 = fn(x, { p: c.p, training: c.training });
        const xi = x.clone();
        wt.manualSeed(c.seed);
        const y3 = fn(xi, { p: c.p, training: c.training, inplace: true });
        if (c.training && c.p > 0 && c.size.every((s) => s > 0) && y3 !== xi) failures.push(`${what}: inplace did not return its input`);
        for (const [name, t] of [['options', y2], ['inplace', xi]]) {
          i = firstMismatch(flat(t), c.values, tol);
          if (i >= 0) failures.push(`${what} (${name}): value[${i}] ${flat(t)[i]}, want ${c.values[i]}`);
        }
        // autograd: the recorded multiply (MulBackward0), or the input itself
        if (c.dtype !== 'bfloat16') {
          const xr = x.detach().requiresGrad_();
          wt.manualSeed(c.seed);
          const yr = fn(xr, c.p, c.training);
          const node = nodeName(yr);
          if (node !== c.node) failures.push(`${what}: node ${node}, want ${c.node}`);
          if (node) {
            yr.sum().backward();
            const gt = xr.grad;
            const g = flat(gt);
            gt.dispose();
            const want = c.values.map((v, j) => num(v) / (j + 1)); // x = 1..n: the mask scale
            i = firstMismatch(g, want, 1e-6);
            if (i >= 0) failures.push(`${what}: grad[${i}] ${g[i]}, want ${want[i]}`);
          }
        }
      });
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(counts(wt), before, 'nothing leaks');
  });
}

test('JS spellings: options, inplace, defaults and errors', async () => {
  const wt = await init();
  wt.tidy(() => {
    const x = wt.tensor([-4, -1, -0.5, 0, 0.5, 2, 7]);
    const same = (a, b) => assert.deepEqual(flat(a), flat(b));
    same(wt.leakyRelu(x, 0.2), wt.ops.call('leaky_relu', x, 0.2));
    same(wt.hardtanh(x, -2, 3), wt.tensor([-2, -1, -0.5, 0, 0.5, 2, 3]));
    same(wt.relu6(x), wt.tensor([0, 0, 0, 0, 0.5, 2, 6]));
    same(wt.softplus(x, 2, 1), wt.ops.call('softplus', x, 2, 1));
    same(wt.elu(x, 0.5), wt.ops.call('elu', x, 0.5, 1, 1));
    same(wt.gelu(x, { approximate: 'tanh' }), wt.ops.call('gelu', x, { approximate: 'tanh' }));
    for (const [fn, args] of [['relu6', []], ['elu', [0.5]], ['leakyRelu', [0.1]], ['hardtanh', [-1, 2]], ['silu', []],
      ['mish', []], ['hardswish', []], ['hardsigmoid', []]]) {
      const want = wt[fn](x, ...args);
      const y = x.clone();
      assert.equal(wt[fn](y, ...args, { inplace: true }), y, `${fn} inplace returns its input`);
      same(y, want);
      same(wt[fn](x, ...args, { inplace: false }), want);
    }
    assert.equal(x.elu, undefined, 'no Tensor.elu: torch.nn.functional only, as PyTorch');
    const t = wt.tensor([0, 0, 3, -1, 0.25, 0]);
    assert.equal(wt.l1Loss(x.narrow(0, 0, 6), t, { reduction: 'sum' }).item(), wt.l1Loss(x.narrow(0, 0, 6), t, 'sum').item());
    const a = wt.smoothL1Loss(x.narrow(0, 0, 6), t, { reduction: 'none', beta: 0.5 });
    same(a, wt.smoothL1Loss(x.narrow(0, 0, 6), t, 'none', 0.5));
    same(wt.huberLoss(x.narrow(0, 0, 6), t, { delta: 2 }), wt.huberLoss(x.narrow(0, 0, 6), t, 'mean', 2));
    throwsWeft(() => wt.smoothL1Loss(t, t, { beta: -1 }), 'InvalidArgument',
      /^smooth_l1_loss: smooth_l1_loss does not support negative values for beta\.$/);
    throwsWeft(() => wt.huberLoss(t, t, { delta: 0 }), 'InvalidArgument', /non-positive values for delta/);
    throwsWeft(() => wt.l1Loss(t, t, { reduction: 'avg' }), undefined, /avg is not a valid value for reduction/);
    throwsWeft(() => wt.elu(wt.tensor([1n, 2n])), 'TypeError', /^elu: "elu_cpu" not implemented for 'int64'$/);
    throwsWeft(() => wt.relu6(wt.tensor([true])), 'TypeError', /^relu6: bool inputs not supported for hardtanh$/);
    // an integer hardtanh's bounds must fit int64 (the fuzzer's -inf: undefined behaviour before the check)
    for (const b of [[-Infinity, 2], [-2, Infinity], [NaN, 2], [-1e30, 1e30]])
      throwsWeft(() => wt.hardtanh(wt.tensor(new Int8Array([-5, 0, 5])), ...b), 'InvalidArgument',
        /^hardtanh: value cannot be converted to type int64 without overflow$/);
    same(wt.hardtanh(wt.tensor(new Int8Array([-5, 0, 5])), -2, 3), wt.tensor(new Int8Array([-2, 0, 3])));
    throwsWeft(() => wt.leakyRelu(x, 0.1, { inplace: 1 }), 'TypeError', /argument 'inplace' must be bool/);
    // dropout: positional or options, defaults p = 0.5 and training = true
    const z = wt.ones([64]);
    wt.manualSeed(5);
    const d1 = wt.dropout(z);
    wt.manualSeed(5);
    same(d1, wt.dropout(z, 0.5, true));
    wt.manualSeed(5);
    same(d1, wt.dropout(z, { p: 0.5 }));
    assert.ok(flat(d1).every((v) => v === 0 || v === 2));
    same(wt.dropout(z, 0.9, false), z);
    same(wt.dropout(z, { training: false }), z);
    throwsWeft(() => wt.dropout(z, 1.5), 'InvalidArgument', /^dropout: dropout probability has to be between 0 and 1, but got 1\.5$/);
    throwsWeft(() => wt.dropout2d(z.reshape([4, 4, 4]), { p: -0.25 }), 'InvalidArgument',
      /^dropout2d: dropout probability has to be between 0 and 1, but got -0\.25$/);
    throwsWeft(() => wt.dropout(z, 0.5, { p: 0.5 }), 'TypeError', /multiple values for argument 'p'/);
    throwsWeft(() => wt.dropout(z, { rate: 0.5 }), 'TypeError', /unexpected keyword argument 'rate'/);
    throwsWeft(() => wt.dropout(z, 0.5, 1), 'TypeError', /argument 'training' must be bool/);
    throwsWeft(() => wt.dropout2d(z, 0.5), 'InvalidArgument', /Feature dropout requires at least 2 dimensions in the input/);
  });
});
