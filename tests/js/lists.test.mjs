// The op table's list kinds from JS (opgen.h TENSOR_LIST / OPT_TENSOR_LIST
// arguments, the TENSOR_LIST return), on every variant: an array of Tensors
// through the typed entry point (up to an argument slot's 16 handles) and the
// boxed stack (longer arrays, wt.ops.call), arrays of Tensors back from both,
// reference accounting, errors (a non-Tensor element, null in a Tensor[],
// an empty array, a disposed tensor) and worker mode. The values of the ops
// themselves are checked against PyTorch in join-fixtures.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initWorker } from 'weft';
import { init, counts, noLeaks, throwsWeft, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: Tensor[] arguments, typed and boxed`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      const parts = Array.from({ length: 20 }, (_, i) => wt.full([1, 2], i, { dtype: 'float32' }));
      for (const n of [1, 2, 16, 17, 20]) { // 17 and 20 do not fit an argument slot: boxed
        const typed = wt.cat(parts.slice(0, n));
        const boxed = wt.ops.call('cat', parts.slice(0, n), 0);
        assert.deepEqual(typed.shape, [n, 2]);
        assert.deepEqual(typed.toArray(), boxed.toArray());
        assert.deepEqual(typed.toArray().map((r) => r[0]), Array.from({ length: n }, (_, i) => i));
        typed.dispose();
        boxed.dispose();
      }
      // the inputs keep one reference each
      const c = wt.cat(parts, 1);
      assert.deepEqual(c.shape, [1, 40]);
      c.dispose();
      for (const p of parts) p.dispose();
    });
  });

  test(`${variant}: Tensor[] returns, typed and boxed`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      const flat = wt.arange(10, { dtype: 'float32' });
      const x = flat.view(5, 2);
      for (const r of [x.split(2), wt.split(x, 2), wt.ops.call('split.Tensor', x, 2)]) {
        assert.ok(Array.isArray(r));
        assert.deepEqual(r.map((t) => t.shape), [[2, 2], [2, 2], [1, 2]]);
        assert.deepEqual(r[2].toArray(), [[8, 9]]);
        for (const t of r) t.dispose();
      }
      // an empty result is an empty array (unbind of a size-0 dim)
      const z = wt.zeros([0, 3]);
      for (const r of [z.unbind(), wt.ops.call('unbind', z)]) assert.deepEqual(r, []);
      // more pieces than an argument slot: the typed return has no limit
      const forty = wt.arange(40);
      const many = forty.chunk(40);
      assert.equal(many.length, 40);
      assert.equal(Number(many[39].item()), 39);
      for (const t of many) t.dispose();
      for (const t of [z, x, flat, forty]) t.dispose();
    });
    // tidy disposes every tensor of a returned list it does not return
    const before = counts(wt);
    const kept = wt.tidy(() => wt.arange(6).split(2)[0]);
    assert.deepEqual(counts(wt).tensors, before.tensors + 1); // the other pieces and the base are gone
    kept.dispose();
  });

  test(`${variant}: list errors`, async () => {
    const wt = await init({ variant });
    const a = wt.ones([2]);
    await noLeaks(wt, () => {
      throwsWeft(() => wt.cat([a, 1]), 'TypeError', /^cat\(\): expected Tensor as element 1 in argument 'tensors', but got number$/);
      throwsWeft(() => wt.cat([a, null]), 'TypeError', /expected Tensor as element 1 in argument 'tensors', but got null/);
      throwsWeft(() => wt.cat(a), 'TypeError', /cat\(\): argument 'tensors' \(position 1\) must be an array of Tensors, not a Tensor/);
      throwsWeft(() => wt.ops.call('cat', [a, 'x']), 'TypeError', /expected Tensor as element 1 in argument 'tensors', but got string/);
      throwsWeft(() => wt.cat([]), 'InvalidArgument', /expected a non-empty list of Tensors|There were no tensor arguments/);
      throwsWeft(() => wt.stack([]), 'InvalidArgument', /There were no tensor arguments|stack expects a non-empty TensorList/);
      const d = wt.ones([2]);
      d.dispose();
      throwsWeft(() => wt.cat([a, d]), undefined, /disposed/);
      throwsWeft(() => wt.cat(Array.from({ length: 20 }, () => a).concat([d])), undefined, /disposed/);
    });
    a.dispose();
  });
}

test('worker: Tensor[] in and out', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const a = ww.arange(4, { dtype: 'float32' }).view(2, 2);
    const c = ww.cat([a, a], 1);
    assert.deepEqual(await c.toArray(), [[0, 1, 0, 1], [2, 3, 2, 3]]);
    const parts = await a.unbind(1);
    assert.equal(parts.length, 2);
    assert.deepEqual(await parts[1].toArray(), [1, 3]);
    const pieces = await ww.split(a, 1);
    assert.deepEqual(await pieces[0].shape, [1, 2]);
    await assert.rejects(ww.cat([]).toArray(), /non-empty|no tensor arguments/);
  } finally {
    await ww.terminate();
  }
});
