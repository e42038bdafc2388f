// wt.optim (js/optim.js): torch.optim's SGD, Adam and AdamW in camelCase.
import type { Tensor, WorkerTensor } from './weft.js';

export interface SGDOptions {
  /** Required: torch.optim.SGD has no default learning rate. */
  lr: number;
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
  readonly SGD: new (params: readonly Tensor[], options: SGDOptions) => Optimizer<SGDOptions>;
  readonly Adam: new (params: readonly Tensor[], options?: AdamOptions) => Optimizer<AdamOptions>;
  readonly AdamW: new (params: readonly Tensor[], options?: AdamOptions) => Optimizer<AdamOptions>;
}

/**
 * An optimizer living in the worker (ww.optim): its state stays there until dispose() (tidy does not
 * touch it). step() and zeroGrad() resolve once the worker ran them.
 */
export interface WorkerOptimizer {
  readonly params: readonly WorkerTensor[];
  /** Resolves once the worker made it; rejects with the constructor's error (so do step() and zeroGrad()). */
  readonly ready: Promise<void>;
  step(): Promise<void>;
  /** Runs closure here under enableGrad, then steps; resolves with the closure's result. */
  step<T>(closure: () => T): Promise<Awaited<T>>;
  zeroGrad(options?: { setToNone?: boolean }): Promise<void>;
  dispose(): void;
}

export interface WorkerOptimNamespace {
  readonly SGD: new (params: readonly WorkerTensor[], options: SGDOptions) => WorkerOptimizer;
  readonly Adam: new (params: readonly WorkerTensor[], options?: AdamOptions) => WorkerOptimizer;
  readonly AdamW: new (params: readonly WorkerTensor[], options?: AdamOptions) => WorkerOptimizer;
}
