// The WebGPU matmul, convolution and pooling kernels in Chromium on its
// software adapter (SwiftShader): values against the cpu results of the same
// ops (odd sizes past one 64 x 64 tile, transposed and offset operands read
// through their strides, broadcast batches, int32, conv stride / padding /
// dilation / groups / depthwise / channels_last / bias, the pools with
// ceil_mode and channels_last), gradients through autograd against the cpu's,
// a few steps of training a conv + linear network, and the PyTorch fixtures
// of these ops (linalg.json, conv.json, pool.json, conv_grad.json) replayed on
// 'webgpu'.
//
// Tolerances (float32): a GPU product sums K in tiles of 16 per invocation,
// in another order than the cpu's packed GEMM and PyTorch's MKL, so products
// and convolutions compare within 1e-5 * (1 + |want|) to the fixtures and
// the cpu (gradients against the cpu within 3e-5); max pooling is exact, avg
// pooling sums a window in the cpu's order (2e-6). int32 is exact.
//   node --test tests/browser/webgpu-mm.test.mjs   (needs `npm run build` and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { webgpuPage } from './helpers.mjs';
import { loadFixture } from '../js/fixtures-lib.mjs';

// Installed in the page as window.K: tensors from descriptions on either
// device, and the comparison of a function's results on the cpu and on webgpu.
function pageLib() {
  const wt = window.wt;
  // deterministic values in [-1, 1] in steps of 1/16 (exact in float32)
  const vals = (n, seed = 1) => Array.from({ length: n }, (_, i) => (((i * 37 + seed * 11) % 33) - 16) / 16);
  const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
  // a tensor of shape `size` with values `seed`, on `device`, viewed through optional `view(t)`
  const make = (size, { seed = 1, dtype = 'float32', device = 'cpu', view } = {}) => {
    const n = size.reduce((a, b) => a * b, 1);
    let v = vals(n, seed);
    if (dtype === 'int32') v = v.map((x) => Math.round(x * 16));
    const base = wt.tensor(v.length ? v : [], { dtype }).reshape(size);
    const on = device === 'cpu' ? base : base.to(device);
    return view ? view(on) : on;
  };
  // a fixture tensor {storage, size, stride, offset, dtype}, strides kept on the device too
  const fromDesc = (a, device) => {
    const base = wt.tensor(a.storage.map(num), { dtype: a.dtype });
    const on = device === 'cpu' ? base : base.to(device);
    return on.asStrided(a.size, a.stride, a.offset);
  };
  const close = (got, want, e) => {
    if (Number.isNaN(want)) return Number.isNaN(got);
    if (!Number.isFinite(want)) return got === want;
    return Math.abs(got - want) <= e * (1 + Math.abs(want));
  };
  const flat = (v) => (Array.isArray(v) ? v.flat(Infinity) : [v]).map(Number);
  // first difference between a cpu tensor and a webgpu one: dtype, shape, strides of dims > 1, values
  const differ = async (want, got, tol, strides = true) => {
    if (got.device !== 'webgpu') return `device ${got.device}`;
    if (got.dtype !== want.dtype && !(want.dtype === 'int64' && got.dtype === 'int32')) return `dtype ${got.dtype} vs ${want.dtype}`;
    if (JSON.stringify(got.shape) !== JSON.stringify(want.shape)) return `shape ${got.shape} vs ${want.shape}`;
    const gs = got.stride(), ws = want.stride();
    if (strides && want.shape.some((n, d) => n > 1 && gs[d] !== ws[d])) return `strides ${gs} vs ${ws}`;
    const g = flat(await got.toArrayAsync()), w = flat(want.toArray({ bigint: false }));
    const i = w.findIndex((x, j) => !close(g[j], x, tol));
    return i < 0 ? null : `[${i}] ${g[i]} vs ${w[i]}`;
  };
  // fn over inputs made on the cpu and on webgpu; a description per input:
  // [size, opts] for make(), or a fixture description
  const compare = async (name, fn, inputs, tol = 1e-5) => {
    const mk = (d, device) => (Array.isArray(d) ? make(d[0], { ...d[1], device }) : d === null ? null : fromDesc(d, device));
    const cpu = inputs.map((d) => mk(d, 'cpu')), gpu = inputs.map((d) => mk(d, 'webgpu'));
    try {
      const want = fn(...cpu);
      const got = fn(...gpu);
      const ws = Array.isArray(want) ? want : [want], gs = Array.isArray(got) ? got : [got];
      for (let i = 0; i < ws.length; i++) {
        const d = await differ(ws[i], gs[i], tol);
        if (d) return `${name}: output ${i}: ${d}`;
      }
      for (const t of new Set([...ws, ...gs])) if (!cpu.includes(t) && !gpu.includes(t)) t.dispose();
      return null;
    } catch (e) {
      return `${name}: ${e.message}`;
    } finally {
      for (const t of [...cpu, ...gpu]) t?.dispose();
    }
  };
  // gradients: y = fn(...leaves) backward with a fixed grad_output, on both devices
  const compareGrad = async (name, fn, inputs, tol = 1e-5) => {
    const run = (device) => {
      const leaves = inputs.map(([size, o]) => make(size, { ...o, device }).requiresGrad_(true));
      const y = fn(...leaves);
      const go = make(y.shape, { seed: 7, device });
      y.backward(go);
      for (const t of [y, go]) t.dispose();
      return leaves;
    };
    let cpu = [], gpu = [];
    try {
      cpu = run('cpu');
      gpu = run('webgpu');
      for (let i = 0; i < cpu.length; i++) {
        if (!gpu[i].grad) return `${name}: input ${i} has no grad`;
        const d = await differ(cpu[i].grad, gpu[i].grad, tol);
        if (d) return `${name}: grad ${i}: ${d}`;
      }
      return null;
    } catch (e) {
      return `${name}: ${e.message}`;
    } finally {
      for (const t of [...cpu, ...gpu]) t.dispose();
    }
  };
  window.K = { vals, make, fromDesc, differ, compare, compareGrad, close, flat, num };
}

describe('webgpu matmul, conv and pooling (SwiftShader)', { timeout: 1200000 }, () => {
  const s = webgpuPage({ before, after }, { setup: pageLib, lib: true });
  const run = s.run;
  // a list of problems from the page must be empty
  const none = async (fn, arg) => {
    const r = await run(fn, arg);
    assert.ok(Array.isArray(r), JSON.stringify(r));
    assert.deepEqual(r.filter(Boolean), []);
  };

  test('mm / bmm / matmul / dot / mv: odd sizes, transposed and offset operands, broadcast batches, int32', () =>
    none(async (wt, K) => {
      const T = (t) => t.t(), out = [];
      const cases = [
        ['1x1x1', (a, b) => wt.mm(a, b), [[[1, 1]], [[1, 1], { seed: 2 }]]],
        ['3x5 @ 5x2', (a, b) => wt.mm(a, b), [[[3, 5]], [[5, 2], { seed: 2 }]]],
        ['65x17 @ 17x70 (past one tile)', (a, b) => wt.mm(a, b), [[[65, 17]], [[17, 70], { seed: 3 }]]],
        ['k = 40 (three k tiles)', (a, b) => wt.mm(a, b), [[[9, 40]], [[40, 66], { seed: 3 }]]],
        ['a transposed', (a, b) => wt.mm(a, b), [[[7, 9], { view: T }], [[7, 5], { seed: 2 }]]],
        ['b transposed', (a, b) => wt.mm(a, b), [[[9, 7]], [[5, 7], { seed: 2, view: T }]]],
        ['both transposed', (a, b) => wt.mm(a, b), [[[7, 9], { view: T }], [[5, 7], { seed: 2, view: T }]]],
        ['offset and strided views', (a, b) => wt.mm(a, b),
          [[[6, 10], { view: (t) => t.narrow(0, 1, 4).narrow(1, 2, 6) }], [[12, 5], { seed: 4, view: (t) => t.slice(0, 0, 12, 2) }]]],
        ['k = 0', (a, b) => wt.mm(a, b), [[[3, 0]], [[0, 4]]]],
        ['m = 0', (a, b) => wt.mm(a, b), [[[0, 3]], [[3, 4]]]],
        ['int32', (a, b) => wt.mm(a, b), [[[5, 6], { dtype: 'int32' }], [[6, 3], { dtype: 'int32', seed: 2 }]]],
        ['bmm', (a, b) => wt.bmm(a, b), [[[3, 5, 7]], [[3, 7, 4], { seed: 2 }]]],
        ['bmm transposed batches', (a, b) => wt.bmm(a, b), [[[3, 7, 5], { view: (t) => t.transpose(1, 2) }],
          [[4, 7, 3], { seed: 2, view: (t) => t.permute([2, 1, 0]) }]]],
        ['bmm expanded batch', (a, b) => wt.bmm(a, b), [[[1, 4, 6], { view: (t) => t.expand([5, 4, 6]) }], [[5, 6, 2], { seed: 2 }]]],
        ['matmul broadcast 4-D @ 3-D', (a, b) => wt.matmul(a, b), [[[2, 1, 3, 4]], [[5, 4, 6], { seed: 2 }]]],
        ['matmul 3-D @ 2-D (folded rows)', (a, b) => wt.matmul(a, b), [[[2, 3, 4]], [[4, 5], { seed: 2 }]]],
        ['matmul 1-D @ 3-D', (a, b) => wt.matmul(a, b), [[[4]], [[2, 4, 3], { seed: 2 }]]],
        ['matmul 3-D @ 1-D', (a, b) => wt.matmul(a, b), [[[2, 3, 4]], [[4], { seed: 2 }]]],
        ['dot', (a, b) => wt.dot(a, b), [[[11]], [[11], { seed: 2 }]]],
        ['mv', (a, b) => wt.mv(a, b), [[[5, 7]], [[7], { seed: 2 }]]],
        ['int32 bmm', (a, b) => wt.bmm(a, b), [[[2, 3, 4], { dtype: 'int32' }], [[2, 4, 5], { dtype: 'int32', seed: 3 }]]],
      ];
      for (const [name, fn, inputs] of cases) out.push(await K.compare(name, fn, inputs));
      return out;
    }));

  test('addmm / baddbmm / linear: bias in the GEMM store, beta and alpha, beta 0 ignores NaN, out=', () =>
    none(async (wt, K) => {
      const out = [];
      const cases = [
        ['addmm row bias', (s, a, b) => wt.addmm(s, a, b), [[[6]], [[4, 5], { seed: 2 }], [[5, 6], { seed: 3 }]]],
        ['addmm beta alpha', (s, a, b) => wt.addmm(s, a, b, { beta: 0.5, alpha: -2 }), [[[4, 6]], [[4, 5], { seed: 2 }], [[5, 6], { seed: 3 }]]],
        ['addmm beta 0', (s, a, b) => wt.addmm(s.mul(NaN), a, b, { beta: 0 }), [[[4, 1]], [[4, 5], { seed: 2 }], [[5, 6], { seed: 3 }]]],
        ['addmm int32', (s, a, b) => wt.addmm(s, a, b, { beta: 2, alpha: 3 }),
          [[[3], { dtype: 'int32' }], [[2, 4], { dtype: 'int32', seed: 2 }], [[4, 3], { dtype: 'int32', seed: 3 }]]],
        ['baddbmm', (s, a, b) => wt.baddbmm(s, a, b, { beta: 1.5, alpha: 0.5 }), [[[3, 1, 4]], [[3, 2, 5], { seed: 2 }], [[3, 5, 4], { seed: 3 }]]],
        ['linear 2-D', (x, w, b) => wt.linear(x, w, b), [[[5, 7]], [[3, 7], { seed: 2 }], [[3], { seed: 3 }]]],
        ['linear 3-D', (x, w, b) => wt.linear(x, w, b), [[[2, 5, 7]], [[3, 7], { seed: 2 }], [[3], { seed: 3 }]]],
        ['linear 4-D', (x, w, b) => wt.linear(x, w, b), [[[2, 2, 3, 7]], [[3, 7], { seed: 2 }], [[3], { seed: 3 }]]],
        ['linear no bias', (x, w) => wt.linear(x, w), [[[5, 7]], [[3, 7], { seed: 2 }]]],
        ['mm out=', (a, b, o) => wt.mm(a, b, { out: o }), [[[3, 4]], [[4, 2], { seed: 2 }], [[0]]]],
        ['addmm out= self (one buffer read and written)', (s, a, b) => wt.addmm(s, a, b, { out: s }),
          [[[3, 2]], [[3, 4], { seed: 2 }], [[4, 2], { seed: 3 }]]],
      ];
      for (const [name, fn, inputs] of cases) out.push(await K.compare(name, fn, inputs));
      return out;
    }));

  test('conv2d / conv1d: stride, padding, dilation, groups, depthwise, channels_last, bias, same', () =>
    none(async (wt, K) => {
      const CL = (t) => t.contiguous({ memoryFormat: 'channels_last' });
      const out = [];
      const conv = (o) => (x, w, b) => wt.conv2d(x, w, b ?? null, o);
      const cases = [
        ['plain + bias', conv({}), [[[2, 3, 7, 6]], [[4, 3, 3, 3], { seed: 2 }], [[4], { seed: 3 }]]],
        ['stride 2 padding 1', conv({ stride: 2, padding: 1 }), [[[1, 2, 9, 8]], [[3, 2, 3, 3], { seed: 2 }]]],
        ['stride [1, 3] padding [2, 0] dilation [2, 1]', conv({ stride: [1, 3], padding: [2, 0], dilation: [2, 1] }),
          [[[2, 2, 7, 11]], [[3, 2, 3, 2], { seed: 2 }], [[3], { seed: 5 }]]],
        ['groups 2', conv({ groups: 2, padding: 1 }), [[[1, 4, 5, 5]], [[6, 2, 3, 3], { seed: 2 }], [[6], { seed: 3 }]]],
        ['depthwise', conv({ groups: 3, padding: 1 }), [[[2, 3, 6, 5]], [[3, 1, 3, 3], { seed: 2 }]]],
        ['depthwise multiplier 2', conv({ groups: 3, stride: 2 }), [[[1, 3, 7, 7]], [[6, 1, 3, 3], { seed: 2 }], [[6], { seed: 4 }]]],
        ['1x1', conv({}), [[[2, 5, 4, 3]], [[7, 5, 1, 1], { seed: 2 }]]],
        ['channels_last input', conv({ padding: 1 }), [[[2, 3, 5, 6], { view: CL }], [[4, 3, 3, 3], { seed: 2 }], [[4], { seed: 3 }]]],
        ['channels_last weight', conv({ stride: 2 }), [[[1, 3, 6, 6]], [[4, 3, 2, 2], { seed: 2, view: CL }]]],
        ['channels_last groups', conv({ groups: 2 }), [[[1, 4, 5, 5], { view: CL }], [[4, 2, 3, 3], { seed: 2, view: CL }]]],
        ["padding 'same' (even kernel)", conv({ padding: 'same' }), [[[1, 2, 5, 6]], [[3, 2, 2, 4], { seed: 2 }]]],
        ["padding 'valid'", conv({ padding: 'valid' }), [[[1, 2, 5, 6]], [[3, 2, 3, 3], { seed: 2 }]]],
        ['unbatched', conv({ padding: 1 }), [[[3, 5, 5]], [[2, 3, 3, 3], { seed: 2 }]]],
        ['transposed input view', conv({}), [[[2, 3, 6, 5], { view: (t) => t.transpose(2, 3) }], [[2, 3, 2, 2], { seed: 2 }]]],
        ['many channels (k past a tile)', conv({ padding: 1 }), [[[1, 9, 6, 6]], [[70, 9, 2, 2], { seed: 2 }], [[70], { seed: 3 }]]],
        ['conv1d', (x, w, b) => wt.conv1d(x, w, b, { stride: 2, padding: 1 }), [[[2, 3, 11]], [[4, 3, 3], { seed: 2 }], [[4], { seed: 3 }]]],
        ['conv1d groups', (x, w) => wt.conv1d(x, w, null, { groups: 2, dilation: 2 }), [[[1, 4, 9]], [[2, 2, 3], { seed: 2 }]]],
      ];
      for (const [name, fn, inputs] of cases) out.push(await K.compare(name, fn, inputs));
      return out;
    }));

  test('max_pool2d (int32 indices) / avg_pool2d / adaptive_avg_pool2d: values, formats, ceil_mode', () =>
    none(async (wt, K) => {
      const CL = (t) => t.contiguous({ memoryFormat: 'channels_last' });
      const out = [];
      const cases = [
        ['max k2', (x) => wt.maxPool2d(x, 2), [[[2, 3, 6, 7]]]],
        ['max k3 s2 p1 with indices', (x) => wt.maxPool2d(x, 3, { stride: 2, padding: 1, returnIndices: true }), [[[2, 2, 7, 8]]]],
        ['max dilation 2 ceil', (x) => wt.maxPool2dWithIndices(x, [2, 3], { stride: [2, 1], dilation: 2, ceilMode: true }), [[[1, 2, 9, 8]]]],
        ['max channels_last', (x) => wt.maxPool2d(x, 3, { stride: 2, returnIndices: true }), [[[2, 3, 7, 7], { view: CL }]]],
        ['max unbatched', (x) => wt.maxPool2d(x, 2, { stride: 1 }), [[[3, 4, 5]]]],
        ['avg k3 s2 p1', (x) => wt.avgPool2d(x, 3, { stride: 2, padding: 1 }), [[[2, 2, 7, 8]]]],
        ['avg exclude pad, ceil', (x) => wt.avgPool2d(x, 3, { stride: 2, padding: 1, ceilMode: true, countIncludePad: false }), [[[1, 2, 8, 7]]]],
        ['avg divisor_override', (x) => wt.avgPool2d(x, 2, { divisorOverride: 3 }), [[[1, 2, 6, 6]]]],
        ['avg channels_last', (x) => wt.avgPool2d(x, 2), [[[2, 3, 6, 6], { view: CL }]]],
        ['adaptive 7x9 -> 3x4', (x) => wt.adaptiveAvgPool2d(x, [3, 4]), [[[2, 2, 7, 9]]]],
        ['adaptive 5 -> 5x2 channels_last', (x) => wt.adaptiveAvgPool2d(x, [5, 2]), [[[1, 3, 5, 5], { view: CL }]]],
        ['transposed input view', (x) => wt.maxPool2d(x, 2), [[[1, 2, 6, 5], { view: (t) => t.transpose(2, 3) }]]],
      ];
      for (const [name, fn, inputs] of cases) out.push(await K.compare(name, fn, inputs, 2e-6));
      return out;
    }));

  test('gradients through autograd on webgpu equal the cpu ones (mm, bmm, matmul, addmm, conv, pools)', () =>
    none(async (wt, K) => {
      const CL = (t) => t.contiguous({ memoryFormat: 'channels_last' });
      const out = [];
      const cases = [
        ['mm', (a, b) => wt.mm(a, b), [[[5, 7]], [[7, 66], { seed: 2 }]]],
        ['bmm', (a, b) => wt.bmm(a, b), [[[2, 3, 4]], [[2, 4, 5], { seed: 2 }]]],
        ['matmul batched', (a, b) => wt.matmul(a, b), [[[2, 3, 4]], [[2, 4, 5], { seed: 2 }]]],
        ['addmm (matrices)', (a, b) => wt.addmm(wt.zeros([3, 2], { device: a.device }), a, b, { alpha: 2 }), [[[3, 4]], [[4, 2], { seed: 2 }]]],
        ['linear no bias (transposed weight)', (x, w) => wt.linear(x, w), [[[4, 6]], [[3, 6], { seed: 2 }]]],
        ['conv2d + bias', (x, w, b) => wt.conv2d(x, w, b, { padding: 1 }), [[[2, 3, 5, 5]], [[4, 3, 3, 3], { seed: 2 }], [[4], { seed: 3 }]]],
        ['conv2d stride dilation', (x, w) => wt.conv2d(x, w, null, { stride: 2, dilation: 2, padding: 2 }), [[[1, 2, 8, 7]], [[3, 2, 3, 2], { seed: 2 }]]],
        ['conv2d groups', (x, w) => wt.conv2d(x, w, null, { groups: 2 }), [[[1, 4, 5, 5]], [[6, 2, 2, 2], { seed: 2 }]]],
        ['conv2d depthwise channels_last', (x, w, b) => wt.conv2d(x, w, b, { groups: 3, padding: 1 }),
          [[[2, 3, 5, 4], { view: CL }], [[3, 1, 3, 3], { seed: 2 }], [[3], { seed: 3 }]]],
        ['conv1d', (x, w) => wt.conv1d(x, w, null, { padding: 1 }), [[[2, 3, 9]], [[2, 3, 3], { seed: 2 }]]],
        ['max_pool2d overlapping', (x) => wt.maxPool2d(x, 3, { stride: 2, padding: 1 }), [[[2, 2, 7, 6]]]],
        ['max_pool2d channels_last', (x) => wt.maxPool2d(x, 2), [[[1, 3, 6, 6], { view: CL }]]],
        ['avg_pool2d overlapping ceil', (x) => wt.avgPool2d(x, 3, { stride: 2, padding: 1, ceilMode: true, countIncludePad: false }), [[[1, 2, 7, 8]]]],
        ['adaptive 7 -> 3', (x) => wt.adaptiveAvgPool2d(x, [3, 3]), [[[2, 2, 7, 7]]]],
      ];
      for (const [name, fn, inputs] of cases) out.push(await K.compareGrad(name, fn, inputs, 3e-5));
      return out;
    }));

  // (linear layers without bias: a bias's gradient sums over the batch, a reduction of the other family)
  test('a conv + pool + linear network trains on webgpu as on the cpu (plain gradient steps, L2 loss gradient)', async () => {
    const r = await run(async (wt, K) => {
      const train = (device) => {
        let w1 = K.make([4, 1, 3, 3], { device, seed: 2 }).mul(0.5), b1 = K.make([4], { device, seed: 3 });
        let w2 = K.make([3, 36], { device, seed: 4 }).mul(0.2), w3 = K.make([2, 3], { device, seed: 5 });
        const x = K.make([5, 1, 6, 6], { device, seed: 6 }), target = K.make([5, 2], { device, seed: 8 });
        for (let step = 0; step < 3; step++) {
          const ps = [w1, b1, w2, w3].map((p) => p.requiresGrad_(true));
          // max pooling is the nonlinearity (relu's and tanh's backward forms are the elementwise family's)
          const h = wt.conv2d(x, ps[0], ps[1], { padding: 1 });
          const y = wt.linear(wt.linear(wt.maxPool2d(h, 2).reshape([5, 36]), ps[2]), ps[3]);
          // the gradient of 0.5 * ||y - target||^2 (no reduction op needed)
          const gy = wt.sub(y.detach(), target);
          y.backward(gy);
          [w1, b1, w2, w3] = ps.map((p) => wt.sub(p.detach(), wt.mul(p.grad, 0.1)));
          for (const t of [...ps, h, y, gy]) t.dispose();
        }
        return [w1, b1, w2, w3, x, target];
      };
      const cpu = train('cpu'), gpu = train('webgpu');
      const out = [];
      for (let i = 0; i < 4; i++) out.push(await K.differ(cpu[i], gpu[i], 1e-4));
      for (const t of [...cpu, ...gpu]) t.dispose();
      return out;
    });
    assert.deepEqual(r, [null, null, null, null]);
  });

  test('explain() shows the tiled GEMM: 16 x 16 invocations, a grid of 64 x 64 tiles, workgroup memory', async () => {
    const r = await run((wt) => {
      const a = wt.zeros([130, 20], { device: 'webgpu' }), b = wt.zeros([20, 70], { device: 'webgpu' });
      const x = wt.zeros([1, 3, 8, 8], { device: 'webgpu' }), w = wt.zeros([2, 3, 3, 3], { device: 'webgpu' });
      const mm = wt.explain('mm', a, b), conv = wt.explain('conv2d', x, w), pool = wt.explain('max_pool2d', x, [2, 2]);
      for (const t of [a, b, x, w]) t.dispose();
      const brief = (p) => ({ kind: p.kind, program: p.program, wg: p.workgroupSize, grid: p.grid,
        tiles: /var<workgroup> ta: array<array<T, 64>, 16>/.test(p.wgsl) });
      return { mm: brief(mm), conv: brief(conv), pool: brief(pool) };
    });
    assert.deepEqual(r.mm, { kind: 'webgpu', program: 'gemm:matmul:float32', wg: [16, 16, 1], grid: [2, 3, 1], tiles: true });
    assert.deepEqual(r.conv, { kind: 'webgpu', program: 'gemm:conv:fwd:float32', wg: [16, 16, 1], grid: [1, 1, 1], tiles: true });
    assert.deepEqual({ ...r.pool, tiles: undefined }, { kind: 'webgpu', program: 'pool:max:fwd', wg: [64, 1, 1], grid: [1, 1, 1], tiles: undefined });
  });

  test('errors: mixed devices, int32 conv and pools, shapes as on the cpu; nothing leaks', async () => {
    const r = await run(async (wt) => {
      const err = (fn) => { try { fn().dispose?.(); return null; } catch (e) { return e.message; } };
      const g = wt.zeros([2, 3], { device: 'webgpu' }), c = wt.zeros([3, 2]);
      const gi = wt.zeros([1, 1, 4, 4], { dtype: 'int32', device: 'webgpu' }), wi = wt.zeros([1, 1, 2, 2], { dtype: 'int32', device: 'webgpu' });
      const x = wt.zeros([1, 1, 4, 4], { device: 'webgpu' }), cx = wt.zeros([1, 1, 4, 4]);
      const o = wt.empty([0], { device: 'webgpu' }), i64 = wt.empty([0], { dtype: 'int32' });
      const bg = wt.zeros([2, 2], { dtype: 'bool', device: 'webgpu' }), w = wt.zeros([1, 1, 2, 2], { device: 'webgpu' });
      const gy = wt.zeros([1, 1, 2, 2], { device: 'webgpu' }), ci = wt.zeros([1, 1, 2, 2], { dtype: 'int32' });
      const ct = c.t(), gt = g.t();
      const before = wt.memory();
      const out = {
        mixed: err(() => wt.mm(ct, gt)),
        convMixed: err(() => wt.conv2d(cx, w)),
        poolBackMixed: err(() => wt.maxPool2dWithIndicesBackward(gy, x, [2, 2], [2, 2], [0, 0], [1, 1], false, ci)),
        shapes: err(() => wt.mm(g, g)),
        convInt: err(() => wt.conv2d(gi, wi)),
        poolInt: err(() => wt.maxPool2d(gi, 2)),
        idxOut: err(() => wt.maxPool2dWithIndices(x, 2, { out: o, indices: i64 })),
        boolMm: err(() => wt.mm(bg, bg)),
      };
      await wt.webgpu.synchronize();
      const after = wt.memory();
      for (const t of [g, c, gi, wi, x, cx, o, i64, bg, w, gy, ci, ct, gt]) t.dispose();
      out.leak = [after.tensors - before.tensors, after.storages - before.storages];
      return out;
    });
    assert.match(r.mixed, /mm: Expected all tensors to be on the same device, but found at least two devices, cpu and webgpu!/);
    assert.match(r.convMixed, /conv2d: Expected all tensors to be on the same device, but found at least two devices, cpu and webgpu!/);
    assert.match(r.poolBackMixed, /max_pool2d_with_indices_backward: Expected all tensors to be on the same device, but found at least two devices, webgpu and cpu!/);
    assert.match(r.shapes, /mm: mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)/);
    assert.match(r.convInt, /conv2d: not implemented on the webgpu device for int32 yet/);
    assert.match(r.poolInt, /"max_pool2d" not implemented for 'int32'/);
    assert.match(r.idxOut, /max_pool2d_with_indices: Expected all tensors to be on the same device, but found at least two devices, webgpu and cpu!/);
    assert.match(r.boolMm, /"addmm_impl_cpu_" not implemented for 'bool'/);
    assert.deepEqual(r.leak, [0, 0]);
  });

  // ---- the PyTorch fixtures on 'webgpu' ----

  // cases whose tensors all have a webgpu dtype (float32, int32, bool)
  const onDevice = (descs) => descs.every((d) => ['float32', 'int32', 'bool'].includes(d.dtype));

  test('linalg.json and conv.json replayed on webgpu (float32 within 1e-5 relative; errors as on the cpu)', async () => {
    const cases = [...loadFixture('linalg.json').cases, ...loadFixture('conv.json').cases]
      .filter((c) => onDevice(c.args.filter((a) => a.tensor).map((a) => a.tensor)) &&
        !(c.expect.dtype && !['float32', 'int32', 'bool'].includes(c.expect.dtype)));
    const r = await run(async (wt, K, cs) => {
      const bad = [];
      // names of the keyword-only arguments of an overload, from its schema
      const kwOnly = (op) => {
        const s = wt.ops.schema(op);
        const inner = s.slice(s.indexOf('(') + 1, s.lastIndexOf(') ->')).split(', ');
        const star = inner.indexOf('*');
        return star < 0 ? [] : inner.slice(star + 1).map((p) => p.split('=')[0].trim().split(' ').pop());
      };
      for (const c of cs) {
        const made = [];
        const arg = (a) => {
          if (a.none) return null;
          if (a.list) return a.list;
          if (a.str !== undefined) return a.str;
          if (!a.tensor) return a.type === 'bool' ? Boolean(a.scalar) : K.num(a.scalar);
          const t = K.fromDesc(a.tensor, 'webgpu');
          made.push(t);
          return t;
        };
        let r;
        const where = `${c.op} ${JSON.stringify(c.args.map((a) => a.tensor ? [a.tensor.size, a.tensor.stride] : a)).slice(0, 160)}`;
        try {
          const vals = c.args.map(arg), kws = kwOnly(c.op);
          const pos = vals.slice(0, vals.length - kws.length);
          const kw = Object.fromEntries(kws.map((k, i) => [k, vals[pos.length + i]]));
          r = kws.length ? wt.ops.call(c.op, ...pos, kw) : wt.ops.call(c.op, ...pos);
          if (c.expect.error !== undefined) bad.push(`${where}: expected "${c.expect.error}", got a result`);
          else {
            const w = c.expect, st = r.stride();
            if (r.dtype !== w.dtype || JSON.stringify(r.shape) !== JSON.stringify(w.size)) bad.push(`${where}: ${r.dtype} ${r.shape}`);
            else if (w.size.some((n, d) => n > 1 && st[d] !== w.stride[d])) bad.push(`${where}: strides ${st} vs ${w.stride}`);
            else {
              const got = K.flat(await r.toArrayAsync());
              const i = w.values.findIndex((x, j) => !K.close(got[j], K.num(x), r.dtype === 'int32' ? 0 : 1e-5));
              if (i >= 0) bad.push(`${where}: [${i}] ${got[i]} vs ${w.values[i]}`);
            }
          }
        } catch (e) {
          if (c.expect.error === undefined || !e.message.includes(c.expect.error)) bad.push(`${where}: ${e.message}`);
        } finally {
          if (r && !made.includes(r)) r.dispose();
          for (const t of made) t.dispose();
        }
      }
      return { n: cs.length, bad };
    }, cases);
    assert.ok(r.n > 250, `${r.n} cases`);
    assert.deepEqual(r.bad, []);
  });

  test('pool.json replayed on webgpu (max exact with int32 indices, avg within 2e-6)', async () => {
    const cases = loadFixture('pool.json').cases.filter((c) => c.input && c.input.dtype === 'float32' &&
      !c.out && !(c.op.startsWith('adaptive_avg_pool2d') && c.output_size.every((s) => s === 1)));
    const r = await run(async (wt, K, cs) => {
      const bad = [];
      for (const c of cs) {
        const x = K.fromDesc(c.input, 'webgpu');
        const max = { stride: c.stride, padding: c.padding, dilation: c.dilation, ceilMode: c.ceil_mode };
        const where = `${c.op} ${JSON.stringify({ ...c, input: c.input.size, expect: undefined }).slice(0, 200)}`;
        let res;
        try {
          const op = c.op.split('.')[0];
          res = op === 'max_pool2d' || op === 'max_pool2d_with_indices'
            ? wt.maxPool2dWithIndices(x, c.kernel_size, max)
            : op === 'avg_pool2d' ? wt.avgPool2d(x, c.kernel_size, { stride: c.stride, padding: c.padding,
              ceilMode: c.ceil_mode, countIncludePad: c.count_include_pad, divisorOverride: c.divisor_override })
              : op === 'adaptive_avg_pool2d' ? wt.adaptiveAvgPool2d(x, c.output_size) : wt.ops.call(c.op, x, c.output_size);
          if (c.expect.error !== undefined) { bad.push(`${where}: expected "${c.expect.error}"`); continue; }
          const [y, idx] = Array.isArray(res) ? res : [res, null];
          const w = c.expect, st = y.stride();
          if (JSON.stringify(y.shape) !== JSON.stringify(w.size)) bad.push(`${where}: shape ${y.shape}`);
          else if (w.size.some((n, d) => n > 1 && st[d] !== w.stride[d])) bad.push(`${where}: strides ${st}`);
          else {
            const got = K.flat(await y.toArrayAsync());
            const i = w.values.findIndex((v, j) => !K.close(got[j], K.num(v), 2e-6));
            if (i >= 0) bad.push(`${where}: [${i}] ${got[i]} vs ${w.values[i]}`);
            if (idx && w.indices) {
              if (idx.dtype !== 'int32') bad.push(`${where}: indices ${idx.dtype}`);
              else if (JSON.stringify(K.flat(await idx.toArrayAsync())) !== JSON.stringify(w.indices)) bad.push(`${where}: indices differ`);
            }
          }
        } catch (e) {
          if (c.expect.error === undefined || !e.message.includes(c.expect.error)) bad.push(`${where}: ${e.message}`);
        } finally {
          for (const t of Array.isArray(res) ? res : res ? [res] : []) t.dispose();
          x.dispose();
        }
      }
      return { n: cs.length, bad };
    }, cases);
    assert.ok(r.n > 150, `${r.n} cases`);
    assert.deepEqual(r.bad, []);
  });

  test('conv_grad.json replayed on webgpu: the gradients of conv2d and the pools (float32 within 1e-5)', async () => {
    const cases = loadFixture('conv_grad.json').cases.filter((c) => onDevice(c.inputs.filter(Boolean)) &&
      !(c.op === 'adaptive_avg_pool2d' && c.options.outputSize.every((s) => s === 1)));
    const r = await run(async (wt, K, cs) => {
      const bad = [];
      for (const c of cs) {
        const ins = c.inputs.map((s) => {
          if (!s) return null;
          const shaped = wt.tensor(s.values, { dtype: s.dtype }).reshape(s.size).to('webgpu');
          const t = s.cl ? shaped.contiguous({ memoryFormat: 'channels_last' }) : shaped;
          return t.requiresGrad_(s.requires_grad);
        });
        const { kernelSize, outputSize, ...o } = c.options;
        try {
          const y = c.op === 'conv2d' ? wt.conv2d(ins[0], ins[1], ins[2] ?? null, o)
            : c.op === 'max_pool2d' ? wt.maxPool2d(ins[0], kernelSize, o)
              : c.op === 'avg_pool2d' ? wt.avgPool2d(ins[0], kernelSize, o) : wt.adaptiveAvgPool2d(ins[0], outputSize);
          if (JSON.stringify(y.stride()) !== JSON.stringify(c.out_stride)) bad.push(`${c.name}: result strides ${y.stride()}`);
          const go = wt.tensor(c.grad_output.values, { dtype: 'float32' }).reshape(c.grad_output.size).to('webgpu');
          y.backward(go);
          for (let i = 0; i < c.grads.length; i++) {
            const want = c.grads[i];
            if (!want) continue;
            const g = ins[i].grad;
            if (!g) { bad.push(`${c.name}: input ${i} has no grad`); continue; }
            if (c.inputs[i].size[1] !== 1 && JSON.stringify(g.stride()) !== JSON.stringify(want.stride))
              bad.push(`${c.name}: input ${i} grad strides ${g.stride()} vs ${want.stride}`);
            const cg = g.contiguous();
            const flatGot = K.flat(await cg.toArrayAsync());
            cg.dispose();
            const j = want.values.findIndex((v, k) => !K.close(flatGot[k], v, 1e-5));
            if (j >= 0) bad.push(`${c.name}: input ${i} [${j}]: ${flatGot[j]} vs ${want.values[j]}`);
          }
          for (const t of [y, go]) t.dispose();
        } catch (e) {
          bad.push(`${c.name}: ${e.message}`);
        } finally {
          for (const t of ins) t?.dispose();
        }
      }
      return { n: cs.length, bad };
    }, cases);
    assert.ok(r.n > 50, `${r.n} cases`);
    assert.deepEqual(r.bad, []);
  });

  test('the page logged no errors', () => {
    assert.deepEqual(s.errors, []);
  });
});
