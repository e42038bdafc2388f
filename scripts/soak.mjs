// npm run soak: a long run of mixed ops (elementwise with broadcast, views,
// contiguous, reductions, matmul, casts) across dtypes and layouts, each
// batch in wt.tidy, over a pool of live tensors that batches replace (same
// shape and dtype, new storage). wt.memory() is sampled between batches
// every --sample ops; the run writes bench/out/soak.csv and an SVG plot of
// bytes in use (and the wasm heap) over time, bench/out/soak.svg.
//
// Flat means: after the warm-up (the first 10% of the samples), bytes in use
// and live tensors stay within 1% of their mean: (max - min) <= 0.01 * mean.
// The pool is the same size at every sample, so anything above it is a leak.
//   node scripts/soak.mjs [--ops 1000000] [--sample 10000] [--variant simd] [--out bench/out] [--seed 1]
// tests/js/soak.test.mjs runs 2*10^4 ops.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const DTYPES = ['float32', 'float64', 'int32', 'int64', 'float16', 'bfloat16', 'int16', 'uint8'];
const FLOATS = ['float32', 'float64'];

function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
}

// The pool: fixed shapes and dtypes, some in channels_last or transposed layouts.
function makePool(wt) {
  const pool = [];
  for (let i = 0; i < 16; i++) {
    const dtype = DTYPES[i % DTYPES.length];
    const shape = [[8, 8], [4, 1, 8], [2, 3, 4, 5], [16]][i % 4];
    let t = wt.tidy(() => wt.rand(shape).mul(10).to(dtype));
    if (shape.length === 4 && i % 8 === 2) {
      const cl = wt.tidy(() => t.contiguous({ memoryFormat: 'channels_last' }));
      t.dispose();
      t = cl;
    }
    pool.push(t);
  }
  return pool;
}

// One op on pool members; returns how many ops it made (the values are dropped by tidy).
function step(wt, pool, r) {
  const int = (k) => Math.floor(r() * k);
  const a = pool[int(pool.length)];
  const b = pool[int(pool.length)];
  switch (int(9)) {
    case 0: return wt.add(a, a.select(0, 0), { alpha: 2 }), 2; // broadcast over dim 0
    case 1: return a.mul(3).sub(1), 2;
    case 2: return a.dim() >= 2 ? a.transpose(0, -1).contiguous() : wt.mul(a, b.reshape([-1]).slice(0, 0, 1)), 2;
    case 3: return a.reshape([-1]).slice(0, 1, null, 2).contiguous(), 3;
    case 4: return a.to(FLOATS[int(2)]).sum(-1), 2;
    case 5: return a.to('float32').amax(0).add(a.to('float32').mean()), 4;
    case 6: {
      const x = wt.rand([8, 8], { dtype: FLOATS[int(2)] });
      return wt.matmul(x, x.t()), 3;
    }
    case 7: return a.to(DTYPES[int(DTYPES.length)]), 1;
    default: return a.unsqueeze(0).expand([2, ...a.shape]).contiguous(), 3;
  }
}

// Replaces a pool member by a computed tensor of the same shape and dtype.
function churn(wt, pool, r) {
  const i = Math.floor(r() * pool.length);
  const old = pool[i];
  pool[i] = wt.tidy(() => old.add(1).sub(1).contiguous().to(old.dtype).reshape(old.shape));
  old.dispose();
}

export function soak(wt, { ops = 1e6, sample = 1e4, seed = 1, log = () => {} } = {}) {
  const r = rng(seed);
  const pool = makePool(wt);
  const samples = [];
  const take = (done) => {
    const m = wt.memory();
    samples.push({ ops: done, bytes: m.bytesInUse, tensors: m.tensors, heap: m.heapBytes });
  };
  let done = 0;
  take(0);
  const t0 = Date.now();
  while (done < ops) {
    const next = Math.min(ops, (Math.floor(done / sample) + 1) * sample);
    while (done < next) {
      done += wt.tidy(() => {
        let k = 0;
        for (let j = 0; j < 10; j++) k += step(wt, pool, r);
        return k;
      });
      churn(wt, pool, r);
      done += 4;
    }
    take(done);
    if (samples.length % 10 === 0) log(`soak: ${done} ops, ${samples[samples.length - 1].bytes} bytes in use`);
  }
  const seconds = (Date.now() - t0) / 1000;
  for (const t of pool) t.dispose();
  return { samples, seconds, verdict: judge(samples) };
}

// Flat after warm-up: max - min within 1% of the mean, for bytes and tensors.
export function judge(samples) {
  const from = Math.max(1, Math.ceil(samples.length * 0.1));
  const rest = samples.slice(from);
  const spread = (k) => {
    const v = rest.map((s) => s[k]);
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const max = Math.max(...v);
    const min = Math.min(...v);
    return { mean, min, max, spread: mean ? (max - min) / mean : 0 };
  };
  const bytes = spread('bytes');
  const tensors = spread('tensors');
  const heap = spread('heap');
  return { warmupSamples: from, bytes, tensors, heap, flat: bytes.spread <= 0.01 && tensors.spread <= 0.01 };
}

export function svg(samples, verdict, title) {
  const W = 720, H = 360, L = 80, R = 80, T = 40, B = 50;
  const maxOps = samples[samples.length - 1].ops || 1;
  const maxBytes = Math.max(...samples.map((s) => s.bytes)) * 1.25 || 1;
  const maxHeap = Math.max(...samples.map((s) => s.heap)) * 1.1 || 1;
  const x = (o) => L + ((W - L - R) * o) / maxOps;
  const yb = (v) => H - B - ((H - T - B) * v) / maxBytes;
  const yh = (v) => H - B - ((H - T - B) * v) / maxHeap;
  const line = (f, k) => samples.map((s) => `${x(s.ops).toFixed(1)},${f(s[k]).toFixed(1)}`).join(' ');
  const kb = (v) => `${(v / 1024).toFixed(1)} KiB`;
  const mb = (v) => `${(v / 2 ** 20).toFixed(0)} MiB`;
  const w0 = samples[verdict.warmupSamples]?.ops ?? 0;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">
<rect width="${W}" height="${H}" fill="white"/>
<text x="${L}" y="22" font-size="14">${title}</text>
<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/>
<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>
<line x1="${W - R}" y1="${T}" x2="${W - R}" y2="${H - B}" stroke="#999"/>
<rect x="${L}" y="${T}" width="${(x(w0) - L).toFixed(1)}" height="${H - T - B}" fill="#eee"/>
<text x="${L + 4}" y="${T + 14}" fill="#777">warm-up</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${line(yb, 'bytes')}"/>
<polyline fill="none" stroke="#d62728" stroke-width="1" stroke-dasharray="4 3" points="${line(yh, 'heap')}"/>
<text x="${L - 6}" y="${yb(0)}" text-anchor="end">0</text>
<text x="${L - 6}" y="${yb(maxBytes / 1.25) + 4}" text-anchor="end" fill="#1f77b4">${kb(maxBytes / 1.25)}</text>
<text x="${W - R + 6}" y="${yh(maxHeap / 1.1) + 4}" fill="#d62728">${mb(maxHeap / 1.1)}</text>
<text x="${W - R}" y="${H - B + 18}" text-anchor="end">${maxOps.toLocaleString('en')} ops</text>
<text x="${L}" y="${H - B + 18}">0</text>
<text x="${L}" y="${H - 12}" fill="#1f77b4">bytes in use (solid, left): spread ${(verdict.bytes.spread * 100).toFixed(3)}% after warm-up</text>
<text x="${W - R}" y="${H - 12}" text-anchor="end" fill="#d62728">wasm heap (dashed, right)</text>
</svg>
`;
}

async function main() {
  const arg = (k, d) => {
    const i = process.argv.indexOf(`--${k}`);
    return i > 0 ? process.argv[i + 1] : d;
  };
  const ops = Number(arg('ops', 1e6));
  const sample = Number(arg('sample', 1e4));
  const variant = arg('variant', 'simd');
  const seed = Number(arg('seed', 1));
  const out = path.resolve(root, arg('out', 'bench/out'));
  const { init } = await import('../dist/index.js');
  const wt = await init({ variant });
  const { samples, seconds, verdict } = soak(wt, { ops, sample, seed, log: (s) => console.log(s) });
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'soak.csv'), 'ops,bytes_in_use,tensors,heap_bytes\n' +
    samples.map((s) => `${s.ops},${s.bytes},${s.tensors},${s.heap}`).join('\n') + '\n');
  const title = `weft soak: ${ops.toLocaleString('en')} mixed ops in tidy (${variant}, seed ${seed}), wt.memory() every ${sample.toLocaleString('en')}`;
  writeFileSync(path.join(out, 'soak.svg'), svg(samples, verdict, title));
  const f = (s) => `mean ${s.mean.toFixed(0)}, min ${s.min}, max ${s.max}, spread ${(s.spread * 100).toFixed(3)}%`;
  console.log(`soak: ${ops} ops in ${seconds.toFixed(1)} s (${variant}), ${samples.length} samples, warm-up ${verdict.warmupSamples}`);
  console.log(`soak: bytes in use: ${f(verdict.bytes)}`);
  console.log(`soak: live tensors: ${f(verdict.tensors)}`);
  console.log(`soak: wasm heap: ${f(verdict.heap)}`);
  console.log(`soak: flat within 1% after warm-up: ${verdict.flat ? 'yes' : 'NO'}; wrote ${path.relative(root, out)}/soak.svg and soak.csv`);
  const after = wt.memory();
  if (!verdict.flat || after.tensors !== 0) process.exit(1);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main();
