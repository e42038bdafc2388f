// Folding an eval-mode BatchNorm into the convolution before it (issue 23),
// as torch.nn.utils.fusion (1.13):
//   wt.nn.utils.fuseConvBnWeights(convW, convB, bnRm, bnRv, bnEps, bnW, bnB, { transpose })
//     -> [fusedW, fusedB]
//   wt.nn.utils.fuseConvBnEval(conv, bn, { transpose }) -> a new conv module
// BatchNorm in eval is y = (x - rm) / sqrt(rv + eps) * bnW + bnB per channel,
// an affine map, so the conv's weight scales by bnW / sqrt(rv + eps) along its
// output channels (dim 0; dim 1 for a transposed conv's [in, out / groups, ...]
// weight) and its bias becomes (convB - rm) * bnW / sqrt(rv + eps) + bnB.
// convB, bnW, bnB may be null (zeros, ones, zeros). The results are new
// tensors that require grad, as torch.nn.Parameter's do.
//
// fuseConvBnEval takes modules by their fields (weight, bias, stride, padding,
// dilation, groups; runningMean, runningVar, eps, weight, bias, training) and
// returns a copy of the conv carrying the fused weight and bias: conv.clone()
// when the module has one, else a new conv.constructor with the same
// hyper-parameters.
export function installFusion(api, k) {
  const { Tensor, WeftError, isOptions } = k;

  const tensorArg = (fn, name, v, optional) => {
    if (v instanceof Tensor || (optional && (v === null || v === undefined))) return v ?? null;
    throw new WeftError('TypeError', `${fn}(): argument '${name}' must be a Tensor${optional ? ' or null' : ''}`);
  };

  function transposeOption(fn, options) {
    if (!isOptions(options)) throw new WeftError('TypeError', `${fn}(): the options must be an object`);
    for (const key of Object.keys(options)) {
      if (key !== 'transpose') throw new WeftError('TypeError', `${fn}() got an unexpected option '${key}'`);
    }
    const { transpose = false } = options;
    if (typeof transpose !== 'boolean') throw new WeftError('TypeError', `${fn}(): argument 'transpose' must be a boolean`);
    return transpose;
  }

  function fuseConvBnWeights(convW, convB, bnRm, bnRv, bnEps, bnW, bnB, options = {}) {
    const fn = 'fuseConvBnWeights';
    tensorArg(fn, 'convW', convW, false);
    tensorArg(fn, 'bnRm', bnRm, false);
    tensorArg(fn, 'bnRv', bnRv, false);
    if (typeof bnEps !== 'number') throw new WeftError('TypeError', `${fn}(): argument 'bnEps' must be a number`);
    const transpose = transposeOption(fn, options);
    const [cb, bw, bb] = [['convB', convB], ['bnW', bnW], ['bnB', bnB]].map(([n, v]) => tensorArg(fn, n, v, true));
    const shape = convW.shape.map(() => 1);
    shape[transpose ? 1 : 0] = -1;
    const [w, b] = api.tidy(() => api.noGrad(() => {
      const rsqrt = bnRv.add(bnEps).rsqrt();
      const scale = bw ? bw.mul(rsqrt) : rsqrt;
      const fusedW = convW.mul(scale.reshape(shape));
      let fusedB = (cb ? cb.sub(bnRm) : bnRm.neg()).mul(rsqrt);
      if (bw) fusedB = fusedB.mul(bw);
      if (bb) fusedB = fusedB.add(bb);
      return [fusedW, fusedB];
    }));
    return [w.requiresGrad_(true), b.requiresGrad_(true)];
  }

  function fuseConvBnEval(conv, bn, options = {}) {
    const fn = 'fuseConvBnEval';
    const transpose = transposeOption(fn, options);
    if (!conv || !bn || !(conv.weight instanceof Tensor) || !(bn.runningMean instanceof Tensor)) {
      throw new WeftError('TypeError', `${fn}(): expected a convolution module and a BatchNorm module with running statistics`);
    }
    if (conv.training || bn.training) throw new WeftError('ValueError', `${fn}(): Fusion only for eval!`);
    const [w, b] = fuseConvBnWeights(conv.weight, conv.bias ?? null, bn.runningMean, bn.runningVar, bn.eps,
      bn.weight ?? null, bn.bias ?? null, { transpose });
    const fused = typeof conv.clone === 'function' ? conv.clone() : freshConv(conv, transpose);
    for (const [name, t] of [['weight', w], ['bias', b]]) {
      const old = fused[name];
      // a wt.nn module takes Parameters (which take the tensor over)
      fused[name] = api.nn?.Parameter && fused instanceof api.nn.Module ? new api.nn.Parameter(t) : t;
      if (old instanceof Tensor && old !== conv[name] && !old.isDisposed) old.dispose();
    }
    if (typeof fused.eval === 'function') fused.eval();
    return fused;
  }

  // conv's class built again with its hyper-parameters (and a bias: the fused one), its
  // parameters on the meta device: they are replaced, and making them draws nothing from
  // the generator (PyTorch's fuse_conv_bn_eval deep-copies the conv)
  function freshConv(conv, transpose) {
    const [a, b, ...kernelSize] = conv.weight.shape;
    const groups = conv.groups ?? 1;
    const [inC, outC] = transpose ? [a, b * groups] : [b * groups, a];
    const opts = { stride: conv.stride, padding: conv.padding, dilation: conv.dilation, groups, bias: true };
    if (conv.paddingMode !== undefined) opts.paddingMode = conv.paddingMode;
    if (transpose && conv.outputPadding !== undefined) opts.outputPadding = conv.outputPadding;
    if (api.nn?.Module && conv instanceof api.nn.Module) opts.device = 'meta';
    return new conv.constructor(inC, outC, kernelSize, opts);
  }

  api.nn ??= {};
  api.nn.utils ??= {};
  api.nn.utils.fuseConvBnWeights = fuseConvBnWeights;
  api.nn.utils.fuseConvBnEval = fuseConvBnEval;
}
