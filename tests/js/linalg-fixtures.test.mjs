// The matmul family (issue 12): every case of tests/fixtures/linalg.json
// (PyTorch 1.13, made by tests/fixtures/gen_linalg_fixtures.py; the native
// replay is tests/c/test_linalg.c) through wt.ops.call on each wasm variant,
// keyword-only arguments (beta, alpha, out) in the trailing options object,
// None as null. Values are exact (multiples of 1/8); dtype, shape and the
// strides of dims longer than 1 must match; errors are WeftErrors with
// PyTorch's message; out= returns the out tensor; nothing leaks. Then the
// generated spellings: wt.matmul(a, b), a.mm(b), wt.linear(x, w, b), { out }.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, WeftError, counts, VARIANTS } from './helpers.mjs';

const { cases } = JSON.parse(readFileSync(new URL('../fixtures/linalg.json', import.meta.url), 'utf8'));
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);

// names of the keyword-only arguments of an overload, from its schema
function kwOnly(wt, op) {
  const s = wt.ops.schema(op);
  const inner = s.slice(s.indexOf('(') + 1, s.lastIndexOf(') ->')).split(', ');
  const star = inner.indexOf('*');
  return star < 0 ? [] : inner.slice(star + 1).map((p) => p.split('=')[0].trim().split(' ').pop());
}

function problems(wt, c) {
  const made = [];
  const arg = (a) => {
    if (a.none) return null;
    if (!a.tensor) return num(a.scalar);
    const base = wt.tensor(a.tensor.storage.map(num), { dtype: a.tensor.dtype });
    made.push(base);
    const t = base.asStrided(a.tensor.size, a.tensor.stride, a.tensor.offset);
    made.push(t);
    return t;
  };
  const before = counts(wt);
  const bad = [];
  let r;
  try {
    const vals = c.args.map(arg);
    const kws = kwOnly(wt, c.op);
    const pos = vals.slice(0, vals.length - kws.length);
    const kw = Object.fromEntries(kws.map((k, i) => [k, vals[pos.length + i]]));
    try {
      r = kws.length ? wt.ops.call(c.op, ...pos, kw) : wt.ops.call(c.op, ...pos);
    } catch (e) {
      if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
      else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError`);
      else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
    }
    if (r && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
    if (r && c.expect.error === undefined) {
      const w = c.expect;
      if ('out' in kw && r !== kw.out) bad.push('did not return its out tensor');
      if (r.dtype !== w.dtype) bad.push(`dtype ${r.dtype}, want ${w.dtype}`);
      else if (JSON.stringify(r.shape) !== JSON.stringify(w.size)) bad.push(`shape ${r.shape}, want ${w.size}`);
      else {
        const st = r.stride();
        if (w.size.some((n, d) => n > 1 && st[d] !== w.stride[d])) bad.push(`stride ${st}, want ${w.stride}`);
        const v = r.toArray();
        const got = (Array.isArray(v) ? v.flat(Infinity) : [v]).map(Number);
        const i = w.values.findIndex((x, j) => !(Object.is(got[j], num(x)) || got[j] === num(x)));
        if (i >= 0) bad.push(`value[${i}] ${got[i]}, want ${w.values[i]}`);
      }
    }
  } finally {
    if (r && !made.includes(r)) r.dispose();
    for (const t of made) t.dispose();
  }
  const after = counts(wt);
  if (JSON.stringify(after) !== JSON.stringify(before)) bad.push(`leak: ${JSON.stringify(after)} was ${JSON.stringify(before)}`);
  return bad.map((b) => `${c.op} ${JSON.stringify(c.args).slice(0, 200)}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`${variant}: linalg.json through ops.call`, async (t) => {
    const wt = await init({ variant });
    const bad = cases.flatMap((c) => problems(wt, c));
    t.diagnostic(`${cases.length} cases`);
    if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 40).join('\n  ')}`);
  });

  test(`${variant}: the generated matmul API`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const f32 = { dtype: 'float32' };
    const a = wt.tensor([[1, 2, 3], [4, 5, 6]], f32);
    const b = wt.tensor([[1, 0], [0, 1], [1, 1]], f32);
    const w = wt.tensor([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], f32);
    const bias = wt.tensor([0.5, 0.5, 0.5, 0.5], f32);
    const r1 = wt.matmul(a, b);
    assert.deepEqual(r1.toArray(), [[4, 5], [10, 11]]);
    const r2 = a.mm(b);
    assert.deepEqual(r2.toArray(), [[4, 5], [10, 11]]);
    const r3 = wt.linear(a, w, bias);
    assert.deepEqual(r3.toArray(), [[1.5, 2.5, 3.5, 6.5], [4.5, 5.5, 6.5, 15.5]]);
    const out = wt.empty([0]);
    assert.equal(a.matmul(b, { out }), out);
    assert.deepEqual(out.toArray(), [[4, 5], [10, 11]]);
    assert.throws(() => a.mm(a), (e) => e instanceof WeftError &&
      /mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)/.test(e.message));
    for (const x of [a, b, w, bias, r1, r2, r3, out]) x.dispose();
    assert.deepEqual(counts(wt), before);
  });
}
