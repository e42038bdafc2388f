// wt.optim (js/optim.js): torch.optim's SGD, Adam and AdamW in camelCase, with
// parameter groups, state dicts, and wt.optim.lrScheduler (js/lr_scheduler.js).
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

/**
 * A parameter group as given: its params (a Tensor or any iterable of Tensors) and options that override
 * the optimizer's defaults; other keys are kept, as PyTorch keeps them.
 */
export type ParamGroupInput<O> = { params: Tensor | Iterable<Tensor> } & Partial<O> & { [key: string]: unknown };

/** A live parameter group (optimizer.paramGroups[i]): changing lr changes the next step. */
export type ParamGroup<O> = { params: Tensor[]; initialLr?: number; [key: string]: unknown } & Required<O>;

/**
 * torch.optim's state_dict: parameters named by their index over the groups, PyTorch's snake_case
 * names (momentum_buffer, step, exp_avg, exp_avg_sq, max_exp_avg_sq; lr, weight_decay, ...), so a
 * torch-saved optimizer state dict loads. Its tensors are new handles on the optimizer's state.
 */
export interface OptimizerStateDict {
  state: { [index: number]: { [key: string]: Tensor | number | null } };
  param_groups: Array<{ params: number[]; [key: string]: unknown }>;
}

export interface Optimizer<O> {
  /** Every parameter, group after group. */
  readonly params: readonly Tensor[];
  readonly defaults: Required<O>;
  readonly paramGroups: Array<ParamGroup<O>>;
  /** Per parameter: momentumBuffer, or step, expAvg, expAvgSq, maxExpAvgSq (owned by the optimizer). */
  readonly state: Map<Tensor, { [key: string]: Tensor | number | null }>;
  /** One update of every parameter with a .grad, in place under noGrad; returns the closure's loss, if given. */
  step<T = undefined>(closure?: () => T): T;
  /** Zero every .grad (PyTorch 1.13's default), or drop them with { setToNone: true }. */
  zeroGrad(options?: { setToNone?: boolean }): void;
  /** A new group (torch.optim's add_param_group): a parameter may be in one group only. */
  addParamGroup(group: ParamGroupInput<O>): void;
  stateDict(): OptimizerStateDict;
  /** Same group count and sizes as this optimizer's; the state is copied (cast to each parameter's dtype). */
  loadStateDict(stateDict: OptimizerStateDict | Map<string, unknown>): void;
  /** Releases the optimizer's state tensors (momentum buffers, moments). */
  dispose(): void;
}

/** The params argument: tensors, or parameter groups. */
export type Params<O> = Iterable<Tensor> | Iterable<ParamGroupInput<O>>;

export interface LrSchedulerOptions {
  /** The last epoch when resuming (default -1: start, recording each group's initialLr). */
  lastEpoch?: number;
  /** Print each change as PyTorch does. */
  verbose?: boolean;
}

/** A scheduler: construct after the optimizer, call step() after optimizer.step(). */
export interface LRScheduler {
  readonly optimizer: Optimizer<unknown>;
  lastEpoch: number;
  baseLrs: number[];
  /** Next epoch (1.13's chainable forms); step(epoch) jumps there (the closed forms, deprecated in PyTorch). */
  step(epoch?: number): void;
  /** Each group's lr after the last step(). */
  getLastLr(): number[];
  /** PyTorch's names: last_epoch, base_lrs, _step_count, _last_lr, step_size, T_max, ... */
  stateDict(): { [key: string]: unknown };
  loadStateDict(stateDict: { [key: string]: unknown }): void;
}

export interface LrSchedulerNamespace {
  readonly LRScheduler: abstract new (...args: never[]) => LRScheduler;
  readonly StepLR: new (optimizer: Optimizer<any>, stepSize: number, options?: LrSchedulerOptions & { gamma?: number }) => LRScheduler;
  readonly MultiStepLR: new (optimizer: Optimizer<any>, milestones: readonly number[],
    options?: LrSchedulerOptions & { gamma?: number }) => LRScheduler;
  readonly CosineAnnealingLR: new (optimizer: Optimizer<any>, TMax: number,
    options?: LrSchedulerOptions & { etaMin?: number }) => LRScheduler;
  readonly LinearLR: new (optimizer: Optimizer<any>,
    options?: LrSchedulerOptions & { startFactor?: number; endFactor?: number; totalIters?: number }) => LRScheduler;
  /** lrLambda: a factor of the group's initialLr per epoch, or one function per group. */
  readonly LambdaLR: new (optimizer: Optimizer<any>, lrLambda: ((epoch: number) => number) | ReadonlyArray<(epoch: number) => number>,
    options?: LrSchedulerOptions) => LRScheduler;
}

export interface OptimNamespace {
  readonly Optimizer: abstract new (...args: never[]) => Optimizer<unknown>;
  readonly SGD: new (params: Params<SGDOptions>, options: SGDOptions) => Optimizer<SGDOptions>;
  readonly Adam: new (params: Params<AdamOptions>, options?: AdamOptions) => Optimizer<AdamOptions>;
  readonly AdamW: new (params: Params<AdamOptions>, options?: AdamOptions) => Optimizer<AdamOptions>;
  readonly lrScheduler: LrSchedulerNamespace;
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
