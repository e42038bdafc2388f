// t.registerHook (issue 23) against PyTorch 1.13 (tests/fixtures/hooks.json, made
// by tests/fixtures/gen_hooks_fixtures.py): each scenario is written again here
// with the same hooks; what every hook saw (in call order), the gradients and
// the errors must be PyTorch's. Also: nothing leaks (hooks that throw, removed
// hooks, hooks freed with their graph), and hooks that run backward themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, counts, throwsWeft, close, VARIANTS } from './helpers.mjs';

const F = JSON.parse(readFileSync(new URL('../fixtures/hooks.json', import.meta.url), 'utf8'));

// the scenarios of gen_hooks_fixtures.py, in JS (rec(name, fn) logs what a hook saw)
const SCENARIOS = {
  leaf_replace(wt, rec, leaf) {
    const x = leaf();
    x.registerHook(rec('double', (g) => g.mul(2)));
    x.mul(x).sum().backward();
    return { x };
  },
  leaf_order(wt, rec, leaf) {
    const x = leaf();
    x.registerHook(rec('plus1', (g) => g.add(1)));
    x.registerHook(rec('look'));
    x.registerHook(rec('times3', (g) => g.mul(3)));
    x.mul(x).sum().add(x.mul(4).sum()).backward();
    return { x };
  },
  leaf_accumulates(wt, rec, leaf) {
    const x = leaf();
    x.registerHook(rec('neg', (g) => g.neg()));
    x.mul(x).sum().backward();
    x.mul(3).sum().backward();
    return { x };
  },
  nonleaf(wt, rec, leaf) {
    const x = leaf();
    const y = x.mul(2);
    y.registerHook(rec('ten', (g) => g.mul(10)));
    y.mul(y).sum().backward();
    return { x };
  },
  retain_before_hook(wt, rec, leaf) {
    const x = leaf();
    const y = x.sin();
    y.retainGrad();
    y.registerHook(rec('ten', (g) => g.mul(10)));
    y.mul(y).sum().backward();
    return { x, y };
  },
  hook_before_retain(wt, rec, leaf) {
    const x = leaf();
    const y = x.sin();
    y.registerHook(rec('ten', (g) => g.mul(10)));
    y.retainGrad();
    y.registerHook(rec('plus1', (g) => g.add(1)));
    y.mul(y).sum().backward();
    return { x, y };
  },
  removed(wt, rec, leaf) {
    const x = leaf();
    const y = x.mul(3);
    const h1 = y.registerHook(rec('gone', (g) => g.mul(100)));
    y.registerHook(rec('kept', (g) => g.add(1)));
    const h2 = x.registerHook(rec('gone_leaf', (g) => g.mul(100)));
    h1.remove();
    h2.remove();
    h2.remove();
    y.mul(y).sum().backward();
    return { x };
  },
  chain(wt, rec, leaf) {
    const x = leaf();
    const a = x.mul(x);
    const b = a.exp();
    a.registerHook(rec('a_half', (g) => g.mul(0.5)));
    b.registerHook(rec('b_look'));
    x.registerHook(rec('x_look'));
    b.sum().backward();
    return { x };
  },
  multi_output(wt, rec) {
    const x = wt.tensor([0.5, -1.25, 2.0, 3.0], { requiresGrad: true });
    const [p, q] = x.split(2);
    q.registerHook(rec('q_neg', (g) => g.neg()));
    p.mul(p).sum().add(q.mul(q).mul(q).sum()).backward();
    return { x };
  },
  retain_graph_twice(wt, rec, leaf) {
    const x = leaf();
    const y = x.exp();
    y.registerHook(rec('y_look'));
    const z = y.sum();
    z.backward(null, { retainGraph: true });
    z.backward();
    return { x };
  },
  autograd_grad(wt, rec, leaf) {
    const x = leaf();
    const y = x.mul(2);
    y.registerHook(rec('y_ten', (g) => g.mul(10)));
    x.registerHook(rec('x_leaf'));
    const z = y.mul(y).sum();
    return { x, grad: wt.autograd.grad(z, [y, x]) };
  },
  backward_inputs(wt, rec, leaf) {
    const x = leaf();
    x.registerHook(rec('x_ten', (g) => g.mul(10)));
    const y = x.mul(3);
    y.registerHook(rec('y_half', (g) => g.mul(0.5)));
    y.mul(y).sum().backward(null, { inputs: [y] });
    x.mul(x).sum().backward(null, { inputs: [x] });
    return { x, y };
  },
  create_graph(wt, rec, leaf) {
    const x = leaf();
    const y = x.mul(3);
    y.registerHook(rec('y_twice', (g) => g.mul(2)));
    const [gx] = wt.autograd.grad(y.mul(y).sum(), x, { createGraph: true });
    x.registerHook(rec('x_ten', (g) => g.mul(10)));
    gx.mul(gx).sum().backward();
    return { x, grad: [gx] };
  },
  error_size(wt, rec, leaf) {
    const x = leaf();
    const y = x.mul(2);
    y.registerHook(rec('shrink', (g) => g.sum()));
    y.mul(y).sum().backward();
    return {};
  },
  error_dtype(wt, rec, leaf) {
    const x = leaf();
    x.registerHook(rec('widen', (g) => g.to('float64')));
    x.mul(x).sum().backward();
    return {};
  },
  error_throws(wt, rec, leaf) {
    const x = leaf();
    const w = wt.tensor([1, 2, 3], { requiresGrad: true });
    const y = x.mul(w);
    y.registerHook(rec('boom', () => { throw new RangeError('boom'); }));
    y.sum().backward();
    return {};
  },
  error_no_grad(wt, rec) {
    wt.zeros([2]).registerHook(rec('never'));
    return {};
  },
};

// PyTorch's wording in JS's: dtype names
const jsMessage = (m) => m.replace('torch.FloatTensor', 'float32').replace('torch.DoubleTensor', 'float64');

function replay(wt, name, want) {
  const calls = [];
  const rec = (hookName, fn = () => undefined) => {
    // named as in Python, for the messages that quote the hook's name
    const h = { [hookName]: (g) => { calls.push([hookName, g.toArray()]); return fn(g); } }[hookName];
    return h;
  };
  const leaf = () => wt.tensor(F.x0, { requiresGrad: true });
  const bad = [];
  const near = (what, got, exp) => {
    if (exp === null || got === null) {
      if (got !== exp) bad.push(`${what}: ${JSON.stringify(got)} != ${JSON.stringify(exp)}`);
      return;
    }
    if (got.length !== exp.length || got.some((v, i) => !close(v, exp[i], 1e-5))) {
      bad.push(`${what}: ${JSON.stringify(got)} != ${JSON.stringify(exp)}`);
    }
  };
  wt.tidy(() => {
    let out;
    try {
      out = SCENARIOS[name](wt, rec, leaf);
    } catch (e) {
      if (!want.error) throw e;
      if (e.message !== 'boom' && !e.message.endsWith(jsMessage(want.error))) bad.push(`error: ${e.message} != ${want.error}`);
      if (want.error === 'boom' && !(e instanceof RangeError)) bad.push(`the hook's own error is rethrown, got ${e}`);
      out = null;
    }
    if (want.error && out) bad.push(`no error, expected ${want.error}`);
    assert.equal(calls.length, want.calls.length, `${name}: hook calls ${JSON.stringify(calls)}`);
    calls.forEach(([n, g], i) => {
      if (n !== want.calls[i][0]) bad.push(`call ${i}: ${n} != ${want.calls[i][0]}`);
      near(`call ${i} (${n}) grad`, g, want.calls[i][1]);
    });
    for (const [k, v] of Object.entries(out ?? {})) {
      if (k === 'grad') {
        v.forEach((g, i) => near(`autograd.grad[${i}]`, g.toArray(), want.grad[i]));
        continue;
      }
      const g = v.grad;
      near(`${k}.grad`, g ? g.toArray() : null, want[k].grad);
      g?.dispose();
    }
  });
  return bad.map((b) => `${name}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`registerHook matches PyTorch 1.13 (${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const bad = Object.entries(F.scenarios).flatMap(([name, want]) => replay(wt, name, want));
    assert.deepEqual(bad, []);
    assert.deepEqual(counts(wt), before, 'hooks, graphs and the grads they saw are all freed');
  });
}

test('registerHook: errors, nested backward, hooks freed with their graph', async () => {
  const wt = await init();
  const before = counts(wt);
  const x = wt.tensor([1, 2], { requiresGrad: true });
  throwsWeft(() => x.registerHook(3), 'TypeError', /argument 'hook' must be a function, not a number/);
  wt.tidy(() => {
    const y = x.mul(3);
    y.registerHook(() => 'no');
    throwsWeft(() => y.sum().backward(), 'TypeError', /hook '<anonymous>' must return a Tensor, null or undefined, not a string/);
  });
  // a hook may run a backward of its own (reentrant, as PyTorch allows; grad mode is off in a hook)
  const w = wt.tensor([3], { requiresGrad: true });
  wt.tidy(() => {
    const y = x.mul(2);
    y.registerHook((g) => { wt.enableGrad(() => w.mul(w).sum().backward()); return g.add(1); });
    y.sum().backward();
  });
  wt.tidy(() => {
    assert.deepEqual(x.grad.toArray(), [4, 4]);
    assert.deepEqual(w.grad.toArray(), [6]);
  });
  // after an error the engine is usable again and nothing is left behind
  x.grad = null;
  wt.tidy(() => {
    const y = x.mul(2);
    const h = y.registerHook(() => { throw new Error('once'); });
    assert.throws(() => y.sum().backward(null, { retainGraph: true }), /once/);
    h.remove();
  });
  // the hook's tensor handle is disposed: remove() still stops it
  const calls = [];
  const t = x.mul(1);
  const h = t.registerHook(() => { calls.push(1); });
  const loss = t.sum();
  t.dispose();
  h.remove();
  loss.backward();
  loss.dispose();
  assert.equal(calls.length, 0);
  // a grad the hook keeps with wt.keep survives the hook's scope
  let kept = null;
  x.grad = null;
  const h2 = x.registerHook((g) => { kept = wt.keep(g.clone()); });
  wt.tidy(() => x.mul(x).sum().backward());
  h2.remove();
  assert.deepEqual(kept.toArray(), [2, 4]);
  for (const v of [x, w, kept]) v.dispose();
  assert.deepEqual(counts(wt), before);
});
