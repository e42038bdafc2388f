// wt.optim.lrScheduler: torch.optim.lr_scheduler's StepLR, MultiStepLR,
// CosineAnnealingLR, LinearLR and LambdaLR as in PyTorch 1.13. step() uses
// 1.13's get_lr (the chainable, recursive forms, reading each group's current
// lr), so the sequences are PyTorch's to the last bits; step(epoch) uses the
// closed forms, as 1.13's deprecated epoch argument does. Constructing a
// scheduler records each group's initialLr and takes the first step (epoch 0).
// stateDict() speaks PyTorch's names (last_epoch, base_lrs, T_max, ...).
export function installLrScheduler({ WeftError, Optimizer, isOptions, camelCase }) {
  const fail = (op, msg, code = 'InvalidArgument') => { throw new WeftError(code, `${op}: ${msg}`); };
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

  function readOptions(op, opts, defaults) {
    if (opts !== undefined && (!isOptions(opts) || Array.isArray(opts))) fail(op, `expected an options object, not ${typeOf(opts)}`, 'TypeError');
    const o = { ...defaults };
    for (const [k, v] of Object.entries(opts ?? {})) {
      if (!(k in defaults)) fail(op, `unknown option '${k}' (expected ${Object.keys(defaults).join(', ')})`, 'TypeError');
      if (typeof v !== typeof defaults[k]) fail(op, `option '${k}' must be a ${typeof defaults[k]}, not ${typeOf(v)}`, 'TypeError');
      o[k] = v;
    }
    if (!Number.isInteger(o.lastEpoch) || o.lastEpoch < -1) fail(op, `lastEpoch must be an integer >= -1, not ${o.lastEpoch}`);
    return o;
  }

  function positiveInt(op, name, v) {
    if (!Number.isInteger(v) || v < 1) fail(op, `${name} must be a positive integer, not ${typeof v === 'number' ? v : typeOf(v)}`);
    return v;
  }

  // Python's '{:.4e}' (two-digit exponent), for verbose
  const sci = (x) => x.toExponential(4).replace(/e([+-])(\d)$/, 'e$10$2');

  // each group's current lr (what 1.13's chainable get_lr forms start from)
  const lrsOf = (s) => s.optimizer.paramGroups.map((g) => g.lr);

  // the fields every scheduler's state dict has, after its own, in PyTorch's names
  const BASE_KEYS = { baseLrs: 'base_lrs', lastEpoch: 'last_epoch', verbose: 'verbose', _stepCount: '_step_count',
    _lastLr: '_last_lr' };

  class LRScheduler {
    #op;
    constructor(op, optimizer, { lastEpoch, verbose }) {
      if (!(optimizer instanceof Optimizer)) fail(op, `${typeOf(optimizer)} is not an Optimizer`, 'TypeError');
      if (new.target === LRScheduler) fail(op, 'LRScheduler is a base class: use StepLR, LambdaLR, ...', 'TypeError');
      this.#op = op;
      this.optimizer = optimizer;
      const groups = optimizer.paramGroups;
      if (lastEpoch === -1) {
        for (const g of groups) if (!('initialLr' in g)) g.initialLr = g.lr;
      } else {
        groups.forEach((g, i) => {
          if (!('initialLr' in g)) fail(op, `param 'initialLr' is not specified in paramGroups[${i}] when resuming an optimizer`);
        });
      }
      this.baseLrs = groups.map((g) => g.initialLr);
      this.lastEpoch = lastEpoch;
      this.verbose = verbose;
      this._stepCount = 0;
    }
    // 1.13's _initial_step, once the subclass has its fields: epoch 0
    initialStep() {
      this._stepCount = 0;
      this.step();
    }
    // the lr of each group after the last step()
    getLastLr() { return this._lastLr.slice(); }
    get #groups() { return this.optimizer.paramGroups; }
    step(epoch) {
      this._stepCount++;
      let values;
      if (epoch === undefined) {
        this.lastEpoch++;
        values = this.getLr();
      } else {
        if (!Number.isInteger(epoch)) fail(`${this.#op}.step`, `epoch must be an integer, not ${typeOf(epoch)}`, 'TypeError');
        this.lastEpoch = epoch;
        values = this.closedFormLr ? this.closedFormLr() : this.getLr();
      }
      this.#groups.forEach((g, i) => {
        g.lr = values[i];
        if (this.verbose) {
          const at = epoch === undefined ? '' : `Epoch ${String(epoch).padStart(5, '0')}: a`;
          console.log(`${at || 'A'}djusting learning rate of group ${i} to ${sci(values[i])}.`);
        }
      });
      this._lastLr = lrsOf(this);
    }
    // PyTorch's state_dict: every attribute but the optimizer
    stateDict() {
      const sd = {};
      for (const [js, torch] of Object.entries({ ...this.constructor.KEYS, ...BASE_KEYS })) sd[torch] = copy(this[js]);
      sd._get_lr_called_within_step = false;
      return sd;
    }
    loadStateDict(sd) {
      if (!isOptions(sd) || Array.isArray(sd)) fail(`${this.#op}.loadStateDict`, `expected a state dict object, not ${typeOf(sd)}`, 'TypeError');
      const names = Object.fromEntries(Object.entries({ ...this.constructor.KEYS, ...BASE_KEYS }).map(([js, t]) => [t, js]));
      for (const [k, v] of Object.entries(sd)) {
        const js = names[k] ?? camelCase(k);
        if (js === 'getLrCalledWithinStep' || js === '_getLrCalledWithinStep') continue;
        this[js] = this.load(js, v);
      }
    }
    load(_key, v) { return copy(v); }
  }
  const copy = (v) => (Array.isArray(v) ? v.slice() : v);

  class StepLR extends LRScheduler {
    static KEYS = { stepSize: 'step_size', gamma: 'gamma' };
    constructor(optimizer, stepSize, options) {
      const o = readOptions('StepLR', options, { gamma: 0.1, lastEpoch: -1, verbose: false });
      positiveInt('StepLR', 'stepSize', stepSize);
      super('StepLR', optimizer, o);
      this.stepSize = stepSize;
      this.gamma = o.gamma;
      this.initialStep();
    }
    getLr() {
      if (this.lastEpoch === 0 || this.lastEpoch % this.stepSize !== 0) return lrsOf(this);
      return lrsOf(this).map((lr) => lr * this.gamma);
    }
    closedFormLr() { return this.baseLrs.map((b) => b * this.gamma ** Math.floor(this.lastEpoch / this.stepSize)); }
  }

  class MultiStepLR extends LRScheduler {
    static KEYS = { milestones: 'milestones', gamma: 'gamma' };
    constructor(optimizer, milestones, options) {
      const o = readOptions('MultiStepLR', options, { gamma: 0.1, lastEpoch: -1, verbose: false });
      const c = counter('MultiStepLR', milestones);
      super('MultiStepLR', optimizer, o);
      this.milestones = c;
      this.gamma = o.gamma;
      this.initialStep();
    }
    getLr() {
      const n = this.milestones.get(this.lastEpoch);
      if (!n) return lrsOf(this);
      return lrsOf(this).map((lr) => lr * this.gamma ** n);
    }
    closedFormLr() {
      const passed = [...this.milestones].reduce((a, [m, n]) => a + (m <= this.lastEpoch ? n : 0), 0);
      return this.baseLrs.map((b) => b * this.gamma ** passed);
    }
    stateDict() {
      const sd = super.stateDict();
      sd.milestones = Object.fromEntries(this.milestones);
      return sd;
    }
    // milestones: PyTorch's Counter, saved as { milestone: count }
    load(key, v) {
      if (key !== 'milestones') return copy(v);
      const list = v instanceof Map ? v : Object.entries(v ?? {}).flatMap(([m, n]) => Array(Math.max(0, Math.trunc(Number(n)) || 0)).fill(Number(m)));
      return counter('MultiStepLR.loadStateDict', list);
    }
  }

  // Python's Counter(milestones): each milestone with how often it is listed
  function counter(op, milestones) {
    const list = milestones instanceof Map ? [...milestones].flatMap(([m, n]) => Array(n).fill(m)) : milestones;
    if (!Array.isArray(list) || list.some((m) => !Number.isInteger(m))) fail(op, `milestones must be an array of integers, not ${typeOf(milestones)}`, 'TypeError');
    const c = new Map();
    for (const m of list) c.set(m, (c.get(m) ?? 0) + 1);
    return c;
  }

  class CosineAnnealingLR extends LRScheduler {
    static KEYS = { TMax: 'T_max', etaMin: 'eta_min' };
    constructor(optimizer, TMax, options) {
      const o = readOptions('CosineAnnealingLR', options, { etaMin: 0, lastEpoch: -1, verbose: false });
      positiveInt('CosineAnnealingLR', 'TMax', TMax);
      super('CosineAnnealingLR', optimizer, o);
      this.TMax = TMax;
      this.etaMin = o.etaMin;
      this.initialStep();
    }
    getLr() {
      const { lastEpoch: e, TMax: T, etaMin } = this;
      if (e === 0) return lrsOf(this);
      if (this._stepCount === 1 && e > 0) return this.baseLrs.map((b) => etaMin + (b - etaMin) * (1 + Math.cos(e * Math.PI / T)) / 2);
      if ((e - 1 - T) % (2 * T) === 0) return lrsOf(this).map((lr, i) => lr + (this.baseLrs[i] - etaMin) * (1 - Math.cos(Math.PI / T)) / 2);
      return lrsOf(this).map((lr) => (1 + Math.cos(Math.PI * e / T)) / (1 + Math.cos(Math.PI * (e - 1) / T)) * (lr - etaMin) + etaMin);
    }
    closedFormLr() {
      const { lastEpoch: e, TMax: T, etaMin } = this;
      return this.baseLrs.map((b) => etaMin + (b - etaMin) * (1 + Math.cos(Math.PI * e / T)) / 2);
    }
  }

  class LinearLR extends LRScheduler {
    static KEYS = { startFactor: 'start_factor', endFactor: 'end_factor', totalIters: 'total_iters' };
    constructor(optimizer, options) {
      const o = readOptions('LinearLR', options, { startFactor: 1 / 3, endFactor: 1, totalIters: 5, lastEpoch: -1, verbose: false });
      if (o.startFactor > 1 || o.startFactor < 0) fail('LinearLR', 'Starting multiplicative factor expected to be between 0 and 1.');
      if (o.endFactor > 1 || o.endFactor < 0) fail('LinearLR', 'Ending multiplicative factor expected to be between 0 and 1.');
      positiveInt('LinearLR', 'totalIters', o.totalIters);
      super('LinearLR', optimizer, o);
      this.startFactor = o.startFactor;
      this.endFactor = o.endFactor;
      this.totalIters = o.totalIters;
      this.initialStep();
    }
    getLr() {
      const { lastEpoch: e, startFactor: s, endFactor: f, totalIters: n } = this;
      if (e === 0) return lrsOf(this).map((lr) => lr * s);
      if (e > n) return lrsOf(this);
      return lrsOf(this).map((lr) => lr * (1 + (f - s) / (n * s + (e - 1) * (f - s))));
    }
    closedFormLr() {
      const { lastEpoch: e, startFactor: s, endFactor: f, totalIters: n } = this;
      return this.baseLrs.map((b) => b * (s + (f - s) * Math.min(n, e) / n));
    }
  }

  class LambdaLR extends LRScheduler {
    static KEYS = {};
    constructor(optimizer, lrLambda, options) {
      const o = readOptions('LambdaLR', options, { lastEpoch: -1, verbose: false });
      if (!(optimizer instanceof Optimizer)) fail('LambdaLR', `${typeOf(optimizer)} is not an Optimizer`, 'TypeError');
      const n = optimizer.paramGroups.length;
      const list = Array.isArray(lrLambda) ? lrLambda : Array(n).fill(lrLambda);
      if (list.length !== n) fail('LambdaLR', `Expected ${n} lrLambdas, but got ${list.length}`);
      list.forEach((f, i) => { if (typeof f !== 'function') fail('LambdaLR', `lrLambda ${i} must be a function, not ${typeOf(f)}`, 'TypeError'); });
      super('LambdaLR', optimizer, o);
      this.lrLambdas = list.slice();
      this.initialStep();
    }
    getLr() { return this.baseLrs.map((b, i) => b * this.lrLambdas[i](this.lastEpoch)); }
    // functions are not state: PyTorch writes null for each
    stateDict() { return { ...super.stateDict(), lr_lambdas: this.lrLambdas.map(() => null) }; }
    load(key, v) { return key === 'lrLambdas' ? this.lrLambdas : copy(v); }
  }

  return Object.freeze({ LRScheduler, StepLR, MultiStepLR, CosineAnnealingLR, LinearLR, LambdaLR });
}
