// wt.nn's attention and transformer modules (js/nn/transformer.js): torch.nn 1.13's
// parameter and child names, so a torch.save'd state dict loads unchanged.
import type { Tensor, DTypeName } from './weft.js';
import type { Module, Parameter, ModuleList, Linear, LayerNorm } from './nn.js';

interface Factory { device?: 'cpu' | 'meta' | null; dtype?: DTypeName | null }

export interface MultiheadAttentionOptions extends Factory {
  dropout?: number;
  bias?: boolean;
  addBiasKv?: boolean;
  addZeroAttn?: boolean;
  kdim?: number | null;
  vdim?: number | null;
  batchFirst?: boolean;
}

export interface AttentionCallOptions {
  /** [N, S] (or [S] unbatched): true (bool) marks a padded key; a float mask is added. */
  keyPaddingMask?: Tensor | null;
  /** Default true: also return the attention probabilities; false goes through wt.scaledDotProductAttention. */
  needWeights?: boolean;
  /** [L, S] or [N * numHeads, L, S]: true (bool or uint8) masks a position out; a float mask is added. */
  attnMask?: Tensor | null;
  /** Default true: the weights averaged over heads ([N, L, S]); false: per head ([N, numHeads, L, S]). */
  averageAttnWeights?: boolean;
  /** A hint that attnMask is the causal mask (PyTorch 2.x): needs attnMask. */
  isCausal?: boolean;
}

/** out_proj's class (torch.nn.modules.linear.NonDynamicallyQuantizableLinear), printed by that name. */
export declare class NonDynamicallyQuantizableLinear extends Linear {}

/** torch.nn.MultiheadAttention: call (query, key, value, options) → [output, weights | null]. */
export declare class MultiheadAttention extends Module {
  constructor(embedDim: number, numHeads: number, options?: MultiheadAttentionOptions);
  constructor(embedDim: number, numHeads: number, ...rest: any[]);
  readonly embedDim: number;
  readonly numHeads: number;
  readonly headDim: number;
  readonly kdim: number;
  readonly vdim: number;
  readonly batchFirst: boolean;
  readonly dropout: number;
  readonly addZeroAttn: boolean;
  /** [3 * embedDim, embedDim] when kdim = vdim = embedDim, else null (then q/k/vProjWeight). */
  readonly inProjWeight: Parameter | null;
  readonly inProjBias: Parameter | null;
  readonly qProjWeight: Parameter | null;
  readonly kProjWeight: Parameter | null;
  readonly vProjWeight: Parameter | null;
  readonly biasK: Parameter | null;
  readonly biasV: Parameter | null;
  readonly outProj: NonDynamicallyQuantizableLinear;
  forward(query: Tensor, key: Tensor, value: Tensor, options?: AttentionCallOptions): [Tensor, Tensor | null];
}

export interface TransformerLayerOptions extends Factory {
  dimFeedforward?: number;
  dropout?: number;
  /** 'relu' (default), 'gelu', a function of a tensor or a module (then a child, as in PyTorch). */
  activation?: 'relu' | 'gelu' | ((x: Tensor) => Tensor);
  layerNormEps?: number;
  batchFirst?: boolean;
  normFirst?: boolean;
}

export interface EncoderCallOptions {
  srcMask?: Tensor | null;
  srcKeyPaddingMask?: Tensor | null;
  isCausal?: boolean;
}

export interface DecoderCallOptions {
  tgtMask?: Tensor | null;
  memoryMask?: Tensor | null;
  tgtKeyPaddingMask?: Tensor | null;
  memoryKeyPaddingMask?: Tensor | null;
  tgtIsCausal?: boolean;
  memoryIsCausal?: boolean;
}

export declare class TransformerEncoderLayer extends Module {
  constructor(dModel: number, nhead: number, options?: TransformerLayerOptions);
  constructor(dModel: number, nhead: number, ...rest: any[]);
  readonly selfAttn: MultiheadAttention;
  readonly linear1: Linear;
  readonly linear2: Linear;
  readonly norm1: LayerNorm;
  readonly norm2: LayerNorm;
  readonly normFirst: boolean;
  forward(src: Tensor, options?: EncoderCallOptions): Tensor;
}

export declare class TransformerDecoderLayer extends Module {
  constructor(dModel: number, nhead: number, options?: TransformerLayerOptions);
  constructor(dModel: number, nhead: number, ...rest: any[]);
  readonly selfAttn: MultiheadAttention;
  readonly multiheadAttn: MultiheadAttention;
  readonly linear1: Linear;
  readonly linear2: Linear;
  readonly norm1: LayerNorm;
  readonly norm2: LayerNorm;
  readonly norm3: LayerNorm;
  readonly normFirst: boolean;
  forward(tgt: Tensor, memory: Tensor, options?: DecoderCallOptions): Tensor;
}

/** numLayers deep copies of the layer given (PyTorch's _get_clones); the layer itself stays the caller's. */
export declare class TransformerEncoder extends Module {
  constructor(encoderLayer: Module, numLayers: number, options?: { norm?: Module | null; enableNestedTensor?: boolean; maskCheck?: boolean });
  constructor(encoderLayer: Module, numLayers: number, ...rest: any[]);
  readonly layers: ModuleList;
  readonly numLayers: number;
  readonly norm: Module | null;
  /** PyTorch's mask argument is `mask` (srcMask reads the same). */
  forward(src: Tensor, options?: { mask?: Tensor | null; srcMask?: Tensor | null; srcKeyPaddingMask?: Tensor | null; isCausal?: boolean }): Tensor;
}

export declare class TransformerDecoder extends Module {
  constructor(decoderLayer: Module, numLayers: number, options?: { norm?: Module | null });
  constructor(decoderLayer: Module, numLayers: number, ...rest: any[]);
  readonly layers: ModuleList;
  readonly numLayers: number;
  readonly norm: Module | null;
  forward(tgt: Tensor, memory: Tensor, options?: DecoderCallOptions): Tensor;
}

export interface TransformerOptions extends TransformerLayerOptions {
  dModel?: number;
  nhead?: number;
  numEncoderLayers?: number;
  numDecoderLayers?: number;
  customEncoder?: Module | null;
  customDecoder?: Module | null;
}

export declare class Transformer extends Module {
  constructor(options?: TransformerOptions);
  constructor(dModel: number, nhead?: number, ...rest: any[]);
  readonly encoder: Module;
  readonly decoder: Module;
  readonly dModel: number;
  readonly nhead: number;
  forward(src: Tensor, tgt: Tensor, options?: EncoderCallOptions & DecoderCallOptions & { srcIsCausal?: boolean }): Tensor;
  /** [size, size] float32: -inf above the diagonal, 0 elsewhere. */
  static generateSquareSubsequentMask(size: number, options?: { dtype?: DTypeName }): Tensor;
}

export interface MultiHeadAttentionForwardOptions extends AttentionCallOptions {
  training?: boolean;
  useSeparateProjWeight?: boolean;
  qProjWeight?: Tensor | null;
  kProjWeight?: Tensor | null;
  vProjWeight?: Tensor | null;
  staticK?: Tensor | null;
  staticV?: Tensor | null;
}

/** The transformer members of wt.nn (NnNamespace extends this). */
export interface TransformerModules {
  readonly MultiheadAttention: typeof MultiheadAttention;
  readonly NonDynamicallyQuantizableLinear: typeof NonDynamicallyQuantizableLinear;
  readonly TransformerEncoderLayer: typeof TransformerEncoderLayer;
  readonly TransformerDecoderLayer: typeof TransformerDecoderLayer;
  readonly TransformerEncoder: typeof TransformerEncoder;
  readonly TransformerDecoder: typeof TransformerDecoder;
  readonly Transformer: typeof Transformer;
}

/** F.multi_head_attention_forward in sequence-first layout ([L, N, E] or [L, E]). */
export type MultiHeadAttentionForward = (query: Tensor, key: Tensor, value: Tensor, embedDimToCheck: number, numHeads: number,
  inProjWeight: Tensor | null, inProjBias: Tensor | null, biasK: Tensor | null, biasV: Tensor | null, addZeroAttn: boolean,
  dropoutP: number, outProjWeight: Tensor, outProjBias: Tensor | null, options?: MultiHeadAttentionForwardOptions) => [Tensor, Tensor | null];
