// The JS API over one instantiated wasm module (either variant, Node or
// browser). The ABI it speaks is documented at the top of src/wasm/exports.c.
import { formatTensor } from './format.js';
import { installOps, readOpRegistry, tupleMaker } from './ops.js';
import { installPool } from './pool.js';
import { installResize } from './resize.js';
import { installNorm } from './norm.js';
import { installActivations } from './activation.js';
import { installAutograd } from './autograd.js';
import { installOptim } from './optim.js';
import { installNnUtils } from './nn_utils.js';
import { installUnique } from './unique.js';
import { installIndexing } from './index_ops.js';
import { installEmbedding } from './embedding.js';
import { installEinsum } from './einsum.js';
import { installDistance } from './distance.js';
import { installNn } from './nn/index.js';
import { installCheckpoint } from './checkpoint.js';
import { installFusion } from './fusion.js';
import { installTraps, intArgOverflows, trapChecks } from './traps.js';
import { installPointwise } from './pointwise.js';
import { installWebGPU } from './webgpu.js';

export class WeftError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'WeftError';
    this.code = code;
  }
}

const MAX_DIMS = 16;
// Scratch layout (f64 indices / byte offsets), mirrored from exports.c.
const ARG_SLOTS = 4;
const ARG_SLOT_LEN = 1 + MAX_DIMS; // f64, the first slot at index 0
const SLOT_OUT = 68;
const STR_BYTES = 928;
const STR_SIZE = 256;
const INT64_MAX_AS_DOUBLE = 2 ** 63;

const CONTIGUOUS_FORMAT = 0;
const PRESERVE_FORMAT = 3;

// ---- argument checks that cannot sensibly reach C (types, NaN, fractions) ----

const ENUM_TEXT = {
  dtype: "a dtype name such as 'float32'",
  memory_format: "a memory format name such as 'channels_last'",
  device: "a device name ('cpu', 'meta' or 'webgpu')",
};

// Errors name JS types ("an array", "a string", null), never Python's.
function jsTypeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v !== 'object') return typeof v;
  const c = v.constructor?.name;
  return c && c !== 'Object' ? c : 'object';
}

function typeName(v) {
  if (typeof v === 'number' && !Number.isInteger(v)) return `the number ${v}`;
  const t = jsTypeName(v);
  if (t === 'null' || t === 'undefined') return t;
  return `${/^[aeiouAEIOU]/.test(t) ? 'an' : 'a'} ${t}`;
}

function toInt(op, name, v) {
  if (typeof v !== 'bigint' && (typeof v !== 'number' || !Number.isInteger(v))) {
    throw new WeftError('TypeError', `${op}(): argument '${name}' must be an integer, not ${typeName(v)}`);
  }
  if (intArgOverflows(v)) throw new WeftError('OverflowError', 'Overflow when unpacking long');
  return Number(v);
}

function isSequence(v) {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

function toIntList(op, name, list) {
  if (!isSequence(list)) {
    throw new WeftError('TypeError',
      `${op}(): argument '${name}' must be an array of integers, not ${typeName(list)}`);
  }
  if (list.length > MAX_DIMS) {
    throw new WeftError('InvalidArgument',
      `${op}: number of dimensions ${list.length} must be in [0, ${MAX_DIMS}]`);
  }
  // a plain loop: Array.from with a callback costs more than a small op's shape
  const out = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (intArgOverflows(v)) throw new WeftError('OverflowError', 'Overflow when unpacking long');
    if (typeof v === 'number' && Number.isInteger(v)) out[i] = v;
    else if (typeof v === 'bigint') out[i] = Number(v);
    else {
      throw new WeftError('TypeError', `${op}(): argument '${name}' must be an array of integers, ` +
        `but found an element of type ${jsTypeName(v)} at pos ${i}`);
    }
  }
  return out;
}

// view(2, 3) and view([2, 3]) are the same call.
function variadic(args) {
  return args.length === 1 && isSequence(args[0]) ? args[0] : args;
}

const shapeArg = (op, name, args) => toIntList(op, name, variadic(args));

function isOptions(v) {
  return v !== null && typeof v === 'object' && !isSequence(v);
}

// Splits trailing {options} off a variadic argument list.
function splitOptions(args) {
  if (args.length > 0 && isOptions(args[args.length - 1])) {
    return [args.slice(0, -1), args[args.length - 1]];
  }
  return [args, {}];
}

// Levenshtein distance, for short option names.
function editDistance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

// snake_case (PyTorch's spelling), a case slip or a typo -> the option weft spells.
export function didYouMean(key, allowed) {
  const norm = (k) => k.replace(/_/g, '').toLowerCase();
  const hit = allowed.find((a) => norm(a) === norm(key)) ??
    allowed.find((a) => editDistance(norm(a), norm(key)) <= (a.length >= 5 ? 2 : 1));
  return hit ? ` (did you mean ${hit}?)` : ` (options: ${allowed.join(', ') || 'none'})`;
}

function checkKeys(op, opts, allowed) {
  if (!isOptions(opts)) {
    const eg = allowed.length ? ` such as { ${allowed[0]}: ... }` : '';
    throw new WeftError('TypeError', `${op}(): options must be an object${eg}, not ${typeName(opts)}`);
  }
  for (const k of Object.keys(opts)) {
    if (!allowed.includes(k)) {
      throw new WeftError('TypeError', `${op}() got an unexpected option '${k}'${didYouMean(k, allowed)}`);
    }
  }
}

// ---- float16 / bfloat16 bit conversions ----

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function floatToHalf(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}

// toArray(): the arrays and values a nested result of this shape holds (a
// zero-size tensor still makes its outer arrays: [1e9, 0] is a billion []).
const TO_ARRAY_MAX = 2 ** 27 - 3;
// How one element read from a TypedArray becomes a JS value: bools as
// booleans, int64 as numbers only while exact (else a WeftError naming
// { bigint: true }), or as BigInts when asked.
const INT53 = 2n ** 53n;
function valueReader(op, dtype, bigint) {
  if (dtype === 'bool') return (v) => v !== 0;
  if (dtype !== 'int64') return (v) => v; // exact as numbers; { bigint } concerns int64 only
  if (bigint) return (v) => v;
  return (v) => {
    if (v > INT53 || v < -INT53) {
      throw new WeftError('InvalidArgument', `${op}: the int64 value ${v} is beyond ±2**53 and would lose ` +
        `precision as a JS number; call ${op}({ bigint: true }) to get BigInts`);
    }
    return Number(v);
  };
}

function toArrayValues(sizes) {
  let total = 0;
  let count = 1;
  for (const n of sizes) {
    count *= n;
    total += count;
    if (count === 0 || total > TO_ARRAY_MAX) break;
  }
  return total;
}

function floatToBfloat(v) {
  f32[0] = v;
  const x = u32[0];
  if ((x & 0x7fffffff) > 0x7f800000) return 0x7fc0; // every NaN, as c10::BFloat16 (src/base/half.h)
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

// ---- tensor(data): shape and dtype inference ----

function inferShape(data) {
  const shape = [];
  let d = data;
  while (isSequence(d)) {
    shape.push(d.length);
    if (d.length === 0) break;
    d = d[0];
  }
  return shape;
}

// Flattens nested data of the given shape, checking every length; returns the
// leaves and the widest kind seen (0 bool, 1 bigint, 2 number or empty).
function flattenData(data, shape) {
  const out = [];
  let kind = 0;
  const walk = (d, dim) => {
    if (dim === shape.length) {
      if (isSequence(d)) {
        throw new WeftError('InvalidArgument', `tensor: expected a number at dim ${dim} (got a sequence)`);
      }
      if (typeof d === 'boolean') {
        out.push(d);
      } else if (typeof d === 'bigint') {
        kind = Math.max(kind, 1);
        out.push(d);
      } else if (typeof d === 'number') {
        // JS cannot tell 1.0 from 1: every number is floating (the default dtype)
        kind = 2;
        out.push(d);
      } else {
        throw new WeftError('TypeError', `tensor: expected numbers, bigints or booleans, got ${typeName(d)}`);
      }
      return;
    }
    if (!isSequence(d)) {
      throw new WeftError('InvalidArgument',
        `tensor: expected sequence of length ${shape[dim]} at dim ${dim} (got ${typeName(d)})`);
    }
    if (d.length !== shape[dim]) {
      throw new WeftError('InvalidArgument',
        `tensor: expected sequence of length ${shape[dim]} at dim ${dim} (got ${d.length})`);
    }
    if (ArrayBuffer.isView(d) && dim === shape.length - 1) {
      kind = Math.max(kind, typedArrayDtype(d).startsWith('float') ? 2 : 1);
      for (const v of d) out.push(v);
      return;
    }
    for (let i = 0; i < d.length; i++) walk(d[i], dim + 1);
  };
  walk(data, 0);
  if (shape.length > 0 && shape[shape.length - 1] === 0) kind = 2;
  return { values: out, kind };
}

// The dtype a TypedArray gives when none is asked for. Unsigned types wider
// than a byte go to the next signed type that holds every value.
function typedArrayDtype(a) {
  if (typeof Float16Array === 'function' && a instanceof Float16Array) return 'float16';
  if (a instanceof Float32Array) return 'float32';
  if (a instanceof Float64Array) return 'float64';
  if (a instanceof Int32Array) return 'int32';
  if (a instanceof Int16Array) return 'int16';
  if (a instanceof Int8Array) return 'int8';
  if (a instanceof Uint8Array || a instanceof Uint8ClampedArray) return 'uint8';
  if (a instanceof Uint16Array) return 'int32';
  if (a instanceof Uint32Array || a instanceof BigInt64Array || a instanceof BigUint64Array) return 'int64';
  throw new WeftError('TypeError', `tensor: unsupported TypedArray ${a.constructor.name}`);
}

function toNumber(v) {
  return typeof v === 'boolean' ? (v ? 1 : 0) : Number(v);
}

// JS numbers to integer dtypes by the rule of the C cast kernels
// (src/kernels/cast_ref.c), so tensor(values, { dtype }) and .to(dtype)
// agree: truncate toward zero, saturate at int64's range (int32: at its own),
// NaN -> 0; uint8, int8 and int16 then wrap (the TypedArray store does).
const TWO63 = 2 ** 63;
function toBigInt(v) {
  if (typeof v === 'bigint') return BigInt.asIntN(64, v);
  const n = toNumber(v);
  if (n !== n) return 0n;
  if (n >= TWO63) return 2n ** 63n - 1n;
  if (n <= -TWO63) return -(2n ** 63n);
  return BigInt(Math.trunc(n));
}

function toInt32Sat(n) {
  if (n !== n) return 0;
  if (n >= 2147483647) return 2147483647;
  if (n <= -2147483648) return -2147483648;
  return Math.trunc(n);
}
function toNarrowInt(n) { // before the wrapping store
  if (n !== n) return 0;
  if (n >= TWO63) return -1; // int64's max wraps to all ones
  if (n <= -TWO63) return 0; // and its min to zero
  return Math.trunc(n);
}

// ---- memory: tidy scopes and the garbage-collection safety net ----

function isThenable(v) {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';
}

// Every tensor reachable from a tidy() result: the value itself, arrays,
// Maps, Sets and plain objects, recursively.
function collectTensors(v, isTensor, out = new Set(), seen = new Set()) {
  if (v === null || typeof v !== 'object' || seen.has(v)) return out;
  seen.add(v);
  if (isTensor(v)) { out.add(v); return out; }
  if (ArrayBuffer.isView(v)) return out;
  const items = Array.isArray(v) || v instanceof Set ? v : v instanceof Map ? [...v.keys(), ...v.values()]
    : Object.values(v);
  for (const x of items) collectTensors(x, isTensor, out, seen);
  return out;
}

// Tidy scopes, keep(), and a FinalizationRegistry that gives a forgotten
// tensor's handle back when its JS object is collected. dispose() unregisters
// first, so a handle is released exactly once.
const REGISTERED = Symbol('weft.registered');
// The step set holding a tensor made outside every tidy scope (js/nn/memory.js)
// and the WeakRef it holds it by, and why a tensor was disposed for the user
// (said when it is used again).
const STEP_SET = Symbol('weft.stepSet');
const STEP_REF = Symbol('weft.stepRef');
const RELEASED = Symbol('weft.released');

const isTensorLike = (v) => typeof v.dispose === 'function' && typeof v.handle === 'function' && 'isDisposed' in v;

function createMemoryTracker(M) {
  const scopes = [];
  // Where tensors made outside every tidy scope go: the current training
  // step's set (js/nn/memory.js), or null (then only dispose or GC frees them).
  let stepSet = null;
  let live = 0;
  let collected = 0;
  const registry = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((ptr) => { live--; collected++; M._weft_tensor_release(ptr); })
    : null;

  // Registering with the FinalizationRegistry costs more than a small op, and
  // most tensors are disposed within the synchronous run that made them (its
  // callbacks cannot run before that run ends anyway). So new tensors wait in
  // `young` and are registered together after the current job, or when 4096
  // wait; a tensor disposed before that is never registered.
  let young = [];
  let flushQueued = false;
  const YOUNG_MAX = 4096;
  function flushYoung() {
    flushQueued = false;
    const batch = young;
    young = [];
    for (const t of batch) {
      if (t[REGISTERED] === false) {
        t[REGISTERED] = true;
        registry.register(t, t.handle(), t);
      }
    }
  }

  function adopt(t, ptr) {
    live++;
    if (registry) {
      t[REGISTERED] = false;
      young.push(t);
      if (young.length >= YOUNG_MAX) flushYoung();
      else if (!flushQueued) {
        flushQueued = true;
        queueMicrotask(flushYoung);
      }
    }
    if (scopes.length) scopes[scopes.length - 1].tensors.add(t);
    else if (stepSet) toStep(t);
    return t;
  }

  // Held weakly: a tensor dropped before its step ends is still collected
  // (a set that is never released, after the last step, pins nothing), and
  // the dead references are swept when the set doubles.
  function toStep(t) {
    const ref = new WeakRef(t);
    stepSet.add(ref);
    t[STEP_SET] = stepSet;
    t[STEP_REF] = ref;
    if (stepSet.size >= (stepSet.sweepAt ?? 1024)) {
      for (const r of stepSet) if (!r.deref()) stepSet.delete(r);
      stepSet.sweepAt = Math.max(1024, 2 * stepSet.size);
    }
  }

  function forget(t) {
    live--;
    if (t[REGISTERED]) registry.unregister(t);
    t[REGISTERED] = null; // disposed: a pending flush skips it
    if (t[STEP_SET]) t[STEP_SET].delete(t[STEP_REF]);
    for (let i = scopes.length - 1; i >= 0; i--) {
      if (scopes[i].tensors.delete(t)) break;
    }
  }

  // Removes t from every open scope and from its training step's set: it
  // survives the tidy() calls around it and the step rule. An array, Map or
  // object (a state dict) keeps every tensor in it.
  function keep(t) {
    if (t !== null && typeof t === 'object' && !isTensorLike(t)) {
      for (const x of collectTensors(t, isTensorLike)) keep(x);
      return t;
    }
    for (const s of scopes) s.tensors.delete(t);
    return unstep(t);
  }

  // Takes t out of its training step's set only (tidy scopes still own it).
  function unstep(t) {
    if (t && t[STEP_SET]) {
      t[STEP_SET].delete(t[STEP_REF]);
      t[STEP_SET] = null;
    }
    return t;
  }

  // A tensor its holder let go of (a module attribute reassigned): owned
  // again by the open tidy scope or the training step, as if made now
  function orphan(t) {
    if (t.isDisposed) return;
    if (scopes.length) scopes[scopes.length - 1].tensors.add(t);
    else if (stepSet) toStep(t);
  }

  // A wrapper given a new handle (Module.to() keeps its Parameter objects):
  // the collection safety net must release the new one, not the old.
  function rehandle(t, ptr) {
    if (t[REGISTERED]) {
      registry.unregister(t);
      registry.register(t, ptr, t);
    }
  }

  function close(scope, result, isTensor) {
    const kept = collectTensors(result, isTensor);
    const parent = scope.parent;
    for (const t of scope.tensors) {
      if (kept.has(t)) {
        if (parent && !parent.closed) parent.tensors.add(t);
        else if (!parent && stepSet) toStep(t);
      } else {
        t.dispose();
      }
    }
    scope.tensors.clear();
    scope.closed = true;
    return result;
  }

  // fn's tensors are collected while it runs synchronously; an async fn that
  // does not await before creating them is covered, and its tensors are
  // disposed when its promise settles (all of them if it rejects).
  function tidy(fn) {
    if (typeof fn !== 'function') {
      throw new WeftError('TypeError', `tidy(): argument 'fn' must be a function, not ${typeName(fn)}`);
    }
    const scope = { tensors: new Set(), parent: scopes[scopes.length - 1] ?? null, closed: false };
    const isTensor = isTensorLike;
    scopes.push(scope);
    let result;
    try {
      result = fn();
    } catch (e) {
      scopes.splice(scopes.lastIndexOf(scope), 1);
      close(scope, undefined, isTensor);
      throw e;
    }
    scopes.splice(scopes.lastIndexOf(scope), 1);
    if (isThenable(result)) {
      return Promise.resolve(result).then((r) => close(scope, r, isTensor),
        (e) => { close(scope, undefined, isTensor); throw e; });
    }
    return close(scope, result, isTensor);
  }

  const stats = () => ({ jsTensors: live, collected, tidyScopes: scopes.length });
  // js/nn/memory.js's hooks: the set new unscoped tensors join, and a note
  // said when a tensor it disposed is used again
  const setStepSet = (set) => { stepSet = set; };
  const markReleased = (t, why) => { t[RELEASED] = why; };
  const releasedNote = (t) => t[RELEASED] ?? '';
  return { adopt, forget, keep, tidy, stats, rehandle, setStepSet, stepSet: () => stepSet, unstep, orphan, markReleased,
    releasedNote };
}

// ---- the API over one module ----

export function createApi(M, info) {
  const mem = createMemoryTracker(M);
  const scratchBase = M._weft_wasm_scratch() >>> 0;
  const buffer = () => (M.wasmMemory ? M.wasmMemory.buffer : M.HEAPU8.buffer);
  // One view, remade only when memory growth detaches its buffer (making a
  // view per call dominated the cost of small ops, and even reading
  // memory.buffer per call showed). A shared memory's old buffer is never
  // detached and still maps these low addresses.
  let scratchView = null;
  const scratch = () => {
    if (!scratchView || scratchView.byteLength === 0) {
      scratchView = new Float64Array(buffer(), scratchBase, SLOT_OUT + 48);
    }
    return scratchView;
  };

  const names = (fn, n) => Array.from({ length: n }, (_, i) => M.UTF8ToString(fn(i)));
  const DTYPES = names(M._weft_dtype_name, 10);
  const DEVICES = names(M._weft_device_name, 3);
  const FORMATS = names(M._weft_memory_format_name, 4);
  // index arrays, int32 targets and integer overflow (js/traps.js)
  const traps = trapChecks(WeftError, () => api);
  const { checkLong, checkedInt } = traps;

  function fail(op) {
    const status = M._weft_last_status();
    const code = status ? M.UTF8ToString(M._weft_status_name(status)) : 'InternalError';
    let msg = M.UTF8ToString(M._weft_last_error()) || `${op}: failed without a message`;
    M._weft_clear_error();
    if (code === 'OutOfMemory') msg += liveSummary();
    throw new WeftError(code, msg);
  }

  // What is holding memory when it runs out, and the ways to give it back.
  function liveSummary() {
    try {
      const m = memory();
      const mb = (n) => (n / 2 ** 20).toFixed(1);
      return ` (${m.tensors} tensors live holding ${mb(m.bytesInUse)} MB of a ${mb(m.heapBytes)} MB wasm heap; ` +
        'free them with t.dispose() or wt.tidy(fn), see wt.memory())';
    } catch {
      return '';
    }
  }

  // An int list as the ABI passes it: its length, then its values, from index i
  // of the f64 view f.
  function putList(f, i, list) {
    f[i] = list.length;
    f.set(list, i + 1);
  }

  // The argument slots of the scratch area, for lists and Scalars of op calls;
  // the writers return the slot's address.
  const argSlots = {
    count: ARG_SLOTS,
    maxList: MAX_DIMS,
    writeList(slot, list) {
      putList(scratch(), slot * ARG_SLOT_LEN, list);
      return scratchBase + slot * ARG_SLOT_LEN * 8;
    },
    writeScalar(slot, tag, v) {
      const s = scratch();
      s[slot * ARG_SLOT_LEN] = tag;
      s[slot * ARG_SLOT_LEN + 1] = v;
      return scratchBase + slot * ARG_SLOT_LEN * 8;
    },
  };

  // The typed entry points weft_wasm_op_<cname> that the methods and factories
  // below call, looked up once; js/ops.js passes their arguments by kind.
  const registry = readOpRegistry(M, { WeftError, fail, argSlots });
  const C = Object.fromEntries(['empty', 'op_empty_strided', 'full', 'arange', 'rand', 'randn', 'empty_like',
    'contiguous', 'clone', 'op_as_strided', 'view', 'reshape', 'permute', 'expand', 'transpose', 't', 'squeeze',
    'squeeze_dim', 'unsqueeze', 'narrow', 'slice', 'select', 'flatten', 'unflatten', 'op_movedim',
  ].map((cname) => [cname, registry.entry(cname)]));

  // One cache per kind: a name is looked up on every factory call, and
  // building a 'kind:name' key string per call showed in profiles.
  const enumCaches = { dtype: new Map(), memory_format: new Map(), device: new Map() };
  function lookup(kind, fn, name, op, argName) {
    if (typeof name !== 'string') {
      throw new WeftError('TypeError', `${op}(): argument '${argName}' must be ${ENUM_TEXT[kind]}, not ${typeName(name)}`);
    }
    const cache = enumCaches[kind];
    const hit = cache.get(name);
    if (hit !== undefined) return hit;
    M.stringToUTF8(name, scratchBase + STR_BYTES, STR_SIZE);
    const v = fn();
    if (v < 0) fail(op);
    cache.set(name, v);
    return v;
  }
  // The floating dtype factories make, and JS numbers become (torch.get_default_dtype).
  const defaultDtype = () => DTYPES[M._weft_get_default_dtype()];
  const dtypeOf = (op, name, dflt) =>
    lookup('dtype', M._weft_wasm_dtype_from_name, name ?? dflt ?? defaultDtype(), op, 'dtype');

  function setDefaultDtype(name) {
    if (typeof name !== 'string') {
      throw new WeftError('TypeError', `setDefaultDtype(): expected a dtype name string ('float32' or ` +
        `'float64'), got ${typeName(name)}`);
    }
    if (M._weft_set_default_dtype(dtypeOf('setDefaultDtype', name)) !== 0) fail('setDefaultDtype');
  }
  const formatOf = (op, name, dflt) =>
    lookup('memory_format', M._weft_wasm_memory_format_from_name, name ?? dflt, op, 'memory_format');
  const deviceOf = (op, name) =>
    lookup('device', M._weft_wasm_device_from_name, name ?? 'cpu', op, 'device');

  function wrap(ptr, op) {
    if (!ptr) fail(op);
    return new Tensor(ptr);
  }

  function wrapDim(op, dim, ndim, wrapScalar = true) {
    dim = toInt(op, 'dim', dim);
    if (ndim <= 0) {
      if (!wrapScalar) {
        throw new WeftError('IndexError', `${op}: dimension specified as ${dim} but tensor has no dimensions`);
      }
      ndim = 1;
    }
    if (dim < -ndim || dim >= ndim) {
      throw new WeftError('IndexError', `${op}: Dimension out of range (expected to be in range of ` +
        `[${-ndim}, ${ndim - 1}], but got ${dim})`);
    }
    return dim < 0 ? dim + ndim : dim;
  }

  // Typed views over a tensor's bytes (contiguous, cpu).
  const ARRAY_OF = {
    bool: Uint8Array, uint8: Uint8Array, int8: Int8Array, int16: Int16Array, int32: Int32Array,
    int64: BigInt64Array, float16: Uint16Array, bfloat16: Uint16Array,
    float32: Float32Array, float64: Float64Array,
  };
  const ARRAY_OF_HALF = new Set(['float16', 'bfloat16']);

  function readContiguous(ptr, dtype, n, bits = false) {
    const Arr = ARRAY_OF[dtype];
    const raw = new Arr(buffer(), ptr, n);
    if (bits) return raw.slice();
    if (dtype === 'float16') return Float32Array.from(raw, halfToFloat);
    if (dtype === 'bfloat16') {
      const out = new Float32Array(n);
      new Uint32Array(out.buffer).set(Uint32Array.from(raw, (h) => h << 16));
      return out;
    }
    return raw.slice();
  }

  function writeContiguous(ptr, dtype, values, bits = false) {
    const chk = ArrayBuffer.isView(values) ? (_, v) => v : checked; // a TypedArray casts
    const n = values.length;
    const dst = new ARRAY_OF[dtype](buffer(), ptr, n);
    const f16 = typeof Float16Array === 'function' && values instanceof Float16Array;
    if (bits || (values.constructor === dst.constructor && dtype !== 'bool' && !ARRAY_OF_HALF.has(dtype))) {
      dst.set(values);
    } else if (f16 && dtype === 'float16') {
      dst.set(new Uint16Array(values.buffer, values.byteOffset, n));
    } else if (dtype === 'int64' && values instanceof BigUint64Array) {
      dst.set(new BigInt64Array(values.buffer, values.byteOffset, n));
    } else if (dtype === 'int64') {
      for (let i = 0; i < n; i++) dst[i] = toBigInt(chk(dtype, values[i]));
    } else if (dtype === 'bool') {
      for (let i = 0; i < n; i++) dst[i] = values[i] !== 0 && values[i] !== 0n && values[i] !== false ? 1 : 0;
    } else if (dtype === 'float16') {
      for (let i = 0; i < n; i++) dst[i] = floatToHalf(toNumber(values[i]));
    } else if (dtype === 'bfloat16') {
      for (let i = 0; i < n; i++) dst[i] = floatToBfloat(toNumber(values[i]));
    } else if (dtype === 'int32' && !isIntArray(values)) {
      for (let i = 0; i < n; i++) dst[i] = toInt32Sat(toNumber(chk(dtype, values[i])));
    } else if (dtype !== 'float32' && dtype !== 'float64' && !isIntArray(values)) {
      for (let i = 0; i < n; i++) dst[i] = toNarrowInt(toNumber(chk(dtype, values[i])));
    } else {
      // floats, and integers to integers: the TypedArray store wraps, like C
      for (let i = 0; i < n; i++) dst[i] = toNumber(values[i]);
    }
  }

  // JS numbers and BigInts (a plain array's: Python's numbers) beyond the
  // integer dtype are refused as PyTorch refuses them (js/traps.js); a
  // TypedArray converts as a cast does (numpy arrays in torch.tensor too).
  function checked(dtype, v) {
    if (typeof v === 'bigint') return checkLong(v);
    return typeof v === 'number' ? checkedInt(dtype, v) : v;
  }

  // Integer TypedArrays convert by wrapping (C's integer casts); numbers and
  // float arrays by the float rule above.
  function isIntArray(v) {
    return ArrayBuffer.isView(v) && !(v instanceof Float32Array) && !(v instanceof Float64Array) &&
      !(typeof Float16Array === 'function' && v instanceof Float16Array);
  }

  // A plain loop: Array.from(subarray) costs ~2 us, more than a small op.
  function readDims(m, at, nd) {
    const a = new Array(nd);
    for (let i = 0; i < nd; i++) a[i] = m[at + i];
    return a;
  }

  // Re-reads a tensor's cached metadata after an op that may have changed it
  // in place (an out= argument resized by the kernel).
  // A second wrapper of the same C tensor (contiguous() or to() returning
  // self) has its own cache: a refresh that finds the layout changed (or had
  // nothing to compare) bumps metaGeneration, and a cache older than that is
  // read again on its next use. In-place ops that keep the layout bump nothing.
  let refreshMeta;
  let setHandle;
  let metaGeneration = 0;
  const sameLayout = (a, b) => a.ndim === b.ndim && a.offset === b.offset &&
    a.sizes.every((v, d) => v === b.sizes[d]) && a.strides.every((v, d) => v === b.strides[d]);

  class Tensor {
    #ptr;
    #meta;
    #gen;

    static {
      refreshMeta = (t) => {
        if (!t.#ptr) return;
        const old = t.#meta;
        const now = t.#load();
        if (old && sameLayout(old, now)) return;
        t.#gen = ++metaGeneration; // every other wrapper reads again on next use
      };
      // PyTorch's `param.data = new`: the same JS object over another C
      // tensor (js/nn's Module.to keeps the objects optimizers hold)
      setHandle = (t, ptr) => {
        const old = t.#h('setHandle');
        mem.rehandle(t, ptr);
        t.#ptr = ptr;
        t.#meta = null;
        M._weft_tensor_release(old);
      };
    }

    // Every Tensor joins the open tidy() scope and the collection safety net.
    // Its metadata is read from C on first use: many small-op results are
    // disposed without their shape ever being asked.
    constructor(ptr) {
      this.#ptr = ptr;
      this.#meta = null;
      mem.adopt(this, ptr);
    }

    // Read lazily, and again when an out= resize may have changed it (another
    // wrapper of the same C tensor, from contiguous()/to() returning self, may
    // have been the one written through).
    get #md() {
      if (this.#meta === null || (this.#gen !== metaGeneration && this.#ptr)) return this.#load();
      return this.#meta;
    }

    #load() {
      this.#gen = metaGeneration;
      M._weft_wasm_meta(this.#ptr);
      const m = scratch();
      const o = SLOT_OUT;
      const nd = m[o];
      this.#meta = {
        ndim: nd,
        numel: m[o + 1],
        offset: m[o + 2],
        dtype: DTYPES[m[o + 3]],
        device: DEVICES[m[o + 4]],
        elementSize: m[o + 5],
        sizes: readDims(m, o + 8, nd),
        strides: readDims(m, o + 8 + MAX_DIMS, nd),
      };
      return this.#meta;
    }

    // The live handle, or a WeftError naming the op.
    #h(op) {
      if (!this.#ptr) throw new WeftError('InvalidArgument', `${op}: tensor has been disposed${mem.releasedNote(this)}`);
      return this.#ptr;
    }

    get shape() { this.#h('shape'); return this.#md.sizes.slice(); }
    get dtype() { this.#h('dtype'); return this.#md.dtype; }
    get device() { this.#h('device'); return this.#md.device; }
    get isDisposed() { return !this.#ptr; }
    // The weft_tensor* (for code calling the wasm exports directly).
    handle(op = 'handle') { return this.#h(op); }

    size(dim) {
      this.#h('size');
      if (dim === undefined) return this.#md.sizes.slice();
      return this.#md.sizes[wrapDim('size', dim, this.#md.ndim, false)];
    }

    stride(dim) {
      this.#h('stride');
      if (dim === undefined) return this.#md.strides.slice();
      return this.#md.strides[wrapDim('stride', dim, this.#md.ndim, false)];
    }

    storageOffset() { this.#h('storageOffset'); return this.#md.offset; }
    dim() { this.#h('dim'); return this.#md.ndim; }
    ndimension() { return this.dim(); }
    numel() { this.#h('numel'); return this.#md.numel; }
    elementSize() { this.#h('elementSize'); return this.#md.elementSize; }
    dataPtr() { return M._weft_tensor_data_ptr(this.#h('dataPtr')) >>> 0; }

    isContiguous(memoryFormat) {
      const h = this.#h('isContiguous');
      return !!M._weft_tensor_is_contiguous(h, formatOf('is_contiguous', memoryFormat, 'contiguous_format'));
    }

    suggestMemoryFormat() {
      return FORMATS[M._weft_tensor_suggest_memory_format(this.#h('suggestMemoryFormat'))];
    }

    isNonOverlappingAndDense() {
      return !!M._weft_tensor_is_non_overlapping_and_dense(this.#h('isNonOverlappingAndDense'));
    }

    contiguous(opts = {}) {
      const h = this.#h('contiguous');
      checkKeys('contiguous', opts, ['memoryFormat']);
      const f = formatOf('contiguous', opts.memoryFormat, 'contiguous_format');
      return wrap(C.contiguous(h, f), 'contiguous');
    }

    clone(opts = {}) {
      const h = this.#h('clone');
      checkKeys('clone', opts, ['memoryFormat']);
      const f = formatOf('clone', opts.memoryFormat, 'preserve_format');
      return wrap(C.clone(h, f), 'clone');
    }

    // ---- views ----

    asStrided(size, stride, storageOffset) {
      const h = this.#h('asStrided');
      const sz = toIntList('as_strided', 'size', size);
      const st = toIntList('as_strided', 'stride', stride);
      // None (null): the op keeps the tensor's offset. An explicit offset that C
      // saturates to INT64_MIN, OPT_INT's None, is an invalid -1 instead, as in the
      // public C weft_as_strided.
      let off = null;
      if (storageOffset !== undefined && storageOffset !== null) {
        off = toInt('as_strided', 'storage_offset', storageOffset);
        if (off <= -INT64_MAX_AS_DOUBLE) off = -1;
      }
      if (sz.length !== st.length) {
        throw new WeftError('InvalidArgument',
          `as_strided: mismatch in length of strides and shape (${st.length} vs ${sz.length})`);
      }
      return wrap(C.op_as_strided(h, sz, st, off), 'as_strided');
    }

    // Each calls its entry point itself: one call site per op keeps the call to
    // wasm fast (a shared one calling four ops is not).
    view(...shape) { return wrap(C.view(this.#h('view'), shapeArg('view', 'size', shape)), 'view'); }
    reshape(...shape) { return wrap(C.reshape(this.#h('reshape'), shapeArg('reshape', 'shape', shape)), 'reshape'); }
    permute(...dims) { return wrap(C.permute(this.#h('permute'), shapeArg('permute', 'dims', dims)), 'permute'); }
    expand(...sizes) { return wrap(C.expand(this.#h('expand'), shapeArg('expand', 'size', sizes)), 'expand'); }

    transpose(dim0, dim1) {
      const h = this.#h('transpose');
      return wrap(C.transpose(h, toInt('transpose', 'dim0', dim0), toInt('transpose', 'dim1', dim1)),
        'transpose');
    }

    t() { return wrap(C.t(this.#h('t')), 't'); }

    squeeze(dim) {
      const h = this.#h('squeeze');
      if (dim === undefined || dim === null) return wrap(C.squeeze(h), 'squeeze');
      return wrap(C.squeeze_dim(h, toInt('squeeze', 'dim', dim)), 'squeeze');
    }

    unsqueeze(dim) {
      const h = this.#h('unsqueeze');
      return wrap(C.unsqueeze(h, toInt('unsqueeze', 'dim', dim)), 'unsqueeze');
    }

    narrow(dim, start, length) {
      const h = this.#h('narrow');
      return wrap(C.narrow(h, toInt('narrow', 'dim', dim), toInt('narrow', 'start', start),
        toInt('narrow', 'length', length)), 'narrow');
    }

    // slice(dim = 0, start = 0, end = to the end, step = 1), like x[start:end:step] on dim.
    slice(dim = 0, start = null, end = null, step = 1) {
      const h = this.#h('slice');
      const s = start === null || start === undefined ? 0 : toInt('slice', 'start', start);
      const e = end === null || end === undefined ? INT64_MAX_AS_DOUBLE : toInt('slice', 'end', end);
      return wrap(C.slice(h, toInt('slice', 'dim', dim), s, e, toInt('slice', 'step', step)), 'slice');
    }

    select(dim, index) {
      const h = this.#h('select');
      return wrap(C.select(h, toInt('select', 'dim', dim), toInt('select', 'index', index)), 'select');
    }

    flatten(startDim = 0, endDim = -1) {
      const h = this.#h('flatten');
      return wrap(C.flatten(h, toInt('flatten', 'start_dim', startDim), toInt('flatten', 'end_dim', endDim)),
        'flatten');
    }

    unflatten(dim, sizes) {
      const h = this.#h('unflatten');
      const d = toInt('unflatten', 'dim', dim);
      const list = toIntList('unflatten', 'sizes', sizes);
      return wrap(C.unflatten(h, d, list), 'unflatten');
    }

    movedim(source, destination) {
      const h = this.#h('movedim');
      const src = toIntList('movedim', 'source', isSequence(source) ? source : [source]);
      const dst = toIntList('movedim', 'destination', isSequence(destination) ? destination : [destination]);
      if (src.length !== dst.length) {
        throw new WeftError('InvalidArgument', `movedim: Invalid source or destination dims: source ` +
          `([${src.join(', ')}] dims) should contain the same number of dims as destination ` +
          `([${dst.join(', ')}] dims)`);
      }
      return wrap(C.op_movedim(h, src, dst), 'movedim');
    }

    // ---- data out ----

    // The logical values in order, as a fresh TypedArray (a copy: it stays
    // valid when the wasm memory grows or the tensor is disposed).
    // { bits: true } gives float16/bfloat16 as their raw Uint16Array bits.
    data(opts = {}) {
      checkKeys('data', opts, ['bits']);
      return this.#read('data', opts.bits === true);
    }

    #read(op, bits = false) {
      const h = this.#h(op);
      const { dtype, device, numel } = this.#md;
      if (device === 'meta') {
        throw new WeftError('NotImplemented', `${op}: Cannot copy out of meta tensor; no data!`);
      }
      if (device === 'webgpu') {
        const async = op === 'toArray' || op === 'item' ? op : 'data';
        throw new WeftError('NotImplemented', `${op}: a webgpu tensor is read asynchronously: use await t.${async}Async()`);
      }
      if (numel === 0) return new (ARRAY_OF_HALF.has(dtype) && !bits ? Float32Array : ARRAY_OF[dtype])(0);
      const c = C.contiguous(h, CONTIGUOUS_FORMAT);
      if (!c) fail(op);
      try {
        return readContiguous(M._weft_tensor_data_ptr(c) >>> 0, dtype, numel, bits);
      } finally {
        M._weft_tensor_release(c);
      }
    }

    // int64 values beyond 2**53 would round as JS numbers: they throw unless
    // { bigint: true } asks for BigInts (every int64 then comes as one).
    toArray(opts = {}) {
      this.#h('toArray');
      checkKeys('toArray', opts ?? {}, ['bigint']);
      const { sizes, dtype } = this.#md;
      // Checked before reading anything: a result JS cannot hold would take
      // seconds to build and then die (V8's arrays stop at 2**27 - 3 fast elements).
      const made = toArrayValues(sizes);
      if (made > TO_ARRAY_MAX) {
        throw new WeftError('InvalidArgument', `toArray: a tensor of shape [${sizes.join(', ')}] would make ` +
          `${made} JS values (more than ${TO_ARRAY_MAX}); read it as one TypedArray with data()`);
      }
      const flat = this.#read('toArray');
      const conv = valueReader('toArray', dtype, opts?.bigint === true);
      if (sizes.length === 0) return conv(flat[0]);
      let pos = 0;
      const build = (dim) => {
        const n = sizes[dim];
        const out = new Array(n);
        if (dim === sizes.length - 1) {
          for (let i = 0; i < n; i++) out[i] = conv(flat[pos++]);
        } else {
          for (let i = 0; i < n; i++) out[i] = build(dim + 1);
        }
        return out;
      };
      return build(0);
    }

    // PyTorch's name for toArray.
    tolist(opts) { return this.toArray(opts); }

    item(opts = {}) {
      this.#h('item');
      checkKeys('item', opts ?? {}, ['bigint']);
      if (this.#md.numel !== 1) {
        throw new WeftError('InvalidArgument',
          `item: a Tensor with ${this.#md.numel} elements cannot be converted to Scalar`);
      }
      return valueReader('item', this.#md.dtype, opts?.bigint === true)(this.#read('item')[0]);
    }

    // ---- PyTorch's shortcuts ----

    get ndim() { return this.dim(); }
    // all dims reversed (PyTorch's T; a matrix's transpose)
    get T() {
      const n = this.dim();
      return this.permute(Array.from({ length: n }, (_, i) => n - 1 - i));
    }
    // the last two dims swapped (a batch of matrices transposed)
    get mT() {
      const n = this.dim();
      if (n < 2) {
        throw new WeftError('InvalidArgument',
          `tensor.mT is only supported on matrices or batches of matrices. Got ${n}-D tensor.`);
      }
      return this.transpose(-2, -1);
    }
    float() { return this.to('float32'); }
    double() { return this.to('float64'); }
    half() { return this.to('float16'); }
    bfloat16() { return this.to('bfloat16'); }
    int() { return this.to('int32'); }
    long() { return this.to('int64'); }
    short() { return this.to('int16'); }
    char() { return this.to('int8'); }
    byte() { return this.to('uint8'); }
    bool() { return this.to('bool'); }

    toString() {
      this.#h('toString');
      const { sizes, dtype, device } = this.#md;
      return formatTensor({ shape: sizes, dtype, device }, () => this.#read('toString'));
    }

    [Symbol.for('nodejs.util.inspect.custom')]() {
      return this.#ptr ? this.toString() : 'tensor(<disposed>)';
    }

    // Gives the handle's reference back. Views keep their storage alive on
    // their own, so disposing a base does not invalidate its views.
    dispose() {
      if (this.#ptr) {
        mem.forget(this);
        M._weft_tensor_release(this.#ptr);
      }
      this.#ptr = 0;
    }
  }
  if (Symbol.dispose) Tensor.prototype[Symbol.dispose] = Tensor.prototype.dispose;

  // PyTorch's to.device and to.other over the op table's to.dtype and
  // to.dtype_layout: t.to('cpu'[, dtype][, { copy }]) and t.to(other[, { copy }])
  // (other's dtype). weft keeps data on one device: naming another one throws.
  function installToForms(api) {
    const gen = api.to;
    const toArgs = (self, args) => {
      const [first, ...rest] = args;
      if (!(self instanceof Tensor)) return args; // the generated function's own error
      const dev = first instanceof Tensor ? first.device : typeof first === 'string' && DEVICES.includes(first) ? first : null;
      if (dev === null) return withDtype(args);
      if (dev !== self.device) {
        throw new WeftError('NotImplemented', `to(): cannot move a ${self.device} tensor to the '${dev}' device ` +
          `(weft keeps a tensor's data where it was made)`);
      }
      if (first instanceof Tensor) return withDtype([first.dtype, ...rest]);
      return rest.length ? withDtype(rest) : [{}];
    };
    // to('float32', { memoryFormat }): PyTorch's to(dtype, ..., *, memory_format) as one options object
    const withDtype = (args) => (args.length === 2 && typeof args[0] === 'string' && isOptions(args[1]) &&
      !(args[1] instanceof Tensor) && !('dtype' in args[1]) ? [{ ...args[1], dtype: args[0] }] : args);
    const to = function to(self, ...args) { return gen(self, ...toArgs(self, args)); };
    api.to = to;
    Object.defineProperty(Tensor.prototype, 'to', {
      value: function to(...args) { return gen(this, ...toArgs(this, args)); }, writable: true, configurable: true,
    });
  }

  // div's roundingMode (PyTorch's div.Tensor_mode / div.Scalar_mode) over
  // the op table's div and floor_divide: 'floor' is floor_divide; 'trunc'
  // rounds toward zero (floating: trunc(a / b); integer: the floor quotient
  // plus one where a remainder is left and the signs differ, exact for every
  // int64); null is true division. out= and div_ follow the out= cast rule.
  function installDivModes(api) {
    const P = Tensor.prototype;
    const gen = { div: api.div, method: P.div, div_: P.div_, floorDivide: api.floorDivide };
    const FLOATING = ['float16', 'bfloat16', 'float32', 'float64'];
    // [mode, options without it], or null: no roundingMode, div as generated
    const modeOf = (args) => {
      const last = args[args.length - 1];
      if (args.length < 3 || !isOptions(last) || last instanceof Tensor) return null;
      if ('rounding_mode' in last) {
        throw new WeftError('TypeError', "div() got an unexpected option 'rounding_mode' (did you mean roundingMode?)");
      }
      if (!('roundingMode' in last)) return null;
      const { roundingMode: mode = null, ...rest } = last;
      if (![null, 'trunc', 'floor'].includes(mode)) {
        throw new WeftError('InvalidArgument',
          `div expected roundingMode to be one of null, 'trunc', or 'floor' but found ${JSON.stringify(mode)}`);
      }
      for (const k of Object.keys(rest)) {
        if (k !== 'out') throw new WeftError('TypeError', `div() got an unexpected option '${k}' (options: roundingMode, out)`);
      }
      return [mode, rest];
    };
    const below0 = (v) => (v instanceof Tensor ? v.lt(0) : api.tensor(v < 0));
    function rounded(a, b, mode, out) {
      const kw = out ? { out } : {};
      if (mode === 'floor') return gen.floorDivide(a, b, kw);
      return api.tidy(() => {
        const q = gen.floorDivide(a, b);
        if (out && !canCast(q.dtype, out.dtype)) {
          throw new WeftError('TypeError', `div: result type ${q.dtype} can't be cast to the desired output type ${out.dtype}`);
        }
        if (FLOATING.includes(q.dtype)) return api.trunc(gen.div(a, b), kw);
        const inexact = api.remainder(a, b).ne(0).logicalAnd(below0(a).ne(below0(b)));
        return api.add(q, inexact, kw);
      });
    }
    // A rounded quotient is piecewise constant: its gradient is zero, as
    // PyTorch's div.Tensor_mode formula gives (floor_divide has no formula to
    // run), so a new result is made outside the graph; out= and div_ keep
    // autograd's checks (a leaf that requires grad written in place).
    function divMode(a, b, mode, out) {
      if (mode === null) return gen.div(a, b, out ? { out } : {});
      return out ? rounded(a, b, mode, out) : api.noGrad(() => rounded(a, b, mode, null));
    }
    api.div = function div(...args) {
      const m = modeOf(args);
      return m ? divMode(args[0], args[1], m[0], m[1].out) : gen.div(...args);
    };
    Object.defineProperty(P, 'div', {
      value: function div(...args) {
        const m = args.length > 1 ? modeOf([this, ...args]) : null;
        return m ? divMode(this, args[0], m[0], m[1].out) : gen.method.apply(this, args);
      },
      writable: true, configurable: true,
    });
    Object.defineProperty(P, 'div_', {
      value: function div_(...args) {
        const m = modeOf([this, ...args]);
        if (!m) return gen.div_.apply(this, args);
        if (m[0] === 'floor') return this.floorDivide_(args[0]);
        divMode(this, args[0], m[0], this);
        return this;
      },
      writable: true, configurable: true,
    });
  }

  // PyTorch's max.other / min.other: max(a, b) with a tensor b is maximum(a, b)
  // (out= too); every other form stays the op table's max / min.
  function installMinMaxOther(api) {
    for (const [name, elementwise] of [['max', 'maximum'], ['min', 'minimum']]) {
      const gen = { fn: api[name], method: Tensor.prototype[name] };
      if (!gen.fn || !api[elementwise]) continue;
      api[name] = function minMax(...args) {
        return args[1] instanceof Tensor ? api[elementwise](...args) : gen.fn(...args);
      };
      Object.defineProperty(Tensor.prototype, name, {
        value: function minMax(...args) {
          return args[0] instanceof Tensor ? api[elementwise](this, ...args) : gen.method.apply(this, args);
        },
        writable: true, configurable: true,
      });
    }
  }

  // ---- factories ----

  function shapeAndOptions(op, args, keys) {
    const [rest, opts] = splitOptions(args);
    checkKeys(op, opts, keys);
    return [toIntList(op, 'size', variadic(rest)), opts];
  }

  function empty(...args) {
    const [shape, o] = shapeAndOptions('empty', args, ['dtype', 'memoryFormat', 'device']);
    const dt = dtypeOf('empty', o.dtype);
    const dev = deviceOf('empty', o.device);
    const f = formatOf('empty', o.memoryFormat, 'contiguous_format');
    return wrap(C.empty(shape, dt, dev, f), 'empty');
  }

  function emptyStrided(size, stride, opts = {}) {
    checkKeys('empty_strided', opts, ['dtype', 'device']);
    const sz = toIntList('empty_strided', 'size', size);
    const st = toIntList('empty_strided', 'stride', stride);
    if (sz.length !== st.length) {
      throw new WeftError('InvalidArgument',
        `empty_strided: mismatch in length of strides and shape (${st.length} vs ${sz.length})`);
    }
    const dt = dtypeOf('empty_strided', opts.dtype);
    const dev = deviceOf('empty_strided', opts.device);
    return wrap(C.op_empty_strided(sz, st, dt, dev), 'empty_strided');
  }

  function emptyLike(t, opts = {}) {
    if (!(t instanceof Tensor)) {
      throw new WeftError('TypeError', `empty_like(): argument 'input' must be a Tensor, not ${typeName(t)}`);
    }
    const h = t.handle('empty_like');
    const o = opts ?? {};
    checkKeys('empty_like', o, ['dtype', 'memoryFormat']);
    const dt = dtypeOf('empty_like', o.dtype ?? t.dtype);
    const f = formatOf('empty_like', o.memoryFormat, 'preserve_format');
    return wrap(C.empty_like(h, dt, f), 'empty_like');
  }

  function fillValue(op, value) {
    if (typeof value === 'boolean') return [value ? 1 : 0, 'bool'];
    if (typeof value === 'bigint') return [Number(checkLong(value)), 'int64'];
    if (typeof value !== 'number') {
      throw new WeftError('TypeError', `${op}(): argument 'fill_value' must be a number, not ${typeName(value)}`);
    }
    return [value, defaultDtype()];
  }

  function fullOf(op, shape, value, opts, inferred) {
    const dt = dtypeOf(op, opts.dtype ?? inferred);
    const dev = deviceOf(op, opts.device);
    // C's check cannot see 2 ** 63 as beyond int64 (it is int64's max as a double)
    if (DTYPES[dt] === 'int64') checkLong(value);
    return wrap(C.full(shape, value, dt, dev), op);
  }

  function full(size, value, opts = {}) {
    checkKeys('full', opts, ['dtype', 'device']);
    const shape = toIntList('full', 'size', isSequence(size) ? size : [size]);
    const [v, inferred] = fillValue('full', value);
    return fullOf('full', shape, v, opts, inferred);
  }

  function zeros(...args) {
    const [shape, o] = shapeAndOptions('zeros', args, ['dtype', 'device']);
    return fullOf('zeros', shape, 0, o);
  }

  function ones(...args) {
    const [shape, o] = shapeAndOptions('ones', args, ['dtype', 'device']);
    return fullOf('ones', shape, 1, o);
  }

  function scalarArg(op, name, v) {
    if (typeof v === 'bigint') return Number(v);
    if (typeof v !== 'number') {
      throw new WeftError('TypeError', `${op}(): argument '${name}' must be a number, not ${typeName(v)}`);
    }
    return v;
  }

  // arange(end), arange(start, end), arange(start, end, step); options last.
  function arange(...args) {
    const [rest, o] = splitOptions(args);
    checkKeys('arange', o, ['dtype', 'device']);
    if (rest.length < 1 || rest.length > 3) {
      throw new WeftError('TypeError', `arange() takes 1 to 3 positional arguments but ${rest.length} were given`);
    }
    const names = rest.length === 1 ? ['end'] : ['start', 'end', 'step'];
    const nums = rest.map((v, i) => scalarArg('arange', names[i], v));
    const [start, end, step] = nums.length === 1 ? [0, nums[0], 1] : [nums[0], nums[1], nums[2] ?? 1];
    // PyTorch's rule, kept: integer arguments make int64 (arange(5) counts)
    const inferred = [start, end, step].every(Number.isInteger) ? 'int64' : defaultDtype();
    const dt = dtypeOf('arange', o.dtype ?? inferred);
    const dev = deviceOf('arange', o.device);
    return wrap(C.arange(start, end, step, dt, dev), 'arange');
  }

  function randomOf(op, fn, args) {
    const [shape, o] = shapeAndOptions(op, args, ['dtype', 'device']);
    const dt = dtypeOf(op, o.dtype);
    const dev = deviceOf(op, o.device);
    return wrap(fn(shape, dt, dev), op);
  }

  const rand = (...args) => randomOf('rand', C.rand, args);
  const randn = (...args) => randomOf('randn', C.randn, args);

  // { dtype: 'float16' | 'bfloat16', bits: true } takes a Uint16Array of raw bits.
  // wt.tensor([1, 2, 3, 4]): a flat array of numbers with no options skips
  // the nested walk, the copy of the values and reading the metadata back
  // (dtype and device are known), which together cost more than the tensor.
  const CPU = DEVICES.indexOf('cpu');
  function flatNumbers(data) {
    if (!Array.isArray(data)) return false;
    for (let i = 0; i < data.length; i++) if (typeof data[i] !== 'number') return false;
    return true;
  }
  function numberTensor(data) {
    const dt = M._weft_get_default_dtype();
    const n = data.length;
    const ptr = C.empty([n], dt, CPU, CONTIGUOUS_FORMAT);
    const t = wrap(ptr, 'tensor');
    if (n > 0) new ARRAY_OF[DTYPES[dt]](buffer(), M._weft_tensor_data_ptr(ptr) >>> 0, n).set(data);
    return t;
  }

  function tensor(data, opts) {
    if (opts === undefined && flatNumbers(data)) return numberTensor(data);
    opts ??= {};
    checkKeys('tensor', opts, ['dtype', 'device', 'bits']);
    let shape;
    let values;
    let inferred;
    const bits = opts.bits === true;
    if (bits) {
      const dt = opts.dtype === undefined ? undefined : DTYPES[dtypeOf('tensor', opts.dtype)];
      if (!ARRAY_OF_HALF.has(dt) || !(data instanceof Uint16Array)) {
        throw new WeftError('TypeError', "tensor: { bits: true } takes a Uint16Array with dtype 'float16' or " +
          `'bfloat16' (got ${typeName(data)}, dtype ${String(opts.dtype)})`);
      }
    }
    if (ArrayBuffer.isView(data) && !(data instanceof DataView)) {
      shape = [data.length];
      values = data;
      inferred = typedArrayDtype(data);
    } else {
      shape = inferShape(data);
      const flat = flattenData(data, shape);
      values = flat.values;
      inferred = flat.kind === 0 ? 'bool' : flat.kind === 1 ? 'int64' : defaultDtype();
    }
    const dtype = opts.dtype ?? inferred;
    const dt = dtypeOf('tensor', dtype);
    const dev = deviceOf('tensor', opts.device);
    // a device's values are made on the cpu and copied over
    if (DEVICES[dev] === 'webgpu') return moveFromCpu(tensor(data, { ...opts, device: 'cpu' }), 'webgpu');
    const t = wrap(C.empty(toIntList('tensor', 'size', shape), dt, dev, CONTIGUOUS_FORMAT), 'tensor');
    try {
      // a meta tensor keeps the shape and dtype only
      if (values.length > 0 && t.device === 'cpu') writeContiguous(t.dataPtr(), t.dtype, values, bits);
    } catch (e) {
      t.dispose();
      throw e;
    }
    return t;
  }

  function moveFromCpu(t, device) {
    try { return t.to(device); } finally { t.dispose(); }
  }

  function manualSeed(seed) {
    let s;
    if (typeof seed === 'bigint') s = seed;
    else if (typeof seed === 'number' && Number.isInteger(seed)) s = BigInt(seed);
    else throw new WeftError('TypeError', `manual_seed(): argument 'seed' must be an integer, not ${typeName(seed)}`);
    s = BigInt.asUintN(64, s);
    M._weft_wasm_manual_seed(Number(s >> 32n), Number(s & 0xffffffffn));
  }

  // torch.promote_types / torch.can_cast on dtype names.
  function promoteTypes(a, b) {
    return DTYPES[M._weft_promote_types(dtypeOf('promote_types', a), dtypeOf('promote_types', b))];
  }

  function canCast(from, to) {
    return !!M._weft_can_cast(dtypeOf('can_cast', from), dtypeOf('can_cast', to));
  }

  function memory() {
    M._weft_wasm_memory();
    const m = scratch();
    return { tensors: m[SLOT_OUT], storages: m[SLOT_OUT + 1],
      bytesInUse: m[SLOT_OUT + 2], peakBytes: m[SLOT_OUT + 3], metaBytes: m[SLOT_OUT + 4], webgpuBytes: m[SLOT_OUT + 5],
      heapBytes: buffer().byteLength, ...mem.stats() };
  }

  // Integers >= 1 only (non-integers and NaN are TypeErrors, so 2**32 + 2
  // never reaches C's int as 2); above maxThreads() the count is clamped and
  // wt.backend.threadClamp says so until the next call.
  let threadClamp = null;
  function setNumThreads(n) {
    const v = toInt('set_num_threads', 'n', n);
    if (v < 1) throw new WeftError('InvalidArgument', `set_num_threads: n must be at least 1, but got ${v}`);
    const used = Math.min(v, M._weft_wasm_max_threads());
    if (M._weft_wasm_set_num_threads(used) !== 0) fail('set_num_threads');
    threadClamp = used < v ? Object.freeze({ requested: v, used }) : null;
  }

  const api = {
    variant: info.variant,
    // a fresh frozen snapshot: numThreads and threadClamp change with setNumThreads
    get backend() {
      return Object.freeze({ ...info.backend, workers: info.workers?.loaded() ?? 0,
        numThreads: M._weft_wasm_get_num_threads(), threadClamp,
        webgpu: api.webgpu.info() });
    },
    buildId: info.buildId,
    tidy: mem.tidy, keep: mem.keep,
    Tensor,
    WeftError,
    empty, emptyStrided, emptyLike, zeros, ones, full, arange, tensor, rand, randn,
    manualSeed, memory, promoteTypes, canCast,
    setDefaultDtype, getDefaultDtype: defaultDtype,
    setNumThreads,
    getNumThreads: () => M._weft_wasm_get_num_threads(),
    maxThreads: () => M._weft_wasm_max_threads(),
    // init() does not wait for the pthread workers (js/loader.js startWorkers)
    threadsReady: () => info.workers?.ready() ?? Promise.resolve(0),
  };
  // For tests only (tests/js/fault-injection.test.mjs), not enumerable, not
  // in the types: fail the nth weft allocation from now (0 stops), and the
  // number of failures injected so far.
  Object.defineProperty(api, '_faultInjection', {
    value: Object.freeze({
      failAllocation: (n) => M._weft_wasm_fail_allocation(n),
      injected: () => M._weft_wasm_injected_failures(),
    }),
  });
  // The op table's functions and methods, ops.*, trace and explain (js/ops.js).
  installOps(api, { M, Tensor, WeftError, wrap, fail, typeName, jsTypeName, didYouMean, isOptions, lookup, buffer, argSlots, putList,
    registry, DTYPES, DEVICES, FORMATS, refreshMeta, defaultDtype, ...traps });
  installToForms(api);
  installDivModes(api);
  installMinMaxOther(api);
  // maxPool2d's returnIndices, adaptiveAvgPool2d's null sizes (js/pool.js)
  installPool(api, { Tensor, WeftError, isOptions });
  // wt.pad's options, wt.interpolate (F.interpolate over the upsample ops; js/resize.js)
  installResize(api, { Tensor, WeftError, isOptions });
  // batchNorm in torch.nn.functional's argument order (js/norm.js)
  installNorm(api, { Tensor, WeftError, isOptions, didYouMean });
  // F.*'s { inplace } of the activations, dropout / dropout2d (js/activation.js)
  installActivations(api, { Tensor, WeftError, isOptions });
  // requiresGrad, backward, grad, noGrad, autograd.grad (js/autograd.js)
  installAutograd(api, { M, Tensor, WeftError, wrap, fail, typeName, isOptions, buffer });
  // wt.optim.SGD / Adam / AdamW (js/optim.js)
  installOptim(api, { Tensor, WeftError, isOptions });
  // wt.nn.utils.clipGradNorm_ / clipGradValue_ (js/nn_utils.js)
  installNnUtils(api, { Tensor, WeftError, isOptions });
  // unique's options and its tensor-or-tuple result (js/unique.js)
  installUnique(api, { Tensor, WeftError, isOptions, tupleMaker });
  // nonzero's asTuple, where(cond), x.index(...) and x.indexPut_ (js/index_ops.js)
  installIndexing(api, { Tensor, WeftError, isOptions, floatIndexFix: traps.floatIndexFix });
  // embedding in torch.nn.functional's order, with maxNorm (js/embedding.js)
  installEmbedding(api, { Tensor, WeftError, isOptions, didYouMean });
  // normalize, cosineSimilarity, pairwiseDistance as F composes them (js/distance.js)
  installDistance(api, { Tensor, WeftError, isOptions, didYouMean });
  // wt.nn: modules, layers, init, functional and the training-step memory rule (js/nn/)
  installNn(api, { M, Tensor, WeftError, fail, typeName, isOptions, didYouMean, mem, setHandle: (t, p) => setHandle(t, p) });
  // wt.load / wt.save: torch.save's checkpoints (js/checkpoint.js)
  installCheckpoint(api, { buffer });
  installFusion(api, { Tensor, WeftError, isOptions });
  // allclose / equal: JS booleans (js/pointwise.js)
  installPointwise(api, { Tensor, WeftError });
  // the webgpu device: initWebGPU, wt.webgpu, to('webgpu'), the async reads (js/webgpu.js)
  installWebGPU(api, { M, Tensor, WeftError });
  // last: missing names of wt and wt.nn.functional say the closest ones; for..of over a tensor (js/traps.js)
  installTraps(api, { Tensor, WeftError, editDistance });
  // wt.einsum(eq, ...tensors) as torch.einsum (js/einsum.js)
  installEinsum(api, { Tensor, WeftError, isOptions });
  return api;
}
