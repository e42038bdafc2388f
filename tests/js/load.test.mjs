// Loading: both variants, the init options, and the seed example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks, throwsWeft, VARIANTS, WeftError } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: loads and runs the seed example`, async () => {
    const wt = await init({ variant });
    assert.equal(wt.variant, variant);
    await noLeaks(wt, () => {
      const x = wt.rand([1, 64, 5, 4]);
      const y = x.contiguous({ memoryFormat: 'channels_last' });
      assert.deepEqual(y.shape, [1, 64, 5, 4]);
      assert.deepEqual(y.stride(), [1280, 1, 256, 64]);
      assert.equal(y.isContiguous(), false);
      assert.equal(y.isContiguous('channels_last'), true);
      assert.deepEqual(Array.from(y.data()), Array.from(x.data()));
      x.dispose();
      y.dispose();
    });
  });

  test(`${variant}: init returns the same module for the same variant`, async () => {
    const a = await init({ variant });
    const b = await init({ variant, threads: 1 });
    assert.equal(a, b);
    assert.equal(a.getNumThreads(), 1);
    await init({ variant, threads: 'auto' });
    assert.equal(a.getNumThreads(), a.maxThreads());
  });
}

test('default variant in Node is simd-threads', async () => {
  const wt = await init();
  assert.equal(wt.variant, 'simd-threads');
  assert.ok(wt.maxThreads() >= 1);
});

test('the two variants are separate modules', async () => {
  const a = await init({ variant: 'simd' });
  const b = await init({ variant: 'simd-threads' });
  assert.notEqual(a, b);
  const before = b.memory().tensors;
  const t = a.zeros(3);
  assert.equal(b.memory().tensors, before);
  t.dispose();
});

test('init rejects bad options', async () => {
  await assert.rejects(init({ variant: 'gpu' }), (e) => e instanceof WeftError && e.code === 'InvalidArgument' &&
    /unknown variant 'gpu'/.test(e.message));
  await assert.rejects(init({ threads: 0 }), /threads must be a positive integer or 'auto'/);
  await assert.rejects(init({ threads: 1.5 }), WeftError);
  await assert.rejects(init({ thread: 2 }), /unexpected option 'thread' \(did you mean threads\?\)/);
});

test('setNumThreads validates its argument', async () => {
  const wt = await init();
  throwsWeft(() => wt.setNumThreads(0), 'InvalidArgument', /at least 1/);
  throwsWeft(() => wt.setNumThreads(NaN), 'TypeError');
  wt.setNumThreads(wt.maxThreads());
});

test('WeftError is an Error with a code', () => {
  const e = new WeftError('IndexError', 'x: y');
  assert.ok(e instanceof Error);
  assert.equal(e.code, 'IndexError');
  assert.equal(e.message, 'x: y');
  assert.equal(e.name, 'WeftError');
});
