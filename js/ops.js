// The dispatcher from JS: every operator of the C op table, read at init from
// the registry (names + schemas), becomes
//   wt.ops.call(name, ...args)     a boxed call by name ('aten::add.Tensor', 'add.Tensor', 'add')
//   wt.<camelName>(...args)        unless the API already has that name
//   t.<camelName>(...args)         for ops with a Tensor `self` (t is self)
//   t.<name>_(...args)             in-place overloads; { out } picks the .out overload
// plus wt.ops.list/schema/table, wt.trace(fn) and wt.explain(op, ...args).
// Arguments are converted by the schema; a trailing plain object holds keyword
// arguments (camelCase or snake_case). Calls go through the typed entry point
// weft_wasm_op_<cname> when one exists, else through the boxed stack
// (src/wasm/exports_dispatch.c documents both).

const INT64_MIN_AS_DOUBLE = -(2 ** 63);
const LIST_SLOTS = 4;
const LIST_LEN = 16;
const IV_TAGS = ['None', 'Tensor', 'int', 'float', 'bool', 'int[]', 'float[]', 'Tensor[]', 'str',
  'ScalarType', 'MemoryFormat', 'Device'];

const snake = (k) => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
export const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

// Function-only in PyTorch although their first argument is a Tensor self.
const NOT_METHODS = new Set(['empty_like']);

export function installOps(api, k) {
  const { M, Tensor, WeftError, wrap, fail, typeName, isOptions, refreshMeta } = k;
  const listArea = M._weft_wasm_op_lists();
  const f64 = () => new Float64Array(k.buffer(), listArea, LIST_SLOTS * LIST_LEN);

  function readJson(ptr, op) {
    if (!ptr) fail(op);
    const text = M.UTF8ToString(ptr);
    M._free(ptr);
    return JSON.parse(text);
  }

  // ---- the registry ----

  function makeOp(info, i) {
    const op = {
      ...info,
      index: i,
      handle: M._weft_wasm_op_at(i),
      positional: info.args.filter((a) => !a.kwargOnly),
      isOut: info.args.some((a) => a.kwargOnly && a.write && a.name === 'out'),
      selfIndex: info.args.findIndex((a) => a.name === 'self' && a.type === 'Tensor' && !a.list),
      // the returned tensor is this argument (in-place and out=)
      returnsArg: -1,
      writes: info.args.flatMap((a, j) => (a.write && a.type === 'Tensor' && !a.list ? [j] : [])),
    };
    op.alone = [op];
    const r0 = info.returns[0];
    if (info.returns.length === 1 && r0 && r0.alias) {
      op.returnsArg = info.args.findIndex((a) => a.write && a.alias === r0.alias);
    }
    op.defaults = info.args.map((a) => (a.default ? convertDefault(op, a) : undefined));
    op.typed = typedInvoker(op);
    return op;
  }

  // ---- JS values -> converted values (see invoke for their forms) ----

  const DENY = Symbol('mismatch');
  // Why the last bind failed, formatted only when the error is thrown
  // (overload resolution fails often on its way to a match).
  let why = () => '';
  const deny = (op, a, v, pos) => {
    why = () => `${op.base}(): argument '${a.name}'${pos >= 0 ? ` (position ${pos + 1})` : ''} must be ` +
      `${a.text}, not ${typeName(v)}`;
    return DENY;
  };
  const isInt = (v) => (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';
  const isTensor = (v) => v instanceof Tensor;

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
        if (isTensor(v)) return v;
        if (lenient && (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint')) {
          return { wrapNumber: v };
        }
        return deny(op, a, v, pos);
      case 'int': case 'SymInt':
        return isInt(v) ? Number(v) : deny(op, a, v, pos);
      case 'float':
        return typeof v === 'number' || typeof v === 'bigint' ? Number(v) : deny(op, a, v, pos);
      case 'bool':
        return typeof v === 'boolean' ? v : deny(op, a, v, pos);
      case 'Scalar':
        if (typeof v === 'boolean') return { tag: 2, v: v ? 1 : 0 };
        if (typeof v === 'bigint') return { tag: 0, v: Number(v) };
        if (typeof v === 'number') return { tag: Number.isInteger(v) ? 0 : 1, v };
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
      if (!Array.isArray(v) || !v.every((x) => isTensor(x) || (a.elemOptional && x == null))) return deny(op, a, v, pos);
      return { tensors: v };
    }
    if (a.type !== 'int' && a.type !== 'SymInt') return deny(op, a, v, pos);
    // int[N] takes a single int too, as in PyTorch
    if (isInt(v) && a.listSize > 0) return new Array(a.listSize).fill(Number(v));
    if (!Array.isArray(v) && !(ArrayBuffer.isView(v) && !(v instanceof DataView))) return deny(op, a, v, pos);
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!isInt(v[i])) {
        why = () => `${op.base}(): argument '${a.name}' must be ${a.text}, but found element of type ` +
          `${typeName(v[i])} at pos ${i}`;
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
    const slots = [];
    for (let i = 0; i < args.length; i++) if (!args[i].kwargOnly && !given[i]) slots.push(i);
    // view(x, 2, 3): the values from an int-list parameter on, as varargs
    for (let j = 0; j < slots.length && j < p.length; j++) {
      const a = args[slots[j]];
      if (!a.list || (a.type !== 'int' && a.type !== 'SymInt')) continue;
      const rest = p.slice(j);
      if (rest.every(isInt) && !(a.listSize > 0 && rest.length === 1) &&
          slots.slice(j + 1).every((i) => args[i].default || args[i].optional)) {
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
        const name = snake(key);
        const i = args.findIndex((a) => a.name === name);
        if (i < 0 || given[i]) {
          why = i < 0 ? () => `${op.base}() got an unexpected keyword argument '${key}'`
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

  function splitKw(args) {
    const last = args[args.length - 1];
    if (args.length > 0 && isOptions(last) && !isTensor(last)) return [args.slice(0, -1), last];
    return [args, null];
  }

  function signatureOf(op) {
    return op.schema.replace(/^[^(]*/, '').replace(/ -> .*$/, '').replace(/Tensor\([a-z]!?\)/g, 'Tensor');
  }

  // Picks the overload the arguments fit: exact types first, then with numbers
  // standing for tensors. Throws PyTorch's TypeError otherwise.
  function resolve(title, cands, pos, kw, self) {
    let first = null;
    for (let pass = 0; pass < 2; pass++) {
      for (let c = 0; c < cands.length; c++) {
        const vals = bind(cands[c], pos, kw, self, pass === 1);
        if (vals !== DENY) return [cands[c], vals];
        if (first === null) first = why;
      }
    }
    if (cands.length === 1) throw new WeftError('TypeError', first());
    const got = [...(self !== undefined ? [self] : []), ...pos].map(typeName);
    if (kw) for (const key of Object.keys(kw)) got.push(`${snake(key)}=${typeName(kw[key])}`);
    throw new WeftError('TypeError', `${title}() received an invalid combination of arguments - got ` +
      `(${got.join(', ')}), but expected one of:\n` + cands.map((op) => ` * ${signatureOf(op)}`).join('\n'));
  }

  // ---- calling ----

  // Numbers bound to Tensor arguments become 0-dim tensors: int64 / bool, and
  // floats as float32 unless a floating tensor takes part (PyTorch's wrapped
  // numbers do not promote within a category).
  function materialize(vals, temps) {
    let anyFloat = null;
    for (let i = 0; i < vals.length; i++) {
      const v = vals[i];
      if (!v || typeof v !== 'object' || !('wrapNumber' in v)) continue;
      if (anyFloat === null) {
        anyFloat = vals.some((x) => isTensor(x) && /float/.test(x.dtype));
      }
      const n = v.wrapNumber;
      const dtype = typeof n === 'boolean' ? 'bool' : isInt(n) ? 'int64' : anyFloat ? 'float64' : 'float32';
      const t = api.full([], typeof n === 'boolean' ? n : Number(n), { dtype });
      temps.push(t);
      vals[i] = t;
    }
  }

  function hasWrap(vals) {
    for (const v of vals) if (v && typeof v === 'object' && 'wrapNumber' in v) return true;
    return false;
  }

  // boxed: always through the stack (ops.call); else the typed entry point when it fits.
  function invoke(op, vals, boxed = false) {
    const temps = [];
    try {
      if (hasWrap(vals)) materialize(vals, temps);
      if (op.typed && !boxed) {
        const r = op.typed(vals);
        if (r !== undefined) return r;
      }
      return invokeBoxed(op, vals);
    } finally {
      for (const t of temps) t.dispose();
      if (op.writes.length) refreshWritten(op, vals);
    }
  }

  // A written-to argument may have been resized or restrided (out=): the JS
  // object's cached shape/strides must follow, even when the op then failed.
  function refreshWritten(op, vals) {
    for (const i of op.writes) if (isTensor(vals[i])) refreshMeta(vals[i]);
  }

  // The typed entry point, or undefined when this call does not fit it.
  function typedInvoker(op) {
    if (!op.cname) return null;
    const fn = M[`_weft_wasm_op_${op.cname}`];
    if (typeof fn !== 'function') return null;
    const kinds = [...op.kinds.matchAll(/\(\s*([A-Z_]+)\s*,/g)].map((m) => m[1]);
    if (kinds.length !== op.args.length || kinds.includes('STRING')) return null;
    const ret = op.ret;
    const params = [];
    return (vals) => {
      params.length = 0;
      let slot = 0;
      for (let i = 0; i < kinds.length; i++) {
        const v = vals[i];
        switch (kinds[i]) {
          case 'TENSOR': case 'MTENSOR': case 'OPT_TENSOR':
            params.push(v === null ? 0 : v.handle(op.base));
            break;
          case 'INT': params.push(v); break;
          case 'OPT_INT': params.push(v === null ? INT64_MIN_AS_DOUBLE : v); break;
          case 'OPT_INT_LIST':
            if (v === null) {
              params.push(0, 0);
              break;
            }
          // falls through
          case 'INT_LIST': {
            if (v.length > LIST_LEN || slot >= LIST_SLOTS) return undefined;
            f64().set(v, slot * LIST_LEN);
            params.push(listArea + slot * LIST_LEN * 8, v.length);
            slot++;
            break;
          }
          case 'DOUBLE': params.push(v !== null && typeof v === 'object' ? v.v : v); break;
          case 'BOOL': params.push(v ? 1 : 0); break;
          case 'SCALAR': params.push(v.tag, v.v); break;
          case 'DTYPE': case 'MEMORY_FORMAT': params.push(v === null ? -1 : v); break;
          case 'DEVICE': params.push(v === null ? 0 : v); break;
          default: return undefined;
        }
      }
      const r = fn(...params);
      if (ret === 'STATUS') {
        if (r !== 0) fail(op.base);
        return vals[op.returnsArg >= 0 ? op.returnsArg : 0];
      }
      if (!r) fail(op.base);
      if (op.returnsArg >= 0) {
        M._weft_tensor_release(r);
        return vals[op.returnsArg];
      }
      return wrap(r, op.base);
    };
  }

  function pushAll(op, vals) {
    M._weft_wasm_stack_reset();
    const args = op.args;
    for (let i = 0; i < args.length; i++) {
      const s = push(op, args[i], vals[i]);
      if (s !== 0) {
        M._weft_wasm_stack_reset();
        fail(op.base);
      }
    }
  }

  function push(op, a, v) {
    if (v === null) return M._weft_wasm_push_none();
    if (a.list) {
      if (a.type === 'Tensor') return pushTensorList(op, v.tensors);
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
    const p = M._malloc(Math.max(n, 8));
    if (!p) throw new WeftError('OutOfMemory', 'ops: out of memory');
    try { return fn(p, n); } finally { M._free(p); }
  }

  function pushIntList(v) {
    if (v.length <= LIST_LEN) {
      f64().set(v, 0);
      return M._weft_wasm_push_int_list(listArea, v.length);
    }
    return withBytes(v.length * 8, (p) => {
      new Float64Array(k.buffer(), p, v.length).set(v);
      return M._weft_wasm_push_int_list(p, v.length);
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
      const op = byName.get(n);
      if (!op) throw new WeftError('InvalidArgument', `unknown operator '${name}'`);
      return op.alone;
    }
    let pick = pickers.get(n);
    if (!pick) {
      const all = byBase.get(n);
      if (!all) throw new WeftError('InvalidArgument', `unknown operator '${name}'`);
      pick = byOut(all);
      pickers.set(n, pick);
    }
    return pick(kw);
  }

  function call(name, ...rawArgs) {
    const [pos, kw] = splitKw(rawArgs);
    const cands = candidates(name, kw);
    const [op, vals] = resolve(stripNs(name).split('.')[0], cands, pos, kw, undefined);
    return invoke(op, vals, true);
  }

  // One op: 'add.Tensor', or a base name with a default ('') or a single overload.
  function exact(name) {
    const n = stripNs(name);
    let op = byName.get(n);
    if (!op && !n.includes('.')) {
      const all = byBase.get(n) ?? [];
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
    return ops.map((op) => ({ name: op.name, schema: op.schema }));
  }

  function schema(name) {
    return exact(name).schema;
  }

  function table(name) {
    return readJson(M._weft_wasm_op_table_json(exact(name).handle), 'ops.table');
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
      return p ? readJson(p, 'explain') : null;
    } finally {
      for (const t of temps) t.dispose();
      if (op.writes.length) refreshWritten(op, vals);
    }
  }

  // ---- the registry (after the helpers its entries use) ----

  const ops = readJson(M._weft_wasm_ops_json(), 'ops').map((info, i) => makeOp(info, i));
  const byName = new Map();
  const byBase = new Map();
  for (const op of ops) {
    byName.set(op.name, op);
    byName.set(op.name.replace(/^aten::/, ''), op);
    if (!byBase.has(op.base)) byBase.set(op.base, []);
    byBase.get(op.base).push(op);
  }

  // ---- generated functions and methods ----

  // Overloads split once: out= ones are only candidates when { out } is given.
  function byOut(cands) {
    const plain = cands.filter((op) => !op.isOut);
    const out = cands.filter((op) => op.isOut);
    return (kw) => (kw && kw.out != null ? (out.length ? out : cands) : (plain.length ? plain : cands));
  }

  function methodFor(base, cands) {
    const pick = byOut(cands);
    return function generatedMethod(...rawArgs) {
      const [pos, kw] = splitKw(rawArgs);
      const [op, vals] = resolve(base, pick(kw), pos, kw, this);
      return invoke(op, vals);
    };
  }

  function functionFor(base, cands) {
    const pick = byOut(cands);
    return (...rawArgs) => {
      const [pos, kw] = splitKw(rawArgs);
      const [op, vals] = resolve(base, pick(kw), pos, kw, undefined);
      return invoke(op, vals);
    };
  }

  const generated = { functions: [], methods: [] };
  for (const [base, cands] of byBase) {
    const name = camel(base);
    const inplace = base.endsWith('_');
    if (!inplace && !(name in api)) {
      api[name] = functionFor(base, cands);
      generated.functions.push(name);
    }
    const methodCands = cands.filter((op) => op.selfIndex >= 0);
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
