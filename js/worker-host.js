// The worker side of worker mode: owns the weft API and every tensor, and
// answers the client's messages in order (js/worker-client.js speaks the
// protocol). Environment-agnostic: js/worker.js (browsers) and
// js/worker-node.js (worker_threads) give it an endpoint and an init().
//
// Messages in:  { id, kind: 'init', options }
//               { id, kind: 'call', target: tensorId | null, method, args, out: tensorId | null }
//               { id, kind: 'get', target, prop, out? }    (shape, dtype, device, isDisposed, ndim;
//                                                            T and mT into the tensor id out)
//               { id, kind: 'dispose', target, object? }  (object: an optimizer)
//               { id: 0, kind: 'set', target, prop, value }  (t.grad = g, t.requiresGrad = b)
//               { id: 0, kind: 'gradMode', enabled } | { id: 0, kind: 'gradMode', restore: true }
//               { id, kind: 'new', ctor: 'optim.SGD', args, out }  (an object named out)
//               { id, kind: 'ocall', target: objectId, method, args }
// Messages out: { id, ok: true, value, meta? } | { id, ok: false, error: { code, message } }
// Arguments and values encode tensors as { $t: id }; a named tuple result
// ({ values, indices }) as { $tuple: names, items }. init answers { tuples, lists, namespaces }.
// A function of one of torch's namespaces is named 'linalg.solve' (and 'autograd.grad').
import { NAMESPACES } from './ops.js';

export function serve(endpoint, init) {
  let wt = null;
  const tensors = new Map(); // id -> Tensor
  const failed = new Map(); // id -> error of the call that should have made it
  const refs = new Map(); // Tensor -> number of ids naming it (in-place ops return self)
  const deferred = new Map(); // id -> error of an assignment to it, thrown at its next use
  const objects = new Map(); // id -> optimizer
  const gradModes = []; // grad mode before each open noGrad/enableGrad scope

  const isTensor = (v) => wt !== null && v instanceof wt.Tensor;

  function tensorOf(id) {
    if (failed.has(id)) throw failed.get(id);
    if (deferred.has(id)) {
      const e = deferred.get(id);
      deferred.delete(id);
      throw e;
    }
    const t = tensors.get(id);
    if (!t) throw Object.assign(new Error('worker: tensor has been disposed'), { code: 'InvalidArgument' });
    return t;
  }

  function decode(v) {
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return v;
    if (typeof v.$t === 'number') return tensorOf(v.$t);
    if (Array.isArray(v)) return v.map(decode);
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = decode(x);
    return o;
  }

  // the client holds it by id: no scope and no training-step rule (js/nn/memory.js) frees it
  function bind(id, t) {
    wt.keep(t);
    tensors.set(id, t);
    refs.set(t, (refs.get(t) ?? 0) + 1);
  }

  function objectOf(id) {
    if (failed.has(id)) throw failed.get(id);
    const o = objects.get(id);
    if (!o) throw Object.assign(new Error('worker: the optimizer has been disposed'), { code: 'InvalidArgument' });
    return o;
  }

  function release(id) {
    const t = tensors.get(id);
    failed.delete(id);
    deferred.delete(id);
    if (!t) return;
    tensors.delete(id);
    const n = refs.get(t) - 1;
    if (n > 0) refs.set(t, n);
    else { refs.delete(t); t.dispose(); }
  }

  const meta = (t) => ({ shape: t.shape, dtype: t.dtype, device: t.device });
  // { values, indices } of an op with named returns (js/ops.js tupleMaker)
  const isTuple = (r) => r !== null && typeof r === 'object' && !Array.isArray(r) &&
    typeof r[Symbol.iterator] === 'function' && Object.values(r).some(isTensor);

  // A value for postMessage: tensors the client did not name yet get fresh
  // negative ids it adopts (lists of tensors from split-like ops, objects of
  // them from loadSafetensors).
  let fresh = -1;
  function encode(v) {
    if (isTensor(v)) {
      const id = fresh--;
      bind(id, v);
      return { $t: id, meta: meta(v) };
    }
    if (Array.isArray(v)) return v.map(encode);
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
    return v;
  }

  const isPlainObject = (v) => v !== null && typeof v === 'object' && !ArrayBuffer.isView(v) &&
    [Object.prototype, null].includes(Object.getPrototypeOf(v));
  const hasTensor = (v) => isTensor(v) || (Array.isArray(v) ? v.some(hasTensor) :
    isPlainObject(v) && Object.values(v).some(hasTensor));

  // A tensor the client named in advance (msg.out).
  function bindResult(msg, r) {
    if (r === null && msg.prop === 'grad') {
      throw Object.assign(new Error("grad: the tensor's .grad is null (no backward reached it, or it was cleared); " +
        'await t.gradOrNull() tells'), { code: 'InvalidArgument' });
    }
    if (!isTensor(r)) {
      throw Object.assign(new Error(`${msg.method ?? msg.prop}: did not return a tensor`), { code: 'TypeError' });
    }
    bind(msg.out, r);
    return { value: null, meta: meta(r) };
  }

  // t.gradFn as plain data: { name, nextFunctions: [[{ name } | null, inputNr]] }
  // (one level: a deep graph would be large to copy); the node wrappers made
  // here are released at once.
  function describeNode(g, withNext) {
    if (g === null) return null;
    try {
      if (!withNext) return { name: g.name };
      return { name: g.name, nextFunctions: g.nextFunctions.map(([n, nr]) => [describeNode(n, false), nr]) };
    } finally {
      g.dispose();
    }
  }

  // [the object holding it, its name] for a function name of the client:
  // 'solve' of wt, or 'linalg.solve' / 'autograd.grad' of a namespace. A name
  // the object lacks is looked up (after `in`, which does not throw) so that
  // js/traps.js's did-you-mean error reaches the client as on the main thread.
  function functionOf(method) {
    const dot = typeof method === 'string' ? method.indexOf('.') : -1;
    const ns = dot > 0 ? method.slice(0, dot) : null;
    const known = ns === 'autograd' ? method === 'autograd.grad' : NAMESPACES.includes(ns);
    const [self, name] = ns && known && wt[ns] ? [wt[ns], method.slice(dot + 1)] : [wt, method];
    if (typeof name === 'string' && !(name in self) && Object.getPrototypeOf(self) !== Object.prototype) {
      void self[name]; // throws the WeftError naming the closest names (a guarded object)
    }
    return [self, name];
  }

  async function handle(msg) {
    switch (msg.kind) {
      case 'init': {
        wt = await init(msg.options);
        // the names whose calls may return several tensors: the client waits for those
        return { value: { tuples: wt.ops.generated.tuples, lists: wt.ops.generated.lists,
          namespaces: NAMESPACES.filter((ns) => wt[ns]) } };
      }
      case 'dispose':
        if (msg.object) {
          objects.get(msg.target)?.dispose();
          objects.delete(msg.target);
          failed.delete(msg.target);
        } else release(msg.target);
        return null;
      case 'set':
        // no answer: a failure waits for the tensor's next use
        try {
          if (!['grad', 'requiresGrad'].includes(msg.prop)) {
            throw Object.assign(new Error(`${msg.prop}: cannot be assigned in worker mode`), { code: 'TypeError' });
          }
          tensorOf(msg.target)[msg.prop] = decode(msg.value);
        } catch (e) {
          deferred.set(msg.target, e);
        }
        return null;
      case 'gradMode':
        if (msg.restore) wt.setGradEnabled(gradModes.pop() ?? true);
        else {
          gradModes.push(wt.isGradEnabled());
          wt.setGradEnabled(msg.enabled);
        }
        return null;
      case 'new': {
        const [ns, name] = msg.ctor.split('.');
        if (ns !== 'optim' || !Object.hasOwn(wt.optim, name)) {
          throw Object.assign(new Error(`${msg.ctor}: not a weft optimizer`), { code: 'TypeError' });
        }
        objects.set(msg.out, new wt.optim[name](...decode(msg.args)));
        return { value: null };
      }
      case 'ocall': {
        if (!['step', 'zeroGrad'].includes(msg.method)) {
          throw Object.assign(new Error(`${msg.method}: not an optimizer method`), { code: 'TypeError' });
        }
        objectOf(msg.target)[msg.method](...decode(msg.args));
        return { value: null };
      }
      case 'get': {
        const obj = msg.target === null ? wt : tensorOf(msg.target);
        if (msg.target === null && !['backend', 'buildId', 'variant'].includes(msg.prop)) {
          throw Object.assign(new Error(`${msg.prop}: not a weft property`), { code: 'TypeError' });
        }
        const v = obj[msg.prop];
        if (msg.out !== undefined) return bindResult(msg, v);
        if (msg.prop === 'gradFn') return { value: describeNode(v, true) };
        if (isTensor(v)) return { value: encode(v) }; // t.gradOrNull()
        return { value: v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...v } : v };
      }
      case 'call': {
        const [self, name] = msg.target === null ? functionOf(msg.method) : [tensorOf(msg.target), msg.method];
        const fn = name in self ? self[name] : undefined;
        // Object.prototype's functions (constructor, valueOf, ...) are no weft function
        if (typeof fn !== 'function' || name === 'constructor' || fn === Object.prototype[name]) {
          throw Object.assign(new Error(`${msg.method}: not a weft ${msg.target === null ? 'function' : 'Tensor method'}`),
            { code: 'TypeError' });
        }
        let r = fn.apply(self, decode(msg.args));
        if (r && typeof r.then === 'function') r = await r;
        if (msg.out !== null) return bindResult(msg, r);
        if (typeof r === 'function') return { value: null };
        if (isTuple(r)) return { value: { $tuple: Object.keys(r), items: [...r].map(encode) } };
        if (isTensor(r)) return { value: encode(r) }; // a value call that made one tensor (ww.max(x))
        if (r !== null && typeof r === 'object' && !Array.isArray(r) && !ArrayBuffer.isView(r) && !hasTensor(r)) {
          return { value: JSON.parse(JSON.stringify(r)) };
        }
        return { value: encode(r) };
      }
      default:
        throw new Error(`worker: unknown message kind ${msg.kind}`);
    }
  }

  // One message at a time, in arrival order (an async init must finish before
  // the calls queued behind it).
  let queue = Promise.resolve();
  endpoint.onMessage((msg) => {
    queue = queue.then(async () => {
      try {
        const r = await handle(msg);
        if (r === null) return;
        endpoint.post({ id: msg.id, ok: true, value: r.value, meta: r.meta });
      } catch (e) {
        const error = { code: e.code ?? 'InternalError', message: e.message ?? String(e), name: e.name };
        if (msg.out !== null && msg.out !== undefined) failed.set(msg.out, e);
        endpoint.post({ id: msg.id, ok: false, error });
      }
    });
  });
}
