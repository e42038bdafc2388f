// wt.nn.utils: clipGradNorm_ and clipGradValue_ (torch.nn.utils.clip_grad_norm_ /
// clip_grad_value_ of PyTorch 1.13). Both change the parameters' .grad in
// place and skip parameters without one. Installed into api.nn.utils without
// replacing what another part of wt.nn (the module system) put there.
export function installNnUtils(api, { Tensor, WeftError, isOptions }) {
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);
  const fail = (op, msg, code = 'InvalidArgument') => { throw new WeftError(code, `${op}: ${msg}`); };

  function paramsOf(op, parameters) {
    if (parameters instanceof Tensor) return [parameters];
    if (parameters === null || parameters === undefined || typeof parameters[Symbol.iterator] !== 'function') {
      fail(op, `parameters must be a Tensor or an iterable of Tensors, not ${typeOf(parameters)}`, 'TypeError');
    }
    const list = Array.from(parameters);
    list.forEach((p, i) => { if (!(p instanceof Tensor)) fail(op, `parameter ${i} must be a Tensor, not ${typeOf(p)}`, 'TypeError'); });
    return list;
  }

  function number(op, name, v) {
    if (typeof v !== 'number' || Number.isNaN(v)) fail(op, `${name} must be a number, not ${typeOf(v)}`, 'TypeError');
    return v;
  }

  // the .grad of each parameter that has one (new handles, disposed by the caller's tidy)
  const gradsOf = (params) => params.map((p) => p.grad).filter((g) => g !== null);

  // 1.13: the norm of each gradient, the norm of those norms (max for 'inf'),
  // then every gradient times min(maxNorm / (total + 1e-6), 1) in place;
  // returns the total norm (a new 0-dim tensor)
  function clipGradNorm_(parameters, maxNorm, options) {
    const op = 'clipGradNorm_';
    const params = paramsOf(op, parameters);
    number(op, 'maxNorm', maxNorm);
    if (options !== undefined && (!isOptions(options) || options instanceof Tensor)) fail(op, 'expected an options object', 'TypeError');
    const { normType = 2, errorIfNonfinite = false, ...rest } = options ?? {};
    for (const k of Object.keys(rest)) fail(op, `unknown option '${k}' (expected normType, errorIfNonfinite)`, 'TypeError');
    const p = normType === 'inf' ? Infinity : number(op, 'normType', normType);
    if (typeof errorIfNonfinite !== 'boolean') fail(op, `option 'errorIfNonfinite' must be a boolean, not ${typeOf(errorIfNonfinite)}`, 'TypeError');
    return api.noGrad(() => api.tidy(() => {
      const grads = gradsOf(params);
      if (!grads.length) return api.tensor(0, { dtype: 'float32' });
      let total;
      if (p === Infinity) {
        const norms = grads.map((g) => g.abs().max());
        total = norms.length === 1 ? norms[0] : api.stack(norms).max();
      } else {
        total = api.norm(api.stack(grads.map((g) => api.norm(g, p))), p);
      }
      if (errorIfNonfinite && !Number.isFinite(total.item())) {
        fail(op, `The total norm of order ${p} for gradients from \`parameters\` is non-finite, so it cannot be clipped. ` +
          'To disable this error and scale the gradients by the non-finite norm anyway, set errorIfNonfinite: false');
      }
      // PyTorch's `max_norm / t` is t.reciprocal() * max_norm
      const coef = total.add(1e-6).reciprocal().mul(maxNorm).clamp(null, 1);
      for (const g of grads) g.mul_(coef);
      return total;
    }));
  }

  // every gradient clamped to [-clipValue, clipValue] in place
  function clipGradValue_(parameters, clipValue) {
    const op = 'clipGradValue_';
    const params = paramsOf(op, parameters);
    const c = number(op, 'clipValue', clipValue);
    api.noGrad(() => api.tidy(() => {
      for (const g of gradsOf(params)) g.clamp_(-c, c);
    }));
  }

  const nn = (api.nn ??= {});
  const utils = (nn.utils ??= {});
  Object.assign(utils, { clipGradNorm_, clipGradValue_ });
}
