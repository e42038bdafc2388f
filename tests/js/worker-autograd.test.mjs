// Autograd and the optimizers in worker mode (issue 15): the graph, .grad,
// grad mode and the optimizers live in the worker; the page's calls reach it
// in order. A small MLP trained in a worker gives direct mode's losses and
// weights bit for bit (same variant, one thread), every autograd call of the
// worker API answers as direct mode does, errors keep PyTorch's messages, and
// a training loop leaves the worker's memory where it found it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initWorker } from 'weft';
import { init, WeftError } from './helpers.mjs';

const rejectsWeft = (p, code, re) => assert.rejects(p, (e) => {
  assert.ok(e instanceof WeftError, `expected WeftError, got ${e && e.name}: ${e && e.message}`);
  assert.equal(e.code, code, `code of "${e.message}"`);
  assert.match(e.message, re);
  return true;
});

// Runs fn(ww) with a fresh worker (the simd variant, as direct mode's init below).
async function withWorker(fn) {
  const ww = await initWorker({ variant: 'simd' });
  try {
    await fn(ww);
  } finally {
    await ww.terminate();
  }
}

// One program for both modes: direct mode's results are values, worker
// mode's promises; awaiting either gives the same thing.
const LABELS = [0, 1, 2, 1, 0, 2, 2, 1, 0, 0, 1, 2, 1, 2, 0, 1];
async function trainMlp(w, { optim, options, steps }) {
  await w.manualSeed(7);
  const params = [w.randn([4, 8], { requiresGrad: true }), w.zeros([8], { requiresGrad: true }),
    w.randn([8, 3], { requiresGrad: true }), w.zeros([3], { requiresGrad: true })];
  const [w1, b1, w2, b2] = params;
  const x = w.randn([16, 4]);
  const y = w.tensor(LABELS, { dtype: 'int64' });
  const opt = new w.optim[optim](params, options);
  const losses = [];
  const memory = [];
  for (let i = 0; i < steps; i++) {
    // (outside tidy: direct mode's tidy would dispose the state a first step makes)
    const [loss, done] = w.tidy(() => {
      const out = x.mm(w1).add(b1).relu().mm(w2).add(b2);
      const l = w.crossEntropy(out, y);
      return [l, l.backward()];
    });
    await Promise.all([done, opt.step(), opt.zeroGrad()]);
    losses.push(await loss.item());
    loss.dispose();
    memory.push((await w.memory()).tensors);
  }
  const weights = await Promise.all(params.map((p) => p.toArray()));
  opt.dispose();
  for (const t of [...params, x, y]) t.dispose();
  return { losses, weights, memory };
}

for (const [optim, options] of [
  ['SGD', { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 1e-3 }],
  ['Adam', { lr: 0.01, amsgrad: true }],
  ['AdamW', { lr: 0.01 }],
]) {
  test(`worker mode trains an MLP with ${optim} exactly as direct mode does; memory stays flat`, () => withWorker(async (ww) => {
    const wt = await init({ variant: 'simd' });
    const before = (await ww.memory()).tensors;
    const direct = await trainMlp(wt, { optim, options, steps: 12 });
    const worker = await trainMlp(ww, { optim, options, steps: 12 });
    assert.deepEqual(worker.losses, direct.losses);
    assert.deepEqual(worker.weights, direct.weights);
    assert.ok(worker.losses[11] < worker.losses[0] * 0.9, `it learns: ${worker.losses}`);
    // the first step makes the grads and the optimizer's state; then nothing grows
    assert.deepEqual(new Set(worker.memory.slice(1)).size, 1, `tensors per step: ${worker.memory}`);
    assert.equal((await ww.memory()).tensors, before);
  }));
}

test('worker mode: requiresGrad, isLeaf, gradFn, retainGrad, backward, t.grad', () => withWorker(async (ww) => {
  const x = ww.tensor([1, 2, 3], { requiresGrad: true });
  assert.equal(await x.requiresGrad, true);
  assert.equal(await x.isLeaf, true);
  assert.equal(await x.gradFn, null);
  const y = x.mul(x);
  assert.equal(await y.isLeaf, false);
  const fn = await y.gradFn;
  assert.equal(fn.name, 'MulBackward0');
  assert.deepEqual(fn.nextFunctions, [[{ name: 'AccumulateGrad' }, 0], [{ name: 'AccumulateGrad' }, 0]]);
  assert.equal(await y.retainsGrad, false);
  // the pieces of a split share one node; outputNr tells them apart
  const pieces = await x.split(1); // a list comes back as a promise
  assert.deepEqual(await Promise.all(pieces.map((p) => p.outputNr)), [0, 1, 2]);
  assert.equal((await pieces[2].gradFn).name, 'SplitBackward0');
  for (const p of pieces) p.dispose();
  await y.retainGrad();
  assert.equal(await y.retainsGrad, true);
  assert.equal(await y.sum().backward(), undefined);
  assert.deepEqual(await x.grad.toArray(), [2, 4, 6]);
  assert.deepEqual(await y.grad.toArray(), [1, 1, 1]);
  // a gradient accumulates; backward(gradient) of a non-scalar
  const done = y.detach().requiresGrad_().mul(x).backward(ww.tensor([1, 0, 1]));
  await done;
  assert.deepEqual(await x.grad.toArray(), [3, 4, 15]); // 2x + x² * [1, 0, 1]
  // t.grad names the grad at this point of the message order: it shares
  // the gradient's data, as in direct mode
  const g = x.grad;
  g.zero_();
  assert.deepEqual(await x.grad.toArray(), [0, 0, 0]);
  // t.grad = null clears it; t.grad then fails, t.gradOrNull() gives null
  x.grad = null;
  assert.equal(await x.gradOrNull(), null);
  await rejectsWeft(x.grad.ready, 'InvalidArgument', /^grad: the tensor's \.grad is null/);
  const z = ww.tensor([5, 6]);
  assert.equal(await z.gradOrNull(), null, 'a tensor that never needed a grad');
  x.grad = ww.ones([3]);
  const back = await x.gradOrNull();
  assert.deepEqual(await back.toArray(), [1, 1, 1]);
  for (const t of [x, y, g, z, back]) t.dispose();
}));

test('worker mode: requiresGrad_, the requiresGrad setter, detach, detach_', () => withWorker(async (ww) => {
  const a = ww.ones([2]);
  assert.equal(await a.requiresGrad, false);
  const same = a.requiresGrad_(); // in place: a WorkerTensor naming the same tensor
  assert.equal(await a.requiresGrad, true);
  assert.equal(await same.requiresGrad, true);
  a.requiresGrad = false;
  assert.equal(await a.requiresGrad, false);
  a.requiresGrad = true;
  const d = a.mul(3).detach();
  assert.equal(await d.requiresGrad, false);
  assert.equal(await d.isLeaf, true);
  const e = a.mul(3);
  e.detach_();
  assert.equal(await e.isLeaf, true);
  assert.equal(await e.gradFn, null);
  assert.equal(await e.requiresGrad, false);
  // refusals keep direct mode's messages
  const wt = await init({ variant: 'simd' });
  const direct = (fn) => { try { fn(); } catch (err) { return err.message; } return null; };
  const i = ww.tensor([1, 2], { dtype: 'int32' });
  const want = direct(() => wt.tensor([1, 2], { dtype: 'int32' }).requiresGrad_());
  assert.ok(want);
  await assert.rejects(i.requiresGrad_().ready, (err) => err instanceof WeftError && err.message === want);
  const bad = ww.ones([2, 2]).requiresGrad_().mul(2);
  const wantLeaf = direct(() => { wt.ones([2, 2]).requiresGrad_().mul(2).requiresGrad = false; });
  assert.ok(wantLeaf);
  bad.requiresGrad = false; // an assignment fails at the tensor's next use, once
  await assert.rejects(bad.toArray(), (err) => err instanceof WeftError && err.message === wantLeaf);
  assert.deepEqual(await bad.toArray(), [[2, 2], [2, 2]]);
  for (const t of [a, same, d, e, i, bad]) t.dispose();
}));

test('worker mode: backward errors reject with PyTorch messages; the worker goes on', () => withWorker(async (ww) => {
  const x = ww.tensor([1, 2, 3], { requiresGrad: true });
  const y = x.exp().sum();
  await y.backward(undefined, { retainGraph: true });
  await y.backward();
  await rejectsWeft(y.backward(), 'InvalidArgument', /^Trying to backward through the graph a second time/);
  await rejectsWeft(x.mul(2).backward(), 'InvalidArgument', /^grad can be implicitly created only for scalar outputs/);
  await rejectsWeft(ww.ones([2]).sum().backward(), 'InvalidArgument',
    /^element 0 of tensors does not require grad and does not have a grad_fn/);
  await assert.rejects(x.sum().backward(null, { retainGraf: true }), /unknown option 'retainGraf'/);
  assert.deepEqual(await x.mul(2).toArray(), [2, 4, 6], 'later calls work');
  x.dispose();
  y.dispose();
}));

test('worker mode: wt.autograd.grad, createGraph and allowUnused', () => withWorker(async (ww) => {
  const x = ww.tensor([1, 2, 3], { requiresGrad: true });
  const u = ww.tensor([4], { requiresGrad: true });
  const [g] = await ww.autograd.grad(x.pow(3).sum(), [x], { createGraph: true });
  assert.deepEqual(await g.toArray(), [3, 12, 27]);
  assert.equal(await g.requiresGrad, true);
  const [gg, none] = await ww.autograd.grad(g.sum(), [x, u], { allowUnused: true });
  assert.deepEqual(await gg.toArray(), [6, 12, 18]);
  assert.equal(none, null);
  assert.equal(await x.gradOrNull(), null, 'autograd.grad leaves .grad alone');
  await rejectsWeft(ww.autograd.grad(x.sum(), [u]), 'InvalidArgument', /appears to not have been used in the graph/);
  const [h] = await ww.autograd.grad(x.mul(2), x, { gradOutputs: [ww.tensor([1, 0, 2])] });
  assert.deepEqual(await h.toArray(), [2, 0, 4]);
  for (const t of [x, u, g, gg, h]) t.dispose();
}));

test('worker mode: noGrad, enableGrad, setGradEnabled, isGradEnabled', () => withWorker(async (ww) => {
  const x = ww.tensor([1, 2], { requiresGrad: true });
  const r = ww.noGrad(() => x.mul(2)); // fn's calls are sent between the mode switches
  assert.equal(await r.requiresGrad, false);
  assert.equal(await ww.isGradEnabled(), true);
  const inner = ww.noGrad(() => ww.enableGrad(() => x.mul(2)));
  assert.equal(await inner.requiresGrad, true);
  // an async fn: the scope lasts until it settles
  const seen = await ww.noGrad(async () => {
    const before = await ww.isGradEnabled();
    const t = x.mul(3);
    return [before, await t.requiresGrad, t];
  });
  assert.deepEqual(seen.slice(0, 2), [false, false]);
  assert.equal(await ww.isGradEnabled(), true);
  // a throwing fn restores the mode and throws as it is
  assert.throws(() => ww.noGrad(() => { throw new RangeError('boom'); }), RangeError);
  assert.equal(await ww.isGradEnabled(), true);
  await assert.rejects(ww.enableGrad(async () => { throw new RangeError('later'); }), RangeError);
  assert.throws(() => ww.noGrad(5), (e) => e instanceof WeftError && e.code === 'TypeError');
  await ww.setGradEnabled(false);
  assert.equal(await ww.isGradEnabled(), false);
  assert.equal(await x.mul(2).requiresGrad, false);
  assert.equal(await ww.enableGrad(() => x.mul(2)).requiresGrad, true);
  assert.equal(await ww.isGradEnabled(), false);
  await ww.setGradEnabled(true);
  for (const t of [x, r, inner, seen[2]]) t.dispose();
}));

test('worker mode: optimizers refuse bad input, step(closure), dispose', () => withWorker(async (ww) => {
  const w = ww.tensor([1, -2], { requiresGrad: true });
  const empty = new ww.optim.SGD([], { lr: 0.1 });
  await rejectsWeft(empty.ready, 'InvalidArgument', /^SGD: optimizer got an empty parameter list$/);
  await rejectsWeft(empty.step(), 'InvalidArgument', /empty parameter list/);
  await rejectsWeft(new ww.optim.Adam([w], { lr: -1 }).zeroGrad(), 'InvalidArgument', /^Adam: Invalid learning rate: -1$/);
  await rejectsWeft(new ww.optim.AdamW(w).ready, 'TypeError', /should be an array of Tensors or parameter groups, but got a Tensor/);
  const opt = new ww.optim.SGD([w], { lr: 0.5 });
  assert.equal(opt.params[0], w);
  await opt.ready;
  // the closure runs here under enableGrad; step() follows it
  const loss = await ww.noGrad(() => opt.step(() => {
    const l = w.pow(2).sum();
    l.backward();
    return l;
  }));
  assert.equal(await loss.item(), 5);
  assert.deepEqual(await w.toArray(), [0, 0]);
  await opt.zeroGrad({ setToNone: true });
  assert.equal(await w.gradOrNull(), null);
  opt.dispose();
  await rejectsWeft(opt.step(), 'InvalidArgument', /^step: the optimizer has been disposed$/);
  loss.dispose();
  w.dispose();
}));

test('worker mode: parameter groups train as in direct mode; registerHook throws', () => withWorker(async (ww) => {
  const wt = await init({ variant: 'simd' });
  const run = async (w) => {
    const a = w.tensor([1, -2], { requiresGrad: true });
    const b = w.tensor([0.5], { requiresGrad: true });
    const opt = new w.optim.SGD([{ params: [a], lr: 0.01 }, { params: [b] }], { lr: 0.1, momentum: 0.9 });
    assert.equal(opt.params.length, 2);
    for (let i = 0; i < 3; i++) {
      await opt.zeroGrad();
      const l = a.mul(b).pow(2).sum();
      await l.backward();
      l.dispose();
      await opt.step();
    }
    const out = [await a.toArray(), await b.toArray()];
    opt.dispose();
    a.dispose();
    b.dispose();
    return out;
  };
  assert.deepEqual(await run(ww), await run(wt));
  const t = ww.tensor([1], { requiresGrad: true });
  assert.throws(() => t.registerHook((g) => g), (e) => e instanceof WeftError && e.code === 'NotImplemented' &&
    /registerHook: tensor hooks are not available in worker mode/.test(e.message));
  t.dispose();
}));
