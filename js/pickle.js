// Python pickles as torch.save writes them (protocol 2; the binary opcodes of
// protocols 3-5 are read too), read by a stack machine that runs no code:
// every GLOBAL is handed to the caller's findGlobal, which returns a value or
// refuses, and REDUCE / NEWOBJ / BUILD / BINPERSID go to the caller's hooks,
// which accept only what they know (js/checkpoint.js: torch.load(weights_only=True)'s
// rule). Every read is bounds-checked; a malformed pickle is a WeftError.
//
// Values: None -> null, bool, int -> number (a BigInt past 2^53), float ->
// number, str -> string, bytes -> Uint8Array, list and tuple -> Array,
// dict -> an object without prototype (keys: str, or int written in decimal).
// The writer emits the same opcodes, protocol 2, as Python's pickler does.
import { WeftError } from './core.js';

const OP = {
  MARK: 0x28, STOP: 0x2e, POP: 0x30, POP_MARK: 0x31, DUP: 0x32, BININT: 0x4a, BININT1: 0x4b, BININT2: 0x4d,
  NONE: 0x4e, BINPERSID: 0x51, REDUCE: 0x52, BINSTRING: 0x54, SHORT_BINSTRING: 0x55, BINUNICODE: 0x58,
  APPEND: 0x61, BUILD: 0x62, GLOBAL: 0x63, DICT: 0x64, APPENDS: 0x65, BINGET: 0x68, LONG_BINGET: 0x6a,
  LIST: 0x6c, BINPUT: 0x71, LONG_BINPUT: 0x72, SETITEM: 0x73, TUPLE: 0x74, SETITEMS: 0x75, EMPTY_DICT: 0x7d,
  EMPTY_LIST: 0x5d, EMPTY_TUPLE: 0x29, BINFLOAT: 0x47, PROTO: 0x80, NEWOBJ: 0x81, TUPLE1: 0x85, TUPLE2: 0x86,
  TUPLE3: 0x87, NEWTRUE: 0x88, NEWFALSE: 0x89, LONG1: 0x8a, LONG4: 0x8b, BINBYTES: 0x42, SHORT_BINBYTES: 0x43,
  SHORT_BINUNICODE: 0x8c, BINUNICODE8: 0x8d, BINBYTES8: 0x8e, STACK_GLOBAL: 0x93, MEMOIZE: 0x94, FRAME: 0x95,
};
// opcodes that exist but are not read, named in the refusal
const REFUSED = {
  0x46: 'FLOAT', 0x49: 'INT', 0x4c: 'LONG', 0x50: 'PERSID', 0x53: 'STRING', 0x56: 'UNICODE', 0x67: 'GET',
  0x69: 'INST', 0x6f: 'OBJ', 0x70: 'PUT', 0x82: 'EXT1', 0x83: 'EXT2', 0x84: 'EXT4', 0x8f: 'EMPTY_SET',
  0x90: 'ADDITEMS', 0x91: 'FROZENSET', 0x92: 'NEWOBJ_EX', 0x96: 'BYTEARRAY8', 0x97: 'NEXT_BUFFER',
  0x98: 'READONLY_BUFFER',
};
// An int of more bytes than this is refused (a LONG4 may claim 2 GB).
const MAX_LONG_BYTES = 64;
// Containers nested deeper than this are refused, reading and writing.
export const MAX_DEPTH = 256;
const MAX_LINE = 1024;
// Python's pickler puts at most ~2000 values on a frame of the stack (it
// batches 1000 items per APPENDS / SETITEMS) and memoizes each object once;
// far larger counts are a hostile file, refused before they exhaust memory.
const MAX_STACK = 1 << 20;
const MAX_MARKS = 2 * MAX_DEPTH;
const MAX_MEMO = 1 << 22;
const BATCH = 1000; // items per APPENDS / SETITEMS, as Python's pickler

const bad = (op, msg) => new WeftError('InvalidArgument', `${op}: ${msg}`);
const utf8 = new TextDecoder('utf-8', { fatal: true });
const latin1 = new TextDecoder('latin1');

// Arrays that are Python tuples while reading (APPEND takes lists only).
const tuples = new WeakSet();
const tuple = (items) => {
  tuples.add(items);
  return items;
};
export const isTuple = (v) => Array.isArray(v) && tuples.has(v);
export const isDict = (v) => v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === null && !Array.isArray(v);

function intValue(big) {
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

function decodeLong(bytes) {
  if (bytes.length === 0) return 0;
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]);
  if (bytes[bytes.length - 1] & 0x80) v -= 1n << BigInt(8 * bytes.length);
  return intValue(v);
}

class Input {
  constructor(u8, op) {
    this.u8 = u8;
    this.dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
    this.pos = 0;
    this.op = op;
  }

  take(n, what) {
    if (n > this.u8.length - this.pos) {
      throw bad(this.op, `truncated pickle: ${what} needs ${n} bytes at byte ${this.pos}, ${this.u8.length - this.pos} are left`);
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }

  byte(what) { return this.u8[this.take(1, what)]; }
  u16(what) { return this.dv.getUint16(this.take(2, what), true); }
  i32(what) { return this.dv.getInt32(this.take(4, what), true); }
  u32(what) { return this.dv.getUint32(this.take(4, what), true); }
  f64(what) { return this.dv.getFloat64(this.take(8, what), false); }
  u64(what) {
    const v = this.dv.getBigUint64(this.take(8, what), true);
    return v > BigInt(this.u8.length) ? this.u8.length + 1 : Number(v);
  }

  bytes(n, what) {
    const at = this.take(n, what);
    return this.u8.subarray(at, at + n);
  }

  line(what) {
    const end = this.u8.indexOf(0x0a, this.pos);
    if (end < 0 || end - this.pos > MAX_LINE) throw bad(this.op, `malformed pickle: ${what} at byte ${this.pos} has no end of line`);
    const s = latin1.decode(this.u8.subarray(this.pos, end));
    this.pos = end + 1;
    return s;
  }

  text(n, what) {
    const b = this.bytes(n, what);
    try {
      return utf8.decode(b);
    } catch {
      throw bad(this.op, `malformed pickle: ${what} at byte ${this.pos - n} is not UTF-8`);
    }
  }
}

/**
 * Runs the pickle in u8 and returns its value. hooks: { op,
 * findGlobal(module, name), persistentLoad(pid), reduce(fn, args),
 * newObj(cls, args), build(obj, state) }; each refuses what it does not
 * know by throwing.
 */
export function unpickle(u8, hooks) {
  const { op } = hooks;
  const inp = new Input(u8, op);
  const memo = new Map();
  const marks = [];
  let stack = [];
  const pop = (what) => {
    if (!stack.length) throw bad(op, `malformed pickle: ${what} at byte ${inp.pos - 1} finds the stack empty`);
    return stack.pop();
  };
  const top = (what) => {
    if (!stack.length) throw bad(op, `malformed pickle: ${what} at byte ${inp.pos - 1} finds the stack empty`);
    return stack[stack.length - 1];
  };
  const popMark = (what) => {
    if (!marks.length) throw bad(op, `malformed pickle: ${what} at byte ${inp.pos - 1} has no MARK`);
    const items = stack;
    stack = marks.pop();
    return items;
  };
  const get = (i) => {
    if (!memo.has(i)) throw bad(op, `malformed pickle: memo entry ${i} is read before it is written`);
    return memo.get(i);
  };
  const put = (i) => {
    if (memo.size >= MAX_MEMO && !memo.has(i)) throw bad(op, `more than ${MAX_MEMO} memo entries`);
    memo.set(i, top('PUT'));
  };
  const list = (what) => {
    const l = top(what);
    if (!Array.isArray(l) || tuples.has(l)) throw bad(op, `malformed pickle: ${what} to ${typeOf(l)}, not a list`);
    return l;
  };
  // [callable, args] of REDUCE / NEWOBJ: args must be a tuple
  const call = (what) => {
    const args = pop(what);
    const fn = pop(what);
    if (!isTuple(args)) throw bad(op, `malformed pickle: ${what} with ${typeOf(args)} for arguments`);
    return [fn, args];
  };
  const setItems = (items, what) => {
    if (items.length % 2) throw bad(op, `malformed pickle: ${what} with an odd number of items`);
    const d = top(what);
    if (!isDict(d)) throw bad(op, `malformed pickle: ${what} to ${typeOf(d)}, not a dict`);
    for (let i = 0; i < items.length; i += 2) d[dictKey(op, items[i])] = items[i + 1];
  };

  for (;;) {
    if (stack.length > MAX_STACK) throw bad(op, `more than ${MAX_STACK} values on the pickle's stack`);
    const code = inp.byte('an opcode');
    switch (code) {
      case OP.PROTO: {
        const v = inp.byte('PROTO');
        if (v > 5) throw bad(op, `unsupported pickle protocol ${v}`);
        break;
      }
      case OP.FRAME: inp.u64('FRAME'); break;
      case OP.STOP: {
        const v = pop('STOP');
        if (stack.length || marks.length) throw bad(op, 'malformed pickle: values left on the stack at STOP');
        return v;
      }
      // (popMark replaces `stack`: read it into a local before pushing)
      case OP.MARK:
        if (marks.length >= MAX_MARKS) throw bad(op, `lists, tuples and dicts nested more than ${MAX_DEPTH} deep`);
        marks.push(stack);
        stack = [];
        break;
      case OP.POP: if (stack.length) stack.pop(); else popMark('POP'); break;
      case OP.POP_MARK: popMark('POP_MARK'); break;
      case OP.DUP: stack.push(top('DUP')); break;
      case OP.NONE: stack.push(null); break;
      case OP.NEWTRUE: stack.push(true); break;
      case OP.NEWFALSE: stack.push(false); break;
      case OP.BININT: stack.push(inp.i32('BININT')); break;
      case OP.BININT1: stack.push(inp.byte('BININT1')); break;
      case OP.BININT2: stack.push(inp.u16('BININT2')); break;
      case OP.LONG1: stack.push(decodeLong(inp.bytes(inp.byte('LONG1'), 'LONG1'))); break;
      case OP.LONG4: {
        const n = inp.i32('LONG4');
        if (n < 0 || n > MAX_LONG_BYTES) throw bad(op, `an int of ${n} bytes (at most ${MAX_LONG_BYTES})`);
        stack.push(decodeLong(inp.bytes(n, 'LONG4')));
        break;
      }
      case OP.BINFLOAT: stack.push(inp.f64('BINFLOAT')); break;
      case OP.BINUNICODE: stack.push(inp.text(inp.u32('BINUNICODE'), 'a string')); break;
      case OP.SHORT_BINUNICODE: stack.push(inp.text(inp.byte('SHORT_BINUNICODE'), 'a string')); break;
      case OP.BINUNICODE8: stack.push(inp.text(inp.u64('BINUNICODE8'), 'a string')); break;
      // Python 2's str, read as torch does for old files: text, latin-1
      case OP.SHORT_BINSTRING: stack.push(latin1.decode(inp.bytes(inp.byte('SHORT_BINSTRING'), 'a string'))); break;
      case OP.BINSTRING: {
        const n = inp.i32('BINSTRING');
        if (n < 0) throw bad(op, 'malformed pickle: a negative string length');
        stack.push(latin1.decode(inp.bytes(n, 'a string')));
        break;
      }
      case OP.SHORT_BINBYTES: stack.push(inp.bytes(inp.byte('SHORT_BINBYTES'), 'bytes').slice()); break;
      case OP.BINBYTES: stack.push(inp.bytes(inp.u32('BINBYTES'), 'bytes').slice()); break;
      case OP.BINBYTES8: stack.push(inp.bytes(inp.u64('BINBYTES8'), 'bytes').slice()); break;
      case OP.EMPTY_TUPLE: stack.push(tuple([])); break;
      case OP.TUPLE: { const items = popMark('TUPLE'); stack.push(tuple(items)); break; }
      case OP.TUPLE1: stack.push(tuple([pop('TUPLE1')])); break;
      case OP.TUPLE2: { const b = pop('TUPLE2'); stack.push(tuple([pop('TUPLE2'), b])); break; }
      case OP.TUPLE3: {
        const c = pop('TUPLE3');
        const b = pop('TUPLE3');
        stack.push(tuple([pop('TUPLE3'), b, c]));
        break;
      }
      case OP.EMPTY_LIST: stack.push([]); break;
      case OP.LIST: { const items = popMark('LIST'); stack.push(items); break; }
      case OP.APPEND: { const v = pop('APPEND'); list('APPEND').push(v); break; }
      case OP.APPENDS: { const items = popMark('APPENDS'); const l = list('APPENDS'); for (const v of items) l.push(v); break; }
      case OP.EMPTY_DICT: stack.push(Object.create(null)); break;
      case OP.DICT: { const items = popMark('DICT'); stack.push(Object.create(null)); setItems(items, 'DICT'); break; }
      case OP.SETITEM: { const v = pop('SETITEM'); const k = pop('SETITEM'); setItems([k, v], 'SETITEM'); break; }
      case OP.SETITEMS: setItems(popMark('SETITEMS'), 'SETITEMS'); break;
      case OP.BINPUT: put(inp.byte('BINPUT')); break;
      case OP.LONG_BINPUT: put(inp.u32('LONG_BINPUT')); break;
      case OP.MEMOIZE: put(memo.size); break;
      case OP.BINGET: stack.push(get(inp.byte('BINGET'))); break;
      case OP.LONG_BINGET: stack.push(get(inp.u32('LONG_BINGET'))); break;
      case OP.GLOBAL: {
        const module = inp.line('a GLOBAL module');
        stack.push(hooks.findGlobal(module, inp.line('a GLOBAL name')));
        break;
      }
      case OP.STACK_GLOBAL: {
        const name = pop('STACK_GLOBAL');
        const module = pop('STACK_GLOBAL');
        if (typeof name !== 'string' || typeof module !== 'string') throw bad(op, 'malformed pickle: STACK_GLOBAL of non-strings');
        stack.push(hooks.findGlobal(module, name));
        break;
      }
      case OP.BINPERSID: stack.push(hooks.persistentLoad(pop('BINPERSID'))); break;
      case OP.REDUCE: stack.push(hooks.reduce(...call('REDUCE'))); break;
      case OP.NEWOBJ: stack.push(hooks.newObj(...call('NEWOBJ'))); break;
      case OP.BUILD: { const state = pop('BUILD'); hooks.build(top('BUILD'), state); break; }
      default: {
        const name = REFUSED[code];
        if (name) throw bad(op, `unsupported pickle opcode ${name} (0x${code.toString(16)}) at byte ${inp.pos - 1}`);
        throw bad(op, `malformed pickle: unknown opcode 0x${code.toString(16)} at byte ${inp.pos - 1}`);
      }
    }
  }
}

function dictKey(op, k) {
  if (typeof k === 'string') return k;
  if (typeof k === 'number' && Number.isInteger(k)) return String(k);
  if (typeof k === 'bigint') return String(k);
  throw bad(op, `a dict key is ${typeOf(k)}; weft reads dicts keyed by strings and integers`);
}

export function typeOf(v) {
  if (v === null) return 'None';
  if (isTuple(v)) return 'a tuple';
  if (Array.isArray(v)) return 'a list';
  if (v instanceof Uint8Array) return 'bytes';
  if (isDict(v)) return 'a dict';
  if (typeof v === 'object' || typeof v === 'function') return v.pickleName ?? (v.constructor?.name ? `a ${v.constructor.name}` : 'an object');
  const text = String(v);
  return `${typeof v} ${typeof v === 'string' ? JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text) : text}`;
}

// A number as itself, anything else by its type (error messages about ints).
export const showInt = (v) => (typeof v === 'number' || typeof v === 'bigint' ? String(v) : typeOf(v));

// A dict's items, with the attributes BUILD gave it (non-enumerable).
const itemsOf = (v) => (Array.isArray(v) ? v : Reflect.ownKeys(v).map((k) => v[k]));
const isContainer = (v) => Array.isArray(v) || isDict(v);

/**
 * Checks that a loaded value nests no deeper than MAX_DEPTH and contains
 * no container that contains itself (both possible through the memo), in
 * time linear in the containers and their items; calls onLeaf(v) for each
 * object in it that is no container (tensors, bytes).
 */
export function checkGraph(root, op, onLeaf) {
  if (!isContainer(root)) {
    if (root !== null && typeof root === 'object') onLeaf(root);
    return;
  }
  const height = new Map(); // finished container -> its height
  const open = new Set([root]);
  const tooDeep = () => bad(op, `lists, tuples and dicts nested more than ${MAX_DEPTH} deep`);
  const work = [[root, itemsOf(root), 0]];
  while (work.length) {
    const frame = work[work.length - 1];
    const [node, kids, i] = frame;
    if (i < kids.length) {
      frame[2]++;
      const c = kids[i];
      if (!isContainer(c)) {
        if (c !== null && typeof c === 'object') onLeaf(c);
        continue;
      }
      if (height.has(c)) continue;
      if (open.has(c)) throw bad(op, 'the pickle makes a list or dict that contains itself');
      if (work.length >= MAX_DEPTH) throw tooDeep();
      open.add(c);
      work.push([c, itemsOf(c), 0]);
      continue;
    }
    work.pop();
    open.delete(node);
    let h = 0;
    for (const c of kids) if (isContainer(c)) h = Math.max(h, height.get(c) + 1);
    if (h >= MAX_DEPTH) throw tooDeep();
    height.set(node, h);
  }
}

// ---- writing ----

export class Pickler {
  constructor() {
    this.buf = new Uint8Array(1024);
    this.len = 0;
    this.memo = new Map();
    this.enc = new TextEncoder();
  }

  grow(n) {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }

  byte(...bs) {
    this.grow(bs.length);
    for (const b of bs) this.buf[this.len++] = b;
  }

  raw(bytes) {
    this.grow(bytes.length);
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }

  u32(v) { this.byte(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24); }

  proto() { this.byte(OP.PROTO, 2); }
  stop() { this.byte(OP.STOP); return this.buf.slice(0, this.len); }
  none() { this.byte(OP.NONE); }
  bool(v) { this.byte(v ? OP.NEWTRUE : OP.NEWFALSE); }
  mark() { this.byte(OP.MARK); }

  int(v) {
    if (typeof v === 'number' && v >= 0 && v < 256) return this.byte(OP.BININT1, v);
    if (typeof v === 'number' && v >= 0 && v < 65536) return this.byte(OP.BININT2, v & 0xff, v >> 8);
    if (typeof v === 'number' && v >= -(2 ** 31) && v < 2 ** 31) {
      this.byte(OP.BININT);
      return this.u32(v >>> 0);
    }
    // LONG1: the fewest two's-complement little-endian bytes
    let big = BigInt(v);
    const bytes = [];
    for (;;) {
      bytes.push(Number(big & 0xffn));
      big >>= 8n;
      const sign = bytes[bytes.length - 1] & 0x80;
      if ((big === 0n && !sign) || (big === -1n && sign)) break;
    }
    if (bytes.length > 255) throw new WeftError('InvalidArgument', `save: the int ${v} is too large`);
    return this.byte(OP.LONG1, bytes.length, ...bytes);
  }

  float(v) {
    this.grow(9);
    this.buf[this.len] = OP.BINFLOAT;
    new DataView(this.buf.buffer).setFloat64(this.len + 1, v, false);
    this.len += 9;
  }

  str(s) {
    const b = this.enc.encode(s);
    this.byte(OP.BINUNICODE);
    this.u32(b.length);
    this.raw(b);
  }

  bytes(b) {
    // BINBYTES (protocol 3): Python reads it in a protocol-2 stream too
    if (b.length < 256) this.byte(OP.SHORT_BINBYTES, b.length);
    else { this.byte(OP.BINBYTES); this.u32(b.length); }
    this.raw(b);
  }

  // A value already written once is fetched from the memo; else written by
  // write() and memoized under the next index.
  memoized(key, write) {
    if (this.memo.has(key)) {
      const i = this.memo.get(key);
      if (i < 256) this.byte(OP.BINGET, i);
      else { this.byte(OP.LONG_BINGET); this.u32(i); }
      return;
    }
    write();
    const i = this.memo.size;
    this.memo.set(key, i);
    if (i < 256) this.byte(OP.BINPUT, i);
    else { this.byte(OP.LONG_BINPUT); this.u32(i); }
  }

  global(module, name) {
    this.memoized(`global:${module}.${name}`, () => {
      this.byte(OP.GLOBAL);
      this.raw(this.enc.encode(`${module}\n${name}\n`));
    });
  }

  tuple(items, writeItem) {
    if (items.length === 0) return this.byte(OP.EMPTY_TUPLE);
    if (items.length > 3) this.mark();
    for (const v of items) writeItem(v);
    return this.byte(items.length > 3 ? OP.TUPLE : OP.TUPLE1 + items.length - 1);
  }

  list(items, writeItem) {
    this.byte(OP.EMPTY_LIST);
    this.batched(items, OP.APPENDS, OP.APPEND, writeItem);
  }

  // entries: [key, value] pairs
  dict(entries, writeKey, writeValue) {
    this.byte(OP.EMPTY_DICT);
    this.setItems(entries, writeKey, writeValue);
  }

  setItems(entries, writeKey, writeValue) {
    this.batched(entries, OP.SETITEMS, OP.SETITEM, ([k, v]) => { writeKey(k); writeValue(v); });
  }

  // TUPLE: the items since the last mark()
  endTuple() { this.byte(OP.TUPLE); }

  batched(items, many, one, writeItem) {
    for (let i = 0; i < items.length; i += BATCH) {
      const chunk = items.slice(i, i + BATCH);
      if (chunk.length > 1) this.mark();
      chunk.forEach(writeItem);
      this.byte(chunk.length > 1 ? many : one);
    }
  }

  reduce() { this.byte(OP.REDUCE); }
  build() { this.byte(OP.BUILD); }
  persid() { this.byte(OP.BINPERSID); }
}

