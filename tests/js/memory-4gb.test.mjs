// wasm32's 4 GB: the heap grows past 2 GB (pointers above 2**31 work from
// JS), and the limit is a clean OutOfMemory after which weft goes on. Its own
// file: the wasm memory of each variant stays grown (it never shrinks).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { counts, init, throwsWeft, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: tensors fill the heap past 2 GB; the limit is a clean OutOfMemory`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const n = 1.2e9;
    const big = [];
    for (let i = 0; i < 3; i++) big.push(wt.empty([n], { dtype: 'uint8' }));
    assert.ok(big[2].dataPtr() > 2 ** 31, `data above 2 GB (at ${big[2].dataPtr()})`);
    assert.ok(wt.memory().heapBytes > 3 * n);
    const tail = big[2].slice(0, n - 3);
    tail.fill_(9);
    assert.deepEqual(tail.toArray(), [9, 9, 9]);
    throwsWeft(() => wt.empty([n], { dtype: 'uint8' }), 'OutOfMemory', /tried to allocate 1200000000 bytes/);
    tail.dispose();
    for (const t of big) t.dispose();
    assert.deepEqual(counts(wt), before);
    const x = wt.ones([3]).add(2);
    assert.deepEqual(x.toArray(), [3, 3, 3]);
    x.dispose();
  });
}
