// Layout conversions a web app does, on the wasm build through the public
// JS API: image pixels (HWC, RGB/RGBA uint8 as ImageData or a decoder gives
// them) to planes (CHW) and back, and NCHW <-> NHWC of a feature map in
// three dtypes. Each case is y.copy_(x.permute(...)) into a preallocated
// output, against two baselines run in the same process: TypedArray.set of
// the same bytes (the copy ceiling JS has) and the plain JS loop a developer
// writes for the same permutation.
//   node bench/bench_layouts.mjs [--threads N] [--reps N] [--json]
// (after npm run build). Prints median ms, GB/s (bytes read + written) and
// the ratios weft / set and weft / loop (>1: weft is faster than the loop).
import { init } from '../js/index.js';
import { setTimeout as sleep } from 'node:timers/promises';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? Number(args[i + 1]) : dflt;
};
const reps = opt('--reps', 21);
const json = args.includes('--json');
const wt = await init({ threads: opt('--threads', 1) });
await wt.threadsReady(); // the pthread workers load after init()

const typed = { uint8: Uint8Array, float16: Uint16Array, float32: Float32Array };
const size = { uint8: 1, float16: 2, float32: 4 };

// [name, dtype, input shape, permutation]: y = x.permute(perm) made contiguous
const cases = [
  ['rgba 1080p hwc->chw', 'uint8', [1080, 1920, 4], [2, 0, 1]],
  ['rgba 1080p chw->hwc', 'uint8', [4, 1080, 1920], [1, 2, 0]],
  ['rgb [32,224,224,3] nhwc->nchw', 'uint8', [32, 224, 224, 3], [0, 3, 1, 2]],
  ['rgb [32,3,224,224] nchw->nhwc', 'uint8', [32, 3, 224, 224], [0, 2, 3, 1]],
  ['f32 [32,224,224,3] nhwc->nchw', 'float32', [32, 224, 224, 3], [0, 3, 1, 2]],
  ['u8 [32,64,56,56] nchw->nhwc', 'uint8', [32, 64, 56, 56], [0, 2, 3, 1]],
  ['f16 [32,64,56,56] nchw->nhwc', 'float16', [32, 64, 56, 56], [0, 2, 3, 1]],
  ['f32 [32,64,56,56] nchw->nhwc', 'float32', [32, 64, 56, 56], [0, 2, 3, 1]],
];

// the loop a developer writes: walk the output in order, gather the input
function jsPermute(src, dst, shape3or4, perm3or4) {
  // rank 3 becomes rank 4 with a leading 1, so the inner loop is the last dim
  const shape = shape3or4.length === 3 ? [1, ...shape3or4] : shape3or4;
  const perm = perm3or4.length === 3 ? [0, ...perm3or4.map((p) => p + 1)] : perm3or4;
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const os = perm.map((p) => shape[p]);
  const is = perm.map((p) => strides[p]);
  const [a, b, c, d] = os;
  const [sa, sb, sc, sd] = is;
  let o = 0;
  for (let i = 0; i < a; i++)
    for (let j = 0; j < b; j++)
      for (let k = 0; k < c; k++) {
        let s = i * sa + j * sb + k * sc;
        for (let l = 0; l < d; l++, s += sd) dst[o++] = src[s];
      }
}

function median(f) {
  for (let i = 0; i < 3; i++) f();
  const t = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    f();
    t.push(performance.now() - t0);
  }
  return t.sort((x, y) => x - y)[reps >> 1];
}

await sleep(0);
const rows = [];
for (const [name, dtype, shape, perm] of cases) {
  const x = wt.empty(shape, { dtype });
  const y = wt.empty(perm.map((p) => shape[p]), { dtype });
  const n = shape.reduce((a, b) => a * b, 1);
  const src = new typed[dtype](n).map((_, i) => i & 0x7f);
  const dst = new typed[dtype](n);
  const xp = x.permute(perm);
  for (let i = 0; i < 20; i++) y.copy_(xp); // warm up, then let V8 finish tiering
  await sleep(1500);
  const ms = median(() => y.copy_(xp));
  const setMs = median(() => dst.set(src));
  const loopMs = median(() => jsPermute(src, dst, shape, perm));
  const bytes = 2 * n * size[dtype];
  const row = { name, threads: wt.getNumThreads(), ms: +ms.toFixed(3), 'GB/s': +(bytes / ms / 1e6).toFixed(2),
    vs_set: +(setMs / ms).toFixed(2), vs_js_loop: +(loopMs / ms).toFixed(1), set_ms: +setMs.toFixed(3),
    js_loop_ms: +loopMs.toFixed(3) };
  rows.push(row);
  if (json) console.log(JSON.stringify(row));
  xp.dispose();
  x.dispose();
  y.dispose();
}
if (!json) {
  console.log(`weft wasm, ${wt.getNumThreads()} thread(s); median of ${reps}; GB/s = bytes read + written / time`);
  console.log(`${'case'.padEnd(32)}${'ms'.padStart(8)}${'GB/s'.padStart(8)}${'set ms'.padStart(9)}${'x set'.padStart(7)}` +
    `${'loop ms'.padStart(9)}${'x loop'.padStart(8)}`);
  for (const r of rows)
    console.log(`${r.name.padEnd(32)}${r.ms.toFixed(3).padStart(8)}${r['GB/s'].toFixed(2).padStart(8)}` +
      `${r.set_ms.toFixed(3).padStart(9)}${r.vs_set.toFixed(2).padStart(7)}${r.js_loop_ms.toFixed(3).padStart(9)}` +
      `${r.vs_js_loop.toFixed(1).padStart(8)}`);
}
