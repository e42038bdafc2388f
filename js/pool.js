// Pooling's JS calling forms (torch.nn.functional's) over the op table's
// max_pool2d, max_pool2d_with_indices, avg_pool2d and adaptive_avg_pool2d,
// whose generated functions js/ops.js installed:
//   wt.maxPool2d(x, kernelSize, { stride, padding, dilation, ceilMode, returnIndices })
//     stride null / omitted is the kernel size; returnIndices gives what
//     max_pool2d_with_indices returns (values and int64 indices)
//   wt.avgPool2d(x, kernelSize, { stride, padding, ceilMode, countIncludePad, divisorOverride, out })
//   wt.adaptiveAvgPool2d(x, outputSize, { out })
//     outputSize a number or an array whose null entries keep the input's size
// and the same as Tensor methods (x.maxPool2d(2)).
export function installPool(api, k) {
  const { Tensor, WeftError, isOptions } = k;
  const gen = { maxPool2d: api.maxPool2d, avgPool2d: api.avgPool2d, adaptiveAvgPool2d: api.adaptiveAvgPool2d };
  const withIndices = api.maxPool2dWithIndices;

  // (x, ...positional, options?) -> [x, options]: the positional values after
  // x take F's parameter names (the generated functions would read
  // maxPool2d(x, 2, 1) as kernel_size [2, 1], view()-style); stride null or
  // omitted is the kernel size (the schema's empty list).
  function named(fn, names, args) {
    const last = args[args.length - 1];
    const hasKw = args.length > 1 && isOptions(last) && !(last instanceof Tensor);
    const pos = hasKw ? args.slice(1, -1) : args.slice(1);
    const kw = hasKw ? { ...last } : {};
    if (pos.length > names.length) {
      throw new WeftError('TypeError', `${fn}() takes ${names.length + 1} positional arguments but ${pos.length + 1} were given`);
    }
    pos.forEach((v, i) => {
      if (names[i] in kw) throw new WeftError('TypeError', `${fn}() got multiple values for argument '${names[i]}'`);
      kw[names[i]] = v;
    });
    if (kw.stride === null) kw.stride = [];
    return [args[0], kw];
  }

  function maxPool2d(...args) {
    const [x, kw] = named('max_pool2d', ['kernelSize', 'stride', 'padding', 'dilation', 'ceilMode', 'returnIndices'], args);
    const ret = kw.returnIndices ?? kw.return_indices ?? false;
    delete kw.returnIndices;
    delete kw.return_indices;
    if (typeof ret !== 'boolean') {
      throw new WeftError('TypeError', `max_pool2d(): argument 'return_indices' must be bool, not ${typeof ret}`);
    }
    if (!ret) return gen.maxPool2d(x, kw);
    if (!withIndices) throw new WeftError('NotImplemented', 'max_pool2d(): returnIndices needs max_pool2d_with_indices');
    return withIndices(x, kw);
  }

  function avgPool2d(...args) {
    const names = ['kernelSize', 'stride', 'padding', 'ceilMode', 'countIncludePad', 'divisorOverride'];
    return gen.avgPool2d(...named('avg_pool2d', names, args));
  }

  // F.adaptive_avg_pool2d's _list_with_default: null entries take the
  // input's trailing sizes
  function adaptiveAvgPool2d(x, outputSize, ...rest) {
    let os = outputSize;
    if (Array.isArray(os) && os.some((v) => v === null || v === undefined) && x instanceof Tensor) {
      const shape = x.shape;
      os = os.map((v, i) => (v === null || v === undefined ? shape[shape.length - os.length + i] : v));
    }
    return gen.adaptiveAvgPool2d(x, os, ...rest);
  }

  const fns = { maxPool2d, avgPool2d, adaptiveAvgPool2d };
  for (const [name, fn] of Object.entries(fns)) {
    if (!gen[name]) continue;
    api[name] = fn;
    Object.defineProperty(Tensor.prototype, name, {
      value: function poolMethod(...args) { return fn(this, ...args); }, writable: true, configurable: true,
    });
  }
}
