// Autograd's JS API (js/autograd.js): PyTorch's torch.autograd in camelCase.
import type { Tensor, WorkerTensor, WorkerWeft } from './weft.js';

/** A node of the graph (t.gradFn): 'MulBackward0', 'AccumulateGrad', ... Holds its node until dispose() or collection. */
export interface GradFn {
  readonly name: string;
  /** The node's identity: equal for two wrappers of one graph node (valid while the node lives). */
  readonly id: number;
  /** One [node, inputNr] per input of the op (null where no gradient flows), as PyTorch's next_functions. */
  readonly nextFunctions: Array<[GradFn | null, number]>;
  /** AccumulateGrad's leaf tensor (a new wrapper); null for other nodes. */
  readonly variable: Tensor | null;
  toString(): string;
  dispose(): void;
}

export interface BackwardOptions {
  /** Keep the saved tensors for another backward pass (default: createGraph). */
  retainGraph?: boolean;
  /** Record the backward pass itself, for higher-order gradients. */
  createGraph?: boolean;
}

/** t.backward()'s options: also PyTorch's inputs= (accumulate into these tensors' .grad only). */
export interface TensorBackwardOptions extends BackwardOptions {
  inputs?: Tensor | readonly Tensor[];
}

export interface GradOptions extends BackwardOptions {
  /** The gradient of each output (null: ones, for one-element outputs). */
  gradOutputs?: Tensor | ReadonlyArray<Tensor | null>;
  /** Give null for an input the outputs do not depend on instead of throwing. */
  allowUnused?: boolean;
}

export interface AutogradNamespace {
  /** d outputs / d inputs, without touching .grad (torch.autograd.grad). */
  grad(outputs: Tensor | readonly Tensor[], inputs: Tensor | readonly Tensor[], options?: GradOptions): Array<Tensor | null>;
  readonly GradFn: abstract new (...args: never[]) => GradFn;
}

export interface AutogradFunctions {
  readonly autograd: AutogradNamespace;
  /** Runs fn with gradient recording off on this thread (torch.no_grad). */
  noGrad<T>(fn: () => T): T;
  /** Runs fn with gradient recording on (torch.enable_grad). */
  enableGrad<T>(fn: () => T): T;
  isGradEnabled(): boolean;
  setGradEnabled(on: boolean): void;
}

/** What registerHook returns: remove() stops the hook (torch.utils.hooks.RemovableHandle). */
export interface RemovableHandle {
  readonly id: number;
  remove(): void;
}

export interface AutogradTensorOps {
  /**
   * fn(grad) runs when this tensor's gradient is computed (a leaf: before it is accumulated into .grad;
   * a non-leaf: before it flows on), in registration order; a returned tensor (same shape and dtype)
   * replaces the gradient. grad and what fn makes are disposed when it returns (wt.keep to keep one);
   * an error fn throws is backward's. Not in worker mode.
   */
  registerHook(fn: (grad: Tensor) => Tensor | null | undefined | void): RemovableHandle;
  /** Floating dtypes only; only leaves can change it. */
  requiresGrad: boolean;
  requiresGrad_(requiresGrad?: boolean): this;
  /** No gradFn: created by the user, not by a recorded op. */
  readonly isLeaf: boolean;
  /** The accumulated gradient (a new wrapper), or null; assign null to clear it. */
  grad: Tensor | null;
  /** Keep .grad of a non-leaf during backward. */
  retainGrad(): void;
  readonly retainsGrad: boolean;
  /** The node that made this tensor; null for leaves. The pieces of split/chunk/unbind share one node (same id). */
  readonly gradFn: GradFn | null;
  /** Which output of gradFn this tensor is (the piece's index for split/chunk/unbind; 0 otherwise). */
  readonly outputNr: number;
  /** A tensor sharing the data, outside the graph. */
  detach(): Tensor;
  detach_(): this;
  /** Accumulates d this / d leaves into the leaves' .grad (gradient: required unless one element). */
  backward(gradient?: Tensor | null, options?: TensorBackwardOptions): void;
}

// ---- worker mode: the graph, .grad and grad mode live in the worker; reads are promises ----

/** t.gradFn in worker mode: plain data, the node's name and its next nodes' names. */
export interface WorkerGradFn {
  readonly name: string;
  /** One [{ name } | null, inputNr] per input of the op, as PyTorch's next_functions (one level). */
  readonly nextFunctions: Array<[{ readonly name: string } | null, number]>;
}

export interface WorkerGradOptions extends BackwardOptions {
  gradOutputs?: WorkerTensor | ReadonlyArray<WorkerTensor | null>;
  allowUnused?: boolean;
}

export interface WorkerAutogradFunctions {
  readonly autograd: {
    /** d outputs / d inputs, without touching .grad; resolves once the worker computed them. */
    grad(outputs: WorkerTensor | readonly WorkerTensor[], inputs: WorkerTensor | readonly WorkerTensor[],
      options?: WorkerGradOptions): Promise<Array<WorkerTensor | null>>;
  };
  /**
   * Runs fn here with recording off in the worker for the calls it sends (messages are ordered). An
   * async fn's scope lasts until it settles: calls made elsewhere meanwhile are inside it.
   */
  noGrad<T>(fn: (ww: WorkerWeft) => T): T;
  /** As noGrad, with recording on. */
  enableGrad<T>(fn: (ww: WorkerWeft) => T): T;
  isGradEnabled(): Promise<boolean>;
  setGradEnabled(on: boolean): Promise<void>;
}

export interface WorkerAutogradTensorOps {
  get requiresGrad(): Promise<boolean>;
  /** Only leaves can change it; a failure rejects the tensor's next use, once. */
  set requiresGrad(requiresGrad: boolean);
  /** In place: a WorkerTensor naming the same tensor (rejects its reads if refused). */
  requiresGrad_(requiresGrad?: boolean): WorkerTensor;
  readonly isLeaf: Promise<boolean>;
  readonly retainsGrad: Promise<boolean>;
  readonly gradFn: Promise<WorkerGradFn | null>;
  /** Which output of gradFn this tensor is (the piece's index for split/chunk/unbind; 0 otherwise). */
  readonly outputNr: Promise<number>;
  /**
   * The gradient at this point of the message order (a new WorkerTensor sharing its data: dispose it
   * or use tidy). When there is none, its reads reject: `await t.gradOrNull()` tells.
   */
  get grad(): WorkerTensor;
  /** t.grad = null clears the gradient (a failure rejects the tensor's next use, once). */
  set grad(grad: WorkerTensor | null);
  /** The gradient, or null. */
  gradOrNull(): Promise<WorkerTensor | null>;
  retainGrad(): Promise<void>;
  /** Not in worker mode (backward runs in the worker and cannot call this thread): throws a NotImplemented WeftError. */
  registerHook(fn: (grad: never) => unknown): never;
  detach(): WorkerTensor;
  detach_(): WorkerTensor;
  /** Resolves once the worker ran the backward pass; rejects with its WeftError. */
  backward(gradient?: WorkerTensor | null,
    options?: BackwardOptions & { inputs?: WorkerTensor | readonly WorkerTensor[] }): Promise<void>;
}
