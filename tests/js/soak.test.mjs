// A short soak (scripts/soak.mjs; npm run soak runs 10^6 ops): 2*10^4 mixed
// ops in tidy across dtypes and layouts must leave bytes in use and live
// tensors flat within 1% after warm-up, and nothing alive at the end. The
// flatness criterion itself must catch a slow leak.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judge, soak } from '../../scripts/soak.mjs';
import { init } from './helpers.mjs';

test('simd: 2*10^4 mixed ops in tidy keep memory flat', async () => {
  const wt = await init({ variant: 'simd' });
  const before = wt.memory();
  const { samples, verdict } = soak(wt, { ops: 2e4, sample: 1e3, seed: 3 });
  assert.ok(samples.length >= 20);
  assert.ok(verdict.flat, JSON.stringify(verdict));
  const after = wt.memory();
  assert.equal(after.tensors, before.tensors);
  assert.equal(after.bytesInUse, before.bytesInUse);
});

test('the flatness criterion catches a leak of 64 bytes per sample', () => {
  const samples = Array.from({ length: 100 }, (_, i) => ({ ops: i * 1e4, bytes: 100000 + 64 * i, tensors: 18, heap: 1 }));
  const v = judge(samples);
  assert.equal(v.warmupSamples, 10);
  assert.ok(!v.flat);
  assert.ok(judge(samples.map((s) => ({ ...s, bytes: 100000 }))).flat);
});
