// The JS API fuzzer (scripts/fuzz_js.mjs) for a small, fixed count on every
// wasm variant: it fails on anything but a WeftError thrown, on a wrong
// value and on tensors left alive. Long runs: npm run fuzz:js -- --n 1000000
import { test } from 'node:test';
import { fuzz } from '../../scripts/fuzz_js.mjs';
import { init, VARIANTS } from './helpers.mjs';

const N = Number(process.env.WEFT_FUZZ_N ?? 3000);

for (const variant of VARIANTS) {
  for (const seed of [1, 2]) {
    test(`${variant}: ${N} random API calls (seed ${seed})`, async () => {
      const wt = await init({ variant });
      fuzz(wt, { n: N, seed });
    });
  }
}
