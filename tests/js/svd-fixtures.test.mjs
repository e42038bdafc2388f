// wt.linalg.svd, svdvals and matrixNorm's orders 2, -2 and 'nuc' (issue 25):
// every case of tests/fixtures/svd.json (PyTorch 1.13, made by
// tests/fixtures/gen_svd_fixtures.py) on each wasm variant at 1 and 2
// threads. Singular vectors' signs are free, so an svd case checks dtypes,
// shapes and strides, S against PyTorch's, U S Vh = A, orthonormal U and V
// (complete bases with fullMatrices), and |U|, |Vh| against PyTorch's where
// the singular values are apart enough (vecTol); its gradient is that of a
// sign-invariant loss. svdvals and matrixNorm compare values and the
// gradient of sum(cot * out). Errors are WeftErrors with PyTorch's message;
// nothing leaks. Then gradcheck-style central differences in float64.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkLayout as layout, compareValues, fixtureNumber as num, fixtureTensor, loadFixture, valuesOf as values }
  from './fixtures-lib.mjs';
import { init, WeftError, counts, replayAtThreads, VARIANTS } from './helpers.mjs';

const { cases } = loadFixture('svd.json');
// a spec's tensor, inside the caller's tidy
const tensorOf = (wt, s) => fixtureTensor(wt, s, []);

// the first index where got and want (numbers) differ by more than tol * scale, or -1
function firstMismatch(got, want, tol, scale) {
  return want.findIndex((w, i) => (Number.isNaN(w) ? !Number.isNaN(got[i]) : !(Math.abs(got[i] - w) <= tol * scale)));
}

// values of t against a fixture spec, within tol of max(1, its largest magnitude)
const against = (what, t, spec, tol) => compareValues(what, values(t), spec.values, tol);

// max |x - y| over max(1e-300, max |S|): errors relative to the largest singular value
const relErr = (x, y, top) => x.sub(y).abs().max().item() / top;

// the factorization's own checks: reconstruction and orthonormal columns of U and of V
function factorization(wt, a, [u, s, vh], tol) {
  const k = s.shape[s.ndim - 1];
  if (a.numel() === 0 || k === 0) return [];
  const top = Math.max(1e-300, s.abs().max().item());
  const bad = [];
  const usv = u.narrow(-1, 0, k).mul(s.unsqueeze(-2)).matmul(vh.narrow(-2, 0, k));
  if (!(relErr(usv, a, top) <= tol * 10)) bad.push(`U S Vh != A (${relErr(usv, a, top)})`);
  for (const [name, q] of [['U', u.mT], ['V', vh]]) {
    const n = q.shape[q.ndim - 2];
    const qqt = q.matmul(q.mT);
    const err = qqt.sub(wt.eye(n, { dtype: a.dtype })).abs().max().item();
    if (!(err <= Math.max(tol * 10, 1e-13))) bad.push(`${name} not orthonormal (${err})`);
  }
  return bad;
}

// |U[..., :k]|, |Vh[..., :k, :]| against PyTorch's
function vectors(wt, outs, c) {
  const k = outs[1].shape[outs[1].ndim - 1];
  const bad = [];
  for (const [i, name, dim] of [[0, 'U', -1], [2, 'Vh', -2]]) {
    const want = values(tensorOf(wt, c.expect[i]).narrow(dim, 0, k)).map(Math.abs);
    const got = values(outs[i].narrow(dim, 0, k).abs());
    const j = firstMismatch(got, want, c.vecTol, 1);
    if (j >= 0) bad.push(`|${name}|[${j}] ${got[j]}, want ${want[j]}`);
  }
  return bad;
}

// d/dA of sum(w1 * S) + sum(w2 * (U[..., :k] * c) @ Vh[..., :k, :]) against PyTorch's
function svdGradient(wt, c, a) {
  const x = a.detach().requiresGrad_();
  const [w1, w2, cc] = [c.w1, c.w2, c.c].map((s) => tensorOf(wt, s));
  const { U, S, Vh } = wt.linalg.svd(x, c.options);
  const k = S.shape[S.ndim - 1];
  const usv = U.narrow(-1, 0, k).mul(cc).matmul(Vh.narrow(-2, 0, k));
  w1.mul(S).sum().add(w2.mul(usv).sum()).backward();
  const tol = Math.max(c.tol, c.vecTol) * 10;
  return against('grad', x.grad, c.grads[0], tol);
}

function fnOf(wt, c) {
  if (c.fn === 'svd') return (a) => wt.linalg.svd(a, c.options);
  if (c.fn === 'svdvals') return (a) => wt.linalg.svdvals(a);
  const o = { ...c.options, ord: num(c.options.ord) };
  return (a) => wt.linalg.matrixNorm(a, o);
}

function replayCase(wt, c) {
  const a = tensorOf(wt, c.args[0]);
  let r;
  try {
    r = fnOf(wt, c)(a);
  } catch (e) {
    if (c.expect.error === undefined) return [`unexpected ${e.name}: ${e.message}`];
    if (!(e instanceof WeftError)) return [`threw ${e.name}, not a WeftError: ${e.message}`];
    return e.message.includes(c.expect.error) ? [] : [`message "${e.message}" lacks "${c.expect.error}"`];
  }
  if (c.expect.error !== undefined) return [`expected "${c.expect.error}", got a result`];
  const outs = c.fn === 'svd' ? [...r] : [r];
  const bad = outs.flatMap((t, i) => layout(`out ${i}`, t, c.expect[i]));
  if (bad.length) return bad;
  if (c.fn !== 'svd') {
    bad.push(...against('out', r, c.expect[0], c.tol));
    if (c.grads) {
      const x = a.detach().requiresGrad_();
      fnOf(wt, c)(x).mul(tensorOf(wt, c.cot[0])).sum().backward();
      bad.push(...against('grad', x.grad, c.grads[0], c.tol * 10));
    }
    return bad;
  }
  bad.push(...against('S', outs[1], c.expect[1], c.tol));
  bad.push(...factorization(wt, a, outs, c.tol));
  if (c.vecTol != null) bad.push(...vectors(wt, outs, c));
  if (c.grads) bad.push(...svdGradient(wt, c, a));
  return bad;
}

function replay(wt, c) {
  const bad = wt.tidy(() => replayCase(wt, c));
  return bad.map((b) => `${c.fn} ${JSON.stringify(c.options)} ${c.args.map((a) => `${a.dtype}[${a.size}]`)}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`torch.linalg.svd / svdvals / matrix_norm 2, -2, nuc match PyTorch 1.13 (${cases.length} cases, ${variant})`,
    async (t) => {
      const wt = await init({ variant });
      const before = counts(wt);
      replayAtThreads(t, wt, cases, replay);
      assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
    });
}

// d loss / dA by central differences, float64, against backward's
function gradcheck(wt, a, loss) {
  const x = a.detach().requiresGrad_();
  loss(x).backward();
  const g = values(x.grad);
  const flatA = values(a);
  let worst = 0;
  for (let i = 0; i < flatA.length; i++) {
    const at = (h) => {
      const v = flatA.slice();
      v[i] += h;
      return loss(wt.tensor(v, { dtype: 'float64' }).reshape(a.shape)).item();
    };
    const want = (at(1e-6) - at(-1e-6)) / 2e-6;
    worst = Math.max(worst, Math.abs(g[i] - want) / (1 + Math.abs(want)));
  }
  return worst;
}

test('torch.linalg.svd: gradients against central differences (float64; sign-invariant losses, svdvals, norms)',
  async () => {
    const wt = await init();
    const before = counts(wt);
    wt.tidy(() => {
      for (const shape of [[5, 3], [4, 4], [3, 6], [2, 3, 2]]) {
        const a = wt.randn(shape, { dtype: 'float64' });
        const k = Math.min(shape.at(-1), shape.at(-2));
        const w = wt.randn(shape, { dtype: 'float64' });
        const c = wt.randn([...shape.slice(0, -2), 1, k], { dtype: 'float64' });
        for (const fullMatrices of [true, false]) {
          const gauge = (x) => {
            const { U, S, Vh } = wt.linalg.svd(x, { fullMatrices });
            return U.narrow(-1, 0, k).mul(c).matmul(Vh.narrow(-2, 0, k)).mul(w).sum().add(S.pow(3).sum());
          };
          assert.ok(gradcheck(wt, a, gauge) < 1e-6, `svd ${shape} fullMatrices ${fullMatrices}`);
        }
        assert.ok(gradcheck(wt, a, (x) => wt.linalg.svdvals(x).mul(wt.arange(k, { dtype: 'float64' })).sum()) < 1e-6);
        for (const ord of [2, -2, 'nuc']) {
          assert.ok(gradcheck(wt, a, (x) => wt.linalg.matrixNorm(x, { ord }).sum()) < 1e-6, `matrixNorm ${ord}`);
        }
      }
    });
    assert.deepEqual(counts(wt), before);
  });

test('torch.linalg.svd: the namespace, named results, the node PyTorch shows', async () => {
  const wt = await init();
  wt.tidy(() => {
    const a = wt.tensor([[3, 0], [0, -4], [0, 0]], { dtype: 'float64' });
    const { U, S, Vh } = wt.linalg.svd(a);
    assert.deepEqual(S.toArray(), [4, 3]);
    assert.deepEqual(U.shape, [3, 3]);
    assert.deepEqual(Vh.shape, [2, 2]);
    assert.deepEqual(wt.linalg.svd(a, { fullMatrices: false }).U.shape, [3, 2]);
    assert.deepEqual(wt.linalg.svd(a, false).U.shape, [3, 2]);
    assert.deepEqual(wt.linalg.svdvals(a).toArray(), [4, 3]);
    assert.equal(wt.linalg.matrixNorm(a, { ord: 2 }).item(), 4);
    assert.equal(wt.linalg.matrixNorm(a, { ord: -2 }).item(), 3);
    assert.equal(wt.linalg.matrixNorm(a, 'nuc').item(), 7);
    const x = a.detach().requiresGrad_();
    const r = wt.linalg.svd(x);
    assert.equal(r.S.gradFn.name, 'LinalgSvdBackward0');
    assert.deepEqual([r.U.outputNr, r.S.outputNr, r.Vh.outputNr], [0, 1, 2]); /* one node, three outputs */
    assert.equal(wt.linalg.svdvals(x).gradFn.name, 'LinalgSvdBackward0');
    assert.equal('linalgSvd' in wt, false);
  });
});
