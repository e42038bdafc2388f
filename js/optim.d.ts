// wt.optim (js/optim.js): torch.optim's SGD, Adam and AdamW in camelCase.
import type { Tensor } from './weft.js';

export interface SGDOptions {
  lr?: number;
  momentum?: number;
  dampening?: number;
  weightDecay?: number;
  nesterov?: boolean;
  maximize?: boolean;
}

export interface AdamOptions {
  lr?: number;
  betas?: readonly [number, number];
  eps?: number;
  /** Adam: L2 added to the gradient (default 0); AdamW: decoupled decay of the parameter (default 0.01). */
  weightDecay?: number;
  amsgrad?: boolean;
  maximize?: boolean;
}

export interface Optimizer<O> {
  readonly params: readonly Tensor[];
  readonly defaults: Required<O>;
  /** One update of every parameter with a .grad, in place under noGrad; returns the closure's loss, if given. */
  step<T = undefined>(closure?: () => T): T;
  /** Zero every .grad (PyTorch 1.13's default), or drop them with { setToNone: true }. */
  zeroGrad(options?: { setToNone?: boolean }): void;
  /** Releases the optimizer's state tensors (momentum buffers, moments). */
  dispose(): void;
}

export interface OptimNamespace {
  readonly SGD: new (params: readonly Tensor[], options?: SGDOptions) => Optimizer<SGDOptions>;
  readonly Adam: new (params: readonly Tensor[], options?: AdamOptions) => Optimizer<AdamOptions>;
  readonly AdamW: new (params: readonly Tensor[], options?: AdamOptions) => Optimizer<AdamOptions>;
}
