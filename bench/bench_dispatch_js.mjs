// ns per call of a tiny op from JS (1-element add, and t() as a view):
//   typed binding    wt.add(a, b) / x.t(): overload choice, typed entry point, Tensor wrap
//   wt.ops.call      the boxed path: arguments pushed on the C stack, boxed call by name
// Each result is disposed inside the timed loop. Run: node bench/bench_dispatch_js.mjs [--json]
import { init } from '../js/index.js';

const json = process.argv.includes('--json');
const N = Number(process.env.WEFT_BENCH_N ?? 200000);

function time(fn, n = N) {
  for (let i = 0; i < Math.min(n, 20000); i++) fn(); // warm up (JIT)
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    const ns = Number(process.hrtime.bigint() - t0) / n;
    best = Math.min(best, ns);
  }
  return best;
}

for (const variant of ['simd', 'simd-threads']) {
  const wt = await init({ variant, threads: 1 });
  await wt.threadsReady(); // the pthread workers load after init()
  const a = wt.tensor([1], { dtype: 'float32' });
  const b = wt.tensor([2], { dtype: 'float32' });
  const x = wt.zeros(2, 3);
  const rows = [];
  const add = (name, ns) => rows.push({ name, build: variant, ns: Math.round(ns) });

  add('t: x.t() (core.js method over the generated typed entry point)', time(() => x.t().dispose()));
  add("t: wt.ops.call('t', x) (boxed)", time(() => wt.ops.call('t', x).dispose()));
  if (typeof wt.add === 'function') {
    add('add: wt.add(a, b) (generated typed binding)', time(() => wt.add(a, b).dispose()));
    add('add: a.add(b) (generated method)', time(() => a.add(b).dispose()));
    add('add: a.add(1) (.Scalar overload)', time(() => a.add(1).dispose()));
    add("add: wt.ops.call('add', a, b) (boxed)", time(() => wt.ops.call('add', a, b).dispose()));
    add("add: wt.ops.call('aten::add.Tensor', a, b) (boxed)", time(() => wt.ops.call('aten::add.Tensor', a, b).dispose()));
  }
  for (const t of [a, b, x]) t.dispose();
  for (const r of rows) {
    if (json) console.log(JSON.stringify(r));
    else console.log(`${r.build.padEnd(13)} ${String(r.ns).padStart(7)} ns/call  ${r.name}`);
  }
}
