// Autograd's JS API over src/wasm/exports_autograd.c (PyTorch's names in camelCase):
//   factories take { requiresGrad: true }
//   t.requiresGrad (get/set), t.requiresGrad_(flag = true), t.isLeaf, t.grad (get/set),
//   t.retainGrad(), t.retainsGrad, t.gradFn (null for leaves), t.outputNr (which output of its
//   gradFn t is: the pieces of split/chunk/unbind share one node), t.detach(), t.detach_(),
//   t.backward(gradient?, { retainGraph, createGraph, inputs })
//   wt.noGrad(fn), wt.enableGrad(fn), wt.isGradEnabled(), wt.setGradEnabled(on)
//   wt.autograd.grad(outputs, inputs, { gradOutputs, retainGraph, createGraph, allowUnused })
//   t.registerHook(fn) -> { id, remove() } (Tensor.register_hook; see installHooks)
// A gradFn is a GradFn: name ('MulBackward0'), nextFunctions ([[GradFn | null, inputNr], ...]
// as PyTorch's next_functions), variable (AccumulateGrad's leaf). It holds a
// reference to its graph node, released by dispose() or when it is collected.
// Every factory PyTorch gives requires_grad= (the *Like ones and the integer
// ones too: randint/randperm then refuse it as PyTorch does, by dtype).
const FACTORIES = ['empty', 'emptyStrided', 'emptyLike', 'zeros', 'ones', 'full', 'arange', 'tensor', 'rand', 'randn',
  'zerosLike', 'onesLike', 'fullLike', 'randLike', 'randnLike', 'linspace', 'logspace', 'eye', 'randint', 'randperm'];

export function installAutograd(api, k) {
  const { M, Tensor, WeftError, wrap, fail, typeName, isOptions, buffer } = k;
  const check = (status, op) => { if (status !== 0) fail(op); };
  const { engineCheck } = installHooks(api, k);
  const nodeRegistry = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((h) => M._weft_wasm_node_release(h)) : null;

  class GradFn {
    #h;
    constructor(h) {
      this.#h = h;
      nodeRegistry?.register(this, h, this);
    }
    #handle() {
      if (!this.#h) throw new WeftError('InvalidArgument', 'gradFn: node has been disposed');
      return this.#h;
    }
    get name() { return M.UTF8ToString(M._weft_wasm_node_name(this.#handle())); }
    // The node's identity (its address): two GradFn wrappers of one graph
    // node have the same id, so a walk over nextFunctions can tell a node
    // reached twice from two nodes of the same name (the demo's graph panel).
    get id() { return this.#handle(); }
    get nextFunctions() {
      const h = this.#handle();
      const n = M._weft_wasm_node_num_next(h);
      const out = [];
      for (let i = 0; i < n; i++) {
        const c = M._weft_wasm_node_next(h, i);
        out.push([c ? new GradFn(c) : null, M._weft_wasm_node_input_nr(h, i)]);
      }
      return out;
    }
    // AccumulateGrad's leaf tensor (a new wrapper), else null
    get variable() {
      const v = M._weft_wasm_node_variable(this.#handle());
      return v ? new Tensor(v) : null;
    }
    toString() { return `<${this.name}>`; }
    dispose() {
      if (!this.#h) return;
      nodeRegistry?.unregister(this);
      M._weft_wasm_node_release(this.#h);
      this.#h = 0;
    }
  }

  function tensorArg(op, name, v) {
    if (!(v instanceof Tensor)) throw new WeftError('TypeError', `${op}(): argument '${name}' must be a Tensor, not ${typeName(v)}`);
    return v.handle(op);
  }

  function boolOpt(op, o, key, dflt) {
    const v = o[key] ?? dflt;
    if (typeof v !== 'boolean') throw new WeftError('TypeError', `${op}(): option '${key}' must be a boolean, not ${typeName(v)}`);
    return v;
  }

  function checkOptions(op, o, allowed) {
    if (o === undefined || o === null) return {};
    if (!isOptions(o) || o instanceof Tensor) throw new WeftError('TypeError', `${op}(): options must be an object, not ${typeName(o)}`);
    for (const key of Object.keys(o)) {
      if (!allowed.includes(key)) {
        throw new WeftError('TypeError', `${op}(): unknown option '${key}' (expected one of ${allowed.join(', ')})`);
      }
    }
    return o;
  }

  // Handles into malloc'd memory for the list entry points; freed by the caller.
  function handles(list) {
    const p = M._malloc(Math.max(1, list.length) * 4) >>> 0;
    const view = new Uint32Array(buffer(), p, list.length);
    list.forEach((h, i) => { view[i] = h; });
    return p;
  }

  const P = Tensor.prototype;
  Object.defineProperty(P, 'requiresGrad', {
    get() { return !!M._weft_wasm_requires_grad(this.handle('requiresGrad')); },
    set(v) { this.requiresGrad_(v); },
  });
  P.requiresGrad_ = function requiresGrad_(flag = true) {
    if (typeof flag !== 'boolean') throw new WeftError('TypeError', `requires_grad_(): argument 'requires_grad' must be a boolean, not ${typeName(flag)}`);
    check(M._weft_wasm_set_requires_grad(this.handle('requiresGrad_'), flag ? 1 : 0), 'requiresGrad_');
    return this;
  };
  Object.defineProperty(P, 'isLeaf', { get() { return !!M._weft_wasm_is_leaf(this.handle('isLeaf')); } });
  Object.defineProperty(P, 'retainsGrad', { get() { return !!M._weft_wasm_retains_grad(this.handle('retainsGrad')); } });
  Object.defineProperty(P, '_version', { get() { return M._weft_wasm_version(this.handle('_version')); } });
  Object.defineProperty(P, 'grad', {
    get() {
      const g = M._weft_wasm_grad(this.handle('grad'));
      return g ? new Tensor(g) : null;
    },
    set(g) {
      const gh = g === null || g === undefined ? 0 : tensorArg('grad', 'grad', g);
      check(M._weft_wasm_set_grad(this.handle('grad'), gh), 'grad');
    },
  });
  Object.defineProperty(P, 'gradFn', {
    get() {
      const n = M._weft_wasm_grad_fn(this.handle('gradFn'));
      return n ? new GradFn(n) : null;
    },
  });
  Object.defineProperty(P, 'outputNr', { get() { return M._weft_wasm_output_nr(this.handle('outputNr')); } });
  P.retainGrad = function retainGrad() {
    check(M._weft_wasm_retain_grad(this.handle('retainGrad')), 'retainGrad');
  };
  P.detach = function detach() { return wrap(M._weft_wasm_detach(this.handle('detach')), 'detach'); };
  P.detach_ = function detach_() {
    check(M._weft_wasm_detach_(this.handle('detach_')), 'detach_');
    return this;
  };
  P.backward = function backward(gradient, opts) {
    const o = checkOptions('backward', opts, ['retainGraph', 'createGraph', 'inputs']);
    const create = boolOpt('backward', o, 'createGraph', false);
    const retain = boolOpt('backward', o, 'retainGraph', create);
    if (o.inputs !== undefined) return backwardInto(this, gradient, o.inputs, retain, create);
    const r = handles([this.handle('backward')]);
    const g = handles([gradient === undefined || gradient === null ? 0 : tensorArg('backward', 'gradient', gradient)]);
    try {
      engineCheck(M._weft_wasm_backward(r, g, 1, retain ? 1 : 0, create ? 1 : 0), 'backward');
    } finally {
      M._free(r);
      M._free(g);
    }
  };

  function grad(outputs, inputs, opts) {
    const o = checkOptions('autograd.grad', opts, ['gradOutputs', 'retainGraph', 'createGraph', 'allowUnused']);
    const outs = (Array.isArray(outputs) ? outputs : [outputs]).map((t, i) => tensorArg('autograd.grad', `outputs[${i}]`, t));
    const ins = (Array.isArray(inputs) ? inputs : [inputs]).map((t, i) => tensorArg('autograd.grad', `inputs[${i}]`, t));
    let gouts = o.gradOutputs ?? outs.map(() => null);
    if (!Array.isArray(gouts)) gouts = [gouts];
    if (gouts.length !== outs.length) {
      throw new WeftError('InvalidArgument', `autograd.grad(): gradOutputs has ${gouts.length} entries but outputs has ${outs.length}`);
    }
    const gh = gouts.map((t, i) => (t === null || t === undefined ? 0 : tensorArg('autograd.grad', `gradOutputs[${i}]`, t)));
    const create = boolOpt('autograd.grad', o, 'createGraph', false);
    const retain = boolOpt('autograd.grad', o, 'retainGraph', create);
    const allowUnused = boolOpt('autograd.grad', o, 'allowUnused', false);
    const po = handles(outs); const pg = handles(gh); const pi = handles(ins); const pr = handles(ins.map(() => 0));
    try {
      engineCheck(M._weft_wasm_autograd_grad(po, pg, outs.length, pi, ins.length, retain ? 1 : 0, create ? 1 : 0,
        allowUnused ? 1 : 0, pr), 'autograd.grad');
      const res = new Uint32Array(buffer(), pr, ins.length);
      return Array.from(res, (h) => (h ? new Tensor(h) : null));
    } finally {
      for (const p of [po, pg, pi, pr]) M._free(p);
    }
  }

  // backward(gradient, { inputs }): PyTorch's inputs=, the gradient accumulated
  // into those tensors' .grad only (leaves or not): autograd.grad's, added
  // into an existing .grad in place (out of place under createGraph, so the
  // sum stays differentiable, as AccumulateGrad does).
  function backwardInto(out, gradient, inputs, retain, create) {
    const list = inputs instanceof Tensor ? [inputs] : inputs;
    if (!Array.isArray(list)) {
      throw new WeftError('TypeError', `backward(): option 'inputs' must be a Tensor or an array of Tensors, not ${typeName(inputs)}`);
    }
    if (!list.length) throw new WeftError('InvalidArgument', "'inputs' argument to backward() cannot be empty.");
    list.forEach((t, i) => {
      tensorArg('backward', `inputs[${i}]`, t);
      if (!t.requiresGrad) throw new WeftError('InvalidArgument', "can't retainGrad on Tensor that has requiresGrad=false");
    });
    const gs = grad([out], list, { gradOutputs: [gradient ?? null], retainGraph: retain, createGraph: create,
      allowUnused: true });
    try {
      list.forEach((t, i) => {
        if (!gs[i]) return;
        // t's hooks run first, as PyTorch runs them on what it accumulates into t.grad
        const hooked = withGradMode('backward', create,
          () => M._weft_wasm_apply_hooks(t.handle('backward'), gs[i].handle('backward')));
        gs[i].dispose();
        if (!hooked) engineCheck(1, 'backward');
        const g = new Tensor(hooked);
        const cur = t.grad;
        const sum = cur && create ? withGradMode('backward', true, () => cur.add(g)) : null;
        if (!cur || sum) t.grad = sum ?? g;
        else withGradMode('backward', false, () => cur.add_(g));
        for (const w of [g, cur, sum]) w?.dispose();
      });
    } finally {
      for (const g of gs) g?.dispose(); // those a failing hook left
    }
  }

  function withGradMode(op, on, fn) {
    if (typeof fn !== 'function') throw new WeftError('TypeError', `${op}(): expected a function, got ${typeName(fn)}`);
    const was = M._weft_wasm_set_grad_enabled(on ? 1 : 0);
    try {
      return fn();
    } finally {
      M._weft_wasm_set_grad_enabled(was);
    }
  }

  // Factories: { requiresGrad } is taken off the options, then set on the result.
  for (const name of FACTORIES) {
    const make = api[name];
    api[name] = function factory(...args) {
      const last = args[args.length - 1];
      if (!isOptions(last) || last instanceof Tensor || !('requiresGrad' in last)) return make(...args);
      const { requiresGrad, ...rest } = last;
      const t = make(...args.slice(0, -1), rest);
      if (requiresGrad === undefined || requiresGrad === false) return t;
      try {
        return t.requiresGrad_(requiresGrad);
      } catch (e) {
        t.dispose();
        throw e;
      }
    };
  }

  api.autograd = Object.freeze({ grad, GradFn });
  api.noGrad = (fn) => withGradMode('noGrad', false, fn);
  api.enableGrad = (fn) => withGradMode('enableGrad', true, fn);
  api.isGradEnabled = () => !!M._weft_wasm_grad_enabled();
  api.setGradEnabled = (on) => {
    if (typeof on !== 'boolean') throw new WeftError('TypeError', `setGradEnabled(): expected a boolean, got ${typeName(on)}`);
    M._weft_wasm_set_grad_enabled(on ? 1 : 0);
  };
}

// Tensor hooks (t.registerHook(fn), PyTorch's Tensor.register_hook). The C
// engine keeps each hook as an id (src/autograd/hooks.c) and calls back into
// Module.weftHooks.call on the thread that runs backward, which is this one.
// fn(grad) runs inside a tidy scope: grad and what fn makes are disposed when
// it returns, except the gradient it returns (wt.keep(t) keeps anything else).
// A hook that throws stops the backward; backward() then throws that error.
function installHooks(api, { M, Tensor, WeftError, fail, typeName, buffer }) {
  const hooks = new Map(); // id -> { fn, name }
  let nextId = 1;
  let hookError = null;

  function replacement(entry, g, r) {
    if (!(r instanceof Tensor)) {
      throw new WeftError('TypeError', `hook '${entry.name}' must return a Tensor, null or undefined, not ${typeName(r)}`);
    }
    if (r.dtype !== g.dtype) {
      throw new WeftError('InvalidArgument', `hook '${entry.name}' has changed the type of value (was ${g.dtype} got ${r.dtype})`);
    }
    const a = r.shape, b = g.shape;
    if (a.length !== b.length || a.some((n, i) => n !== b[i])) {
      throw new WeftError('InvalidArgument', `hook '${entry.name}' has changed the size of value`);
    }
    return M._weft_wasm_tensor_retain(r.handle('registerHook'));
  }

  M.weftHooks = {
    call(id, gradPtr, outPtr) {
      const entry = hooks.get(id);
      if (!entry) return 0;
      try {
        api.tidy(() => {
          const g = new Tensor(M._weft_wasm_tensor_retain(gradPtr));
          const r = entry.fn(g);
          if (r !== undefined && r !== null) new Uint32Array(buffer(), outPtr >>> 0, 1)[0] = replacement(entry, g, r);
        });
        return 0;
      } catch (e) {
        hookError = e;
        return 1;
      }
    },
    free(id) { hooks.delete(id); },
  };

  // a failed backward / grad: the hook's own error if one threw, else weft's
  function engineCheck(status, op) {
    const e = hookError;
    hookError = null;
    if (status === 0) return;
    if (e) {
      M._weft_clear_error();
      throw e;
    }
    fail(op);
  }

  class RemovableHandle {
    #tensor;
    constructor(id, tensor) {
      this.id = id;
      this.#tensor = tensor;
    }
    // the hook stops running at once; C forgets it now if the tensor's handle
    // is still open, else when its tensor or node is freed
    remove() {
      hooks.delete(this.id);
      const t = this.#tensor;
      this.#tensor = null;
      if (t && !t.isDisposed) M._weft_wasm_remove_hook(t.handle('remove'), this.id);
    }
  }

  Tensor.prototype.registerHook = function registerHook(fn) {
    if (typeof fn !== 'function') throw new WeftError('TypeError', `registerHook(): argument 'hook' must be a function, not ${typeName(fn)}`);
    const id = nextId++;
    hooks.set(id, { fn, name: fn.name || '<anonymous>' });
    if (M._weft_wasm_register_hook(this.handle('registerHook'), id) !== 0) {
      hooks.delete(id);
      fail('registerHook');
    }
    return new RemovableHandle(id, this);
  };
  return { engineCheck };
}
