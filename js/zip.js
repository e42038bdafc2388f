// The zip container of torch.save files, read and written: stored
// (uncompressed) entries only, ZIP64 when a size, an offset or the entry count
// needs it, CRC-32 checked on every entry read.
//
//   local header  PK\3\4 ... name, extra, then the entry's bytes
//   central directory  PK\1\2 per entry: sizes, CRC-32, local header offset
//   [ZIP64 end record PK\6\6, its locator PK\6\7]
//   end of central directory  PK\5\6: entry count, directory size and offset
//
// The reader trusts only the central directory (torch's writer puts zeros in
// the local headers' sizes and a data descriptor after the data) and checks
// that every offset and length it reads stays inside the bytes.
import { WeftError } from './core.js';

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_END = 0x06054b50;
const SIG_END64 = 0x06064b50;
const SIG_LOCATOR64 = 0x07064b50;
const ZIP64_EXTRA = 0x0001;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;
const END_SIZE = 22;
const CENTRAL_SIZE = 46;
const LOCAL_SIZE = 30;
// torch aligns each entry's data to 64 bytes with an extra field of this id
const PAD_EXTRA = 0x4246; // 'FB'
const ALIGN = 64;

const bad = (op, msg) => new WeftError('InvalidArgument', `${op}: ${msg}`);

// ---- CRC-32 (the zip polynomial, reflected), sixteen bytes per step ----
// (slicing-by-16 over aligned little-endian words, as every wasm host is)

const CRC_TABLES = (() => {
  const t = new Int32Array(256 * 16);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 16; k++) t[k * 256 + n] = t[(k - 1) * 256 + n] >>> 8 ^ t[t[(k - 1) * 256 + n] & 0xff];
  }
  return t;
})();

export function crc32(u8, crc = 0) {
  const T = CRC_TABLES;
  const n = u8.length;
  let c = ~crc;
  let i = 0;
  const head = Math.min(n, (4 - (u8.byteOffset & 3)) & 3);
  for (; i < head; i++) c = T[(c ^ u8[i]) & 0xff] ^ c >>> 8;
  // (fewer than 4 bytes: all done above, maybe short of alignment)
  const aligned = ((u8.byteOffset + i) & 3) === 0;
  const words = aligned ? new Int32Array(u8.buffer, u8.byteOffset + i, (n - i) >> 2) : new Int32Array(0);
  const end = words.length & ~3;
  for (let w = 0; w < end; w += 4) {
    const a = c ^ words[w];
    const b = words[w + 1];
    const d = words[w + 2];
    const e = words[w + 3];
    c = T[3840 + (a & 0xff)] ^ T[3584 + (a >>> 8 & 0xff)] ^ T[3328 + (a >>> 16 & 0xff)] ^ T[3072 + (a >>> 24)] ^
      T[2816 + (b & 0xff)] ^ T[2560 + (b >>> 8 & 0xff)] ^ T[2304 + (b >>> 16 & 0xff)] ^ T[2048 + (b >>> 24)] ^
      T[1792 + (d & 0xff)] ^ T[1536 + (d >>> 8 & 0xff)] ^ T[1280 + (d >>> 16 & 0xff)] ^ T[1024 + (d >>> 24)] ^
      T[768 + (e & 0xff)] ^ T[512 + (e >>> 8 & 0xff)] ^ T[256 + (e >>> 16 & 0xff)] ^ T[e >>> 24];
  }
  for (i += end * 4; i < n; i++) c = T[(c ^ u8[i]) & 0xff] ^ c >>> 8;
  return ~c >>> 0;
}

// ---- reading ----

// Little-endian reads with bounds: a read past the end is a WeftError.
class Reader {
  constructor(u8, op) {
    this.u8 = u8;
    this.op = op;
    this.dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  }

  need(at, n, what) {
    if (at < 0 || at + n > this.u8.length) {
      throw bad(this.op, `corrupt zip: ${what} at byte ${at} runs past the end of the ${this.u8.length} bytes`);
    }
  }

  u16(at) { return this.dv.getUint16(at, true); }
  u32(at) { return this.dv.getUint32(at, true); }
  u64(at, what) {
    const v = this.dv.getBigUint64(at, true);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(this.op, `corrupt zip: ${what} ${v} is too large`);
    return Number(v);
  }
}

function findEnd(r) {
  const n = r.u8.length;
  const stop = Math.max(0, n - END_SIZE - U16_MAX);
  for (let at = n - END_SIZE; at >= stop; at--) {
    if (r.u32(at) === SIG_END && at + END_SIZE + r.u16(at + 20) === n) return at;
  }
  return -1;
}

// The ZIP64 end record, when the locator sits right before the end record.
function readEnd64(r, end) {
  const loc = end - 20;
  if (loc < 0 || r.u32(loc) !== SIG_LOCATOR64) return null;
  if (r.u32(loc + 4) !== 0 || r.u32(loc + 16) > 1) throw bad(r.op, 'multi-disk zip archives are not supported');
  const at = r.u64(loc + 8, 'ZIP64 end record offset');
  r.need(at, 56, 'the ZIP64 end record');
  if (r.u32(at) !== SIG_END64) throw bad(r.op, `corrupt zip: no ZIP64 end record at byte ${at}`);
  return {
    count: r.u64(at + 32, 'entry count'),
    size: r.u64(at + 40, 'central directory size'),
    offset: r.u64(at + 48, 'central directory offset'),
  };
}

// Replaces the 0xffffffff fields of a central entry by its ZIP64 extra's values.
function applyZip64(r, e, extraAt, extraLen) {
  const wants = ['size', 'csize', 'offset'].filter((k) => e[k] === U32_MAX);
  if (!wants.length) return;
  for (let p = extraAt; p + 4 <= extraAt + extraLen;) {
    const id = r.u16(p);
    const len = r.u16(p + 2);
    if (p + 4 + len > extraAt + extraLen) break;
    if (id === ZIP64_EXTRA) {
      if (len < wants.length * 8) throw bad(r.op, `corrupt zip: entry ${JSON.stringify(e.name)} has a short ZIP64 field`);
      wants.forEach((k, i) => { e[k] = r.u64(p + 4 + 8 * i, `entry ${JSON.stringify(e.name)} ${k}`); });
      return;
    }
    p += 4 + len;
  }
  throw bad(r.op, `corrupt zip: entry ${JSON.stringify(e.name)} has 0xffffffff sizes but no ZIP64 field`);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function centralEntry(r, at, limit) {
  r.need(at, CENTRAL_SIZE, 'a central directory entry');
  if (r.u32(at) !== SIG_CENTRAL) throw bad(r.op, `corrupt zip: no central directory entry at byte ${at}`);
  const nameLen = r.u16(at + 28);
  const extraLen = r.u16(at + 30);
  const next = at + CENTRAL_SIZE + nameLen + extraLen + r.u16(at + 32);
  if (next > limit) throw bad(r.op, `corrupt zip: the central directory entry at byte ${at} runs past the directory`);
  let name;
  try {
    name = utf8.decode(r.u8.slice(at + CENTRAL_SIZE, at + CENTRAL_SIZE + nameLen));
  } catch {
    throw bad(r.op, `corrupt zip: the entry name at byte ${at + CENTRAL_SIZE} is not UTF-8`);
  }
  const e = {
    name, flags: r.u16(at + 8), method: r.u16(at + 10), crc: r.u32(at + 16),
    csize: r.u32(at + 20), size: r.u32(at + 24), offset: r.u32(at + 42), disk: r.u16(at + 34),
  };
  applyZip64(r, e, at + CENTRAL_SIZE + nameLen, extraLen);
  return [e, next];
}

// Where the entry's bytes are (bounds checked); compressed or encrypted
// entries are refused when read, so a file's other entries can be.
function checkEntry(r, e) {
  const where = `entry ${JSON.stringify(e.name)}`;
  r.need(e.offset, LOCAL_SIZE, `the local header of ${where}`);
  if (r.u32(e.offset) !== SIG_LOCAL) throw bad(r.op, `corrupt zip: no local header for ${where} at byte ${e.offset}`);
  const nameLen = r.u16(e.offset + 26);
  const start = e.offset + LOCAL_SIZE + nameLen + r.u16(e.offset + 28);
  r.need(e.offset + LOCAL_SIZE, nameLen, `the local name of ${where}`);
  const local = r.u8.subarray(e.offset + LOCAL_SIZE, e.offset + LOCAL_SIZE + nameLen);
  const central = new TextEncoder().encode(e.name);
  if (local.length !== central.length || local.some((b, i) => b !== central[i])) {
    throw bad(r.op, `corrupt zip: the local header at byte ${e.offset} names another entry than ${JSON.stringify(e.name)}`);
  }
  r.need(start, e.csize, `the data of ${where}`);
  e.start = start;
}

function checkStored(op, e) {
  const where = `entry ${JSON.stringify(e.name)}`;
  if (e.flags & 1) throw bad(op, `${where} is encrypted`);
  if (e.method !== 0) {
    throw bad(op, `${where} is compressed (method ${e.method}); torch.save writes stored (uncompressed) entries`);
  }
  if (e.csize !== e.size) throw bad(op, `corrupt zip: ${where} is stored with ${e.csize} bytes for ${e.size}`);
}

/**
 * Reads a zip's directory: a Map name -> { name, size, start, crc } in
 * directory order, every entry checked to lie inside the bytes. read(name)
 * then gives an entry's bytes (a view) after checking its CRC-32.
 */
export function readZip(u8, op) {
  const r = new Reader(u8, op);
  const end = u8.length >= END_SIZE ? findEnd(r) : -1;
  if (end < 0) throw bad(op, 'not a zip archive, or a truncated one (no end of central directory record)');
  if (r.u16(end + 4) !== 0 || r.u16(end + 6) !== 0) throw bad(op, 'multi-disk zip archives are not supported');
  let count = r.u16(end + 10);
  let size = r.u32(end + 12);
  let offset = r.u32(end + 16);
  const z64 = readEnd64(r, end);
  if (z64) ({ count, size, offset } = z64);
  else if (count === U16_MAX || size === U32_MAX || offset === U32_MAX) throw bad(op, 'corrupt zip: ZIP64 sizes without a ZIP64 end record');
  const limit = offset + size;
  if (limit > u8.length) throw bad(op, `corrupt zip: the central directory [${offset}, ${limit}) runs past the end of the ${u8.length} bytes`);
  if (count > size / CENTRAL_SIZE) throw bad(op, `corrupt zip: ${count} entries cannot fit in a ${size}-byte central directory`);
  const entries = new Map();
  let at = offset;
  for (let k = 0; k < count; k++) {
    const [e, next] = centralEntry(r, at, limit);
    if (e.disk !== 0) throw bad(op, 'multi-disk zip archives are not supported');
    if (entries.has(e.name)) throw bad(op, `corrupt zip: the entry ${JSON.stringify(e.name)} is there twice`);
    checkEntry(r, e);
    entries.set(e.name, e);
    at = next;
  }
  const read = (name) => {
    const e = entries.get(name);
    checkStored(op, e);
    const bytes = u8.subarray(e.start, e.start + e.size);
    const crc = crc32(bytes);
    if (crc !== e.crc) {
      throw bad(op, `corrupt zip: entry ${JSON.stringify(name)} has CRC-32 ${hex(crc)}, its directory says ${hex(e.crc)}`);
    }
    return bytes;
  };
  return { entries, read };
}

const hex = (v) => `0x${v.toString(16).padStart(8, '0')}`;

// ---- writing ----

function zip64Extra(fields) {
  const out = new Uint8Array(4 + 8 * fields.length);
  const dv = new DataView(out.buffer);
  dv.setUint16(0, ZIP64_EXTRA, true);
  dv.setUint16(2, 8 * fields.length, true);
  fields.forEach((v, i) => dv.setBigUint64(4 + 8 * i, BigInt(v), true));
  return out;
}

// The local header's extra: ZIP64 sizes when needed, then torch's 'FB'
// padding so the data starts at a multiple of 64.
function localExtra(at, nameLen, size64) {
  const base = size64 === null ? new Uint8Array(0) : zip64Extra([size64, size64]);
  const before = at + LOCAL_SIZE + nameLen + base.length;
  let pad = (ALIGN - (before % ALIGN)) % ALIGN;
  if (pad > 0 && pad < 4) pad += ALIGN;
  const out = new Uint8Array(base.length + pad);
  out.set(base);
  if (pad) {
    const dv = new DataView(out.buffer);
    dv.setUint16(base.length, PAD_EXTRA, true);
    dv.setUint16(base.length + 2, pad - 4, true);
    out.fill(0x5a, base.length + 4); // 'Z', as torch pads
  }
  return out;
}

/**
 * Writes [{ name, data: Uint8Array | (out, at) => void, size }] as a zip of
 * stored entries, each entry's data aligned to 64 bytes (as torch's writer
 * does); deterministic: no dates, fixed versions. zip64: true forces the
 * ZIP64 records (they are written anyway when a size or offset needs them).
 */
export function writeZip(records, { zip64 = false } = {}) {
  const enc = new TextEncoder();
  const layout = [];
  let at = 0;
  for (const rec of records) {
    const name = enc.encode(rec.name);
    const size = rec.data ? rec.data.length : rec.size;
    const local64 = zip64 || size >= U32_MAX;
    const extra = localExtra(at, name.length, local64 ? size : null);
    layout.push({ rec, name, size, offset: at, extra, local64, start: at + LOCAL_SIZE + name.length + extra.length });
    at += LOCAL_SIZE + name.length + extra.length + size;
  }
  const central = layout.map((l) => {
    const big = { size: zip64 || l.size >= U32_MAX, offset: zip64 || l.offset >= U32_MAX };
    const fields = [...(big.size ? [l.size, l.size] : []), ...(big.offset ? [l.offset] : [])];
    return { l, big, extra64: fields.length ? zip64Extra(fields) : null };
  });
  const dirStart = at;
  const dirSize = central.reduce((n, c) => n + CENTRAL_SIZE + c.l.name.length + (c.extra64 ? c.extra64.length : 0), 0);
  const need64 = zip64 || records.length >= U16_MAX || dirStart + dirSize >= U32_MAX;
  const total = dirStart + dirSize + (need64 ? 56 + 20 : 0) + END_SIZE;
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  for (const l of layout) {
    l.crc = writeData(out, l);
    writeLocal(dv, out, l);
  }
  let p = dirStart;
  for (const c of central) p = writeCentral(dv, out, p, c);
  if (need64) p = writeEnd64(dv, p, records.length, dirSize, dirStart);
  writeEnd(dv, p, need64, records.length, dirSize, dirStart);
  return out;
}

function writeData(out, l) {
  if (l.rec.data) out.set(l.rec.data, l.start);
  else l.rec.fill(out, l.start);
  return crc32(out.subarray(l.start, l.start + l.size));
}

const u32or = (v, big) => (big ? U32_MAX : v);

function writeLocal(dv, out, l) {
  const o = l.offset;
  dv.setUint32(o, SIG_LOCAL, true);
  dv.setUint16(o + 4, l.local64 ? 45 : 20, true);
  dv.setUint32(o + 14, l.crc, true);
  dv.setUint32(o + 18, u32or(l.size, l.local64), true);
  dv.setUint32(o + 22, u32or(l.size, l.local64), true);
  dv.setUint16(o + 26, l.name.length, true);
  dv.setUint16(o + 28, l.extra.length, true);
  out.set(l.name, o + LOCAL_SIZE);
  out.set(l.extra, o + LOCAL_SIZE + l.name.length);
}

function writeCentral(dv, out, p, { l, big, extra64 }) {
  const any64 = extra64 !== null;
  dv.setUint32(p, SIG_CENTRAL, true);
  dv.setUint16(p + 4, any64 ? 45 : 20, true);
  dv.setUint16(p + 6, any64 ? 45 : 20, true);
  dv.setUint32(p + 16, l.crc, true);
  dv.setUint32(p + 20, u32or(l.size, big.size), true);
  dv.setUint32(p + 24, u32or(l.size, big.size), true);
  dv.setUint16(p + 28, l.name.length, true);
  dv.setUint16(p + 30, any64 ? extra64.length : 0, true);
  dv.setUint32(p + 42, u32or(l.offset, big.offset), true);
  out.set(l.name, p + CENTRAL_SIZE);
  if (any64) out.set(extra64, p + CENTRAL_SIZE + l.name.length);
  return p + CENTRAL_SIZE + l.name.length + (any64 ? extra64.length : 0);
}

function writeEnd64(dv, p, count, dirSize, dirStart) {
  dv.setUint32(p, SIG_END64, true);
  dv.setBigUint64(p + 4, 44n, true);
  dv.setUint16(p + 12, 45, true);
  dv.setUint16(p + 14, 45, true);
  dv.setBigUint64(p + 24, BigInt(count), true);
  dv.setBigUint64(p + 32, BigInt(count), true);
  dv.setBigUint64(p + 40, BigInt(dirSize), true);
  dv.setBigUint64(p + 48, BigInt(dirStart), true);
  dv.setUint32(p + 56, SIG_LOCATOR64, true);
  dv.setBigUint64(p + 64, BigInt(p), true);
  dv.setUint32(p + 72, 1, true);
  return p + 76;
}

function writeEnd(dv, p, z64, count, dirSize, dirStart) {
  dv.setUint32(p, SIG_END, true);
  dv.setUint16(p + 8, z64 ? U16_MAX : count, true);
  dv.setUint16(p + 10, z64 ? U16_MAX : count, true);
  dv.setUint32(p + 12, z64 ? U32_MAX : dirSize, true);
  dv.setUint32(p + 16, z64 ? U32_MAX : dirStart, true);
}

// The same entries written again (tests and the fuzzer: { zip64: true }).
export function repackZip(u8, opts) {
  const { entries, read } = readZip(u8, 'repackZip');
  return writeZip([...entries.keys()].map((name) => ({ name, data: read(name) })), opts);
}
