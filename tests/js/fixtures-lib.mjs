// Replays the PyTorch 1.13 fixtures (tests/fixtures/*.json, made by
// tests/fixtures/gen_fixtures.py) through weft's JS API.
//
// A chain is a list of steps; step 0 is a factory, each later step applies one
// op to the result of step `input` (default: the last step that succeeded in
// PyTorch). A step has either `out` (metadata, flags, values) or `error`
// (PyTorch's message) plus `match` (the part weft's message must contain).
import { readFileSync } from 'node:fs';
import { WeftError } from '../../js/index.js';

// PyTorch's dtype names as its messages print them -> weft's (weft's messages
// say float32 where PyTorch says Float, or float in c10's TypeMeta spelling).
// The C replays keep the same table: tests/c/fixture_util.h fx_weft_message.
const SCALAR_TYPE = {
  Bool: 'bool', Byte: 'uint8', Char: 'int8', Short: 'int16', Int: 'int32', Long: 'int64',
  Half: 'float16', BFloat16: 'bfloat16', Float: 'float32', Double: 'float64',
};
const CPP_TYPE = {
  'c10::Half': 'float16', 'c10::BFloat16': 'bfloat16', 'at::Half': 'float16', 'at::BFloat16': 'bfloat16',
  'unsigned char': 'uint8', 'signed char': 'int8', 'short int': 'int16', 'long int': 'int64',
  uint8_t: 'uint8', int8_t: 'int8', int16_t: 'int16', int64_t: 'int64',
  int: 'int32', float: 'float32', double: 'float64', bool: 'bool',
};
// C++ spellings only right after "dtype ", "but got ", "to type ", "output type "
// or "bounds for " (elsewhere "bool" or "int" are plain words); ScalarType
// names as whole words.
const CPP_RE = new RegExp(`(dtype |but got |to type |output type |bounds for )(${Object.keys(CPP_TYPE).join('|')})(?![\\w:])`, 'g');
const SCALAR_RE = new RegExp(`(?<![\\w:])(${Object.keys(SCALAR_TYPE).join('|')})(?!\\w)`, 'g');
export function weftMessage(torchMessage) {
  return torchMessage.replace(CPP_RE, (m, pre, t) => pre + CPP_TYPE[t]).replace(SCALAR_RE, (m, t) => SCALAR_TYPE[t]);
}

// A fixture file, with the error texts weft's messages must contain
// (`error`, `match`) in weft's dtype names.
export function loadFixture(name) {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8'),
    (key, v) => ((key === 'error' || key === 'match') && typeof v === 'string' ? weftMessage(v) : v));
}

const opt = (v) => (v === null ? undefined : v);

// The only place that knows the JS API's spelling of each op.
export function applyStep(wt, step, input) {
  const a = step.args;
  switch (step.op) {
    case 'arange': return wt.arange(0, a[0], 1, { dtype: step.dtype });
    case 'tensor': return wt.tensor(a[0], { dtype: step.dtype });
    case 'empty':
      return wt.empty(a[0], a.length > 1 ? { dtype: step.dtype, memoryFormat: a[1] } : { dtype: step.dtype });
    case 'empty_strided': return wt.emptyStrided(a[0], a[1], { dtype: step.dtype });
    case 'empty_like':
      return emptyLike(wt)(input, a.length ? { memoryFormat: a[0] } : undefined);
    case 'as_strided': return input.asStrided(a[0], a[1], a[2]);
    case 'view': return input.view(a[0]);
    case 'reshape': return input.reshape(a[0]);
    case 'permute': return input.permute(a[0]);
    case 'transpose': return input.transpose(a[0], a[1]);
    case 't': return input.t();
    case 'expand': return input.expand(a[0]);
    case 'squeeze': return a.length ? input.squeeze(a[0]) : input.squeeze();
    case 'unsqueeze': return input.unsqueeze(a[0]);
    case 'narrow': return input.narrow(a[0], a[1], a[2]);
    case 'slice': return input.slice(a[0], opt(a[1]), opt(a[2]), a[3]);
    case 'select': return input.select(a[0], a[1]);
    case 'flatten': return input.flatten(a[0], a[1]);
    case 'unflatten': return input.unflatten(a[0], a[1]);
    case 'movedim': return input.movedim(a[0], a[1]);
    case 'contiguous': return a.length ? input.contiguous({ memoryFormat: a[0] }) : input.contiguous();
    case 'clone': return a.length ? input.clone({ memoryFormat: a[0] }) : input.clone();
    default: throw new Error(`fixture op not mapped: ${step.op}`);
  }
}

// empty_like is not in the documented JS API; use it when present.
function emptyLike(wt) {
  if (typeof wt.emptyLike === 'function') return (t, o) => wt.emptyLike(t, o);
  return null;
}

export function stepSupported(wt, step) {
  return step.op !== 'empty_like' || emptyLike(wt) !== null;
}

function norm(v) {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(norm);
  if (ArrayBuffer.isView(v)) return Array.from(v, norm);
  return v;
}

const same = (x, y) => JSON.stringify(norm(x)) === JSON.stringify(y);

function describeStep(i, step) {
  return `step ${i} ${step.op}(${JSON.stringify(step.args)})${step.input !== undefined ? ` on step ${step.input}` : ''}`;
}

// Compares a weft tensor with a fixture `out`; returns a list of mismatch strings.
export function compareTensor(wt, t, out) {
  const bad = [];
  const chk = (what, got, want) => {
    if (!same(got, want)) bad.push(`${what}: got ${JSON.stringify(norm(got))}, want ${JSON.stringify(want)}`);
  };
  chk('shape', t.shape, out.shape);
  chk('stride', t.stride(), out.stride);
  chk('storageOffset', t.storageOffset(), out.offset);
  chk('dtype', t.dtype, out.dtype);
  chk('dim', t.dim(), out.shape.length);
  chk('numel', t.numel(), out.shape.reduce((p, s) => p * s, 1));
  chk('isContiguous()', t.isContiguous(), out.contiguous);
  chk("isContiguous('contiguous_format')", t.isContiguous('contiguous_format'), out.contiguous);
  chk("isContiguous('channels_last')", t.isContiguous('channels_last'), out.channels_last);
  chk("isContiguous('channels_last_3d')", t.isContiguous('channels_last_3d'), out.channels_last_3d);
  chk('isNonOverlappingAndDense()', t.isNonOverlappingAndDense(), out.noad);
  if (typeof t.suggestMemoryFormat === 'function') chk('suggestMemoryFormat()', t.suggestMemoryFormat(), out.suggest);
  if (out.values !== undefined) chk('toArray()', t.toArray(), out.values);
  return bad;
}

function memoryCounts(wt) {
  const m = wt.memory();
  const picked = {};
  for (const k of ['tensors', 'storages']) if (k in m) picked[k] = m[k];
  return Object.keys(picked).length ? picked : m;
}

// Runs one chain. Returns { problems: string[], skipped: number }.
export function replayChain(wt, chain) {
  const problems = [];
  let skipped = 0;
  const before = memoryCounts(wt);
  const live = new Set();
  const results = [];
  let cur = -1;
  chain.steps.forEach((step, i) => {
    const where = describeStep(i, step);
    const input = i === 0 ? undefined : results[step.input ?? cur];
    if (i > 0 && !input) {
      results.push(null);
      problems.push(`${where}: not run (its input failed earlier)`);
      return;
    }
    if (!stepSupported(wt, step)) {
      results.push(null);
      skipped++;
      return;
    }
    let t = null;
    let err = null;
    try {
      t = applyStep(wt, step, input);
      live.add(t);
    } catch (e) {
      err = e;
    }
    if (step.error !== undefined) {
      results.push(null);
      if (!err) problems.push(`${where}: expected error "${step.match}", but it succeeded with shape ${JSON.stringify(t && t.shape)}`);
      else if (!(err instanceof WeftError)) problems.push(`${where}: threw ${err && err.name} (not WeftError): ${err && err.message}`);
      else if (!String(err.message).includes(step.match)) problems.push(`${where}: message "${err.message}" does not contain "${step.match}"`);
      return;
    }
    if (err) {
      results.push(null);
      cur = i; // later steps depend on this one: report them as not run
      problems.push(`${where}: unexpected ${err && err.name}: ${err && err.message}`);
      return;
    }
    results.push(t);
    cur = i;
    for (const b of compareTensor(wt, t, step.out)) problems.push(`${where}: ${b}`);
  });
  for (const t of live) t.dispose();
  const after = memoryCounts(wt);
  if (!same(after, before)) problems.push(`leak: wt.memory() ${JSON.stringify(after)} after disposing everything, was ${JSON.stringify(before)}`);
  return { problems, skipped };
}

// Registers one node:test case per chain.
export function registerChains(test, wtPromise, file) {
  const fx = loadFixture(file);
  for (const chain of fx.chains) {
    test(`${file} ${chain.id}${chain.note ? ` (${chain.note})` : ''}`, async (t) => {
      const wt = await wtPromise;
      const { problems, skipped } = replayChain(wt, chain);
      if (skipped) t.diagnostic(`${skipped} step(s) skipped: op not in the JS API`);
      if (problems.length) throw new Error(`${chain.id}:\n  ${problems.join('\n  ')}`);
    });
  }
  return fx.chains.length;
}

// ---- the torch.linalg fixtures (eigh, svd, linalg25, qr; written by
// tests/fixtures/fixture_util.py): a tensor is {dtype, size, values[,
// stride]}, its values row-major, non-finite ones as 'nan', 'inf', '-inf' ----

export const fixtureNumber = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);

// the tensor of a spec; it and its base are pushed to made (the caller disposes them)
export function fixtureTensor(wt, s, made) {
  const data = s.values.map((v) => (s.dtype.startsWith('int') ? BigInt(v) : fixtureNumber(v)));
  const base = wt.tensor(data, { dtype: s.dtype });
  const t = base.reshape(s.size);
  made.push(base, t);
  return t;
}

// every value of t (any layout), row-major
export const valuesOf = (t) => [t.toArray()].flat(Infinity).map(Number);

// got (numbers) against a spec's stored values: finite ones within tol of
// the largest finite |want| (of at least 1 when unit), the others exactly
// (NaN as NaN); [] or the first mismatch
export function compareValues(what, got, wantValues, tol, unit = true) {
  const w = wantValues.map(fixtureNumber);
  const scale = Math.max(unit ? 1 : 0, ...w.filter(Number.isFinite).map(Math.abs));
  const i = w.findIndex((x, j) => (Number.isFinite(x) ? !(Math.abs(got[j] - x) <= tol * scale) : !Object.is(got[j], x)));
  return i >= 0 ? [`${what}[${i}] ${got[i]}, want ${w[i]}`] : [];
}

// t's dtype, shape and (when it has more than one element) strides against a spec; [] or the first difference
export function checkLayout(what, t, spec) {
  if (t.dtype !== spec.dtype) return [`${what}: dtype ${t.dtype}, want ${spec.dtype}`];
  if (JSON.stringify(t.shape) !== JSON.stringify(spec.size)) return [`${what}: shape ${t.shape}, want ${spec.size}`];
  if (t.numel() > 1 && JSON.stringify(t.stride()) !== JSON.stringify(spec.stride)) {
    return [`${what}: stride ${t.stride()}, want ${spec.stride}`];
  }
  return [];
}
