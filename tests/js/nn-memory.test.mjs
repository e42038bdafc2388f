// The memory rule of wt.nn (js/nn/memory.js, docs/guide.md "Memory"): a training
// loop written as in PyTorch, with modules, a loss and an optimizer and no
// tidy or dispose, runs 10^4 steps with wt.memory() flat; a module call frees
// its intermediates; a tensor made during a step lives through the next one
// and is released at the optimizer's step() after next, unless kept; what was
// made before the loop, parameters, buffers and module attributes are never
// released; a released tensor used again says why and names wt.keep; an
// optimizer over plain tensors (no wt.nn Parameters) changes nothing; the
// rule pins nothing the garbage collector could free.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { VARIANTS, init, throwsWeft } from './helpers.mjs';

function pytorchLoop(wt, steps, optName = 'SGD', sample = 1000) {
  const nn = wt.nn;
  wt.manualSeed(0);
  const model = new nn.Sequential(new nn.Linear(8, 16), new nn.ReLU(), new nn.Linear(16, 3));
  const X = wt.randn(32, 8);
  const Y = wt.randint(0, 3, [32]);
  const lossFn = new nn.CrossEntropyLoss();
  const opt = optName === 'SGD' ? new wt.optim.SGD(model.parameters(), { lr: 0.05, momentum: 0.9 })
    : new wt.optim.Adam(model.parameters(), { lr: 1e-2 });
  const seen = [];
  let first = null;
  let last = null;
  for (let step = 0; step < steps; step++) {
    opt.zeroGrad();
    const xb = X.narrow(0, (step % 4) * 8, 8);
    const yb = Y.narrow(0, (step % 4) * 8, 8);
    const out = model(xb);
    const loss = lossFn(out, yb);
    loss.backward();
    opt.step();
    // used after step(), as PyTorch loops log accuracy
    const acc = out.argmax(1).eq(yb).float().mean().item();
    if (step === 0) first = loss.item();
    last = loss.item();
    if (step % sample === 0 || step === steps - 1) seen.push({ step, acc, ...pick(wt.memory()) });
  }
  return { seen, first, last, model, opt, X, Y, lossFn };
}

const pick = ({ tensors, storages, bytesInUse }) => ({ tensors, storages, bytesInUse });

test('a PyTorch-style training loop runs 10^4 steps with wt.memory() flat', async () => {
  const wt = await init({ variant: 'simd' });
  const base = pick(wt.memory());
  const { seen, first, last, model, opt, X, Y } = pytorchLoop(wt, 10000);
  const after = seen.slice(1); // from step 1000 on, the same counts
  for (const s of after) {
    assert.deepEqual([s.tensors, s.storages, s.bytesInUse], [after[0].tensors, after[0].storages, after[0].bytesInUse],
      `step ${s.step}: ${JSON.stringify(s)} vs ${JSON.stringify(after[0])}`);
  }
  assert.ok(last < first / 10, `it trains: loss ${first} -> ${last}`);
  assert.ok(after[0].tensors - base.tensors < 60, `bounded: ${after[0].tensors - base.tensors} tensors over the baseline`);
  opt.dispose();
  model.dispose();
  X.dispose();
  Y.dispose();
});

for (const variant of VARIANTS) {
  test(`${variant}: the step rule with Adam, module calls and what stays alive`, async () => {
    const wt = await init({ variant });
    const nn = wt.nn;
    const { seen, model, opt, X, Y } = pytorchLoop(wt, 300, 'Adam', 100);
    const tail = seen.slice(1).map((s) => s.tensors);
    assert.equal(new Set(tail).size, 1, `flat: ${tail}`);
    // made before the loop, still usable; parameters too
    assert.deepEqual(X.shape, [32, 8]);
    assert.equal(model.parameters().length, 4);

    // a tensor made in step k lives through step k+1, released at step k+2
    const x = wt.keep(X.narrow(0, 0, 8)); // used across the steps below
    const held = model(x);
    const kept = wt.keep(model(x).detach());
    const best = wt.keep(model.stateDict()); // every tensor of the object
    const sum = () => model(x).sum().backward();
    sum(); opt.step();
    assert.deepEqual(held.shape, [8, 3], 'alive after one step');
    sum(); opt.step();
    throwsWeft(() => held.shape, 'InvalidArgument', /tensor has been disposed \(made outside wt\.tidy during Adam step \d+ and released by wt\.nn's step rule at step \d+; call wt\.keep\(t\)/);
    assert.deepEqual(kept.shape, [8, 3], 'kept');
    assert.deepEqual(best['0.weight'].shape, [16, 8], 'a kept state dict');
    kept.dispose();
    for (const t of Object.values(best)) t.dispose();

    // a module call frees what forward made and did not return; a tensor
    // stored on a module attribute survives
    class Probe extends nn.Module {
      constructor() { super(); this.fc = new nn.Linear(8, 3); this.made = []; }
      forward(v) {
        const h = this.fc(v).relu();
        this.made.push(h.mul(2));
        this.last = h.add(1);
        return h.sum(1);
      }
    }
    const before = wt.memory().tensors;
    const probe = new Probe();
    const y = wt.noGrad(() => wt.tidy(() => wt.keep(probe(x))));
    assert.equal(y.shape[0], 8);
    assert.ok(probe.made[0].isDisposed, 'an intermediate forward made and kept only in a JS array is freed');
    assert.deepEqual(probe.last.shape, [8, 3], 'an attribute keeps its tensor');
    probe.last.dispose();
    y.dispose();
    probe.dispose();
    assert.equal(wt.memory().tensors, before);

    // a second optimizer: the first one's tensors wait for the first one
    const w = new nn.Parameter(wt.randn([3]));
    const opt2 = new wt.optim.SGD([w], { lr: 0.1 });
    const fromOpt1 = X.narrow(0, 1, 1); // made while Adam was the last to step
    for (let i = 0; i < 3; i++) {
      w.mul(2).sum().backward();
      opt2.step();
    }
    assert.deepEqual(fromOpt1.shape, [1, 8], "another optimizer's steps leave it alone");
    assert.ok(!w.isDisposed, "an optimizer's parameters are never released");
    opt2.dispose();
    opt.dispose();
    // a disposed optimizer releases nothing: what it tracked is the caller's
    assert.deepEqual(fromOpt1.shape, [1, 8]);
    for (const t of [fromOpt1, w, x, X, Y]) t.dispose();
    model.dispose();

    // an optimizer over plain tensors (not wt.nn Parameters) leaves memory to
    // tidy and dispose, as before wt.nn: nothing it did not make is released
    const v = wt.randn([3], { requiresGrad: true });
    const opt3 = new wt.optim.SGD([v], { lr: 0.1 });
    const made = [];
    for (let i = 0; i < 4; i++) {
      made.push(v.mul(3));
      wt.tidy(() => v.mul(2).sum().backward());
      opt3.step();
    }
    assert.ok(made.every((t) => !t.isDisposed));
    opt3.dispose();
    for (const t of [...made, v]) t.dispose();
  });
}

// after the last step, what is made outside tidy and dropped is still
// collected (run under --expose-gc)
test('the step sets hold tensors weakly: the garbage collector still frees dropped ones', async () => {
  const script = fileURLToPath(new URL('./nn-gc-child.mjs', import.meta.url));
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', script], { timeout: 60000 }, (err, stdout, stderr) =>
      (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
  const r = JSON.parse(out);
  assert.ok(r.held >= r.before + 300, `made: ${JSON.stringify(r)}`);
  assert.equal(r.after, r.before, `collected back to the baseline: ${JSON.stringify(r)}`);
});
