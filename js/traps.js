// JS without traps: what a PyTorch user writes in JS that would otherwise
// fail obscurely or silently.
//   - index arguments (indexSelect, gather, scatter*, take, ...) take plain
//     arrays of integers as int64; a floating tensor as an index is refused
//     with its dtype and the fix
//   - crossEntropy / nllLoss take int32 class indices (a JS extension: an
//     Int32Array of labels), converted to int64, so the result equals int64's
//   - integers beyond int64 (2 ** 63) and values beyond a narrower integer
//     dtype are refused with PyTorch's overflow errors instead of saturating
//   - a missing name on wt, wt.nn.functional or wt.linalg is a WeftError
//     naming the closest names it has
//   - `for (const row of t)` iterates over dim 0, as PyTorch's __iter__
import { NAMES as FUNCTIONAL_NAMES } from './nn/functional.js';

// torch.linalg's functions (PyTorch 1.13), camelCase: a missing one is said to be missing from weft
const LINALG_NAMES = ['cholesky', 'choleskyEx', 'cond', 'cross', 'det', 'diagonal', 'eig', 'eigh', 'eigvals',
  'eigvalsh', 'householderProduct', 'inv', 'invEx', 'ldlFactor', 'ldlFactorEx', 'ldlSolve', 'lstsq', 'lu', 'luFactor',
  'luFactorEx', 'luSolve', 'matmul', 'matrixExp', 'matrixNorm', 'matrixPower', 'matrixRank', 'multiDot', 'norm',
  'pinv', 'qr', 'slogdet', 'solve', 'solveEx', 'solveTriangular', 'svd', 'svdvals', 'tensorinv', 'tensorsolve',
  'vander', 'vecdot', 'vectorNorm'];

const TWO63 = 2 ** 63;
const BIG63 = 2n ** 63n;
const FLOATING = new Set(['float16', 'bfloat16', 'float32', 'float64']);
// the ops whose 'target' is a class index (int32 accepted as a JS extension)
const CLASS_TARGET = new Set(['cross_entropy', 'nll_loss', 'nll_loss2d']);
const INT_RANGE = {
  uint8: [0, 255], int8: [-128, 127], int16: [-32768, 32767], int32: [-2147483648, 2147483647],
};

// A JS integer is Python's int: beyond int64 PyTorch's argument parser
// refuses it ('Overflow when unpacking long').
export function longOverflows(v) {
  return typeof v === 'number' ? v >= TWO63 || v < -TWO63 : typeof v === 'bigint' && (v >= BIG63 || v < -BIG63);
}

// An integer argument (a dim, a size, a slice's end): 2 ** 63 is also int64's
// max, the only way JS spells it (sys.maxsize as "to the end"), so it passes.
export function intArgOverflows(v) {
  return v !== TWO63 && longOverflows(v);
}

// What an error about a floating index tensor adds: its dtype and the fix.
export function floatIndexFix(dtype) {
  return ` (got a ${dtype} tensor: convert it with .long(), or make it with { dtype: 'int64' }; ` +
    `wt.tensor makes ${dtype} from JS numbers)`;
}

export function trapChecks(WeftError, getApi) {
  const overflow = (dtype) => new WeftError('OverflowError', `value cannot be converted to type ${dtype} without overflow`);

  function checkLong(v) {
    if (longOverflows(v)) throw new WeftError('OverflowError', 'Overflow when unpacking long');
    return v;
  }

  // A number stored into an integer dtype (wt.tensor's values), checked as
  // c10's overflows<T>: integers (Python ints) may be negative for uint8
  // (-1 wraps to 255); other numbers must lie within the type's range.
  function checkedInt(dtype, n) {
    if (dtype === 'int64') {
      if (!Number.isFinite(n)) throw overflow(dtype);
      return checkLong(n);
    }
    const [lo, hi] = INT_RANGE[dtype];
    const min = Number.isInteger(n) && lo === 0 ? -hi : lo;
    if (!(n >= min && n <= hi)) throw overflow(dtype); // NaN too
    return n;
  }

  // Every integer of a (nested) array, or the first element that is not one.
  function nonInteger(v) {
    if (Array.isArray(v)) {
      for (const x of v) {
        const bad = nonInteger(x);
        if (bad !== undefined) return bad;
      }
      return undefined;
    }
    return Number.isInteger(v) || typeof v === 'bigint' ? undefined : v;
  }
  const isIntTyped = (v) => ArrayBuffer.isView(v) && !(v instanceof DataView) &&
    !(v instanceof Float32Array) && !(v instanceof Float64Array);

  // An index or target argument as ops.js binds it: a tensor as is, or
  // { make } for a tensor made when the op runs (and disposed after).
  function indexArg(op, name, v) {
    const api = getApi();
    if (v instanceof api.Tensor) {
      // (a webgpu target stays int32: int64 cannot live on the device)
      if (name === 'target') return CLASS_TARGET.has(op) && v.dtype === 'int32' && v.device !== 'webgpu' ? { make: () => v.to('int64') } : v;
      // the op's own (PyTorch's) error, with the fix added (ops.js invoke)
      if (FLOATING.has(v.dtype)) return { make: () => v, keep: true, fix: floatIndexFix(v.dtype) };
      return v;
    }
    if (!isIntTyped(v)) {
      const bad = nonInteger(ArrayBuffer.isView(v) ? Array.from(v) : v);
      if (bad !== undefined) {
        throw new WeftError('TypeError', `${op}(): argument '${name}' must be a Tensor or an array of integers, ` +
          `but found ${typeof bad === 'number' ? bad : typeof bad}`);
      }
    }
    return { make: () => api.tensor(v, { dtype: 'int64' }) };
  }

  function checkIntArg(v) {
    if (intArgOverflows(v)) throw new WeftError('OverflowError', 'Overflow when unpacking long');
    return v;
  }

  return { checkLong, checkIntArg, checkedInt, indexArg, floatIndexFix };
}

// Names a lookup of a missing property must not throw for: promise
// resolution (then), JSON, and the probes of inspectors and test frameworks.
const PROBES = new Set(['then', 'toJSON', 'inspect', 'nodeType', 'tagName', 'asymmetricMatch', '$$typeof',
  '@@__IMMUTABLE_ITERABLE__@@', '@@__IMMUTABLE_RECORD__@@', '_isMockFunction', 'prototype', '__esModule', 'default']);

// The closest of names to name: within an edit distance a third of its
// length (2 at least), or containing it, nearest first, at most 3.
function closest(name, names, editDistance) {
  const norm = (s) => s.replace(/_/g, '').toLowerCase();
  const key = norm(name);
  const limit = Math.max(2, Math.floor(key.length / 3));
  return names
    .map((n) => [n, editDistance(norm(n), key)])
    .filter(([n, d]) => d <= limit || (key.length >= 4 && norm(n).includes(key)))
    .sort((a, b) => a[1] - b[1] || a[0].length - b[0].length)
    .slice(0, 3)
    .map(([n]) => n);
}

// obj's missing names throw: a Proxy as obj's prototype sees only the
// lookups obj and Object.prototype do not answer, so names that exist cost
// nothing. known: names PyTorch has that this build lacks (said so).
function guardMissing(obj, label, { WeftError, editDistance }, known = []) {
  const base = Object.getPrototypeOf(obj);
  const guard = new Proxy(base, {
    get(target, name, receiver) {
      if (typeof name === 'symbol' || name in target || PROBES.has(name)) return Reflect.get(target, name, receiver);
      const have = Object.keys(receiver).filter((n) => !n.startsWith('_'));
      if (known.includes(name)) {
        throw new WeftError('AttributeError', `${label}.${name} is not implemented in weft yet`);
      }
      const near = closest(name, have, editDistance);
      const hint = near.length ? ` (did you mean ${near.map((n) => `${label}.${n}`).join(', ')}?)` : '';
      throw new WeftError('AttributeError', `${label} has no attribute '${name}'${hint}`);
    },
  });
  Object.setPrototypeOf(obj, guard);
}

// Installed last, once every wt.* name exists.
export function installTraps(api, k) {
  const { Tensor, WeftError } = k;
  // PyTorch's Tensor.__iter__: the rows along dim 0, as views (each one the
  // caller's to dispose, as any op's result)
  Object.defineProperty(Tensor.prototype, Symbol.iterator, {
    value: function* rows() {
      if (this.ndim === 0) throw new WeftError('TypeError', 'iteration over a 0-d tensor');
      const n = this.shape[0];
      for (let i = 0; i < n; i++) yield this.select(0, i);
    },
    writable: true, configurable: true,
  });
  guardMissing(api, 'wt', k);
  if (api.nn?.functional) guardMissing(api.nn.functional, 'wt.nn.functional', k, FUNCTIONAL_NAMES);
  if (api.linalg) guardMissing(api.linalg, 'wt.linalg', k, LINALG_NAMES);
}
