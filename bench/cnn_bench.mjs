// Benchmark W9 (issue 23): eval-mode CNNs, batch 1, 3x224x224 float32, ms
// per image, one library per process:
//   node bench/cnn_bench.mjs <weft-simd-threads|weft-simd|onnxruntime-web> [--threads N] [--reps N]
// The models are torchvision's resnet18 and mobilenet_v2 with the weights of
// bench/models/gen_cnn_models.py (bench/models/out/, made by bench/run.mjs
// when missing). weft: the state dict from <model>.safetensors composed by
// bench/models/weft_cnn.mjs (BatchNorm folded into the convs, each conv +
// bias + activation + residual one _conv2d_fused call), in NCHW and in
// channels_last (the input's memory format; every activation follows it),
// and the same folded model unfused (conv2d, add, relu) as "unfused"; and
// through weft/models' modules (resnet18 / mobilenetV2, loadStateDict, eval:
// their own fused path) as "models nchw" / "models channels_last"; before
// timing, each one's logits for check.safetensors' input are compared with
// PyTorch's (max abs diff printed as max_abs_diff; over 1e-3 of the logits'
// range fails the run). onnxruntime-web: the <model>.onnx exported from the same
// weights (its only layout is NCHW). Prints one JSON line per model and
// layout: name ('W9 resnet18'), build, layout, threads, ms, reps.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { benchArgs, benchMain, ortInit, weftInit } from './peer_util.mjs';
import { buildCnn } from './models/weft_cnn.mjs';
import { models } from 'weft/models';

const cli = benchArgs();
const peerRequire = createRequire(new URL('./peers/package.json', import.meta.url));
const OUT = new URL('./models/out/', import.meta.url);
const MODELS = ['resnet18', 'mobilenet_v2'];
const read = (file) => readFileSync(new URL(file, OUT));
const checks = new Map(); // key -> max abs diff to PyTorch

// the logits' max abs diff to PyTorch's, recorded (over 1e-3 of their range fails the run)
function measure(key, y, want, range) {
  const got = y.reshape([-1]).toArray();
  const diff = Math.max(...got.map((v, i) => Math.abs(v - want[i])));
  if (!(diff <= 1e-3 * range)) throw new Error(`${key}: logits differ from PyTorch's by ${diff}`);
  checks.set(key, diff);
}

async function weft(variant) {
  const wt = await weftInit(variant, cli);
  const check = wt.loadSafetensors(read('check.safetensors'));
  const out = {};
  for (const name of MODELS) {
    const sd = wt.loadSafetensors(read(`${name}.safetensors`));
    const want = check[name].reshape([-1]).toArray();
    const range = Math.max(...want) - Math.min(...want);
    for (const [layout, fused] of [['nchw', true], ['channels_last', true], ['channels_last unfused', false]]) {
      const net = buildCnn(wt, name, sd, { fused });
      const x = layout.startsWith('channels_last') ? check.input.contiguous({ memoryFormat: 'channels_last' })
        : check.input.clone();
      const y = net.forward(x);
      const key = `W9 ${name}|${layout}`;
      measure(key, y, want, range);
      y.dispose();
      out[key] = () => net.forward(x).dispose();
    }
    for (const layout of ['nchw', 'channels_last']) {
      const model = name === 'resnet18' ? models(wt).resnet18() : models(wt).mobilenetV2();
      model.loadStateDict(sd);
      model.eval();
      if (layout === 'channels_last') model.to({ memoryFormat: layout });
      const x = check.input.contiguous({ memoryFormat: layout === 'nchw' ? 'contiguous_format' : layout });
      const run = () => wt.noGrad(() => model(x));
      const y = run();
      measure(`W9 ${name}|models ${layout}`, y, want, range);
      y.dispose();
      out[`W9 ${name}|models ${layout}`] = () => run().dispose();
    }
  }
  return out;
}

async function onnxruntimeWeb() {
  const ort = ortInit(peerRequire, cli.threads);
  const out = {};
  const input = new Float32Array(224 * 224 * 3).map((_, i) => ((i * 7919) % 1013) / 1013 - 0.5);
  for (const name of MODELS) {
    const s = await ort.InferenceSession.create(read(`${name}.onnx`), { executionProviders: ['wasm'] });
    const feeds = { input: new ort.Tensor('float32', input, [1, 3, 224, 224]) };
    out[`W9 ${name}|nchw`] = async () => {
      const r = await s.run(feeds);
      for (const t of Object.values(r)) t.dispose?.();
    };
  }
  return out;
}

const libs = { 'weft-simd-threads': () => weft('simd-threads'), 'weft-simd': () => weft('simd'),
  'onnxruntime-web': onnxruntimeWeb };
await benchMain('cnn_bench.mjs', libs, cli, (key) => {
  const [name, layout] = key.split('|');
  return { name, layout, ...(checks.has(key) ? { max_abs_diff: +checks.get(key).toExponential(2) } : {}) };
});
