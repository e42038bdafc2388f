// batch_norm's JS calling form, torch.nn.functional's order, over the op
// table's batch_norm (whose generated function takes ATen's order: weight
// and bias before the running statistics):
//   wt.batchNorm(x, runningMean, runningVar, weight, bias, { training = false, momentum = 0.1, eps = 1e-5 })
// runningMean / runningVar / weight / bias may be null or omitted (the
// running statistics are needed in evaluation mode); weight, bias,
// training, momentum and eps may also come positionally, as F.batch_norm
// takes them. layerNorm and groupNorm are the generated functions as they
// are (F's order is ATen's): wt.layerNorm(x, normalizedShape, weight, bias,
// { eps }), wt.groupNorm(x, numGroups, weight, bias, { eps }).
export function installNorm(api, k) {
  const { Tensor, WeftError, isOptions, didYouMean } = k;
  const gen = api.batchNorm;
  if (!gen) return;
  const NAMES = ['weight', 'bias', 'training', 'momentum', 'eps'];

  function batchNorm(x, runningMean = null, runningVar = null, ...rest) {
    const last = rest[rest.length - 1];
    const opts = rest.length && isOptions(last) && !(last instanceof Tensor) ? { ...rest.pop() } : {};
    for (const key of Object.keys(opts)) {
      if (!NAMES.includes(key)) {
        throw new WeftError('TypeError', `batch_norm() got an unexpected option '${key}'${didYouMean(key, NAMES)}`);
      }
    }
    if (rest.length > NAMES.length) {
      const [most, n] = [NAMES.length + 3, rest.length + 3];
      throw new WeftError('TypeError', `batch_norm() takes ${most} positional arguments but ${n} were given`);
    }
    rest.forEach((v, i) => {
      if (NAMES[i] in opts) {
        throw new WeftError('TypeError', `batch_norm() got multiple values for argument '${NAMES[i]}'`);
      }
      opts[NAMES[i]] = v;
    });
    const kw = { weight: null, bias: null, training: false, momentum: 0.1, eps: 1e-5, ...opts };
    for (const key of ['weight', 'bias']) if (kw[key] === undefined) kw[key] = null;
    return gen(x, { ...kw, runningMean: runningMean ?? null, runningVar: runningVar ?? null, cudnnEnabled: true });
  }

  api.batchNorm = batchNorm;
}
