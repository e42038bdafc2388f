// Autograd (issue 15) through the JS API: every case of
// tests/fixtures/autograd.json (PyTorch 1.13's torch.autograd.grad for the
// same inputs and output gradient, made by
// tests/fixtures/gen_autograd_fixtures.py; the float64 gradcheck of every
// formula is tests/c/test_autograd.c) on each wasm variant, the node names
// (gradFn.name), seed 004's program with backward(), second derivatives
// through createGraph, and the engine's rules: retainGraph, accumulation,
// version counters, noGrad, refusals, and no leak once the graph is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, close, counts, throwsWeft, VARIANTS } from './helpers.mjs';

const FX = JSON.parse(readFileSync(new URL('../fixtures/autograd.json', import.meta.url), 'utf8'));

// The replay of each case: the same function as the generator's.
const CASES = {
  add_broadcast: (wt, a, b) => wt.add(a, b, { alpha: 0.5 }),
  add_promote: (wt, a, b) => a.add(b),
  sub_broadcast: (wt, a, b) => a.sub(b),
  mul_transposed: (wt, a, b) => a.mul(b),
  mul_scalar: (wt, a) => a.mul(2.5),
  div: (wt, a, b) => a.div(b),
  div_scalar: (wt, a) => a.div(4),
  pow: (wt, a, b) => a.pow(b),
  pow_scalar: (wt, a) => a.pow(3),
  maximum: (wt, a, b) => wt.maximum(a, b),
  minimum: (wt, a, b) => wt.minimum(a, b),
  neg: (wt, a) => a.neg(),
  exp: (wt, a) => a.exp(),
  log: (wt, a) => a.log(),
  sqrt: (wt, a) => a.sqrt(),
  rsqrt: (wt, a) => a.rsqrt(),
  sin: (wt, a) => a.sin(),
  cos: (wt, a) => a.cos(),
  tanh: (wt, a) => a.tanh(),
  sigmoid: (wt, a) => a.sigmoid(),
  relu: (wt, a) => a.relu(),
  abs: (wt, a) => a.abs(),
  reciprocal: (wt, a) => a.reciprocal(),
  view: (wt, a) => a.view(6, 2),
  reshape_transposed: (wt, a) => a.reshape(12),
  permute: (wt, a) => a.permute(2, 0, 1),
  transpose: (wt, a) => a.transpose(0, 1),
  expand: (wt, a) => a.expand(2, 3, 4),
  squeeze_unsqueeze: (wt, a) => a.squeeze().unsqueeze(0),
  select: (wt, a) => a.select(1, 2),
  slice: (wt, a) => a.slice(1, 1, null, 2),
  narrow: (wt, a) => a.narrow(0, 1, 2),
  flatten: (wt, a) => a.flatten(),
  clone: (wt, a) => a.clone(),
  contiguous: (wt, a) => a.contiguous(),
  to_float64: (wt, a) => a.to('float64'),
  sum: (wt, a) => a.sum(),
  sum_dim: (wt, a) => a.sum(1),
  sum_keepdim: (wt, a) => a.sum(-1, { keepdim: true }),
  mean: (wt, a) => a.mean(),
  mean_dim: (wt, a) => a.mean([0, 2]),
  amax: (wt, a) => a.amax(0),
  max: (wt, a) => a.max(),
  softmax: (wt, a) => wt.softmax(a, 1),
  log_softmax: (wt, a) => wt.logSoftmax(a, -1),
  mm: (wt, a, b) => a.mm(b),
  bmm: (wt, a, b) => a.bmm(b),
  addmm: (wt, c, a, b) => wt.addmm(c, a, b, { beta: 0.5, alpha: 2 }),
  matmul: (wt, a, b) => a.matmul(b),
  linear: (wt, x, w, b) => wt.linear(x, w, b),
  where: (wt, c, a, b) => wt.where(c, a, b),
  mul_no_grad_other: (wt, a, b) => a.mul(b),
  exp2: (wt, a) => a.exp2(),
  log1p: (wt, a) => a.log1p(),
  expm1: (wt, a) => a.expm1(),
  tan: (wt, a) => a.tan(),
  erf: (wt, a) => a.erf(),
  gelu: (wt, a) => a.gelu(),
  gelu_tanh: (wt, a) => a.gelu({ approximate: 'tanh' }),
  floor: (wt, a) => a.floor(),
  sign: (wt, a) => a.sign(),
  remainder: (wt, a, b) => a.remainder(b),
  remainder_scalar: (wt, a) => a.remainder(0.75),
  pow_number_base: (wt, e) => wt.pow(2.5, e),
  clamp: (wt, a) => a.clamp(-0.5, 0.25),
  clamp_tensor: (wt, a, lo, hi) => a.clamp(lo, hi),
  clamp_min: (wt, a) => a.clampMin(0.125),
  clamp_max_tensor: (wt, a, m) => a.clampMax(m),
  min: (wt, a) => a.min(),
  prod: (wt, a) => a.prod(),
  prod_dim: (wt, a) => a.prod(1),
  cumsum: (wt, a) => a.cumsum(1),
  cumprod: (wt, a) => a.cumprod(0),
  logsumexp: (wt, a) => a.logsumexp(1),
  var: (wt, a) => a.var(),
  std_dim: (wt, a) => a.std(0, false),
  norm: (wt, a) => a.norm(2),
  norm_dim: (wt, a) => a.norm(3, [1]),
  baddbmm: (wt, c, a, b) => wt.baddbmm(c, a, b, { beta: 0.5, alpha: 2 }),
  dot: (wt, a, b) => wt.dot(a, b),
  mv: (wt, a, b) => wt.mv(a, b),
  matmul_vec: (wt, a, b) => a.matmul(b),
  index_select: (wt, a) => a.indexSelect(1, I(wt, [3, 0, 3])),
  gather: (wt, a) => a.gather(1, I(wt, [[0, 0], [3, 1], [2, 2]])),
  scatter_src: (wt, a, s) => a.scatter(1, I(wt, [[3, 0], [1, 2], [0, 3]]), s),
  scatter_add: (wt, a, s) => a.scatterAdd(1, I(wt, [[3, 3], [1, 2], [0, 0]]), s),
  take: (wt, a) => a.take(I(wt, [[0, 11], [5, -1]])),
  masked_fill: (wt, a) => a.maskedFill(wt.tensor([true, false, true, false]), 0.5),
  masked_select: (wt, a) => a.maskedSelect(wt.tensor([false, false, true, true])),
  index: (wt, a) => wt.index(a, [null, I(wt, [2, 0, 2])]),
  index_put: (wt, a, v) => a.indexPut([I(wt, [0, 2])], v),
  flip: (wt, a) => a.flip(0),
  roll: (wt, a) => a.roll([1, -2], [0, 1]),
  repeat: (wt, a) => a.repeat(2, 1, 3),
  tile: (wt, a) => a.tile(2),
  repeat_interleave: (wt, a) => a.repeatInterleave(2, 1),
  tril: (wt, a) => a.tril(),
  triu: (wt, a) => a.triu(1),
  diag: (wt, a) => a.diag(1),
  diagonal: (wt, a) => a.diagonal(1, 0, 2),
  max_dim: (wt, a) => a.max(1).values,
  min_dim_keepdim: (wt, a) => a.min(0, true).values,
  kthvalue: (wt, a) => a.kthvalue(2, 1).values,
  sort: (wt, a) => a.sort(1, true).values,
  sort_stable: (wt, a) => a.sort({ stable: true, dim: 0 }).values,
  topk: (wt, a) => a.topk(2).values,
  msort: (wt, a) => a.msort(),
  cat: (wt, a, b) => wt.cat([a, b], 1),
  cat_no_grad_first: (wt, a, b) => wt.cat([a, b], 0),
  stack: (wt, a, b) => wt.stack([a, b], 1),
  hstack: (wt, a, b) => wt.hstack([a, b]),
  vstack: (wt, a, b) => wt.vstack([a, b]),
  split: (wt, a) => a.split(2, 1)[1],
  unbind: (wt, a) => a.unbind(0)[2],
};
const I = (wt, v) => wt.tensor(v, { dtype: 'int64' });
// Where weft's last node differs from 1.13's (which records its
// decompositions' internal ops): reshape is one view node, matmul ends in
// its reshape.
const NAME = { reshape_transposed: 'ViewBackward0', flatten: 'ViewBackward0', matmul: 'ViewBackward0' };

function leaf(wt, spec) {
  const base = wt.tensor(Float64Array.from(spec.values), { dtype: spec.dtype === 'bool' ? 'float32' : spec.dtype });
  const shaped = base.reshape(spec.size);
  base.dispose();
  let t = shaped;
  if (spec.t) {
    t = shaped.t();
    shaped.dispose();
  }
  if (spec.dtype === 'bool') {
    const b = t.gt(0);
    t.dispose();
    return b;
  }
  return spec.requires_grad ? t.requiresGrad_() : t;
}

for (const variant of VARIANTS) {
  test(`${variant}: gradients of every formula match PyTorch 1.13`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    for (const c of FX.cases) wt.tidy(() => {
      const inputs = c.inputs.map((s) => leaf(wt, s));
      const out = CASES[c.name](wt, ...inputs);
      assert.ok(out.requiresGrad, c.name);
      const fn = out.gradFn;
      assert.equal(fn.name, NAME[c.name] ?? c.grad_fn, c.name);
      fn.dispose();
      const go = wt.tensor(Float64Array.from(c.grad_output.values), { dtype: out.dtype }).reshape(c.grad_output.size);
      const want = inputs.filter((t) => t.requiresGrad);
      const grads = wt.autograd.grad(out, want, { gradOutputs: go });
      let k = 0;
      c.grads.forEach((g, i) => {
        if (g === null) return;
        const got = grads[k++];
        assert.deepEqual(got.shape, inputs[i].shape, `${c.name} input ${i} shape`);
        assert.equal(got.dtype, inputs[i].dtype, `${c.name} input ${i} dtype`);
        const vals = got.contiguous().toArray().flat(Infinity);
        g.forEach((v, j) => assert.ok(close(vals[j], v, 2e-5), `${c.name} input ${i} [${j}]: ${vals[j]} vs ${v}`));
      });
    });
    assert.deepEqual(counts(wt), before);
  });
}

test('seed 004: backward() gives PyTorch t0.grad and t1.grad; nodes and edges', async () => {
  const wt = await init();
  const before = counts(wt);
  const p = FX.seed_program;
  wt.tidy(() => {
    const t0 = wt.tensor(p.t0, { requiresGrad: true }).reshape(2, 2);
    assert.equal(t0.isLeaf, false); // reshape of a leaf is not a leaf
    const l0 = wt.tensor([p.t0.slice(0, 2), p.t0.slice(2)], { requiresGrad: true });
    const l1 = wt.tensor([p.t1.slice(0, 2), p.t1.slice(2)], { requiresGrad: true });
    assert.ok(l0.isLeaf && l0.requiresGrad && l0.gradFn === null && l0.grad === null);
    const a = wt.mm(l0, l1);
    const b = a.add(l1);
    const c = b.add(l0);
    const d = c.sin();
    const e = d.mean();
    // a GradFn holds its node (and what the node saved) until dispose() or collection
    const eFn = e.gradFn;
    assert.equal(eFn.name, 'MeanBackward0');
    const dFn = d.gradFn;
    const [[next, nr]] = dFn.nextFunctions;
    assert.equal(next.name, 'AddBackward0');
    assert.equal(nr, 0);
    const aFn = a.gradFn;
    const mmEdges = aFn.nextFunctions;
    assert.deepEqual(mmEdges.map(([f]) => f.name), ['AccumulateGrad', 'AccumulateGrad']);
    const v = mmEdges[0][0].variable;
    assert.deepEqual(v.toArray(), l0.toArray());
    for (const f of [eFn, dFn, next, aFn, ...mmEdges.map(([f]) => f)]) f.dispose();
    e.backward();
    l0.grad.toArray().flat().forEach((x, i) => assert.ok(close(x, p.t0_grad[i], 1e-6)));
    l1.grad.toArray().flat().forEach((x, i) => assert.ok(close(x, p.t1_grad[i], 1e-6)));
    assert.equal(a.grad, null);
    throwsWeft(() => e.backward(), 'InvalidArgument', /^Trying to backward through the graph a second time/);
  });
  assert.deepEqual(counts(wt), before);
});

test('second derivatives through createGraph match PyTorch', async () => {
  const wt = await init();
  const fns = { tanh: (x) => x.tanh(), sigmoid: (x) => x.sigmoid(), exp: (x) => x.exp(), sin: (x) => x.sin(),
    cube: (x) => x.mul(x).mul(x) };
  const before = counts(wt);
  for (const [name, r] of Object.entries(FX.second_order)) {
    wt.tidy(() => {
      const x = wt.tensor(r.x, { dtype: 'float64', requiresGrad: true });
      const [g] = wt.autograd.grad(fns[name](x).sum(), [x], { createGraph: true });
      assert.ok(g.requiresGrad, name);
      g.toArray().forEach((v, i) => assert.ok(close(v, r.grad[i], 1e-12), `${name} grad`));
      const [gg] = wt.autograd.grad(g.sum(), [x]);
      gg.toArray().forEach((v, i) => assert.ok(close(v, r.grad2[i], 1e-12), `${name} grad2: ${v} vs ${r.grad2[i]}`));
      assert.equal(x.grad, null); // grad() leaves .grad alone
    });
  }
  assert.deepEqual(counts(wt), before);
});

test('engine rules: accumulation, retainGraph, retainGrad, errors', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.tensor([1, 2, 3], { requiresGrad: true });
    const y = x.mul(x).add(x); // x reached three times
    y.retainGrad();
    assert.equal(y.retainsGrad, true);
    const s = y.sum();
    s.backward(undefined, { retainGraph: true });
    assert.deepEqual(x.grad.toArray(), [3, 5, 7]);
    assert.deepEqual(y.grad.toArray(), [1, 1, 1]);
    s.backward();
    assert.deepEqual(x.grad.toArray(), [6, 10, 14]); // accumulated
    x.grad = null;
    assert.equal(x.grad, null);
    throwsWeft(() => y.backward(), 'InvalidArgument', /^grad can be implicitly created only for scalar outputs$/);
    throwsWeft(() => y.backward(wt.ones(2)), 'InvalidArgument',
      /^Mismatch in shape: grad_output\[0\] has a shape of \[2\] and output\[0\] has a shape of \[3\]\.$/);
    throwsWeft(() => wt.ones(3).sum().backward(), 'InvalidArgument',
      /^element 0 of tensors does not require grad and does not have a grad_fn$/);
    throwsWeft(() => x.mul_(2), 'InvalidArgument',
      /^a leaf Variable that requires grad is being used in an in-place operation\.$/);
    throwsWeft(() => wt.floorDivide(x, x), 'InvalidArgument', /^the derivative for 'floor_divide' is not implemented\.$/);
    throwsWeft(() => wt.tensor([1, 2], { dtype: 'int64' }).requiresGrad_(), 'InvalidArgument',
      /^only Tensors of floating point dtype can require gradients/);
    throwsWeft(() => { y.requiresGrad = false; }, 'InvalidArgument', /^you can only change requiresGrad flags of leaf/);
    const z = wt.tensor([1, 2, 3], { requiresGrad: true });
    throwsWeft(() => wt.autograd.grad(x.sum(), [z]), 'InvalidArgument', /appears to not have been used in the graph/);
    assert.deepEqual(wt.autograd.grad(x.mul(2).sum(), [x, z], { allowUnused: true }).map((t) => t && t.toArray()),
      [[2, 2, 2], null]);
    throwsWeft(() => x.backward(null, { retain: true }), 'TypeError', /unknown option 'retain'/);
  });
  assert.deepEqual(counts(wt), before);
});

test('version counters, views, noGrad, detach', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.tensor([0.5, 1, 1.5], { requiresGrad: true });
    const w = wt.tensor([1, 2, 3]);
    const y = x.mul(w); // saves w
    const v0 = w._version;
    const view = w.narrow(0, 0, 2);
    view.add_(1); // a view shares its base's counter
    assert.equal(w._version, v0 + 1);
    throwsWeft(() => y.sum().backward(), 'InvalidArgument',
      /^one of the variables needed for gradient computation has been modified by an inplace operation: \[float32 \[3\]\] is at version \d+; expected version \d+ instead/);
    // noGrad: nothing recorded, and in-place updates of leaves are allowed
    const r = wt.noGrad(() => {
      assert.equal(wt.isGradEnabled(), false);
      x.sub_(wt.tensor([0.5, 0.5, 0.5]));
      return x.mul(2);
    });
    assert.equal(wt.isGradEnabled(), true);
    assert.equal(r.requiresGrad, false);
    assert.deepEqual(x.toArray(), [0, 0.5, 1]);
    assert.equal(wt.enableGrad(() => x.mul(2)).requiresGrad, true);
    const d = x.mul(3).detach();
    assert.ok(d.isLeaf && !d.requiresGrad);
    const e = x.mul(3);
    assert.equal(e.detach_(), e);
    assert.ok(e.isLeaf && !e.requiresGrad && e.gradFn === null);
  });
  assert.deepEqual(counts(wt), before);
});

// Issue 15: { requiresGrad: true } on every factory, the *Like ones and
// linspace/logspace/eye included; the integer factories refuse it by dtype.
test('every factory takes { requiresGrad }', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.ones(2, 3);
    const made = {
      zerosLike: wt.zerosLike(x, { requiresGrad: true }),
      onesLike: wt.onesLike(x, { requiresGrad: true }),
      fullLike: wt.fullLike(x, 3, { requiresGrad: true }),
      randLike: wt.randLike(x, { requiresGrad: true }),
      randnLike: wt.randnLike(x, { requiresGrad: true }),
      emptyLike: wt.emptyLike(x, { requiresGrad: true }),
      linspace: wt.linspace(0, 1, 3, { requiresGrad: true }),
      logspace: wt.logspace(0, 1, 3, 10, { requiresGrad: true }),
      eye: wt.eye(2, { requiresGrad: true }),
      eyeM: wt.eye(2, 3, { requiresGrad: true }),
      randintFloat: wt.randint(10, [3], { dtype: 'float32', requiresGrad: true }),
    };
    for (const [name, t] of Object.entries(made)) {
      assert.ok(t.requiresGrad && t.isLeaf && t.gradFn === null, name);
    }
    assert.equal(wt.zerosLike(x, { requiresGrad: false }).requiresGrad, false);
    made.fullLike.mul(2).sum().backward();
    assert.deepEqual(made.fullLike.grad.toArray(), [[2, 2, 2], [2, 2, 2]]);
    throwsWeft(() => wt.randint(10, [3], { requiresGrad: true }), 'InvalidArgument',
      /^only Tensors of floating point dtype can require gradients \(got int64\)/);
    throwsWeft(() => wt.randperm(3, { requiresGrad: true }), 'InvalidArgument', /floating point dtype/);
    throwsWeft(() => wt.fullLike(wt.ones(2, { dtype: 'int32' }), 1, { requiresGrad: true }), 'InvalidArgument',
      /floating point dtype/);
  });
  assert.deepEqual(counts(wt), before);
});

// PyTorch's backward(inputs=): only those tensors' .grad (values from PyTorch 1.13)
test('backward(gradient, { inputs }) accumulates into those tensors only', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const a = wt.tensor([1, 2], { requiresGrad: true }), b = wt.tensor([3, 4], { requiresGrad: true });
    const c = wt.tensor([5], { requiresGrad: true });
    a.mul(b).sum().backward(null, { inputs: [a] });
    assert.deepEqual([a.grad.toArray(), b.grad], [[3, 4], null]);
    a.mul(b).sum().backward(null, { inputs: [a, c] }); // accumulates; c unused keeps null
    assert.deepEqual([a.grad.toArray(), c.grad], [[6, 8], null]);
    const m = a.mul(2);
    m.mul(b).sum().backward(null, { inputs: m }); // a non-leaf gets a .grad; a is untouched
    assert.deepEqual([m.grad.toArray(), a.grad.toArray()], [[3, 4], [6, 8]]);
    a.grad = null;
    a.pow(2).sum().backward(null, { inputs: [a], createGraph: true });
    a.pow(2).sum().backward(null, { inputs: [a], createGraph: true });
    assert.deepEqual(a.grad.toArray(), [4, 8]);
    const fn = a.grad.gradFn;
    assert.equal(fn.name, 'AddBackward0'); // the sum stays differentiable
    fn.dispose(); // a GradFn holds its node until disposed
    a.grad = null;
    throwsWeft(() => a.mul(b).sum().backward(null, { inputs: [] }), 'InvalidArgument',
      /^'inputs' argument to backward\(\) cannot be empty\.$/);
    throwsWeft(() => a.mul(b).sum().backward(null, { inputs: [wt.ones(1)] }), 'InvalidArgument',
      /^can't retainGrad on Tensor that has requiresGrad=false$/);
    throwsWeft(() => a.mul(b).sum().backward(null, { inputs: 3 }), 'TypeError', /option 'inputs' must be a Tensor/);
  });
  assert.deepEqual(counts(wt), before);
});

test('a training step frees its graph: no leak after backward', async () => {
  const wt = await init();
  wt.manualSeed(1);
  const w = wt.randn(4, 3).requiresGrad_();
  const x = wt.randn(8, 4);
  const before = counts(wt);
  for (let step = 0; step < 3; step++) {
    wt.tidy(() => {
      const loss = x.mm(w).relu().pow(2).mean();
      loss.backward();
      wt.noGrad(() => w.sub_(w.grad.mul(0.1)));
      w.grad = null;
    });
  }
  assert.deepEqual(counts(wt), before);
  for (const t of [w, x]) t.dispose();
});

// Worker mode's autograd and optimizers: tests/js/worker-autograd.test.mjs

test('gradFn.id: two wrappers of one node share it, distinct nodes of one name differ', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    // seed 004's c = b + t0: t0's AccumulateGrad is reached from c's node and from a's (mm)
    const t0 = wt.tensor([[1, 2], [3, 4]], { requiresGrad: true });
    const t1 = wt.tensor([[5, 6], [7, 8]], { requiresGrad: true });
    const a = wt.mm(t0, t1);
    const b = a.add(t1);
    const c = b.add(t0);
    const [cFn, bFn, aFn, aFn2] = [c.gradFn, b.gradFn, a.gradFn, a.gradFn];
    assert.equal(typeof cFn.id, 'number');
    assert.equal(aFn.id, aFn2.id);
    assert.equal(cFn.name, bFn.name);
    assert.notEqual(cFn.id, bFn.id);
    const [[viaB], [accFromC]] = cFn.nextFunctions;
    const [[accFromA], [acc1]] = aFn.nextFunctions;
    assert.equal(viaB.id, bFn.id);
    assert.equal(accFromC.id, accFromA.id); // one AccumulateGrad per leaf
    assert.notEqual(acc1.id, accFromA.id);
    for (const f of [cFn, bFn, aFn, aFn2, viaB, accFromC, accFromA, acc1]) f.dispose();
    assert.throws(() => cFn.id, /node has been disposed/);
  });
  assert.deepEqual(counts(wt), before);
});
