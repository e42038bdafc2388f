// safetensors files (huggingface/safetensors), read and written:
//
//   u64 little-endian N, the header's size
//   N bytes of UTF-8 JSON: { "__metadata__"?: { string: string },
//                            name: { "dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end] }, ... }
//           padded with spaces (the writer pads to a multiple of 8)
//   the byte buffer: offsets are relative to its start; the tensors cover it
//           entirely, without holes or overlaps
//
// Reading validates the whole header before any tensor exists (as js/npy.js
// does for .npy): a malformed, truncated or hostile file is a WeftError.
// Writing sorts the tensors by element size (largest first), then name, as
// the reference implementation does, so each tensor's data is aligned to its
// element size.
import { WeftError } from './core.js';
import { toBytes } from './npy.js';
import { withBytes } from './checkpoint.js';

// safetensors dtype <-> weft dtype, element size, the TypedArray wt.tensor takes
const DTYPES = {
  BOOL: ['bool', 1, Uint8Array], U8: ['uint8', 1, Uint8Array], I8: ['int8', 1, Int8Array],
  I16: ['int16', 2, Int16Array], I32: ['int32', 4, Int32Array], I64: ['int64', 8, BigInt64Array],
  F16: ['float16', 2, Uint16Array], BF16: ['bfloat16', 2, Uint16Array],
  F32: ['float32', 4, Float32Array], F64: ['float64', 8, Float64Array],
};
const TO_ST = Object.fromEntries(Object.entries(DTYPES).map(([st, [dt]]) => [dt, st]));
// dtypes of the format that weft has no dtype for
const MISSING = new Set(['U16', 'U32', 'U64', 'F8_E4M3', 'F8_E5M2', 'F8_E8M0', 'F6_E2M3', 'F6_E3M2',
  'F4', 'C64', 'C128']);
// the reference implementation's limit: a larger header is refused, not parsed
const MAX_HEADER = 100_000_000;
const MAX_DIMS = 16;
const MAX_DEPTH = 64;
const METADATA = '__metadata__';
const LITERALS = { t: ['true', true], f: ['false', false], n: ['null', null] };

const bad = (op, msg) => new WeftError('InvalidArgument', `${op}: ${msg}`);

// ---- a strict JSON parser: objects as Maps (no prototype to pollute, fast
// with 10^4 names), duplicate and '__proto__' keys refused, bounded nesting
// (no RangeError on a deep header) ----

function parseJson(text, op) {
  let i = 0;
  const fail = (what) => bad(op, `malformed header: ${what} at byte ${i}`);
  const ws = () => {
    for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

  // To the closing quote (one after an even run of backslashes); escapes and
  // control characters are left to JSON.parse, which checks them.
  function string() {
    if (text[i] !== '"') throw fail('expected a string');
    let end = i;
    for (;;) {
      end = text.indexOf('"', end + 1);
      if (end < 0) throw fail('unterminated string');
      let k = end;
      while (text[k - 1] === '\\') k--;
      if ((end - k) % 2 === 0) break;
    }
    const raw = text.slice(i, end + 1);
    i = end + 1;
    if (!/[\\\u0000-\u001f]/.test(raw)) return raw.slice(1, -1);
    try {
      return JSON.parse(raw);
    } catch {
      throw bad(op, `malformed header: bad string ${raw.slice(0, 40)} at byte ${i - raw.length}`);
    }
  }

  function value(depth) {
    if (depth > MAX_DEPTH) throw fail(`more than ${MAX_DEPTH} nested arrays or objects`);
    ws();
    const c = text[i];
    if (c === '{') return object(depth);
    if (c === '[') return array(depth);
    if (c === '"') return string();
    const word = LITERALS[c];
    if (word !== undefined && text.startsWith(word[0], i)) {
      i += word[0].length;
      return word[1];
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) throw fail(c === undefined ? 'unexpected end' : `unexpected ${JSON.stringify(c)}`);
    i = NUMBER.lastIndex;
    return Number(m[0]);
  }

  function array(depth) {
    i++;
    const out = [];
    ws();
    if (text[i] === ']') { i++; return out; }
    for (;;) {
      out.push(value(depth + 1));
      ws();
      if (text[i] === ']') { i++; return out; }
      if (text[i] !== ',') throw fail("expected ',' or ']'");
      i++;
    }
  }

  function object(depth) {
    i++;
    const out = new Map();
    ws();
    if (text[i] === '}') { i++; return out; }
    for (;;) {
      ws();
      const k = string();
      if (k === '__proto__') throw bad(op, "header has a '__proto__' key");
      if (out.has(k)) throw bad(op, `header has the key ${JSON.stringify(k)} twice`);
      ws();
      if (text[i] !== ':') throw fail("expected ':'");
      i++;
      out.set(k, value(depth + 1));
      ws();
      if (text[i] === '}') { i++; return out; }
      if (text[i] !== ',') throw fail("expected ',' or '}'");
      i++;
    }
  }

  if (text[0] !== '{') throw bad(op, 'the header is not a JSON object (it must start with {)');
  const h = value(0);
  ws();
  if (i !== text.length) throw fail('text after the header object');
  return h;
}

// ---- validation ----

// A caller's plain object (a Map, a Tensor or an array is none).
const isObject = (v) => v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const isIndex = (v) => Number.isSafeInteger(v) && v >= 0;
const byteLength = (st, shape) => shape.reduce((n, d) => n * d, DTYPES[st][1]);

// The header's __metadata__ (a Map) or a caller's metadata -> an object without prototype.
function checkMetadata(op, m) {
  if (!(m instanceof Map || isObject(m))) throw bad(op, `__metadata__ must be an object of strings, not ${describe(m)}`);
  const out = Object.create(null);
  for (const [k, v] of m instanceof Map ? m : Object.entries(m)) {
    if (typeof v !== 'string') throw bad(op, `__metadata__[${JSON.stringify(k)}] must be a string, not ${describe(v)}`);
    if (k === '__proto__') throw bad(op, "metadata has a '__proto__' key");
    out[k] = v;
  }
  return out;
}

// JSON values as the header wrote them (JSON.stringify would print 1e400 as null)
const show = (v) => (Array.isArray(v) ? `[${v.map(show).join(', ')}]` : typeof v === 'string' ? JSON.stringify(v) : String(v));

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}

// One tensor's entry -> { name, dtype, shape, begin, end, st }.
function checkInfo(op, name, info, dataLength) {
  const where = `tensor ${JSON.stringify(name)}`;
  if (!(info instanceof Map)) throw bad(op, `${where}: expected an object with dtype, shape and data_offsets, got ${describe(info)}`);
  for (const k of ['dtype', 'shape', 'data_offsets']) {
    if (!info.has(k)) throw bad(op, `${where} has no '${k}'`);
  }
  if (info.size !== 3) {
    const extra = [...info.keys()].find((k) => !['dtype', 'shape', 'data_offsets'].includes(k));
    throw bad(op, `${where}: unexpected key ${JSON.stringify(extra)}`);
  }
  const st = info.get('dtype');
  const shape = info.get('shape');
  const offsets = info.get('data_offsets');
  if (typeof st !== 'string') throw bad(op, `${where}: dtype must be a string, not ${describe(st)}`);
  if (MISSING.has(st)) {
    throw new WeftError('NotImplemented', `${op}: ${where} has dtype ${st}, which weft does not have ` +
      `(it reads ${Object.keys(DTYPES).join(', ')})`);
  }
  if (!Object.hasOwn(DTYPES, st)) throw bad(op, `${where}: unknown dtype ${JSON.stringify(st)}`);
  if (!Array.isArray(shape) || !shape.every(isIndex)) {
    throw bad(op, `${where}: shape must be an array of non-negative integers, got ${show(shape)}`);
  }
  if (shape.length > MAX_DIMS) throw bad(op, `${where} has ${shape.length} dimensions (weft has at most ${MAX_DIMS})`);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isIndex)) {
    throw bad(op, `${where}: data_offsets must be [begin, end] (non-negative integers), got ${show(offsets)}`);
  }
  const [begin, end] = offsets;
  if (begin > end) throw bad(op, `${where}: data_offsets [${begin}, ${end}] end before they begin`);
  if (end > dataLength) {
    throw bad(op, `${where}: data_offsets [${begin}, ${end}] are outside the ${dataLength} bytes of data`);
  }
  const nbytes = byteLength(st, shape);
  if (nbytes !== end - begin) {
    throw bad(op, `${where}: shape [${shape.join(', ')}] of ${st} takes ${nbytes} bytes, but data_offsets ` +
      `[${begin}, ${end}] hold ${end - begin}`);
  }
  return { name, dtype: DTYPES[st][0], shape, begin, end, st };
}

// The tensors must cover [0, dataLength) exactly: sorted by offsets, each
// begins where the previous one ended (empty tensors take no bytes).
function checkCoverage(op, entries, dataLength) {
  const sorted = entries.slice().sort((a, b) => a.begin - b.begin || a.end - b.end);
  let pos = 0;
  let prev = null;
  for (const e of sorted) {
    if (e.begin < pos) {
      throw bad(op, `tensors ${JSON.stringify(prev.name)} and ${JSON.stringify(e.name)} overlap ` +
        `(bytes [${e.begin}, ${Math.min(pos, e.end)}))`);
    }
    if (e.begin > pos) throw bad(op, `bytes [${pos}, ${e.begin}) of the data belong to no tensor`);
    pos = e.end;
    if (e.end > e.begin) prev = e;
  }
  if (pos !== dataLength) throw bad(op, `bytes [${pos}, ${dataLength}) of the data belong to no tensor`);
}

/**
 * Parses and validates a safetensors file: { metadata (a string map or
 * null), tensors: [{ name, dtype, shape, begin, end }] in header order,
 * bytes (the whole file), dataStart }.
 */
export function parseSafetensors(input, op = 'loadSafetensors') {
  const u8 = toBytes(input, op);
  if (u8.length < 8) throw bad(op, `not a safetensors file (${u8.length} bytes; the header size takes 8)`);
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const lo = dv.getUint32(0, true);
  const hi = dv.getUint32(4, true);
  const n = hi * 2 ** 32 + lo;
  if (hi !== 0 || n > MAX_HEADER) throw bad(op, `header size ${BigInt(hi) << 32n | BigInt(lo)} is too large (at most ${MAX_HEADER})`);
  if (n > u8.length - 8) throw bad(op, `truncated header (${n} bytes announced, ${u8.length - 8} present)`);
  let text;
  try {
    // a copy: browsers' TextDecoder refuses views of a SharedArrayBuffer
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(u8.slice(8, 8 + n));
  } catch {
    throw bad(op, 'the header is not valid UTF-8');
  }
  const header = parseJson(text, op);
  const dataStart = 8 + n;
  const dataLength = u8.length - dataStart;
  let metadata = null;
  const tensors = [];
  for (const [name, info] of header) {
    if (name === METADATA) metadata = checkMetadata(op, info);
    else tensors.push(checkInfo(op, name, info, dataLength));
  }
  checkCoverage(op, tensors, dataLength);
  return { metadata, tensors, bytes: u8, dataStart };
}

// A TypedArray over one tensor's bytes (a copy when unaligned for its type).
function valuesOf(file, e) {
  const [, size, Arr] = DTYPES[e.st];
  const at = file.bytes.byteOffset + file.dataStart + e.begin;
  const count = (e.end - e.begin) / size;
  if (at % size === 0) return new Arr(file.bytes.buffer, at, count);
  return new Arr(file.bytes.slice(file.dataStart + e.begin, file.dataStart + e.end).buffer, 0, count);
}

function makeTensor(wt, values, dtype, shape) {
  const half = dtype === 'float16' || dtype === 'bfloat16';
  const flat = wt.tensor(values, half ? { dtype, bits: true } : { dtype });
  try {
    return flat.view(shape);
  } finally {
    flat.dispose();
  }
}

function checkKeys(op, opts, allowed) {
  if (opts === undefined) return {};
  if (!isObject(opts)) throw new WeftError('TypeError', `${op}(): options must be an object, not ${describe(opts)}`);
  for (const k of Object.keys(opts)) {
    if (!allowed.includes(k)) {
      throw new WeftError('TypeError', `${op}() got an unexpected keyword argument '${k}' (it takes ${allowed.join(', ')})`);
    }
  }
  return opts;
}

function loadTensors(wt, bytes, opts) {
  const file = parseSafetensors(bytes, 'loadSafetensors');
  const tensors = Object.create(null);
  try {
    for (const e of file.tensors) tensors[e.name] = makeTensor(wt, valuesOf(file, e), e.dtype, e.shape);
  } catch (err) {
    for (const t of Object.values(tensors)) t.dispose();
    throw err;
  }
  return opts.metadata === true ? { tensors, metadata: file.metadata } : tensors;
}

// ---- writing ----

function checkTensors(wt, op, tensors) {
  if (!isObject(tensors) || tensors instanceof wt.Tensor) {
    throw new WeftError('TypeError', `${op}(): argument 'tensors' must be an object of name: Tensor, not ` +
      `${tensors instanceof wt.Tensor ? 'a Tensor' : describe(tensors)}`);
  }
  const entries = Object.entries(tensors);
  for (const [name, t] of entries) {
    if (name === METADATA || name === '__proto__') {
      throw new WeftError('InvalidArgument', `${op}: '${name}' cannot name a tensor`);
    }
    if (!(t instanceof wt.Tensor)) {
      throw new WeftError('TypeError', `${op}(): tensors[${JSON.stringify(name)}] must be a Tensor, not ${describe(t)}`);
    }
    if (t.isDisposed) throw new WeftError('InvalidArgument', `${op}: tensor ${JSON.stringify(name)} has been disposed`);
    if (t.device === 'meta') throw new WeftError('InvalidArgument', `${op}: tensor ${JSON.stringify(name)} is a meta tensor (no data)`);
  }
  return entries;
}

// Assembled entry by entry, not stringified from one object: an object puts
// a name like "7" first, and the header must list the tensors in data order.
function encodeHeader(metadata, infos) {
  const parts = infos.map((i) =>
    `${JSON.stringify(i.name)}:${JSON.stringify({ dtype: i.st, shape: i.shape, data_offsets: [i.begin, i.end] })}`);
  if (metadata) parts.unshift(`${JSON.stringify(METADATA)}:${JSON.stringify(metadata)}`);
  const bytes = new TextEncoder().encode(`{${parts.join(',')}}`);
  const padded = new Uint8Array(Math.ceil(bytes.length / 8) * 8).fill(0x20);
  padded.set(bytes);
  return padded;
}

const byLayout = (a, b) => DTYPES[b.st][1] - DTYPES[a.st][1] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

// Adds wt.loadSafetensors, wt.readSafetensorsHeader and wt.saveSafetensors to an API object.
export function installSafetensors(wt) {
  // Both take bytes now, or a fetch Response / Blob / File (then a Promise).
  wt.readSafetensorsHeader = function readSafetensorsHeader(bytes) {
    return withBytes(bytes, 'readSafetensorsHeader', (b) => {
      const { metadata, tensors } = parseSafetensors(b, 'readSafetensorsHeader');
      const out = Object.create(null);
      for (const e of tensors) out[e.name] = { dtype: e.dtype, shape: e.shape, dataOffsets: [e.begin, e.end] };
      return { metadata, tensors: out };
    });
  };

  wt.loadSafetensors = function loadSafetensors(bytes, options) {
    const opts = checkKeys('loadSafetensors', options, ['metadata']);
    return withBytes(bytes, 'loadSafetensors', (b) => loadTensors(wt, b, opts));
  };

  wt.saveSafetensors = function saveSafetensors(tensors, options) {
    const op = 'saveSafetensors';
    const opts = checkKeys(op, options, ['metadata']);
    const metadata = opts.metadata == null ? null : checkMetadata(op, opts.metadata);
    const infos = checkTensors(wt, op, tensors).map(([name, t]) => ({ name, t, st: TO_ST[t.dtype], shape: t.shape }));
    infos.sort(byLayout);
    let pos = 0;
    for (const i of infos) {
      i.begin = pos;
      i.end = pos += byteLength(i.st, i.shape);
    }
    const header = encodeHeader(metadata, infos);
    const out = new Uint8Array(8 + header.length + pos);
    const dv = new DataView(out.buffer);
    dv.setUint32(0, header.length, true);
    out.set(header, 8);
    for (const i of infos) {
      if (i.end === i.begin) continue;
      const v = i.t.data({ bits: true });
      out.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), 8 + header.length + i.begin);
    }
    return out;
  };
  return wt;
}
