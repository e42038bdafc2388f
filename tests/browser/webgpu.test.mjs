// The webgpu device in Chromium on its software adapter (SwiftShader), on an
// http://localhost page (WebGPU needs a secure context): adapter info,
// round trips, strides kept by to(), the async reads, the errors, and the
// caching allocator's memory figures (docs/webgpu.md).
//   node --test tests/browser/webgpu.test.mjs   (needs `npm run build` and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { webgpuPage } from './helpers.mjs';

describe('webgpu device (SwiftShader)', { timeout: 180000 }, () => {
  const s = webgpuPage({ before, after }, { device: false });
  const run = s.run;

  test('navigator.gpu exists on the page, and initWebGPU names the adapter', async () => {
    assert.equal(await s.page.evaluate(() => typeof navigator.gpu), 'object');
    const before = await run((wt) => ({ gpu: wt.backend.webgpu, available: wt.webgpu.isAvailable() }));
    assert.deepEqual(before, { gpu: null, available: false });
    const err = await run((wt) => wt.empty([2], { device: 'webgpu' }));
    assert.match(err.error[2], /empty: no WebGPU device: call await wt\.initWebGPU\(\) first/);
    const info = await run(async (wt) => {
      const i = await wt.initWebGPU();
      return { i, same: wt.backend.webgpu === i, again: (await wt.initWebGPU()) === i };
    });
    assert.equal(info.same, true);
    assert.equal(info.again, true);
    assert.equal(typeof info.i.vendor, 'string');
    assert.equal(typeof info.i.isFallbackAdapter, 'boolean');
    assert.ok(info.i.limits.maxBufferSize > 0 && info.i.limits.maxStorageBufferBindingSize > 0);
  });

  test('round trips of float32, int32 and bool, through tensor(), to() and the async reads', async () => {
    const r = await run(async (wt) => {
      const out = {};
      const f = wt.tensor([[1.5, -2], [3, 4.25]], { device: 'webgpu' });
      out.f = [f.device, f.dtype, f.shape, await f.toArrayAsync(), Array.from(await f.dataAsync())];
      const i = wt.tensor([7, -8, 2147483647], { dtype: 'int32' }).to('webgpu');
      out.i = [i.device, await i.toArrayAsync()];
      const b = wt.tensor([true, false, true, true, false], { device: 'webgpu' });
      out.b = [b.dtype, await b.toArrayAsync()];
      out.item = await wt.tensor([9.5], { device: 'webgpu' }).reshape([]).itemAsync();
      const back = await f.toAsync('cpu');
      out.back = [back.device, back.toArray()];
      const cpuSame = wt.tensor([1, 2]);
      out.cpuAsync = await cpuSame.toArrayAsync(); // the async forms work on the cpu too
      for (const t of [f, i, b, back, cpuSame]) t.dispose();
      return out;
    });
    assert.deepEqual(r.f, ['webgpu', 'float32', [2, 2], [[1.5, -2], [3, 4.25]], [1.5, -2, 3, 4.25]]);
    assert.deepEqual(r.i, ['webgpu', [7, -8, 2147483647]]);
    assert.deepEqual(r.b, ['bool', [true, false, true, true, false]]);
    assert.equal(r.item, 9.5);
    assert.deepEqual(r.back, ['cpu', [[1.5, -2], [3, 4.25]]]);
    assert.deepEqual(r.cpuAsync, [1, 2]);
  });

  test('to() keeps a dense layout: channels_last NCHW and a transposed matrix come back with their strides', async () => {
    const r = await run(async (wt) => {
      const x = wt.arange(24, { dtype: 'float32' }).reshape([1, 2, 3, 4]).contiguous({ memoryFormat: 'channels_last' });
      const g = x.to('webgpu');
      const m = wt.arange(6, { dtype: 'int32' }).reshape([2, 3]).t();
      const gm = m.to('webgpu');
      const back = await g.toAsync('cpu');
      const res = { strides: [g.stride(), back.stride(), gm.stride()], eq: wt.equal(back, x),
        m: await gm.toArrayAsync(), data: Array.from(await gm.dataAsync()) };
      for (const t of [x, g, m, gm, back]) t.dispose();
      return res;
    });
    assert.deepEqual(r.strides, [[24, 1, 8, 2], [24, 1, 8, 2], [1, 3]]);
    assert.equal(r.eq, true);
    assert.deepEqual(r.m, [[0, 3], [1, 4], [2, 5]]);
    assert.deepEqual(r.data, [0, 3, 1, 4, 2, 5]);
  });

  test('the strided copy kernel: NCHW <-> NHWC, transposed views, broadcast, casts, offset views, as on the cpu', async () => {
    const r = await run(async (wt) => {
      const out = {};
      const x = wt.arange(2 * 3 * 4 * 5, { dtype: 'float32' }).reshape([2, 3, 4, 5]);
      const g = x.to('webgpu');
      const nhwc = g.contiguous({ memoryFormat: 'channels_last' });
      const back = await nhwc.toAsync('cpu');
      const want = x.contiguous({ memoryFormat: 'channels_last' });
      out.nhwc = [nhwc.stride(), back.stride(), wt.equal(back, want)];
      const nchw = nhwc.contiguous();
      const back2 = await nchw.toAsync('cpu');
      out.nchw = [nchw.stride(), wt.equal(back2, x)];
      // a permuted view read asynchronously: made dense on the device first
      out.perm = wt.equal(wt.tensor(await g.permute([3, 1, 0, 2]).toArrayAsync()), x.permute([3, 1, 0, 2]));
      // broadcast a row over a matrix, and a dtype cast on the way
      const row = wt.tensor([1.5, -2.25, 0, 3], { device: 'webgpu' });
      const m = wt.empty([3, 4], { dtype: 'float32', device: 'webgpu' });
      m.copy_(row);
      out.bcast = await m.toArrayAsync();
      const i = wt.empty([4], { dtype: 'int32', device: 'webgpu' });
      i.copy_(row);
      const b = wt.empty([4], { dtype: 'bool', device: 'webgpu' });
      b.copy_(row);
      const f = wt.empty([4], { dtype: 'float32', device: 'webgpu' });
      f.copy_(b);
      out.casts = [await i.toArrayAsync(), await b.toArrayAsync(), await f.toArrayAsync()];
      // an offset, strided destination: a column of a webgpu matrix from the cpu
      const z = wt.zeros([3, 3], { dtype: 'int32' }).to('webgpu');
      z.select(1, 1).copy_(wt.tensor([7, 8, 9], { dtype: 'int32' }));
      out.col = await z.toArrayAsync();
      // bool bytes written by neighbouring invocations (word atomics): every other element
      const bb = wt.zeros([9], { dtype: 'bool' }).to('webgpu');
      bb.asStrided([5], [2]).copy_(wt.ones([5], { dtype: 'bool' }));
      out.bools = await bb.toArrayAsync();
      // in place over the same storage (a reversed copy goes through a temporary)
      const v = wt.tensor([1, 2, 3, 4], { dtype: 'float32', device: 'webgpu' });
      v.narrow(0, 0, 2).copy_(v.narrow(0, 2, 2));
      out.same = await v.toArrayAsync();
      const plan = wt.explain('contiguous', g, { memoryFormat: 'channels_last' });
      out.plan = { kind: plan.kind, wg: plan.workgroupSize, grid: plan.grid, program: plan.program,
        wgsl: /@compute @workgroup_size\(64\)/.test(plan.wgsl) && /fn main/.test(plan.wgsl) };
      out.trace = wt.trace(() => nhwc.contiguous().dispose()).map((e) => e.key);
      for (const t of [x, g, nhwc, back, want, nchw, back2, row, m, i, b, f, z, bb, v]) t.dispose();
      await wt.webgpu.synchronize();
      return out;
    });
    assert.deepEqual(r.nhwc, [[60, 1, 15, 3], [60, 1, 15, 3], true]);
    assert.deepEqual(r.nchw, [[60, 20, 5, 1], true]);
    assert.equal(r.perm, true);
    assert.deepEqual(r.bcast, [[1.5, -2.25, 0, 3], [1.5, -2.25, 0, 3], [1.5, -2.25, 0, 3]]);
    assert.deepEqual(r.casts, [[1, -2, 0, 3], [true, true, false, true], [1, 1, 0, 1]]);
    assert.deepEqual(r.col, [[0, 7, 0], [0, 8, 0], [0, 9, 0]]);
    assert.deepEqual(r.bools, [true, false, true, false, true, false, true, false, true]);
    assert.deepEqual(r.same, [3, 4, 3, 4]);
    assert.deepEqual(r.plan.kind, 'webgpu');
    assert.deepEqual(r.plan.wg, [64, 1, 1]);
    assert.deepEqual(r.plan.grid, [2, 1, 1]); // 120 elements, 64 a workgroup
    assert.match(r.plan.program, /^map:copy:/);
    assert.equal(r.plan.wgsl, true);
    assert.ok(r.trace.includes('WebGPU'), r.trace.join(','));
  });

  test('elementwise ops: the cpu broadcasting and promotion, the GPU loop; results equal the cpu ones', async () => {
    const r = await run(async (wt) => {
      const fails = [];
      const a = wt.tensor([[0.5, -1.25, 3, -0], [2, 7.5, -3.5, 1e-3], [-8, 0.25, 4, 9]]);         // [3, 4] float32
      const b = wt.tensor([1.5, -2, 0.75, 3]);                                                      // [4]
      const i = wt.tensor([[3, -7, 0, 12]], { dtype: 'int32' });                                    // [1, 4]
      const j = wt.tensor([[2], [-5], [9]], { dtype: 'int32' });                                    // [3, 1]
      const m = wt.tensor([true, false, true, false]);
      const cpu = { a, b, i, j, m };
      const gpu = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v.to('webgpu')]));
      const cases = [
        ['add', (x) => wt.add(x.a, x.b)], ['add alpha', (x) => wt.add(x.a, x.b, { alpha: 2 })],
        ['sub', (x) => wt.sub(x.a, x.b)], ['mul', (x) => wt.mul(x.a, x.b)], ['div', (x) => wt.div(x.a, x.b)],
        ['int add', (x) => wt.add(x.i, x.j)], ['int mul', (x) => wt.mul(x.i, x.j)], ['int sub', (x) => wt.sub(x.j, x.i)],
        ['int div -> float', (x) => wt.div(x.i, x.j)], ['int + float', (x) => wt.add(x.i, x.a)],
        ['number', (x) => wt.mul(x.a, 2.5)], ['int + number', (x) => wt.add(x.i, 3)], ['int * 0.5', (x) => wt.mul(x.i, 0.5)],
        ['maximum', (x) => wt.maximum(x.a, x.b)], ['minimum', (x) => wt.minimum(x.i, x.j)],
        ['eq', (x) => wt.eq(x.i, x.j)], ['lt', (x) => wt.lt(x.a, x.b)], ['ge', (x) => wt.ge(x.a, 0.5)],
        ['ge bool', (x) => wt.ge(x.m, x.m)], ['mul bool', (x) => wt.mul(x.m, x.m)],
        ['neg', (x) => wt.neg(x.a)], ['abs', (x) => wt.abs(x.i)], ['relu', (x) => wt.relu(x.a)],
        ['exp', (x) => wt.exp(x.a)], ['sigmoid', (x) => wt.sigmoid(x.a)], ['tanh', (x) => wt.tanh(x.a)],
        ['sqrt of abs', (x) => wt.sqrt(wt.abs(x.a))], ['floor', (x) => wt.floor(x.a)], ['int exp -> float', (x) => wt.exp(x.i)],
        ['transposed input', (x) => wt.add(x.a.t(), x.j.t())], ['zeros / ones / full', (x) => wt.add(
          wt.zeros([3, 4], { device: x.a.device }), wt.full([4], 2.5, { device: x.a.device }))],
      ];
      for (const [name, f] of cases) {
        const want = f(cpu);
        let got;
        try {
          got = f(gpu);
          const back = await got.toAsync('cpu');
          const same = back.dtype === want.dtype && JSON.stringify(back.shape) === JSON.stringify(want.shape) &&
            wt.allclose(back.to('float32'), want.to('float32'), { rtol: 1e-5, atol: 1e-5 });
          if (got.device !== 'webgpu' || !same) fails.push([name, got.device, back.dtype, want.dtype, back.toArray(), want.toArray()]);
          back.dispose();
        } catch (e) {
          fails.push([name, e.message]);
        }
        want.dispose();
        got?.dispose();
      }
      const err = (fn) => { try { fn(); return null; } catch (e) { return e.message; } };
      const errors = {
        mixed: err(() => wt.add(gpu.a, cpu.a)),
        mixed2: err(() => wt.mul(cpu.b, gpu.a)),
        notYet: err(() => wt.atan2(gpu.a, gpu.b)),
        intDiv: err(() => wt.floorDivide(gpu.i, gpu.j)),
      };
      const cpu0 = wt.tensor(2.5);
      const scalarOk = await wt.mul(gpu.b, cpu0).toArrayAsync();
      const plan = wt.explain('add', gpu.a, gpu.b);
      const trace = wt.trace(() => wt.mul(gpu.a, gpu.b).dispose()).map((e) => `${e.op}@${e.key}`);
      for (const t of [...Object.values(cpu), ...Object.values(gpu), cpu0]) t.dispose();
      return { fails, errors, scalarOk, plan: { kind: plan.kind, program: plan.program, grid: plan.grid,
        wgsl: plan.wgsl.includes('a0 + e0 * a1') }, trace };
    });
    assert.deepEqual(r.fails, []);
    assert.match(r.errors.mixed, /add: Expected all tensors to be on the same device, but found at least two devices, webgpu and cpu!/);
    assert.match(r.errors.mixed2, /Expected all tensors to be on the same device, but found at least two devices, (webgpu and cpu|cpu and webgpu)!/);
    assert.match(r.errors.notYet, /atan2: not implemented on the webgpu device for float32 yet/);
    assert.match(r.errors.intDiv, /floor_divide: not implemented on the webgpu device for int32 yet/);
    assert.deepEqual(r.scalarOk, [3.75, -5, 1.875, 7.5]); // a 0-dim cpu tensor beside webgpu ones: PyTorch's cpu scalar
    assert.equal(r.plan.kind, 'webgpu');
    assert.match(r.plan.program, /^map:add:2:float32:float32:float32:float32$/);
    assert.deepEqual(r.plan.grid, [1, 1, 1]);
    assert.equal(r.plan.wgsl, true);
    assert.ok(r.trace.some((t) => /@WebGPU$/.test(t)), r.trace.join(' '));
  });

  test('synchronous reads, to(cpu), int64 and float64, and ops without a WebGPU kernel throw WeftErrors', async () => {
    const r = await run((wt) => {
      const g = wt.tensor([1, 2], { dtype: 'float32', device: 'webgpu' });
      const c = wt.tensor([1, 2], { dtype: 'float32' });
      const err = (fn) => { try { fn(); return null; } catch (e) { return [e.name, e.message]; } };
      const out = {
        data: err(() => g.data()), toArray: err(() => g.toArray()), item: err(() => g.select(0, 1).item()),
        to: err(() => g.to('cpu')), copy: err(() => c.copy_(g)),
        int64: err(() => wt.tensor([1, 2], { dtype: 'int64', device: 'webgpu' })),
        float64: err(() => wt.zeros([2], { dtype: 'float64' }).to('webgpu')),
        add: err(() => wt.add(g, wt.tensor([1, 2], { dtype: 'float32' }))),
      };
      g.dispose();
      c.dispose();
      return out;
    });
    for (const k of ['data', 'toArray', 'item', 'to', 'copy', 'int64', 'float64', 'add']) assert.ok(r[k], `${k} did not throw`);
    assert.match(r.data[1], /data: a webgpu tensor is read asynchronously: use await t\.dataAsync\(\)/);
    assert.match(r.toArray[1], /toArray: a webgpu tensor is read asynchronously: use await t\.toArrayAsync\(\)/);
    assert.match(r.item[1], /item: a webgpu tensor is read asynchronously: use await t\.itemAsync\(\)/);
    assert.match(r.to[1], /to: a webgpu tensor is read back asynchronously: use await t\.toAsync\('cpu'\)/);
    assert.match(r.copy[1], /copy_: a webgpu tensor is read back asynchronously: use await t\.toAsync\('cpu'\)/);
    assert.match(r.int64[1], /a webgpu tensor holds float32, int32 or bool; int64 is not available in WGSL/);
    assert.match(r.float64[1], /float64 is not available in WGSL \(convert it on the cpu first, e\.g\. x\.to\('float32'\)\)/);
    assert.match(r.add[1], /add: Expected all tensors to be on the same device, but found at least two devices, webgpu and cpu!/);
  });

  test('the caching allocator: size classes, reuse, emptyCache, and memory back to zero after dispose', async () => {
    const r = await run(async (wt) => {
      wt.webgpu.emptyCache();
      const m0 = { ...wt.webgpu.memory(), webgpuBytes: wt.memory().webgpuBytes };
      const a = wt.zeros([100], { dtype: 'float32' }).to('webgpu'); // 400 B: the 512 B class
      const tiny = wt.zeros([3], { dtype: 'int32' }).to('webgpu');   // 12 B: the 256 B floor
      const m1 = { ...wt.webgpu.memory(), webgpuBytes: wt.memory().webgpuBytes };
      a.dispose();
      const m2 = wt.webgpu.memory();
      const b = wt.ones([120], { dtype: 'float32' }).to('webgpu');   // 480 B: the freed 512 B buffer again
      const m3 = wt.webgpu.memory();
      const vals = (await b.toArrayAsync()).slice(0, 2);
      b.dispose();
      tiny.dispose();
      await wt.webgpu.synchronize();
      const m4 = { ...wt.webgpu.memory(), webgpuBytes: wt.memory().webgpuBytes };
      wt.webgpu.emptyCache();
      return { m0, m1, m2, m3, m4, m5: wt.webgpu.memory(), vals };
    });
    // relative to what the earlier tests left allocated (their tensors are disposed, so nothing)
    const base = r.m0.allocatedBytes;
    assert.equal(r.m0.cachedBytes, 0);
    assert.equal(r.m1.allocatedBytes - base, 512 + 256);
    assert.equal(r.m1.webgpuBytes - r.m0.webgpuBytes, 400 + 12);
    assert.deepEqual([r.m2.allocatedBytes - base, r.m2.cachedBytes], [256, 512]);
    assert.deepEqual([r.m3.allocatedBytes - base, r.m3.cachedBytes], [768, 0]); // reused, not a new buffer
    assert.deepEqual(r.vals, [1, 1]);
    assert.deepEqual([r.m4.allocatedBytes - base, r.m4.cachedBytes, r.m4.webgpuBytes - r.m0.webgpuBytes], [0, 768, 0]);
    assert.deepEqual([r.m5.allocatedBytes - base, r.m5.cachedBytes], [0, 0]);
    assert.ok(r.m4.submits > r.m0.submits && r.m4.dispatches >= r.m0.dispatches);
  });

  test('the page logged no errors', () => {
    assert.deepEqual(s.errors, []);
  });
});
