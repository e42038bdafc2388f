// Fine-tuning (issue 23) against PyTorch 1.13 (tests/fixtures/optim_groups.json,
// made by tests/fixtures/gen_optim_groups_fixtures.py): optimizers over
// parameter groups (trajectories, a frozen backbone, addParamGroup), their state
// dicts (contents after 3 steps in PyTorch's names; a fresh optimizer loading
// PyTorch's or weft's own state dict continues as PyTorch does), the lr
// schedulers' sequences (to 1e-12), their state dicts, and clipGradNorm_ /
// clipGradValue_. Nothing leaks once the optimizers are disposed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, counts, throwsWeft, close, VARIANTS } from './helpers.mjs';

const F = JSON.parse(readFileSync(new URL('../fixtures/optim_groups.json', import.meta.url), 'utf8'));

const isEncoded = (v) => v !== null && typeof v === 'object' && 'dtype' in v && 'values' in v;
// a fixture value with tensors made weft tensors
function decode(wt, v) {
  if (isEncoded(v)) return wt.tidy(() => wt.tensor(v.values, { dtype: v.dtype }).reshape(v.shape).clone());
  if (Array.isArray(v)) return v.map((x) => decode(wt, x));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(wt, x)]));
  return v;
}
// weft's state dict in the fixture's form
function encode(wt, v) {
  if (v instanceof wt.Tensor) return { dtype: v.dtype, shape: v.shape, values: v.reshape(-1).toArray() };
  if (Array.isArray(v)) return v.map((x) => encode(wt, x));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(wt, x)]));
  return v;
}
// disposes every tensor in a state dict
function disposeAll(wt, v) {
  if (v instanceof wt.Tensor) v.dispose();
  else if (v !== null && typeof v === 'object') Object.values(v).forEach((x) => disposeAll(wt, x));
}
// a state dict checked against the fixture's, then disposed
function checkStateDict(wt, sd, want, e, what) {
  assert.deepEqual(wt.tidy(() => diff(encode(wt, sd), want, e)), [], what);
  disposeAll(wt, sd);
}
// the optimizer's state, the parameters and their grads
function release(opt, ps) {
  opt.dispose();
  for (const p of ps) { p.grad = null; p.dispose(); }
}
// differences between two encoded values (floats in tensors within e relative; the rest exact)
function diff(got, want, e, at = '') {
  if (isEncoded(want)) {
    if (!isEncoded(got)) return [`${at}: not a tensor`];
    if (got.dtype !== want.dtype || JSON.stringify(got.shape) !== JSON.stringify(want.shape)) {
      return [`${at}: ${got.dtype} ${JSON.stringify(got.shape)} != ${want.dtype} ${JSON.stringify(want.shape)}`];
    }
    const i = want.values.findIndex((w, j) => !close(got.values[j], w, e));
    return i < 0 ? [] : [`${at}[${i}]: ${got.values[i]} != ${want.values[i]}`];
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') return [`${at}: ${JSON.stringify(got)} is not an object`];
    const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
    return [...keys].flatMap((k) => diff(got[k], want[k], e, `${at}.${k}`));
  }
  if (typeof want === 'number' && typeof got === 'number') return close(got, want, e) ? [] : [`${at}: ${got} != ${want}`];
  return got === want ? [] : [`${at}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`];
}

function setup(wt) {
  const X = decode(wt, F.X), Y = decode(wt, F.Y);
  const params = () => F.params0.map((p) => decode(wt, p).requiresGrad_());
  const lossOf = ([W1, W2, b]) => wt.tidy(() => {
    const d = X.matmul(W1).tanh().matmul(W2).add(b).sub(Y);
    d.mul(d).mean().backward();
  });
  const train = (opt, ps, n) => Array.from({ length: n }, () => {
    opt.zeroGrad();
    lossOf(ps);
    opt.step();
    return wt.tidy(() => ps.map((p) => p.reshape(-1).toArray()));
  });
  return { X, Y, params, train, done: () => { X.dispose(); Y.dispose(); } };
}

const worst = (got, want) => Math.max(...got.flatMap((step, i) => step.flatMap((p, j) => p.map((v, k) => {
  const w = want[i][j][k];
  return Math.abs(v - w) / (1 + Math.abs(w));
}))));

function makeOpt(wt, run, ps) {
  const groups = run.groups.map((g) => ({ params: g.params.map((i) => ps[i]), ...g.options }));
  return new wt.optim[run.optimizer](groups, run.defaults);
}

for (const variant of VARIANTS) {
  test(`optimizers over parameter groups and their state dicts match PyTorch 1.13 (${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const s = setup(wt);
    for (const run of F.runs) {
      const what = `${run.optimizer} ${JSON.stringify(run.groups)}`;
      const ps = s.params();
      const opt = makeOpt(wt, run, ps);
      const first = s.train(opt, ps, 3);
      const sd = opt.stateDict();
      assert.deepEqual(wt.tidy(() => diff(encode(wt, sd), run.stateDict, 2e-5)), [], `${what}: state dict after 3 steps`);
      // (sd is loaded below, then disposed)
      // a fresh optimizer loads PyTorch's state dict, or weft's own, and goes on as PyTorch did
      for (const source of ['torch', 'weft']) {
        const ps2 = wt.tidy(() => ps.map((p) => p.detach().clone().requiresGrad_()));
        const opt2 = makeOpt(wt, run, ps2);
        const saved = source === 'torch' ? decode(wt, run.stateDict) : sd;
        opt2.loadStateDict(saved);
        if (source === 'torch') disposeAll(wt, saved);
        const rest = s.train(opt2, ps2, run.steps.length - 3);
        const e = worst([...first, ...rest], run.steps);
        assert.ok(e < 5e-5, `${what}, loaded from ${source}: relative error ${e}`);
        checkStateDict(wt, opt2.stateDict(), run.finalStateDict, 1e-4, `${what}: final state dict`);
        release(opt2, ps2);
      }
      disposeAll(wt, sd);
      release(opt, ps);
    }
    s.done();
    assert.deepEqual(counts(wt), before);
  });
}

test('a frozen backbone in its own group, and addParamGroup, as PyTorch', async () => {
  const wt = await init();
  const before = counts(wt);
  const s = setup(wt);
  let ps = s.params();
  ps[0].requiresGrad_(false); // frozen: no .grad, skipped by step
  let opt = new wt.optim.SGD([{ params: [ps[0]], lr: 1e-4 }, { params: [ps[1], ps[2]] }], { lr: 1e-2, momentum: 0.9 });
  assert.ok(worst(s.train(opt, ps, F.frozen.steps.length), F.frozen.steps) < 2e-5);
  checkStateDict(wt, opt.stateDict(), F.frozen.stateDict, 2e-5, 'frozen');
  assert.equal(opt.state.has(ps[0]), false);
  release(opt, ps);

  ps = s.params();
  opt = new wt.optim.Adam([ps[1], ps[2]], { lr: 0.01 });
  const steps = s.train(opt, ps, 2);
  opt.addParamGroup({ params: ps[0], lr: 0.001 });
  steps.push(...s.train(opt, ps, 3));
  assert.ok(worst(steps, F.addGroup.steps) < 5e-5);
  checkStateDict(wt, opt.stateDict(), F.addGroup.stateDict, 1e-4, 'addParamGroup');
  release(opt, ps);
  s.done();
  assert.deepEqual(counts(wt), before);
});

test('paramGroups are live, params may be any iterable; PyTorch checks and messages', async () => {
  const wt = await init();
  const before = counts(wt);
  const a = wt.tensor([1, 2], { requiresGrad: true });
  const b = wt.tensor([3], { requiresGrad: true });
  function* gen() { yield a; }
  const opt = new wt.optim.SGD([{ params: gen(), lr: 0.5, tag: 'backbone' }, { params: new Set([b]) }], { lr: 0.1 });
  assert.equal(opt.paramGroups.length, 2);
  assert.equal(opt.paramGroups[0].tag, 'backbone'); // extra keys are kept, as PyTorch's dicts do
  assert.deepEqual(opt.params, [a, b]);
  opt.paramGroups[0].lr = 2; // takes effect at the next step
  wt.tidy(() => a.sum().add(b.sum()).backward());
  opt.step();
  assert.deepEqual(a.toArray(), [-1, 0]);
  assert.ok(Math.abs(b.toArray()[0] - 2.9) < 1e-6);
  const E = F.errors;
  throwsWeft(() => opt.addParamGroup({ params: [a] }), 'InvalidArgument', new RegExp(`${E.dup}$`));
  throwsWeft(() => opt.addParamGroup({ params: [3] }), 'TypeError', /optimizer can only optimize Tensors/);
  throwsWeft(() => opt.addParamGroup([a]), 'TypeError', /param group must be an object/);
  throwsWeft(() => new wt.optim.SGD([{ params: [a] }]), 'InvalidArgument', /required optimization parameter lr/);
  throwsWeft(() => opt.loadStateDict({ state: {}, param_groups: [{ params: [0], lr: 0.1 }] }), 'InvalidArgument',
    new RegExp(`${E.groups}$`));
  throwsWeft(() => opt.loadStateDict({ state: {}, param_groups: [{ params: [0, 1], lr: 0.1 }, { params: [], lr: 0.1 }] }),
    'InvalidArgument', new RegExp(`${E.size}$`));
  throwsWeft(() => opt.loadStateDict({}), 'TypeError', /expected a state dict/);
  // a state tensor of the wrong shape is refused and the optimizer keeps its state
  const wrong = wt.zeros([5]);
  throwsWeft(() => opt.loadStateDict({ state: { 0: { momentum_buffer: wrong } }, param_groups: [{ params: [0] }, { params: [1] }] }),
    'ShapeError', /momentum_buffer' has shape \[5\] but its parameter has shape \[2\]/);
  wrong.dispose();
  assert.equal(opt.paramGroups[0].lr, 2);
  throwsWeft(() => new wt.optim.lrScheduler.StepLR(new wt.optim.SGD([a], { lr: 0.1 }), 3, { lastEpoch: 4 }), 'InvalidArgument',
    /param 'initialLr' is not specified in paramGroups\[0\] when resuming an optimizer/);
  throwsWeft(() => new wt.optim.lrScheduler.LambdaLR(opt, [() => 1]), 'InvalidArgument', new RegExp(`${E.lambdas.replace('lr_lambdas', 'lrLambdas')}$`));
  throwsWeft(() => new wt.optim.lrScheduler.LinearLR(opt, { startFactor: 1.5 }), 'InvalidArgument', new RegExp(`${E.linear}$`));
  throwsWeft(() => new wt.optim.lrScheduler.StepLR({}, 3), 'TypeError', /is not an Optimizer/);
  throwsWeft(() => new wt.optim.lrScheduler.StepLR(opt, 0), 'InvalidArgument', /stepSize must be a positive integer/);
  throwsWeft(() => new wt.optim.lrScheduler.StepLR(opt, 2, { gama: 0.1 }), 'TypeError', /unknown option 'gama'/);
  opt.zeroGrad({ setToNone: true });
  opt.dispose();
  a.dispose();
  b.dispose();
  assert.deepEqual(counts(wt), before);
});

const LAMBDAS = { pow95: (e) => 0.95 ** e, inv: (e) => 1.0 / (e + 1), warm: (e) => Math.min(1.0, (e + 1) / 10) };
function makeScheduler(wt, run, opt) {
  const S = wt.optim.lrScheduler[run.scheduler];
  const args = run.args.map((a) => (typeof a === 'string' ? LAMBDAS[a]
    : Array.isArray(a) && typeof a[0] === 'string' ? a.map((n) => LAMBDAS[n]) : a));
  return new S(opt, ...args, run.options);
}

test('lr schedulers give PyTorch 1.13 sequences (to 1e-12) and state dicts', async () => {
  const wt = await init();
  const before = counts(wt);
  const ps = [wt.zeros([2], { requiresGrad: true }), wt.zeros([3], { requiresGrad: true })];
  const makeOptimizer = () => new wt.optim.SGD([{ params: [ps[0]], lr: 0.1 }, { params: [ps[1]], lr: 0.05 }], { lr: 1, momentum: 0.5 });
  const bad = [];
  for (const run of F.schedulers) {
    const what = `${run.scheduler}(${JSON.stringify(run.args)}, ${JSON.stringify(run.options)})`;
    const opt = makeOptimizer();
    const s = makeScheduler(wt, run, opt);
    const lrs = [s.getLastLr()];
    let at10 = null;
    for (let i = 0; i < run.lrs.length - 1; i++) {
      opt.step();
      s.step();
      lrs.push(s.getLastLr());
      if (i === 9) at10 = { sd: s.stateDict(), lrs: opt.paramGroups.map((g) => g.lr) };
    }
    lrs.forEach((l, i) => l.forEach((v, j) => {
      const w = run.lrs[i][j];
      if (Math.abs(v - w) > 1e-12 * Math.abs(w)) bad.push(`${what} step ${i} group ${j}: ${v} != ${w}`);
    }));
    assert.equal(s.lastEpoch, run.lrs.length - 1);
    bad.push(...diff(at10.sd, run.stateDictAt10, 1e-12).map((d) => `${what} state dict${d}`));
    const keys = Object.keys(opt.stateDict().param_groups[0]).sort();
    assert.deepEqual(keys, [...run.groupKeys].sort(), `${what}: group keys`);
    // another scheduler loads the state at 10 (and the groups' lrs) and goes on the same way
    const opt2 = makeOptimizer();
    const s2 = makeScheduler(wt, run, opt2);
    s2.loadStateDict(at10.sd);
    opt2.paramGroups.forEach((g, i) => { g.lr = at10.lrs[i]; });
    for (let i = 11; i < run.lrs.length; i++) {
      s2.step();
      s2.getLastLr().forEach((v, j) => {
        if (Math.abs(v - run.lrs[i][j]) > 1e-12 * Math.abs(run.lrs[i][j])) bad.push(`${what} loaded, step ${i}: ${v}`);
      });
    }
    opt.dispose();
    opt2.dispose();
  }
  assert.deepEqual(bad, []);
  for (const p of ps) p.dispose();
  assert.deepEqual(counts(wt), before);
});

test('step(epoch) uses the closed forms; verbose prints PyTorch\'s line', async () => {
  const wt = await init();
  const p = wt.zeros([1], { requiresGrad: true });
  const opt = new wt.optim.SGD([p], { lr: 1 });
  const s = new wt.optim.lrScheduler.StepLR(opt, 3, { gamma: 0.5 });
  s.step(7);
  assert.deepEqual(s.getLastLr(), [0.25]);
  const m = new wt.optim.lrScheduler.MultiStepLR(opt, [2, 4, 4], { gamma: 0.5 });
  m.step(4);
  assert.deepEqual(m.getLastLr(), [0.125]); // initialLr stays 1: 1 * 0.5 ** 3 milestones <= 4
  const log = [];
  const orig = console.log;
  console.log = (line) => log.push(line);
  try {
    new wt.optim.lrScheduler.LambdaLR(opt, () => 0.5, { verbose: true });
  } finally {
    console.log = orig;
  }
  assert.deepEqual(log, ['Adjusting learning rate of group 0 to 5.0000e-01.']);
  opt.dispose();
  p.dispose();
});

test('clipGradNorm_ / clipGradValue_ match PyTorch 1.13', async () => {
  const wt = await init();
  const before = counts(wt);
  const C = F.clip;
  const withGrads = () => C.grads.map((g) => {
    const p = wt.zerosLike(decode(wt, g)).requiresGrad_();
    p.grad = decode(wt, g);
    return p;
  });
  for (const run of C.norm) {
    wt.tidy(() => {
      const ps = withGrads();
      const total = wt.nn.utils.clipGradNorm_(ps, run.maxNorm, { normType: run.normType });
      assert.deepEqual(total.shape, []);
      assert.ok(close(total.item(), run.total, 1e-6), `${JSON.stringify(run)}: total ${total.item()}`);
      ps.forEach((p, i) => {
        const got = p.grad.reshape(-1).toArray();
        const j = run.grads[i].findIndex((w, k) => !close(got[k], w, 1e-6));
        assert.equal(j, -1, `maxNorm ${run.maxNorm} normType ${run.normType}: grad ${i}[${j}] ${got[j]} != ${run.grads[i][j]}`);
      });
    });
  }
  wt.tidy(() => {
    const ps = withGrads();
    wt.nn.utils.clipGradValue_(ps, C.value.clipValue);
    ps.forEach((p, i) => assert.deepEqual(p.grad.reshape(-1).toArray().map((v) => Math.fround(v)),
      C.value.grads[i].map((v) => Math.fround(v))));
    const bad = wt.zeros([2], { requiresGrad: true });
    bad.grad = wt.tensor([1, Infinity]);
    throwsWeft(() => wt.nn.utils.clipGradNorm_(bad, 1, { errorIfNonfinite: true }), 'InvalidArgument',
      /^clipGradNorm_: The total norm of order 2 for gradients from `parameters` is non-finite, so it cannot be clipped/);
    // no gradients: a zero norm, nothing to clip
    assert.equal(wt.nn.utils.clipGradNorm_([wt.zeros([2], { requiresGrad: true })], 1).item(), 0);
    throwsWeft(() => wt.nn.utils.clipGradNorm_(ps, '1'), 'TypeError', /maxNorm must be a number/);
    throwsWeft(() => wt.nn.utils.clipGradNorm_(ps, 1, { norm: 2 }), 'TypeError', /unknown option 'norm'/);
    for (const p of ps) p.grad = null;
    bad.grad = null;
  });
  assert.deepEqual(counts(wt), before);
});
