// safetensors through the public JS API: save and load of a model-sized file
// (f32, bf16 and f16 weights) against a fresh JS copy of the file (Uint8Array
// slice of the same bytes), and the header alone for a file of many small
// tensors (the JSON parse and validation).
//   node bench/bench_safetensors.mjs [--mb N] [--reps N]
// (after npm run build). Prints median ms and MB/s.
import { init } from '../js/index.js';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? Number(args[i + 1]) : dflt;
};
const reps = opt('--reps', 9);
const mb = opt('--mb', 64);
const wt = await init({ threads: 1 });
await wt.threadsReady(); // the pthread workers load after init()

function median(fn) {
  const times = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[reps >> 1];
}

function row(name, ms, bytes) {
  console.log(`${name.padEnd(40)} ${ms.toFixed(2).padStart(9)} ms ${(bytes / 2 ** 20 / (ms / 1e3)).toFixed(0).padStart(7)} MB/s`);
}

// ~mb MB in 12 layers: a square f32 weight, a bf16 and an f16 copy, a bias
const side = Math.round(Math.sqrt((mb * 2 ** 20) / 12 / 8));
const tensors = {};
for (let l = 0; l < 12; l++) {
  const w = wt.randn(side, side);
  tensors[`layer.${l}.weight`] = w;
  tensors[`layer.${l}.weight_bf16`] = w.to('bfloat16');
  tensors[`layer.${l}.weight_f16`] = w.to('float16');
  tensors[`layer.${l}.bias`] = wt.zeros(side);
}
const file = wt.saveSafetensors(tensors);
console.log(`file: ${(file.length / 2 ** 20).toFixed(1)} MB, ${Object.keys(tensors).length} tensors, ${reps} reps, 1 thread`);
row('Uint8Array.slice (a fresh JS copy)', median(() => file.slice()), file.length);
row('saveSafetensors', median(() => wt.saveSafetensors(tensors)), file.length);
row('loadSafetensors', median(() => Object.values(wt.loadSafetensors(file)).forEach((t) => t.dispose())), file.length);

const small = {};
for (let k = 0; k < 10000; k++) small[`blocks.${k >> 4}.attn.${k & 15}.weight`] = wt.ones(2);
const many = wt.saveSafetensors(small);
const headerBytes = new DataView(many.buffer).getUint32(0, true);
row('readSafetensorsHeader, 10000 tensors', median(() => wt.readSafetensorsHeader(many)), headerBytes);
row('JSON.parse of the same header', median(() => JSON.parse(new TextDecoder().decode(many.subarray(8, 8 + headerBytes)))), headerBytes);
