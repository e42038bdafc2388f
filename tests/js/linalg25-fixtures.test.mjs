// torch.linalg (issue 25): every case of tests/fixtures/linalg25.json
// (PyTorch 1.13, made by tests/fixtures/gen_linalg25_fixtures.py) through
// wt.linalg.solve / inv / invEx / det / slogdet / cholesky on each wasm
// variant at 1 and 2 threads: dtype, shape, strides and values (within the
// case's tolerance, relative to the output's largest value; infinities and
// NaNs exactly), gradients of sum(cot * out), those at singular matrices
// (det's with createGraph and its second order, slogdet's infinities and
// its createGraph refusal), and errors as WeftErrors with PyTorch's
// message; nothing leaks. Then reconstruction checks on the blocked paths in float32 and
// float64 (A solve(A, B) = B, L L^T = A, A inv(A) = I, det = sign exp(logabsdet)).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkLayout, compareValues, fixtureNumber as num, fixtureTensor, loadFixture, valuesOf } from './fixtures-lib.mjs';
import { init, WeftError, counts, replayAtThreads, VARIANTS } from './helpers.mjs';

const { cases } = loadFixture('linalg25.json');
const DIFF = { solve: [0, 1], inv: [0], det: [0], cholesky: [0], vector_norm: [0], matrix_norm: [0], inv_ex: [0] };
const FN = { vector_norm: 'vectorNorm', matrix_norm: 'matrixNorm', inv_ex: 'invEx' };
const MULTI = new Set(['slogdet', 'inv_ex']); // results that are (also) arrays
// the differentiable output of a result: inv_ex's inverse (its info is int32)
const first = (c, r) => (c.fn === 'inv_ex' ? r.inverse : r);
const fnOf = (wt, c) => wt.linalg[FN[c.fn] ?? c.fn];
// the fixture's options in JS: infinite orders as numbers
const optionsOf = (c) => Object.fromEntries(Object.entries(c.options).map(([k, v]) => [k, k === 'ord' ? num(v) : v]));

const makeTensor = fixtureTensor;
// got (a tensor) against want (a spec), within tol of want's largest magnitude
const compare = (what, got, want, tol) => compareValues(what, valuesOf(got), want.values, tol);

function checkOutputs(outs, c) {
  return c.expect.flatMap((w, k) => {
    const layout = checkLayout(`out ${k}`, outs[k], w);
    return layout.length ? layout : compare(`out ${k}`, outs[k], w, c.tol);
  });
}

function checkGrads(wt, c, args, made) {
  const xs = args.map((a, i) => (DIFF[c.fn].includes(i) ? a.detach().requiresGrad_() : a));
  made.push(...xs.filter((x, i) => x !== args[i]));
  const cot = makeTensor(wt, c.cot[0], made);
  wt.tidy(() => first(c, fnOf(wt, c)(...xs, optionsOf(c))).mul(cot).sum().backward());
  const bad = [];
  DIFF[c.fn].forEach((i, k) => {
    const g = xs[i].grad;
    if (!g) bad.push(`no gradient for argument ${i}`);
    else bad.push(...compare(`grad ${i}`, g, c.grads[k], c.tol * 10));
    g?.dispose();
  });
  return bad;
}

// det_grad / slogdet_grad: d sum(cot * out) / dA (slogdet: its logabsdet),
// with createGraph as the case says (columnMajor: A's matrices column-major,
// which decides the matrix 1.13 factors), and the second order d sum(cot2 * grad) / dA
function replayGrad(wt, c, made) {
  let given = makeTensor(wt, c.args[0], made);
  if (c.options.columnMajor) {
    const t = given.transpose(-2, -1), tc = t.contiguous();
    given = tc.transpose(-2, -1);
    made.push(t, tc, given);
  }
  const a = given.detach().requiresGrad_();
  const cot = makeTensor(wt, c.cot[0], made);
  made.push(a);
  const bad = [];
  let g;
  try {
    const outs = c.fn === 'det_grad' ? [wt.linalg.det(a)] : [...wt.linalg.slogdet(a)].reverse();
    const prod = outs[0].mul(cot), loss = prod.sum();
    made.push(...outs, prod, loss);
    [g] = wt.autograd.grad(loss, [a], { createGraph: c.options.createGraph });
  } catch (e) {
    if (c.grad_error === undefined) return [`backward threw ${e.name}: ${e.message}`];
    if (!(e instanceof WeftError) || !e.message.includes(c.grad_error)) return [`backward: ${e.message}`];
    return [];
  }
  made.push(g);
  if (c.grad_error !== undefined) return [`backward: expected "${c.grad_error}"`];
  bad.push(...compare('grad', g, c.grads[0], c.tol * 10));
  if (c.grads2) {
    const cot2 = makeTensor(wt, c.cot2[0], made);
    const prod = g.mul(cot2), loss = prod.sum();
    const [h] = wt.autograd.grad(loss, [a]);
    made.push(prod, loss, h);
    bad.push(...compare('grad of grad', h, c.grads2[0], c.tol * 10));
  }
  return bad;
}

function replay(wt, c) {
  const made = [];
  if (c.fn.endsWith('_grad')) {
    const bad = replayGrad(wt, c, made);
    for (const t of made) t.dispose();
    return bad.map((b) => `${c.fn} ${JSON.stringify(c.options)} ${c.args[0].dtype}[${c.args[0].size}]: ${b}`);
  }
  const args = c.args.map((s) => makeTensor(wt, s, made));
  const bad = [];
  let r;
  try {
    r = fnOf(wt, c)(...args, optionsOf(c));
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
  }
  if (r && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
  const outs = r ? (MULTI.has(c.fn) ? [...r] : [r]) : [];
  if (r && c.expect.error === undefined) {
    bad.push(...checkOutputs(outs, c));
    if (c.grads) bad.push(...checkGrads(wt, c, args, made));
  }
  for (const t of [...outs, ...made]) t.dispose();
  return bad.map((b) => `${c.fn} ${JSON.stringify(c.options)} ${c.args.map((a) => `${a.dtype}[${a.size}]`)}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`torch.linalg matches PyTorch 1.13 (${cases.length} cases, ${variant})`, async (t) => {
    const wt = await init({ variant });
    const before = counts(wt);
    replayAtThreads(t, wt, cases, replay);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

// a random n x n matrix, diagonally weighted, and its reconstruction errors
test('torch.linalg: reconstruction on the blocked paths (n = 150, batched)', async () => {
  const wt = await init();
  const before = counts(wt);
  for (const dtype of ['float32', 'float64']) {
    const tol = dtype === 'float32' ? 2e-4 : 1e-11;
    wt.tidy(() => {
      const n = 150;
      const a = wt.randn([2, n, n], { dtype }).add(wt.eye(n, { dtype }).mul(3 * Math.sqrt(n)));
      const b = wt.randn([2, n, 4], { dtype });
      const rel = (x, y) => x.sub(y).abs().max().item() / Math.max(1, y.abs().max().item());
      const x = wt.linalg.solve(a, b);
      assert.ok(rel(a.matmul(x), b) < tol, `${dtype}: A solve(A, B) = B`);
      const inv = wt.linalg.inv(a);
      assert.ok(rel(a.matmul(inv), wt.eye(n, { dtype }).expand([2, n, n])) < tol, `${dtype}: A inv(A) = I`);
      const s = a.matmul(a.transpose(-2, -1));
      const l = wt.linalg.cholesky(s);
      assert.ok(rel(l.matmul(l.transpose(-2, -1)), s) < tol, `${dtype}: L L^T = A`);
      assert.equal(l.triu(1).abs().max().item(), 0, 'L is lower triangular');
      const u = wt.linalg.cholesky(s, { upper: true });
      assert.ok(rel(u.transpose(-2, -1).matmul(u), s) < tol, `${dtype}: U^T U = A`);
      const small = a.narrow(1, 0, 6).narrow(2, 0, 6);
      const det = wt.linalg.det(small);
      const [sign, logabs] = wt.linalg.slogdet(small);
      assert.ok(rel(sign.mul(logabs.exp()), det) < tol * 10, `${dtype}: det = sign exp(logabsdet)`);
      const xr = wt.linalg.solve(a, b.transpose(-2, -1), { left: false });
      assert.ok(rel(xr.matmul(a), b.transpose(-2, -1)) < tol, `${dtype}: solve(A, B, { left: false }) A = B`);
    });
  }
  assert.deepEqual(counts(wt), before);
});

test('torch.linalg: the namespace, and its names only there', async () => {
  const wt = await init();
  for (const f of ['solve', 'inv', 'det', 'slogdet', 'cholesky', 'vectorNorm', 'matrixNorm']) {
    assert.equal(typeof wt.linalg[f], 'function');
  }
  const x = wt.tensor([[3, -4], [1, 2]]);
  assert.ok(Math.abs(wt.linalg.vectorNorm(x).item() - Math.sqrt(30)) < 1e-6);
  assert.equal(wt.linalg.vectorNorm(x, { ord: Infinity }).item(), 4);
  assert.deepEqual(wt.linalg.vectorNorm(x, { ord: 1, dim: [1] }).toArray(), [7, 3]);
  assert.ok(Math.abs(wt.linalg.matrixNorm(x).item() - Math.sqrt(30)) < 1e-6);
  assert.ok(Math.abs(wt.linalg.matrixNorm(x, { ord: 'fro' }).item() - Math.sqrt(30)) < 1e-6);
  assert.equal(wt.linalg.matrixNorm(x, 1).item(), 6);
  assert.equal(wt.linalg.matrixNorm(x, { ord: -Infinity }).item(), 3);
  assert.equal('linalgSolve' in wt, false);
  assert.equal('linalgInv' in wt.Tensor.prototype, false);
  const [sign, logabsdet] = wt.linalg.slogdet(wt.tensor([[2, 0], [0, -3]]));
  assert.deepEqual([sign.item(), Math.abs(logabsdet.item() - Math.log(6)) < 1e-6], [-1, true]);
  assert.equal(wt.linalg.slogdet(wt.eye(2)).logabsdet.item(), 0);
});
