// Training-step benchmarks (issue 15), one library per process:
//   node bench/train_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm|tfjs-cpu|jax-js|jax-js-jit> [--threads N] [--reps N]
//                              [--clock wall|cpu]
// One SGD training step (forward, mean cross entropy over class indices,
// backward, parameter update with lr 0.05) on fixed data, batch 64:
// - mlp: 784 -> 256 (relu) -> 10
// - cnn: the digits CNN, [64, 1, 8, 8] -> conv2d 1->16 3x3 pad 1 -> relu ->
//   maxPool2d 2 -> flatten -> linear 256 -> 10
// weft: wt.linear / wt.conv2d / wt.maxPool2d, wt.crossEntropy, backward(),
// wt.optim.SGD (zeroGrad with setToNone); weft also times the forward alone
// and forward + backward (no update), for the backward / forward ratio (tfjs the forward too).
// tfjs-wasm: tf.variableGrads +
// tf.train.sgd (tfjs-core's gradients registered from its ESM build, since
// its Node bundle registers none); NHWC conv and pool, tfjs's layout.
// tfjs-cpu: the same on tfjs's plain-JS CPU backend, the only tfjs backend
// here with conv2d's gradient (its wasm backend has no Conv2DBackpropFilter).
// jax-js: grad of the loss over a parameter list and a manual SGD update
// (its arrays are reference counted: every use but the last takes .ref);
// jax-js-jit: the same with valueAndGrad under jit (its fused kernels).
// Before timing, each library trains 6 steps from the same weights; a row
// is printed only when its loss decreased (losses: first and last), so no
// library is timed doing nothing. Prints one JSON line per workload: name,
// build, threads, ms, reps, loss0, loss5.
import { createRequire, register } from 'node:module';
import { benchArgs, medianTimes, tfjsInit } from './peer_util.mjs';

const a = benchArgs();
const peerRequire = createRequire(new URL('./peers/package.json', import.meta.url));
const B = 64, IN = 784, HID = 256, OUT = 10, C1 = 16, LR = 0.05;

// deterministic data and weights, the same numbers for every library
function values(n, seed, scale) {
  const v = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = (s / 2 ** 32 - 0.5) * 2 * scale;
  }
  return v;
}
const labels = Int32Array.from({ length: B }, (_, i) => (i * 7) % OUT);
const mlpInit = { x: values(B * IN, 1, 1), w1: values(HID * IN, 2, 1 / Math.sqrt(IN)), b1: new Float32Array(HID),
  w2: values(OUT * HID, 3, 1 / Math.sqrt(HID)), b2: new Float32Array(OUT) };
const cnnInit = { x: values(B * 64, 4, 1), wc: values(C1 * 9, 5, 1 / 3), bc: new Float32Array(C1),
  wl: values(OUT * 256, 6, 1 / 16), bl: new Float32Array(OUT) };
// NCHW [64,1,8,8] and OIHW [16,1,3,3] as NHWC / HWIO for tfjs (one input channel: only the filter moves)
const hwio = (w) => Float32Array.from({ length: w.length }, (_, i) => w[(i % C1) * 9 + Math.floor(i / C1)]);
// the linear weight [10, 256] reads the flattened NCHW [16, 4, 4]; tfjs flattens NHWC [4, 4, 16]
const nhwcLinear = (w) => Float32Array.from({ length: w.length }, (_, i) => {
  const o = Math.floor(i / 256), r = i % 256, hw = Math.floor(r / C1), c = r % C1;
  return w[o * 256 + c * 16 + hw];
});

async function weft(variant) {
  const { init } = await import('weft');
  const wt = await init({ variant });
  await wt.threadsReady(); // the pthread workers load after init()
  if (variant === 'simd-threads') wt.setNumThreads(a.threads);
  a.threads = wt.getNumThreads();
  const target = wt.tensor(Array.from(labels), { dtype: 'int64' });
  const param = (v, shape) => wt.tensor(v).view(shape).requiresGrad_();
  const model = (name, x, params, forward) => {
    const opt = new wt.optim.SGD(params, { lr: LR });
    const fwd = () => wt.tidy(() => wt.crossEntropy(forward(x), target).item());
    const step = () => {
      const loss = wt.tidy(() => {
        const l = wt.crossEntropy(forward(x), target);
        l.backward();
        return l.item();
      });
      opt.step();
      opt.zeroGrad({ setToNone: true });
      return loss;
    };
    const fwdBwd = () => { // the step without the update: backward's share
      wt.tidy(() => wt.crossEntropy(forward(x), target).backward());
      for (const p of params) p.grad = null;
    };
    return { name, fwd, fwdBwd, step };
  };
  const m = mlpInit;
  const mp = [param(m.w1, [HID, IN]), param(m.b1, [HID]), param(m.w2, [OUT, HID]), param(m.b2, [OUT])];
  const mlp = model('mlp', wt.tensor(m.x).view([B, IN]), mp,
    (x) => wt.linear(wt.linear(x, mp[0], mp[1]).relu(), mp[2], mp[3]));
  const c = cnnInit;
  const cp = [param(c.wc, [C1, 1, 3, 3]), param(c.bc, [C1]), param(c.wl, [OUT, 256]), param(c.bl, [OUT])];
  const cnn = model('cnn', wt.tensor(c.x).view([B, 1, 8, 8]), cp,
    (x) => wt.linear(wt.maxPool2d(wt.conv2d(x, cp[0], cp[1], 1, 1).relu(), 2).flatten(1), cp[2], cp[3]));
  return [mlp, cnn];
}

// tfjs-core's Node bundle registers no gradients. Its ESM build does
// (dist/register_all_gradients.js), into registries kept on globalThis and so
// shared with the bundle; but that build imports without file extensions and
// its package does not say "type": "module", so a loader hook adds '.js' and
// loads those files as ES modules.
async function registerTfjsGradients() {
  const hook = `
    export async function resolve(spec, ctx, next) {
      if (!spec.startsWith('.') || spec.endsWith('.js')) return next(spec, ctx);
      try { return await next(spec + '.js', ctx); } catch { return next(spec + '/index.js', ctx); }
    }
    export async function load(url, ctx, next) {
      const esm = url.includes('/@tensorflow/tfjs-core/dist/') && !url.endsWith('tf-core.node.js');
      return next(url, esm ? { ...ctx, format: 'module' } : ctx);
    }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  await import(new URL('./peers/node_modules/@tensorflow/tfjs-core/dist/register_all_gradients.js', import.meta.url));
}

// tfjs on `backend`: 'wasm', or 'cpu' (plain JS), which has the conv2d
// gradient kernels its wasm backend lacks (Conv2DBackpropFilter)
async function tfjs(backend) {
  const tf = peerRequire('@tensorflow/tfjs-core');
  await registerTfjsGradients();
  if (backend === 'wasm') {
    await tfjsInit(peerRequire, a);
  } else {
    peerRequire('@tensorflow/tfjs-backend-cpu');
    await tf.setBackend('cpu');
    await tf.ready();
    a.threads = 1;
  }
  const onehot = tf.oneHot(tf.tensor1d(labels, 'int32'), OUT);
  const model = (name, x, params, forward) => {
    const opt = tf.train.sgd(LR);
    const lossOf = () => tf.losses.softmaxCrossEntropy(onehot, forward(x));
    const step = () => tf.tidy(() => {
      const { value, grads } = tf.variableGrads(lossOf, params);
      opt.applyGradients(grads);
      return value.dataSync()[0];
    });
    const fwd = () => tf.tidy(() => lossOf().dataSync()[0]); // as weft's forward row: the loss read back
    return { name, fwd, step };
  };
  const v = (data, shape) => tf.variable(tf.tensor(data, shape));
  const vT = (data, shape) => tf.variable(tf.tidy(() => tf.transpose(tf.tensor(data, shape))));
  const m = mlpInit;
  // tfjs's dense weights are [in, out] (tf.layers.dense's kernel): the transposes of weft's, stored so
  // (its matMul with transposeB runs ~10x slower in the wasm backend)
  const mp = [vT(m.w1, [HID, IN]), v(m.b1, [HID]), vT(m.w2, [OUT, HID]), v(m.b2, [OUT])];
  const mlp = model('mlp', tf.tensor(m.x, [B, IN]), mp, (x) => {
    const h = tf.relu(tf.add(tf.matMul(x, mp[0]), mp[1]));
    return tf.add(tf.matMul(h, mp[2]), mp[3]);
  });
  const c = cnnInit;
  const cp = [v(hwio(c.wc), [3, 3, 1, C1]), v(c.bc, [C1]), vT(nhwcLinear(c.wl), [OUT, 256]), v(c.bl, [OUT])];
  const cnn = model('cnn', tf.tensor(c.x, [B, 8, 8, 1]), cp, (x) => {
    const h = tf.maxPool(tf.relu(tf.add(tf.conv2d(x, cp[0], 1, 'same'), cp[1])), 2, 2, 'valid');
    return tf.add(tf.matMul(tf.reshape(h, [B, 256]), cp[2]), cp[3]);
  });
  return [mlp, cnn];
}

async function jaxJs(jit) {
  const jax = await import(new URL('./peers/node_modules/@jax-js/jax/dist/index.js', import.meta.url));
  const { numpy: np, nn, lax } = jax;
  await jax.init('wasm');
  jax.defaultDevice('wasm');
  a.threads = 1; // Node gives it no workers
  const onehot = nn.oneHot(np.array(labels, { dtype: np.int32 }), OUT);
  // mean cross entropy; owns logits
  const xent = (logits) => nn.logSoftmax(logits, -1).mul(onehot.ref).sum().mul(-1 / B);
  const model = (name, x, init, forward) => {
    let params = init;
    const lossOf = (p) => xent(forward(x.ref, p));
    const vg = jit ? jax.jit(jax.valueAndGrad(lossOf)) : jax.valueAndGrad(lossOf);
    const step = async () => {
      const [loss, grads] = vg(params.map((p) => p.ref));
      params = params.map((p, i) => p.sub(grads[i].mul(LR)));
      await jax.blockUntilReady(params);
      return (await loss.data())[0];
    };
    return { name, step };
  };
  const arr = (data, shape) => np.array(data).reshape(shape);
  const m = mlpInit;
  const mlp = model('mlp', arr(m.x, [B, IN]), [arr(m.w1, [HID, IN]), arr(m.b1, [HID]), arr(m.w2, [OUT, HID]),
    arr(m.b2, [OUT])], (x, [w1, b1, w2, b2]) => {
    const h = nn.relu(np.matmul(x, w1.transpose()).add(b1));
    return np.matmul(h, w2.transpose()).add(b2);
  });
  const c = cnnInit;
  const cnn = model('cnn', arr(c.x, [B, 1, 8, 8]), [arr(c.wc, [C1, 1, 3, 3]), arr(c.bc, [C1]), arr(c.wl, [OUT, 256]),
    arr(c.bl, [OUT])], (x, [wc, bc, wl, bl]) => {
    const y = nn.relu(lax.conv(x, wc, [1, 1], [[1, 1], [1, 1]]).add(bc.reshape([C1, 1, 1])));
    const p = y.reshape([B, C1, 4, 2, 4, 2]).max([3, 5]); // 2x2 max pooling, stride 2
    return np.matmul(p.reshape([B, 256]), wl.transpose()).add(bl);
  });
  return [mlp, cnn];
}

// Trains `steps` steps; { loss0, lossN } or the error that stopped it.
async function trains(model, steps) {
  try {
    const losses = [];
    for (let i = 0; i < steps; i++) losses.push(await model.step());
    return { loss0: losses[0], lossN: losses[steps - 1] };
  } catch (e) {
    return { error: e.message.split('\n')[0] };
  }
}

const libs = { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads'),
  'tfjs-wasm': () => tfjs('wasm'), 'tfjs-cpu': () => tfjs('cpu'), 'jax-js': () => jaxJs(false),
  'jax-js-jit': () => jaxJs(true) };
if (!libs[a.lib]) {
  console.error(`usage: train_bench.mjs <${Object.keys(libs).join('|')}> [--threads N] [--reps N] [--clock wall|cpu]`);
  process.exit(2);
}
const want = a.threads;
const models = await libs[a.lib]();
if (a.threads !== want) {
  console.error(`train_bench ${a.lib}: ${want} threads asked, it runs ${a.threads}; skipped`);
  process.exit(0);
}
const build = a.lib.startsWith('weft-') ? `wasm-${a.lib.slice(5)}` : a.lib;
// Two timing passes: the steps, then the forward (and forward + backward)
// rows on the weights the steps left, which no update changes between calls.
// Interleaved with the steps, every forward met weights updated in place:
// tfjs-wasm then builds a new XNNPACK operator and repacks its weights on
// each call (2.7 ms of CPU for a 1.2 ms forward here), a first call timed
// as a forward; weft drops its packed weight too (by the version counter).
const work = {}, fixed = {}, checked = {};
for (const m of models) {
  const t = await trains(m, 6);
  if (t.error) {
    const why = a.lib.startsWith('weft') && m.name === 'cnn' ? 'needs conv2d backward: ' : '';
    console.error(`train_bench ${a.lib}: ${m.name} skipped (${why}${t.error})`);
    continue;
  }
  if (!(t.lossN < t.loss0)) {
    console.error(`train_bench ${a.lib}: ${m.name} does not train (loss ${t.loss0} -> ${t.lossN}); not timed`);
    process.exitCode = 1;
    continue;
  }
  checked[m.name] = t;
  work[`${m.name}_step`] = m.step;
  if (m.fwd) fixed[`${m.name}_forward`] = m.fwd;
  if (m.fwdBwd) fixed[`${m.name}_forward_backward`] = m.fwdBwd;
}
const ms = { ...(await medianTimes(work, a.reps, a.idleMs, a.clock)),
  ...(await medianTimes(fixed, a.reps, a.idleMs, a.clock)) };
for (const [n, v] of Object.entries(ms)) {
  const t = checked[n.split('_')[0]];
  console.log(JSON.stringify({ name: n, build, threads: a.threads, ms: +v.toFixed(3), reps: a.reps,
    loss0: +t.loss0.toFixed(4), loss5: +t.lossN.toFixed(4), ...(a.clock === 'cpu' ? { clock: 'cpu' } : {}) }));
}
process.exit();
