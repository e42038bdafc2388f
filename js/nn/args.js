// Constructor and function arguments in PyTorch's positional order with the
// options object last, camelCase: new wt.nn.Conv2d(1, 8, 3, { padding: 1 })
// and new wt.nn.Conv2d(1, 8, 3, 1, 1) are the same call.
export const REQUIRED = Symbol('required');

export function makeArgParser({ WeftError, Tensor, isOptions, didYouMean, typeName }) {
  const fail = (msg) => { throw new WeftError('TypeError', msg); };
  // spec: [[name, default], ...]; default REQUIRED for a required argument
  return function parse(fn, spec, args) {
    const names = spec.map(([n]) => n);
    const last = args[args.length - 1];
    const hasOpts = args.length > 0 && isOptions(last) && !(last instanceof Tensor) &&
      args.length > spec.filter(([, d]) => d === REQUIRED).length;
    const pos = hasOpts ? args.slice(0, -1) : args;
    const opts = hasOpts ? last : {};
    if (pos.length > spec.length) fail(`${fn}() takes at most ${spec.length} positional arguments but ${pos.length} were given`);
    const out = {};
    pos.forEach((v, i) => { out[names[i]] = v; });
    for (const [key, v] of Object.entries(opts)) {
      if (!names.includes(key)) fail(`${fn}() got an unexpected option '${key}'${didYouMean(key, names)}`);
      if (key in out) fail(`${fn}() got multiple values for argument '${key}'`);
      out[key] = v;
    }
    for (const [name, dflt] of spec) {
      if (out[name] === undefined) {
        if (dflt === REQUIRED) fail(`${fn}() missing required argument '${name}'`);
        out[name] = dflt;
      }
    }
    return out;
  };
}

// checks shared by layer constructors
export function makeChecks({ WeftError, typeName }) {
  const fail = (code, msg) => { throw new WeftError(code, msg); };
  const int = (fn, name, v) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) fail('TypeError', `${fn}(): argument '${name}' must be an integer, not ${typeName(v)}`);
    return v;
  };
  const num = (fn, name, v) => {
    if (typeof v !== 'number') fail('TypeError', `${fn}(): argument '${name}' must be a number, not ${typeName(v)}`);
    return v;
  };
  const bool = (fn, name, v) => {
    if (typeof v !== 'boolean') fail('TypeError', `${fn}(): argument '${name}' must be a boolean, not ${typeName(v)}`);
    return v;
  };
  // _single/_pair/_quadruple: a number repeated, or an array of n integers
  const tuple = (fn, name, v, n) => {
    const list = Array.isArray(v) ? v : Array(n).fill(v);
    if (list.length !== n) fail('InvalidArgument', `${fn}(): argument '${name}' must be an integer or an array of ${n} integers, got ${list.length}`);
    list.forEach((x) => int(fn, name, x));
    return list;
  };
  return { int, num, bool, tuple, fail };
}
