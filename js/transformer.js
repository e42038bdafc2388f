// torch.nn.functional.embedding's calling form over the op table's embedding
// (whose generated function takes ATen's order, weight first):
//   wt.embedding(input, weight, { paddingIdx, maxNorm, normType = 2, scaleGradByFreq = false, sparse = false })
// As F.embedding: a negative paddingIdx counts from the end, and maxNorm
// first renormalizes (in place, without recording) the rows input reads
// (embedding_renorm_). input holds int32 or int64 ids of any shape; the
// result is input's shape + [embeddingDim]. wt.rmsNorm, wt.indexCopy and
// x.indexCopy_ are the generated functions as they are.
export function installTransformer(api, k) {
  const { Tensor, WeftError, isOptions, didYouMean } = k;
  const gen = api.embedding;
  if (!gen) return;
  const NAMES = ['paddingIdx', 'maxNorm', 'normType', 'scaleGradByFreq', 'sparse'];
  const fail = (code, msg) => { throw new WeftError(code, msg); };

  function options(rest) {
    const last = rest[rest.length - 1];
    const opts = rest.length && isOptions(last) && !(last instanceof Tensor) ? { ...rest.pop() } : {};
    for (const key of Object.keys(opts)) {
      if (!NAMES.includes(key)) fail('TypeError', `embedding() got an unexpected option '${key}'${didYouMean(key, NAMES)}`);
    }
    if (rest.length > NAMES.length) fail('TypeError', `embedding() takes at most 7 positional arguments but ${rest.length + 2} were given`);
    rest.forEach((v, i) => {
      if (NAMES[i] in opts) fail('TypeError', `embedding() got multiple values for argument '${NAMES[i]}'`);
      opts[NAMES[i]] = v;
    });
    return { paddingIdx: null, maxNorm: null, normType: 2, scaleGradByFreq: false, sparse: false, ...opts };
  }

  // F.embedding's padding_idx: None -> -1, a negative one counted from the end
  function paddingRow(paddingIdx, weight) {
    if (paddingIdx === null || paddingIdx === undefined) return -1;
    if (typeof paddingIdx !== 'number' || !Number.isInteger(paddingIdx)) {
      fail('TypeError', `embedding(): argument 'paddingIdx' must be an integer or null, not ${typeof paddingIdx}`);
    }
    const n = weight.shape[0];
    if (paddingIdx >= n || paddingIdx < -n) fail('InvalidArgument', 'Padding_idx must be within num_embeddings');
    return paddingIdx < 0 ? n + paddingIdx : paddingIdx;
  }

  function embedding(input, weight, ...rest) {
    const o = options(rest);
    if (!(weight instanceof Tensor)) fail('TypeError', `embedding(): argument 'weight' must be a Tensor, not ${typeof weight}`);
    const pad = weight.ndim >= 1 ? paddingRow(o.paddingIdx, weight) : -1;
    if (o.maxNorm !== null && o.maxNorm !== undefined) {
      // F.embedding renormalizes through a contiguous copy of input, under no_grad
      const ids = input instanceof Tensor ? input.contiguous() : input;
      try {
        api.noGrad(() => weight.embeddingRenorm_(ids, o.maxNorm, o.normType));
      } finally {
        if (ids !== input) ids.dispose();
      }
    }
    return gen(weight, input, { paddingIdx: pad, scaleGradByFreq: o.scaleGradByFreq, sparse: o.sparse });
  }

  api.embedding = embedding;
}
