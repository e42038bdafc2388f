// torch.unique's JS form over the op table's _unique2 (a Tensor[] of
// values, inverse, counts):
//   wt.unique(x, { sorted, returnInverse, returnCounts, dim })  and  x.unique(...)
// gives the unique values (1-D, sorted) as a Tensor, or, when returnInverse or
// returnCounts asks for more, { values, inverse?, counts? }: only the asked
// ones, in that order, also iterable (const [u, inv] = x.unique({ returnInverse: true })),
// as torch.unique's tuple. dim must be null (unique over the flattened input).
export function installUnique(api, k) {
  const { Tensor, WeftError, isOptions, tupleMaker } = k;
  const OPTIONS = ['sorted', 'returnInverse', 'returnCounts', 'dim'];

  function unique(x, options = {}) {
    if (!(x instanceof Tensor)) throw new WeftError('TypeError', 'unique(): argument \'input\' must be a Tensor');
    if (!isOptions(options)) throw new WeftError('TypeError', 'unique(): the options must be an object');
    for (const key of Object.keys(options)) {
      if (!OPTIONS.includes(key)) throw new WeftError('TypeError', `unique() got an unexpected option '${key}'`);
    }
    const { sorted = true, returnInverse = false, returnCounts = false, dim = null } = options;
    for (const [n, v] of [['sorted', sorted], ['returnInverse', returnInverse], ['returnCounts', returnCounts]]) {
      if (typeof v !== 'boolean') throw new WeftError('TypeError', `unique(): argument '${n}' must be a boolean`);
    }
    if (dim !== null) throw new WeftError('NotImplemented', 'unique(): dim is not supported yet (only dim: null)');
    const [values, inverse, counts] = api.ops.call('_unique2', x, sorted, returnInverse, returnCounts);
    if (!returnInverse && !returnCounts) {
      inverse.dispose();
      counts.dispose();
      return values;
    }
    const names = ['values', ...(returnInverse ? ['inverse'] : []), ...(returnCounts ? ['counts'] : [])];
    if (!returnInverse) inverse.dispose();
    if (!returnCounts) counts.dispose();
    const vals = { values, inverse, counts };
    return tupleMaker(names)(names.map((n) => vals[n]));
  }

  api.unique = unique;
  Object.defineProperty(Tensor.prototype, 'unique', {
    value: function uniqueMethod(options) { return unique(this, options); }, writable: true, configurable: true,
  });
}
