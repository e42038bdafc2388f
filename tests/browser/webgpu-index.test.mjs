// The webgpu device's in-place elementwise ops, indexing family, optimizer
// steps, Module.to and the host-read audit, in Chromium on SwiftShader
// (docs/webgpu.md "Indexing, in place, optimizers"). Every result is compared
// with the same op on the cpu; the PyTorch fixtures of index.json / join.json
// / embedding.json / loss.json (nll_loss) are replayed on 'webgpu'.
// Tolerances: gathers, scatters, cat, masked_fill and where move values
// exactly; scatter_add / index_add / embedding's backward add duplicates in
// an unfixed order (atomics): 1e-6 relative; nll_loss sums in a workgroup
// tree (another order than the cpu's loop): 1e-5; optimizer steps 1e-5.
//   node --test tests/browser/webgpu-index.test.mjs   (needs `npm run build` and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { webgpuPage } from './helpers.mjs';
import { loadFixture } from '../js/fixtures-lib.mjs';

// The suite's comparison helpers, installed in the page (window).
function pageSetup() {
  // f(x) on the cpu tensors and on their webgpu copies; the differences
  // (or the error) of each named case
  window.compare = async (wt, cpu, cases, tol = 0) => {
    const gpu = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v.dtype === 'int64' ? v : v.to('webgpu')]));
    const fails = [];
    for (const [name, f] of cases) {
      let want, got, back;
      try {
        want = f(cpu, 'cpu');
        got = f(gpu, 'webgpu');
        back = await got.toAsync('cpu');
        const shape = JSON.stringify(back.shape) === JSON.stringify(want.shape);
        const same = shape && back.dtype === want.dtype && (tol
          ? wt.allclose(back.to('float32'), want.to('float32'), { rtol: tol, atol: tol, equalNan: true })
          : wt.equal(back, want));
        if (got.device !== 'webgpu' || !same) fails.push([name, got.device, back.dtype, want.dtype, back.toArray(), want.toArray()]);
      } catch (e) {
        fails.push([name, e.message]);
      }
      for (const t of new Set([want, got, back])) t?.dispose();
    }
    for (const [k, v] of Object.entries(gpu)) if (v !== cpu[k]) v.dispose();
    return fails;
  };
}

describe('webgpu indexing, in place, optimizers (SwiftShader)', { timeout: 300000 }, () => {
  const s = webgpuPage({ before, after }, { setup: pageSetup });
  const run = s.run;

  test('in-place elementwise: op=, aliasing inputs, out= onto an input, bool and int32, the one-binding program', async () => {
    const r = await run(async (wt) => {
      const cpu = {
        a: wt.tensor([[0.5, -1.25, 3, 2], [2, 7.5, -3.5, 1e-3], [-8, 0.25, 4, 9], [1, 2, 3, 4]]),
        b: wt.tensor([1.5, -2, 0.75, 3]),
        i: wt.tensor([[3, -7, 0, 12], [1, 2, 3, 4]], { dtype: 'int32' }),
        m: wt.tensor([true, false, true, false]),
      };
      const inplace = (f) => (x) => { const c = x.a.clone(); f(c, x); return c; };
      const cases = [
        ['add_', inplace((c, x) => c.add_(x.b))], ['add_ alpha', inplace((c, x) => c.add_(x.b, { alpha: -0.5 }))],
        ['sub_', inplace((c, x) => c.sub_(x.b))], ['mul_ number', inplace((c) => c.mul_(0.9))],
        ['div_', inplace((c, x) => c.div_(x.b))], ['self op= self', inplace((c) => c.mul_(c))],
        ['fill_', inplace((c) => c.fill_(2.5))], ['zero_', inplace((c) => c.zero_())],
        ['copy_ from a view of itself', inplace((c) => c.narrow(0, 0, 2).copy_(c.narrow(0, 2, 2)))],
        ['clamp_', inplace((c) => c.clamp_(-1, 2))], ['clamp_min_', inplace((c) => c.clampMin_(0))],
        ['maximum out= self', inplace((c, x) => wt.maximum(c, x.b, { out: c }))],
        ['a row in place', inplace((c, x) => c.select(0, 1).mul_(x.b))],
        ['strided column in place', inplace((c) => c.select(1, 2).add_(c.select(1, 0)))],
        ['sqrt_ of abs', inplace((c) => c.abs_().sqrt_())], ['neg_', inplace((c) => c.neg_())],
        ['int mul_', (x) => { const c = x.i.clone(); c.mul_(x.i); return c; }],
        ['int add_ number', (x) => { const c = x.i.clone(); c.add_(5); return c; }],
        ['bool logical and in place', (x) => { const c = x.m.clone(); c.mul_(wt.logicalNot(x.m)); return c; }],
        ['where', (x) => wt.where(x.m, x.a, x.b)], ['where scalar', (x) => wt.where(x.m, x.a, 0)],
        ['where int', (x) => wt.where(x.m, x.i, -1)], ['logicalNot', (x) => wt.logicalNot(x.m)],
        ['sign', (x) => wt.sign(x.a)], ['silu', (x) => wt.silu(x.a)],
      ];
      const fails = await window.compare(wt, cpu, cases, 1e-6);
      const g = cpu.a.to('webgpu');
      const plan = wt.explain('add_', g, g);
      // autograd's accumulation: two uses of x, two backward calls into x.grad
      const xc = wt.tensor([1, 2, 3], { requiresGrad: true });
      const xg = wt.tensor([1, 2, 3], { dtype: 'float32' }).to('webgpu').requiresGrad_(true);
      for (const x of [xc, xg]) {
        for (let k = 0; k < 2; k++) {
          const y = x.mul(2).add(x.mul(x));
          y.backward(wt.ones([3], { device: x.device }));
          y.dispose();
        }
      }
      const grads = [xc.grad.toArray(), await xg.grad.toArrayAsync()];
      for (const t of [...Object.values(cpu), g, xc, xg]) t.dispose();
      return { fails, plan: { program: plan.program, bindings: (plan.wgsl.match(/@binding/g) || []).length }, grads };
    });
    assert.ok(!r.error, r.error?.join('\n'));
    assert.deepEqual(r.fails, []);
    // self op= self: one read_write binding plus the parameters
    assert.match(r.plan.program, /^map:add:\d:float32:float32:float32:float32:a1:a2$/);
    assert.equal(r.plan.bindings, 2);
    assert.deepEqual(r.grads[1], r.grads[0]);
    assert.deepEqual(r.grads[0], [8, 12, 16]);
  });

  test('index_select, gather, scatter, scatter_add, index_add, masked_fill, cat, stack, arange vs the cpu', async () => {
    const r = await run(async (wt) => {
      const cpu = {
        x: wt.arange(24, { dtype: 'float32' }).reshape([2, 3, 4]).mul(0.5).sub(3),
        m: wt.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float32' }),
        n: wt.tensor([[7, 8, 9]], { dtype: 'float32' }),
        k: wt.tensor([[1, -2, 3], [4, 5, -6]], { dtype: 'int32' }),
        i1: wt.tensor([2, 0, 2, 1], { dtype: 'int64' }),
        i0: wt.tensor([1, 0, 1], { dtype: 'int64' }),
        g: wt.tensor([[[0, 2, 1, 0], [1, 1, 0, 2]], [[2, 0, 0, 1], [0, 2, 1, 1]]], { dtype: 'int64' }),
        gi: wt.tensor([[0, 1, 0], [1, 0, 1]], { dtype: 'int64' }),
        mask: wt.tensor([true, false, false, true]),
      };
      const i32 = (t, dev) => (dev === 'cpu' ? t : t.to('int32').to(dev)); // a webgpu index is int32
      const cases = [
        ['index_select dim 1', (x) => wt.indexSelect(x.x, 1, x.i0)],
        ['index_select dim -1 of a permuted view', (x) => wt.indexSelect(x.x.permute([2, 0, 1]), -1, x.i0)],
        ['index_select int32 webgpu index', (x, d) => wt.indexSelect(x.x, 2, i32(x.i1, d))],
        ['index_select a JS array', (x) => wt.indexSelect(x.m, 0, [1, 1, 0])],
        ['index_select int32 values', (x) => wt.indexSelect(x.k, 1, x.i1.narrow(0, 0, 3))],
        ['gather dim 2', (x) => wt.gather(x.x, 2, x.g)], ['gather dim 1', (x) => wt.gather(x.x, 1, x.g.narrow(2, 0, 3))],
        ['gather transposed self', (x) => wt.gather(x.m.t(), 0, x.gi.t())],
        ['gather int32 index', (x, d) => wt.gather(x.m, 1, i32(x.gi, d))],
        ['scatter src', (x) => x.m.scatter(1, x.gi, x.n.expand([2, 3]).contiguous())],
        ['scatter value', (x) => x.m.scatter(0, x.gi, 2.5)],
        ['scatter_ in place', (x) => { const c = x.m.clone(); c.scatter_(1, x.gi.narrow(1, 0, 1), x.n.narrow(1, 0, 1).expand([2, 1])); return c; }],
        ['scatter_add duplicates', (x) => wt.scatterAdd(x.m, 1, x.gi, x.m.mul(3))],
        ['scatter_add_ int32', (x) => { const c = x.k.clone(); c.scatterAdd_(0, x.gi, x.k); return c; }],
        ['scatter_add_ src a view of self', (x) => { const c = x.m.clone(); c.narrow(1, 0, 2).scatterAdd_(1, x.gi.narrow(1, 0, 2), x.m.narrow(1, 1, 2).clone()); return c; }],
        ['index_add alpha', (x) => wt.indexAdd(x.m, 1, x.i1.narrow(0, 0, 3), x.m.mul(2), { alpha: 0.5 })],
        ['index_add_ dim 0 duplicates', (x) => { const c = x.x.clone(); c.indexAdd_(0, wt.tensor([1, 1, 0], { dtype: 'int64' }), wt.stack([x.x.select(0, 0), x.x.select(0, 1), x.x.select(0, 1)])); return c; }],
        ['masked_fill broadcast', (x) => x.x.maskedFill(x.mask, -1.5)],
        ['masked_fill_ on a view', (x) => { const c = x.x.clone(); c.select(1, 1).maskedFill_(x.mask, 9); return c; }],
        ['masked_fill 0-dim value tensor', (x) => x.m.maskedFill(x.m.gt(2.5), wt.tensor(0.25, { device: x.m.device }))],
        ['cat dim 0', (x) => wt.cat([x.m, x.n, x.m])], ['cat dim 1 of views', (x) => wt.cat([x.m.t(), x.m.t()], 1)],
        ['cat promotes', (x) => wt.cat([x.k, x.m])], ['stack', (x) => wt.stack([x.m, x.m.mul(2)], 1)],
        ['arange int32 on the device', (x, d) => wt.arange(2, 11, 3, { dtype: 'int32', device: d })],
        ['arange float32 on the device', (x, d) => wt.arange(0, 1, 0.25, { dtype: 'float32', device: d })],
      ];
      const fails = await window.compare(wt, cpu, cases, 1e-6);
      const gx = cpu.x.to('webgpu');
      const gm = cpu.m.to('webgpu');
      const err = (fn) => { try { fn(); return null; } catch (e) { return [e.name, e.message]; } };
      const errors = {
        range: err(() => wt.indexSelect(gx, 1, wt.tensor([0, 3], { dtype: 'int64' }))),
        gatherRange: err(() => wt.gather(gm, 1, wt.tensor([[0, 5, 0]], { dtype: 'int64' }))),
        floatIndex: err(() => wt.indexSelect(gx, 1, wt.tensor([0.5]))),
        mixed: err(() => wt.indexSelect(cpu.x, 1, wt.tensor([0], { dtype: 'int32' }).to('webgpu'))),
        shape: err(() => wt.gather(gm, 1, wt.tensor([[[0]]], { dtype: 'int64' }))),
        catDevices: err(() => wt.cat([gm, cpu.m])),
        maskDtype: err(() => gm.maskedFill(wt.tensor([1, 0, 1], { dtype: 'int32' }).to('webgpu'), 1)),
      };
      const plan = wt.explain('index_select', gx, 1, cpu.i0);
      for (const t of [...Object.values(cpu), gx, gm]) t.dispose();
      return { fails, errors, plan: { program: plan.program, wgsl: plan.wgsl } };
    });
    assert.ok(!r.error, r.error?.join('\n'));
    assert.deepEqual(r.fails, []);
    assert.match(r.errors.range[1], /index_select\(\): index 3 is out of bounds for dimension 1 with size 3/);
    assert.match(r.errors.gatherRange[1], /gather: index 5 is out of bounds for dimension 1 with size 3/);
    assert.match(r.errors.floatIndex[1], /index_select/);
    assert.match(r.errors.mixed[1], /index_select: Expected all tensors to be on the same device, but found at least two devices, webgpu and cpu!/);
    assert.match(r.errors.shape[1], /Index tensor must have the same number of dimensions as input tensor/);
    assert.match(r.errors.catDevices[1], /cat: Expected all tensors to be on the same device, but found at least two devices, webgpu and cpu!/);
    assert.match(r.errors.maskDtype[1], /masked_fill_ only supports boolean masks, but got mask with dtype int32/);
    assert.match(r.plan.program, /^index:gather:3:float32:t$/);
    assert.match(r.plan.wgsl, /bitcast<i32>\(b2\[o2\]\)/);
  });

  test('embedding and its backward (padding_idx), nll_loss forward and backward through autograd', async () => {
    const r = await run(async (wt) => {
      const fails = [];
      const w = wt.randn([6, 3]);
      const idx = wt.tensor([[0, 2, 5], [2, 2, 1]], { dtype: 'int64' });
      const logp = wt.randn([5, 4]).logSoftmax(1);
      const logp3 = wt.randn([2, 3, 2, 2]).logSoftmax(1);
      const tgt = wt.tensor([1, 0, 3, 3, -100], { dtype: 'int64' });
      const tgt3 = wt.tensor([[[0, 2], [1, 1]], [[2, -100], [0, 1]]], { dtype: 'int64' });
      const weight = wt.tensor([0.5, 1, 2, 1.5]);
      const upstream = wt.randn([2, 3, 3]);
      const runOn = async (dev) => {
        const leaf = (t) => (dev === 'cpu' ? t.clone() : t.to(dev)).requiresGrad_(true);
        const out = {};
        const W = leaf(w);
        const e = wt.embedding(idx, W, { paddingIdx: 2 });
        e.backward(dev === 'cpu' ? upstream : upstream.to(dev));
        out.emb = [await e.toArrayAsync(), await W.grad.toArrayAsync()];
        for (const [name, x0, t, opts] of [['mean', logp, tgt, {}], ['sum weighted', logp, tgt, { weight, reduction: 'sum' }],
          ['none', logp, tgt, { reduction: 'none' }], ['mean weighted 4-D', logp3, tgt3, { weight: weight.narrow(0, 0, 3) }],
          ['int32 target on the device', logp, tgt.clamp(0, 3), { reduction: 'mean' }]]) {
          const x = leaf(x0);
          const target = dev === 'webgpu' && name.startsWith('int32') ? t.to('int32').to(dev) : t;
          const o = { ...opts, ...(opts.weight ? { weight: dev === 'cpu' ? opts.weight : opts.weight.to(dev) } : {}) };
          const l = wt.nllLoss(x, target, o.weight ?? null, o.reduction ?? 'mean', -100);
          l.backward(wt.onesLike(l).mul(1.5));
          out[name] = [await l.toArrayAsync(), await x.grad.toArrayAsync()];
        }
        return out;
      };
      const cpu = await runOn('cpu');
      const gpu = await runOn('webgpu');
      const flat = (v) => [v].flat(Infinity);
      for (const k of Object.keys(cpu)) {
        const a = flat(cpu[k]), b = flat(gpu[k]);
        if (a.length !== b.length || a.some((v, i) => Math.abs(v - b[i]) > 1e-5 * (1 + Math.abs(v)))) fails.push([k, a, b]);
      }
      const err = (fn) => { try { fn(); return null; } catch (e) { return e.message; } };
      const gl = logp.to('webgpu');
      const errors = {
        target: err(() => wt.nllLoss(gl, wt.tensor([0, 1, 9, 0, 0], { dtype: 'int64' }))),
        rows: err(() => wt.embedding(wt.tensor([7], { dtype: 'int64' }), w.to('webgpu'))),
        sgf: err(() => wt.embeddingDenseBackward(upstream.to('webgpu'), idx, 6, -1, true)),
      };
      return { fails, errors };
    });
    assert.ok(!r.error, r.error?.join('\n'));
    assert.deepEqual(r.fails, []);
    assert.match(r.errors.target, /nll_loss: Target 9 is out of bounds\./);
    assert.match(r.errors.rows, /embedding: index out of range in self/);
    assert.match(r.errors.sgf, /scale_grad_by_freq is not implemented on the webgpu device/);
  });

  test('optim.SGD (momentum, weight decay, nesterov), Adam, AdamW (amsgrad): three steps match the cpu', async () => {
    const r = await run(async (wt) => {
      const p0 = wt.tensor([[0.5, -1, 2], [1.5, 0.25, -0.75]]);
      const grads = [0, 1, 2].map((s) => wt.tensor([[0.1, -0.2, 0.3], [0.4, -0.5, 0.6]]).mul(s + 1).sin());
      const configs = [
        ['SGD', { lr: 0.1 }], ['SGD', { lr: 0.1, momentum: 0.9, weightDecay: 0.01 }],
        ['SGD', { lr: 0.05, momentum: 0.9, nesterov: true }], ['SGD', { lr: 0.1, momentum: 0.5, dampening: 0.2, maximize: true }],
        ['Adam', { lr: 0.01 }], ['Adam', { lr: 0.01, weightDecay: 0.1, amsgrad: true }], ['AdamW', { lr: 0.01 }],
        ['AdamW', { lr: 0.02, betas: [0.8, 0.9], amsgrad: true }],
      ];
      const fails = [];
      for (const [name, opts] of configs) {
        const out = [];
        for (const dev of ['cpu', 'webgpu']) {
          const p = new wt.nn.Parameter(dev === 'cpu' ? p0.clone() : p0.to(dev));
          const opt = new wt.optim[name]([p], opts);
          for (const g of grads) {
            p.grad = dev === 'cpu' ? g : g.to(dev);
            opt.step();
          }
          out.push(await p.toArrayAsync());
          opt.dispose();
          p.dispose();
        }
        const [a, b] = out.map((v) => v.flat());
        if (a.some((v, i) => Math.abs(v - b[i]) > 1e-5)) fails.push([name, opts, a, b]);
      }
      // clipGradValue_ is clamp_ in place
      const q = new wt.nn.Parameter(p0.to('webgpu'));
      q.grad = grads[2].mul(10).to('webgpu');
      wt.nn.utils.clipGradValue_([q], 1);
      const clipped = await q.grad.toArrayAsync();
      return { fails, clipped, want: grads[2].mul(10).clamp(-1, 1).toArray() };
    });
    assert.ok(!r.error, r.error?.join('\n'));
    assert.deepEqual(r.fails, []);
    assert.deepEqual(r.clipped, r.want);
  });

  test("Module.to('webgpu') and back: parameters keep their objects, int64 buffers stay on the cpu, layers run", async () => {
    const r = await run(async (wt) => {
      const model = new wt.nn.Sequential(new wt.nn.Embedding(5, 3, { paddingIdx: 0 }), new wt.nn.BatchNorm1d(4));
      const params = model.parameters();
      const before = await Promise.all(params.map((p) => p.toArrayAsync()));
      model.to('webgpu');
      const moved = {
        same: model.parameters().every((p, i) => p === params[i]), devices: model.parameters().map((p) => p.device),
        buffers: model.namedBuffers().map(([n, b]) => [n, b.device, b.dtype]),
        requiresGrad: model.parameters().map((p) => p.requiresGrad),
      };
      // a layer on webgpu tensors; its gradient lands in the moved Parameter
      const emb = model.at(0);
      const y = emb.forward(wt.tensor([[1, 0, 4]], { dtype: 'int64' }));
      y.backward(wt.ones([1, 3, 3], { device: 'webgpu' }));
      moved.forward = [y.device, await y.toArrayAsync(), await emb.weight.grad.toArrayAsync()];
      const opt = new wt.optim.SGD(model.parameters(), { lr: 1 });
      opt.step();
      moved.stepped = await emb.weight.toArrayAsync();
      let syncErr = null;
      try { model.to('cpu'); } catch (e) { syncErr = [e.code, e.message]; }
      await model.toAsync('cpu');
      const back = {
        same: model.parameters().every((p, i) => p === params[i]), devices: model.parameters().map((p) => p.device),
        values: model.parameters().map((p) => p.toArray()), grad: emb.weight.grad?.device,
      };
      opt.dispose();
      // float64 cannot go: refused before anything moves; converting on the way can
      const lin = new wt.nn.Linear(2, 2).double();
      let f64Err = null;
      try { lin.to('webgpu'); } catch (e) { f64Err = [e.code, e.message, lin.weight.device]; }
      lin.to({ dtype: 'float32', device: 'webgpu' });
      back.f64 = [f64Err, lin.weight.device, lin.weight.dtype, lin.bias.device];
      return { before, moved, syncErr, back };
    });
    assert.ok(!r.error, r.error?.join('\n'));
    assert.equal(r.moved.same, true);
    assert.deepEqual(r.moved.devices, ['webgpu', 'webgpu', 'webgpu']);
    assert.deepEqual(r.moved.buffers, [['1.running_mean', 'webgpu', 'float32'], ['1.running_var', 'webgpu', 'float32'],
      ['1.num_batches_tracked', 'cpu', 'int64']]);
    assert.deepEqual(r.moved.requiresGrad, [true, true, true]);
    const W = r.before[0];
    assert.deepEqual(r.moved.forward[0], 'webgpu');
    assert.deepEqual(r.moved.forward[1], [[W[1], W[0], W[4]]]);
    assert.deepEqual(r.moved.forward[2], [[0, 0, 0], [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1]]); // padding row 0: no gradient
    assert.deepEqual(r.moved.stepped[1], W[1].map((v) => Math.fround(v - 1)));
    assert.deepEqual(r.syncErr, ['NotImplemented', "to: a webgpu module is read back asynchronously: use await module.toAsync('cpu')"]);
    assert.equal(r.back.same, true);
    assert.deepEqual(r.back.devices, ['cpu', 'cpu', 'cpu']);
    assert.deepEqual(r.back.values[0][1], r.moved.stepped[1]);
    assert.equal(r.back.grad, 'cpu');
    assert.equal(r.back.f64[0][0], 'TypeError');
    assert.match(r.back.f64[0][1], /to: a float64 parameter or buffer cannot live on the webgpu device/);
    assert.deepEqual(r.back.f64.slice(1), ['webgpu', 'float32', 'webgpu']);
    assert.equal(r.back.f64[0][2], 'cpu');
  });

  test('the audit: composites that read host memory refuse a webgpu tensor with a WeftError', async () => {
    const r = await run(async (wt) => {
      const q = wt.randn([1, 2, 3, 4]).to('webgpu');
      const logits = wt.randn([3, 4]).to('webgpu');
      const t32 = wt.tensor([0, 3, 1], { dtype: 'int32' }).to('webgpu');
      const calls = {
        causalAttention: () => wt.scaledDotProductAttention(q, q, q, null, 0, true),
        smoothedCrossEntropy: () => wt.crossEntropy(logits, t32, null, 'mean', -100, 0.1),
        tensorSplit: () => wt.tensorSplit(logits, wt.tensor([1], { dtype: 'int32' }).to('webgpu'), 0),
      };
      const out = {};
      for (const [k, f] of Object.entries(calls)) {
        try {
          const v = f();
          out[k] = ['result', Array.isArray(v) ? v.map((x) => x.device) : v.device];
        } catch (e) {
          out[k] = [e.constructor.name, e.name, e.message];
        }
      }
      return out;
    });
    assert.ok(!r.error, r.error?.join('\n'));
    for (const [k, v] of Object.entries(r)) assert.equal(v[0], 'WeftError', `${k}: ${v.join(' ')}`);
    assert.match(r.tensorSplit[2], /tensor_split expected tensor_indices_or_sections to be on cpu, but it's on webgpu/);
  });

  // ---- the PyTorch fixtures on 'webgpu' ----

  const SUPPORTED = new Set(['index_select', 'gather', 'scatter.src', 'scatter_.src', 'scatter.value', 'scatter_.value',
    'scatter_add', 'scatter_add_', 'masked_fill.Scalar', 'masked_fill_.Scalar', 'masked_fill.Tensor', 'masked_fill_.Tensor',
    'cat', 'stack']);
  const GPU_DTYPES = new Set(['float32', 'int32', 'bool', 'int64']);
  const tensorsOf = (c) => c.args.flatMap((a) => (a.tensor ? [a.tensor] : a.tensors ? a.tensors.map((x) => x.tensor) : []));
  // the index family moves float32 and int32 (bool only through masked_fill and cat's copies)
  const BOOL_OK = new Set(['masked_fill.Scalar', 'masked_fill_.Scalar', 'masked_fill.Tensor', 'masked_fill_.Tensor', 'cat', 'stack']);
  const replayable = (c) => SUPPORTED.has(c.op) && tensorsOf(c).every((t) => GPU_DTYPES.has(t.dtype)) &&
    (BOOL_OK.has(c.op) || !tensorsOf(c).some((t) => t.dtype === 'bool')) &&
    (c.expect.error !== undefined || GPU_DTYPES.has(c.expect.dtype)) && c.expect.dtype !== 'int64' &&
    !(c.op.startsWith('stack') && tensorsOf(c).some((t) => t.dtype === 'int64'));

  test('index.json and join.json replayed on webgpu (cpu int64 indices uploaded as int32)', async () => {
    const cases = [...loadFixture('index.json').cases, ...loadFixture('join.json').cases].filter(replayable)
      .filter((c) => !tensorsOf(c).some((t, i) => t.dtype === 'int64' && !(c.op !== 'cat' && i > 0)));
    const r = await run(async (wt, [cases, boolOk]) => {
      const BOOL_OK = new Set(boolOk);
      const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
      const bad = [];
      for (const c of cases) {
        const made = [];
        // values on the device; the index argument (third) stays a cpu tensor, so it is range-checked
        const tensor = (t, i) => {
          const base = wt.tensor(t.storage.map(num), { dtype: t.dtype });
          made.push(base);
          const onCpu = t.dtype === 'int64' || (i === 2 && !BOOL_OK.has(c.op));
          const dev = onCpu ? base : base.to('webgpu');
          if (dev !== base) made.push(dev);
          const v = dev.asStrided(t.size, t.stride, t.offset);
          made.push(v);
          return v;
        };
        const arg = (a, i) => (a.tensor ? tensor(a.tensor, i) : a.tensors ? a.tensors.map((x) => tensor(x.tensor))
          : a.none ? null : a.str !== undefined ? a.str : a.type === 'bool' ? Boolean(a.scalar) : num(a.scalar));
        let res;
        try {
          // keyword-only arguments (after '*' in the schema) go in the trailing options object
          const sc = wt.ops.schema(c.op);
          const params = sc.slice(sc.indexOf('(') + 1, sc.lastIndexOf(') ->')).split(', ');
          const star = params.indexOf('*');
          const kws = star < 0 ? [] : params.slice(star + 1).map((q) => q.split('=')[0].trim().split(' ').pop());
          const vals = c.args.map((a, i) => arg(a, i));
          const pos = vals.slice(0, vals.length - kws.length);
          res = kws.length ? wt.ops.call(c.op, ...pos, Object.fromEntries(kws.map((k, i) => [k, vals[pos.length + i]])))
            : wt.ops.call(c.op, ...pos);
          if (c.expect.error !== undefined) bad.push([c.op, 'no error', c.expect.error, JSON.stringify(c.args).slice(0, 300)]);
          else {
            const w = c.expect;
            const st = res.stride();
            const vals = [await res.toArrayAsync()].flat(Infinity).map(Number);
            const tol = c.op.startsWith('scatter_add') ? 1e-6 : 0;
            if (res.device !== 'webgpu' || res.dtype !== w.dtype || JSON.stringify(res.shape) !== JSON.stringify(w.size) ||
              w.size.some((n, d) => n > 1 && st[d] !== w.stride[d]) ||
              w.values.some((x, i) => !(Object.is(num(x), vals[i]) || Math.abs(num(x) - vals[i]) <= tol * Math.abs(num(x))))) {
              bad.push([c.op, JSON.stringify(c.args).slice(0, 160), res.dtype, res.shape, st, vals, w]);
            }
          }
        } catch (e) {
          if (c.expect.error === undefined || !e.message.includes(c.expect.error)) {
            bad.push([c.op, e.message, c.expect.error, JSON.stringify(c.args).slice(0, 300)]);
          }
        }
        if (res && !made.includes(res)) res.dispose();
        for (const t of made) t.dispose();
      }
      return { n: cases.length, bad };
    }, [cases, [...BOOL_OK]]);
    assert.ok(!r.error, r.error?.join('\n'));
    assert.ok(r.n > 150, `only ${r.n} cases replayed`);
    assert.deepEqual(r.bad, []);
  });

  test('embedding.json (embedding and its weight gradient) and loss.json (nll_loss) replayed on webgpu', async () => {
    const emb = loadFixture('embedding.json').cases.filter((c) => c.fn === 'embedding' && c.args.weight.dtype === 'float32' &&
      !c.expect?.error && !c.error &&
      !c.options?.scale_grad_by_freq && !c.options?.scaleGradByFreq && !c.options?.max_norm && !c.options?.maxNorm);
    // (a cpu int32 target is made int64 by the JS surface: those cases are the cpu's)
    const nll = loadFixture('loss.json').cases.filter((c) => c.fn === 'nll_loss' && c.args.self.dtype === 'float32' &&
      c.args.target.dtype === 'int64');
    const r = await run(async (wt, [emb, nll]) => {
      const tensor = (t, dev) => {
        const base = wt.tensor(t.storage, { dtype: t.dtype }).asStrided(t.size, t.stride, t.offset);
        return dev && t.dtype !== 'int64' ? base.to(dev) : base;
      };
      const close = (a, b, tol) => a.length === b.length &&
        a.map(Number).every((v, i) => (Number.isNaN(v) && Number.isNaN(b[i])) || Math.abs(v - b[i]) <= tol * (1 + Math.abs(v)));
      const bad = [];
      let n = 0;
      for (const c of emb) {
        const W = tensor(c.args.weight, 'webgpu').requiresGrad_(true);
        try {
          const o = c.options ?? {};
          const y = wt.embedding(tensor(c.args.input), W, { paddingIdx: o.padding_idx ?? o.paddingIdx ?? null });
          const vals = [await y.toArrayAsync()].flat(Infinity);
          if (!close(c.expect.values, vals, 0)) bad.push(['embedding', c.expect.values, vals]);
          if (c.grads?.weight) {
            y.backward(tensor(c.grad_out, 'webgpu'));
            const g = [await W.grad.toArrayAsync()].flat(Infinity);
            if (!close(c.grads.weight, g, 1e-6)) bad.push(['embedding grad', c.grads.weight, g]);
          }
          n++;
        } catch (e) {
          bad.push(['embedding', e.message]);
        }
      }
      for (const c of nll) {
        try {
          const x = tensor(c.args.self, 'webgpu');
          const o = c.options ?? {};
          const w = c.args.weight ? tensor(c.args.weight, 'webgpu') : null;
          const l = wt.nllLoss(x, tensor(c.args.target), w, o.reduction ?? 'mean', o.ignore_index ?? o.ignoreIndex ?? -100);
          if (c.expect.error !== undefined) { bad.push(['nll_loss', 'no error', c.expect.error]); continue; }
          const vals = [await l.toArrayAsync()].flat(Infinity);
          if (!close(c.expect.values.map(Number), vals, 1e-5)) bad.push(['nll_loss', c.options, c.expect.values, vals]);
          n++;
        } catch (e) {
          if (c.expect.error === undefined || !e.message.includes(c.expect.error)) bad.push(['nll_loss', e.message, c.expect.error]);
          else n++;
        }
      }
      return { n, bad };
    }, [emb, nll]);
    assert.ok(!r.error, r.error?.join('\n'));
    assert.deepEqual(r.bad, []);
    assert.ok(r.n >= 40, `only ${r.n} cases replayed`);
  });

  test('the page logged no errors', () => {
    assert.deepEqual(s.errors, []);
  });
});
