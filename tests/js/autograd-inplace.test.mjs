// In-place autograd (issue 15) through the JS API: every program of
// tests/fixtures/autograd_inplace.json (PyTorch 1.13's gradients and
// grad_fn names for writes to non-leaf tensors and to views, made by
// tests/fixtures/gen_autograd_inplace_fixtures.py, whose PROGRAMS this table
// mirrors), retainGrad across a write, PyTorch's refusals, wt.trace of a
// backward pass, and no leak once the graph is released.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, counts, close, throwsWeft, VARIANTS } from './helpers.mjs';

const FX = JSON.parse(readFileSync(new URL('../fixtures/autograd_inplace.json', import.meta.url), 'utf8'));

const name = (t) => {
  const fn = t.gradFn;
  const n = fn.name;
  fn.dispose();
  return n;
};

const PROGRAMS = {
  relu_nonleaf: (wt, a, b, seen) => {
    const x = a.sub(1);
    seen.push(name(x));
    x.relu_();
    seen.push(name(x));
    const fn = x.gradFn;
    const [[next]] = fn.nextFunctions;
    seen.push(next.name);
    next.dispose();
    fn.dispose();
    return x.mul(b).sum();
  },
  chain: (wt, a, b, seen) => {
    const x = a.mul(1);
    for (const step of [() => x.add_(b), () => x.mul_(2), () => x.mul_(b), () => x.sub_(b, { alpha: 0.5 }),
      () => x.div_(b.abs().add(1)), () => x.sigmoid_()]) {
      step();
      seen.push(name(x));
    }
    return x.sum();
  },
  saved_self: (wt, a, b, seen) => {
    const x = a.mul(1);
    x.sin_();
    x.log_();
    x.pow_(2);
    x.tanh_();
    seen.push(name(x));
    return x.mul(b).sum();
  },
  copy_broadcast: (wt, a, b, seen) => {
    const x = a.mul(2);
    x.copy_(b.select(0, 0));
    seen.push(name(x));
    return x.mul(a).sum();
  },
  fill_zero: (wt, a, b, seen) => {
    const x = a.mul(2);
    x.fill_(3);
    seen.push(name(x));
    const y = b.mul(1);
    y.zero_();
    seen.push(name(y));
    const z = a.mul(1);
    z.fill_(b.sum());
    seen.push(name(z));
    return x.mul(a).sum().add(y.add(b).sum()).add(z.mul(a).sum());
  },
  view_select: (wt, a, b, seen) => {
    const base = a.clone();
    const v = base.select(0, 0);
    seen.push(name(v));
    v.mul_(2);
    seen.push(name(v), name(base));
    return base.mul(b).sum().add(v.mul(v).sum());
  },
  view_narrow_copy: (wt, a, b, seen) => {
    const base = a.mul(1);
    const v = base.narrow(0, 1, 2);
    v.copy_(b.narrow(0, 0, 2).mul(3));
    seen.push(name(v), name(base));
    return base.mul(base).sum();
  },
  view_transpose: (wt, a, b, seen) => {
    const base = a.clone();
    const t = base.t();
    t.mul_(b.t());
    seen.push(name(t), name(base));
    return base.mul(base).sum().add(t.mul(2).sum());
  },
  view_slice_step: (wt, a, b, seen) => {
    const base = a.clone();
    const s = base.slice(1, 1, null, 2);
    s.add_(b.slice(1, 0, 2));
    s.relu_();
    seen.push(name(s), name(base));
    return base.mul(b).sum();
  },
  base_after_view: (wt, a, b, seen) => {
    const base = a.mul(1);
    const v = base.slice(0, 0, 2);
    seen.push(name(v));
    base.mul_(b);
    seen.push(name(v), name(base));
    return v.mul(3).sum().add(base.sum());
  },
  view_of_view: (wt, a, b, seen) => {
    const base = a.clone();
    const v = base.select(0, 1);
    const w = v.slice(0, 1, 3);
    w.mul_(3);
    seen.push(name(w), name(v), name(base));
    return base.mul(b).sum();
  },
  view_no_grad_base: (wt, a, b, seen) => {
    const base = wt.zeros(3, 4);
    const v = base.select(0, 1);
    v.add_(a.select(0, 0));
    seen.push(name(v), name(base));
    return base.mul(b).sum();
  },
  two_writes_one_view: (wt, a, b, seen) => {
    const base = a.clone();
    const v = base.narrow(1, 0, 2);
    v.mul_(b.narrow(1, 0, 2));
    v.exp_();
    seen.push(name(v), name(base));
    return base.mul(2).sum().add(v.sum());
  },
  view_diagonal: (wt, a, b, seen) => {
    const base = a.clone();
    const d = base.diagonal();
    seen.push(name(d));
    d.exp_();
    seen.push(name(d), name(base));
    const off = a.mul(b).diagonal(1, 1, 0);
    seen.push(name(off));
    return base.mul(b).sum().add(d.sum()).add(off.mul(2).sum());
  },
};

// 3x4 leaves made whole (not views of a flat tensor: a write to those is a view's write)
const rows = (v) => [v.slice(0, 4), v.slice(4, 8), v.slice(8, 12)];
const leaves = (wt, c) => [c.a, c.b].map((v) => wt.tensor(rows(v), { dtype: 'float32' }).requiresGrad_());

function sameValues(got, want, what) {
  const vals = got.contiguous().toArray().flat(Infinity);
  assert.equal(vals.length, want.length, what);
  want.forEach((w, j) => assert.ok(close(vals[j], w, 2e-5), `${what} [${j}]: ${vals[j]} vs ${w}`));
}

for (const variant of VARIANTS) {
  test(`${variant}: in-place programs give PyTorch 1.13's gradients and grad_fn names`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    for (const c of FX.cases) {
      const [a, b] = leaves(wt, c);
      wt.tidy(() => {
        const seen = [];
        PROGRAMS[c.name](wt, a, b, seen).backward();
        assert.deepEqual(seen, c.names, c.name);
      });
      wt.tidy(() => {
        sameValues(a.grad, c.a_grad, `${c.name} a.grad`);
        sameValues(b.grad, c.b_grad, `${c.name} b.grad`);
      });
      a.dispose();
      b.dispose();
    }
    // a retained gradient follows the tensor across the write
    const [a, b] = leaves(wt, FX.retain);
    wt.tidy(() => {
      const x = a.mul(1);
      x.retainGrad();
      x.mul_(2);
      x.mul(b).sum().backward();
      assert.equal(x.retainsGrad, true);
      sameValues(x.grad, FX.retain.grad, 'retained x.grad');
    });
    a.dispose();
    b.dispose();
    assert.deepEqual(counts(wt), before);
  });
}

// The JS wording of PyTorch's messages (option and mode names).
const jsWords = (m) => m.replace('torch.FloatTensor', 'float32').replace('both inside the no_grad block',
  'both inside the noGrad block');
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const ERRORS = {
  leaf: (wt, a) => a.mul_(2),
  view_of_leaf: (wt, a) => a.select(0, 0).mul_(2),
  no_grad_view: (wt, a) => {
    const x = a.mul(1);
    const v = wt.noGrad(() => x.slice(0, 0, 2));
    v.mul_(2);
  },
  saved_modified: (wt, a) => {
    const x = a.exp();
    x.mul(1);
    x.mul_(2);
    x.sum().backward();
  },
  detach_view: (wt, a) => a.mul(1).select(0, 0).detach_(),
};

test('in-place refusals: PyTorch 1.13 messages, nothing left behind', async () => {
  const wt = await init({ variant: 'simd' });
  const before = counts(wt);
  for (const e of FX.errors) {
    const [a, b] = leaves(wt, FX.retain);
    // detach_ keeps only PyTorch's first two sentences (the rest is about DDP)
    const want = e.name === 'detach_view' ? e.message.split(' If you are')[0] : jsWords(e.message);
    wt.tidy(() => throwsWeft(() => ERRORS[e.name](wt, a), 'InvalidArgument', new RegExp(`^${escape(want)}`)));
    a.dispose();
    b.dispose();
  }
  // under noGrad a leaf is written in place (how optimizers update)
  const [a, b] = leaves(wt, FX.retain);
  wt.noGrad(() => a.mul_(2));
  assert.equal(a.isLeaf, true);
  a.dispose();
  b.dispose();
  assert.deepEqual(counts(wt), before);
});

test('wt.trace of a backward pass: the nodes in execution order, their ops nested under them', async () => {
  const wt = await init({ variant: 'simd' });
  const before = counts(wt);
  const a = wt.tensor([0.5, -1, 2]).requiresGrad_();
  wt.tidy(() => {
    const x = a.mul(2);
    x.sin_();
    const loss = x.sum();
    const entries = wt.trace(() => loss.backward());
    const nodes = entries.filter((e) => e.node);
    assert.deepEqual(nodes.map((e) => e.op), ['SumBackward0', 'SinBackward0', 'MulBackward0', 'AccumulateGrad']);
    assert.ok(nodes.every((e) => e.depth === 0 && e.key === 'Autograd' && !e.redispatch));
    // SinBackward0's formula (grad * cos(self)) dispatches cos under it
    const at = entries.indexOf(nodes[1]);
    const cos = entries.findIndex((e, i) => i > at && e.op === 'aten::cos');
    assert.ok(cos > at && cos < entries.indexOf(nodes[2]) && entries[cos].depth > 0);
    assert.ok(entries.filter((e) => !e.node).every((e) => e.node === false));
  });
  a.dispose();
  assert.deepEqual(counts(wt), before);
});
