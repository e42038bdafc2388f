// Types for issue 25's pointwise ops in their options-object calling forms
// (src/ops/pointwise.def; allclose and equal in js/pointwise.js return JS booleans).
// The other ops of the family (square, atan2, hypot, lerp, addcmul, addcdiv,
// isnan, isinf, isfinite, isposinf, isneginf, linalg.cross and their _ / out= forms) are
// the op table's generated functions (js/optable.d.ts).
import type { Operand, Tensor } from './weft.js';

export interface IscloseOptions {
  /** Relative tolerance (>= 0); default 1e-5. */
  rtol?: number;
  /** Absolute tolerance (>= 0); default 1e-8. */
  atol?: number;
  /** NaN equals NaN; default false. */
  equalNan?: boolean;
}

export interface NanToNumOptions {
  /** NaN's replacement; default 0. */
  nan?: number | null;
  /** +Infinity's replacement; default the dtype's largest finite value. */
  posinf?: number | null;
  /** -Infinity's replacement; default the dtype's lowest finite value. */
  neginf?: number | null;
  out?: Tensor;
}

export interface PointwiseFunctions {
  /** torch.isclose: |a - b| <= atol + rtol * |b| (or equal), broadcast; a bool tensor. a and b share a dtype. */
  isclose(a: Tensor, b: Tensor, options?: IscloseOptions): Tensor;
  /** torch.allclose: isclose(a, b, options) everywhere, as a JS boolean. */
  allclose(a: Tensor, b: Tensor, options?: IscloseOptions): boolean;
  /** torch.equal: same shape and equal elements (dtypes may differ; NaN is never equal), as a JS boolean. */
  equal(a: Tensor, b: Tensor): boolean;
  /** torch.nan_to_num: NaN, +Infinity and -Infinity replaced; integer tensors are copied. */
  nanToNum(x: Operand, options?: NanToNumOptions): Tensor;
  /** torch.logit: log(z / (1 - z)), z = x clamped to [eps, 1 - eps] when eps is given (and >= 0). */
  logit(x: Operand, options?: { eps?: number | null; out?: Tensor }): Tensor;
  /** torch.cross: linalg.cross over dim; dim null (default) is the input's first dimension of size 3. */
  cross(a: Tensor, b: Tensor, options?: { dim?: number | null }): Tensor;
}

export interface PointwiseTensorOps {
  isclose(other: Tensor, options?: IscloseOptions): Tensor;
  allclose(other: Tensor, options?: IscloseOptions): boolean;
  equal(other: Tensor): boolean;
  nanToNum(options?: NanToNumOptions): Tensor;
  nanToNum_(options?: Omit<NanToNumOptions, 'out'>): Tensor;
  logit(options?: { eps?: number | null }): Tensor;
  logit_(options?: { eps?: number | null }): Tensor;
  cross(other: Tensor, options?: { dim?: number | null }): Tensor;
}
