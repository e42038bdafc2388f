// norm / all / any / logsumexp beyond the fixtures (those are in reduce.json,
// tests/js/reduce-fixtures.test.mjs): torch.norm's Python forms ('fro', p null,
// keepdim without a dim), explain()'s reduction plan, Meta tensors, worker mode,
// and float32 runs long enough for the SIMD kernels and the thread split
// against a float64 reference (var too: one Welford pass, partials merged).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initWorker } from 'weft';
import { init, WeftError, noLeaks, VARIANTS } from './helpers.mjs';

const close = (a, b, e = 1e-5) => (Number.isNaN(b) ? Number.isNaN(a) : Math.abs(a - b) <= e * (1 + Math.abs(b)));

test("norm: 'fro', p null and keepdim without a dim, as torch.norm", async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => wt.tidy(() => {
    const x = wt.tensor([[3, 4], [6, 8]], { dtype: 'float32' });
    const all2 = Math.hypot(3, 4, 6, 8);
    assert.ok(close(wt.norm(x, 'fro').item(), all2));
    assert.ok(close(x.norm('fro', [0, 1]).item(), all2));
    assert.deepEqual(x.norm('fro', 1).toArray(), [5, 10]);
    assert.ok(close(x.norm(null).item(), all2));
    assert.ok(close(x.norm().item(), all2));
    assert.deepEqual(x.norm(2, { keepdim: true }).shape, [1, 1]);
    assert.deepEqual(x.norm(1, 0, { dtype: 'float64' }).toArray(), [9, 12]);
    assert.equal(x.norm(2, { dtype: 'float64' }).dtype, 'float64');
    assert.deepEqual(x.norm(Infinity, 1).toArray(), [4, 8]);
    assert.deepEqual(x.norm(0, 1).toArray(), [2, 2]);
    const out = wt.empty([0]);
    assert.equal(x.norm(1, 1, { out }), out);
    assert.deepEqual(out.toArray(), [7, 14]);
    for (const [f, msg] of [
      [() => x.norm('fro', [0, 1, 2]), 'Expected at most 2 dimensions, but got 3 dimensions instead.'],
      [() => x.norm('fro', { dtype: 'float64' }), 'dtype argument is not supported in frobenius norm'],
      [() => x.norm('nuc'), "nuclear norm (p = 'nuc') is not supported"],
      [() => x.norm('abc'), "only valid string values are 'fro' and 'nuc', found abc"],
      [() => wt.norm(wt.tensor([1n, 2n])), 'norm(): input dtype should be either floating point or complex. Got int64'],
    ]) {
      assert.throws(f, (e) => e instanceof WeftError && e.message.includes(msg), msg);
    }
  }));
});

test('norm, all, any, logsumexp: explain shows the reduction plan', async () => {
  const wt = await init({ variant: 'simd' });
  const x = wt.rand([8, 300]);
  const n = wt.explain('norm', x, 2, [1]);
  assert.deepEqual(n.reduction.reducedDims, [1]);
  assert.equal(n.reduction.kind, 'inner');
  assert.equal(n.reduction.accDtype, 'float32');
  assert.equal(wt.explain('norm', x, 2, [0]).reduction.kind, 'outer');
  assert.equal(wt.explain('norm', x.to('float64'), 1, [1]).reduction.accDtype, 'float64');
  assert.deepEqual(wt.explain('logsumexp', x, [1]).reduction.reducedDims, [1]);
  assert.deepEqual(wt.explain('all', x, 0).reduction.reducedDims, [0]);
  assert.equal(wt.explain('any', x).reduction.numOutputs, 1);
  x.dispose();
});

test('norm, all, any, logsumexp on Meta tensors: shapes and dtypes only', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => wt.tidy(() => {
    const m = wt.empty([4, 5, 6], { device: 'meta' });
    const r = m.norm(2, [0, 2], { keepdim: true });
    assert.deepEqual([r.device, r.shape, r.dtype], ['meta', [1, 5, 1], 'float32']);
    assert.deepEqual([m.all(1).shape, m.all(1).dtype], [[4, 6], 'bool']);
    assert.deepEqual(m.any().shape, []);
    assert.deepEqual(m.logsumexp([1]).shape, [4, 6]);
  }));
});

// float64 reference of sum(x^2), sum |x|, max |x|, sum exp, var over dim 1 of [rows, cols] or dim 0
function reference(data, rows, cols, dim) {
  const n = dim === 1 ? rows : cols, len = dim === 1 ? cols : rows;
  const at = (o, k) => (dim === 1 ? data[o * cols + k] : data[k * cols + o]);
  return Array.from({ length: n }, (_, o) => {
    let sq = 0, ab = 0, mx = 0, ex = 0, sum = 0;
    for (let k = 0; k < len; k++) {
      const v = at(o, k);
      sq += v * v; ab += Math.abs(v); mx = Math.max(mx, Math.abs(v)); ex += Math.exp(v); sum += v;
    }
    let dev = 0;
    for (let k = 0; k < len; k++) dev += (at(o, k) - sum / len) ** 2;
    return { two: Math.sqrt(sq), one: ab, inf: mx, lse: Math.log(ex), var: dev / (len - 1) };
  });
}

for (const variant of VARIANTS) {
  test(`${variant}: float32 norm / logsumexp / var rows and columns at 1-2 threads against float64`, async () => {
    const wt = await init({ variant });
    for (const threads of variant === 'simd-threads' ? [1, 2] : [1]) {
      if (variant === 'simd-threads') wt.setNumThreads(threads);
      for (const [rows, cols] of [[3, 70001], [70001, 5], [257, 259], [1, 1000003]]) {
        await noLeaks(wt, () => wt.tidy(() => {
          const data = Float32Array.from({ length: rows * cols }, (_, i) => ((i * 7919) % 1013) / 1013 - 0.45);
          const x = wt.tensor(data).view([rows, cols]);
          for (const dim of [0, 1]) {
            const ref = reference(data, rows, cols, dim);
            const got = {
              two: x.norm(2, dim).toArray(), one: x.norm(1, dim).toArray(), inf: x.norm(Infinity, dim).toArray(),
              lse: x.logsumexp(dim).toArray(), var: x.var(dim).toArray(),
            };
            for (const k of Object.keys(got)) {
              got[k].forEach((v, o) => assert.ok(close(v, ref[o][k], 2e-5), `${k} [${rows},${cols}] dim ${dim} ` +
                `out ${o}: ${v} vs ${ref[o][k]} (${threads} threads)`));
            }
            // the same values in the other layout (outer reductions become inner ones)
            const other = x.t().contiguous().t().norm(2, dim).toArray();
            other.forEach((v, o) => assert.ok(close(v, ref[o].two, 2e-5), `transposed layout, out ${o}`));
          }
          assert.equal(x.gt(-1).all().item(), true);
          assert.equal(x.gt(0.55).any().item(), false);
        }));
      }
    }
  });
}

test('worker mode: norm, all, any, logsumexp', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const x = ww.tensor([[3, 4], [6, 8]], { dtype: 'float32' });
    assert.deepEqual(await ww.norm(x, 2, 1).toArray(), [5, 10]);
    assert.deepEqual(await x.norm('fro', 0).toArray(), [Math.hypot(3, 6), Math.hypot(4, 8)].map(Math.fround));
    assert.equal(await x.all().item(), true);
    assert.deepEqual(await ww.any(x.gt(5), 1).toArray(), [false, true]);
    assert.equal(await x.logsumexp(1).dtype, 'float32');
  } finally {
    await ww.terminate();
  }
});

test('var / std: one pass keeps float64 accuracy far from 0, at 1 and 2 threads', async () => {
  const wt = await init({ variant: 'simd-threads' });
  for (const threads of [1, 2]) {
    wt.setNumThreads(threads);
    await noLeaks(wt, () => wt.tidy(() => {
      const n = 300007;
      const data = Float64Array.from({ length: n }, (_, i) => 1e6 + ((i * 7919) % 1013) / 1013);
      let mean = 0;
      for (const v of data) mean += v / n;
      let dev = 0;
      for (const v of data) dev += (v - mean) ** 2;
      const x = wt.tensor(data, { dtype: 'float64' });
      assert.ok(close(x.var().item(), dev / (n - 1), 1e-9), `${threads} threads`);
      assert.ok(close(x.std(0, { correction: 0 }).item(), Math.sqrt(dev / n), 1e-9));
      assert.deepEqual(wt.explain('var', x).reduction.accDtype, 'float64');
    }));
  }
});
