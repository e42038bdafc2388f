// wt.nn.Module and wt.nn.Parameter: torch/nn/modules/module.py's registry
// (parameters, buffers and children in ordered maps filled by attribute
// assignment; state dicts by dotted names) over weft tensors.
//
// A module is callable (model(x), as in PyTorch): the constructor returns a
// Proxy over a function whose prototype is the subclass's, so `this.conv = ...`
// in a subclass constructor reaches the set trap (PyTorch's __setattr__) and
// model(x) the apply trap. Registered values are also stored as plain
// properties of the target, so reading them costs what any property read does.
// A call runs forward() in a tidy scope: tensors it made and does not return
// are disposed on return (what forward stores on a module attribute is kept).

const STATE = Symbol('weft.nn.state');
const PROXY = Symbol('weft.nn.proxy');
const TARGET = Symbol('weft.nn.target');

// a registered value as a plain property of the proxy's target (no trap)
function own(self, name, value) {
  Object.defineProperty(self[TARGET], name, { value, writable: true, enumerable: true, configurable: true });
}

// ---- Python's repr of the values extra_repr prints ----

// repr(float): the shortest digits, exponent form below 1e-4 and from 1e16
export function pyFloat(v) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v < 0 ? '-inf' : 'inf';
  const [mant, e] = v.toExponential().split('e');
  const exp = Number(e);
  if (exp < -4 || exp >= 16) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  const s = String(v);
  return Number.isInteger(v) ? `${s}.0` : s;
}

// str() of a constructor argument: arrays as tuples, null as None, booleans as True/False
export function pyStr(v) {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return v.length === 1 ? `(${pyStr(v[0])},)` : `(${v.map(pyStr).join(', ')})`;
  return String(v);
}

// repr() of a string (quoted) or of another value
export const pyRepr = (v) => (typeof v === 'string' ? `'${v}'` : pyStr(v));

function addIndent(s, n) {
  const lines = s.split('\n');
  if (lines.length === 1) return s;
  return [lines[0], ...lines.slice(1).map((l) => ' '.repeat(n) + l)].join('\n');
}

export function makeModule(api, k) {
  const { Tensor, WeftError, M, typeName, isOptions, didYouMean, mem } = k;
  const fail = (code, msg) => { throw new WeftError(code, msg); };
  const kind = (v) => (v instanceof Parameter ? 'Parameter' : v instanceof Tensor ? 'Tensor' : typeName(v).replace(/^an? /, ''));

  // torch.nn.Parameter: a leaf tensor sharing the data of the one given,
  // marked as a parameter (registered when assigned to a module attribute).
  // Kept out of tidy scopes and the step rule: it lives until disposed.
  class Parameter extends Tensor {
    constructor(data, requiresGrad = true) {
      const src = data ?? api.empty(0);
      if (!(src instanceof Tensor)) fail('TypeError', `Parameter(): argument 'data' must be a Tensor, not ${typeName(data)}`);
      if (typeof requiresGrad !== 'boolean') {
        fail('TypeError', `Parameter(): argument 'requiresGrad' must be a boolean, not ${typeName(requiresGrad)}`);
      }
      const ptr = M._weft_wasm_detach(src.handle('Parameter'));
      if (!ptr) k.fail('Parameter');
      super(ptr);
      api.keep(this);
      try {
        if (requiresGrad) this.requiresGrad_(true);
      } catch (e) {
        this.dispose();
        throw e;
      }
      // the data tensor is handed over (new wt.nn.Parameter(wt.zeros(3))
      // leaves nothing behind); a Parameter given stays its module's
      if (!(src instanceof Parameter)) {
        mem.markReleased(src, ' (wt.nn.Parameter(t) took t over: use the Parameter, which shares its data)');
        src.dispose();
      }
    }
    // PyTorch's: the tensor's repr with requires_grad=True before its closing parenthesis
    toString() {
      const t = super.toString();
      return `Parameter containing:\n${this.requiresGrad ? `${t.slice(0, -1)}, requires_grad=True)` : t}`;
    }
  }

  // ---- the proxy traps: PyTorch's __setattr__ and __delattr__ ----

  // A tensor held by the module is kept out of scopes; one it stops holding
  // (reassigned, deleted) is the open scope's or the step's again, as if made
  // now, so a buffer replaced every step does not pile up.
  function letGo(old, value) {
    if (old instanceof Tensor && old !== value) mem.orphan(old);
  }

  // a setter up the prototype chain (a subclass's `set lr(v)`) runs as usual
  function accessorOf(target, name) {
    for (let p = Object.getPrototypeOf(target); p; p = Object.getPrototypeOf(p)) {
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (d) return d.get || d.set ? d : null;
    }
    return null;
  }

  function plainSet(target, name, value) {
    if (!Object.hasOwn(target, name) && accessorOf(target, name)) {
      if (!Reflect.set(target, name, value, target[PROXY])) fail('TypeError', `Cannot set property ${name} of ${target.constructor.name}, which has only a getter`);
      return;
    }
    if (value instanceof Tensor) api.keep(value);
    letGo(target[name], value);
    if (Object.hasOwn(target, name)) target[name] = value; // keeps its enumerability (training)
    else Object.defineProperty(target, name, { value, writable: true, enumerable: true, configurable: true });
  }

  function forgetName(s, name, except) {
    if (except !== 'params') s.params.delete(name);
    if (except !== 'buffers') { s.buffers.delete(name); s.nonPersistent.delete(name); }
    if (except !== 'modules') s.modules.delete(name);
  }

  function setAttr(target, name, value) {
    const s = target[STATE];
    const self = target[PROXY];
    if (value instanceof Parameter) {
      forgetName(s, name, 'params');
      letGo(target[name], value);
      delete target[name];
      self.registerParameter(name, value);
    } else if (s.params.has(name)) {
      if (value !== null && value !== undefined) {
        fail('TypeError', `cannot assign '${kind(value)}' as parameter '${name}' (wt.nn.Parameter or null expected)`);
      }
      self.registerParameter(name, null);
    } else if (value instanceof Module) {
      forgetName(s, name, 'modules');
      s.modules.set(name, value);
      plainSet(target, name, value);
    } else if (s.modules.has(name)) {
      if (value !== null && value !== undefined) {
        fail('TypeError', `cannot assign '${kind(value)}' as child module '${name}' (wt.nn.Module or null expected)`);
      }
      s.modules.set(name, null);
      plainSet(target, name, null);
    } else if (s.buffers.has(name)) {
      if (value !== null && value !== undefined && !(value instanceof Tensor)) {
        fail('TypeError', `cannot assign '${kind(value)}' as buffer '${name}' (wt.Tensor or null expected)`);
      }
      s.buffers.set(name, value ?? null);
      plainSet(target, name, value ?? null);
    } else {
      plainSet(target, name, value);
    }
  }

  const traps = {
    apply(target, thisArg, args) { return callModule(target[PROXY], args); },
    set(target, name, value, receiver) {
      if (typeof name === 'symbol' || receiver !== target[PROXY]) return Reflect.set(target, name, value, receiver);
      setAttr(target, name, value);
      return true;
    },
    // class fields (`fc = new wt.nn.Linear(2, 3)`) define instead of set
    defineProperty(target, name, desc) {
      if (typeof name === 'symbol' || !('value' in desc) || desc.get || desc.set) {
        return Reflect.defineProperty(target, name, desc);
      }
      setAttr(target, name, desc.value);
      return true;
    },
    deleteProperty(target, name) {
      if (typeof name !== 'symbol') {
        forgetName(target[STATE], name, null);
        letGo(target[name], null);
      }
      return Reflect.deleteProperty(target, name);
    },
  };

  // model(x): forward in a tidy scope (its intermediates are freed on return)
  function callModule(m, args) {
    if (typeof m.forward !== 'function') {
      fail('NotImplemented', `Module [${m.constructor.name}] is missing the required "forward" function`);
    }
    return api.tidy(() => m.forward(...args));
  }

  function checkName(what, name, target) {
    if (typeof name !== 'string') fail('TypeError', `${what} name should be a string. Got ${typeName(name)}`);
    if (name.includes('.')) fail('InvalidArgument', `${what} name can't contain ".", got: ${name}`);
    if (name === '') fail('InvalidArgument', `${what} name can't be empty string ""`);
    return target;
  }

  const uniq = (pairs) => {
    const seen = new Set();
    return pairs.filter(([, v]) => v !== null && !seen.has(v) && seen.add(v));
  };

  // PyTorch's _named_members: each tensor once, at its first name
  function namedMembers(self, which, { prefix = '', recurse = true } = {}) {
    const mods = recurse ? self.namedModules({ prefix }) : [[prefix, self]];
    const seen = new Set();
    const out = [];
    for (const [mp, m] of mods) {
      for (const [name, v] of m[STATE][which]) {
        if (v === null || seen.has(v)) continue;
        seen.add(v);
        out.push([mp ? `${mp}.${name}` : name, v]);
      }
    }
    return out;
  }

  class Module {
    constructor() {
      const target = () => {};
      delete target.name;
      delete target.length;
      Object.setPrototypeOf(target, new.target.prototype);
      const state = { params: new Map(), buffers: new Map(), nonPersistent: new Set(), modules: new Map() };
      const proxy = new Proxy(target, traps);
      for (const [key, value] of [[STATE, state], [PROXY, proxy], [TARGET, target]]) Object.defineProperty(target, key, { value });
      Object.defineProperty(target, 'training', { value: true, writable: true, enumerable: false, configurable: true });
      return proxy;
    }

    forward() {
      fail('NotImplemented', `Module [${this.constructor.name}] is missing the required "forward" function`);
    }

    // ---- registration ----

    registerParameter(name, param) {
      const s = checkName('parameter', name, this)[STATE];
      if (name in this && !s.params.has(name)) fail('InvalidArgument', `attribute '${name}' already exists`);
      if (param === null || param === undefined) {
        s.params.set(name, null);
      } else if (!(param instanceof Parameter)) {
        fail('TypeError', `cannot assign '${kind(param)}' object to parameter '${name}' (wt.nn.Parameter or null required)`);
      } else if (param.gradFn) {
        fail('InvalidArgument', `Cannot assign non-leaf Tensor to parameter '${name}'. Model parameters must be ` +
          'created explicitly. To express \'${name}\' as a function of another Tensor, compute the value in the forward() method.');
      } else {
        s.params.set(name, param);
      }
      letGo(this[name], param);
      own(this, name, s.params.get(name));
    }

    registerBuffer(name, tensor, opts = {}) {
      const s = checkName('buffer', name, this)[STATE];
      if (!isOptions(opts)) fail('TypeError', `registerBuffer(): options must be an object such as { persistent: false }, not ${typeName(opts)}`);
      for (const key of Object.keys(opts)) {
        if (key !== 'persistent') fail('TypeError', `registerBuffer() got an unexpected option '${key}'${didYouMean(key, ['persistent'])}`);
      }
      const persistent = opts.persistent ?? true;
      if (name in this && !s.buffers.has(name)) fail('InvalidArgument', `attribute '${name}' already exists`);
      if (tensor !== null && tensor !== undefined && !(tensor instanceof Tensor)) {
        fail('TypeError', `cannot assign '${kind(tensor)}' object to buffer '${name}' (wt.Tensor or null required)`);
      }
      s.buffers.set(name, tensor ?? null);
      if (persistent) s.nonPersistent.delete(name);
      else s.nonPersistent.add(name);
      if (tensor) api.keep(tensor);
      letGo(this[name], tensor);
      own(this, name, tensor ?? null);
    }

    addModule(name, module) {
      const s = checkName('module', name, this)[STATE];
      if (module !== null && module !== undefined && !(module instanceof Module)) fail('TypeError', `${kind(module)} is not a Module subclass`);
      if (name in this && !s.modules.has(name)) fail('InvalidArgument', `attribute '${name}' already exists`);
      s.modules.set(name, module ?? null);
      own(this, name, module ?? null);
    }

    registerModule(name, module) { this.addModule(name, module); }

    // ---- walking the tree (arrays, in PyTorch's order) ----

    namedModules({ prefix = '', removeDuplicate = true } = {}, memo = new Set()) {
      const out = [];
      if (memo.has(this)) return out;
      if (removeDuplicate) memo.add(this);
      out.push([prefix, this]);
      for (const [name, m] of this[STATE].modules) {
        if (m) out.push(...m.namedModules({ prefix: prefix ? `${prefix}.${name}` : name, removeDuplicate }, memo));
      }
      return out;
    }

    modules() { return this.namedModules().map(([, m]) => m); }

    // the module at a dotted path ('layer4.0.conv1'), as PyTorch's get_submodule
    getSubmodule(target) {
      if (typeof target !== 'string') fail('TypeError', `getSubmodule(): argument 'target' must be a string, not ${typeName(target)}`);
      let m = this[PROXY];
      for (const item of target === '' ? [] : target.split('.')) {
        const next = m[STATE].modules.get(item);
        if (!next) fail('InvalidArgument', `${m.constructor.name} has no attribute \`${item}\``);
        m = next;
      }
      return m;
    }
    namedChildren() { return uniq([...this[STATE].modules]); }
    children() { return this.namedChildren().map(([, m]) => m); }

    namedParameters(opts) { return namedMembers(this, 'params', opts); }
    parameters(opts) { return this.namedParameters(opts).map(([, p]) => p); }
    namedBuffers(opts) { return namedMembers(this, 'buffers', opts); }
    buffers(opts) { return this.namedBuffers(opts).map(([, b]) => b); }

    // ---- state dicts ----

    // Every parameter and persistent buffer by its dotted name (tied ones under
    // each name), as new tensors sharing their data (detach()), or the module's
    // own tensors with { keepVars: true }. The detached ones are the caller's.
    stateDict({ prefix = '', keepVars = false, destination = {} } = {}) {
      const s = this[STATE];
      const put = (name, t) => { if (t) destination[prefix + name] = keepVars ? t : t.detach(); };
      for (const [name, p] of s.params) put(name, p);
      for (const [name, b] of s.buffers) if (!s.nonPersistent.has(name)) put(name, b);
      for (const [name, m] of s.modules) {
        if (m) m.stateDict({ prefix: `${prefix}${name}.`, keepVars, destination });
      }
      return destination;
    }

    // Copies a state dict (an object or a Map of tensors) into this module's
    // tensors in place, under noGrad, as load_state_dict does; PyTorch's
    // combined message for missing, unexpected and mismatched keys.
    loadStateDict(stateDict, opts = {}) {
      const entries = stateDict instanceof Map ? [...stateDict] : isOptions(stateDict) && !(stateDict instanceof Tensor)
        ? Object.entries(stateDict) : fail('TypeError', `Expected state_dict to be an object or a Map, got ${typeName(stateDict)}.`);
      if (!isOptions(opts)) fail('TypeError', `loadStateDict(): options must be an object such as { strict: false }, not ${typeName(opts)}`);
      for (const key of Object.keys(opts)) {
        if (key !== 'strict') fail('TypeError', `loadStateDict() got an unexpected option '${key}'${didYouMean(key, ['strict'])}`);
      }
      const strict = opts.strict ?? true;
      const sd = new Map(entries);
      const missingKeys = [];
      const unexpectedKeys = [];
      const errors = [];
      const load = (m, local, prefix) => {
        m._loadFromStateDict(local, prefix, missingKeys, unexpectedKeys, errors);
        for (const [name, child] of m[STATE].modules) {
          if (!child) continue;
          const cp = `${prefix}${name}.`;
          load(child, new Map([...local].filter(([key]) => key.startsWith(cp))), cp);
        }
      };
      api.noGrad(() => load(this, sd, ''));
      if (strict) {
        const list = (keys) => keys.map((key) => `"${key}"`).join(', ');
        if (unexpectedKeys.length) errors.unshift(`Unexpected key(s) in state_dict: ${list(unexpectedKeys)}. `);
        if (missingKeys.length) errors.unshift(`Missing key(s) in state_dict: ${list(missingKeys)}. `);
      }
      if (errors.length) {
        fail('InvalidArgument', `Error(s) in loading state_dict for ${this.constructor.name}:\n\t${errors.join('\n\t')}`);
      }
      return { missingKeys, unexpectedKeys };
    }

    // One module's own entries (PyTorch's _load_from_state_dict); layers
    // override it to fill in what old checkpoints lack (BatchNorm).
    _loadFromStateDict(sd, prefix, missingKeys, unexpectedKeys, errors) {
      const s = this[STATE];
      const local = new Map([...s.params, ...[...s.buffers].filter(([n]) => !s.nonPersistent.has(n))]
        .filter(([, v]) => v !== null));
      for (const [name, param] of local) {
        const key = prefix + name;
        if (!sd.has(key)) {
          missingKeys.push(key);
          continue;
        }
        let input = sd.get(key);
        if (!(input instanceof Tensor)) {
          errors.push(`While copying the parameter named "${key}", expected a Tensor from checkpoint but received ${typeName(input)}`);
          continue;
        }
        const want = param.shape;
        const temp = want.length === 0 && input.dim() === 1 ? (input = input.select(0, 0)) : null;
        try {
          const got = input.shape;
          if (got.length !== want.length || got.some((n, i) => n !== want[i])) {
            errors.push(`size mismatch for ${key}: copying a param with shape [${got.join(', ')}] from checkpoint, ` +
              `the shape in current model is [${want.join(', ')}].`);
            continue;
          }
          param.copy_(input);
        } catch (e) {
          errors.push(`While copying the parameter named "${key}", whose dimensions in the model are [${want.join(', ')}] ` +
            `and whose dimensions in the checkpoint are [${input.shape.join(', ')}], an exception occurred : ${e.message}.`);
        } finally {
          temp?.dispose();
        }
      }
      for (const key of sd.keys()) {
        if (!key.startsWith(prefix)) continue;
        const name = key.slice(prefix.length).split('.', 1)[0];
        if (!s.modules.has(name) && !local.has(name)) unexpectedKeys.push(key);
      }
    }

    // ---- modes and bulk changes ----

    train(mode = true) {
      if (typeof mode !== 'boolean') fail('TypeError', 'training mode is expected to be boolean');
      this.training = mode;
      for (const m of this.children()) m.train(mode);
      return this;
    }

    eval() { return this.train(false); }

    requiresGrad_(requiresGrad = true) {
      for (const p of this.parameters()) p.requiresGrad_(requiresGrad);
      return this;
    }

    // 1.13's default zeroes the grads in place; { setToNone: true } drops them
    zeroGrad({ setToNone = false } = {}) {
      for (const p of this.parameters()) {
        const g = p.grad;
        if (!g) continue;
        if (setToNone) p.grad = null;
        else api.noGrad(() => { if (g.gradFn) g.detach_(); else g.requiresGrad_(false); g.zero_(); });
        g.dispose();
      }
    }

    apply(fn) {
      if (typeof fn !== 'function') fail('TypeError', `apply(): argument 'fn' must be a function, not ${typeName(fn)}`);
      for (const m of this.children()) m.apply(fn);
      fn(this);
      return this;
    }

    // PyTorch's Module.to: floating parameters and buffers to a floating dtype,
    // 4-D ones to a memory format, all to a device, in place: each keeps its
    // JS object (the optimizer's), its requiresGrad and its .grad (converted
    // too). Build optimizers after the move, as in PyTorch. On 'webgpu', a
    // tensor of a dtype WGSL lacks (BatchNorm's int64 num_batches_tracked)
    // stays on the cpu, where ops take it as a cpu scalar. A webgpu module
    // comes back with await module.toAsync('cpu') (reads are asynchronous).
    to(...args) {
      const o = toArgs(args);
      const moves = movesOf(this, o);
      if (o.device === 'cpu' && moves.some(([t, c]) => c.device && t.device === 'webgpu')) {
        fail('NotImplemented', "to: a webgpu module is read back asynchronously: use await module.toAsync('cpu')");
      }
      for (const [t, c] of moves) swapData(t, (x) => convertTensor(x, c));
      return this;
    }

    // to() for any move, webgpu -> cpu included (its reads awaited first)
    async toAsync(...args) {
      const o = toArgs(args);
      for (const [t, c] of movesOf(this, o)) {
        const read = async (x) => (x.device === 'webgpu' && c.device === 'cpu' ? x.toAsync('cpu') : null);
        const g0 = t.grad; // a new handle on the grad
        const [data, grad] = [await read(t), g0 && await read(g0)];
        g0?.dispose();
        const pick = (x, got) => (got ? convertTensor(got, { ...c, device: undefined }, got) : convertTensor(x, c));
        swapData(t, (x) => pick(x, x === t ? data : grad));
      }
      return this;
    }

    float() { return this.to('float32'); }
    double() { return this.to('float64'); }
    half() { return this.to('float16'); }
    bfloat16() { return this.to('bfloat16'); }

    // frees every parameter and buffer of this module and its children
    dispose() {
      for (const m of this.modules()) {
        const s = m[STATE];
        for (const t of [...s.params.values(), ...s.buffers.values()]) t?.dispose();
      }
    }

    // ---- printing ----

    extraRepr() { return ''; }

    toString() {
      const extra = this.extraRepr();
      const extraLines = extra ? extra.split('\n') : [];
      const childLines = [...this[STATE].modules].map(([key, m]) => `(${key}): ${addIndent(m ? m.toString() : 'None', 2)}`);
      const lines = [...extraLines, ...childLines];
      let main = `${this.constructor.name}(`;
      if (lines.length) {
        main += extraLines.length === 1 && !childLines.length ? extraLines[0] : `\n  ${lines.join('\n  ')}\n`;
      }
      return `${main})`;
    }

    [Symbol.for('nodejs.util.inspect.custom')]() { return this.toString(); }
  }

  const DTYPES = ['float16', 'bfloat16', 'float32', 'float64', 'bool', 'uint8', 'int8', 'int16', 'int32', 'int64'];
  const FLOATING = ['float16', 'bfloat16', 'float32', 'float64'];
  // to(dtype), to(device), to(tensor), to({ dtype, memoryFormat, device })
  const GPU_DTYPES = ['float32', 'int32', 'bool'];

  // [tensor, its conversion] for every parameter and buffer that changes
  function movesOf(module, { dtype, memoryFormat, device }) {
    const convert = (t) => {
      const floating = ['float16', 'bfloat16', 'float32', 'float64'].includes(t.dtype);
      const o = {};
      if (dtype && floating && dtype !== t.dtype) o.dtype = dtype;
      if (memoryFormat && (t.dim() === 4 || t.dim() === 5) && !t.isContiguous(memoryFormat)) o.memoryFormat = memoryFormat;
      const finalDtype = o.dtype ?? t.dtype;
      if (device === 'webgpu' && floating && !GPU_DTYPES.includes(finalDtype)) {
        fail('TypeError', `to: a ${finalDtype} parameter or buffer cannot live on the webgpu device (WGSL has no ` +
          `${finalDtype}): convert the module too, e.g. model.to({ dtype: 'float32', device: 'webgpu' })`);
      }
      if (device && device !== t.device && (device !== 'webgpu' || GPU_DTYPES.includes(finalDtype))) o.device = device;
      return Object.keys(o).length ? o : null;
    };
    const out = [];
    for (const m of module.modules()) {
      const s = m[STATE];
      for (const t of [...s.params.values(), ...s.buffers.values()]) {
        const c = t && convert(t);
        if (c) out.push([t, c]);
      }
    }
    return out;
  }


  // t converted: dtype / memory format where it is, then moved; `owned` (an
  // already-read copy) is disposed once converted
  function convertTensor(t, { dtype, memoryFormat, device }, owned = null) {
    return api.noGrad(() => {
      let x = t;
      if (dtype || memoryFormat) x = t.to({ ...(dtype ? { dtype } : {}), ...(memoryFormat ? { memoryFormat } : {}) });
      if (device && device !== x.device) {
        const y = x.to(device);
        if (x !== t) x.dispose();
        x = y;
      }
      if (owned && x !== owned) owned.dispose();
      return x;
    });
  }

  // t takes make(t)'s data in place (same JS object), and its grad make(grad)'s
  function swapData(t, make) {
    const rg = t.requiresGrad;
    const grad = t.grad;
    const next = make(t);
    let nextGrad = null;
    try {
      nextGrad = grad && make(grad);
    } catch (e) {
      next.dispose();
      throw e;
    }
    const ptr = M._weft_wasm_detach(next.handle('to'));
    if (!ptr) k.fail('to');
    k.setHandle(t, ptr);
    if (next !== t) next.dispose();
    grad?.dispose();
    if (rg) t.requiresGrad_(true);
    if (nextGrad) { t.grad = nextGrad; nextGrad.dispose(); }
  }

  function toArgs(args) {
    const out = {};
    for (const a of args) {
      if (typeof a === 'string' && DTYPES.includes(a)) out.dtype = a;
      else if (typeof a === 'string' && (a === 'cpu' || a === 'meta' || a === 'webgpu')) out.device = a;
      else if (a instanceof Tensor) out.dtype = a.dtype;
      else if (isOptions(a)) {
        for (const key of Object.keys(a)) {
          if (!['dtype', 'memoryFormat', 'device'].includes(key)) {
            fail('TypeError', `to() got an unexpected option '${key}'${didYouMean(key, ['dtype', 'memoryFormat', 'device'])}`);
          }
        }
        Object.assign(out, a);
      } else fail('TypeError', `to() received an invalid combination of arguments: ${typeName(a)}`);
    }
    if (out.dtype != null && !FLOATING.includes(out.dtype)) {
      fail('TypeError', `nn.Module.to only accepts floating point dtypes, but got desired dtype=${out.dtype}`);
    }
    if (out.device != null && out.device !== 'cpu' && out.device !== 'webgpu') {
      fail('NotImplemented', `to(): cannot move a module to the '${out.device}' device (weft keeps a tensor's data where it was made)`);
    }
    return out;
  }

  return { Module, Parameter, STATE };
}
