// PyTorch checkpoints: wt.load reads what torch.save writes, wt.save writes
// what torch.load reads (PyTorch 1.13's zip format).
//
//   <archive>/data.pkl      the object, pickled (protocol 2); each storage is
//                           a persistent id ('storage', torch.FloatStorage,
//                           key, location, numel)
//   <archive>/data/<key>    one record per storage: its elements, little-endian
//   <archive>/version       "3\n"
//   <archive>/byteorder     "little" or "big" (newer PyTorch)
//
// Reading is torch.load(weights_only=True): the pickle may name only the
// globals below (OrderedDict, the tensor and parameter rebuild functions,
// storage types, dtypes, torch.Size); any other (os.system, builtins.eval,
// ...) is refused by name before anything runs, so a file can never run code.
// Each storage becomes one weft tensor and each saved tensor a view of it
// with the saved offset and strides: views that shared a storage in PyTorch
// share it in weft.
import { WeftError } from './core.js';
import { toBytes } from './npy.js';
import { readZip, writeZip } from './zip.js';
import { unpickle, checkGraph, isTuple, isDict, typeOf, showInt, Pickler, MAX_DEPTH } from './pickle.js';

// weft dtype <-> torch storage type, element size
const STORAGES = {
  FloatStorage: ['float32', 4], DoubleStorage: ['float64', 8], HalfStorage: ['float16', 2],
  BFloat16Storage: ['bfloat16', 2], CharStorage: ['int8', 1], ByteStorage: ['uint8', 1],
  ShortStorage: ['int16', 2], IntStorage: ['int32', 4], LongStorage: ['int64', 8], BoolStorage: ['bool', 1],
};
const STORAGE_OF = Object.fromEntries(Object.entries(STORAGES).map(([k, [dt]]) => [dt, k]));
const SIZE_OF = Object.fromEntries(Object.values(STORAGES));
// torch's dtypes and storages weft has no dtype for
const NO_DTYPE = {
  ComplexFloatStorage: 'complex64', ComplexDoubleStorage: 'complex128', ComplexHalfStorage: 'complex32',
  QInt8Storage: 'qint8', QUInt8Storage: 'quint8', QInt32Storage: 'qint32', QUInt4x2Storage: 'quint4x2',
  QUInt2x4Storage: 'quint2x4',
};
const DTYPE_NAMES = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'];
const UNSUPPORTED = {
  'torch._utils._rebuild_qtensor': 'quantized tensors',
  'torch._utils._rebuild_sparse_tensor': 'sparse tensors',
  'torch._utils._rebuild_sparse_csr_tensor': 'sparse tensors',
  'torch._utils._rebuild_nested_tensor': 'nested tensors',
  'torch.serialization._get_layout': 'sparse tensors',
  'torch._utils._rebuild_device_tensor_from_numpy': 'tensors saved as NumPy arrays',
  'torch._utils._rebuild_wrapper_subclass': 'tensor subclasses',
  'torch._tensor._rebuild_from_type_v2': 'tensor subclasses',
  'torch._tensor._rebuild_from_type': 'tensor subclasses',
};
const ARCHIVE = 'archive';
const VERSION = '3\n';
const MAX_DIMS = 16;

const bad = (op, msg) => new WeftError('InvalidArgument', `${op}: ${msg}`);

// Globals the pickle may name: frozen tokens the hooks below recognize.
class Global {
  constructor(name, extra = {}) {
    this.name = name;
    this.pickleName = name;
    Object.assign(this, extra);
    Object.freeze(this);
  }
}
const G = {};
for (const n of ['collections.OrderedDict', 'torch._utils._rebuild_tensor_v2', 'torch._utils._rebuild_tensor',
  'torch._utils._rebuild_parameter', 'torch._utils._rebuild_parameter_with_state',
  'torch._utils._rebuild_meta_tensor_no_storage', 'torch.Size',
  'torch.nn.parameter.Parameter']) G[n] = new Global(n);
for (const [k, [dtype]] of Object.entries(STORAGES)) G[`torch.${k}`] = new Global(`torch.${k}`, { storage: dtype });
const ORDERED = new WeakSet();

function findGlobal(op, module, name) {
  const full = `${module}.${name}`;
  if (Object.hasOwn(G, full)) return G[full];
  if (module === 'torch' && DTYPE_NAMES.includes(name)) return name; // a dtype: its weft name
  if (module === 'torch' && Object.hasOwn(NO_DTYPE, name)) {
    throw new WeftError('NotImplemented', `${op}: the file holds ${NO_DTYPE[name]} tensors (${full}), which weft does not have`);
  }
  if (module === 'torch' && /^(complex(32|64|128)|cfloat|cdouble|chalf|q(u?int8|int32|uint4x2|uint2x4))$/.test(name)) {
    throw new WeftError('NotImplemented', `${op}: the file holds the dtype ${full}, which weft does not have`);
  }
  if (Object.hasOwn(UNSUPPORTED, full)) {
    throw new WeftError('NotImplemented', `${op}: the file holds ${UNSUPPORTED[full]} (${full}), which weft does not read`);
  }
  // a pickled module: torch.save(model) instead of torch.save(model.state_dict())
  const model = /^(torch\.nn\.|__main__\.)/.test(full) ?
    '; a whole model saved with torch.save(model)? Save model.state_dict() instead' : '';
  throw bad(op, `the file names ${full}, which weft refuses to load: a checkpoint may hold only tensors, ` +
    'dicts, lists, tuples, numbers, strings, booleans, None and bytes (torch.load(weights_only=True)\'s rule), ' +
    `so that loading a file can never run code${model}`);
}

// ---- reading ----

const isIndex = (v) => Number.isSafeInteger(v) && v >= 0;

function intList(op, what, v) {
  if (!isTuple(v) && !Array.isArray(v)) throw bad(op, `${what} must be a tuple of ints, not ${typeOf(v)}`);
  if (v.length > MAX_DIMS) throw bad(op, `${what} has ${v.length} dimensions (weft has at most ${MAX_DIMS})`);
  if (!v.every(isIndex)) throw bad(op, `${what} must be non-negative integers, got (${v.map(showInt).join(', ')})`);
  return v;
}

const emptyDict = (v) => v === null || (isDict(v) && Object.keys(v).length === 0);

// One torch.load: the storages read so far, every tensor made (all freed if
// anything fails), the hooks the unpickler calls.
class Loader {
  constructor(wt, deps, op, zip, prefix) {
    Object.assign(this, { wt, deps, op, zip, prefix });
    this.storages = new Map(); // key -> { dtype, numel, base }
    this.made = [];
    this.swap = false;
  }

  // Checks the persistent id and reads the storage record once per key.
  persistentLoad(pid) {
    const { op } = this;
    if (!isTuple(pid) || pid.length !== 5 || pid[0] !== 'storage') {
      throw bad(op, `only storages may be persistent ids, got ${typeOf(pid)}${isTuple(pid) ? ` starting ${typeOf(pid[0])}` : ''}`);
    }
    const [, type, key, location, numel] = pid;
    if (!(type instanceof Global) || !type.storage) throw bad(op, `a storage's type must be a torch storage class, not ${typeOf(type)}`);
    if (typeof key !== 'string' || typeof location !== 'string') throw bad(op, 'a storage\'s key and location must be strings');
    if (!isIndex(numel)) throw bad(op, `storage '${key}' has ${showInt(numel)} elements`);
    const seen = this.storages.get(key);
    if (seen) {
      if (seen.dtype !== type.storage || seen.numel !== numel) {
        throw bad(op, `storage '${key}' is read as ${seen.numel} ${seen.dtype} and as ${numel} ${type.storage}`);
      }
      return seen;
    }
    const s = { key, dtype: type.storage, numel, base: this.storageTensor(key, type.storage, numel), pickleName: `storage '${key}'` };
    this.storages.set(key, s);
    return s;
  }

  storageTensor(key, dtype, numel) {
    const { op, zip, wt } = this;
    const name = `${this.prefix}/data/${key}`;
    if (!zip.entries.has(name)) throw bad(op, `storage '${key}' has no record ${name} in the archive`);
    const bytes = zip.read(name);
    const size = SIZE_OF[dtype];
    if (bytes.length !== numel * size) {
      throw bad(op, `storage '${key}' holds ${bytes.length} bytes, but ${numel} ${dtype} elements take ${numel * size}`);
    }
    const t = wt.empty([numel], { dtype });
    this.made.push(t);
    if (numel > 0) {
      const dst = new Uint8Array(this.deps.buffer(), t.dataPtr(), bytes.length);
      dst.set(bytes);
      if (this.swap && size > 1) for (let p = 0; p < dst.length; p += size) dst.subarray(p, p + size).reverse();
      if (dtype === 'bool') for (let p = 0; p < dst.length; p++) dst[p] = dst[p] !== 0 ? 1 : 0;
    }
    return t;
  }

  // torch._utils._rebuild_tensor: a view of the storage, bounds checked.
  tensor(storage, offset, size, stride) {
    const { op } = this;
    if (storage === null || typeof storage !== 'object' || this.storages.get(storage.key) !== storage) {
      throw bad(op, `a tensor's storage must be a storage, not ${typeOf(storage)}`);
    }
    if (!isIndex(offset)) throw bad(op, `a tensor's storage offset must be a non-negative integer, not ${typeOf(offset)}`);
    intList(op, 'a tensor\'s size', size);
    intList(op, 'a tensor\'s stride', stride);
    if (size.length !== stride.length) throw bad(op, `a tensor has size (${size.join(', ')}) but stride (${stride.join(', ')})`);
    let numel = 1;
    for (const d of size) numel *= d;
    if (!Number.isSafeInteger(numel)) throw bad(op, `a tensor of size (${size.join(', ')}) has too many elements`);
    if (numel > 0) {
      const last = size.reduce((n, d, i) => n + (d - 1) * stride[i], offset);
      if (!(last < storage.numel)) {
        throw bad(op, `a tensor of size (${size.join(', ')}), stride (${stride.join(', ')}) and offset ${offset} reads ` +
          `element ${last} of storage '${storage.key}', which has ${storage.numel}`);
      }
    }
    const t = storage.base.asStrided(size, stride, offset);
    this.made.push(t);
    return t;
  }

  metaTensor(dtype, size, stride) {
    const { op } = this;
    if (!DTYPE_NAMES.includes(dtype)) throw bad(op, `a meta tensor's dtype must be a torch dtype, not ${typeOf(dtype)}`);
    intList(op, 'a tensor\'s size', size);
    intList(op, 'a tensor\'s stride', stride);
    const t = this.wt.emptyStrided(size, stride, { dtype, device: 'meta' });
    this.made.push(t);
    return t;
  }

  setRequiresGrad(t, flag) {
    if (!(t instanceof this.wt.Tensor)) throw bad(this.op, `a parameter's data must be a tensor, not ${typeOf(t)}`);
    if (typeof flag !== 'boolean') throw bad(this.op, `requires_grad must be a bool, not ${typeOf(flag)}`);
    if (flag) t.requiresGrad_(true);
    return t;
  }

  reduce(fn, args) {
    const { op } = this;
    const n = args.length;
    const arity = (lo, hi = lo) => {
      if (n < lo || n > hi) throw bad(op, `${fn.name} takes ${lo === hi ? lo : `${lo} to ${hi}`} arguments, the file gives ${n}`);
    };
    switch (fn) {
      case G['collections.OrderedDict']: {
        arity(0);
        const d = Object.create(null);
        ORDERED.add(d);
        return d;
      }
      case G['torch._utils._rebuild_tensor_v2']: {
        // (storage, offset, size, stride, requires_grad, backward_hooks[, metadata])
        arity(6, 7);
        if (!emptyDict(args[5]) || (n === 7 && !emptyDict(args[6]))) {
          throw bad(op, 'a tensor saved with backward hooks or Python attributes (weft reads neither)');
        }
        return this.setRequiresGrad(this.tensor(...args.slice(0, 4)), args[4]);
      }
      case G['torch._utils._rebuild_tensor']: arity(4); return this.tensor(...args);
      case G['torch._utils._rebuild_parameter']:
      case G['torch._utils._rebuild_parameter_with_state']: // (PyTorch 2: + the Parameter's attributes)
        arity(fn === G['torch._utils._rebuild_parameter'] ? 3 : 4);
        if (!emptyDict(args[2])) throw bad(op, 'a parameter saved with backward hooks (weft reads none)');
        if (n === 4 && !emptyDict(args[3])) throw bad(op, 'a parameter saved with Python attributes (weft reads none)');
        return this.setRequiresGrad(args[0], args[1]);
      case G['torch._utils._rebuild_meta_tensor_no_storage']:
        arity(4);
        return this.setRequiresGrad(this.metaTensor(args[0], args[1], args[2]), args[3]);
      case G['torch.Size']:
        arity(1);
        return intList(op, 'torch.Size', args[0]).slice();
      default:
        throw bad(op, `the file calls ${typeOf(fn)}, which is not a function weft runs`);
    }
  }

  newObj(cls, args) {
    if (cls !== G['torch.nn.parameter.Parameter']) throw bad(this.op, `the file makes an object of ${typeOf(cls)}`);
    if (args.length < 1 || args.length > 2) throw bad(this.op, `Parameter takes 1 or 2 arguments, the file gives ${args.length}`);
    return this.setRequiresGrad(args[0], args.length === 2 ? args[1] : true);
  }

  // OrderedDict's attributes (a state dict's _metadata) become
  // non-enumerable properties; wt.save writes them back.
  build(obj, state) {
    const { op } = this;
    if (!ORDERED.has(obj)) throw bad(op, `BUILD of ${typeOf(obj)}: weft builds only an OrderedDict's attributes`);
    if (!isDict(state)) throw bad(op, `an OrderedDict's attributes must be a dict, not ${typeOf(state)}`);
    for (const [k, v] of Object.entries(state)) {
      if (Object.hasOwn(obj, k)) throw bad(op, `an OrderedDict's attribute ${JSON.stringify(k)} is also one of its keys`);
      Object.defineProperty(obj, k, { value: v, writable: true, configurable: true, enumerable: false });
    }
  }

  hooks() {
    return {
      op: this.op,
      findGlobal: (m, n) => findGlobal(this.op, m, n),
      persistentLoad: (pid) => this.persistentLoad(pid),
      reduce: (fn, args) => this.reduce(fn, args),
      newObj: (cls, args) => this.newObj(cls, args),
      build: (obj, state) => this.build(obj, state),
    };
  }

  // The tensors the result holds stay; the storages' base tensors, tensors
  // the pickle made and dropped, and everything after an error go.
  finish(kept) {
    for (const t of this.made) if (!kept.has(t)) t.dispose();
  }
}

const PICKLE_MAGIC = [0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];

function notZip(op, u8) {
  if (u8.length >= PICKLE_MAGIC.length && PICKLE_MAGIC.every((b, i) => u8[i] === b)) {
    return bad(op, 'this is a legacy (non-zip) torch.save file, from PyTorch before 1.6 or saved with ' +
      '_use_new_zipfile_serialization=False; weft reads the zip format: load it in PyTorch and torch.save it again');
  }
  if (u8.length > 0 && u8[0] === 0x80) return bad(op, 'this is a bare pickle, not a torch.save zip archive');
  if (u8.length >= 4 && u8[0] === 0x50 && u8[1] === 0x4b) return null;
  return bad(op, `not a torch.save file (a zip archive starts with PK, this one with ${[...u8.slice(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ') || 'nothing'})`);
}

function openArchive(op, u8) {
  const refused = notZip(op, u8);
  if (refused) throw refused;
  const zip = readZip(u8, op);
  const first = zip.entries.keys().next().value;
  const slash = first === undefined ? -1 : first.indexOf('/');
  const prefix = slash > 0 ? first.slice(0, slash) : null;
  if (prefix !== null && zip.entries.has(`${prefix}/constants.pkl`)) {
    throw bad(op, 'this is a TorchScript archive (torch.jit.save); weft reads torch.save files');
  }
  if (prefix === null || !zip.entries.has(`${prefix}/data.pkl`)) {
    throw bad(op, `not a torch.save archive: no ${prefix ?? '<archive>'}/data.pkl`);
  }
  return { zip, prefix };
}

function checkFormat(op, zip, prefix) {
  const text = (name) => (zip.entries.has(name) ? new TextDecoder().decode(zip.read(name)).trim() : null);
  const version = text(`${prefix}/version`) ?? text(`${prefix}/.data/version`);
  if (version !== null && !/^[1-9]\d{0,2}$/.test(version)) throw bad(op, `unreadable format version ${JSON.stringify(version.slice(0, 20))}`);
  const order = text(`${prefix}/byteorder`);
  if (order !== null && order !== 'little' && order !== 'big') throw bad(op, `unknown byteorder ${JSON.stringify(order.slice(0, 20))}`);
  return order === 'big';
}

function loadBytes(wt, deps, input, op) {
  let u8 = toBytes(input, op);
  // a view of weft's own memory would move when loading allocates
  if (u8.buffer === deps.buffer()) u8 = u8.slice();
  const { zip, prefix } = openArchive(op, u8);
  const swap = checkFormat(op, zip, prefix);
  const loader = new Loader(wt, deps, op, zip, prefix);
  loader.swap = swap;
  const kept = new Set();
  try {
    const value = unpickle(zip.read(`${prefix}/data.pkl`), loader.hooks());
    const held = new Set();
    checkGraph(value, op, (leaf) => {
      if (!(leaf instanceof wt.Tensor || leaf instanceof Uint8Array)) throw bad(op, `the file holds ${typeOf(leaf)} as a value`);
      held.add(leaf);
    });
    for (const t of held) kept.add(t);
    return value;
  } finally {
    loader.finish(kept);
  }
}

// ---- inputs: bytes now, or a Response / Blob / File later ----

const isBlobLike = (v) => v !== null && typeof v === 'object' && typeof v.arrayBuffer === 'function' &&
  !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer);

/**
 * Calls read(bytes) on the bytes of input: at once for an ArrayBuffer, a
 * TypedArray, a DataView or a Node Buffer; for a fetch Response, a Blob or a
 * File, a Promise of read's result.
 */
export function withBytes(input, op, read) {
  if (!isBlobLike(input)) {
    const bytes = input instanceof ArrayBuffer || ArrayBuffer.isView(input) ||
      (typeof SharedArrayBuffer === 'function' && input instanceof SharedArrayBuffer);
    if (!bytes) {
      throw new WeftError('TypeError', `${op}(): argument 'bytes' must be an ArrayBuffer, a TypedArray, a DataView, ` +
        `a Blob or a Response, not ${input === null ? 'null' : typeof input === 'object' ? `a ${input.constructor?.name ?? 'object'}` : typeof input}`);
    }
    return read(input);
  }
  if (input.ok === false) {
    return Promise.reject(bad(op, `the response is ${input.status} ${input.statusText ?? ''}`.trim() +
      (input.url ? ` (${input.url})` : '')));
  }
  return Promise.resolve().then(() => input.arrayBuffer()).then(read, (e) => {
    throw new WeftError('InvalidArgument', `${op}: could not read the bytes: ${e?.message ?? e}`);
  });
}

// ---- writing ----

// Walks obj once (types, depth, cycles) and gathers its tensors' storages:
// one per weft storage, as long as its tensors reach.
class Saver {
  constructor(wt, deps) {
    this.wt = wt;
    this.deps = deps;
    this.storages = new Map(); // storage address -> { key, dtype, numel, address }
    this.tensorStorage = new Map(); // tensor -> storage (cpu, non-empty)
    this.heights = new Map(); // container -> its height
  }

  // The height of v (0 for a leaf); a container met again is not walked
  // again (it is memoized when written, as Python's pickler does).
  collect(v, path, ancestors) {
    const { wt } = this;
    if (v instanceof wt.Tensor) {
      this.collectTensor(v, path);
      return 0;
    }
    if (v === null || ['boolean', 'string', 'bigint', 'number'].includes(typeof v) || v instanceof Uint8Array) return 0;
    const tooDeep = () => bad('save', `${path}: lists and objects nested more than ${MAX_DEPTH} deep`);
    if (this.heights.has(v)) {
      if (ancestors.size + this.heights.get(v) >= MAX_DEPTH) throw tooDeep();
      return this.heights.get(v);
    }
    const kids = containerItems(v, path);
    if (ancestors.has(v)) throw bad('save', `${path} contains itself`);
    if (ancestors.size >= MAX_DEPTH) throw tooDeep();
    ancestors.add(v);
    let h = 0;
    for (const [k, item] of kids) h = Math.max(h, this.collect(item, `${path}${k}`, ancestors) + 1);
    ancestors.delete(v);
    this.heights.set(v, h);
    return h;
  }

  collectTensor(t, path) {
    if (t.isDisposed) throw bad('save', `${path} has been disposed`);
    if (t.device === 'meta' || t.numel() === 0) return;
    const es = t.elementSize();
    const address = t.dataPtr() - t.storageOffset() * es;
    const shape = t.shape;
    const stride = t.stride();
    const reach = shape.reduce((n, d, i) => n + (d - 1) * stride[i], t.storageOffset()) + 1;
    let s = this.storages.get(address);
    if (!s) {
      s = { key: null, dtype: t.dtype, numel: 0, address };
      this.storages.set(address, s);
    } else if (s.dtype !== t.dtype) {
      throw bad('save', `${path} is a ${t.dtype} view of a ${s.dtype} storage another tensor holds ` +
        '(PyTorch cannot save one storage as two dtypes)');
    }
    s.numel = Math.max(s.numel, reach);
    this.tensorStorage.set(t, s);
  }

  // Keys '0', '1', ... in the order the pickle first meets each storage.
  key(s) {
    if (s.key === null) s.key = String(this.nextKey = (this.nextKey ?? -1) + 1);
    return s.key;
  }

  write(p, v) {
    const { wt } = this;
    if (v instanceof wt.Tensor) return p.memoized(v, () => this.writeTensor(p, v));
    if (v === null) return p.none();
    if (typeof v === 'boolean') return p.bool(v);
    if (typeof v === 'string') return p.str(v);
    if (typeof v === 'bigint') return p.int(v);
    if (typeof v === 'number') return Number.isInteger(v) && !Object.is(v, -0) ? p.int(v) : p.float(v);
    if (v instanceof Uint8Array) return p.bytes(v);
    // containers once each, fetched from the memo when met again
    if (Array.isArray(v)) return p.memoized(v, () => p.list(v, (x) => this.write(p, x)));
    return p.memoized(v, () => this.writeDict(p, v));
  }

  writeDict(p, v) {
    const entries = v instanceof Map ? [...v] : Object.entries(v);
    const meta = v instanceof Map ? undefined : Object.getOwnPropertyDescriptor(v, '_metadata');
    const writeKey = (k) => this.write(p, k);
    const writeValue = (x) => this.write(p, x);
    if (!meta || meta.enumerable) return p.dict(entries, writeKey, writeValue);
    // an OrderedDict with its _metadata, as a PyTorch state dict
    this.orderedDict(p);
    p.setItems(entries, writeKey, writeValue);
    p.dict([['_metadata', meta.value]], writeKey, writeValue);
    return p.build();
  }

  orderedDict(p) {
    p.global('collections', 'OrderedDict');
    p.tuple([], null);
    p.reduce();
  }

  // _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, backward_hooks),
  // the storage a persistent id; a meta tensor has no storage.
  writeTensor(p, t) {
    const call = (fns) => p.tuple(fns, (f) => f());
    const ints = (xs) => p.tuple(xs, (x) => p.int(x));
    if (t.device === 'meta') {
      p.global('torch._utils', '_rebuild_meta_tensor_no_storage');
      call([() => p.global('torch', t.dtype), () => ints(t.shape), () => ints(t.stride()), () => p.bool(t.requiresGrad)]);
      return p.reduce();
    }
    let s = this.tensorStorage.get(t);
    if (!s) { // empty: a storage of its own, of no elements
      s = { key: null, dtype: t.dtype, numel: 0, address: null };
      this.emptyStorages.push(s);
    }
    p.global('torch._utils', '_rebuild_tensor_v2');
    p.mark();
    call([() => p.str('storage'), () => p.global('torch', STORAGE_OF[s.dtype]), () => p.str(this.key(s)),
      () => p.str('cpu'), () => p.int(s.numel)]);
    p.persid();
    p.int(t.storageOffset());
    ints(t.shape);
    ints(t.stride());
    p.bool(t.requiresGrad);
    this.orderedDict(p);
    p.endTuple();
    return p.reduce();
  }

  save(obj) {
    this.collect(obj, 'obj', new Set());
    this.emptyStorages = [];
    const p = new Pickler();
    p.proto();
    this.write(p, obj);
    const pkl = p.stop();
    const stores = [...this.storages.values(), ...this.emptyStorages].filter((s) => s.key !== null);
    stores.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)); // torch's order: keys as strings
    const records = [{ name: `${ARCHIVE}/data.pkl`, data: pkl }];
    for (const s of stores) {
      const size = s.numel * SIZE_OF[s.dtype];
      records.push({
        name: `${ARCHIVE}/data/${s.key}`, size,
        fill: (out, at) => { if (size) out.set(new Uint8Array(this.deps.buffer(), s.address, size), at); },
      });
    }
    records.push({ name: `${ARCHIVE}/version`, data: new TextEncoder().encode(VERSION) });
    return writeZip(records);
  }
}

// [key text for paths, item] pairs of a list, an object or a Map; anything
// else is refused, naming where it is.
function containerItems(v, path) {
  if (Array.isArray(v)) return v.map((x, i) => [`[${i}]`, x]);
  if (v instanceof Map) {
    for (const k of v.keys()) {
      if (!(typeof k === 'string' || typeof k === 'bigint' || (typeof k === 'number' && Number.isInteger(k)))) {
        throw new WeftError('TypeError', `save: ${path} has the key ${describe(k)}; keys must be strings or integers`);
      }
    }
    return [...v].map(([k, x]) => [`[${JSON.stringify(String(k))}]`, x]);
  }
  if (typeof v === 'object' && v !== null && [Object.prototype, null].includes(Object.getPrototypeOf(v))) {
    const items = Object.entries(v).map(([k, x]) => [`[${JSON.stringify(k)}]`, x]);
    const meta = Object.getOwnPropertyDescriptor(v, '_metadata');
    if (meta && !meta.enumerable) items.push(['._metadata', meta.value]);
    return items;
  }
  throw new WeftError('TypeError', `save: ${path} is ${describe(v)}; a checkpoint holds tensors, objects, arrays, ` +
    'Maps, numbers, bigints, strings, booleans, null and Uint8Arrays (bytes)');
}

function describe(v) {
  if (v === undefined) return 'undefined';
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  if (typeof v === 'object' && v !== null) return `a ${v.constructor?.name ?? 'object'}`;
  if (typeof v === 'function') return 'a function';
  return `${typeof v} ${String(v)}`;
}

/** Adds wt.load and wt.save. deps: { buffer } (the wasm memory's ArrayBuffer, now). */
export function installCheckpoint(wt, deps) {
  wt.load = function load(bytes) {
    return withBytes(bytes, 'load', (b) => loadBytes(wt, deps, b, 'load'));
  };
  wt.save = function save(obj) {
    if (arguments.length > 1) throw new WeftError('TypeError', `save() takes 1 argument (the object) but ${arguments.length} were given`);
    return new Saver(wt, deps).save(obj);
  };
  return wt;
}
