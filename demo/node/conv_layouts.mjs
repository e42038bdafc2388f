// Seed 001's reason for channels_last: the same convolution from an NCHW
// input and from its channels_last copy, with the algorithm each one runs
// (explain()), the output's memory format and the time.
// node demo/node/conv_layouts.mjs [--quick]   (after npm run build)
import { init } from 'weft';

const quick = process.argv.includes('--quick');
const wt = await init();
const [n, c, h, w, cout] = quick ? [1, 8, 12, 12, 8] : [8, 64, 56, 56, 64];
const x = wt.rand([n, c, h, w]);
const xcl = x.contiguous({ memoryFormat: 'channels_last' });
const weight = wt.rand([cout, c, 3, 3]);
const bias = wt.rand([cout]);
const list = (a) => `[${a.join(', ')}]`;

function time(fn, reps) {
  fn().dispose();
  const ts = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn().dispose();
    ts.push(performance.now() - t0);
  }
  return ts.sort((a, b) => a - b)[reps >> 1];
}

const flops = 2 * n * h * w * cout * c * 9;
const results = [];
for (const [label, input] of [['NCHW', x], ['channels_last', xcl]]) {
  const plan = wt.explain('conv2d', input, weight, bias, { padding: 1 });
  const y = wt.conv2d(input, weight, bias, { padding: 1 });
  const ms = time(() => wt.conv2d(input, weight, bias, { padding: 1 }), quick ? 3 : 5);
  results.push(y);
  console.log(`${label.padEnd(14)} input stride ${list(input.stride()).padEnd(22)} algorithm ${plan.algorithm.padEnd(19)}` +
    ` output channels_last ${y.isContiguous('channels_last')}` +
    (quick ? '' : `  ${ms.toFixed(1)} ms  ${(flops / ms / 1e6).toFixed(1)} GFLOP/s`));
}
const [a, b] = results.map((t) => t.toArray().flat(Infinity));
console.log(`same values: ${a.every((v, i) => Math.abs(v - b[i]) <= 1e-4 * (1 + Math.abs(v)))}`);
for (const t of [x, xcl, weight, bias, ...results]) t.dispose();
