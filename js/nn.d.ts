// wt.nn (js/nn/): torch.nn's module system, layers, init and functional in camelCase.
import type { Tensor, DTypeName, MemoryFormat } from './weft.js';
import type { TransformerModules } from './transformer.js';

type Shape = number | readonly number[];
type Reduction = 'none' | 'mean' | 'sum';
type Device = 'cpu' | 'meta' | 'webgpu';
interface Factory { device?: Device | null; dtype?: DTypeName | null }

/** torch.nn.Parameter: a leaf tensor sharing the data given, registered when assigned to a module attribute. */
export interface Parameter extends Tensor {
  readonly isLeaf: boolean;
}

/**
 * torch.nn.Module. Callable: model(x) runs forward(x) in a tidy scope (its intermediates are freed on
 * return; a tensor assigned to a module attribute is kept). Assigning a Module or a Parameter to an
 * attribute registers it, in assignment order. With an optimizer over model.parameters(), tensors made
 * outside tidy during a step are released at that optimizer's step() after next unless passed to
 * wt.keep (docs/guide.md, "Memory").
 */
export interface Module {
  (...args: any[]): any;
}
export declare class Module {
  constructor();
  training: boolean;
  forward(...args: any[]): any;
  registerParameter(name: string, param: Parameter | null): void;
  registerBuffer(name: string, tensor: Tensor | null, options?: { persistent?: boolean }): void;
  addModule(name: string, module: Module | null): void;
  registerModule(name: string, module: Module | null): void;
  parameters(options?: { recurse?: boolean }): Parameter[];
  namedParameters(options?: { prefix?: string; recurse?: boolean }): [string, Parameter][];
  buffers(options?: { recurse?: boolean }): Tensor[];
  namedBuffers(options?: { prefix?: string; recurse?: boolean }): [string, Tensor][];
  children(): Module[];
  namedChildren(): [string, Module][];
  modules(): Module[];
  /** The module at a dotted path ('layer4.0.conv1'). */
  getSubmodule(target: string): Module;
  namedModules(options?: { prefix?: string; removeDuplicate?: boolean }): [string, Module][];
  /** Parameters and persistent buffers by PyTorch's dotted names (detached: the caller's to dispose). */
  stateDict(options?: { prefix?: string; keepVars?: boolean }): { [key: string]: Tensor };
  /** Copies in place under noGrad; throws PyTorch's combined message when strict (the default). */
  loadStateDict(stateDict: { [key: string]: Tensor } | Map<string, Tensor>, options?: { strict?: boolean }):
    { missingKeys: string[]; unexpectedKeys: string[] };
  train(mode?: boolean): this;
  eval(): this;
  requiresGrad_(requiresGrad?: boolean): this;
  zeroGrad(options?: { setToNone?: boolean }): void;
  /** Floating parameters and buffers converted in place (the same Parameter objects). */
  to(dtype: DTypeName | Device | Tensor | { dtype?: DTypeName; memoryFormat?: MemoryFormat; device?: Device }): this;
  /** to() that may read a webgpu module back to the cpu (asynchronous reads). */
  toAsync(dtype: DTypeName | Device | Tensor | { dtype?: DTypeName; memoryFormat?: MemoryFormat; device?: Device }): Promise<this>;
  float(): this;
  double(): this;
  half(): this;
  bfloat16(): this;
  apply(fn: (m: Module) => void): this;
  /** Frees every parameter and buffer of this module and its children. */
  dispose(): void;
  extraRepr(): string;
  /** PyTorch's module repr. */
  toString(): string;
}

declare class Indexed extends Module {
  readonly length: number;
  at(i: number): Module;
  set(i: number, module: Module): void;
  delete(i: number): void;
  append(module: Module): this;
  extend(modules: Iterable<Module>): this;
  insert(i: number, module: Module): void;
  pop(i?: number): Module;
  [Symbol.iterator](): Iterator<Module>;
}
export declare class Sequential extends Indexed {
  constructor(...modules: Module[]);
  constructor(named: { [name: string]: Module } | Map<string, Module>);
  slice(start?: number, end?: number): Sequential;
  forward(input: any): any;
}
export declare class ModuleList extends Indexed {
  constructor(modules?: Iterable<Module> | null);
  slice(start?: number, end?: number): ModuleList;
}
export declare class ModuleDict extends Module {
  constructor(modules?: { [name: string]: Module } | Map<string, Module> | [string, Module][] | null);
  readonly length: number;
  get(key: string): Module | undefined;
  set(key: string, module: Module): void;
  has(key: string): boolean;
  delete(key: string): void;
  pop(key: string): Module | undefined;
  clear(): void;
  keys(): string[];
  values(): Module[];
  items(): [string, Module][];
  update(modules: { [name: string]: Module } | Map<string, Module> | [string, Module][]): void;
  [Symbol.iterator](): Iterator<string>;
}

export declare class Linear extends Module {
  constructor(inFeatures: number, outFeatures: number, bias?: boolean | ({ bias?: boolean } & Factory), options?: { bias?: boolean } & Factory);
  readonly inFeatures: number;
  readonly outFeatures: number;
  weight: Parameter;
  bias: Parameter | null;
  resetParameters(): void;
  forward(x: Tensor): Tensor;
}

interface ConvOptions extends Factory {
  stride?: Shape; padding?: Shape | 'same' | 'valid'; dilation?: Shape; groups?: number; bias?: boolean;
  paddingMode?: 'zeros' | 'reflect' | 'replicate' | 'circular';
}
declare class ConvNd extends Module {
  readonly inChannels: number;
  readonly outChannels: number;
  readonly kernelSize: number[];
  readonly stride: number[];
  readonly padding: number[] | 'same' | 'valid';
  readonly dilation: number[];
  readonly outputPadding: number[];
  readonly groups: number;
  readonly paddingMode: string;
  weight: Parameter;
  bias: Parameter | null;
  resetParameters(): void;
}
export declare class Conv1d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: Shape, ...rest: any[]);
  forward(x: Tensor): Tensor;
}
export declare class Conv2d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: Shape, options?: ConvOptions);
  constructor(inChannels: number, outChannels: number, kernelSize: Shape, ...rest: any[]);
  forward(x: Tensor): Tensor;
}
export declare class ConvTranspose2d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: Shape, options?: ConvOptions & { outputPadding?: Shape });
  constructor(inChannels: number, outChannels: number, kernelSize: Shape, ...rest: any[]);
  forward(x: Tensor, outputSize?: readonly number[] | null): Tensor;
}

interface NormOptions extends Factory { eps?: number; momentum?: number | null; affine?: boolean; trackRunningStats?: boolean }
declare class BatchNormBase extends Module {
  constructor(numFeatures: number, options?: NormOptions);
  constructor(numFeatures: number, ...rest: any[]);
  readonly numFeatures: number;
  eps: number;
  momentum: number | null;
  readonly affine: boolean;
  readonly trackRunningStats: boolean;
  weight: Parameter | null;
  bias: Parameter | null;
  running_mean: Tensor | null;
  running_var: Tensor | null;
  num_batches_tracked: Tensor | null;
  readonly runningMean: Tensor | null;
  readonly runningVar: Tensor | null;
  readonly numBatchesTracked: Tensor | null;
  resetRunningStats(): void;
  resetParameters(): void;
  forward(x: Tensor): Tensor;
}
export declare class BatchNorm1d extends BatchNormBase {}
export declare class BatchNorm2d extends BatchNormBase {}
export declare class GroupNorm extends Module {
  constructor(numGroups: number, numChannels: number, options?: Factory & { eps?: number; affine?: boolean });
  constructor(numGroups: number, numChannels: number, ...rest: any[]);
  weight: Parameter | null;
  bias: Parameter | null;
  forward(x: Tensor): Tensor;
}
export declare class LayerNorm extends Module {
  constructor(normalizedShape: Shape, options?: Factory & { eps?: number; elementwiseAffine?: boolean });
  constructor(normalizedShape: Shape, ...rest: any[]);
  weight: Parameter | null;
  bias: Parameter | null;
  forward(x: Tensor): Tensor;
}

/** torch.nn.Embedding: weight [numEmbeddings, embeddingDim] ~ normal(0, 1), the padding row zeroed. */
export declare class Embedding extends Module {
  constructor(numEmbeddings: number, embeddingDim: number, options?: Factory & {
    paddingIdx?: number | null; maxNorm?: number | null; normType?: number; scaleGradByFreq?: boolean; sparse?: boolean;
    _weight?: Tensor | null;
  });
  constructor(numEmbeddings: number, embeddingDim: number, ...rest: any[]);
  /** A module over embeddings' data (shared); freeze (default true) leaves the weight without requiresGrad. */
  static fromPretrained(embeddings: Tensor, options?: { freeze?: boolean; paddingIdx?: number | null;
    maxNorm?: number | null; normType?: number; scaleGradByFreq?: boolean; sparse?: boolean }): Embedding;
  readonly numEmbeddings: number;
  readonly embeddingDim: number;
  readonly paddingIdx: number | null;
  weight: Parameter;
  resetParameters(): void;
  forward(input: Tensor): Tensor;
}
/** torch.nn.RMSNorm (PyTorch 2.4): weight of normalizedShape, ones; eps null: the dtype's machine epsilon. */
export declare class RMSNorm extends Module {
  constructor(normalizedShape: number | Shape, options?: Factory & { eps?: number | null; elementwiseAffine?: boolean });
  constructor(normalizedShape: number | Shape, ...rest: any[]);
  weight: Parameter | null;
  resetParameters(): void;
  forward(x: Tensor): Tensor;
}

/** torch.nn.CosineSimilarity(dim = 1, eps = 1e-8): forward is wt.cosineSimilarity. */
export declare class CosineSimilarity extends Module {
  constructor(options?: { dim?: number; eps?: number });
  constructor(dim?: number, eps?: number);
  readonly dim: number;
  readonly eps: number;
  forward(x1: Tensor, x2: Tensor): Tensor;
}
/** torch.nn.PairwiseDistance(p = 2, eps = 1e-6, keepdim = false): forward is wt.pairwiseDistance (p kept as norm, as PyTorch names it). */
export declare class PairwiseDistance extends Module {
  constructor(options?: { p?: number; eps?: number; keepdim?: boolean });
  constructor(p?: number, eps?: number, keepdim?: boolean);
  readonly norm: number;
  readonly eps: number;
  readonly keepdim: boolean;
  forward(x1: Tensor, x2: Tensor): Tensor;
}

/** A layer of one tensor in, one out, with PyTorch's constructor arguments (options last, camelCase). */
declare class Layer extends Module {
  constructor(...args: any[]);
  forward(x: Tensor): Tensor;
}
/** A loss module: forward(input, target). */
declare class Loss extends Module {
  constructor(...args: any[]);
  reduction: Reduction;
  forward(input: Tensor, target: Tensor): Tensor;
}

export interface NnInit {
  calculateGain(nonlinearity: string, param?: number | null): number;
  uniform_(tensor: Tensor, a?: number, b?: number): Tensor;
  normal_(tensor: Tensor, mean?: number, std?: number): Tensor;
  truncNormal_(tensor: Tensor, mean?: number, std?: number, a?: number, b?: number): Tensor;
  constant_(tensor: Tensor, val: number): Tensor;
  zeros_(tensor: Tensor): Tensor;
  ones_(tensor: Tensor): Tensor;
  xavierUniform_(tensor: Tensor, gain?: number): Tensor;
  xavierNormal_(tensor: Tensor, gain?: number): Tensor;
  kaimingUniform_(tensor: Tensor, a?: number | { a?: number; mode?: 'fan_in' | 'fan_out'; nonlinearity?: string },
    mode?: 'fan_in' | 'fan_out', nonlinearity?: string): Tensor;
  kaimingNormal_(tensor: Tensor, a?: number | { a?: number; mode?: 'fan_in' | 'fan_out'; nonlinearity?: string },
    mode?: 'fan_in' | 'fan_out', nonlinearity?: string): Tensor;
}

/** torch.nn.functional's names in camelCase, each the wt.* function of that name (present ones only). */
export interface NnFunctional { readonly [name: string]: (...args: any[]) => any }

export interface NnNamespace extends TransformerModules {
  readonly Module: typeof Module;
  /** wt.nn.Parameter(data, requiresGrad = true), with or without new: takes data over. */
  readonly Parameter: {
    new (data?: Tensor | null, requiresGrad?: boolean): Parameter;
    (data?: Tensor | null, requiresGrad?: boolean): Parameter;
  };
  readonly Sequential: typeof Sequential;
  readonly ModuleList: typeof ModuleList;
  readonly ModuleDict: typeof ModuleDict;
  readonly Linear: typeof Linear;
  readonly Conv1d: typeof Conv1d;
  readonly Conv2d: typeof Conv2d;
  readonly ConvTranspose2d: typeof ConvTranspose2d;
  readonly BatchNorm1d: typeof BatchNorm1d;
  readonly BatchNorm2d: typeof BatchNorm2d;
  readonly GroupNorm: typeof GroupNorm;
  readonly LayerNorm: typeof LayerNorm;
  readonly Embedding: typeof Embedding;
  readonly RMSNorm: typeof RMSNorm;
  readonly CosineSimilarity: typeof CosineSimilarity;
  readonly PairwiseDistance: typeof PairwiseDistance;
  readonly Identity: typeof Layer;
  readonly Flatten: typeof Layer;
  readonly Unflatten: typeof Layer;
  readonly MaxPool2d: typeof Layer;
  readonly AvgPool2d: typeof Layer;
  readonly AdaptiveAvgPool2d: typeof Layer;
  readonly Upsample: typeof Layer;
  readonly ZeroPad2d: typeof Layer;
  readonly ConstantPad1d: typeof Layer;
  readonly ConstantPad2d: typeof Layer;
  readonly ReflectionPad1d: typeof Layer;
  readonly ReflectionPad2d: typeof Layer;
  readonly ReplicationPad1d: typeof Layer;
  readonly ReplicationPad2d: typeof Layer;
  readonly Dropout: typeof Layer;
  readonly Dropout2d: typeof Layer;
  readonly ReLU: typeof Layer;
  readonly ReLU6: typeof Layer;
  readonly LeakyReLU: typeof Layer;
  readonly ELU: typeof Layer;
  readonly GELU: typeof Layer;
  readonly SiLU: typeof Layer;
  readonly Mish: typeof Layer;
  readonly Hardswish: typeof Layer;
  readonly Hardsigmoid: typeof Layer;
  readonly Hardtanh: typeof Layer;
  readonly Sigmoid: typeof Layer;
  readonly Tanh: typeof Layer;
  readonly Softplus: typeof Layer;
  readonly Softmax: typeof Layer;
  readonly LogSoftmax: typeof Layer;
  readonly CrossEntropyLoss: typeof Loss;
  readonly MSELoss: typeof Loss;
  readonly NLLLoss: typeof Loss;
  readonly BCEWithLogitsLoss: typeof Loss;
  readonly L1Loss: typeof Loss;
  readonly SmoothL1Loss: typeof Loss;
  readonly HuberLoss: typeof Loss;
  readonly init: NnInit;
  readonly functional: NnFunctional;
  /** wt.nn.functional's short name (const F = wt.nn.F). */
  readonly F: NnFunctional;
}
