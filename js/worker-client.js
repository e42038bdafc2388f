// Worker mode, page side: the weft API with every call forwarded to a
// dedicated Worker, so kernels never run on the page's main thread.
//
// Calls that make tensors return a WorkerTensor at once (its id is chosen
// here, so chains like ww.rand([2, 3]).t().contiguous() cost no round trip);
// calls that read values return promises (await t.toArray()). Messages are
// handled in order, so a failed call surfaces as the rejection of the first
// value read from its tensor, with the original WeftError message.
//
// Ops that can return several tensors (wt.max(x, 1), varMean) go as value
// calls: `const { values, indices } = await ww.max(x, 1)` (the names come from
// the worker at init; ww.max(x) then resolves to a WorkerTensor).
//
// Inputs are copied (structured clone). With { transfer: true } in a call's
// options, the ArrayBuffers of its TypedArray arguments are transferred
// instead: faster, and they become detached (length 0) on the caller's side.
//
// Autograd: the graph, .grad, grad mode and the optimizers live in the
// worker. backward(), step() and the other calls that return nothing return
// promises settled once the worker ran them; t.grad is a WorkerTensor at once
// (it fails when there is no gradient: t.gradOrNull() tells); noGrad(fn)
// scopes the calls fn sends by two grad-mode messages around them.
import { WeftError } from './core.js';
import { tupleMaker } from './ops.js';

// Methods whose result is a value (a promise here), not a tensor.
const TENSOR_VALUES = new Set([
  'toArray', 'data', 'item', 'toString', 'toNpy', 'size', 'stride', 'dim', 'ndimension', 'numel',
  'storageOffset', 'elementSize', 'dataPtr', 'isContiguous', 'isNonOverlappingAndDense',
  'suggestMemoryFormat', 'handle', 'explain', 'tolist', 'equal', 'allclose',
  // autograd: promises of undefined, settled once the worker ran them
  'backward', 'retainGrad',
]);
const TENSOR_PROPS = new Set(['shape', 'dtype', 'device', 'isDisposed', 'ndim',
  'requiresGrad', 'isLeaf', 'retainsGrad', 'gradFn', 'outputNr']);
// Properties whose value is a tensor (views: t.T, t.mT; t.grad, a failed
// WorkerTensor when the grad is null: await t.gradOrNull() tells).
const TENSOR_GETTERS = new Set(['T', 'mT', 'grad']);
// Properties that can be assigned (t.grad = null clears the gradient).
const TENSOR_SETTERS = new Set(['grad', 'requiresGrad']);
const API_VALUES = new Set([
  'memory', 'promoteTypes', 'canCast', 'setNumThreads', 'getNumThreads', 'maxThreads', 'threadsReady', 'manualSeed',
  'explain', 'trace', 'ops', 'schema', 'readSafetensorsHeader', 'saveSafetensors',
  // an object of tensors (adopted as WorkerTensors)
  'loadSafetensors', 'getDefaultDtype', 'setDefaultDtype',
  'isGradEnabled', 'setGradEnabled', 'autograd.grad',
]);
// Methods returning lists of tensors.
const TENSOR_LISTS = new Set(['split', 'chunk', 'unbind', 'tensorSplit', 'broadcastTensors', 'meshgrid']);
// ... and those that return a list only with an option: maxPool2d(x, k, { returnIndices: true })
// own names only: 'constructor' or 'toString' must not find Object.prototype's
const LIST_WHEN = {
  maxPool2d: (args) => args.some((a) => isPlainOptions(a) && a.returnIndices === true),
  // unique(x, { returnInverse: true }): { values, inverse }
  unique: (args) => args.some((a) => isPlainOptions(a) && (a.returnInverse === true || a.returnCounts === true)),
  nonzero: (args) => args.some((a) => isPlainOptions(a) && (a.asTuple === true || a.as_tuple === true)),
  where: (args) => args.length === 1,
};

function isPlainOptions(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) &&
    !(v instanceof ArrayBuffer) && !(v instanceof WorkerTensorBase);
}

class WorkerTensorBase {}

// A hook is a function of this thread that backward, running in the worker,
// would have to call in the middle of its pass: worker mode cannot.
function registerHookInWorker() {
  throw new WeftError('NotImplemented', 'registerHook: tensor hooks are not available in worker mode (backward runs in ' +
    'the worker and cannot call a function of this thread); use weft on this thread (init()) for hooks');
}

export async function createWorkerApi(endpoint, options) {
  let nextId = 1;
  let nextTensor = 1;
  const pending = new Map();
  const scopes = [];
  let closed = false;
  let dead = null; // the WeftError every call gets once the worker has died
  let tuples = new Set(); // methods that may return several tensors, as a tuple or a Tensor[] (from init)

  // A dead worker (an uncaught error, an exit) fails every pending call and
  // every later one, so nothing waits forever.
  endpoint.onDeath?.((why) => {
    if (closed || dead) return;
    dead = new WeftError('InternalError', `worker: the worker stopped (${why}); create a new one with initWorker()`);
    for (const p of pending.values()) p.reject(dead);
    pending.clear();
    endpoint.idle?.();
  });

  endpoint.onMessage((msg) => {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (pending.size === 0) endpoint.idle?.();
    if (msg.ok) p.resolve(msg);
    else p.reject(new WeftError(msg.error.code, msg.error.message));
  });

  function send(msg, transfer) {
    if (closed) return Promise.reject(new WeftError('InvalidArgument', 'worker: terminated'));
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    const p = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    if (pending.size === 1) endpoint.busy?.();
    try {
      endpoint.post({ id, ...msg }, transfer);
    } catch (e) {
      // e.g. a DataCloneError for a function or a Symbol argument: the
      // request never left, so it must not stay pending
      pending.get(id).reject(new WeftError('InvalidArgument',
        `${msg.method ?? msg.prop ?? msg.kind}: an argument cannot be sent to the worker (${e.message})`));
      pending.delete(id);
      if (pending.size === 0) endpoint.idle?.();
    }
    return p;
  }

  // Encodes arguments; collects buffers to transfer when asked.
  function encodeArgs(args) {
    let transfer = null;
    const last = args[args.length - 1];
    if (isPlainOptions(last) && 'transfer' in last) {
      const { transfer: t, ...rest } = last;
      if (t === true) transfer = [];
      args = Object.keys(rest).length ? [...args.slice(0, -1), rest] : args.slice(0, -1);
    }
    const enc = (v) => {
      if (v instanceof WorkerTensorBase) return { $t: v.id };
      if (ArrayBuffer.isView(v)) {
        if (transfer && !transfer.includes(v.buffer)) transfer.push(v.buffer);
        return v;
      }
      if (Array.isArray(v)) return v.map(enc);
      if (isPlainOptions(v)) {
        const o = {};
        for (const [k, x] of Object.entries(v)) o[k] = enc(x);
        return o;
      }
      return v;
    };
    return { args: args.map(enc), transfer: transfer ?? [] };
  }

  function adopt(v) {
    if (v !== null && typeof v === 'object' && typeof v.$t === 'number') {
      const t = makeTensor(v.$t);
      t.ready = Promise.resolve(v.meta);
      return t;
    }
    if (v !== null && typeof v === 'object' && Array.isArray(v.$tuple)) return tupleMaker(v.$tuple)(v.items.map(adopt));
    if (Array.isArray(v)) return v.map(adopt);
    if (isPlainOptions(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, adopt(x)]));
    return v;
  }

  function makeTensor(id) {
    const base = new WorkerTensorBase();
    base.id = id;
    base.disposed = false;
    const proxy = new Proxy(base, {
      get(target, prop) {
        if (prop === 'id' || prop === 'ready') return target[prop];
        if (prop === 'then') return undefined; // not a thenable
        if (prop === 'dispose') return () => dispose(target);
        if (prop === 'gradOrNull') {
          return () => send({ kind: 'get', target: id, prop: 'grad' }).then((m) => adopt(m.value));
        }
        if (prop === 'isDisposed' && target.disposed) return Promise.resolve(true);
        if (prop === 'registerHook') return registerHookInWorker;
        if (typeof prop === 'symbol') return target[prop];
        if (TENSOR_PROPS.has(prop)) return send({ kind: 'get', target: id, prop }).then((m) => m.value);
        if (TENSOR_GETTERS.has(prop)) return tensorFrom({ kind: 'get', target: id, prop }, []);
        return (...args) => call(id, prop, args);
      },
      // t.grad = null / t.grad = g / t.requiresGrad = flag: sent in order; a
      // failure surfaces at the next use of t (an assignment has no promise)
      set(target, prop, value) {
        if (!TENSOR_SETTERS.has(prop)) return Reflect.set(target, prop, value);
        notify({ kind: 'set', target: id, prop, value: encodeArgs([value]).args[0] });
        return true;
      },
    });
    base.proxy = proxy;
    if (scopes.length) scopes[scopes.length - 1].add(proxy);
    return proxy;
  }

  // A message without an answer (dispose, grad mode, assignments): nothing
  // waits for it, and a dead or closed worker has nothing left to change.
  function notify(msg) {
    if (closed || dead) return;
    try {
      endpoint.post({ id: 0, ...msg }, []);
    } catch (e) {
      throw new WeftError('InvalidArgument', `${msg.prop ?? msg.kind}: a value cannot be sent to the worker (${e.message})`);
    }
  }

  function dispose(target) {
    if (target.disposed) return;
    target.disposed = true;
    for (const s of scopes) s.delete(target.proxy);
    notify({ kind: 'dispose', target: target.id });
  }

  function call(target, method, rawArgs) {
    const { args, transfer } = encodeArgs(rawArgs);
    const valueCall = target === null ? API_VALUES.has(method) : TENSOR_VALUES.has(method);
    if (valueCall || TENSOR_LISTS.has(method) || tuples.has(method) || (Object.hasOwn(LIST_WHEN, method) && LIST_WHEN[method](rawArgs))) {
      return send({ kind: 'call', target, method, args, out: null }, transfer).then((m) => adopt(m.value));
    }
    return tensorFrom({ kind: 'call', target, method, args }, transfer);
  }

  // A WorkerTensor for the tensor msg makes (its id chosen here: no round trip).
  function tensorFrom(msg, transfer) {
    const out = nextTensor++;
    const t = makeTensor(out);
    const ready = send({ ...msg, out }, transfer).then((m) => m.meta);
    ready.catch(() => {}); // surfaced by the first read of t
    Object.defineProperty(t, 'ready', { value: ready });
    return t;
  }

  // tidy on this side: disposes the WorkerTensors made while fn ran
  // (synchronously), except those in its result.
  function tidy(fn) {
    const scope = new Set();
    scopes.push(scope);
    const finish = (r) => {
      const keep = new Set();
      const walk = (v) => {
        if (v instanceof WorkerTensorBase) keep.add(v);
        else if (Array.isArray(v)) v.forEach(walk);
        else if (isPlainOptions(v)) Object.values(v).forEach(walk);
      };
      walk(r);
      const parent = scopes[scopes.length - 1];
      for (const t of scope) {
        if (keep.has(t)) parent?.add(t);
        else t.dispose();
      }
      return r;
    };
    let r;
    try {
      r = fn(api);
    } finally {
      scopes.splice(scopes.lastIndexOf(scope), 1);
    }
    if (r && typeof r.then === 'function') return r.then(finish, (e) => { finish(undefined); throw e; });
    return finish(r);
  }

  // noGrad(fn) / enableGrad(fn): grad mode lives in the worker, fn runs here.
  // Messages are handled in order, so switching the mode, sending fn's calls
  // and restoring the mode scopes exactly those calls. An async fn's scope
  // lasts until it settles: calls made elsewhere meanwhile are inside it (as
  // in tidy).
  function withGradMode(name, enabled, fn) {
    if (typeof fn !== 'function') throw new WeftError('TypeError', `${name}(): expected a function, got ${typeof fn}`);
    notify({ kind: 'gradMode', enabled });
    const restore = () => notify({ kind: 'gradMode', restore: true });
    let r;
    try {
      r = fn(api);
    } catch (e) {
      restore();
      throw e;
    }
    if (r && typeof r.then === 'function') return r.then((v) => { restore(); return v; }, (e) => { restore(); throw e; });
    restore();
    return r;
  }

  // An optimizer living in the worker (named by an id like a tensor, chosen
  // here): step() and zeroGrad() are promises settled once the worker ran
  // them; a constructor error rejects ready and every later call.
  class WorkerOptimizer {
    #id;
    #disposed = false;
    constructor(kind, params, options) {
      this.#id = nextTensor++;
      // every parameter, group after group (parameter groups are plain objects)
      this.params = Array.isArray(params) ? params.flatMap((g) => (isPlainOptions(g) ? [].concat(g.params ?? []) : [g])) : params;
      this.ready = send({ kind: 'new', ctor: `optim.${kind}`, args: encodeArgs([params, options ?? {}]).args, out: this.#id })
        .then(() => undefined);
      this.ready.catch(() => {}); // surfaced by step() and zeroGrad() too
    }
    #call(method, args) {
      if (this.#disposed) return Promise.reject(new WeftError('InvalidArgument', `${method}: the optimizer has been disposed`));
      return send({ kind: 'ocall', target: this.#id, method, args: encodeArgs(args).args }).then(() => undefined);
    }
    // step(closure): the closure runs here under enableGrad (its calls go
    // first), then the step; resolves with the closure's result
    step(closure) {
      if (closure === undefined) return this.#call('step', []);
      const loss = withGradMode('step', true, closure);
      if (loss && typeof loss.then === 'function') return loss.then((l) => this.#call('step', []).then(() => l));
      return this.#call('step', []).then(() => loss);
    }
    zeroGrad(options) { return this.#call('zeroGrad', options === undefined ? [] : [options]); }
    // releases the optimizer's state in the worker (the parameters stay yours)
    dispose() {
      if (this.#disposed) return;
      this.#disposed = true;
      notify({ kind: 'dispose', target: this.#id, object: true });
    }
  }
  const optimizer = (kind) => ({
    [kind]: class extends WorkerOptimizer { constructor(params, options) { super(kind, params, options); } },
  })[kind];

  // One of torch's namespaces (wt.linalg): its functions go as 'linalg.solve';
  // the worker refuses a name the namespace lacks, with its did-you-mean.
  function namespace(ns) {
    return new Proxy(Object.create(null), {
      get(target, name) {
        if (typeof name === 'symbol' || name === 'then') return undefined;
        return (...args) => call(null, `${ns}.${name}`, args);
      },
    });
  }

  const local = {
    tidy,
    noGrad: (fn) => withGradMode('noGrad', false, fn),
    enableGrad: (fn) => withGradMode('enableGrad', true, fn),
    autograd: Object.freeze({ grad: (...args) => call(null, 'autograd.grad', args) }),
    optim: Object.freeze({ SGD: optimizer('SGD'), Adam: optimizer('Adam'), AdamW: optimizer('AdamW') }),
    keep: (t) => { for (const s of scopes) s.delete(t); return t; },
    backend: () => send({ kind: 'get', target: null, prop: 'backend' }).then((m) => m.value),
    buildId: () => send({ kind: 'get', target: null, prop: 'buildId' }).then((m) => m.value),
    terminate: async () => {
      closed = true;
      for (const p of pending.values()) p.reject(new WeftError('InvalidArgument', 'worker: terminated'));
      pending.clear();
      await endpoint.terminate();
    },
    WeftError,
  };
  const api = new Proxy(local, {
    get(target, prop) {
      if (prop in target) return target[prop];
      if (prop === 'then' || typeof prop === 'symbol') return undefined;
      return (...args) => call(null, prop, args);
    },
  });

  const ready = await send({ kind: 'init', options: options ?? {} });
  tuples = new Set([...(ready.value?.tuples ?? []), ...(ready.value?.lists ?? [])]);
  for (const ns of ready.value?.namespaces ?? []) local[ns] = namespace(ns);
  return api;
}
