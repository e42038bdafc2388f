// Replays one PyTorch-recorded op case (the format of
// tests/fixtures/gen_linalg_fixtures.py and gen_conv_fixtures.py) through
// wt.ops.call: keyword-only arguments in the trailing options object, None as
// null, int lists as arrays, strings as strings, bools as booleans. Values are exact; dtype,
// shape and the strides of dims longer than 1 must match; errors are
// WeftErrors containing PyTorch's message; out= returns the out tensor;
// nothing leaks. Returns the problems found (strings).
import { WeftError, counts } from './helpers.mjs';

const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);

// names of the keyword-only arguments of an overload, from its schema
function kwOnly(wt, op) {
  const s = wt.ops.schema(op);
  const inner = s.slice(s.indexOf('(') + 1, s.lastIndexOf(') ->')).split(', ');
  const star = inner.indexOf('*');
  return star < 0 ? [] : inner.slice(star + 1).map((p) => p.split('=')[0].trim().split(' ').pop());
}

export function problems(wt, c) {
  const made = [];
  const arg = (a) => {
    if (a.none) return null;
    if (a.list) return a.list;
    if (a.str !== undefined) return a.str;
    if (!a.tensor) return a.type === 'bool' ? Boolean(a.scalar) : num(a.scalar);
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
        const v = r.toArray({ bigint: true }); // compared as numbers, as the fixture stores them
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

