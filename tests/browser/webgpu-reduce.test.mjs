// The row-reduction family on the webgpu device in Chromium (SwiftShader):
// reductions, softmax / log_softmax and layer_norm with their backward ops,
// compared with the cpu results of the same ops, gradients through autograd,
// the PyTorch fixtures of reduce.json replayed on 'webgpu', and the refused
// dtypes' messages (docs/webgpu.md).
// Tolerance: float32 within 1e-4 relative (plus 1e-5 absolute): the workgroup
// tree sums in another order than the cpu's cascade, and var / std
// accumulate in float32 where the cpu uses float64.
//   node --test tests/browser/webgpu-reduce.test.mjs   (needs `npm run build` and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, webgpuPage } from './helpers.mjs';

// The suite's comparison helpers, installed in the page (window).
function pageSetup() {
  // values equal within the float32 tolerance (NaN equals NaN, infinities themselves)
  window.near = (a, b, tol = 1e-4) => {
    if (Number.isNaN(b)) return Number.isNaN(a);
    if (!Number.isFinite(b)) return a === b;
    return Math.abs(a - b) <= tol * Math.abs(b) + 1e-5;
  };
  // the webgpu result against the cpu one: shape, dtype and values
  window.same = async (g, c) => {
    const v = await g.dataAsync();
    const w = c.data();
    if (g.device !== 'webgpu') return `device ${g.device}`;
    if (JSON.stringify(g.shape) !== JSON.stringify(c.shape)) return `shape ${g.shape} vs ${c.shape}`;
    if (g.dtype !== c.dtype) return `dtype ${g.dtype} vs ${c.dtype}`;
    for (let i = 0; i < w.length; i++) {
      if (!window.near(Number(v[i]), Number(w[i]))) return `[${i}] ${v[i]} vs ${w[i]}`;
    }
    return null;
  };
}

describe('webgpu reductions, softmax and norms (SwiftShader)', { timeout: 600000 }, () => {
  const s = webgpuPage({ before, after }, { setup: pageSetup });
  const run = s.run;

  test('reductions over kept and reduced dims, any strides, equal the cpu ones', async () => {
    const r = await run(async (wt) => {
      const fails = [];
      // contiguous, transposed, a sliced (offset, stepped) view, a long row (the two-pass split)
      const inputs = [
        ['3x4x5', () => wt.randn([3, 4, 5])],
        ['permuted', () => wt.randn([4, 3, 5]).permute([2, 0, 1])],
        ['sliced', () => wt.randn([6, 10]).slice(0, 1, 6, 2).slice(1, 1, 9, 3)],
        ['long', () => wt.randn([3, 5000])],
        ['whole-long', () => wt.randn([9000])],
      ];
      const ops = [
        ['sum', (x) => x.sum()], ['sum0', (x) => x.sum(0)], ['sum-1k', (x) => x.sum(-1, { keepdim: true })],
        ['sum01', (x) => (x.dim() > 1 ? x.sum([0, 1]) : x.sum(0))],
        ['mean', (x) => x.mean()], ['mean-1', (x) => x.mean(-1)],
        ['prod0', (x) => (x.shape[0] < 10 ? x.prod(0) : x.abs().add(1).log().prod(0))],
        ['amax', (x) => x.amax(-1)], ['amin0', (x) => x.amin(0, { keepdim: true })],
        ['max', (x) => x.max()], ['min', (x) => x.min()],
        ['var', (x) => x.var()], ['std-1', (x) => x.std(-1)],
        ['var0c0', (x) => wt.var(x, 0, { correction: 0 })], ['stdk', (x) => x.std(-1, { keepdim: true })],
        ['softmax-1', (x) => x.softmax(-1)], ['softmax0', (x) => x.softmax(0)],
        ['logsm-1', (x) => x.logSoftmax(-1)], ['logsm0', (x) => x.logSoftmax(0)],
      ];
      for (const [iname, make] of inputs) {
        const x = make();
        const base = x.to('webgpu');
        // the same strided view on the device: upload the storage, then view it
        const g = wt.tensor(x.contiguous().data(), { device: 'webgpu' }).reshape(x.shape);
        for (const xg of [base, g]) {
          for (const [oname, f] of ops) {
            if (iname.startsWith('whole') && /0c0|sum01/.test(oname)) continue;
            const want = f(x);
            const got = f(xg);
            const bad = await window.same(got, want);
            if (bad) fails.push(`${iname}/${oname}: ${bad}`);
            want.dispose();
            got.dispose();
          }
        }
        // a strided webgpu view (not made contiguous by to()): the base uploaded, then viewed
        const flat = x.contiguous();
        const gflat = flat.to('webgpu');
        const tv = gflat.t ? (flat.dim() === 2 ? gflat.t() : gflat) : gflat;
        const cv = flat.dim() === 2 ? flat.t() : flat;
        for (const [oname, f] of ops.slice(0, 8)) {
          const bad = await window.same(f(tv), f(cv));
          if (bad) fails.push(`${iname}/view/${oname}: ${bad}`);
        }
        for (const t of [x, base, g, flat, gflat]) t.dispose();
      }
      // int32 and bool: amax / amin keep int32, sum with dtype int32
      const xi = wt.tensor([[3, -7, 2], [9, 0, -1]], { dtype: 'int32' });
      const gi = xi.to('webgpu');
      for (const [oname, f] of [['amax', (x) => x.amax(1)], ['amin', (x) => x.amin(0)], ['max', (x) => x.max()],
        ['sumi32', (x) => x.sum(0, { dtype: 'int32' })], ['prodi32', (x) => x.prod(1, { dtype: 'int32' })],
        ['sumf', (x) => x.sum(1, { dtype: 'float32' })]]) {
        const bad = await window.same(f(gi), f(xi));
        if (bad) fails.push(`int32/${oname}: ${bad}`);
      }
      const xb = wt.tensor([[true, false, true], [true, true, true]]);
      const gb = xb.to('webgpu');
      for (const [oname, f] of [['all', (x) => wt.all(x)], ['any1', (x) => wt.any(x, 1)], ['all0', (x) => wt.all(x, 0)],
        ['amax', (x) => x.amax(1)], ['sumi32', (x) => x.sum(1, { dtype: 'int32' })]]) {
        let bad;
        try { bad = await window.same(f(gb), f(xb)); } catch (e) { bad = e.message; }
        if (bad) fails.push(`bool/${oname}: ${bad}`);
      }
      // NaN and infinities: max propagates NaN, logsumexp / softmax rows with -inf
      const xs = wt.tensor([[1, NaN, 3], [-Infinity, 2, -Infinity], [-Infinity, -Infinity, -Infinity]]);
      const gs = xs.to('webgpu');
      for (const [oname, f] of [['amax', (x) => x.amax(1)], ['amin', (x) => x.amin(1)], ['sm', (x) => x.softmax(1)],
        ['lsm', (x) => x.logSoftmax(1)], ['sum', (x) => x.sum(1)]]) {
        const bad = await window.same(f(gs), f(xs));
        if (bad) fails.push(`special/${oname}: ${bad}`);
      }
      // empty reductions: sum 0, mean NaN
      const e = wt.zeros([0, 3], { device: 'webgpu' });
      const es = [await e.sum(0).toArrayAsync(), await e.mean(0).toArrayAsync()];
      return { fails, es };
    });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.deepEqual(r.fails, []);
    assert.deepEqual(r.es[0], [0, 0, 0]);
    assert.ok(r.es[1].every(Number.isNaN));
  });

  test('explain(): a workgroup tree per row, and the first pass of a long reduction\'s two-pass split', async () => {
    const r = await run(async (wt) => {
      const x = wt.randn([4, 6]).to('webgpu');
      const y = wt.randn([20000]).to('webgpu');
      const pick = (e) => ({ kind: e.kind, program: e.program, grid: e.grid, wg: e.workgroupSize,
        tree: /workgroupBarrier/.test(e.wgsl) && /var<workgroup>/.test(e.wgsl), partials: /tp\[w\]/.test(e.wgsl) });
      const out = { short: pick(wt.explain('sum', x, 1)), long: pick(wt.explain('sum', y)) };
      // the split's answer, against the cpu's
      const yc = await y.toAsync('cpu');
      out.sums = [await y.sum().itemAsync(), yc.sum().item()];
      for (const t of [x, y, yc]) t.dispose();
      return out;
    });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.deepEqual(r.short, { kind: 'webgpu', program: 'red:sum:0:1:1:float32:rfloat32:ifloat32', grid: [4, 1, 1],
      wg: [64, 1, 1], tree: true, partials: false });
    // 20000 elements: 20 chunks of 1000, then one workgroup combines them
    assert.deepEqual(r.long, { kind: 'webgpu', program: 'red:sum:1:0:1:float32:rfloat32:ifloat32', grid: [20, 1, 1],
      wg: [64, 1, 1], tree: true, partials: true });
    assert.ok(Math.abs(r.sums[0] - r.sums[1]) <= 1e-4 * Math.abs(r.sums[1]) + 1e-3, `${r.sums}`);
  });

  test('layer_norm forward and backward (weights, no weights, several normalized dims) equal the cpu ones', async () => {
    const r = await run(async (wt) => {
      const fails = [];
      const cases = [
        [[3, 8], [8], true], [[2, 3, 4], [3, 4], true], [[4, 5], [5], false], [[2, 6000], [6000], true],
      ];
      for (const [shape, ns, affine] of cases) {
        const x = wt.randn(shape);
        const w = affine ? wt.randn(ns) : null;
        const b = affine ? wt.randn(ns) : null;
        const gy = wt.randn(shape);
        const grads = async (dev) => {
          const xs = x.to(dev).detach().requiresGrad_(true);
          const ws = w ? w.to(dev).detach().requiresGrad_(true) : null;
          const bs = b ? b.to(dev).detach().requiresGrad_(true) : null;
          const y = wt.layerNorm(xs, ns, ws, bs, { eps: 1e-5 });
          y.mul(gy.to(dev)).sum().backward();
          return [y, xs.grad, ws?.grad, bs?.grad].filter(Boolean);
        };
        const c = await grads('cpu');
        const g = await grads('webgpu');
        for (let i = 0; i < c.length; i++) {
          const bad = await window.same(g[i], c[i]);
          if (bad) fails.push(`${shape}/${['y', 'dx', 'dw', 'db'][i]}: ${bad}`);
        }
      }
      return { fails };
    });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.deepEqual(r.fails, []);
  });

  test('batch_norm (training with running stats, eval; NCHW and channels_last), group_norm, rms_norm: values and gradients', async () => {
    const r = await run(async (wt) => {
      const fails = [];
      const check = async (tag, g, c) => {
        const bad = await window.same(g, c);
        if (bad) fails.push(`${tag}: ${bad}`);
      };
      // (input, weight, bias) on a device, as leaves
      const leaves = (dev, ts) => ts.map((t) => (t ? t.to(dev).detach().requiresGrad_(true) : null));
      for (const [shape, cl] of [[[4, 3, 5, 6], false], [[4, 3, 5, 6], true], [[8, 5], false], [[2, 3, 70, 70], false]]) {
        const x0 = wt.randn(shape);
        const x = cl ? x0.contiguous({ memoryFormat: 'channels_last' }) : x0;
        const w = wt.randn([shape[1]]);
        const b = wt.randn([shape[1]]);
        const gy = wt.randn(shape);
        for (const training of [true, false]) {
          const out = {};
          const rmBase = wt.randn([shape[1]]);
          const rvBase = wt.rand([shape[1]]).add(0.5);
          for (const dev of ['cpu', 'webgpu']) {
            const rm = rmBase.clone().to(dev);
            const rv = rvBase.clone().to(dev);
            const [xs, ws, bs] = leaves(dev, [x, w, b]);
            const y = wt.batchNorm(xs, rm, rv, ws, bs, { training, momentum: 0.2, eps: 1e-5 });
            y.mul(gy.to(dev)).sum().backward();
            out[dev] = [y, xs.grad, ws.grad, bs.grad, rm, rv];
          }
          const names = ['y', 'dx', 'dw', 'db', 'running_mean', 'running_var'];
          for (let i = 0; i < 6; i++) await check(`bn ${shape} cl=${cl} train=${training} ${names[i]}`, out.webgpu[i], out.cpu[i]);
          if (cl && out.webgpu[0].stride().join() !== out.cpu[0].stride().join()) fails.push(`bn channels_last strides ${out.webgpu[0].stride()}`);
        }
        if (shape.length === 4 && !cl) {
          // running stats: the same start on both devices, then one training step
          const rm0 = wt.randn([shape[1]]);
          const rv0 = wt.rand([shape[1]]).add(0.5);
          const rmc = rm0.clone();
          const rvc = rv0.clone();
          const rmg = rm0.to('webgpu');
          const rvg = rv0.to('webgpu');
          wt.batchNorm(x, rmc, rvc, w, b, { training: true, momentum: 0.3 }).dispose();
          wt.batchNorm(x.to('webgpu'), rmg, rvg, w.to('webgpu'), b.to('webgpu'), { training: true, momentum: 0.3 }).dispose();
          await check('bn running_mean', rmg, rmc);
          await check('bn running_var', rvg, rvc);
        }
        if (shape.length === 4) {
          const out = {};
          for (const dev of ['cpu', 'webgpu']) {
            const [xs, ws, bs] = leaves(dev, [x, wt.randn([shape[1]]).fill_(0.5), null]);
            const y = wt.groupNorm(xs, 3, ws, bs, { eps: 1e-5 });
            y.mul(gy.to(dev)).sum().backward();
            out[dev] = [y, xs.grad, ws.grad];
          }
          for (let i = 0; i < 3; i++) await check(`gn ${shape} cl=${cl} [${i}]`, out.webgpu[i], out.cpu[i]);
        }
        const out = {};
        const ns = shape.slice(-1);
        const wr = wt.randn(ns);
        for (const dev of ['cpu', 'webgpu']) {
          const [xs, ws] = leaves(dev, [x0, wr]);
          const y = wt.rmsNorm(xs, ns, ws, { eps: 1e-6 });
          y.mul(gy.to(dev)).sum().backward();
          out[dev] = [y, xs.grad, ws.grad];
        }
        for (let i = 0; i < 3; i++) await check(`rms ${shape} [${i}]`, out.webgpu[i], out.cpu[i]);
      }
      return { fails };
    });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.deepEqual(r.fails, []);
  });

  test('gradients through autograd: broadcast sums, mean, softmax, logSoftmax, var, logsumexp', async () => {
    const r = await run(async (wt) => {
      const fails = [];
      const a = wt.randn([3, 4]);
      const b = wt.randn([4]);
      const run = async (dev) => {
        const as = a.to(dev).detach().requiresGrad_(true);
        const bs = b.to(dev).detach().requiresGrad_(true);
        const s = as.add(bs).sum();
        const m = as.mul(bs).mean(0).sum();
        const sm = as.softmax(1).mul(bs).sum();
        const ls = as.logSoftmax(0).mul(as).sum();
        // (std, norm and amax differentiate through where(), an elementwise op not on webgpu yet)
        const v = as.var(1).sum().add(as.var(0, { correction: 0 }).sum()).add(as.logsumexp(1).sum());
        s.add(m).add(sm).add(ls).add(v).backward();
        return [as.grad, bs.grad];
      };
      const c = await run('cpu');
      const g = await run('webgpu');
      for (let i = 0; i < 2; i++) {
        const bad = await window.same(g[i], c[i]);
        if (bad) fails.push(`grad ${i}: ${bad}`);
      }
      return { fails };
    });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.deepEqual(r.fails, []);
  });

  test('refused dtypes and ops say why', async () => {
    const r = await run(async (wt) => {
      const msg = (f) => { try { f(); return 'no error'; } catch (e) { return e.message; } };
      const x = wt.randn([2, 3]).to('webgpu');
      const i = wt.tensor([1, 2], { dtype: 'int32', device: 'webgpu' });
      return {
        argmax: msg(() => x.argmax(1)),
        maxDim: msg(() => x.max(1)),
        sumInt: msg(() => i.sum()),
        meanInt: msg(() => i.mean()),
        mixedOut: msg(() => wt.sum(x, 0, { out: wt.zeros([3]) })),
        mixedNorm: msg(() => wt.layerNorm(x, [3], wt.ones([3]))),
        inPlaceOut: msg(() => wt.sum(x, 0, { out: x.narrow(0, 0, 1).view([3]) })),
      };
    });
    assert.match(r.argmax, /argmax: its indices are int64, which a webgpu tensor cannot hold/);
    assert.match(r.maxDim, /max: its indices are int64, which a webgpu tensor cannot hold/);
    assert.match(r.sumInt, /sum: the result of an integer sum is int64, which a webgpu tensor cannot hold .*dtype: 'int32'/);
    assert.match(r.meanInt, /mean\(\): could not infer output dtype/);
    assert.match(r.mixedOut, /Expected all tensors to be on the same device, but found at least two devices/);
    assert.match(r.mixedNorm, /layer_norm: expected all tensors to be on the same device/);
    assert.match(r.inPlaceOut, /sum: an output sharing its storage with another operand is not supported on the webgpu device yet/);
  });

  // One fixture file's cases on webgpu: every tensor argument (out= ones too) uploaded whole and viewed
  // with the case's sizes / strides / offset, the op called through ops.call, results read back.
  const replayReduce = (cases) => s.page.evaluate(async (cs) => {
    const wt = window.wt;
    const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
    const camel = (n) => n.replace(/_([a-z0-9])/g, (_, ch) => ch.toUpperCase());
    const fails = [];
    let ran = 0;
    for (const c of cs) {
      const made = [];
      try {
        const pos = [];
        const kw = {};
        for (const a of c.args) {
          let v;
          if (a.tensor) {
            const s = a.tensor;
            const base = (s.storage.length ? wt.tensor(s.storage.map(num), { dtype: s.dtype })
              : wt.empty([0], { dtype: s.dtype }));
            const gb = base.to('webgpu');
            made.push(base, gb);
            v = gb.asStrided(s.size, s.stride, s.offset);
            made.push(v);
          } else if ('ints' in a) v = a.ints;
          else if ('int' in a) v = a.int;
          else if ('bool' in a) v = a.bool;
          else if ('dtype' in a) v = a.dtype;
          else if ('scalar' in a) v = a.tag === 'bool' ? !!a.scalar : num(a.scalar);
          else v = null;
          if (a.kw) kw[camel(a.name)] = v;
          else pos.push(v);
        }
        const res = wt.ops.call(c.op, ...pos, kw);
        const outs = Array.isArray(c.expect) ? [...res] : [res];
        const wants = Array.isArray(c.expect) ? c.expect : [c.expect];
        for (const t of outs) if (!made.includes(t)) made.push(t);
        for (let k = 0; k < wants.length; k++) {
          const out = outs[k];
          const want = wants[k];
          if (out.device !== 'webgpu' || out.dtype !== want.dtype ||
              JSON.stringify(out.shape) !== JSON.stringify(want.size)) {
            fails.push(`${c.op}: ${out.device} ${out.dtype} ${out.shape}, want ${want.dtype} ${want.size}`);
            continue;
          }
          const st = out.stride();
          if (want.stride.some((s, d) => want.size[d] > 1 && st[d] !== s)) fails.push(`${c.op}: stride ${st}`);
          const got = Array.from(await out.dataAsync(), Number);
          for (let i = 0; i < want.values.length; i++) {
            if (!window.near(got[i], Number(num(want.values[i])), 1e-4)) {
              fails.push(`${c.op} ${JSON.stringify(c.args.map((a) => a.tensor ? a.tensor.size : a))}: [${k}][${i}] ${got[i]} want ${want.values[i]}`);
              break;
            }
          }
        }
        ran++;
      } catch (e) {
        fails.push(`${c.op}: ${e.message}`);
      } finally {
        for (const t of made) t.dispose();
      }
    }
    return { fails: fails.slice(0, 20), nfails: fails.length, ran };
  }, cases);

  // The cases of the covered ops whose tensors WGSL can hold, at most `most` per op (SwiftShader is slow).
  const pickCases = (file, ops, most) => {
    const fixture = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures', file), 'utf8'));
    const DT = new Set(['float32', 'int32', 'bool']);
    const expects = (c) => (Array.isArray(c.expect) ? c.expect : [c.expect]);
    const ok = (c) => ops.has(c.op) && expects(c).every((e) => e.error === undefined && DT.has(e.dtype)) &&
      c.args.every((a) => !a.tensor || DT.has(a.tensor.dtype)) && c.args.every((a) => !a.dtype || DT.has(a.dtype));
    const per = new Map();
    return fixture.cases.filter((c) => ok(c) && (per.set(c.op, (per.get(c.op) ?? 0) + 1).get(c.op) <= most));
  };

  test('PyTorch fixtures (reduce.json, reduce2.json) replayed on webgpu: float32 / int32 / bool cases, within 1e-4', async () => {
    const ops = new Set(['sum', 'sum.dim_IntList', 'sum.IntList_out', 'mean', 'mean.dim', 'mean.out', 'prod',
      'prod.dim_int', 'prod.int_out', 'amax', 'amax.out', 'amin', 'amin.out', 'max', 'min', 'var', 'var.dim',
      'var.correction', 'std', 'std.dim', 'std.correction', 'softmax.int', 'log_softmax.int', 'all', 'all.dim',
      'all.out', 'all.all_out', 'any', 'any.dim', 'any.out', 'any.all_out', 'logsumexp', 'logsumexp.out',
      'norm.Scalar', 'norm.ScalarOpt_dim', 'norm.ScalarOpt_dim_dtype', 'norm.ScalarOpt_dtype', 'norm.out',
      'norm.dtype_out', 'var_mean', 'var_mean.dim', 'var_mean.correction', 'std_mean', 'std_mean.dim',
      'std_mean.correction']);
    const cases = [...pickCases('reduce.json', ops, 30), ...pickCases('reduce2.json', ops, 30)];
    const r = await replayReduce(cases);
    assert.ok(r.ran >= 600, `ran ${r.ran} of ${cases.length}`);
    assert.deepEqual(r.fails, [], `${r.nfails} failures`);
  });

  test('PyTorch fixtures (norm_ops.json): batch / layer / group norm on webgpu, values, running stats, gradients', async () => {
    const fixture = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/norm_ops.json'), 'utf8'));
    const cases = fixture.cases.filter((c) => c.args.input.dtype === 'float32' && c.expect.error === undefined);
    const r = await s.page.evaluate(async (cs) => {
      const wt = window.wt;
      const fails = [];
      // float32 within 1e-4 of the largest value (the fold x * a + b rounds off what the input's magnitude does)
      const compare = (what, got, want, scale) => {
        const m = Math.max(1, ...want.map(Math.abs));
        const i = want.findIndex((w, j) => !(Math.abs(got[j] - w) <= scale * 1e-4 * m));
        if (i >= 0) fails.push(`${what}[${i}] ${got[i]}, want ${want[i]}`);
      };
      for (const c of cs) {
        const made = [];
        const track = (t) => { made.push(t); return t; };
        const tensor = (s) => track(track(wt.tensor(s.storage, { dtype: s.dtype })).to('webgpu')).asStrided(s.size, s.stride, 0);
        try {
          const a = {};
          for (const [k, s] of Object.entries(c.args)) {
            if (k === 'gout') continue;
            const t = track(tensor(s));
            a[k] = ['input', 'weight', 'bias'].includes(k) ? track(t.detach().requiresGrad_()) : t;
          }
          const o = c.options;
          const y = track(c.fn === 'batch_norm'
            ? wt.batchNorm(a.input, a.running_mean ?? null, a.running_var ?? null, a.weight ?? null, a.bias ?? null,
              { training: o.training, momentum: o.momentum, eps: o.eps })
            : c.fn === 'layer_norm' ? wt.layerNorm(a.input, o.normalized_shape, a.weight ?? null, a.bias ?? null, { eps: o.eps })
              : wt.groupNorm(a.input, o.num_groups, a.weight ?? null, a.bias ?? null, { eps: o.eps }));
          const w = c.expect;
          const tag = `${c.fn} ${JSON.stringify(o)} ${c.args.input.size}/${c.args.input.stride}`;
          if (y.device !== 'webgpu' || JSON.stringify(y.stride()) !== JSON.stringify(w.stride)) fails.push(`${tag}: ${y.device} stride ${y.stride()}`);
          compare(`${tag} value`, Array.from(await y.dataAsync()), w.values, 1);
          for (const k of ['running_mean', 'running_var']) if (w[k]) compare(`${tag} ${k}`, Array.from(await a[k].dataAsync()), w[k], 1);
          if (w.grads) {
            y.mul(tensor(c.args.gout)).sum().backward();
            for (const [k, g] of Object.entries(w.grads)) {
              const got = a[k].grad;
              if (!got) { fails.push(`${tag}: no gradient for ${k}`); continue; }
              track(got);
              if (JSON.stringify(got.stride()) !== JSON.stringify(g.stride)) fails.push(`${tag} ${k}.grad stride ${got.stride()}`);
              compare(`${tag} ${k}.grad`, Array.from(await got.dataAsync()), g.values, 4);
            }
          }
        } catch (e) {
          fails.push(`${c.fn}: ${e.message}`);
        } finally {
          for (const t of made) t.dispose();
        }
      }
      return { fails: fails.slice(0, 20), nfails: fails.length, n: cs.length };
    }, cases);
    assert.ok(r.n >= 50, `${r.n} cases`);
    assert.deepEqual(r.fails, [], `${r.nfails} failures`);
  });

  test('the page logged no errors', () => {
    assert.deepEqual(s.errors, []);
  });
});
