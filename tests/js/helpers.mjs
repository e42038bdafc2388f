// Shared by the JS tests: both variants, and a check that a block of code
// leaves wt.memory() where it found it.
import assert from 'node:assert/strict';
import { init, WeftError } from 'weft';

// WEFT_TEST_VARIANTS=simd narrows a run to some variants (scripts/asan-wasm.sh)
export const VARIANTS = process.env.WEFT_TEST_VARIANTS ? process.env.WEFT_TEST_VARIANTS.split(',')
  : ['simd-threads', 'simd', 'scalar'];
export { init, WeftError };

export function counts(wt) {
  const { tensors, storages, bytesInUse } = wt.memory();
  return { tensors, storages, bytesInUse };
}

// Runs fn(wt) and asserts no tensor, storage or byte outlives it.
export async function noLeaks(wt, fn) {
  const before = counts(wt);
  await fn(wt);
  assert.deepEqual(counts(wt), before);
}

// Asserts fn throws a WeftError with this code and a message matching re.
export function throwsWeft(fn, code, re) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof WeftError, `expected WeftError, got ${e && e.name}: ${e && e.message}`);
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'WeftError');
    if (code !== undefined) assert.equal(e.code, code, `code of "${e.message}"`);
    assert.equal(typeof e.code, 'string');
    if (re) assert.match(e.message, re);
    return true;
  });
}

// Disposes every tensor created through track().
export function tracker() {
  const live = [];
  const track = (t) => { live.push(t); return t; };
  track.disposeAll = () => { for (const t of live.splice(0)) t.dispose(); };
  return track;
}

// A replayed value against a fixture's: NaN matches NaN, infinities exactly,
// the rest within e relative to the wanted magnitude.
export function close(got, want, e) {
  if (Number.isNaN(want)) return Number.isNaN(got);
  if (!Number.isFinite(want)) return got === want;
  return Math.abs(got - want) <= e * (1 + Math.abs(want));
}

// Replays fixture cases at 1 and 2 threads (as many as the variant has):
// problems(wt, c) returns a case's problems as strings; any fails the test.
export function replayAtThreads(t, wt, cases, problems) {
  for (const threads of [1, 2]) {
    if (threads > wt.maxThreads()) continue;
    wt.setNumThreads(threads);
    const bad = cases.flatMap((c) => problems(wt, c));
    t.diagnostic(`${cases.length} cases at ${threads} thread(s)`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
  }
  wt.setNumThreads(1);
}

// A seeded PRNG (mulberry32): uniform in [0, 1), the same sequence on every run.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
