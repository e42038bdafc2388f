// wt.optim (issue 15): SGD (momentum, dampening, nesterov, weight decay,
// maximize), Adam (betas, eps, weight decay, amsgrad) and AdamW against
// PyTorch 1.13 (tests/fixtures/optim.json, made by
// tests/fixtures/gen_optim_fixtures.py): the same least-squares problem
// trained for a few steps, the parameters after every step within float32
// tolerance; zeroGrad with and without setToNone; the parameters stay the
// same leaves; nothing leaks once the optimizer is disposed; bad options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, counts, throwsWeft } from './helpers.mjs';

const F = JSON.parse(readFileSync(new URL('../fixtures/optim.json', import.meta.url), 'utf8'));

const rows = (a, n) => Array.from({ length: a.length / n }, (_, i) => a.slice(i * n, i * n + n));

function train(wt, run, stepInTidy = false) {
  const X = wt.tensor(rows(F.X, 3));
  const Y = wt.tensor(rows(F.Y, 4));
  const W = wt.tensor(rows(F.W0, 4), { requiresGrad: true });
  const b = wt.tensor(F.b0, { requiresGrad: true });
  const opt = new wt.optim[run.optimizer]([W, b], run.options);
  const worst = [];
  run.steps.forEach((want, i) => {
    opt.zeroGrad({ setToNone: run.setToNone });
    wt.tidy(() => {
      const d = X.matmul(W).add(b).sub(Y);
      d.mul(d).mean().backward();
    });
    // a whole training step inside tidy: the optimizer's state must survive it
    if (stepInTidy) wt.tidy(() => opt.step());
    else opt.step();
    const err = (got, w) => Math.max(...got.flat().map((v, j) => Math.abs(v - w[j]) / (1 + Math.abs(w[j]))));
    worst.push(Math.max(err(W.toArray(), want.W), err(b.toArray(), want.b)));
    assert.ok(W.isLeaf && b.isLeaf, `step ${i}: parameters stay leaves`);
  });
  opt.zeroGrad({ setToNone: true });
  opt.dispose();
  for (const t of [X, Y, W, b]) t.dispose();
  return Math.max(...worst);
}

test('optimizers match PyTorch 1.13 step by step', async () => {
  const wt = await init();
  const before = counts(wt);
  for (const run of F.runs) {
    for (const inTidy of [false, true]) {
      const e = train(wt, run, inTidy);
      assert.ok(e < 2e-5, `${run.optimizer} ${JSON.stringify(run.options)}${inTidy ? ' (step in tidy)' : ''}: relative error ${e}`);
    }
  }
  assert.deepEqual(counts(wt), before);
});

test('optimizers: zeroGrad keeps zeroed grads by default, bad input', async () => {
  const wt = await init();
  const p = wt.tensor([1, 2], { requiresGrad: true });
  wt.tidy(() => p.mul(p).sum().backward());
  const opt = new wt.optim.SGD([p], { lr: 0.5 });
  opt.zeroGrad();
  const g = p.grad;
  assert.deepEqual(g.toArray(), [0, 0]);
  g.dispose();
  opt.step(); // a zero gradient: no change
  assert.deepEqual(p.toArray(), [1, 2]);
  throwsWeft(() => new wt.optim.SGD([], { lr: 1 }), 'InvalidArgument', /empty parameter list/);
  throwsWeft(() => new wt.optim.SGD(p, { lr: 1 }), 'TypeError', /array of Tensors/);
  throwsWeft(() => new wt.optim.Adam([p], { lr: -1 }), 'InvalidArgument', /Invalid learning rate: -1/);
  throwsWeft(() => new wt.optim.Adam([p], { betas: [1, 0.9] }), 'InvalidArgument', /Invalid beta parameter at index 0/);
  throwsWeft(() => new wt.optim.SGD([p], { lr: 1, nesterov: true }), 'InvalidArgument', /Nesterov/);
  throwsWeft(() => new wt.optim.SGD([p], { learningRate: 1 }), 'InvalidArgument', /unknown option 'learningRate'/);
  const q = p.mul(2);
  throwsWeft(() => new wt.optim.SGD([q]), 'InvalidArgument', /non-leaf/);
  // PyTorch's checks and wording (camelCase names), and option types
  throwsWeft(() => new wt.optim.SGD([p]), 'InvalidArgument',
    /^SGD: parameter group didn't specify a value of required optimization parameter lr/);
  throwsWeft(() => new wt.optim.SGD([p], { lr: 0.1, momentum: -1 }), 'InvalidArgument', /^SGD: Invalid momentum value: -1$/);
  throwsWeft(() => new wt.optim.SGD([p], { lr: 0.1, weightDecay: -1 }), 'InvalidArgument',
    /^SGD: Invalid weightDecay value: -1$/);
  throwsWeft(() => new wt.optim.Adam([p], { eps: -1 }), 'InvalidArgument', /^Adam: Invalid epsilon value: -1$/);
  throwsWeft(() => new wt.optim.SGD([p], { lr: '0.1' }), 'TypeError', /^SGD: option 'lr' must be a number, not string$/);
  throwsWeft(() => new wt.optim.Adam([p], { betas: 0.9 }), 'TypeError', /option 'betas' must be an array of two numbers/);
  throwsWeft(() => new wt.optim.Adam([p], { betas: [0.9] }), 'TypeError', /option 'betas' must be an array of two numbers/);
  throwsWeft(() => new wt.optim.SGD([p], { lr: 0.1, momentum: 0.9, nesterov: 1 }), 'TypeError',
    /^SGD: option 'nesterov' must be a boolean, not number$/);
  throwsWeft(() => new wt.optim.AdamW([p], { amsgrad: 'yes' }), 'TypeError', /option 'amsgrad' must be a boolean/);
  opt.zeroGrad({ setToNone: true });
  assert.equal(p.grad, null);
  for (const t of [p, q]) t.dispose();
});
