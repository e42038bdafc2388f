// What weft/models' blocks share: constructor arguments (PyTorch's positional
// order, options last in one camelCase object), and the eval fast path.
//
// In eval with nothing to differentiate, a conv followed by its BatchNorm (and
// a ReLU / ReLU6, and a residual add) runs as one _conv2d_fused call: the
// BatchNorm folded into the conv's weight and bias (torch.nn.utils.fusion's
// formula), the bias, the activation and the residual applied in the conv's
// output tile. The folded pair is cached on the conv module and recomputed
// when one of the six tensors it comes from changes: a new handle (Module.to
// swaps them) or a new version (copy_, an optimizer step), or eps; train(),
// to(), loadStateDict() and dispose() of a model or block drop the caches.

const FOLD = Symbol('weft.models.fold');

export function makeCommon(api) {
  const { WeftError } = api;
  const nn = api.nn;
  const fail = (code, msg) => { throw new WeftError(code, msg); };
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

  // fn(a, b, ..., { options }): spec is [[name, default], ...] in PyTorch's order,
  // names camelCase; a trailing plain object gives any of them by name
  function parseArgs(fn, spec, args) {
    const names = spec.map(([n]) => n);
    const last = args[args.length - 1];
    const isOpts = args.length > 0 && last !== null && typeof last === 'object' && !Array.isArray(last) &&
      Object.getPrototypeOf(last) === Object.prototype;
    const positional = isOpts ? args.slice(0, -1) : args;
    if (positional.length > spec.length) {
      fail('TypeError', `${fn}() takes ${spec.length} positional arguments but ${positional.length} were given`);
    }
    const out = Object.fromEntries(spec.map(([n, d]) => [n, d]));
    positional.forEach((v, i) => { if (v !== undefined) out[names[i]] = v; });
    if (isOpts) {
      for (const [key, v] of Object.entries(last)) {
        if (!names.includes(key)) fail('TypeError', `${fn}() got an unexpected option '${key}'`);
        if (key in out && positional[names.indexOf(key)] !== undefined) {
          fail('TypeError', `${fn}() got multiple values for argument '${key}'`);
        }
        if (v !== undefined) out[key] = v;
      }
    }
    return out;
  }

  const int = (fn, name, v) => (Number.isInteger(v) ? v
    : fail('TypeError', `${fn}(): argument '${name}' must be an integer, not ${typeOf(v)}`));
  const layerClass = (fn, name, v) => (v === null || typeof v === 'function' ? v
    : fail('TypeError', `${fn}(): argument '${name}' must be a module class or null, not ${typeOf(v)}`));

  // ---- the eval fast path ----

  // true when x through m needs no graph: eval mode, and grad mode off or
  // neither x nor a parameter requires grad
  function fusable(m, x) {
    if (m.training) return false;
    if (!api.isGradEnabled()) return true;
    if (x.requiresGrad) return false;
    for (const p of m.parameters()) if (p.requiresGrad) return false;
    return true;
  }

  // conv, bn, act as a fused unit, or null when they are not Conv2d (zeros
  // padding) + BatchNorm2d with running statistics + ReLU / ReLU6 / nothing
  function unitOf(conv, bn, act = null) {
    if (!(conv instanceof nn.Conv2d) || conv.paddingMode !== 'zeros' || typeof conv.padding === 'string') return null;
    if (!(bn instanceof nn.BatchNorm2d) || !bn.running_mean || !bn.running_var) return null;
    let activation = 'none';
    if (act instanceof nn.ReLU) activation = 'relu';
    else if (act instanceof nn.ReLU6) activation = 'relu6';
    else if (act !== null) return null;
    return { conv, bn, activation };
  }

  const tensorsOf = ({ conv, bn }) => [conv.weight, conv.bias, bn.weight, bn.bias, bn.running_mean, bn.running_var];
  const keyOf = (u) => `${tensorsOf(u).map((t) => (t ? `${t.handle('fold')}:${t._version}` : '-')).join(',')},${u.bn.eps}`;

  function dropFold(conv) {
    const f = conv[FOLD];
    if (!f) return;
    f.w.dispose();
    f.b.dispose();
    conv[FOLD] = null;
  }

  // the folded [weight, bias] of a unit, cached on its conv
  function folded(u) {
    const key = keyOf(u);
    const f = u.conv[FOLD];
    if (f && f.key === key) return f;
    dropFold(u.conv);
    const { conv, bn } = u;
    const [w, b] = api.noGrad(() => nn.utils.fuseConvBnWeights(conv.weight, conv.bias, bn.running_mean, bn.running_var,
      bn.eps, bn.weight, bn.bias));
    for (const t of [w, b]) t.requiresGrad_(false);
    api.keep(w);
    api.keep(b);
    conv[FOLD] = { key, w, b };
    return conv[FOLD];
  }

  // act(bn(conv(x)) + residual) in one op (under noGrad: _conv2d_fused has no
  // gradient; fusable() said none is needed)
  function runUnit(u, x, residual = null) {
    const { w, b } = folded(u);
    const { stride, padding, dilation, groups } = u.conv;
    if (typeof api._conv2dFused === 'function') {
      return api._conv2dFused(x, w, b, stride, padding, dilation, groups, u.activation, residual);
    }
    // a build without _conv2d_fused: the same folded conv, then the epilogue as ops
    let y = api.conv2d(x, w, b, stride, padding, dilation, groups);
    if (residual) y = y.add_(residual);
    return u.activation === 'relu' ? y.relu_() : u.activation === 'relu6' ? y.clamp_(0, 6) : y;
  }

  // runs steps over x, disposing each intermediate once the next is made
  function chain(x, steps) {
    let y = x;
    for (const step of steps) {
      const next = step(y);
      if (y !== x && next !== y) y.dispose();
      y = next;
    }
    return y;
  }

  // train / to / loadStateDict / dispose on these classes drop the folded caches below
  function dropsFolds(...classes) {
    for (const C of classes) {
      for (const name of ['train', 'to', 'loadStateDict', 'dispose']) {
        const base = Object.getPrototypeOf(C.prototype)[name];
        Object.defineProperty(C.prototype, name, {
          value(...a) {
            for (const m of this.modules()) if (m instanceof nn.Conv2d) dropFold(m);
            return base.apply(this, a);
          },
          writable: true,
          configurable: true,
        });
      }
    }
  }

  return { parseArgs, int, layerClass, fusable, unitOf, runUnit, folded, chain, dropsFolds, fail };
}
