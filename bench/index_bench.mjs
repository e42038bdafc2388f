// Gathering benchmarks (issue 13), one library per process:
//   node bench/index_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm|onnxruntime-web> [--threads N] [--reps N]
// float32 x [4096, 1024] and 4096 int64 indices into its last dim:
//   index_select_last  wt.indexSelect(x, 1, idx)          -> [4096, 4096]
//   gather_last        wt.gather(x, 1, idx expanded to [4096, 4096])
// The peers have one op for both: tfjs-wasm tf.gather(x, idx, 1) (int32
// indices, its only kind), onnxruntime-web a Gather node with axis 1. Prints
// one JSON line per workload: name, build, threads, ms.
import { createRequire } from 'node:module';
import { benchArgs, benchMain, onnxModel, ortInit, ortWorkload, tfjsInit, weftInit } from './peer_util.mjs';

const a = benchArgs();
const peerRequire = createRequire(new URL('./peers/package.json', import.meta.url));
const R = 4096, C = 1024, K = 4096;
const data = new Float32Array(R * C).map((_, i) => ((i * 7919) % 1013) / 1013 - 0.5);
const ids = Array.from({ length: K }, (_, i) => (i * 613) % C);

async function weft(variant) {
  const wt = await weftInit(variant, a);
  const x = wt.tensor(data).view([R, C]);
  const idx = wt.tensor(ids, { dtype: 'int64' });
  const wide = idx.view([1, K]).expand([R, K]);
  const run = (f) => () => f().dispose();
  return {
    index_select_last: run(() => wt.indexSelect(x, 1, idx)),
    gather_last: run(() => wt.gather(x, 1, wide)),
  };
}

async function tfjsWasm() {
  const tf = await tfjsInit(peerRequire, a);
  const x = tf.tensor2d(data, [R, C]);
  const idx = tf.tensor1d(Int32Array.from(ids), 'int32');
  const g = () => {
    const r = tf.gather(x, idx, 1);
    r.dataSync();
    r.dispose();
  };
  return { index_select_last: g, gather_last: g };
}

async function onnxruntimeWeb() {
  const ort = ortInit(peerRequire, a.threads);
  const model = onnxModel('Gather', [['x', 1, [R, C]], ['i', 7, [K]]], ['y', 1, [R, K]], { axis: { i: 1 } });
  const feeds = { x: new ort.Tensor('float32', data, [R, C]), i: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [K]) };
  const g = await ortWorkload(ort, model, feeds);
  return { index_select_last: g, gather_last: g };
}

const libs = { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads'), 'tfjs-wasm': tfjsWasm,
  'onnxruntime-web': onnxruntimeWeb };
await benchMain('index_bench.mjs', libs, a, (n, ms) => ({ 'GB/s': +((R * K * 4) / (ms * 1e6)).toFixed(3) }));
