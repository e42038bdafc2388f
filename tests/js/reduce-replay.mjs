// Replays the reduction fixtures (tests/fixtures/reduce.json, reduce2.json:
// PyTorch 1.13 cases, made by tests/fixtures/gen_reduce*_fixtures.py) through
// the JS API, twice per case:
//   - as wt.ops.call(<exact overload>, ...positional, { kwarg-only });
//   - through the generated API in PyTorch's positional order with options
//     last: wt.sum(x, dim, { keepdim, dtype, out }) and x.sum(dim, { ... })
//     alternately (in-place ops always as methods), a one-element dim list
//     passed as a number.
// Checks dtype, shape, strides (of dims longer than 1), values, that out= and
// in-place forms return their tensors, PyTorch's error messages (WeftError),
// and that no tensor outlives a case. Shared by reduce-fixtures.test.mjs and
// reduce2-fixtures.test.mjs.
import { test } from 'node:test';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, VARIANTS } from './helpers.mjs';

const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const TOL = { float16: 2e-3, bfloat16: 1.6e-2, float32: 2e-6, float64: 1e-12 };
const camel = (n) => n.replace(/_([a-z0-9])/g, (_, ch) => ch.toUpperCase());

function caseTol(c, dtype) {
  let e = TOL[dtype] ?? 0;
  for (const a of c.args) {
    if (a.tensor) e = Math.max(e, TOL[a.tensor.dtype] ?? 0);
    if (a.dtype) e = Math.max(e, TOL[a.dtype] ?? 0);
  }
  return e;
}

function makeArg(wt, a, made) {
  if (a.tensor) {
    const spec = a.tensor;
    const base = spec.storage.length
      ? wt.tensor(spec.storage.map(num), { dtype: spec.dtype })
      : wt.empty([0], { dtype: spec.dtype });
    made.push(base);
    const t = base.asStrided(spec.size, spec.stride, spec.offset);
    made.push(t);
    return t;
  }
  if ('ints' in a) return a.ints;
  if ('int' in a) return a.int;
  if ('bool' in a) return a.bool;
  if ('dtype' in a) return a.dtype;
  if ('scalar' in a) return a.tag === 'bool' ? !!a.scalar : num(a.scalar);
  return null;
}

// ops.call: positional arguments, kwarg-only ones in the options object
function viaCall(wt, c, vals) {
  const pos = [];
  const kw = {};
  c.args.forEach((a, i) => {
    if (a.kw) kw[camel(a.name)] = vals[i];
    else pos.push(vals[i]);
  });
  return wt.ops.call(c.op, ...pos, kw);
}

// self and dim positional, everything else an option (None ones left out)
function viaGenerated(wt, c, vals, idx) {
  const base = c.op.split('.')[0];
  const name = camel(base);
  const self = vals[0];
  const pos = [];
  const kw = {};
  c.args.forEach((a, i) => {
    if (i === 0) return;
    const v = vals[i];
    if (a.name === 'dim') pos.push(Array.isArray(v) && v.length === 1 ? v[0] : v);
    else if (a.name === 'p') pos.push(v); // norm(x, p, dim, { ... })
    else if (v !== null) kw[camel(a.name)] = v;
  });
  if (pos.length === 1 && pos[0] === null) pos.pop();
  const args = Object.keys(kw).length ? [...pos, kw] : pos;
  if (idx % 2 === 1 || base.endsWith('_')) return { how: `t.${name}`, r: self[name](...args) };
  return { how: `wt.${name}`, r: wt[name](self, ...args) };
}

// One result against its expectation; `written`: the tensor it must be (out=, in place).
function checkTensor(c, want, r, written) {
  const bad = [];
  if (!r || typeof r.dtype !== 'string') return [`returned ${r}, not a Tensor`];
  if (written && r !== written) bad.push('did not return its out / in-place tensor');
  if (r.dtype !== want.dtype) bad.push(`dtype ${r.dtype}, want ${want.dtype}`);
  if (JSON.stringify(r.shape) !== JSON.stringify(want.size)) {
    bad.push(`shape ${JSON.stringify(r.shape)}, want ${JSON.stringify(want.size)}`);
    return bad;
  }
  const st = r.stride();
  if (want.stride.some((s, d) => want.size[d] > 1 && st[d] !== s)) {
    bad.push(`stride ${JSON.stringify(st)}, want ${JSON.stringify(want.stride)}`);
  }
  const v = r.toArray({ bigint: true }); // compared as numbers, as the fixture stores them
  const got = (Array.isArray(v) ? v.flat(Infinity) : [v]).map(Number);
  const e = caseTol(c, want.dtype);
  for (let i = 0; i < want.values.length; i++) {
    const w = num(want.values[i]);
    if (!close(got[i], w, e)) {
      bad.push(`value[${i}] ${got[i]}, want ${w}`);
      break;
    }
  }
  return bad;
}

// The result against c.expect: one result, or a list (an op's returns in order).
function checkResult(c, vals, r) {
  const tuple = Array.isArray(c.expect);
  const wants = tuple ? c.expect : [c.expect];
  const inplace = c.op.split('.')[0].endsWith('_');
  const outs = c.args.flatMap((a, i) => (i > 0 && a.tensor ? [vals[i]] : []));
  const rs = tuple && r && typeof r[Symbol.iterator] === 'function' ? [...r] : [r];
  if (rs.length !== wants.length) return [`${rs.length} results, want ${wants.length}`];
  return wants.flatMap((w, k) => checkTensor(c, w, rs[k], inplace ? vals[0] : outs[k])
    .map((b) => (tuple ? `[${k}] ${b}` : b)));
}

function runOne(wt, c, idx, generated) {
  const before = counts(wt);
  const made = [];
  const bad = [];
  let r;
  let err = null;
  let how = `ops.call('${c.op}')`;
  try {
    const vals = c.args.map((a) => makeArg(wt, a, made));
    try {
      if (generated) ({ how, r } = viaGenerated(wt, c, vals, idx));
      else r = viaCall(wt, c, vals);
    } catch (e) {
      err = e;
    }
    if (c.expect.error !== undefined) {
      if (!err) bad.push(`expected error "${c.expect.error}", but it succeeded`);
      else if (!(err instanceof WeftError)) bad.push(`threw ${err.name}: ${err.message}`);
      else if (!String(err.message).includes(c.expect.error)) {
        bad.push(`message "${err.message}" lacks "${c.expect.error}"`);
      }
    } else if (err) {
      bad.push(`unexpected ${err.name}: ${err.message}`);
    } else {
      bad.push(...checkResult(c, vals, r));
    }
  } finally {
    const results = r && typeof r.dispose !== 'function' && typeof r?.[Symbol.iterator] === 'function' ? [...r] : [r];
    for (const t of results) if (t && typeof t.dispose === 'function' && !made.includes(t)) t.dispose();
    for (const t of made) t.dispose();
  }
  const after = counts(wt);
  if (JSON.stringify(after) !== JSON.stringify(before)) {
    bad.push(`leak: wt.memory() ${JSON.stringify(after)}, was ${JSON.stringify(before)}`);
  }
  return bad.map((b) => `case ${idx} ${how} ${JSON.stringify(c.args).slice(0, 240)}: ${b}`);
}

// One test per variant over every case of tests/fixtures/<file>.
export function replayFixture(file) {
  const cases = loadFixture(file).cases;
  for (const variant of VARIANTS) {
    test(`${variant}: ${file} through ops.call and the generated API`, async (t) => {
      const wt = await init({ variant });
      const problems = [];
      cases.forEach((c, i) => {
        problems.push(...runOne(wt, c, i, false));
        problems.push(...runOne(wt, c, i, true));
      });
      t.diagnostic(`${cases.length} cases, each via ops.call and the generated API`);
      if (problems.length) {
        throw new Error(`${problems.length} problem(s):\n  ${problems.slice(0, 40).join('\n  ')}`);
      }
    });
  }
}
