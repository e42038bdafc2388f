// Every case of tests/fixtures/reduce.json (PyTorch 1.13, made by
// tests/fixtures/gen_reduce_fixtures.py; the native replay is tests/c/test_reduce.c)
// replayed through the JS API on each wasm variant, twice:
//   - as wt.ops.call(<exact overload>, ...positional, { kwarg-only });
//   - through the generated API in PyTorch's positional order with options
//     last: wt.sum(x, dim, { keepdim, dtype, out }) and x.sum(dim, { ... }),
//     wt.norm(x, p, dim, { ... })
//     alternately, a one-element dim list passed as a number.
// Checks dtype, shape, strides (of dims longer than 1), values, that out=
// returns the out tensor, PyTorch's error messages (WeftError), and that no
// tensor outlives a case.
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { init, WeftError, counts, VARIANTS } from './helpers.mjs';

const FIXTURE = JSON.parse(readFileSync(new URL('../fixtures/reduce.json', import.meta.url), 'utf8'));
const CASES = FIXTURE.cases;

const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const TOL = { float16: 2e-3, bfloat16: 1.6e-2, float32: 2e-6, float64: 1e-12 };
const camel = (n) => n.replace(/_([a-z0-9])/g, (_, ch) => ch.toUpperCase());

function caseTol(c) {
  let e = TOL[c.expect.dtype] ?? 0;
  for (const a of c.args) {
    if (a.tensor) e = Math.max(e, TOL[a.tensor.dtype] ?? 0);
    if (a.dtype) e = Math.max(e, TOL[a.dtype] ?? 0);
  }
  return e;
}

function close(got, want, e) {
  if (Number.isNaN(want)) return Number.isNaN(got);
  if (!Number.isFinite(want)) return got === want;
  return Math.abs(got - want) <= e * (1 + Math.abs(want));
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

// wt.sum(x, dim, { keepdim, dtype, out }) / x.sum(dim, { ... }): self and dim
// positional, everything else an option (None ones left out)
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
  if (idx % 2 === 1) return { how: `t.${name}`, r: self[name](...args) };
  return { how: `wt.${name}`, r: wt[name](self, ...args) };
}

function checkResult(c, vals, r) {
  const want = c.expect;
  const bad = [];
  if (!r || typeof r.dtype !== 'string') return [`returned ${r}, not a Tensor`];
  const outAt = c.args.findIndex((a) => a.name === 'out');
  if (outAt >= 0 && r !== vals[outAt]) bad.push('did not return its out tensor');
  if (r.dtype !== want.dtype) bad.push(`dtype ${r.dtype}, want ${want.dtype}`);
  if (JSON.stringify(r.shape) !== JSON.stringify(want.size)) {
    bad.push(`shape ${JSON.stringify(r.shape)}, want ${JSON.stringify(want.size)}`);
    return bad;
  }
  const st = r.stride();
  if (want.stride.some((s, d) => want.size[d] > 1 && st[d] !== s)) {
    bad.push(`stride ${JSON.stringify(st)}, want ${JSON.stringify(want.stride)}`);
  }
  const v = r.toArray();
  const got = (Array.isArray(v) ? v.flat(Infinity) : [v]).map(Number);
  const e = caseTol(c);
  for (let i = 0; i < want.values.length; i++) {
    const w = num(want.values[i]);
    if (!close(got[i], w, e)) {
      bad.push(`value[${i}] ${got[i]}, want ${w}`);
      break;
    }
  }
  return bad;
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
      if (generated) {
        const g = viaGenerated(wt, c, vals, idx);
        how = g.how;
        r = g.r;
      } else {
        r = viaCall(wt, c, vals);
      }
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
    if (r && typeof r.dispose === 'function' && !made.includes(r)) r.dispose();
    for (const t of made) t.dispose();
  }
  const after = counts(wt);
  if (JSON.stringify(after) !== JSON.stringify(before)) {
    bad.push(`leak: wt.memory() ${JSON.stringify(after)}, was ${JSON.stringify(before)}`);
  }
  return bad.map((b) => `case ${idx} ${how} ${JSON.stringify(c.args).slice(0, 240)}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`${variant}: reduce.json through ops.call and the generated API`, async (t) => {
    const wt = await init({ variant });
    const problems = [];
    CASES.forEach((c, i) => {
      problems.push(...runOne(wt, c, i, false));
      problems.push(...runOne(wt, c, i, true));
    });
    t.diagnostic(`${CASES.length} cases, each via ops.call and the generated API`);
    if (problems.length) {
      throw new Error(`${problems.length} problem(s):\n  ${problems.slice(0, 40).join('\n  ')}`);
    }
  });
}
