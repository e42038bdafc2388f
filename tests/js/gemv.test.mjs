// The matrix-vector path (issue 24; src/ops/cpu/gemv.c): float32 products with
// 1..4 rows (or mv's one column) against a weight read in place, with no API
// change. On each variant, against a float64 reference and the GEMM path (the
// same rows inside a 5-row product): linear with and without bias, matmul /
// mm / addmm / mv on both weight layouts, odd sizes, non-contiguous inputs,
// transposed weights, 1-D and 3-D inputs, out=; scalar, SIMD and 3 threads give
// the same bits; gradients through linear are unchanged; nothing leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, counts, VARIANTS } from './helpers.mjs';

const data = (n, seed) => Float32Array.from({ length: n }, (_, i) => (((i * 7919 + seed * 104729) % 2003) / 2003 - 0.5) * 2);

// x [m, k] @ w^T ([n, k]) + bias, in float64
function ref(x, w, bias, m, n, k) {
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = bias ? bias[j] : 0;
      for (let q = 0; q < k; q++) s += x[i * k + q] * w[j * k + q];
      out[i * n + j] = s;
    }
  }
  return out;
}

function near(got, want, k, what) {
  assert.equal(got.length, want.length, what);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= 2e-6 * (k + 1) * (1 + Math.abs(want[i])))) {
      assert.fail(`${what}: [${i}] ${got[i]} want ${want[i]}`);
    }
  }
}

const SHAPES = [[1, 1], [7, 5], [33, 67], [289, 288], [70, 1]]; // [n, k]

for (const variant of VARIANTS) {
  test(`${variant}: few-row products against float64 and the GEMM path`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    for (const [n, k] of SHAPES) wt.tidy(() => {
      const wv = data(n * k, 2), bv = data(n, 3), xv = data(5 * k, 1);
      const w = wt.tensor(wv).view([n, k]), bias = wt.tensor(bv);
      const wT = w.t().contiguous(); // [k, n]
      const x5 = wt.tensor(xv).view([5, k]);
      const gemmRows = wt.linear(x5, w, bias).data(); // 5 rows: the GEMM
      for (let m = 1; m <= 4; m++) {
        const what = `m${m} n${n} k${k}`;
        const x = x5.narrow(0, 0, m);
        const xs = xv.subarray(0, m * k);
        const want = ref(xs, wv, bv, m, n, k), wantNoBias = ref(xs, wv, null, m, n, k);
        const viaGemm = gemmRows.subarray(0, m * n);
        const ys = [
          [wt.linear(x, w, bias), want, 'linear+bias'],
          [wt.linear(x, w), wantNoBias, 'linear'],
          [wt.matmul(x, wT), wantNoBias, 'matmul W[k,n]'],
          [wt.mm(x, w.t()), wantNoBias, 'mm W^T view'],
          [wt.linear(x, wT.t(), bias), want, 'linear, W a transposed view'],
          [wt.addmm(bias, x, wT), want, 'addmm'],
          [wt.addmm(bias, x, w.t(), { beta: 1, alpha: 1 }), want, 'addmm W^T view'],
        ];
        for (const [y, wnt, name] of ys) {
          assert.deepEqual(y.shape, [m, n], `${what} ${name}`);
          near(y.data(), wnt, k, `${what} ${name}`);
          if (wnt === want) near(y.data(), viaGemm, k, `${what} ${name} vs GEMM`);
        }
        // beta and alpha other than 1: the unfused path, same values
        const y2 = wt.addmm(bias, x, w.t(), { beta: 0.5, alpha: 2 });
        near(y2.data(), ref(xs, wv, null, m, n, k).map((v, i) => 2 * v + 0.5 * bv[i % n]), k, `${what} addmm beta/alpha`);
        // x with a non-unit column stride: the columns of a [k, m] tensor
        const xt = wt.tensor(xs).view([m, k]).t().contiguous().t();
        const y3 = wt.linear(xt, w, bias);
        near(y3.data(), want, k, `${what} strided x`);
        // out=, fused bias and not
        const out = wt.empty([0]);
        assert.equal(wt.linear(x, w, bias, { out }), out);
        near(out.data(), want, k, `${what} linear out=`);
        assert.equal(wt.mm(x, wT, { out }), out);
        near(out.data(), wantNoBias, k, `${what} mm out=`);
      }
      // 1-D and 3-D inputs, mv both ways
      const x1 = x5.select(0, 0);
      const want1 = ref(xv.subarray(0, k), wv, bv, 1, n, k);
      const ys = [wt.linear(x1, w, bias), wt.linear(x1.view([1, 1, k]), w, bias)];
      const mv = [wt.mv(w, x1), wt.matmul(w, x1), wt.mv(wT.t(), x1)];
      assert.deepEqual(ys[0].shape, [n]);
      assert.deepEqual(ys[1].shape, [1, 1, n]);
      for (const y of ys) near(y.data(), want1, k, `n${n} k${k} 1-D / 3-D`);
      const wantMv = ref(xv.subarray(0, k), wv, null, 1, n, k);
      for (const y of mv) near(y.data(), wantMv, k, `n${n} k${k} mv`);
    });
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: gradients through a one-row linear`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    wt.tidy(() => {
      const n = 9, k = 6;
      const xv = data(k, 1), wv = data(n * k, 2), bv = data(n, 3), gv = data(n, 4);
      const x = wt.tensor(xv).view([1, k]).requiresGrad_();
      const w = wt.tensor(wv).view([n, k]).requiresGrad_();
      const b = wt.tensor(bv).requiresGrad_();
      const y = wt.linear(x, w, b);
      const g = wt.tensor(gv).view([1, n]);
      y.backward(g);
      const gx = new Float64Array(k), gw = new Float64Array(n * k);
      for (let j = 0; j < n; j++) for (let q = 0; q < k; q++) { gx[q] += gv[j] * wv[j * k + q]; gw[j * k + q] = gv[j] * xv[q]; }
      near(x.grad.data(), gx, n, 'x grad');
      near(w.grad.data(), gw, 1, 'w grad');
      near(b.grad.data(), gv, 1, 'bias grad');
    });
    assert.deepEqual(counts(wt), before);
  });
}

test('scalar, simd and simd-threads at 3 threads give the same bits', async () => {
  const results = [];
  for (const variant of ['scalar', 'simd', 'simd-threads']) {
    const wt = await init({ variant });
    if (variant === 'simd-threads') wt.setNumThreads(Math.min(3, wt.maxThreads()));
    const n = 1000, k = 288;
    const w = wt.tensor(data(n * k, 2)).view([n, k]), b = wt.tensor(data(n, 3));
    const row = [];
    for (let m = 1; m <= 4; m++) wt.tidy(() => {
      const x = wt.tensor(data(m * k, 1)).view([m, k]);
      const wT = w.t().contiguous();
      const ys = [wt.linear(x, w, b), wt.matmul(x, wT), wt.mv(w, x.select(0, 0))];
      row.push(...ys.map((y) => y.data()));
    });
    if (variant === 'simd-threads') wt.setNumThreads(1);
    results.push(row);
    w.dispose();
    b.dispose();
  }
  for (let v = 1; v < results.length; v++) {
    results[v].forEach((a, i) => assert.deepEqual(new Uint32Array(a.buffer), new Uint32Array(results[0][i].buffer), `result ${i}`));
  }
});
