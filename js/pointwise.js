// Issue 25's comparisons that return a JS boolean, as torch.allclose and
// torch.equal return a Python bool (the op table has no bool return):
//   wt.allclose(a, b, { rtol = 1e-5, atol = 1e-8, equalNan = false })  and  a.allclose(b, ...)
//     isclose(a, b, ...) everywhere (its checks and broadcasting errors are isclose's)
//   wt.equal(a, b)  and  a.equal(b)
//     same shape and equal elements (dtypes may differ, as in 1.13; NaN is never equal)
export function installPointwise(api, k) {
  const { Tensor, WeftError } = k;
  const tensorArg = (fn, name, v) => {
    if (!(v instanceof Tensor)) throw new WeftError('TypeError', `${fn}(): argument '${name}' must be a Tensor`);
  };
  // all(mask) as a JS boolean; the mask is disposed
  const allOf = (mask) => {
    try {
      const all = mask.all();
      try { return Boolean(all.item()); } finally { all.dispose(); }
    } finally { mask.dispose(); }
  };

  function allclose(a, b, options = {}) {
    tensorArg('allclose', 'input', a);
    tensorArg('allclose', 'other', b);
    return allOf(api.isclose(a, b, options));
  }

  function equal(a, b) {
    tensorArg('equal', 'input', a);
    tensorArg('equal', 'other', b);
    const sa = a.shape, sb = b.shape;
    if (sa.length !== sb.length || sa.some((n, i) => n !== sb[i])) return false;
    return allOf(api.eq(a, b));
  }

  api.allclose = allclose;
  api.equal = equal;
  Tensor.prototype.allclose = function (other, options) { return allclose(this, other, options); };
  Tensor.prototype.equal = function (other) { return equal(this, other); };
}
