// conv2d and max_pool2d gradients (issue 15), one library per process:
//   node bench/conv_grad_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm> [--threads N] [--reps N] [--batch N]
// float32:
//   digits   [64, 1, 8, 8] -> 16 channels, 3x3, padding 1 (the demo CNN's layer)
//   resnet   [B, 64, 56, 56] -> 64 channels, 3x3, padding 1 (--batch B, 32 by default)
//   pool     max_pool2d 2x2 of [64, 16, 8, 8]
// Rows: forward alone (no grad), and forward + backward (the forward
// recorded, then the gradients of input, weight and bias for a given output
// gradient: weft's autograd.grad; tfjs-wasm's tf.grads in NHWC, when
// bench/peers has it installed); backward = the difference. weft in NCHW and
// channels_last. Warm-up, an idle wait, then the median of --reps runs;
// GFLOP/s counts 2 N Ho Wo Cout C k k per product (forward + backward: three).
import { createRequire } from 'node:module';
import { benchArgs, benchMain, tfjsInit, weftInit } from './peer_util.mjs';

const cli = benchArgs();
const bi = process.argv.indexOf('--batch');
const batch = bi > 0 ? Number(process.argv[bi + 1]) : 32;
const peerRequire = createRequire(new URL('./peers/package.json', import.meta.url));

// name: [N, C, H, W, Cout, k, padding]
const WORK = { digits: [64, 1, 8, 8, 16, 3, 1], resnet: [batch, 64, 56, 56, 64, 3, 1] };
const data = (n, seed) => new Float32Array(n).map((_, i) => ((i * 7919 + seed) % 1013) / 1013 - 0.5);
const products = ([n, c, h, w, cout, k]) => 2 * n * h * w * cout * c * k * k;

async function weft(variant) {
  const wt = await weftInit(variant, cli);
  const out = {};
  for (const [name, [n, c, h, w, cout, k, padding]] of Object.entries(WORK)) {
    for (const layout of ['nchw', 'channels_last']) {
      let x = wt.tensor(data(n * c * h * w, 1)).view([n, c, h, w]);
      if (layout === 'channels_last') x = x.contiguous({ memoryFormat: 'channels_last' });
      x.requiresGrad_();
      const wgt = wt.tensor(data(cout * c * k * k, 2)).view([cout, c, k, k]).requiresGrad_();
      const b = wt.tensor(data(cout, 3)).requiresGrad_();
      const gy = wt.tensor(data(n * cout * h * w, 4)).view([n, cout, h, w]);
      out[`${name} forward ${layout}`] = () => wt.noGrad(() => wt.conv2d(x, wgt, b, { padding }).dispose());
      // forward recorded, then the three gradients: backward = this row - forward
      out[`${name} forward+backward ${layout}`] = () => {
        const y = wt.conv2d(x, wgt, b, { padding });
        for (const g of wt.autograd.grad(y, [x, wgt, b], { gradOutputs: gy })) g.dispose();
        y.dispose();
      };
    }
  }
  const xp = wt.tensor(data(64 * 16 * 64, 5)).view([64, 16, 8, 8]).requiresGrad_();
  const gp = wt.tensor(data(64 * 16 * 16, 6)).view([64, 16, 4, 4]);
  out['pool forward'] = () => wt.noGrad(() => wt.maxPool2d(xp, 2).dispose());
  out['pool forward+backward'] = () => {
    const y = wt.maxPool2d(xp, 2);
    wt.autograd.grad(y, [xp], { gradOutputs: gp })[0].dispose();
    y.dispose();
  };
  return out;
}

async function tfjsWasm() {
  const tf = await tfjsInit(peerRequire, cli);
  const out = {};
  for (const [name, [n, c, h, w, cout, k]] of Object.entries(WORK)) {
    const x = tf.tensor4d(data(n * c * h * w, 1), [n, h, w, c]);
    const f = tf.tensor4d(data(k * k * c * cout, 2), [k, k, c, cout]);
    const gy = tf.tensor4d(data(n * cout * h * w, 4), [n, h, w, cout]);
    out[`${name} forward nhwc`] = () => {
      const y = tf.conv2d(x, f, 1, 'same');
      y.dataSync();
      y.dispose();
    };
    const grads = tf.grads((a, b) => tf.conv2d(a, b, 1, 'same'));
    out[`${name} forward+backward nhwc`] = () => {
      const [gx, gf] = grads([x, f], gy);
      gx.dataSync();
      gf.dataSync();
      gx.dispose();
      gf.dispose();
    };
  }
  return out;
}

const libs = {
  'weft-simd': () => weft('simd'),
  'weft-simd-threads': () => weft('simd-threads'),
  'tfjs-wasm': tfjsWasm,
};
await benchMain('bench/conv_grad_bench.mjs', libs, cli, (n, ms) => {
  const key = Object.keys(WORK).find((k) => n.startsWith(k));
  if (!key) return {};
  const f = products(WORK[key]) * (n.includes('backward') ? 3 : 1);
  return { gflops: +(f / ms / 1e6).toFixed(2) };
});
