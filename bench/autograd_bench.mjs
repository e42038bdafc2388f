// Autograd benchmarks (issue 15), weft only (the training step beside
// tfjs-wasm and jax-js is bench/train_bench.mjs, `node bench/run.mjs --only train`):
//   node bench/autograd_bench.mjs [weft-simd|weft-simd-threads] [--threads N] [--reps N]
// - the cost of autograd on plain tensors: a 4-element add (x1000 per
//   sample) before anything in the process touched autograd, then after
//   autograd registered its kernels (a tensor required grad), on plain
//   tensors: the Autograd key is never in their key set, so the two match;
//   then the same add on a tensor that requires grad (records AddBackward0).
//   Likewise a view (narrow), which after registration also records its base
//   (ADInplaceOrView, so a later in-place write can rebase the base's history).
// - an MLP 784 -> 256 -> 10 at batch 64 (relu, logSoftmax, mean of the
//   picked log-probabilities as the loss): forward alone, and forward +
//   backward, with the ratio backward / forward.
// - the rows of a 64 x 256 tensor, each squared and summed, then backward:
//   through x.unbind(0) (one UnbindBackward0, its gradient one stack) and
//   through 64 x.select(0, i) (a SelectBackward0 each, every one a zeroed
//   64 x 256 gradient summed into x's: how weft differentiated unbind before
//   it had multi-output nodes).
// Prints one JSON line per workload: name, build, threads, ms.
import { libArgs, medianTimes } from './peer_util.mjs';

const a = libArgs();
const variant = a.lib === 'weft-simd' ? 'simd' : 'simd-threads';
const { init } = await import('weft');
const wt = await init({ variant });
await wt.threadsReady(); // the pthread workers load after init()
if (variant === 'simd-threads') wt.setNumThreads(a.threads);
const threads = wt.getNumThreads();

const adds = (x, y) => () => { for (let i = 0; i < 1000; i++) x.add(y).dispose(); };
const p = wt.tensor([1, 2, 3, 4]);
const q = wt.tensor([5, 6, 7, 8]);
const narrows = (x) => () => { for (let i = 0; i < 1000; i++) x.narrow(0, 1, 2).dispose(); };
const before = await medianTimes({ add4_x1000_before_autograd: adds(p, q), narrow4_x1000_before_autograd: narrows(p) },
  a.reps, a.idleMs);

wt.manualSeed(0);
const w1 = wt.randn(256, 784).mul(0.05).requiresGrad_(); // autograd registers its kernels here
const b1 = wt.zeros(256, { requiresGrad: true });
const w2 = wt.randn(10, 256).mul(0.05).requiresGrad_();
const b2 = wt.zeros(10, { requiresGrad: true });
const x = wt.randn(64, 784);
const onehot = wt.zeros(64, 10);
onehot.narrow(1, 0, 1).fill_(1);
const r = wt.tensor([1, 2, 3, 4], { requiresGrad: true });

const rowsX = wt.randn(64, 256, { requiresGrad: true });
const rowsLoss = (rows) => rows.map((t) => t.mul(t).sum()).reduce((u, v) => u.add(v));
const rowsBackward = (pieces) => () => wt.tidy(() => {
  rowsLoss(pieces()).backward();
  rowsX.grad = null;
});

const forward = () => wt.linear(wt.linear(x, w1, b1).relu(), w2, b2).logSoftmax(1).mul(onehot).sum().div(-64);
const after = await medianTimes({
  add4_x1000_after_autograd_plain: adds(p, q),
  add4_x1000_requires_grad: adds(r, q),
  narrow4_x1000_after_autograd_plain: narrows(p),
  narrow4_x1000_requires_grad: narrows(r),
  mlp_forward: () => wt.tidy(() => { forward(); }),
  rows64x256_unbind_backward: rowsBackward(() => rowsX.unbind(0)),
  rows64x256_select_backward: rowsBackward(() => Array.from({ length: 64 }, (_, i) => rowsX.select(0, i))),
  mlp_forward_backward: () => wt.tidy(() => {
    forward().backward();
    for (const t of [w1, b1, w2, b2]) t.grad = null;
  }),
}, a.reps, a.idleMs);

const all = { ...before, ...after };
for (const [name, ms] of Object.entries(all)) {
  const row = { name, build: `wasm-${variant}`, threads, ms: +ms.toFixed(4) };
  if (name === 'mlp_forward_backward') row['backward/forward'] = +((ms - all.mlp_forward) / all.mlp_forward).toFixed(2);
  console.log(JSON.stringify(row));
}
process.exit(0);
