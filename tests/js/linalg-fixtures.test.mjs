// The matmul family (issue 12): every case of tests/fixtures/linalg.json
// (PyTorch 1.13, made by tests/fixtures/gen_linalg_fixtures.py; the native
// replay is tests/c/test_linalg.c) through wt.ops.call on each wasm variant,
// keyword-only arguments (beta, alpha, out) in the trailing options object,
// None as null. Values are exact (multiples of 1/8); dtype, shape and the
// strides of dims longer than 1 must match; errors are WeftErrors with
// PyTorch's message; out= returns the out tensor; nothing leaks. Then the
// generated spellings: wt.matmul(a, b), a.mm(b), wt.linear(x, w, b), { out }.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, counts, VARIANTS } from './helpers.mjs';
import { problems } from './case-replay.mjs';

const { cases } = loadFixture('linalg.json');

for (const variant of VARIANTS) {
  test(`${variant}: linalg.json through ops.call`, async (t) => {
    const wt = await init({ variant });
    const bad = cases.flatMap((c) => problems(wt, c));
    t.diagnostic(`${cases.length} cases`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
  });

  test(`${variant}: the generated matmul API`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const f32 = { dtype: 'float32' };
    const a = wt.tensor([[1, 2, 3], [4, 5, 6]], f32);
    const b = wt.tensor([[1, 0], [0, 1], [1, 1]], f32);
    const w = wt.tensor([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], f32);
    const bias = wt.tensor([0.5, 0.5, 0.5, 0.5], f32);
    const r1 = wt.matmul(a, b);
    assert.deepEqual(r1.toArray(), [[4, 5], [10, 11]]);
    const r2 = a.mm(b);
    assert.deepEqual(r2.toArray(), [[4, 5], [10, 11]]);
    const r3 = wt.linear(a, w, bias);
    assert.deepEqual(r3.toArray(), [[1.5, 2.5, 3.5, 6.5], [4.5, 5.5, 6.5, 15.5]]);
    const out = wt.empty([0]);
    assert.equal(a.matmul(b, { out }), out);
    assert.deepEqual(out.toArray(), [[4, 5], [10, 11]]);
    assert.throws(() => a.mm(a), (e) => e instanceof WeftError &&
      /mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)/.test(e.message));
    for (const x of [a, b, w, bias, r1, r2, r3, out]) x.dispose();
    assert.deepEqual(counts(wt), before);
  });
}
