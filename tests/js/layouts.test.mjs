// Image layouts through the public API: packed RGB(A) pixels to planes and
// back (the x8 pixel kernels), thin f32/f16 images, sliced pixels (RGBA ->
// RGB planes, a strided thin copy) and NCHW <-> NHWC in each element size,
// against a plain JS permutation, on every variant and 1 and 2 threads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks, VARIANTS } from './helpers.mjs';

const ARRAYS = { uint8: Uint8Array, int16: Int16Array, float32: Float32Array, float64: Float64Array };

// out[...] of x.permute(perm).contiguous() for a contiguous x of shape
function permuted(src, shape, perm) {
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const oshape = perm.map((p) => shape[p]);
  const n = src.length;
  const out = new src.constructor(n);
  const idx = new Array(oshape.length).fill(0);
  for (let o = 0; o < n; o++) {
    let s = 0;
    for (let d = 0; d < idx.length; d++) s += idx[d] * strides[perm[d]];
    out[o] = src[s];
    for (let d = idx.length - 1; d >= 0; d--) {
      if (++idx[d] < oshape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

const CASES = [
  // [what, dtype, shape, perm]
  ['RGBA pixels -> planes', 'uint8', [37, 41, 4], [2, 0, 1]],
  ['planes -> RGBA pixels', 'uint8', [4, 37, 41], [1, 2, 0]],
  ['RGB pixels -> planes', 'uint8', [2, 19, 23, 3], [0, 3, 1, 2]],
  ['planes -> RGB pixels', 'uint8', [2, 3, 19, 23], [0, 2, 3, 1]],
  ['f32 RGB pixels -> planes', 'float32', [2, 17, 9, 3], [0, 3, 1, 2]],
  ['int16 RGBA planes -> pixels', 'int16', [4, 33, 7], [1, 2, 0]],
  ['uint8 NCHW -> NHWC, 64 channels', 'uint8', [2, 64, 9, 7], [0, 2, 3, 1]],
  ['int16 NHWC -> NCHW, 40 channels', 'int16', [2, 9, 7, 40], [0, 3, 1, 2]],
  ['f64 NCHW -> NHWC', 'float64', [3, 5, 6, 7], [0, 2, 3, 1]],
];

for (const variant of VARIANTS) {
  test(`${variant}: image layouts match a JS permutation`, async () => {
    const wt = await init({ variant });
    for (const threads of [1, 2]) {
      wt.setNumThreads(threads);
      await noLeaks(wt, async () => {
        for (const [what, dtype, shape, perm] of CASES) {
          const n = shape.reduce((a, b) => a * b, 1);
          const src = new ARRAYS[dtype](n).map((_, i) => (i * 37 + 11) % 251);
          const flat = wt.tensor(src, { dtype });
          const x = flat.view(shape);
          const p = x.permute(perm);
          const y = p.contiguous();
          assert.deepEqual(y.shape, perm.map((d) => shape[d]), what);
          assert.deepEqual([...y.data()], [...permuted(src, shape, perm)], `${what} (${threads} threads)`);
          for (const t of [flat, x, p, y]) t.dispose();
        }
        // RGBA -> RGB planes: the pixel stride is 4, not 3 (a strided thin copy)
        const h = 13, w = 29;
        const rgba = new Uint8Array(h * w * 4).map((_, i) => i % 256);
        const flat = wt.tensor(rgba);
        const x = flat.view(h, w, 4);
        const rgb = x.narrow(2, 0, 3);
        const planes = rgb.permute(2, 0, 1);
        const y = planes.contiguous();
        const want = permuted(rgba, [h, w, 4], [2, 0, 1]).slice(0, 3 * h * w);
        assert.deepEqual([...y.data()], [...want], 'RGBA -> RGB planes');
        for (const t of [flat, x, rgb, planes, y]) t.dispose();
      });
    }
    wt.setNumThreads(1);
  });
}
