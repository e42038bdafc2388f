// Every case of tests/fixtures/ops.json (PyTorch 1.13, made by
// tests/fixtures/gen_ops_fixtures.py; the native replay is tests/c/test_ops.c)
// replayed through the JS API on each wasm variant:
//   - every case as wt.ops.call(<exact overload>, ...args), kwarg-only
//     arguments (alpha, out, approximate) in the trailing options object;
//   - every FORM_EVERY-th case again through the generated API: wt.<fn>(...),
//     t.<method>(...), t.<name>_(...) for in-place overloads, { out } for out=.
// Checks output dtype, shape, strides (of dims longer than 1, as test_ops.c),
// values (NaN/Inf exact, floats to the loosest float dtype among the case's
// tensors: libm/Sleef differ by ~1 ulp), that in-place/out= return the tensor
// given, PyTorch's error messages (WeftError), and that every case leaves
// wt.memory() where it found it.
import { test } from 'node:test';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, VARIANTS } from './helpers.mjs';
import { NOT_METHODS } from '../../js/ops.js';

const FIXTURE = loadFixture('ops.json');
const CASES = FIXTURE.cases;
const FORM_EVERY = 5;

const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const FLOATING = new Set(['float16', 'bfloat16', 'float32', 'float64']);
const TOL = { float16: 2e-3, bfloat16: 1.6e-2, float32: 2e-6, float64: 1e-12 };

// As test_ops.c: the loosest tolerance among the result's and the operands'
// floating dtypes (a float32 computation stored into float64 keeps float32's
// error); float32's for a floating result of integer operands.
function caseTol(c) {
  let e = TOL[c.expect.dtype] ?? 0;
  for (const a of c.args) if (a.tensor) e = Math.max(e, TOL[a.tensor.dtype] ?? 0);
  if (e === 0 && FLOATING.has(c.expect.dtype)) e = TOL.float32;
  return e;
}

// Schema facts per overload: argument names and which are kwarg-only.
function schemaInfo(wt, cache, op) {
  let s = cache.get(op);
  if (s) return s;
  const schema = wt.ops.schema(op);
  const inner = schema.slice(schema.indexOf('(') + 1, schema.lastIndexOf(') ->'));
  const args = [];
  let kwOnly = false;
  for (const part of inner.split(', ')) {
    if (part === '*') { kwOnly = true; continue; }
    const [head, def] = part.split('=');
    const decl = head.trim().split(' ');
    args.push({ name: decl[decl.length - 1], type: decl[0], kwOnly, def: def?.replace(/^'|'$/g, '') });
  }
  const [base, overload = ''] = op.split('.');
  s = {
    schema, args, base, overload,
    isOut: args.some((a) => a.kwOnly && a.name === 'out'),
    inplace: base.endsWith('_'),
  };
  // the tensor an in-place / out= call returns
  s.returns = args.findIndex((a) => a.name === (s.isOut ? 'out' : 'self'));
  cache.set(op, s);
  return s;
}

const camel = (n) => n.replace(/_([a-z0-9])/g, (_, ch) => ch.toUpperCase());

function makeTensor(wt, spec, made) {
  const base = wt.tensor(spec.storage.map(num), { dtype: spec.dtype });
  made.push(base);
  const t = base.asStrided(spec.size, spec.stride, spec.offset);
  made.push(t);
  return t;
}

function makeArg(wt, a, made) {
  if (a.tensor) return makeTensor(wt, a.tensor, made);
  if ('scalar' in a) return a.type === 'bool' ? a.scalar !== 0 : num(a.scalar);
  return a.str;
}

// Positional values and the options object for one call; withDefaults:
// false leaves out keyword arguments equal to the schema's default (alpha=1,
// approximate='none') so the binding supplies them.
function split(info, vals, withDefaults = true) {
  const pos = [];
  const kw = {};
  info.args.forEach((a, i) => {
    const v = vals[i];
    if (!a.kwOnly) pos.push(v);
    else if (withDefaults || a.def === undefined || typeof v === 'boolean' || String(v) !== a.def) {
      kw[camel(a.name)] = v;
    }
  });
  return { pos, kw };
}

// The generated spelling of the call, varied by case index:
// in-place -> t.name_(...); Scalar self -> wt.fn(...); else function or method;
// half of them rely on the keyword defaults (alpha=1, approximate).
function generatedCall(wt, info, vals, idx) {
  const { pos, kw } = split(info, vals, Math.floor(idx / FORM_EVERY / 2) % 2 === 0);
  const name = camel(info.base);
  const hasKw = Object.keys(kw).length > 0;
  const dropped = Object.keys(kw).length < info.args.filter((a) => a.kwOnly).length;
  const tag = (kind) => `${kind}${info.isOut ? '+out' : ''}${dropped ? '+defaults' : ''}`;
  const selfAt = info.args.findIndex((a) => a.name === 'self');
  const selfIsTensor = selfAt >= 0 && typeof vals[selfAt] === 'object';
  const useMethod = info.inplace || (selfIsTensor && (idx / FORM_EVERY) % 2 === 1 && !NOT_METHODS.has(info.base));
  if (useMethod) {
    const self = vals[selfAt];
    const rest = pos.filter((_, j) => j !== selfAt);
    if (typeof self[name] !== 'function') throw new Error(`no method Tensor.${name}`);
    const r = hasKw ? self[name](...rest, kw) : self[name](...rest);
    return { how: `t.${name}`, kind: tag(info.inplace ? 'in-place' : 'method'), r };
  }
  if (typeof wt[name] !== 'function') throw new Error(`no function wt.${name}`);
  return { how: `wt.${name}`, kind: tag('function'), r: hasKw ? wt[name](...pos, kw) : wt[name](...pos) };
}

function flatValues(t) {
  const v = t.toArray({ bigint: true }); // compared as numbers, as the fixture stores them
  const flat = Array.isArray(v) ? v.flat(Infinity) : [v];
  return flat.map(Number);
}

function checkResult(c, info, vals, r) {
  const want = c.expect;
  const bad = [];
  if (!r || typeof r.dtype !== 'string') return [`returned ${r}, not a Tensor`];
  if (info.returns >= 0 && (info.inplace || info.isOut) && r !== vals[info.returns]) {
    bad.push(`did not return its ${info.isOut ? 'out' : 'self'} tensor`);
  }
  if (r.dtype !== want.dtype) bad.push(`dtype ${r.dtype}, want ${want.dtype}`);
  if (JSON.stringify(r.shape) !== JSON.stringify(want.size)) {
    bad.push(`shape ${JSON.stringify(r.shape)}, want ${JSON.stringify(want.size)}`);
    return bad;
  }
  const st = r.stride();
  if (want.stride.some((s, d) => st[d] !== s)) {
    bad.push(`stride ${JSON.stringify(st)}, want ${JSON.stringify(want.stride)}`);
  }
  const got = flatValues(r);
  const e = caseTol(c);
  for (let i = 0; i < want.values.length; i++) {
    const w = num(want.values[i]);
    if (!close(got[i], w, e)) {
      bad.push(`value[${i}] ${got[i]}, want ${w} (got ${JSON.stringify(got)})`);
      break;
    }
  }
  return bad;
}

function checkError(c, err) {
  if (!err) return [`expected error "${c.expect.error}", but it succeeded`];
  if (!(err instanceof WeftError)) return [`threw ${err.name} (not WeftError): ${err.message}`];
  if (!String(err.message).includes(c.expect.error)) {
    return [`message "${err.message}" lacks "${c.expect.error}"`];
  }
  return [];
}

// One call of case c (fresh operands); returns a list of problems.
function runOne(wt, cache, c, idx, generated, kinds) {
  const info = schemaInfo(wt, cache, c.op);
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
        const g = generatedCall(wt, info, vals, idx);
        how = g.how;
        kinds.set(g.kind, (kinds.get(g.kind) ?? 0) + 1);
        r = g.r;
      } else {
        const { pos, kw } = split(info, vals);
        r = Object.keys(kw).length ? wt.ops.call(c.op, ...pos, kw) : wt.ops.call(c.op, ...pos);
      }
    } catch (e) {
      err = e;
    }
    if (c.expect.error !== undefined) bad.push(...checkError(c, err));
    else if (err) bad.push(`unexpected ${err.name}: ${err.message}`);
    else bad.push(...checkResult(c, info, vals, r));
  } finally {
    if (r && typeof r.dispose === 'function' && !made.includes(r)) r.dispose();
    for (const t of made) t.dispose();
  }
  const after = counts(wt);
  if (JSON.stringify(after) !== JSON.stringify(before)) {
    bad.push(`leak: wt.memory() ${JSON.stringify(after)}, was ${JSON.stringify(before)}`);
  }
  return bad.map((b) => `case ${idx} ${how} ${JSON.stringify(c.args).slice(0, 300)}: ${b}`);
}

function replayAll(wt) {
  const cache = new Map();
  const problems = [];
  let calls = 0;
  let errors = 0;
  let forms = 0;
  const kinds = new Map();
  CASES.forEach((c, i) => {
    problems.push(...runOne(wt, cache, c, i, false, kinds));
    calls++;
    if (c.expect.error !== undefined) errors++;
    if (i % FORM_EVERY === 0) {
      problems.push(...runOne(wt, cache, c, i, true, kinds));
      forms++;
    }
  });
  return { problems, calls, errors, forms, kinds };
}

for (const variant of VARIANTS) {
  test(`${variant}: ops.json through ops.call and the generated API`, async (t) => {
    const wt = await init({ variant });
    const { problems, calls, errors, forms, kinds } = replayAll(wt);
    t.diagnostic(`${calls} cases (${errors} errors) via ops.call, ${forms} via the generated API ` +
      `(${[...kinds].sort().map(([k, n]) => `${k} ${n}`).join(', ')})`);
    if (problems.length) {
      throw new Error(`${problems.length} problem(s):\n  ${problems.slice(0, 60).join('\n  ')}`);
    }
  });
}
