// Types for wt.einsum in torch.einsum's calling forms (js/einsum.js; the op in
// src/ops/einsum.def).
import type { Tensor } from './weft.js';

export interface EinsumOptions {
  /** ATen's contraction path: pairs of positions in the operand list, each pair's result appended (opt_einsum's form). */
  path?: number[] | null;
}

export interface EinsumFunctions {
  /**
   * torch.einsum: labels [a-zA-Z], '...' for broadcast dims, repeated labels take diagonals, '->' names the
   * output (implicit: the ellipsis, then labels used once, upper case first). Contracted pairwise, left to right,
   * one bmm per pair. Operands as arguments or as one array.
   */
  einsum(equation: string, ...operands: Tensor[]): Tensor;
  einsum(equation: string, operands: readonly Tensor[], options?: EinsumOptions): Tensor;
  einsum(equation: string, ...operandsThenOptions: [...Tensor[], EinsumOptions]): Tensor;
}
