// wt.linalg (issue 25): torch.linalg's functions. The op table's linalg_<name>
// operators are wt.linalg.<camelName> (js/ops.js, namespaced()); their
// generated declarations are LinalgFunctions (js/optable.d.ts). The norms
// also take their orders and dims in the options object, as JS code writes them.
import type { LinalgFunctions, Operand, Returns } from './ops.js';
import type { DTypeName, Shape, Tensor } from './weft.js';

export interface VectorNormOptions {
  /** 2 (default), any number, Infinity, -Infinity; 0 counts non-zeros */
  ord?: number;
  /** the dims reduced; null or [] (default): all of them */
  dim?: number | Shape | null;
  keepdim?: boolean;
  /** the input is converted to this dtype first (it must not narrow) */
  dtype?: DTypeName | null;
}

export interface MatrixNormOptions {
  /** 'fro' (default), 'nuc' (the sum of the singular values), 1, -1, Infinity, -Infinity, 2 / -2 (the largest / smallest singular value) */
  ord?: 'fro' | 'nuc' | number;
  /** the two dims of the matrices, default [-2, -1] */
  dim?: Shape;
  keepdim?: boolean;
  dtype?: DTypeName | null;
}

export interface QrOptions {
  /** 'reduced' (default): Q m x k, R k x n (k = min(m, n)); 'complete': Q m x m, R m x n; 'r': R only (Q empty) */
  mode?: 'reduced' | 'complete' | 'r';
}

export interface LstsqOptions {
  /** the rank cut relative to the largest singular value ('gelsy', 'gelsd', 'gelss'); default eps(dtype) * max(m, n) */
  rcond?: number | null;
  /** 'gelsy' (default: QR with column pivoting, any rank), 'gels' (QR, full rank), 'gelsd' / 'gelss'
   * (through the SVD: also the singular values) */
  driver?: 'gels' | 'gelsy' | 'gelsd' | 'gelss';
}

export interface EighOptions {
  /** which triangle of A is read: 'L' (default) or 'U' (either case); the other is never read */
  UPLO?: 'L' | 'U' | 'l' | 'u';
}

/** torch.linalg.eigh's result: also iterable, `const [L, V] = wt.linalg.eigh(A)` */
export type EighResult = Returns<'eigenvalues' | 'eigenvectors'>;

/** torch.linalg.svd's result, A = U diag(S) Vh, k = min(m, n): U (..., m, m) with fullMatrices (the
 * default), else (..., m, k); S (..., k), descending; Vh (..., n, n), else (..., k, n). Also [U, S, Vh]. */
export type SvdResult = Returns<'U' | 'S' | 'Vh'>;

export type LinalgNamespace = Omit<LinalgFunctions, 'vectorNorm' | 'matrixNorm' | 'qr' | 'lstsq' | 'eigh' | 'eigvalsh' | 'svd'> & {
  /** torch.linalg.qr: { Q, R } (also [Q, R]), LAPACK's signs, column-major as PyTorch's */
  qr(A: Operand, options?: QrOptions): Returns<'Q' | 'R'>;
  qr(A: Operand, mode?: 'reduced' | 'complete' | 'r'): Returns<'Q' | 'R'>;
  /** torch.linalg.lstsq: min ||A X - B||; residuals for m > n ('gels'; 'gelsd' / 'gelss' at full rank), rank
   * for all but 'gels', singularValues for 'gelsd' / 'gelss' */
  lstsq(A: Operand, B: Operand, options?: LstsqOptions): Returns<'solution' | 'residuals' | 'rank' | 'singularValues'>;
  /** torch.linalg.eigh: eigenvalues ascending, eigenvectors as the columns of V (signs free) */
  eigh(A: Operand, options?: EighOptions): EighResult;
  eigh(A: Operand, UPLO?: 'L' | 'U' | 'l' | 'u'): EighResult;
  /** torch.linalg.eigvalsh: the eigenvalues only, ascending */
  eigvalsh(A: Operand, options?: EighOptions): Tensor;
  eigvalsh(A: Operand, UPLO?: 'L' | 'U' | 'l' | 'u'): Tensor;
  /** torch.linalg.svd: the singular value decomposition (signs of the singular vectors are free) */
  svd(A: Operand, options?: { fullMatrices?: boolean }): SvdResult;
  svd(A: Operand, fullMatrices?: boolean): SvdResult;
  /** torch.linalg.vector_norm */
  vectorNorm(x: Operand, options?: VectorNormOptions): Tensor;
  vectorNorm(x: Operand, ord?: number, dim?: number | Shape | null, keepdim?: boolean, options?: { dtype?: DTypeName | null }): Tensor;
  /** torch.linalg.matrix_norm */
  matrixNorm(a: Operand, options?: MatrixNormOptions): Tensor;
  matrixNorm(a: Operand, ord: 'fro' | 'nuc' | number, dim?: Shape, keepdim?: boolean, options?: { dtype?: DTypeName | null }): Tensor;
};
