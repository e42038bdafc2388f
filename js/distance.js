// torch.nn.functional's normalize, cosine_similarity and pairwise_distance
// (1.13's formulas, so the same values, gradients and errors) composed of
// generated ops, in PyTorch's positional order or with options last:
//   wt.normalize(x, { p = 2, dim = 1, eps = 1e-12 })
//   wt.cosineSimilarity(a, b, { dim = 1, eps = 1e-8 })
//   wt.pairwiseDistance(a, b, { p = 2, eps = 1e-6, keepdim = false })
// and the modules wt.nn.CosineSimilarity / wt.nn.PairwiseDistance over them.
export function installDistance(api, k) {
  const { Tensor, WeftError, isOptions, didYouMean } = k;
  if (!api.norm || !api.clampMin) return;

  // the trailing numbers / options object of fn's call, checked against names
  function options(fn, names, defaults, tensors, rest) {
    const last = rest[rest.length - 1];
    const opts = rest.length && isOptions(last) && !(last instanceof Tensor) ? { ...rest.pop() } : {};
    for (const key of Object.keys(opts)) {
      if (!names.includes(key)) throw new WeftError('TypeError', `${fn}() got an unexpected option '${key}'${didYouMean(key, names)}`);
    }
    if (rest.length > names.length) {
      throw new WeftError('TypeError', `${fn}() takes ${names.length + tensors} positional arguments but ${rest.length + tensors} were given`);
    }
    rest.forEach((v, i) => {
      if (names[i] in opts) throw new WeftError('TypeError', `${fn}() got multiple values for argument '${names[i]}'`);
      opts[names[i]] = v;
    });
    return { ...defaults, ...opts };
  }

  // F.normalize: input / input.norm(p, dim, keepdim=True).clamp_min(eps) (broadcast as expand_as does)
  function normalize(x, ...rest) {
    const { p, dim, eps } = options('normalize', ['p', 'dim', 'eps'], { p: 2, dim: 1, eps: 1e-12 }, 1, rest);
    return using([api.norm(x, p, [dim], true)], ([n]) => using([api.clampMin(n, eps)], ([d]) => api.div(x, d)));
  }

  // fn(ts), then ts disposed (intermediates; autograd keeps what it saved)
  function using(ts, fn) {
    try { return fn(ts); } finally { for (const t of ts) t.dispose(); }
  }

  // PyTorch's broadcast shape of a and b, with its message
  function broadcastShape(a, b) {
    const n = Math.max(a.length, b.length);
    return Array.from({ length: n }, (_, i) => {
      const [x, y] = [a[a.length - n + i] ?? 1, b[b.length - n + i] ?? 1];
      if (x !== y && x !== 1 && y !== 1) {
        throw new WeftError('RuntimeError', `The size of tensor a (${x}) must match the size of tensor b (${y}) at non-singleton dimension ${i}`);
      }
      return x === 1 ? y : x;
    });
  }

  // 1.13's cosine_similarity: sum(x1 * x2 * rsqrt(‖x1‖² ‖x2‖²)) over dim, each
  // squared norm clamped to eps² in place without recording (so the gradient
  // flows as through the unclamped sum), on the broadcast inputs
  function cosineSimilarity(a, b, ...rest) {
    const { dim, eps } = options('cosine_similarity', ['dim', 'eps'], { dim: 1, eps: 1e-8 }, 2, rest);
    const common = api.promoteTypes(a.dtype, b.dtype);
    if (!common.startsWith('float') && common !== 'bfloat16') {
      throw new WeftError('RuntimeError', `expected common dtype to be floating point, yet common dtype is ${common}`);
    }
    const shape = broadcastShape(a.shape, b.shape);
    const wide = (x) => (x.dtype === common ? x.expand(shape) : using([x.to(common)], ([c]) => c.expand(shape)));
    const squared = (w) => {
      const s = using([api.mul(w, w)], ([m]) => m.sum(dim, true));
      api.noGrad(() => s.clampMin_(eps * eps));
      return s;
    };
    return using([wide(a), wide(b)], ([x1, x2]) => using([squared(x1), squared(x2)], ([s1, s2]) =>
      using([api.mul(s1, s2)], ([p]) => using([api.rsqrt(p), api.mul(x1, x2)], ([d, m]) =>
        using([api.mul(m, d)], ([t]) => t.sum(dim))))));
  }

  // 1.13's pairwise_distance: norm(x1 - x2 + eps, p) over the last dim of the broadcast
  function pairwiseDistance(a, b, ...rest) {
    const { p, eps, keepdim } = options('pairwise_distance', ['p', 'eps', 'keepdim'], { p: 2, eps: 1e-6, keepdim: false }, 2, rest);
    const last = Math.max(a.dim(), b.dim()) - 1;
    return using([api.sub(a, b)], ([d]) => using([api.add(d, eps)], ([e]) => api.norm(e, p, [last], keepdim)));
  }

  Object.assign(api, { normalize, cosineSimilarity, pairwiseDistance });
}

// nn.CosineSimilarity(dim=1, eps=1e-8) and nn.PairwiseDistance(p=2, eps=1e-6, keepdim=False)
export function makeDistanceLayers(api, { Module, parse, checks }) {
  if (!api.cosineSimilarity) return {};
  const { int, num, bool } = checks;
  class CosineSimilarity extends Module {
    constructor(...a) {
      super();
      const o = parse('CosineSimilarity', [['dim', 1], ['eps', 1e-8]], a);
      this.dim = int('CosineSimilarity', 'dim', o.dim);
      this.eps = num('CosineSimilarity', 'eps', o.eps);
    }
    forward(x1, x2) { return api.cosineSimilarity(x1, x2, { dim: this.dim, eps: this.eps }); }
  }
  class PairwiseDistance extends Module {
    constructor(...a) {
      super();
      const o = parse('PairwiseDistance', [['p', 2], ['eps', 1e-6], ['keepdim', false]], a);
      this.norm = num('PairwiseDistance', 'p', o.p);
      this.eps = num('PairwiseDistance', 'eps', o.eps);
      this.keepdim = bool('PairwiseDistance', 'keepdim', o.keepdim);
    }
    forward(x1, x2) { return api.pairwiseDistance(x1, x2, { p: this.norm, eps: this.eps, keepdim: this.keepdim }); }
  }
  return { CosineSimilarity, PairwiseDistance };
}
