// NumPy .npy files (format versions 1.0, 2.0 and 3.0), read and written
// without NumPy's pickle support. Reading validates everything before any
// tensor exists: a malformed or truncated file is a WeftError.
//
//   "\x93NUMPY" major minor  header_len (u16 for 1.x, u32 for 2.x/3.x)
//   header: a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//           padded with spaces and '\n' so the data starts at a multiple of 64
//   data:   the elements, C or Fortran order
import { WeftError } from './core.js';

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const ALIGN = 64;

// descr type code + size -> weft dtype
const FROM_DESCR = {
  b1: 'bool', u1: 'uint8', i1: 'int8', i2: 'int16', i4: 'int32', i8: 'int64',
  f2: 'float16', f4: 'float32', f8: 'float64',
};
const TO_DESCR = {
  bool: '|b1', uint8: '|u1', int8: '|i1', int16: '<i2', int32: '<i4', int64: '<i8',
  float16: '<f2', float32: '<f4', float64: '<f8',
};
const ARRAY = {
  bool: Uint8Array, uint8: Uint8Array, int8: Int8Array, int16: Int16Array, int32: Int32Array,
  int64: BigInt64Array, float16: Uint16Array, float32: Float32Array, float64: Float64Array,
};

function bad(msg) {
  return new WeftError('InvalidArgument', `fromNpy: ${msg}`);
}

// A tokenizer-parser for the one dict literal NumPy writes: string keys;
// values that are strings, True/False, or tuples of non-negative ints.
function parseHeader(text) {
  let i = 0;
  const ws = () => { while (i < text.length && /\s/.test(text[i])) i++; };
  const expect = (c) => {
    ws();
    if (text[i] !== c) throw bad(`malformed header: expected '${c}' at ${i} in ${JSON.stringify(text.trim())}`);
    i++;
  };
  const str = () => {
    ws();
    const q = text[i];
    if (q !== "'" && q !== '"') throw bad(`malformed header: expected a string at ${i}`);
    const end = text.indexOf(q, i + 1);
    if (end < 0) throw bad('malformed header: unterminated string');
    const s = text.slice(i + 1, end);
    i = end + 1;
    return s;
  };
  const value = () => {
    ws();
    if (text[i] === "'" || text[i] === '"') return str();
    if (text.startsWith('True', i)) { i += 4; return true; }
    if (text.startsWith('False', i)) { i += 5; return false; }
    if (text[i] === '(') {
      i++;
      const items = [];
      for (;;) {
        ws();
        if (text[i] === ')') { i++; return items; }
        const m = /^\d+/.exec(text.slice(i));
        if (!m) throw bad(`malformed header: expected a dimension at ${i}`);
        items.push(Number(m[0]));
        i += m[0].length;
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== ')') throw bad(`malformed header: expected ',' or ')' at ${i}`);
      }
    }
    if (text[i] === '[') throw bad('structured dtypes are not supported');
    throw bad(`malformed header: unexpected ${JSON.stringify(text.slice(i, i + 10))}`);
  };
  // No prototype: a '__proto__' key is then an ordinary (unexpected) key
  // instead of replacing the object's prototype; a repeated key is refused
  // rather than letting the last one win.
  const out = Object.create(null);
  expect('{');
  for (;;) {
    ws();
    if (text[i] === '}') { i++; break; }
    const k = str();
    if (Object.hasOwn(out, k)) throw bad(`header has the key '${k}' twice`);
    expect(':');
    out[k] = value();
    ws();
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw bad(`malformed header: expected ',' or '}' at ${i}`);
  }
  ws();
  if (i !== text.length) throw bad('malformed header: text after the dict');
  return out;
}

export function toBytes(input, op = 'fromNpy') {
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && input instanceof SharedArrayBuffer)) {
    return new Uint8Array(input);
  }
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new WeftError('TypeError', `${op}(): argument 'bytes' must be an ArrayBuffer or a TypedArray, ` +
    `not ${input === null ? 'null' : typeof input}`);
}

// Parses and validates; returns { dtype, shape, fortran, data (a fresh
// little-endian TypedArray of the elements in file order) }.
export function parseNpy(input) {
  const u8 = toBytes(input);
  if (u8.length < 10 || !MAGIC.every((b, k) => u8[k] === b)) {
    throw bad('not a .npy file (missing the \\x93NUMPY magic)');
  }
  const major = u8[6];
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  let hlen;
  let start;
  if (major === 1) {
    hlen = dv.getUint16(8, true);
    start = 10;
  } else if (major === 2 || major === 3) {
    if (u8.length < 12) throw bad('truncated header');
    hlen = dv.getUint32(8, true);
    start = 12;
  } else {
    throw bad(`unsupported format version ${major}.${u8[7]}`);
  }
  if (start + hlen > u8.length) throw bad(`truncated header (${hlen} bytes announced, ${u8.length - start} present)`);
  const raw = u8.subarray(start, start + hlen);
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(raw);
  const h = parseHeader(text);
  for (const k of ['descr', 'fortran_order', 'shape']) {
    if (!(k in h)) throw bad(`header has no '${k}'`);
  }
  const extra = Object.keys(h).filter((k) => !['descr', 'fortran_order', 'shape'].includes(k));
  if (extra.length) throw bad(`unexpected header key '${extra[0]}'`);
  const { descr, fortran_order: fortran, shape } = h;
  if (typeof descr !== 'string') throw bad('descr must be a string');
  if (typeof fortran !== 'boolean') throw bad('fortran_order must be True or False');
  if (!Array.isArray(shape)) throw bad('shape must be a tuple');
  if (shape.length > 16) throw bad(`${shape.length} dimensions (at most 16)`);
  const m = /^([<>|=])([a-zA-Z])(\d+)$/.exec(descr);
  const dtype = m && FROM_DESCR[m[2] + m[3]];
  if (!dtype) throw bad(`unsupported dtype '${descr}'`);
  const size = Number(m[3]);
  const bigEndian = m[1] === '>' && size > 1;
  let numel = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d)) throw bad(`bad dimension ${d}`);
    numel *= d;
  }
  const dataStart = start + hlen;
  const nbytes = numel * size;
  if (!Number.isSafeInteger(nbytes) || u8.length - dataStart < nbytes) {
    throw bad(`truncated data (${nbytes} bytes expected for shape (${shape.join(', ')}) of ${descr}, ` +
      `${u8.length - dataStart} present)`);
  }
  if (u8.length - dataStart > nbytes) throw bad(`${u8.length - dataStart - nbytes} bytes after the data`);
  // A copy, aligned for the TypedArray, byte-swapped when big-endian.
  const bytes = u8.slice(dataStart, dataStart + nbytes);
  if (bigEndian) {
    for (let p = 0; p < nbytes; p += size) bytes.subarray(p, p + size).reverse();
  }
  return { dtype, shape, fortran, data: new ARRAY[dtype](bytes.buffer, 0, numel) };
}

// Adds wt.fromNpy and Tensor.prototype.toNpy to an API object.
export function installNpy(wt) {
  wt.fromNpy = function fromNpy(bytes) {
    const { dtype, shape, fortran, data } = parseNpy(bytes);
    const opts = dtype === 'float16' ? { dtype, bits: true } : { dtype };
    // Fortran order is C order of the reversed shape, seen through a permute:
    // the tensor has Fortran strides, as torch.from_numpy gives.
    const cShape = fortran ? shape.slice().reverse() : shape;
    const flat = wt.tensor(data, opts);
    try {
      const c = flat.view(cShape);
      if (!fortran || shape.length < 2) return c;
      try {
        return c.permute(shape.map((_, k) => shape.length - 1 - k));
      } finally {
        c.dispose();
      }
    } finally {
      flat.dispose();
    }
  };

  wt.Tensor.prototype.toNpy = function toNpy() {
    const descr = TO_DESCR[this.dtype];
    if (!descr) throw new WeftError('NotImplemented', `toNpy: ${this.dtype} has no NumPy dtype`);
    const values = this.data({ bits: true });
    const shape = this.shape;
    const tuple = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
    let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${tuple}, }`;
    const v1 = 10 + dict.length + 1 <= 0xffff + 10;
    const pre = v1 ? 10 : 12;
    const total = Math.ceil((pre + dict.length + 1) / ALIGN) * ALIGN;
    dict = dict.padEnd(total - pre - 1, ' ') + '\n';
    const body = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    const out = new Uint8Array(total + body.length);
    out.set(MAGIC, 0);
    out[6] = v1 ? 1 : 2;
    out[7] = 0;
    const dv = new DataView(out.buffer);
    if (v1) dv.setUint16(8, dict.length, true);
    else dv.setUint32(8, dict.length, true);
    for (let k = 0; k < dict.length; k++) out[pre + k] = dict.charCodeAt(k);
    out.set(body, total);
    return out;
  };
  return wt;
}
