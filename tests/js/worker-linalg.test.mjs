// Worker mode and torch.linalg (issue 25): ww.linalg.* runs in the worker as
// wt.linalg.* does on this thread (values, the (sign, logabsdet) tuple,
// errors, gradients), and a name weft lacks is refused with the
// did-you-mean of the main thread, through the worker as on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initWorker } from 'weft';
import { init, WeftError, throwsWeft } from './helpers.mjs';

const A = [[4, 1, 0.5], [1, 3, 0.25], [0.5, 0.25, 2]];
const B = [[1, 2], [3, 4], [5, 6]];

function near(got, want, what) {
  const g = [got].flat(Infinity), w = [want].flat(Infinity);
  assert.equal(g.length, w.length, what);
  g.forEach((v, i) => assert.ok(Math.abs(v - w[i]) <= 1e-12 * (1 + Math.abs(w[i])), `${what}[${i}]: ${v} vs ${w[i]}`));
}

test('worker: wt.linalg.* as on the main thread', async () => {
  const wt = await init({ variant: 'simd' });
  const ww = await initWorker({ variant: 'simd' });
  try {
    const calls = {
      solve: (m, a, b) => m.linalg.solve(a, b),
      inv: (m, a) => m.linalg.inv(a),
      det: (m, a) => m.linalg.det(a),
      cholesky: (m, a) => m.linalg.cholesky(a, { upper: true }),
      vectorNorm: (m, a) => m.linalg.vectorNorm(a, 3, [1]),
      matrixNorm: (m, a) => m.linalg.matrixNorm(a, 'fro'),
      cross: (m, a) => m.linalg.cross(a, a.flip([0])),
    };
    for (const [name, f] of Object.entries(calls)) {
      const a = wt.tensor(A, { dtype: 'float64' }), b = wt.tensor(B, { dtype: 'float64' });
      const want = f(wt, a, b);
      const got = f(ww, ww.tensor(A, { dtype: 'float64' }), ww.tensor(B, { dtype: 'float64' }));
      near(await got.toArray(), want.toArray(), name);
      assert.deepEqual(await got.shape, want.shape, name);
      for (const t of [a, b, want]) t.dispose();
    }
    // a tuple: awaited as on the main thread's named tuple
    const [sign, logabsdet] = await ww.linalg.slogdet(ww.tensor(A, { dtype: 'float64' }));
    const a = wt.tensor(A, { dtype: 'float64' }), [s0, l0] = wt.linalg.slogdet(a);
    assert.equal(await sign.item(), s0.item());
    near(await logabsdet.item(), l0.item(), 'slogdet');
    const named = await ww.linalg.slogdet(ww.tensor(A, { dtype: 'float64' }));
    near(await named.logabsdet.item(), l0.item(), 'slogdet.logabsdet');
    for (const t of [a, s0, l0]) t.dispose();
  } finally {
    await ww.terminate();
  }
});

test('worker: linalg errors and gradients as on the main thread', async () => {
  const wt = await init({ variant: 'scalar' });
  const ww = await initWorker({ variant: 'scalar' });
  try {
    const sing = [[1, 2], [2, 4]];
    let mainMessage = null;
    try { wt.linalg.inv(wt.tensor(sing)); } catch (e) { mainMessage = e.message; }
    assert.ok(mainMessage);
    await assert.rejects(ww.linalg.inv(ww.tensor(sing)).toArray(),
      (e) => e instanceof WeftError && e.message === mainMessage);
    // det's gradient (g det A^-T) computed in the worker
    const x = ww.tensor(A, { dtype: 'float64', requiresGrad: true });
    await ww.linalg.det(x).backward();
    const xm = wt.tensor(A, { dtype: 'float64', requiresGrad: true });
    const d = wt.linalg.det(xm);
    d.backward();
    near(await x.grad.toArray(), xm.grad.toArray(), 'det grad');
    d.dispose(); xm.dispose();
  } finally {
    await ww.terminate();
  }
});

test('a name weft lacks: did-you-mean on the main thread and through the worker', async () => {
  const wt = await init({ variant: 'simd' });
  throwsWeft(() => wt.linalg.sovle, 'AttributeError', /wt\.linalg has no attribute 'sovle' \(did you mean wt\.linalg\.solve/);
  throwsWeft(() => wt.layerNorn, 'AttributeError', /did you mean wt\.layerNorm/);
  if (!('householderProduct' in wt.linalg)) {
    throwsWeft(() => wt.linalg.householderProduct, 'AttributeError', /wt\.linalg\.householderProduct is not implemented in weft yet/);
  }
  assert.equal(typeof wt.linalg.solve, 'function');
  const ww = await initWorker({ variant: 'simd' });
  try {
    await assert.rejects(ww.linalg.sovle(ww.ones([2, 2]), ww.ones([2])).toArray(),
      (e) => e instanceof WeftError && e.code === 'AttributeError' && /did you mean wt\.linalg\.solve/.test(e.message));
    await assert.rejects(ww.layerNorn(ww.ones([2, 2]), [2]).toArray(),
      (e) => e instanceof WeftError && /wt has no attribute 'layerNorn' \(did you mean wt\.layerNorm/.test(e.message));
    // a name only Object.prototype has is still no weft function
    await assert.rejects(ww.linalg.constructor(1).toArray(), /constructor: not a weft function/);
    // the worker is fine afterwards
    assert.deepEqual(await ww.linalg.det(ww.eye(2)).toArray(), 1);
  } finally {
    await ww.terminate();
  }
});
