// One peer library on the issue-5 workloads, in its own process (ANCHORS.md):
//   node bench/peers.mjs <tfjs-wasm|onnxruntime-web|ndarray-ops|js-loop> [--threads N] [--reps N]
// Same shapes, float32 data, warm-up, idle wait and median of reps as
// bench/wasm_bench.mjs. Prints one JSON line per workload the peer has
// (name, build = the peer, threads, ms, GB/s); bench/run.mjs divides GB/s by
// weft's wasm ceiling of the same run and thread count. The peers are
// devDependencies used only here (never by npm test).
import { createRequire } from 'node:module';
import { medianTimes, onnxModel } from './peer_util.mjs';
import { tfjsWasmThreaded } from './tfjs_threads.mjs';

// the peers live in bench/peers/ (their own package.json), so npm test never installs them
const require = createRequire(new URL('./peers/package.json', import.meta.url));
const args = process.argv.slice(2);
const peer = args[0];
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const reps = Math.max(1, Number(opt('--reps', '15')));
const threads = Number(opt('--threads', '1'));
const idleMs = Number(opt('--idle-ms', '2500'));

const N = 32, C = 64, H = 56, W = 56, HW = H * W, NX = N * C * HW, N4M = 4194304;
const x = new Float32Array(NX).map((_, i) => (i % 1009) * 0.5 - 200);
const bias = new Float32Array(C).map((_, i) => i * 0.25);
const a = new Float32Array(N4M).map((_, i) => (i % 997) * 0.125);
const b = new Float32Array(N4M).map((_, i) => (i % 89) - 40);
const BYTES = { nchw_to_nhwc: 8 * NX, add: 12 * N4M, add_broadcast: 8 * NX + 4 * C, cast_f32_f16: 6 * N4M };

// ---- peers: each returns { workload name: () => void } (one run per call) ----

async function tfjsWasm() {
  const { tf } = await tfjsWasmThreaded(require, threads);
  const tx = tf.tensor4d(x, [N, C, H, W]);
  const tb = tf.tensor4d(bias, [1, C, 1, 1]);
  const ta = tf.tensor1d(a), tb2 = tf.tensor1d(b);
  const run = (f) => () => f().dispose();
  return {
    nchw_to_nhwc: run(() => tf.transpose(tx, [0, 2, 3, 1])),
    add: run(() => tf.add(ta, tb2)),
    add_broadcast: run(() => tf.add(tx, tb)),
  };
}

async function onnxruntimeWeb() {
  const ort = require('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  const F32 = 1, F16 = 10;
  const sx = [N, C, H, W];
  const session = (model) => ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
  const sT = await session(onnxModel('Transpose', [['x', F32, sx]], ['y', F32, [N, H, W, C]], { perm: { ints: [0, 2, 3, 1] } }));
  const sA = await session(onnxModel('Add', [['a', F32, [N4M]], ['b', F32, [N4M]]], ['y', F32, [N4M]], {}));
  const sB = await session(onnxModel('Add', [['x', F32, sx], ['b', F32, [C, 1, 1]]], ['y', F32, sx], {}));
  const sC = await session(onnxModel('Cast', [['a', F32, [N4M]]], ['y', F16, [N4M]], { to: { i: F16 } }));
  const tx = new ort.Tensor('float32', x, sx), tbias = new ort.Tensor('float32', bias, [C, 1, 1]);
  const ta = new ort.Tensor('float32', a, [N4M]), tb = new ort.Tensor('float32', b, [N4M]);
  // session.run is async (it may hop to workers); the time includes that
  const run = (s, feeds) => async () => {
    const out = await s.run(feeds);
    for (const t of Object.values(out)) t.dispose?.();
  };
  return {
    nchw_to_nhwc: run(sT, { x: tx }),
    add: run(sA, { a: ta, b: tb }),
    add_broadcast: run(sB, { x: tx, b: tbias }),
    cast_f32_f16: run(sC, { a: ta }),
  };
}

async function ndarrayOps() {
  const ndarray = require('ndarray');
  const ops = require('ndarray-ops');
  const nx = ndarray(x, [N, C, H, W]);
  const ynhwc = new Float32Array(NX);
  const yView = ndarray(ynhwc, [N, H, W, C]).transpose(0, 3, 1, 2); // NHWC memory seen as NCHW
  const na = ndarray(a), nb = ndarray(b), ny = ndarray(new Float32Array(N4M));
  const yb = ndarray(new Float32Array(NX), [N, C, H, W]);
  return {
    nchw_to_nhwc: () => ops.assign(yView, nx),
    add: () => ops.add(ny, na, nb),
    add_broadcast: () => {
      for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) ops.adds(yb.pick(n, c), nx.pick(n, c), bias[c]);
    },
  };
}

async function jsLoop() {
  const y = new Float32Array(NX), z = new Float32Array(N4M);
  return {
    nchw_to_nhwc: () => {
      for (let n = 0; n < N; n++) {
        const base = n * C * HW;
        for (let c = 0; c < C; c++) {
          const src = base + c * HW;
          for (let p = 0; p < HW; p++) y[base + p * C + c] = x[src + p];
        }
      }
    },
    add: () => {
      for (let i = 0; i < N4M; i++) z[i] = a[i] + b[i];
    },
    add_broadcast: () => {
      for (let n = 0; n < N; n++) {
        for (let c = 0; c < C; c++) {
          const o = (n * C + c) * HW, v = bias[c];
          for (let p = 0; p < HW; p++) y[o + p] = x[o + p] + v;
        }
      }
    },
  };
}

const peers = { 'tfjs-wasm': tfjsWasm, 'onnxruntime-web': onnxruntimeWeb, 'ndarray-ops': ndarrayOps, 'js-loop': jsLoop };
if (!peers[peer]) {
  console.error(`usage: peers.mjs <${Object.keys(peers).join('|')}> [--threads N] [--reps N]`);
  process.exit(2);
}
const ms = await medianTimes(await peers[peer](), reps, idleMs);
for (const [n, m] of Object.entries(ms)) {
  console.log(JSON.stringify({ name: n, build: peer, threads, ms: +m.toFixed(3), 'GB/s': +(BYTES[n] / (m * 1e6)).toFixed(2), reps }));
}
process.exit(0);
