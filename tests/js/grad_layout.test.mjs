// The layout of .grad after backward() (issue 15): every case of
// tests/fixtures/grad_layout.json (PyTorch 1.13's leaf gradients with their
// strides, made by tests/fixtures/gen_grad_layout_fixtures.py) on each wasm
// variant. mm's formula hands a column-major (transposed) input its
// gradient column-major without a copy, and AccumulateGrad copies a gradient
// that breaks the leaf's layout into the leaf's strides, as PyTorch does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, close, counts, VARIANTS } from './helpers.mjs';

const FX = JSON.parse(readFileSync(new URL('../fixtures/grad_layout.json', import.meta.url), 'utf8'));

// The replay of each case: the same function as the generator's.
const CASES = {
  linear: (wt, x, w, b) => wt.linear(x, w, b),
  mm_mat1_transposed: (wt, a, b) => a.mm(b),
  mm_mat2_transposed: (wt, a, b) => a.mm(b),
  addmm_transposed: (wt, c, a, b) => wt.addmm(c, a, b, { beta: 0.5, alpha: 2 }),
  transpose_of_leaf: (wt, x, w) => x.t().mul(w),
  mm_of_transposed_contiguous_leaf: (wt, a, b) => a.t().mm(b),
};

// a leaf holding spec.values; t: the transpose of a contiguous tensor of the reversed size (column-major)
function leaf(wt, spec) {
  return wt.tidy(() => {
    const v = wt.tensor(Float32Array.from(spec.values)).reshape(spec.size);
    return (spec.t ? v.t().contiguous().t() : v.clone()).requiresGrad_();
  });
}

for (const variant of VARIANTS) {
  test(`${variant}: .grad values and strides match PyTorch 1.13`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    assert.ok(FX.length >= 6);
    for (const c of FX) {
      const leaves = c.inputs.map((s) => leaf(wt, s));
      leaves.forEach((x, i) => assert.equal(x.isContiguous(), !c.inputs[i].t, `${c.name} leaf ${i} layout`));
      wt.tidy(() => {
        const go = wt.tensor(Float32Array.from(c.grad_output.values)).reshape(c.grad_output.size);
        CASES[c.name](wt, ...leaves).backward(go);
      });
      c.grads.forEach((want, i) => {
        const g = leaves[i].grad;
        assert.deepEqual(g.stride(), want.stride, `${c.name} leaf ${i} grad strides`);
        const vals = g.toArray().flat(Infinity);
        want.values.forEach((v, j) => assert.ok(close(vals[j], v, 1e-6), `${c.name} leaf ${i} [${j}]: ${vals[j]} vs ${v}`));
        g.dispose();
      });
      for (const x of leaves) x.dispose();
    }
    assert.deepEqual(counts(wt), before);
  });
}

test('a second backward adds into .grad in place: its storage stays, a held .grad sees the sum', async () => {
  const wt = await init({ variant: 'simd' });
  const before = counts(wt);
  const w = wt.tensor([[1, 2], [3, 4]], { requiresGrad: true });
  const x = wt.tensor([[0.5, -1], [2, 0.25]]);
  const step = () => wt.tidy(() => wt.mm(x, w).sum().backward());
  step();
  const g = w.grad;
  const ptr = g.dataPtr();
  step();
  const g2 = w.grad;
  assert.equal(g2.dataPtr(), ptr, 'same storage after accumulation');
  assert.deepEqual(g.toArray(), [[5, 5], [-1.5, -1.5]], 'the held .grad sees the sum (PyTorch: w.grad is g)');
  for (const t of [g, g2, w, x]) t.dispose();
  assert.deepEqual(counts(wt), before);
});
