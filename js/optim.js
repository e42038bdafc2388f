// wt.optim: SGD, Adam and AdamW over an array of tensors, with PyTorch 1.13's
// update rules (torch.optim's single-tensor forms), step() and zeroGrad().
// Each step runs under wt.noGrad and updates the parameters in place, so a
// parameter stays the same leaf (same handle, same .grad slot); optimizer
// state (momentum buffers, moment estimates) is weft tensors owned by the
// optimizer until dispose(). A parameter whose .grad is null is skipped, as
// in PyTorch. SGD's lr has no default (torch.optim's `required`).
export function installOptim(api, { Tensor, WeftError, isOptions }) {
  const fail = (op, msg, code = 'InvalidArgument') => { throw new WeftError(code, `${op}: ${msg}`); };

  function paramList(op, params) {
    if (params instanceof Tensor) fail(op, 'params argument given to the optimizer should be an array of Tensors, but got a Tensor');
    const list = Array.from(params ?? []);
    if (!list.length) fail(op, 'optimizer got an empty parameter list');
    list.forEach((p, i) => {
      if (!(p instanceof Tensor)) fail(op, `expected a Tensor as parameter ${i}, got ${p === null ? 'null' : typeof p}`);
      if (!p.isLeaf) fail(op, "can't optimize a non-leaf Tensor");
    });
    if (new Set(list).size !== list.length) fail(op, 'some parameters appear more than once in the parameter list');
    return list;
  }

  // PyTorch's names for the values its constructors check, camelCased
  const CHECKED = { lr: 'learning rate', momentum: 'momentum value', weightDecay: 'weightDecay value',
    eps: 'epsilon value', dampening: 'dampening value' };
  const BOOLEANS = ['nesterov', 'amsgrad', 'maximize'];
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

  // defaults[k] === undefined marks a required option (SGD's lr, as torch.optim's `required`)
  function readOptions(op, opts, defaults) {
    if (opts !== undefined && !isOptions(opts)) fail(op, 'expected an options object');
    const o = { ...defaults };
    for (const [k, v] of Object.entries(opts ?? {})) {
      if (!(k in defaults)) fail(op, `unknown option '${k}' (expected ${Object.keys(defaults).join(', ')})`);
      o[k] = v;
    }
    for (const [k, v] of Object.entries(o)) {
      if (v === undefined) fail(op, `parameter group didn't specify a value of required optimization parameter ${k} (pass { ${k} })`);
      if (k in CHECKED) {
        if (typeof v !== 'number') fail(op, `option '${k}' must be a number, not ${typeOf(v)}`, 'TypeError');
        if (!(v >= 0)) fail(op, `Invalid ${CHECKED[k]}: ${v}`);
      }
      if (BOOLEANS.includes(k) && typeof v !== 'boolean') fail(op, `option '${k}' must be a boolean, not ${typeOf(v)}`, 'TypeError');
    }
    if ('betas' in o) {
      const b = o.betas;
      if (!Array.isArray(b) || b.length !== 2 || b.some((x) => typeof x !== 'number')) {
        fail(op, `option 'betas' must be an array of two numbers, not ${typeOf(b)}`, 'TypeError');
      }
      if (!(b[0] >= 0 && b[0] < 1)) fail(op, `Invalid beta parameter at index 0: ${b[0]}`);
      if (!(b[1] >= 0 && b[1] < 1)) fail(op, `Invalid beta parameter at index 1: ${b[1]}`);
    }
    return o;
  }

  // the gradient to apply (a new tensor the caller disposes), or null
  function gradOf(p, maximize) {
    const g = p.grad;
    if (!g || !maximize) return g;
    const n = g.neg();
    g.dispose();
    return n;
  }

  class Optimizer {
    #params;
    constructor(op, params, options, defaults) {
      this.params = paramList(op, params);
      this.defaults = readOptions(op, options, defaults);
      this.state = new Map(); // parameter -> { step, ...tensors }
      this.#params = this.params;
    }
    // 1.13's default keeps the grad tensors and fills them with zeros;
    // { setToNone: true } drops them (the next backward makes new ones)
    zeroGrad({ setToNone = false } = {}) {
      for (const p of this.#params) {
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
        for (const p of this.#params) {
          const g = gradOf(p, this.defaults.maximize);
          if (!g) continue;
          const s = this.#stateOf(p);
          try {
            this.update(p, g, s);
          } finally {
            g.dispose();
            // the state belongs to the optimizer, not to a tidy() around step():
            // a training step wrapped in tidy must not lose its momentum buffers
            for (const v of Object.values(s)) if (v instanceof Tensor) api.keep(v);
          }
        }
      });
      return loss;
    }
    #stateOf(p) {
      let s = this.state.get(p);
      if (!s) this.state.set(p, (s = { step: 0 }));
      return s;
    }
    // releases the optimizer's state tensors (the parameters stay the caller's)
    dispose() {
      for (const s of this.state.values()) for (const v of Object.values(s)) if (v instanceof Tensor) v.dispose();
      this.state.clear();
    }
  }

  class SGD extends Optimizer {
    constructor(params, options) {
      super('SGD', params, options, { lr: undefined, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false });
      const d = this.defaults;
      if (d.nesterov && (d.momentum <= 0 || d.dampening !== 0)) fail('SGD', 'Nesterov momentum requires a momentum and zero dampening');
    }
    update(p, grad, s) {
      const { lr, momentum, dampening, weightDecay, nesterov } = this.defaults;
      let d = grad;
      const temps = [];
      if (weightDecay !== 0) temps.push((d = d.add(p, { alpha: weightDecay })));
      if (momentum !== 0) {
        if (!s.momentumBuffer) s.momentumBuffer = d.clone();
        else s.momentumBuffer.mul_(momentum).add_(d, { alpha: 1 - dampening });
        if (nesterov) temps.push((d = d.add(s.momentumBuffer, { alpha: momentum })));
        else d = s.momentumBuffer;
      }
      s.step++;
      p.add_(d, { alpha: -lr });
      for (const t of temps) t.dispose();
    }
  }

  // Adam's moments; AdamW decays the parameter itself before the update
  class Adam extends Optimizer {
    constructor(params, options, name = 'Adam', weightDecay = 0) {
      super(name, params, options, { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay, amsgrad: false, maximize: false });
      this.decoupled = name === 'AdamW';
    }
    update(p, grad, s) {
      const { lr, betas: [b1, b2], eps, weightDecay, amsgrad } = this.defaults;
      let g = grad;
      const temps = [];
      if (!s.expAvg) {
        const zeros = () => api.emptyLike(p).zero_(); // p's layout (memory_format=preserve)
        s.expAvg = zeros();
        s.expAvgSq = zeros();
        if (amsgrad) s.maxExpAvgSq = zeros();
      }
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

  api.optim = Object.freeze({ SGD, Adam, AdamW });
}
