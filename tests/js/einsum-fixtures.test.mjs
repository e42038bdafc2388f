// wt.einsum against PyTorch 1.13: every case of tests/fixtures/einsum.json
// (made by tests/fixtures/gen_einsum_fixtures.py: ~50 equations in float32 and
// float64 — matmul, bmm, outer products, traces, diagonals, ellipses and
// their broadcasting, sums, 3- and 4-operand chains, size-1 and empty dims —
// and PyTorch's errors) on each wasm variant: dtype, shape, strides, values,
// the gradients of sum(result * gradOut), error messages, and no leaks. Then
// the calling forms and explain()'s plan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, throwsWeft, VARIANTS } from './helpers.mjs';

const fixture = loadFixture('einsum.json');
const TOL = { float32: 2e-5, float64: 1e-11 };
const flat = (t) => [t.toArray()].flat(Infinity).map(Number);

function compare(bad, what, got, want, tol) {
  const i = want.findIndex((w, j) => !close(got[j], w, tol));
  if (got.length !== want.length) bad.push(`${what}: ${got.length} values, want ${want.length}`);
  else if (i >= 0) bad.push(`${what}[${i}] ${got[i]}, want ${want[i]}`);
}

function replay(wt, c) {
  const made = [];
  const tensor = (s) => {
    const base = wt.tensor(s.storage, { dtype: s.dtype });
    const t = base.asStrided(s.size, s.stride, s.offset);
    made.push(base, t);
    return t;
  };
  const leaves = c.operands.map((s) => tensor(s).detach().requiresGrad_());
  made.push(...leaves);
  const bad = [];
  let r;
  try {
    r = c.path ? wt.einsum(c.equation, leaves, { path: c.path }) : wt.einsum(c.equation, ...leaves);
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (e.message !== c.expect.error) bad.push(`message "${e.message}", want "${c.expect.error}"`);
  }
  if (r && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
  if (r && c.expect.error === undefined) {
    const w = c.expect;
    if (r.dtype !== w.dtype) bad.push(`dtype ${r.dtype}, want ${w.dtype}`);
    else if (JSON.stringify(r.shape) !== JSON.stringify(w.size)) bad.push(`shape ${r.shape}, want ${w.size}`);
    else {
      if (JSON.stringify(r.stride()) !== JSON.stringify(w.stride)) bad.push(`strides ${r.stride()}, want ${w.stride}`);
      compare(bad, 'value', flat(r), w.values, TOL[w.dtype]);
      if (c.grad_out) {
        wt.tidy(() => r.mul(tensor(c.grad_out)).sum().backward());
        c.grads.forEach((want, i) => {
          const g = leaves[i].grad;
          if (!g) bad.push(`no gradient for operand ${i}`);
          else compare(bad, `grad ${i}`, flat(g), want, TOL[w.dtype]);
          g?.dispose();
        });
      }
    }
  }
  r?.dispose();
  for (const x of made) x.dispose();
  return bad;
}

for (const variant of VARIANTS) {
  test(`einsum matches PyTorch (${fixture.cases.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const failures = [];
    for (const c of fixture.cases) {
      const bad = replay(wt, c);
      if (bad.length) failures.push(`${JSON.stringify(c.equation)} ${c.operands.map((s) => `[${s.size}]`)} ${c.operands[0]?.dtype}: ${bad.join('; ')}`);
    }
    assert.deepEqual(failures.slice(0, 10), []);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

test('einsum: calling forms, the plan explain() shows, meta tensors', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const a = wt.randn([2, 3, 4]);
    const b = wt.randn([2, 4, 5]);
    const ref = wt.bmm(a, b);
    for (const r of [wt.einsum('bij,bjk->bik', a, b), wt.einsum('bij,bjk->bik', [a, b])]) {
      assert.ok(wt.allclose ? wt.allclose(r, ref) : r.sub(ref).abs().max().item() < 1e-5);
    }
    // a pair's plan: the aligned operands' permutes, then one bmm of [batch, left, summed] x [batch, summed, right]
    const plan = wt.explain('einsum', 'bij,bjk->bik', [a, b]);
    assert.equal(plan.kind, 'einsum');
    assert.deepEqual(plan.operands.map((o) => o.shape), [[2, 3, 1, 4], [2, 1, 5, 4]]);
    assert.equal(plan.steps.length, 1);
    assert.equal(plan.steps[0].step, 'bmm');
    assert.deepEqual([plan.steps[0].left, plan.steps[0].right], [[2, 3, 4], [2, 4, 5]]);
    assert.deepEqual(plan.shape, [2, 3, 5]);
    // three operands contract left to right, one bmm per pair; a trace is a diagonal view and a sum
    const chain = wt.explain('einsum', 'ij,jk,kl->il', [wt.ones([2, 3]), wt.ones([3, 4]), wt.ones([4, 5])]);
    assert.deepEqual(chain.steps.map((s) => [s.step, s.operands, s.left, s.right]),
      [['bmm', [0, 1], [1, 2, 3], [1, 3, 4]], ['bmm', [3, 2], [1, 2, 4], [1, 4, 5]]]);
    const tr = wt.explain('einsum', 'ii', [wt.ones([3, 3])]);
    assert.deepEqual([tr.operands[0].diagonals, tr.steps[0].step], [1, 'sum']);
    // an outer product sums nothing: a broadcasting mul
    assert.equal(wt.explain('einsum', 'i,j->ij', [wt.ones([2]), wt.ones([3])]).steps[0].step, 'mul');
    assert.deepEqual(wt.einsum('...ij,jk', wt.empty([7, 2, 3], { device: 'meta' }), wt.empty([3, 5], { device: 'meta' })).shape, [7, 2, 5]);
    throwsWeft(() => wt.einsum(3, a), 'TypeError', /argument 'equation' must be a string/);
    throwsWeft(() => wt.einsum('ij,jk,kl', wt.ones([2, 2]), wt.ones([2, 2]), wt.ones([2, 2]), { path: [0, 1] }),
      'InvalidArgument', /path has 2 entries/);
    throwsWeft(() => wt.einsum('ij,jk', wt.ones([2, 2]), wt.ones([2, 2]), { path: [0, 2] }), 'IndexError', /path step 0/);
  });
  assert.deepEqual(counts(wt), before);
});
