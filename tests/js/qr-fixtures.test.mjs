// torch.linalg.qr and lstsq (issue 25): every case of tests/fixtures/qr.json
// (PyTorch 1.13, made by tests/fixtures/gen_qr_fixtures.py) through
// wt.linalg.qr / lstsq on each wasm variant at 1 and 2 threads: dtype,
// shape, strides and values of Q and R (LAPACK's signs, so the values
// themselves) and of lstsq's solution, residuals, rank and singular values,
// gradients of sum(cot * out), the backward's refusals, and errors as
// WeftErrors with PyTorch's message; nothing leaks. Then reconstruction
// (Q R = A, Q^T Q = I, R upper triangular) on the blocked path in float32
// and float64, batched, tall and wide, and on an ill-conditioned input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkLayout, compareValues, fixtureTensor, loadFixture, valuesOf } from './fixtures-lib.mjs';
import { init, WeftError, counts, replayAtThreads, VARIANTS } from './helpers.mjs';

const { cases } = loadFixture('qr.json');

const makeTensor = fixtureTensor;
// got (a tensor) against want (a spec), within tol of want's largest magnitude
const compare = (what, got, want, tol) => compareValues(what, valuesOf(got), want.values, tol);

function checkOutputs(outs, c) {
  return c.expect.flatMap((w, k) => {
    const layout = checkLayout(`out ${k}`, outs[k], w);
    return layout.length ? layout : compare(`out ${k}`, outs[k], w, c.tol);
  });
}

// the outputs of c's call, as an array (qr: Q, R; lstsq: its four)
function call(wt, c, args) {
  if (c.fn === 'qr') {
    const { Q, R } = wt.linalg.qr(args[0], c.options);
    return [Q, R];
  }
  const r = wt.linalg.lstsq(args[0], args[1], c.options);
  return [r.solution, r.residuals, r.rank, r.singularValues];
}

// the gradients of sum(cot * out) over the differentiable outputs
function checkGrads(wt, c, args, made) {
  const xs = args.map((a) => a.detach().requiresGrad_());
  const cots = c.cot.map((s) => makeTensor(wt, s, made));
  made.push(...xs);
  let err;
  try {
    wt.tidy(() => {
      const outs = call(wt, c, xs);
      cots.map((cot, k) => outs[k].mul(cot).sum()).reduce((x, y) => x.add(y)).backward();
    });
  } catch (e) {
    err = e;
  }
  const bad = [];
  if (c.grad_error !== undefined) {
    if (!err) bad.push(`backward: expected "${c.grad_error}"`);
    else if (!(err instanceof WeftError) || !err.message.includes(c.grad_error)) bad.push(`backward: ${err.message}`);
  } else if (err) {
    bad.push(`backward threw ${err.name}: ${err.message}`);
  } else {
    c.grads.forEach((want, i) => {
      const g = xs[i].grad; // a new handle each time it is read
      if (!g) bad.push(`no gradient for argument ${i}`);
      else bad.push(...compare(`grad ${i}`, g, want, c.tol * 10));
      g?.dispose();
    });
  }
  return bad;
}

function replay(wt, c) {
  const made = [];
  const args = c.args.map((s) => makeTensor(wt, s, made));
  const bad = [];
  let outs = [];
  try {
    outs = call(wt, c, args);
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
  }
  if (outs.length && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
  if (outs.length && c.expect.error === undefined) {
    bad.push(...checkOutputs(outs, c));
    if (c.cot) bad.push(...checkGrads(wt, c, args, made));
  }
  for (const t of [...outs, ...made]) t.dispose();
  const what = c.args.map((a) => `${a.dtype}[${a.size}]`).join(', ');
  return bad.map((b) => `${c.fn} ${JSON.stringify(c.options)} ${what}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`torch.linalg.qr and lstsq match PyTorch 1.13 (${cases.length} cases, ${variant})`, async (t) => {
    const wt = await init({ variant });
    const before = counts(wt);
    replayAtThreads(t, wt, cases, replay);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

test('torch.linalg.qr: reconstruction on the blocked path, batched, tall and wide', async () => {
  const wt = await init();
  const before = counts(wt);
  for (const dtype of ['float32', 'float64']) {
    const tol = dtype === 'float32' ? 5e-5 : 1e-13;
    for (const [m, n] of [[200, 140], [140, 200], [161, 161]]) {
      wt.tidy(() => {
        const a = wt.randn([2, m, n], { dtype });
        const rel = (x, y) => x.sub(y).abs().max().item() / Math.max(1, y.abs().max().item());
        const { Q, R } = wt.linalg.qr(a, { mode: 'complete' });
        assert.ok(rel(Q.matmul(R), a) < tol, `${dtype} ${m}x${n}: Q R = A`);
        assert.ok(rel(Q.transpose(-2, -1).matmul(Q), wt.eye(m, { dtype }).expand([2, m, m])) < tol, `${dtype}: Q^T Q = I`);
        assert.equal(R.tril(-1).abs().max().item(), 0, 'R is upper triangular');
        const [q, r] = wt.linalg.qr(a); // array-destructurable, as slogdet's pair
        assert.ok(rel(q.matmul(r), a) < tol, `${dtype} ${m}x${n}: reduced Q R = A`);
      });
    }
  }
  assert.deepEqual(counts(wt), before);
});

test('torch.linalg.qr: an ill-conditioned input (cond 1e10) reconstructs to float64 accuracy', async () => {
  const wt = await init();
  const c = cases.find((k) => k.fn === 'qr' && k.tol === 1e-5 && k.args[0].size[0] === 12);
  wt.tidy(() => {
    const a = wt.tensor(c.args[0].values, { dtype: 'float64' }).reshape(c.args[0].size);
    const { Q, R } = wt.linalg.qr(a);
    const rel = (x, y) => x.sub(y).abs().max().item() / y.abs().max().item();
    assert.ok(rel(Q.matmul(R), a) < 1e-14, 'Q R = A');
    assert.ok(rel(Q.transpose(0, 1).matmul(Q), wt.eye(8, { dtype: 'float64' })) < 1e-14, 'Q^T Q = I');
  });
});
