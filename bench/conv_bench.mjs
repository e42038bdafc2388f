// conv2d benchmarks (issue 12), one library per process:
//   node bench/conv_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm|onnxruntime-web> [--threads N] [--reps N]
// float32, batch 8:
//   conv3x3     [8, 64, 56, 56] -> 64 channels, 3x3, stride 1, padding 1
//   depthwise3x3 [8, 64, 56, 56], 3x3, groups 64, padding 1
//   conv1x1     [8, 128, 28, 28] -> 128 channels, 1x1
// Each library in its own layouts: weft twice, contiguous NCHW (layout
// "nchw") and channels_last ("channels_last"), the same
// tensors' memory order being the only difference, and channels_last
// through inference's wt._conv2dFused ("channels_last_fused", its weight
// packed once and kept; a 3x3 of 64 channels runs Winograd); tfjs-wasm (XNNPACK) in
// NHWC, its only conv layout (conv2d / depthwiseConv2d, filter HWIO / HWC1);
// onnxruntime-web in NCHW, its only Conv layout, with the weight and bias as
// initializers of a one-node model (so it may prepack them, as a real model
// lets it). Warm-up, an idle wait, then the median of --reps runs. Prints one
// JSON line per workload and layout: name, build, layout, threads, ms,
// GFLOP/s = 2 N Ho Wo Cout (C / groups) kh kw / time.
import { createRequire } from 'node:module';
import { benchArgs, benchMain, onnxModel, ortInit, ortWorkload, tfjsInit, weftInit } from './peer_util.mjs';

const cli = benchArgs();
const peerRequire = createRequire(new URL('./peers/package.json', import.meta.url));

// name: [N, C, H, W, Cout, k, padding, groups]
const WORK = {
  conv3x3: [8, 64, 56, 56, 64, 3, 1, 1],
  depthwise3x3: [8, 64, 56, 56, 64, 3, 1, 64],
  conv1x1: [8, 128, 28, 28, 128, 1, 0, 1],
};
const data = (n, seed) => new Float32Array(n).map((_, i) => ((i * 7919 + seed) % 1013) / 1013 - 0.5);
const flops = ([n, c, h, w, cout, k, p, g]) => {
  const ho = h + 2 * p - k + 1, wo = w + 2 * p - k + 1;
  return 2 * n * ho * wo * cout * (c / g) * k * k;
};

async function weft(variant) {
  const wt = await weftInit(variant, cli);
  const out = {};
  for (const [name, [n, c, h, w, cout, k, padding, groups]] of Object.entries(WORK)) {
    const x = wt.tensor(data(n * c * h * w, 1)).view([n, c, h, w]);
    const wgt = wt.tensor(data(cout * (c / groups) * k * k, 2)).view([cout, c / groups, k, k]);
    const b = wt.tensor(data(cout, 3));
    const xcl = x.contiguous({ memoryFormat: 'channels_last' });
    out[`${name} nchw`] = () => wt.conv2d(x, wgt, b, { padding, groups }).dispose();
    out[`${name} channels_last`] = () => wt.conv2d(xcl, wgt, b, { padding, groups }).dispose();
    // inference's op, as tfjs's fused conv2d below (its algorithm may differ: Winograd for a 3x3)
    out[`${name} channels_last_fused`] = () => wt._conv2dFused(xcl, wgt, b, { padding, groups }).dispose();
  }
  return out;
}

async function tfjsWasm() {
  const tf = await tfjsInit(peerRequire, cli);
  const out = {};
  for (const [name, [n, c, h, w, cout, k, padding, groups]] of Object.entries(WORK)) {
    const x = tf.tensor4d(data(n * c * h * w, 1), [n, h, w, c]);
    const b = tf.tensor1d(data(cout, 3));
    const pad = padding ? 'same' : 'valid';
    let run;
    if (groups === 1) {
      const f = tf.tensor4d(data(k * k * c * cout, 2), [k, k, c, cout]);
      run = () => tf.add(tf.conv2d(x, f, 1, pad), b);
      // fused bias, as a model converter would emit it
      if (tf.fused?.conv2d) run = () => tf.fused.conv2d({ x, filter: f, strides: 1, pad, bias: b });
    } else {
      const f = tf.tensor4d(data(k * k * c, 2), [k, k, c, 1]);
      run = () => tf.add(tf.depthwiseConv2d(x, f, 1, pad), b);
      if (tf.fused?.depthwiseConv2d) run = () => tf.fused.depthwiseConv2d({ x, filter: f, strides: 1, pad, bias: b });
    }
    out[`${name} nhwc`] = () => {
      const r = run();
      r.dataSync();
      r.dispose();
    };
  }
  return out;
}

async function onnxruntimeWeb() {
  const ort = ortInit(peerRequire, cli.threads);
  const F32 = 1;
  const out = {};
  for (const [name, [n, c, h, w, cout, k, padding, groups]] of Object.entries(WORK)) {
    const ho = h + 2 * padding - k + 1, wo = w + 2 * padding - k + 1;
    const wShape = [cout, c / groups, k, k];
    const model = onnxModel('Conv',
      [['x', F32, [n, c, h, w]], ['w', F32, wShape, data(cout * (c / groups) * k * k, 2)], ['b', F32, [cout], data(cout, 3)]],
      ['y', F32, [n, cout, ho, wo]],
      { kernel_shape: { ints: [k, k] }, pads: { ints: [padding, padding, padding, padding] }, group: { i: groups } });
    const feeds = { x: new ort.Tensor('float32', data(n * c * h * w, 1), [n, c, h, w]) };
    out[`${name} nchw`] = await ortWorkload(ort, model, feeds);
  }
  return out;
}

const libs = { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads'), 'tfjs-wasm': tfjsWasm,
  'onnxruntime-web': onnxruntimeWeb };
// key "<workload> <layout>": the layout goes into the build column
await benchMain('conv_bench.mjs', libs, cli, (key, m) => {
  const [name, layout] = key.split(' ');
  return { name, layout, 'GFLOP/s': +(flops(WORK[name]) / (m * 1e6)).toFixed(2) };
});
