// Losses (issue 15): every case of tests/fixtures/loss.json (PyTorch 1.13,
// made by tests/fixtures/gen_loss_fixtures.py) through the JS calling forms
// wt.mseLoss(x, t, { reduction }), wt.binaryCrossEntropyWithLogits(x, t,
// { weight, posWeight, reduction }), wt.nllLoss(x, t, { weight, reduction,
// ignoreIndex }) and wt.crossEntropy(x, t, { weight, reduction, ignoreIndex,
// labelSmoothing }) on each wasm variant: dtype, shape and values (within the
// dtype's tolerance) must match, errors are WeftErrors with PyTorch's
// message, nothing leaks. Then the method forms and a bad reduction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, throwsWeft, VARIANTS } from './helpers.mjs';

const { cases } = loadFixture('loss.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const TOL = { float32: 3e-6, float64: 1e-12, float16: 2e-3, bfloat16: 1.6e-2 };
const FN = { mse_loss: 'mseLoss', binary_cross_entropy_with_logits: 'binaryCrossEntropyWithLogits',
  nll_loss: 'nllLoss', cross_entropy: 'crossEntropy' };
const OPTION = { weight: 'weight', pos_weight: 'posWeight', reduction: 'reduction', ignore_index: 'ignoreIndex',
  label_smoothing: 'labelSmoothing' };

function replay(wt, c) {
  const made = [];
  const tensor = (s) => {
    const isInt = s.dtype.startsWith('int');
    const data = s.storage.map((v) => (isInt ? BigInt(v) : num(v)));
    const base = wt.tensor(data.length ? data : [], { dtype: s.dtype });
    made.push(base);
    const t = base.asStrided(s.size, s.stride, s.offset);
    made.push(t);
    return t;
  };
  const opts = {};
  for (const [k, v] of Object.entries(c.args)) if (k !== 'self' && k !== 'target') opts[OPTION[k]] = tensor(v);
  for (const [k, v] of Object.entries(c.options)) opts[OPTION[k]] = v;
  const bad = [];
  let r;
  // int32 class indices are a JS extension (js/traps.js): the int64 result, not PyTorch's refusal
  if (c.args.target.dtype === 'int32' && /found int32/.test(c.expect.error ?? '')) {
    return int32Target(wt, c, tensor(c.args.self), tensor(c.args.target), opts, made);
  }
  try {
    r = wt[FN[c.fn]](tensor(c.args.self), tensor(c.args.target), opts);
  } catch (e) {
    if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
    else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
    else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
  }
  if (r && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
  if (r && c.expect.error === undefined) {
    const w = c.expect;
    if (r.dtype !== w.dtype) bad.push(`dtype ${r.dtype}, want ${w.dtype}`);
    else if (JSON.stringify(r.shape) !== JSON.stringify(w.size)) bad.push(`shape ${r.shape}, want ${w.size}`);
    else {
      const v = r.toArray();
      const got = Array.isArray(v) ? v.flat(Infinity) : [v];
      const i = w.values.findIndex((x, j) => !close(got[j], num(x), TOL[w.dtype]));
      if (i >= 0) bad.push(`value[${i}] ${got[i]}, want ${w.values[i]}`);
    }
  }
  if (r) r.dispose();
  for (const t of made) t.dispose();
  return bad;
}

function int32Target(wt, c, self, target, opts, made) {
  const long = target.to('int64');
  made.push(long);
  const a = wt[FN[c.fn]](self, target, opts), b = wt[FN[c.fn]](self, long, opts);
  const bad = JSON.stringify(a.toArray()) === JSON.stringify(b.toArray()) ? [] : ['int32 target differs from int64'];
  a.dispose(); b.dispose();
  for (const t of made) t.dispose();
  return bad;
}

for (const variant of VARIANTS) {
  test(`losses match PyTorch 1.13 (${cases.length} cases, ${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const failures = [];
    for (const c of cases) {
      const bad = replay(wt, c);
      if (bad.length) failures.push(`${c.fn} ${JSON.stringify(c.options)} ${c.args.self.size}: ${bad.join('; ')}`);
    }
    assert.deepEqual(failures.slice(0, 10), []);
    assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
  });
}

test('losses: methods, defaults, a bad reduction', async () => {
  const wt = await init();
  const x = wt.tensor([[1, 2, 3], [0, -1, 4]]);
  const t = wt.tensor([2n, 0n]);
  const a = wt.crossEntropy(x, t);
  const b = x.logSoftmax(1).nllLoss(t);
  assert.ok(Math.abs(a.item() - b.item()) < 1e-6);
  const m = x.mseLoss(wt.zerosLike ? wt.zerosLike(x) : wt.zeros([2, 3]), { reduction: 'sum' });
  assert.equal(m.item(), 31);
  throwsWeft(() => wt.mseLoss(x, x, { reduction: 'average' }), undefined, /average is not a valid value for reduction/);
  // errors of the ops crossEntropy runs name crossEntropy's op, and options as JS spells them
  throwsWeft(() => wt.crossEntropy(x, wt.tensor([2n, 3n])), 'IndexError', /^cross_entropy: Target 3 is out of bounds\.$/);
  // int32 class indices (a JS extension): the same as int64's, on the function, the method and F
  const i32 = wt.tensor(new Int32Array([2, 0]));
  assert.equal(wt.crossEntropy(x, i32).item(), wt.crossEntropy(x, t).item());
  assert.equal(x.logSoftmax(1).nllLoss(i32, { reduction: 'sum' }).item(), wt.nllLoss(x.logSoftmax(1), t, { reduction: 'sum' }).item());
  assert.equal(wt.nn.functional.crossEntropy(x, i32, { labelSmoothing: 0.1 }).item(),
    wt.crossEntropy(x, t, { labelSmoothing: 0.1 }).item());
  throwsWeft(() => wt.crossEntropy(x, wt.tensor([2, 0], { dtype: 'int16' })), 'TypeError',
    /^cross_entropy: expected scalar type int64 but found int16$/);
  throwsWeft(() => wt.crossEntropy(x, t, { labelSmoothing: 2 }), 'InvalidArgument', /^cross_entropy: labelSmoothing must be/);
  throwsWeft(() => wt.crossEntropy(x, x.softmax(1), { ignoreIndex: 0 }), 'InvalidArgument',
    /^cross_entropy: ignoreIndex is not supported for floating point target$/);
  throwsWeft(() => wt.crossEntropy(x.int(), t), 'TypeError', /^cross_entropy: /);
  for (const r of [a, b, m, x, t]) r.dispose();
});

// d sum(loss) / d self against PyTorch: nll_loss through its own backward
// (NllLossBackward0), the composites through their steps' formulas
test('loss gradients match PyTorch 1.13', async () => {
  const { grads } = loadFixture('loss.json');
  const wt = await init();
  const before = counts(wt);
  const failures = [];
  for (const c of grads) {
    const made = [];
    const tensor = (s) => {
      const isInt = s.dtype.startsWith('int');
      const base = wt.tensor(s.storage.map((v) => (isInt ? BigInt(v) : num(v))), { dtype: s.dtype });
      const t = base.asStrided(s.size, s.stride, s.offset);
      made.push(base, t);
      return t;
    };
    const x = tensor(c.args.self).detach().requiresGrad_();
    made.push(x);
    const opts = {};
    for (const [k, v] of Object.entries(c.args)) if (k !== 'self' && k !== 'target') opts[OPTION[k]] = tensor(v);
    for (const [k, v] of Object.entries(c.options)) opts[OPTION[k]] = v;
    wt.tidy(() => wt[FN[c.fn]](x, tensor(c.args.target), opts).sum().backward());
    const g = x.grad;
    const got = [g.toArray()].flat(Infinity);
    const i = c.grad.findIndex((w, j) => !close(got[j], num(w), 2e-6));
    if (i >= 0) failures.push(`${c.fn} ${JSON.stringify(c.options)}: grad[${i}] ${got[i]}, want ${c.grad[i]}`);
    g.dispose();
    for (const t of made) t.dispose();
  }
  assert.deepEqual(failures, []);
  assert.deepEqual(counts(wt), before);
});
