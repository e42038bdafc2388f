// wt.optim: SGD, Adam and AdamW with PyTorch 1.13's update rules (torch.optim's
// single-tensor forms), parameter groups, step(), zeroGrad(), and stateDict() /
// loadStateDict() in torch.optim's shape; wt.optim.lrScheduler (js/lr_scheduler.js).
// Each step runs under wt.noGrad and updates the parameters in place, so a
// parameter stays the same leaf (same handle, same .grad slot); optimizer
// state (momentum buffers, moment estimates) is weft tensors owned by the
// optimizer until dispose(). A parameter whose .grad is null is skipped, as
// in PyTorch (a frozen parameter). SGD's lr has no default (torch.optim's `required`).
//
// paramGroups are live objects ({ params, lr, momentum, ... } in camelCase):
// a scheduler or the user changing group.lr changes the next step. The state
// dict speaks PyTorch's snake_case (momentum_buffer, exp_avg, weight_decay,
// initial_lr, ...), so it round-trips with a torch-saved optimizer state dict.
import { installLrScheduler } from './lr_scheduler.js';

const camelCase = (k) => k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const snakeCase = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function installOptim(api, { Tensor, WeftError, isOptions }) {
  const fail = (op, msg, code = 'InvalidArgument') => { throw new WeftError(code, `${op}: ${msg}`); };
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);
  const isIterable = (v) => v !== null && v !== undefined && typeof v[Symbol.iterator] === 'function';

  // PyTorch's names for the values its constructors check, camelCased
  const CHECKED = { lr: 'learning rate', momentum: 'momentum value', weightDecay: 'weightDecay value',
    eps: 'epsilon value', dampening: 'dampening value' };
  const BOOLEANS = ['nesterov', 'amsgrad', 'maximize'];

  function checkOption(op, k, v) {
    if (k in CHECKED) {
      if (typeof v !== 'number') fail(op, `option '${k}' must be a number, not ${typeOf(v)}`, 'TypeError');
      if (!(v >= 0)) fail(op, `Invalid ${CHECKED[k]}: ${v}`);
    }
    if (BOOLEANS.includes(k) && typeof v !== 'boolean') fail(op, `option '${k}' must be a boolean, not ${typeOf(v)}`, 'TypeError');
    if (k === 'betas') {
      if (!Array.isArray(v) || v.length !== 2 || v.some((x) => typeof x !== 'number')) {
        fail(op, `option 'betas' must be an array of two numbers, not ${typeOf(v)}`, 'TypeError');
      }
      for (const i of [0, 1]) if (!(v[i] >= 0 && v[i] < 1)) fail(op, `Invalid beta parameter at index ${i}: ${v[i]}`);
    }
  }

  // defaults[k] === undefined marks a required option (SGD's lr, as torch.optim's
  // `required`): each parameter group must then give it (addParamGroup checks)
  function readOptions(op, opts, defaults) {
    if (opts !== undefined && !isOptions(opts)) fail(op, 'expected an options object');
    const o = { ...defaults };
    for (const [k, v] of Object.entries(opts ?? {})) {
      if (!(k in defaults)) fail(op, `unknown option '${k}' (expected ${Object.keys(defaults).join(', ')})`);
      o[k] = v;
    }
    for (const [k, v] of Object.entries(o)) if (v !== undefined) checkOption(op, k, v);
    return o;
  }

  function groupParams(op, params) {
    if (params instanceof Tensor) return [params];
    if (!isIterable(params) || typeof params === 'string') {
      fail(op, `a parameter group's params must be a Tensor or an iterable of Tensors, not ${typeOf(params)}`, 'TypeError');
    }
    const list = Array.from(params);
    list.forEach((p, i) => {
      if (!(p instanceof Tensor)) fail(op, `optimizer can only optimize Tensors, but parameter ${i} is ${typeOf(p)}`, 'TypeError');
      if (!p.isLeaf && !p.retainsGrad) fail(op, "can't optimize a non-leaf Tensor");
    });
    if (new Set(list).size !== list.length) fail(op, 'some parameters appear more than once in the parameter list');
    return list;
  }

  // the gradient to apply (a new tensor the caller disposes), or null
  function gradOf(p, maximize) {
    const g = p.grad;
    if (!g || !maximize) return g;
    const n = g.neg();
    g.dispose();
    return n;
  }

  const FLOATS = new Set(['float16', 'bfloat16', 'float32', 'float64']);
  const field = (o, k) => (o instanceof Map ? o.get(k) : o?.[k]);
  const entriesOf = (o) => (o instanceof Map ? [...o.entries()] : Object.entries(o ?? {}));
  const plain = (v) => (Array.isArray(v) ? v.slice() : v);

  class Optimizer {
    #op;
    #extras;
    #constructed = false;
    // extras: PyTorch's group options weft has no use for (foreach, fused, ...),
    // written into state dicts with PyTorch's defaults so torch reads them back
    constructor(op, params, options, defaults, extras = {}) {
      this.#op = op;
      this.#extras = extras;
      this.defaults = readOptions(op, options, defaults);
      this.state = new Map(); // parameter -> { momentumBuffer | step, expAvg, ... }
      this.paramGroups = [];
      if (params instanceof Tensor) {
        fail(op, 'params argument given to the optimizer should be an array of Tensors or parameter groups, but got a Tensor',
          'TypeError');
      }
      if (!isIterable(params)) fail(op, `params must be an array of Tensors or parameter groups, not ${typeOf(params)}`, 'TypeError');
      let groups = Array.from(params);
      if (!groups.length) fail(op, 'optimizer got an empty parameter list');
      if (groups[0] instanceof Tensor || !isOptions(groups[0])) groups = [{ params: groups }];
      for (const g of groups) this.addParamGroup(g);
      this.#constructed = true;
    }
    // every parameter, group after group
    get params() { return this.paramGroups.flatMap((g) => g.params); }

    // torch.optim's add_param_group: group options override the defaults; a
    // parameter belongs to one group only
    addParamGroup(group) {
      const op = this.#constructed ? `${this.#op}.addParamGroup` : this.#op;
      if (!isOptions(group) || group instanceof Tensor) fail(op, `param group must be an object, not ${typeOf(group)}`, 'TypeError');
      const params = groupParams(op, group.params);
      const g = { params };
      for (const [k, v] of Object.entries(group)) {
        if (k === 'params') continue;
        checkOption(op, k, v);
        g[k] = plain(v);
      }
      for (const [k, v] of Object.entries(this.defaults)) {
        if (k in g) continue;
        if (v === undefined) fail(op, `parameter group didn't specify a value of required optimization parameter ${k} (pass { ${k} })`);
        g[k] = plain(v);
      }
      const taken = new Set(this.params);
      if (params.some((p) => taken.has(p))) fail(op, 'some parameters appear in more than one parameter group');
      this.paramGroups.push(g);
    }

    // 1.13's default keeps the grad tensors and fills them with zeros;
    // { setToNone: true } drops them (the next backward makes new ones)
    zeroGrad({ setToNone = false } = {}) {
      for (const p of this.params) {
        if (setToNone) {
          p.grad = null;
          continue;
        }
        const g = p.grad;
        if (!g) continue;
        api.noGrad(() => g.zero_());
        g.dispose();
      }
    }
    step(closure) {
      let loss;
      if (closure) loss = api.enableGrad(closure);
      api.noGrad(() => {
        for (const group of this.paramGroups) {
          for (const p of group.params) {
            const g = gradOf(p, group.maximize);
            if (!g) continue;
            let s = this.state.get(p);
            if (!s) this.state.set(p, (s = this.initState(p, group)));
            try {
              this.update(p, g, s, group);
            } finally {
              g.dispose();
              // the state belongs to the optimizer, not to a tidy() around step():
              // a training step wrapped in tidy must not lose its momentum buffers
              for (const v of Object.values(s)) if (v instanceof Tensor) api.keep(v);
            }
          }
        }
      });
      return loss;
    }

    // { state: { 0: { momentum_buffer, ... } }, param_groups: [{ lr, ..., params: [0, 1] }] }:
    // parameters by their index over the groups; state tensors are new handles on
    // the optimizer's own (dispose them when done; the optimizer keeps its state)
    stateDict() {
      const index = new Map();
      const param_groups = this.paramGroups.map((g) => {
        const packed = {};
        for (const [k, v] of Object.entries(g)) if (k !== 'params') packed[snakeCase(k)] = plain(v);
        for (const [k, v] of Object.entries(this.#extras)) if (!(k in packed)) packed[k] = v;
        packed.params = g.params.map((p) => {
          if (!index.has(p)) index.set(p, index.size);
          return index.get(p);
        });
        return packed;
      });
      const state = {};
      for (const [p, s] of this.state) {
        if (!index.has(p)) continue;
        const packed = {};
        for (const [k, v] of Object.entries(s)) {
          packed[snakeCase(k)] = k === 'step' && this.stepTensor ? api.tensor(v, { dtype: 'float32' })
            : v instanceof Tensor ? v.detach() : v;
        }
        state[index.get(p)] = packed;
      }
      return { state, param_groups };
    }

    // PyTorch's load_state_dict: same number of groups and group sizes, the
    // saved state copied (floating tensors cast to the parameter's dtype, step
    // kept as is) and the saved group options taken (params stay these). The
    // new state is built first: a bad entry leaves the optimizer as it was.
    loadStateDict(stateDict) {
      const op = `${this.#op}.loadStateDict`;
      const savedGroups = field(stateDict, 'param_groups');
      const savedState = field(stateDict, 'state');
      if (!Array.isArray(savedGroups) || (savedState !== undefined && typeof savedState !== 'object')) {
        fail(op, 'expected a state dict { state, param_groups } as stateDict() returns', 'TypeError');
      }
      if (savedGroups.length !== this.paramGroups.length) fail(op, 'loaded state dict has a different number of parameter groups');
      const savedIds = savedGroups.map((g) => field(g, 'params'));
      if (savedIds.some((ids, i) => !Array.isArray(ids) || ids.length !== this.paramGroups[i].params.length)) {
        fail(op, "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
      }
      const byId = new Map();
      savedIds.forEach((ids, i) => ids.forEach((id, j) => byId.set(Number(id), this.paramGroups[i].params[j])));
      const state = new Map();
      try {
        for (const [id, saved] of entriesOf(savedState)) {
          const p = byId.get(Number(id));
          if (p) state.set(p, this.#castState(op, p, saved));
        }
      } catch (e) {
        for (const s of state.values()) disposeState(s);
        throw e;
      }
      this.dispose();
      for (const [p, s] of state) {
        for (const v of Object.values(s)) if (v instanceof Tensor) api.keep(v);
        this.state.set(p, s);
      }
      savedGroups.forEach((saved, i) => {
        const g = this.paramGroups[i];
        for (const [k, v] of entriesOf(saved)) if (k !== 'params') g[camelCase(k)] = plain(v);
      });
    }

    #castState(op, p, saved) {
      const s = {};
      try {
        for (const [k, v] of entriesOf(saved)) {
          const key = camelCase(k);
          if (key === 'step') s.step = v instanceof Tensor ? v.item() : Number(v);
          else if (v instanceof Tensor) s[key] = castLike(op, p, k, v);
          else s[key] = v;
        }
      } catch (e) {
        disposeState(s);
        throw e;
      }
      return s;
    }

    // releases the optimizer's state tensors (the parameters stay the caller's)
    dispose() {
      for (const s of this.state.values()) disposeState(s);
      this.state.clear();
    }
  }

  function disposeState(s) {
    for (const v of Object.values(s)) if (v instanceof Tensor) v.dispose();
  }

  // a copy of a saved state tensor in p's dtype (floating p) and shape
  function castLike(op, p, key, v) {
    const same = v.shape.length === p.shape.length && v.shape.every((n, i) => n === p.shape[i]);
    if (!same) {
      fail(op, `state '${key}' has shape [${v.shape.join(', ')}] but its parameter has shape [${p.shape.join(', ')}]`, 'ShapeError');
    }
    return api.noGrad(() => (FLOATS.has(p.dtype) ? v.to(p.dtype, { copy: true }) : v.clone()));
  }

  class SGD extends Optimizer {
    constructor(params, options) {
      super('SGD', params, options, { lr: undefined, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false },
        { foreach: null, differentiable: false });
      const d = this.defaults;
      if (d.nesterov && (d.momentum <= 0 || d.dampening !== 0)) fail('SGD', 'Nesterov momentum requires a momentum and zero dampening');
    }
    initState() { return { momentumBuffer: null }; }
    update(p, grad, s, group) {
      const { lr, momentum, dampening, weightDecay, nesterov } = group;
      let d = grad;
      const temps = [];
      if (weightDecay !== 0) temps.push((d = d.add(p, { alpha: weightDecay })));
      if (momentum !== 0) {
        if (!s.momentumBuffer) s.momentumBuffer = d.clone();
        else s.momentumBuffer.mul_(momentum).add_(d, { alpha: 1 - dampening });
        if (nesterov) temps.push((d = d.add(s.momentumBuffer, { alpha: momentum })));
        else d = s.momentumBuffer;
      }
      p.add_(d, { alpha: -lr });
      for (const t of temps) t.dispose();
    }
  }

  // Adam's moments; AdamW decays the parameter itself before the update.
  // state.step is a number here and a float32 tensor in the state dict (1.13's)
  class Adam extends Optimizer {
    constructor(params, options, name = 'Adam', weightDecay = 0) {
      super(name, params, options, { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay, amsgrad: false, maximize: false },
        name === 'Adam' ? { foreach: null, capturable: false, differentiable: false, fused: false }
          : { foreach: null, capturable: false });
      this.decoupled = name === 'AdamW';
    }
    get stepTensor() { return true; }
    initState(p, group) {
      const zeros = () => api.emptyLike(p).zero_(); // p's layout (memory_format=preserve)
      const s = { step: 0, expAvg: zeros(), expAvgSq: zeros() };
      if (group.amsgrad) s.maxExpAvgSq = zeros();
      return s;
    }
    update(p, grad, s, group) {
      const { lr, betas: [b1, b2], eps, weightDecay, amsgrad } = group;
      let g = grad;
      const temps = [];
      s.step++;
      if (this.decoupled) p.mul_(1 - lr * weightDecay);
      else if (weightDecay !== 0) temps.push((g = g.add(p, { alpha: weightDecay })));
      s.expAvg.mul_(b1).add_(g, { alpha: 1 - b1 });
      const gg = g.mul(g);
      s.expAvgSq.mul_(b2).add_(gg, { alpha: 1 - b2 });
      gg.dispose();
      const bc1 = 1 - b1 ** s.step, bc2Sqrt = Math.sqrt(1 - b2 ** s.step);
      let sq = s.expAvgSq;
      if (amsgrad) {
        if (!s.maxExpAvgSq) s.maxExpAvgSq = api.emptyLike(p).zero_();
        api.maximum(s.maxExpAvgSq, s.expAvgSq, { out: s.maxExpAvgSq });
        sq = s.maxExpAvgSq;
      }
      const denom = sq.sqrt();
      denom.div_(bc2Sqrt).add_(eps);
      const upd = s.expAvg.div(denom);
      p.add_(upd, { alpha: -lr / bc1 });
      for (const t of [denom, upd, ...temps]) t.dispose();
    }
  }

  class AdamW extends Adam {
    constructor(params, options) { super(params, options, 'AdamW', 1e-2); }
  }

  const lrScheduler = installLrScheduler({ WeftError, Optimizer, isOptions, camelCase });
  api.optim = Object.freeze({ Optimizer, SGD, Adam, AdamW, lrScheduler });
}
