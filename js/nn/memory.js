// The training-step memory rule: a loop written as in PyTorch (modules, a
// loss, an optimizer; no tidy, no dispose) keeps wt.memory() flat.
//
// Tensors made outside every wt.tidy() scope after an optimizer's step() join
// that optimizer's current step set; its step() after next disposes them. So a
// tensor made during step k (an output, a loss, an accuracy, a batch sliced
// from the data set) is usable until the optimizer's (k+2)-th step() begins,
// i.e. through the rest of its own iteration and the whole next one. Exempt:
// tensors made before any optimizer stepped (a data set loaded before the
// loop), tensors made while another optimizer was the last to step (until that
// one steps again), parameters and buffers registered on a module, tensors
// assigned to a module attribute, the optimizer's parameters and state, and
// every tensor passed to wt.keep(t), which is how a user holds one longer.
// A disposed tensor used again throws a WeftError saying so and naming keep.
// It is deterministic: nothing depends on the garbage collector. It belongs to
// wt.nn: only an optimizer over wt.nn Parameters (model.parameters()) makes
// its steps boundaries, so code training plain tensors with its own tidy and
// dispose calls keeps the contract it was written for.
export function installStepRule(api, { mem, Tensor, Parameter }) {
  const sets = new WeakMap(); // optimizer -> { step, prev, cur }: Sets of WeakRefs to tensors (js/core.js)

  // the tensors an optimizer holds, from either shape of torch.optim's fields
  function held(opt) {
    const out = [];
    const groups = Array.isArray(opt.paramGroups) ? opt.paramGroups : [];
    for (const g of groups) for (const p of g.params ?? []) out.push(p);
    for (const p of Array.isArray(opt.params) ? opt.params : []) out.push(p);
    const state = opt.state instanceof Map ? opt.state.values() : Object.values(opt.state ?? {});
    for (const s of state) for (const v of Object.values(s ?? {})) out.push(v);
    return out.filter((t) => t instanceof Tensor);
  }

  function release(set, step, name) {
    const why = ` (made outside wt.tidy during ${name} step ${step} and released by wt.nn's step rule ` +
      `at step ${step + 2}; call wt.keep(t) on a tensor you hold longer than a step)`;
    for (const ref of [...set]) {
      const t = ref.deref();
      if (!t) continue;
      mem.markReleased(t, why);
      t.dispose();
    }
  }

  // One step boundary: the set before the previous one is released, a new set opens.
  function boundary(opt) {
    for (const t of held(opt)) mem.unstep(t);
    let s = sets.get(opt);
    if (!s) sets.set(opt, (s = { step: 0, prev: new Set(), cur: new Set() }));
    release(s.prev, s.step - 1, opt.constructor?.name ?? 'optimizer');
    s.prev = s.cur;
    s.cur = new Set();
    s.step++;
    mem.setStepSet(s.cur); // the set new unscoped tensors join
  }

  // After step(): state the optimizer made this step is its own, never
  // released by the rule (a tidy() around the step still owns what it made)
  function settle(opt) {
    for (const t of held(opt)) mem.unstep(t);
  }

  // A disposed optimizer's sets are left to the caller (nothing is freed).
  function detach(opt) {
    const s = sets.get(opt);
    if (!s) return;
    for (const set of [s.prev, s.cur]) for (const ref of [...set]) mem.unstep(ref.deref());
    sets.delete(opt);
    if (mem.stepSet() === s.cur) mem.setStepSet(null);
  }

  // Every optimizer class's step()/dispose() (js/optim.js) is wrapped once, at
  // the prototypes that define them; a step() calling super.step() counts once.
  let depth = 0;
  function wrapStep(proto) {
    const step = proto.step;
    Object.defineProperty(proto, 'step', {
      value: function step_(...args) {
        if (depth++ === 0 && held(this).some((t) => t instanceof Parameter)) boundary(this);
        try {
          return step.apply(this, args);
        } finally {
          if (--depth === 0) settle(this);
        }
      },
      writable: true, configurable: true,
    });
  }
  function wrapDispose(proto) {
    const dispose = proto.dispose;
    Object.defineProperty(proto, 'dispose', {
      value: function dispose_(...args) { detach(this); return dispose.apply(this, args); },
      writable: true, configurable: true,
    });
  }
  const done = new Set();
  for (const cls of Object.values(api.optim ?? {})) {
    for (let p = cls?.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      if (done.has(p)) continue;
      done.add(p);
      if (Object.hasOwn(p, 'step') && typeof p.step === 'function') wrapStep(p);
      if (Object.hasOwn(p, 'dispose') && typeof p.dispose === 'function') wrapDispose(p);
    }
  }
}
