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
  /** 'fro' (default), 1, -1, Infinity, -Infinity ('nuc', 2 and -2 need linalg.svd: refused for now) */
  ord?: 'fro' | 'nuc' | number;
  /** the two dims of the matrices, default [-2, -1] */
  dim?: Shape;
  keepdim?: boolean;
  dtype?: DTypeName | null;
}

export interface EighOptions {
  /** which triangle of A is read: 'L' (default) or 'U' (either case); the other is never read */
  UPLO?: 'L' | 'U' | 'l' | 'u';
}

/** torch.linalg.eigh's result: also iterable, `const [L, V] = wt.linalg.eigh(A)` */
export type EighResult = Returns<'eigenvalues' | 'eigenvectors'>;

export type LinalgNamespace = Omit<LinalgFunctions, 'vectorNorm' | 'matrixNorm' | 'eigh' | 'eigvalsh'> & {
  /** torch.linalg.eigh: eigenvalues ascending, eigenvectors as the columns of V (signs free) */
  eigh(A: Operand, options?: EighOptions): EighResult;
  eigh(A: Operand, UPLO?: 'L' | 'U' | 'l' | 'u'): EighResult;
  /** torch.linalg.eigvalsh: the eigenvalues only, ascending */
  eigvalsh(A: Operand, options?: EighOptions): Tensor;
  eigvalsh(A: Operand, UPLO?: 'L' | 'U' | 'l' | 'u'): Tensor;
  /** torch.linalg.vector_norm */
  vectorNorm(x: Operand, options?: VectorNormOptions): Tensor;
  vectorNorm(x: Operand, ord?: number, dim?: number | Shape | null, keepdim?: boolean, options?: { dtype?: DTypeName | null }): Tensor;
  /** torch.linalg.matrix_norm */
  matrixNorm(a: Operand, options?: MatrixNormOptions): Tensor;
  matrixNorm(a: Operand, ord: 'fro' | 'nuc' | number, dim?: Shape, keepdim?: boolean, options?: { dtype?: DTypeName | null }): Tensor;
};
