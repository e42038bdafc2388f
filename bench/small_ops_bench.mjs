// The cost of a small op and of pointwise math on views with a tiny inner
// dim (issue 14), weft beside PyTorch native in the same run.
//   node bench/small_ops_bench.mjs [--json] [--reps N]
// Rows:
//   add1      wt.add(a, b).dispose() on 1-element float32 tensors (ns)
//   tensor4   wt.tensor([1, 2, 3, 4]).dispose() (ns)
//   torch     the same calls in PyTorch (/usr/bin/python3, when torch imports)
//   tiny-*    an HWC image [512, 512, 3] viewed as CHW (permute(2, 0, 1)):
//             ms of the op on the view, beside the same op on a contiguous
//             copy; ratio = contiguous time / view time (1.0 = as fast)
import { spawnSync } from 'node:child_process';
import { init } from '../js/index.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const reps = Number(args[args.indexOf('--reps') + 1] || 5) || 5;
const N = Number(process.env.WEFT_BENCH_N ?? 200000);
const rows = [];
const emit = (r) => { rows.push(r); if (json) console.log(JSON.stringify(r)); };

// best of reps timed runs of n calls, after a warm-up (JIT), in ns per call
function perCall(fn, n = N) {
  for (let i = 0; i < Math.min(n, 20000); i++) fn();
  let best = Infinity;
  for (let r = 0; r < reps; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / n);
  }
  return best;
}

function medianMs(fn, n = 20) {
  for (let i = 0; i < 3; i++) fn();
  const t = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return t.sort((a, b) => a - b)[t.length >> 1];
}

// Each variant in a process of its own, as an app loads one: a second module
// in the process makes the shared JS wrappers polymorphic and its calls
// slower (measured: whichever loads second pays 200-450 ns more per call).
const only = args.includes('--variant') ? args[args.indexOf('--variant') + 1] : null;
if (only) {
  await variantRows(only);
  process.exit(0);
}
for (const variant of ['simd', 'simd-threads']) {
  const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--variant', variant, '--reps', String(reps)],
    { encoding: 'utf8', env: process.env });
  if (child.status !== 0) throw new Error(`small_ops_bench --variant ${variant}: ${child.stderr}`);
  for (const l of child.stdout.split('\n').filter((x) => x.startsWith('{'))) emit(JSON.parse(l));
}

async function variantRows(variant) {
  const out = (r) => console.log(JSON.stringify(r));
  const wt = await init({ variant, threads: 1 });
  await wt.threadsReady(); // the pthread workers load after init()
  const a = wt.tensor([1]);
  const b = wt.tensor([2]);
  out({ name: 'add1', build: `weft-${variant}`, ns: perCall(() => wt.add(a, b).dispose()) });
  out({ name: 'tensor4', build: `weft-${variant}`, ns: perCall(() => wt.tensor([1, 2, 3, 4]).dispose()) });
  const x = wt.rand([512, 512, 3]);
  const v = x.permute(2, 0, 1);
  const c = v.contiguous();
  const o = wt.rand([3, 512, 512]);
  const nd = x.narrow(2, 0, 2).permute(2, 0, 1); // 2 of 3 channels: not dense
  const ndc = nd.contiguous();
  const pairs = [
    ['tiny-add-view+contig', () => v.add(o), () => c.add(o)],
    ['tiny-add-contig+view', () => o.add(v), () => o.add(c)], // a CHW result: the view de-interleaved
    ['tiny-mul-scalar', () => v.mul(2), () => c.mul(2)],
    ['tiny-exp', () => v.exp(), () => c.exp()],
    ['tiny-mul-nondense', () => nd.mul(2), () => ndc.mul(2)],
  ];
  for (const [name, onView, onContig] of pairs) {
    const mv = medianMs(() => onView().dispose());
    const mc = medianMs(() => onContig().dispose());
    out({ name, build: `weft-${variant}`, viewMs: mv, contigMs: mc, ratio: mc / mv });
  }
  for (const t of [a, b, x, v, c, o, nd, ndc]) t.dispose();
}

const py = `
import timeit, torch
torch.set_num_threads(1)
a = torch.tensor([1.]); b = torch.tensor([2.])
n = ${N}
add = min(timeit.repeat(lambda: torch.add(a, b), number=n, repeat=${reps})) / n * 1e9
ten = min(timeit.repeat(lambda: torch.tensor([1., 2., 3., 4.]), number=n, repeat=${reps})) / n * 1e9
print(add, ten)
`;
const r = spawnSync('/usr/bin/python3', ['-c', py], { encoding: 'utf8' });
if (r.status === 0) {
  const [add, ten] = r.stdout.trim().split(/\s+/).map(Number);
  emit({ name: 'add1', build: 'torch-native', ns: add });
  emit({ name: 'tensor4', build: 'torch-native', ns: ten });
} else if (!json) {
  console.log('(PyTorch rows skipped: /usr/bin/python3 cannot import torch)');
}

if (!json) {
  console.log('small ops: ns per call (best of runs), ratio = PyTorch native ns / weft ns (> 1: weft faster)');
  for (const name of ['add1', 'tensor4']) {
    const torch = rows.find((x) => x.name === name && x.build === 'torch-native');
    for (const x of rows.filter((y) => y.name === name)) {
      const ratio = torch && x !== torch ? ` ${(torch.ns / x.ns).toFixed(2)}x` : '';
      console.log(`${name.padEnd(8)} ${x.build.padEnd(20)} ${x.ns.toFixed(0).padStart(6)} ns${ratio}`);
    }
  }
  console.log('tiny inner dim: ms on the CHW view of an HWC image vs a contiguous copy, ratio = contiguous / view');
  for (const x of rows.filter((y) => y.name.startsWith('tiny'))) {
    console.log(`${x.name.padEnd(22)} ${x.build.padEnd(20)} view ${x.viewMs.toFixed(3)} ms  contiguous ` +
      `${x.contigMs.toFixed(3)} ms  ${x.ratio.toFixed(2)}x`);
  }
}
