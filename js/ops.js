// The dispatcher from JS: every operator of the C op table, read at init from
// the registry (names + schemas), becomes
//   wt.ops.call(name, ...args)     a boxed call by name ('aten::add.Tensor', 'add.Tensor', 'add')
//   wt.<camelName>(...args)        unless the API already has that name
//   t.<camelName>(...args)         for ops with a Tensor `self` (t is self)
//   t.<name>_(...args)             in-place overloads; { out } picks the .out overload
// plus wt.ops.list/schema/table, wt.trace(fn) and wt.explain(op, ...args).
// Arguments are converted by the schema; a trailing plain object holds keyword
// arguments (camelCase or snake_case). Calls go through the typed entry point
// weft_wasm_op_<cname> when one exists, else through the boxed stack (the ABI
// of both: src/wasm/exports.c). readOpRegistry gives core.js the same typed
// entry points for its hand-written methods and factories.

const INT64_MIN_AS_DOUBLE = -(2 ** 63);
const IV_TAGS = ['None', 'Tensor', 'int', 'float', 'bool', 'int[]', 'float[]', 'Tensor[]', 'str',
  'ScalarType', 'MemoryFormat', 'Device'];

const snake = (k) => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
// a leading _ stays: PyTorch's private ops keep it (_conv2d_fused is wt._conv2dFused)
export const camel = (name) => name.replace(/(?<=.)_([a-z0-9])/g, (_, c) => c.toUpperCase());

// An op table name in one of torch's namespaces: linalg_solve is torch.linalg.solve, so
// wt.linalg.solve (no method, as torch.Tensor has none). [namespace, name in it] or null.
export const NAMESPACES = ['linalg'];
export function namespaced(base) {
  const ns = NAMESPACES.find((n) => base.startsWith(`${n}_`));
  return ns ? [ns, camel(base.slice(ns.length + 1))] : null;
}

// Function-only in PyTorch although their first argument is a Tensor self.
// (scripts/gen_types.mjs declares the functions and methods by these rules too.)
export const NOT_METHODS = new Set(['empty_like', 'zeros_like', 'ones_like', 'full_like', 'rand_like',
  'randn_like',
  // torch.nn.functional only (issue 23): the activations (their in-place forms stay methods, x.elu_(),
  // the only generated spelling of them), their backward ops, the regression losses, dropout
  ...['elu', 'hardtanh', 'relu6', 'leaky_relu', 'softplus', 'silu', 'mish', 'hardswish', 'hardsigmoid',
    'log_sigmoid'].flatMap((n) => [n, `${n}_backward`]),
  'l1_loss', 'smooth_l1_loss', 'smooth_l1_loss_backward', 'huber_loss', 'huber_loss_backward',
  'dropout', 'dropout_', 'feature_dropout', 'feature_dropout_',
  // torch.cdist is a function only (torch.Tensor has no cdist)
  'cdist']);

// A malloc'd JSON string from C, parsed and freed.
// (The op registry is half a megabyte: the glue's UTF8ToString looks for the
// NUL a byte at a time in JS, ten times slower at init than indexOf and one
// TextDecoder call on a copy, which shared memory needs anyway.)
const utf8 = new TextDecoder();
function readJson(M, fail, ptr, op) {
  if (!ptr) fail(op);
  const heap = new Uint8Array(M.wasmMemory ? M.wasmMemory.buffer : M.HEAPU8.buffer);
  const text = utf8.decode(heap.slice(ptr, heap.indexOf(0, ptr)));
  M._free(ptr);
  return JSON.parse(text);
}

// How each kind's value becomes its one wasm parameter (ABI: src/wasm/exports.c).
// Made once per argument of an op: `name` is the op's (a disposed tensor's error
// names it), `slot` the argument slot of the scratch area of a list or Scalar.
// The values are already checked (convert() below, or core.js):
//   TENSOR, MTENSOR, OPT_TENSOR  a handle, a Tensor or null
//   TENSOR_LIST, OPT_TENSOR_LIST { tensors }: an array of at most argSlots.maxList
//                                Tensors (and nulls for Tensor?[])
//   INT                          an integer number
//   OPT_INT                      an integer number or null
//   INT_LIST                     an array of at most argSlots.maxList integer numbers
//   OPT_INT_LIST                 the same, or null
//   DOUBLE                       a number, or a Scalar as convert() gives it ({ tag, v })
//   OPT_DOUBLE                   a number or null (passed as NaN)
//   BOOL                         a boolean
//   BOOL_LIST                    an array of at most argSlots.maxList booleans (passed as 0 and 1)
//   SCALAR                       { tag, v }
//   OPT_SCALAR                   { tag, v } or null
//   DTYPE, MEMORY_FORMAT, DEVICE an enum value or null
const same = (v) => v;
const TO_PARAM = {
  TENSOR: (argSlots, name) => (v) => (v === null ? 0 : typeof v === 'number' ? v : v.handle(name)),
  INT: () => same,
  OPT_INT: () => (v) => (v === null ? INT64_MIN_AS_DOUBLE : v),
  INT_LIST: (argSlots, name, slot) => (v) => argSlots.writeList(slot, v),
  TENSOR_LIST: (argSlots, name, slot) => (v) => argSlots.writeList(slot, v.tensors.map((t) => (t === null ? 0 : t.handle(name)))),
  OPT_INT_LIST: (argSlots, name, slot) => (v) => (v === null ? 0 : argSlots.writeList(slot, v)), // None: NULL
  DOUBLE: () => (v) => (v !== null && typeof v === 'object' ? v.v : v),
  OPT_DOUBLE: () => (v) => (v === null ? NaN : v),
  BOOL: () => (v) => (v ? 1 : 0),
  BOOL_LIST: (argSlots, name, slot) => (v) => argSlots.writeList(slot, v.map((b) => (b ? 1 : 0))),
  SCALAR: (argSlots, name, slot) => (v) => argSlots.writeScalar(slot, v.tag, v.v),
  OPT_SCALAR: (argSlots, name, slot) => (v) => (v === null ? 0 : argSlots.writeScalar(slot, v.tag, v.v)), // None: NULL
  DTYPE: () => (v) => (v === null ? -1 : v),
  DEVICE: () => (v) => (v === null ? 0 : v), // None is cpu
};
TO_PARAM.MTENSOR = TO_PARAM.OPT_TENSOR = TO_PARAM.TENSOR;
TO_PARAM.MEMORY_FORMAT = TO_PARAM.DTYPE;
TO_PARAM.OPT_TENSOR_LIST = TO_PARAM.TENSOR_LIST;
// The kinds whose value goes through an argument slot of the scratch area.
const SLOT_KINDS = new Set(['INT_LIST', 'OPT_INT_LIST', 'TENSOR_LIST', 'OPT_TENSOR_LIST', 'BOOL_LIST', 'SCALAR',
  'OPT_SCALAR']);
// The list kinds: longer lists than a slot holds go boxed.
const LIST_KINDS = new Set(['INT_LIST', 'OPT_INT_LIST', 'TENSOR_LIST', 'OPT_TENSOR_LIST', 'BOOL_LIST']);

// fn(p0(a), p1(b), ...) with the op's own arity. A small closure per op, so that
// where a method calls one op V8 inlines it, its converters and the wasm call
// (a loop over the kinds would leave one shared, slower call to wasm).
function withParams(fn, p) {
  const [p0, p1, p2, p3, p4, p5] = p;
  switch (p.length) {
    case 0: return () => fn();
    case 1: return (a) => fn(p0(a));
    case 2: return (a, b) => fn(p0(a), p1(b));
    case 3: return (a, b, c) => fn(p0(a), p1(b), p2(c));
    case 4: return (a, b, c, d) => fn(p0(a), p1(b), p2(c), p3(d));
    case 5: return (a, b, c, d, e) => fn(p0(a), p1(b), p2(c), p3(d), p4(e));
    case 6: return (a, b, c, d, e, f) => fn(p0(a), p1(b), p2(c), p3(d), p4(e), p5(f));
    default: return (...v) => fn(...v.map((x, i) => p[i](x)));
  }
}

// The caller of weft_wasm_op_<info.cname>: one value per argument, by the kinds
// above; returns what C returns (a new handle or 0, a status). null when JS
// cannot call it typed (a str argument, more lists and Scalars than slots).
function entryPoint(M, info, argSlots) {
  const fn = M[`_weft_wasm_op_${info.cname}`];
  const kinds = kindsOf(info);
  if (typeof fn !== 'function' || kinds.length !== info.args.length || !kinds.every((kd) => kd in TO_PARAM)) {
    return null;
  }
  let slot = 0;
  const params = kinds.map((kd) =>
    TO_PARAM[kd](argSlots, info.base, SLOT_KINDS.has(kd) ? slot++ : -1));
  return slot <= argSlots.count ? withParams(fn, params) : null;
}

// The kind of each argument of an op-table line, from its "KIND,KIND," text.
function kindsOf(info) {
  return info.kinds.split(',').filter(Boolean);
}

// The registry (weft_wasm_ops_json, read once at init) and the typed entry point
// of each op-table line, by cname. k: { WeftError, fail, argSlots }, argSlots the
// scratch area's argument slots: { count, maxList, writeList(slot, list),
// writeScalar(slot, tag, v) } (the writers return the slot's address).
export function readOpRegistry(M, k) {
  const infos = readJson(M, k.fail, M._weft_wasm_ops_json(), 'ops');
  // Each caller is made on its first use: init() pays for none of the ~600
  // (startup, issue 26); get(cname) as a Map's.
  const byCname = new Map();
  for (const info of infos) if (info.cname) byCname.set(info.cname, info);
  const made = new Map();
  const entries = {
    get(cname) {
      let e = made.get(cname);
      if (e === undefined && byCname.has(cname)) {
        e = entryPoint(M, byCname.get(cname), k.argSlots);
        made.set(cname, e);
      }
      return e;
    },
  };
  // For core.js: a typed entry point it cannot do without.
  function entry(cname) {
    const e = entries.get(cname);
    if (!e) {
      throw new k.WeftError('InternalError', `ops: the wasm module has no typed entry point weft_wasm_op_${cname}`);
    }
    return e;
  }
  return { infos, entries, entry };
}

// The result of an op with several returns, from its values in order: named
// returns make an object with those names, also iterable and indexable (as
// torch.return_types); unnamed ones an array. One prototype per set of names.
const tupleProtos = new Map();
export function tupleMaker(names) {
  if (!names.every((n) => n)) return (vals) => vals;
  const keys = names.map(camel);
  const key = keys.join(',');
  let proto = tupleProtos.get(key);
  if (!proto) {
    proto = {
      * [Symbol.iterator]() { for (const n of keys) yield this[n]; },
    };
    keys.forEach((n, i) => Object.defineProperty(proto, i, { get() { return this[n]; } }));
    Object.defineProperty(proto, 'length', { value: keys.length });
    tupleProtos.set(key, proto);
  }
  return (vals) => {
    const o = Object.create(proto);
    keys.forEach((n, i) => { o[n] = vals[i]; });
    return o;
  };
}

// The argument a method's `this` fills (-1: not a method).
const selfIndexOf = (info) => info.args.findIndex((a) => a.name === 'self' && a.type === 'Tensor' && !a.list);

export function installOps(api, k) {
  const { M, Tensor, WeftError, wrap, fail, typeName, jsTypeName, didYouMean, isOptions, refreshMeta, registry, defaultDtype } = k;

  // ---- the registry ----

  function makeOp(info, i) {
    const op = {
      ...info,
      index: i,
      handle: M._weft_wasm_op_at(i),
      positional: info.args.filter((a) => !a.kwargOnly),
      selfIndex: selfIndexOf(info),
      // the returned tensor is this argument (in-place and out=)
      returnsArg: -1,
      writes: info.args.flatMap((a, j) => (a.write && a.type === 'Tensor' && !a.list ? [j] : [])),
    };
    op.alone = [op];
    // the positional parameters, with and without a method's self (bind's slots)
    op.slots = info.args.flatMap((a, j) => (a.kwargOnly ? [] : [j]));
    op.slotsAfterSelf = op.slots.filter((j) => j !== op.selfIndex);
    const r0 = info.returns[0];
    if (info.returns.length === 1 && r0 && r0.alias) {
      op.returnsArg = info.args.findIndex((a) => a.write && a.alias === r0.alias);
    }
    // several returns: each one's out= argument (-1: a new tensor), and the result's shape
    op.returnsArgs = info.returns.map((r) => (r.alias ? info.args.findIndex((a) => a.write && a.alias === r.alias) : -1));
    op.outArgs = info.args.flatMap((a, j) => (a.kwargOnly && a.write && a.type === 'Tensor' && !a.list ? [j] : []));
    op.isOut = op.outArgs.length > 0;
    op.tuple = info.tupleReturn ? tupleMaker(info.returns.map((r) => r.name)) : null;
    op.defaults = info.args.map((a) => (a.default ? convertDefault(op, a) : undefined));
    // bindPlain's starting values; null: bind's general path (an int list may take varargs)
    op.fill = op.slots.some((j) => info.args[j].list && info.args[j].type !== 'Tensor') ? null
      : info.args.map((a, j) => (a.default ? op.defaults[j] : a.optional ? null : MISSING));
    op.typed = typedInvoker(op);
    return op;
  }

  // ---- JS values -> converted values (see invoke for their forms) ----

  const DENY = Symbol('mismatch');
  const MISSING = Symbol('missing');
  // Why the last bind failed, formatted only when the error is thrown
  // (overload resolution fails often on its way to a match).
  let why = () => '';
  // A Tensor argument given an array: the fix, said first (see resolve).
  let hint = null;
  const deny = (op, a, v, pos) => {
    why = () => `${op.base}(): argument '${a.name}'${pos >= 0 ? ` (position ${pos + 1})` : ''} must be ` +
      `${argText(a)}, not ${typeName(v)}`;
    if (a.type === 'Tensor' && !a.list && (Array.isArray(v) || ArrayBuffer.isView(v)) && !hint) {
      hint = `${op.base}(): expected a Tensor or a number for '${a.name}'; got ${typeName(v)} — wrap it ` +
        'with wt.tensor()';
    }
    return DENY;
  };
  // What a schema type accepts, in JS words.
  const TYPE_TEXT = {
    Tensor: 'a Tensor', int: 'an integer', SymInt: 'an integer', float: 'a number', bool: 'a boolean',
    Scalar: 'a number', ScalarType: "a dtype name such as 'float32'",
    MemoryFormat: "a memory format name such as 'channels_last'", Device: "a device name ('cpu', 'meta' or 'webgpu')",
    str: 'a string',
  };
  function argText(a) {
    let t;
    if (!a.list) t = TYPE_TEXT[a.type] ?? a.text;
    else if (a.type === 'Tensor') t = 'an array of Tensors';
    else if (a.type === 'bool') t = a.listSize > 0 ? `an array of ${a.listSize} booleans` : 'an array of booleans';
    else if (a.listSize > 0) t = `an integer or an array of ${a.listSize} integers`;
    else t = 'an array of integers';
    return a.optional ? `${t} or null` : t;
  }
  const isInt = (v) => (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';
  const isTensor = (v) => v instanceof Tensor;
  const { checkLong, checkIntArg } = k;

  function enumArg(kind, fn, v, op, a) {
    return k.lookup(kind, fn, v, op.base, a.name);
  }

  // One value for argument a. `lenient`: numbers stand for 0-dim tensors.
  function convert(op, a, v, pos, lenient) {
    if (v === undefined || v === null) {
      return a.optional || a.type === 'Generator' || a.type === 'Layout' ? null : deny(op, a, v, pos);
    }
    if (a.list) return convertList(op, a, v, pos);
    switch (a.type) {
      case 'Tensor':
        if (isTensor(v)) return a.name === 'index' || a.name === 'target' ? k.indexArg(op.base, a.name, v) : v;
        if (lenient && (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint')) {
          return { wrapNumber: checkLong(v) };
        }
        if (a.name === 'index' && (Array.isArray(v) || ArrayBuffer.isView(v))) return k.indexArg(op.base, a.name, v);
        return deny(op, a, v, pos);
      case 'int': case 'SymInt':
        return isInt(v) ? Number(checkIntArg(v)) : deny(op, a, v, pos);
      case 'float':
        return typeof v === 'number' || typeof v === 'bigint' ? Number(v) : deny(op, a, v, pos);
      case 'bool':
        return typeof v === 'boolean' ? v : deny(op, a, v, pos);
      case 'Scalar':
        if (typeof v === 'boolean') return { tag: 2, v: v ? 1 : 0 };
        if (typeof v === 'bigint') return { tag: 0, v: Number(checkLong(v)) };
        // an integer beyond int64 goes as a float (JS cannot tell 1e300 from an int)
        if (typeof v === 'number') return { tag: Number.isInteger(v) && v < 2 ** 63 && v >= -(2 ** 63) ? 0 : 1, v };
        return deny(op, a, v, pos);
      case 'ScalarType':
        return typeof v === 'string' ? enumArg('dtype', M._weft_wasm_dtype_from_name, v, op, a) : deny(op, a, v, pos);
      case 'MemoryFormat':
        return typeof v === 'string'
          ? enumArg('memory_format', M._weft_wasm_memory_format_from_name, v, op, a) : deny(op, a, v, pos);
      case 'Device':
        return typeof v === 'string' ? enumArg('device', M._weft_wasm_device_from_name, v, op, a) : deny(op, a, v, pos);
      case 'str':
        return typeof v === 'string' ? v : deny(op, a, v, pos);
      default:
        return deny(op, a, v, pos);
    }
  }

  function convertList(op, a, v, pos) {
    if (a.type === 'Tensor') {
      if (!Array.isArray(v)) return deny(op, a, v, pos);
      const bad = v.findIndex((x) => !isTensor(x) && !(a.elemOptional && x === null));
      if (bad >= 0) { // PyTorch's words for torch.cat([t, 1])
        why = () => `${op.base}(): expected Tensor as element ${bad} in argument '${a.name}', but got ${jsTypeName(v[bad])}`;
        return DENY;
      }
      return { tensors: v };
    }
    if (a.type === 'bool') return Array.isArray(v) && v.every((b) => typeof b === 'boolean') ? v : deny(op, a, v, pos);
    if (a.type !== 'int' && a.type !== 'SymInt') return deny(op, a, v, pos);
    // int[N] takes a single int too, as in PyTorch
    if (isInt(v) && a.listSize > 0) return new Array(a.listSize).fill(Number(v));
    if (!Array.isArray(v) && !(ArrayBuffer.isView(v) && !(v instanceof DataView))) return deny(op, a, v, pos);
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!isInt(v[i])) {
        why = () => `${op.base}(): argument '${a.name}' must be ${argText(a)}, but found an element of type ` +
          `${jsTypeName(v[i])} at pos ${i}`;
        return DENY;
      }
      out[i] = Number(v[i]);
    }
    return out;
  }

  function convertDefault(op, a) {
    const { tag, value } = a.default;
    if (tag === 'None') return null;
    if (a.type === 'Scalar') {
      return { tag: tag === 'float' ? 1 : tag === 'bool' ? 2 : 0, v: typeof value === 'boolean' ? +value : value };
    }
    if (a.type === 'float') return value;
    const c = convert(op, a, value, -1, false);
    if (c === DENY) throw new WeftError('InternalError', `ops: cannot use the default of ${op.name} ${a.name}`);
    return c;
  }

  // ---- binding: positional values + keywords (+ the method's self) -> values per argument ----

  function bind(op, pos, kw, self, lenient) {
    if (!kw && op.fill && (self === undefined || op.selfIndex >= 0) &&
        pos.length <= (self !== undefined ? op.slotsAfterSelf : op.slots).length) {
      return bindPlain(op, pos, self, lenient);
    }
    const args = op.args;
    const vals = new Array(args.length);
    const given = new Array(args.length).fill(false);
    let p = pos;
    if (self !== undefined) {
      if (op.selfIndex < 0) {
        why = () => `${op.name} has no Tensor self`;
        return DENY;
      }
      vals[op.selfIndex] = self;
      given[op.selfIndex] = true;
    }
    const slots = self !== undefined ? op.slotsAfterSelf : op.slots;
    // view(x, 2, 3): the values from an int-list parameter on, as varargs
    // (not when another int list follows: x.roll(1, 0) is shifts 1, dims 0)
    for (let j = 0; j < slots.length && j < p.length; j++) {
      const a = args[slots[j]];
      if (!a.list || (a.type !== 'int' && a.type !== 'SymInt')) continue;
      const rest = p.slice(j);
      if (rest.every(isInt) && !(a.listSize > 0 && rest.length === 1) &&
          slots.slice(j + 1).every((i) => (args[i].default || args[i].optional) && !args[i].list)) {
        p = [...p.slice(0, j), Array.from(rest, Number)];
      }
      break;
    }
    if (p.length > slots.length) {
      why = () => `${op.base}() takes ${slots.length} positional argument${slots.length === 1 ? '' : 's'} but ` +
        `${p.length} were given`;
      return DENY;
    }
    for (let j = 0; j < p.length; j++) {
      const i = slots[j];
      const c = convert(op, args[i], p[j], i, lenient);
      if (c === DENY) return DENY;
      vals[i] = c;
      given[i] = true;
    }
    if (kw) {
      for (const key of Object.keys(kw)) {
        // options are camelCase: memory_format is refused with the right spelling
        const i = key.includes('_') ? -1 : args.findIndex((a) => a.name === snake(key) || camel(a.name) === key); // UPLO
        const name = snake(key);
        if (name === 'out' && op.outArgs.length > 1 && !args.some((a) => a.name === 'out')) {
          if (!bindOuts(op, kw.out, vals, given)) return DENY;
          continue;
        }
        if (i < 0 || given[i]) {
          const named = args.filter((a) => a.kwargOnly || a.default || a.optional).map((a) => camel(a.name));
          const fix = didYouMean(key, named);
          // a misspelt option is the error to report, whichever overload was meant
          if (i < 0 && fix.startsWith(' (did you mean') && !hint) hint = `${op.base}() got an unexpected option '${key}'${fix}`;
          why = i < 0 ? () => `${op.base}() got an unexpected option '${key}'${fix}`
            : () => `${op.base}() got multiple values for argument '${name}'`;
          return DENY;
        }
        if (kw[key] === undefined) continue;
        const c = convert(op, args[i], kw[key], -1, lenient);
        if (c === DENY) return DENY;
        vals[i] = c;
        given[i] = true;
      }
    }
    for (let i = 0; i < args.length; i++) {
      if (given[i]) continue;
      if (args[i].default) vals[i] = op.defaults[i];
      else if (args[i].optional) vals[i] = null;
      else {
        why = () => `${op.base}() missing required argument '${args[i].name}' (position ${i + 1})`;
        return DENY;
      }
    }
    return vals;
  }

  // bind without options for an op with no int-list parameter (so no
  // varargs form): the values in their slots over a copy of op.fill, which
  // holds each argument's default, null, or MISSING. The common small-op
  // call, without bind's bookkeeping.
  function bindPlain(op, p, self, lenient) {
    const args = op.args;
    const vals = op.fill.slice();
    if (self !== undefined) vals[op.selfIndex] = self;
    const slots = self !== undefined ? op.slotsAfterSelf : op.slots;
    for (let j = 0; j < p.length; j++) {
      const i = slots[j];
      const c = convert(op, args[i], p[j], i, lenient);
      if (c === DENY) return DENY;
      vals[i] = c;
    }
    for (let i = 0; i < vals.length; i++) {
      if (vals[i] === MISSING) {
        why = () => `${op.base}() missing required argument '${args[i].name}' (position ${i + 1})`;
        return DENY;
      }
    }
    return vals;
  }

  // { out: [a, b] } for an op whose out= tensors have their own names (max.dim_max: max, max_values)
  function bindOuts(op, out, vals, given) {
    const n = op.outArgs.length;
    if (!Array.isArray(out) || out.length !== n || !out.every(isTensor)) {
      why = () => `${op.base}(): argument 'out' must be an array of ${n} Tensors, not ${typeName(out)}`;
      return false;
    }
    for (let j = 0; j < n; j++) {
      const i = op.outArgs[j];
      if (given[i]) {
        why = () => `${op.base}() got multiple values for argument '${op.args[i].name}'`;
        return false;
      }
      vals[i] = out[j];
      given[i] = true;
    }
    return true;
  }

  function splitKw(args) {
    const last = args[args.length - 1];
    if (args.length > 0 && isOptions(last) && !isTensor(last)) return [args.slice(0, -1), last];
    return [args, null];
  }

  // An overload as JS spells a call: (self: Tensor, dim: integer[] | null, keepdim = false, { dtype })
  const SHORT_TYPE = {
    Tensor: 'Tensor', int: 'integer', SymInt: 'integer', float: 'number', Scalar: 'number', bool: 'boolean',
    ScalarType: 'dtype', MemoryFormat: 'memoryFormat', Device: 'device', str: 'string',
  };
  function jsDefault(a) {
    const { tag, value } = a.default;
    if (tag === 'None') return 'null';
    return typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
  }
  function signatureOf(op) {
    const one = (a) => {
      const t = (SHORT_TYPE[a.type] ?? a.type) + (a.list ? '[]' : '') + (a.optional ? ' | null' : '');
      return `${camel(a.name)}${a.default ? ` = ${jsDefault(a)}` : `: ${t}`}`;
    };
    const pos = op.args.filter((a) => !a.kwargOnly).map(one);
    const kw = op.args.filter((a) => a.kwargOnly).map(one);
    return `(${[...pos, ...(kw.length ? [`{ ${kw.join(', ')} }`] : [])].join(', ')})`;
  }

  // Picks the overload the arguments fit: exact types first, then with numbers
  // standing for tensors. Throws PyTorch's TypeError otherwise.
  function resolve(title, cands, pos, kw, self) {
    let first = null;
    hint = null;
    for (let pass = 0; pass < 2; pass++) {
      for (let c = 0; c < cands.length; c++) {
        const vals = bind(cands[c], pos, kw, self, pass === 1);
        if (vals !== DENY) return [cands[c], vals];
        if (first === null) first = why;
      }
    }
    if (hint) throw new WeftError('TypeError', hint);
    if (cands.length === 1) throw new WeftError('TypeError', first());
    const got = [...(self !== undefined ? [self] : []), ...pos].map(jsTypeName);
    if (kw) for (const key of Object.keys(kw)) got.push(`${key}: ${jsTypeName(kw[key])}`);
    throw new WeftError('TypeError', `${title}() received an invalid combination of arguments - got ` +
      `(${got.join(', ')}), but expected one of:\n` + cands.map((op) => ` * ${signatureOf(op)}`).join('\n'));
  }

  // ---- calling ----

  // Numbers bound to Tensor arguments become 0-dim tensors: int64 / bool, and
  // floats in the default dtype unless a floating tensor takes part (PyTorch's wrapped
  // numbers do not promote within a category).
  function materialize(vals, temps) {
    let anyFloat = null;
    for (let i = 0; i < vals.length; i++) {
      const v = vals[i];
      if (!v || typeof v !== 'object' || isTensor(v)) continue;
      if (v.make) { // an index array or an int32 target (js/traps.js's indexArg)
        vals[i] = v.make();
        if (v.keep) temps.fix = v.fix;
        else temps.push(vals[i]);
        continue;
      }
      if (!('wrapNumber' in v)) continue;
      if (anyFloat === null) {
        anyFloat = vals.some((x) => isTensor(x) && /float/.test(x.dtype));
      }
      const n = v.wrapNumber;
      const dtype = typeof n === 'boolean' ? 'bool' : isInt(n) ? 'int64' : anyFloat ? 'float64' : defaultDtype();
      const t = api.full([], typeof n === 'boolean' ? n : Number(n), { dtype });
      temps.push(t);
      vals[i] = t;
    }
  }

  function hasWrap(vals) {
    for (let i = 0; i < vals.length; i++) {
      const v = vals[i];
      if (v !== null && typeof v === 'object' && !isTensor(v) && ('wrapNumber' in v || 'make' in v)) return true;
    }
    return false;
  }

  // boxed: always through the stack (ops.call); else the typed entry point when it fits.
  function invoke(op, vals, boxed = false) {
    const temps = hasWrap(vals) ? [] : null;
    try {
      if (temps) materialize(vals, temps);
      if (op.typed && !boxed) {
        const r = op.typed(vals);
        if (r !== undefined) return r;
      }
      return invokeBoxed(op, vals);
    } catch (e) {
      if (temps?.fix && e instanceof WeftError) e.message += temps.fix;
      throw e;
    } finally {
      if (temps) for (const t of temps) t.dispose();
      if (op.writes.length) refreshWritten(op, vals);
    }
  }

  // A written-to argument may have been resized or restrided (out=): the JS
  // object's cached shape/strides must follow, even when the op then failed.
  function refreshWritten(op, vals) {
    for (const i of op.writes) if (isTensor(vals[i])) refreshMeta(vals[i]);
  }

  // The typed entry point, or undefined when this call does not fit it (an int
  // list longer than an argument slot: the boxed call takes any length).
  function typedInvoker(op) {
    const call = op.cname ? registry.entries.get(op.cname) : null;
    if (!call) return null;
    const lists = kindsOf(op).flatMap((kd, i) => (LIST_KINDS.has(kd) ? [i] : []));
    const length = (v) => (v.tensors ?? v).length;
    return (vals) => {
      for (let j = 0; j < lists.length; j++) {
        const v = vals[lists[j]];
        if (v !== null && length(v) > k.argSlots.maxList) return undefined;
      }
      const r = callArgs(call, vals);
      if (op.ret === 'STATUS') {
        if (r !== 0) fail(op.base);
        return vals[op.returnsArg >= 0 ? op.returnsArg : 0];
      }
      if (op.ret === 'TENSOR_LIST') return listResult(op, r);
      if (op.ret === 'TENSOR2') {
        const r1 = M._weft_wasm_op_second();
        if (!r) fail(op.base);
        return tupleResult(op, vals, [r, r1]);
      }
      if (op.ret === 'TENSOR4') {
        const rest = [M._weft_wasm_op_second(), M._weft_wasm_op_third(), M._weft_wasm_op_fourth()];
        if (!r) fail(op.base);
        return tupleResult(op, vals, [r, ...rest]);
      }
      if (op.ret === 'TENSOR3') { // any of the three may be 0: an undefined output (null)
        const r1 = M._weft_wasm_op_second(), r2 = M._weft_wasm_op_third();
        if (M._weft_wasm_op_status() !== 0) fail(op.base);
        return tupleResult(op, vals, [r, r1, r2]);
      }
      if (!r) fail(op.base);
      if (op.returnsArg >= 0) {
        M._weft_tensor_release(r);
        return vals[op.returnsArg];
      }
      return wrap(r, op.base);
    };
  }

  // A TENSOR_LIST return: the malloc'd array of new references (0 on error)
  // and its length, as an array of Tensors; the array is freed.
  function listResult(op, p) {
    const n = M._weft_wasm_op_list_len();
    if (!p) fail(op.base);
    const handles = Array.from(new Uint32Array(k.buffer(), p >>> 0, n));
    M._free(p);
    return handles.map((h) => wrap(h, op.base));
  }

  // call(vals[0], vals[1], ...) without a spread: spreading the array cost
  // more than the rest of a small op's JS side.
  function callArgs(call, v) {
    switch (v.length) {
      case 1: return call(v[0]);
      case 2: return call(v[0], v[1]);
      case 3: return call(v[0], v[1], v[2]);
      case 4: return call(v[0], v[1], v[2], v[3]);
      case 5: return call(v[0], v[1], v[2], v[3], v[4]);
      default: return call(...v);
    }
  }

  // Several returned handles (new references) as the op's result: out= ones
  // give back their argument's Tensor, the others become Tensors.
  function tupleResult(op, vals, handles) {
    return op.tuple(handles.map((h, i) => {
      if (!h) return null; // an undefined output (convolution_backward's output_mask)
      const a = op.returnsArgs[i];
      if (a >= 0 && isTensor(vals[a])) {
        M._weft_tensor_release(h);
        return vals[a];
      }
      return wrap(h, op.base);
    }));
  }

  // Any failure while pushing (a C error, or a disposed tensor found after
  // live ones were pushed) empties the stack: it holds references.
  function pushAll(op, vals) {
    M._weft_wasm_stack_reset();
    const args = op.args;
    try {
      for (let i = 0; i < args.length; i++) {
        if (push(op, args[i], vals[i]) !== 0) fail(op.base);
      }
    } catch (e) {
      M._weft_wasm_stack_reset();
      throw e;
    }
  }

  function push(op, a, v) {
    if (v === null) return M._weft_wasm_push_none();
    if (a.list) {
      if (a.type === 'Tensor') return pushTensorList(op, v.tensors);
      if (a.type === 'bool') return pushIntList(v.map((b) => (b ? 1 : 0)));
      return pushIntList(v);
    }
    switch (a.type) {
      case 'Tensor': return M._weft_wasm_push_tensor(v.handle(op.base));
      case 'int': case 'SymInt': return M._weft_wasm_push_int(v);
      case 'float': return M._weft_wasm_push_double(v);
      case 'bool': return M._weft_wasm_push_bool(v ? 1 : 0);
      case 'Scalar':
        return v.tag === 0 ? M._weft_wasm_push_int(v.v) : v.tag === 1 ? M._weft_wasm_push_double(v.v)
          : M._weft_wasm_push_bool(v.v);
      case 'ScalarType': return M._weft_wasm_push_dtype(v);
      case 'MemoryFormat': return M._weft_wasm_push_memory_format(v);
      case 'Device': return M._weft_wasm_push_device(v);
      case 'str': return withBytes(M.lengthBytesUTF8 ? M.lengthBytesUTF8(v) + 1 : v.length * 4 + 1,
        (p, n) => { M.stringToUTF8(v, p, n); return M._weft_wasm_push_string(p); });
      default: return M._weft_wasm_push_none();
    }
  }

  function withBytes(n, fn) {
    const p = M._malloc(Math.max(n, 8)) >>> 0; // unsigned: the heap may pass 2 GB
    if (!p) throw new WeftError('OutOfMemory', 'ops: out of memory');
    try { return fn(p, n); } finally { M._free(p); }
  }

  function pushIntList(v) {
    if (v.length <= k.argSlots.maxList) return M._weft_wasm_push_int_list(k.argSlots.writeList(0, v));
    return withBytes((v.length + 1) * 8, (p) => {
      k.putList(new Float64Array(k.buffer(), p, v.length + 1), 0, v);
      return M._weft_wasm_push_int_list(p);
    });
  }

  function pushTensorList(op, ts) {
    return withBytes(ts.length * 4, (p) => {
      const u = new Uint32Array(k.buffer(), p, ts.length);
      ts.forEach((t, i) => { u[i] = t ? t.handle(op.base) : 0; });
      return M._weft_wasm_push_tensor_list(p, ts.length);
    });
  }

  function invokeBoxed(op, vals) {
    pushAll(op, vals);
    if (M._weft_wasm_call(op.handle, op.args.length) !== 0) {
      M._weft_wasm_stack_reset();
      fail(op.base);
    }
    try {
      const n = M._weft_wasm_stack_size();
      if (op.tuple && n === op.returns.length && op.returns.every((r) => r.type === 'Tensor' && !r.list)) {
        return tupleResult(op, vals, Array.from({ length: n },
          (_, i) => (IV_TAGS[M._weft_wasm_ret_tag(i)] === 'None' ? 0 : M._weft_wasm_ret_tensor(i))));
      }
      const out = [];
      for (let i = 0; i < n; i++) out.push(readReturn(op, i));
      if (op.returnsArg >= 0 && n === 1 && isTensor(out[0])) {
        out[0].dispose();
        return vals[op.returnsArg];
      }
      return n === 1 && !op.tupleReturn ? out[0] : n === 0 ? undefined : out;
    } finally {
      M._weft_wasm_stack_reset();
    }
  }

  function readReturn(op, i) {
    const tag = IV_TAGS[M._weft_wasm_ret_tag(i)];
    switch (tag) {
      case 'None': return null;
      case 'Tensor': return wrap(M._weft_wasm_ret_tensor(i), op.base);
      case 'int': case 'float': return M._weft_wasm_ret_number(i);
      case 'bool': return !!M._weft_wasm_ret_number(i);
      case 'int[]': return Array.from({ length: M._weft_wasm_ret_list_len(i) }, (_, j) => M._weft_wasm_ret_list_int(i, j));
      case 'Tensor[]':
        return Array.from({ length: M._weft_wasm_ret_list_len(i) }, (_, j) => wrap(M._weft_wasm_ret_list_tensor(i, j), op.base));
      case 'str': return M.UTF8ToString(M._weft_wasm_ret_string(i));
      case 'ScalarType': return k.DTYPES[M._weft_wasm_ret_number(i)];
      case 'MemoryFormat': return k.FORMATS[M._weft_wasm_ret_number(i)];
      case 'Device': return k.DEVICES[M._weft_wasm_ret_number(i)];
      default: return undefined;
    }
  }

  // ---- lookup by name ----

  function stripNs(name) {
    if (typeof name !== 'string') {
      throw new WeftError('TypeError', `ops: operator name must be a string, not ${typeName(name)}`);
    }
    return name.startsWith('aten::') ? name.slice(6) : name;
  }

  // 'add.Tensor' -> [that op]; 'add' -> every overload of add (out= ones only with { out }).
  const pickers = new Map();
  function candidates(name, kw) {
    const n = stripNs(name);
    if (n.includes('.')) {
      const i = byName.get(n);
      if (i === undefined) throw new WeftError('InvalidArgument', `unknown operator '${name}'`);
      return opAt(i).alone;
    }
    let pick = pickers.get(n);
    if (!pick) {
      const all = byBase.get(n);
      if (!all) throw new WeftError('InvalidArgument', `unknown operator '${name}'`);
      pick = byOut(opsOf(all));
      pickers.set(n, pick);
    }
    return pick(kw);
  }

  // Calls by schema name take the schema's snake_case keywords too.
  function call(name, ...rawArgs) {
    const [pos, rawKw] = splitKw(rawArgs);
    const kw = rawKw && Object.fromEntries(Object.entries(rawKw).map(([key, v]) => [camel(key), v]));
    const cands = candidates(name, kw);
    const [op, vals] = resolve(stripNs(name).split('.')[0], cands, pos, kw, undefined);
    return invoke(op, vals, true);
  }

  // One op: 'add.Tensor', or a base name with a default ('') or a single overload.
  function exact(name) {
    const n = stripNs(name);
    const i = byName.get(n);
    let op = i === undefined ? undefined : opAt(i);
    if (!op && !n.includes('.')) {
      const all = opsOf(byBase.get(n) ?? []);
      op = all.find((o) => o.overload === '') ?? (all.length === 1 ? all[0] : undefined);
      if (!op && all.length) {
        throw new WeftError('InvalidArgument', `operator '${name}' has no default overload; ` +
          `name one of: ${all.map((o) => o.name).join(', ')}`);
      }
    }
    if (!op) throw new WeftError('InvalidArgument', `unknown operator '${name}'`);
    return op;
  }

  function list() {
    return infos.map((op) => ({ name: op.name, schema: op.schema }));
  }

  function schema(name) {
    return exact(name).schema;
  }

  function table(name) {
    return readJson(M, fail, M._weft_wasm_op_table_json(exact(name).handle), 'ops.table');
  }

  // ---- trace and explain ----

  function trace(fn) {
    if (typeof fn !== 'function') {
      throw new WeftError('TypeError', `trace(): argument 'fn' must be a function, not ${typeName(fn)}`);
    }
    M._weft_wasm_trace_start();
    try {
      fn();
    } finally {
      M._weft_wasm_trace_stop();
    }
    const n = M._weft_wasm_trace_count();
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = {
        op: M.UTF8ToString(M._weft_wasm_trace_op(i)),
        key: M.UTF8ToString(M._weft_wasm_trace_key(i)),
        depth: M._weft_wasm_trace_depth(i),
        redispatch: !!M._weft_wasm_trace_redispatch(i),
        node: !!M._weft_wasm_trace_node(i),
      };
    }
    return out;
  }

  // The TensorIterator plan the op would run (its loops skipped), or null
  // when it runs none (contiguous() of a contiguous tensor).
  function explain(name, ...rawArgs) {
    const [pos, kw] = splitKw(rawArgs);
    const [op, vals] = resolve(stripNs(name).split('.')[0], candidates(name, kw), pos, kw, undefined);
    const temps = [];
    try {
      if (hasWrap(vals)) materialize(vals, temps);
      pushAll(op, vals);
      if (M._weft_wasm_explain(op.handle, op.args.length) !== 0) fail('explain');
      const p = M._weft_wasm_explain_result();
      return p ? readJson(M, fail, p, 'explain') : null;
    } finally {
      for (const t of temps) t.dispose();
      if (op.writes.length) refreshWritten(op, vals);
    }
  }

  // ---- the registry (after the helpers its entries use) ----

  // An op's object (makeOp) is made on its first call, not at init: most
  // programs call a few dozen of the ~700 (startup, issue 26). byName and
  // byBase hold indices into infos.
  const infos = registry.infos;
  const opCache = new Array(infos.length);
  const opAt = (i) => opCache[i] ?? (opCache[i] = makeOp(infos[i], i));
  const byName = new Map();
  const byBase = new Map();
  infos.forEach((info, i) => {
    byName.set(info.name, i);
    byName.set(info.name.replace(/^aten::/, ''), i);
    if (!byBase.has(info.base)) byBase.set(info.base, []);
    byBase.get(info.base).push(i);
  });
  const opsOf = (idx) => idx.map(opAt);

  // ---- generated functions and methods ----

  // Overloads split once: out= ones are only candidates when { out } is given.
  function byOut(cands) {
    const plain = cands.filter((op) => !op.isOut);
    const out = cands.filter((op) => op.isOut);
    // the out= tensors' own names select too ({ max, maxValues } of max.dim_max)
    const names = new Set(out.flatMap((op) => op.outArgs.flatMap((i) => [op.args[i].name, camel(op.args[i].name)])));
    const wantsOut = (kw) => kw.out != null || Object.keys(kw).some((key) => names.has(key) && kw[key] != null);
    return (kw) => (kw && wantsOut(kw) ? (out.length ? out : cands) : (plain.length ? plain : cands));
  }

  // Argument forms of PyTorch's Python wrappers that no schema has, by op:
  // (pos, kw, at) -> [pos, kw], `at` the index of the first argument after self.
  const PREPARE = { norm: normArgs };

  // torch.norm's: p = 'fro' is the 2-norm over at most 2 dims (no dtype),
  // 'nuc' and other strings are refused; without a dim, a p of null or a
  // keepdim / out reduces every dim (norm.ScalarOpt_dim with dim []); a
  // dtype with a dim gets keepdim false.
  function normArgs(pos, kw, at) {
    let p = at < pos.length ? pos[at] : kw?.p;
    const dimGiven = at + 1 < pos.length || kw?.dim != null;
    if (typeof p === 'string') {
      const dim = at + 1 < pos.length ? pos[at + 1] : kw?.dim;
      if (p === 'nuc') throw new WeftError('InvalidArgument', 'norm(): the nuclear norm (p = \'nuc\') is not supported');
      if (p !== 'fro') {
        throw new WeftError('InvalidArgument', `norm(): only valid string values are 'fro' and 'nuc', found ${p}`);
      }
      if (kw?.dtype != null) throw new WeftError('InvalidArgument', 'norm(): dtype argument is not supported in frobenius norm');
      if (Array.isArray(dim) && dim.length > 2) {
        throw new WeftError('InvalidArgument', `norm(): Expected at most 2 dimensions, but got ${dim.length} dimensions instead.`);
      }
      p = 2;
    }
    const needDims = !dimGiven && (p === null || kw?.keepdim !== undefined || kw?.out != null);
    const inKw = at >= pos.length && kw != null && 'p' in kw;
    pos = pos.slice();
    kw = kw && { ...kw };
    if (inKw) delete kw.p;
    if (at < pos.length || inKw || needDims) pos[at] = p === undefined ? 2 : p;
    if (needDims) pos[at + 1] = [];
    // norm.ScalarOpt_dim_dtype has no keepdim default
    if ((dimGiven || needDims) && kw?.dtype != null && kw.keepdim === undefined) kw.keepdim = false;
    return [pos, kw];
  }

  // (idx: indices into infos; their op objects and the overload picker are
  // made on the first call)
  function methodFor(base, idx) {
    let pick = (kw) => (pick = byOut(opsOf(idx)))(kw);
    const prep = PREPARE[base];
    return function generatedMethod(...rawArgs) {
      const [pos, kw] = prep ? prep(...splitKw(rawArgs), 0) : splitKw(rawArgs);
      const [op, vals] = resolve(base, pick(kw), pos, kw, this);
      return invoke(op, vals);
    };
  }

  function functionFor(base, idx) {
    let pick = (kw) => (pick = byOut(opsOf(idx)))(kw);
    const prep = PREPARE[base];
    return (...rawArgs) => {
      const [pos, kw] = prep ? prep(...splitKw(rawArgs), 1) : splitKw(rawArgs);
      const [op, vals] = resolve(base, pick(kw), pos, kw, undefined);
      return invoke(op, vals);
    };
  }

  // tuples: the names with an overload returning several tensors, lists: those
  // with one returning Tensor[] (worker mode reads both)
  const generated = { functions: [], methods: [], tuples: [], lists: [] };
  for (const [base, cands] of byBase) {
    const name = camel(base);
    const inplace = base.endsWith('_');
    const ns = namespaced(base);
    if (ns) {
      api[ns[0]] ??= {};
      api[ns[0]][ns[1]] = functionFor(base, cands);
      if (cands.some((i) => infos[i].tupleReturn)) generated.tuples.push(`${ns[0]}.${ns[1]}`); // 'linalg.slogdet'
      continue;
    }
    if (cands.some((i) => infos[i].tupleReturn)) generated.tuples.push(name);
    if (cands.some((i) => infos[i].ret === 'TENSOR_LIST')) generated.lists.push(name);
    if (!inplace && !(name in api)) {
      api[name] = functionFor(base, cands);
      generated.functions.push(name);
    }
    const methodCands = cands.filter((i) => selfIndexOf(infos[i]) >= 0);
    if (methodCands.length && !NOT_METHODS.has(base) && !(name in Tensor.prototype)) {
      Object.defineProperty(Tensor.prototype, name, {
        value: methodFor(base, methodCands), writable: true, configurable: true,
      });
      generated.methods.push(name);
    }
  }

  api.ops = Object.freeze({ call, list, schema, table, generated });
  api.trace = trace;
  api.explain = explain;
}
