// weft/models (js/models/): torchvision 0.14's resnet18/34/50 and mobilenet_v2 over wt.nn, with
// torchvision's class names, children, state-dict keys and printed form; nanoGPT's GPT and
// llama2.c's Transformer (as Llama) with a KV cache and generate().
import type { Weft, Tensor } from '../weft.js';
import type { Module, BatchNorm2d, Conv2d, Sequential, Linear, ModuleDict, ModuleList, Parameter } from '../nn.js';

type ModuleClass = new (...args: any[]) => Module;

/** An image classifier: x [N, 3, H, W] (either memory format) to logits [N, numClasses]. */
interface Classifier extends Module {
  (x: Tensor): Tensor;
  forward(x: Tensor): Tensor;
}

export interface ResNetOptions {
  numClasses?: number;
  zeroInitResidual?: boolean;
  groups?: number;
  widthPerGroup?: number;
  replaceStrideWithDilation?: [boolean, boolean, boolean] | null;
  normLayer?: ModuleClass | null;
  /** weft downloads no weights: only null / undefined (load a state dict instead). */
  weights?: null;
  progress?: boolean;
}

export interface MobileNetV2Options {
  numClasses?: number;
  widthMult?: number;
  invertedResidualSetting?: [number, number, number, number][] | null;
  roundNearest?: number;
  block?: ModuleClass | null;
  normLayer?: ModuleClass | null;
  dropout?: number;
  weights?: null;
  progress?: boolean;
}

export interface BlockOptions {
  stride?: number;
  downsample?: Module | null;
  groups?: number;
  baseWidth?: number;
  dilation?: number;
  normLayer?: ModuleClass | null;
}

export declare class BasicBlock extends Module {
  static readonly expansion: number;
  constructor(inplanes: number, planes: number, options?: BlockOptions);
  constructor(inplanes: number, planes: number, ...rest: any[]);
  conv1: Conv2d; bn1: BatchNorm2d; relu: Module; conv2: Conv2d; bn2: BatchNorm2d;
  downsample: Sequential | null;
  stride: number;
  forward(x: Tensor): Tensor;
}

export declare class Bottleneck extends Module {
  static readonly expansion: number;
  constructor(inplanes: number, planes: number, options?: BlockOptions);
  constructor(inplanes: number, planes: number, ...rest: any[]);
  conv1: Conv2d; bn1: BatchNorm2d; conv2: Conv2d; bn2: BatchNorm2d; conv3: Conv2d; bn3: BatchNorm2d; relu: Module;
  downsample: Sequential | null;
  stride: number;
  forward(x: Tensor): Tensor;
}

export declare class ResNet extends Module implements Classifier {
  constructor(block: typeof BasicBlock | typeof Bottleneck | ModuleClass, layers: [number, number, number, number],
    options?: Omit<ResNetOptions, 'weights' | 'progress'>);
  conv1: Conv2d; bn1: BatchNorm2d; relu: Module; maxpool: Module;
  layer1: Sequential; layer2: Sequential; layer3: Sequential; layer4: Sequential;
  avgpool: Module; fc: Module;
  forward(x: Tensor): Tensor;
}

export declare class Conv2dNormActivation extends Sequential {
  constructor(inChannels: number, outChannels: number, options?: {
    kernelSize?: number | [number, number]; stride?: number | [number, number]; padding?: number | [number, number] | null;
    groups?: number; normLayer?: ModuleClass | null; activationLayer?: ModuleClass | null;
    dilation?: number | [number, number]; inplace?: boolean | null; bias?: boolean | null;
  });
  constructor(inChannels: number, outChannels: number, ...rest: any[]);
  readonly outChannels: number;
  forward(x: Tensor): Tensor;
}

export declare class InvertedResidual extends Module {
  constructor(inp: number, oup: number, stride: number, expandRatio: number, options?: { normLayer?: ModuleClass | null });
  constructor(inp: number, oup: number, stride: number, options: { expandRatio: number; normLayer?: ModuleClass | null });
  conv: Sequential;
  readonly stride: number;
  readonly useResConnect: boolean;
  readonly outChannels: number;
  forward(x: Tensor): Tensor;
}

export declare class MobileNetV2 extends Module implements Classifier {
  constructor(options?: Omit<MobileNetV2Options, 'weights' | 'progress'>);
  constructor(...args: any[]);
  features: Sequential;
  classifier: Sequential;
  readonly lastChannel: number;
  forward(x: Tensor): Tensor;
}

// ---- decoder-only transformers (issue 24) ----

/** nanoGPT's GPTConfig, camelCase; defaults are nanoGPT's (GPT-2 124M with vocab 50304). */
export interface GPTConfig {
  blockSize?: number; vocabSize?: number; nLayer?: number; nHead?: number; nEmbd?: number;
  dropout?: number; bias?: boolean;
}

/** llama2.c model.py's ModelArgs, camelCase; defaults are model.py's. */
export interface LlamaConfig {
  dim?: number; nLayers?: number; nHeads?: number; nKvHeads?: number | null; vocabSize?: number;
  hiddenDim?: number | null; multipleOf?: number; normEps?: number; maxSeqLen?: number; dropout?: number;
}

/** Ids: a Tensor [B, T] or [T] (int32 / int64), an array of ids, or an array of equal-length id arrays. */
type Ids = Tensor | number[] | number[][];

export interface GenerateOptions {
  maxNewTokens: number;
  /** 0: greedy (argmax); else softmax(logits / temperature) is sampled. Default 1. */
  temperature?: number;
  /** Sample among the topK largest logits only (nanoGPT's rule). */
  topK?: number | null;
  /** Seeds the sampler's own generator; without it, the seed is drawn from wt.manualSeed's. */
  seed?: number | bigint;
  /** Called per generated token: id is a number for one row, an array for several; return false to stop. */
  onToken?: (id: any, step: number) => boolean | void;
}

export interface ForwardOptions {
  /** The position of ids' first column (needs kvCache holding positions [0, startPos)). */
  startPos?: number;
  kvCache?: KVCache | null;
  /** [B, T] next ids (-1 ignored): forward returns [logits, loss] (cross entropy), as nanoGPT's. */
  targets?: Tensor | null;
}

/** Per layer a key and a value tensor [B, kvHeads, maxLen, headDim], written in place by forward(). */
export declare class KVCache {
  readonly batchSize: number;
  readonly maxLen: number;
  k: Tensor[];
  v: Tensor[];
  dispose(): void;
}

/** What GPT and Llama share (generate.js; not a runtime class). */
declare abstract class Generative extends Module {
  /** Logits [B, T, vocab] for every position (ids [B, T] or [T]). */
  forward(ids: Ids, options?: ForwardOptions & { targets?: null }): Tensor;
  forward(ids: Ids, options: ForwardOptions & { targets: Tensor }): [Tensor, Tensor];
  /** An empty KV cache for batchSize rows of up to maxLen positions; the caller disposes it. */
  kvCache(batchSize?: number, maxLen?: number): KVCache;
  /** ids followed by maxNewTokens generated ones, as a Tensor (int64) for a Tensor, as arrays for arrays. */
  generate(ids: Tensor, options: GenerateOptions): Tensor;
  generate(ids: number[], options: GenerateOptions): number[];
  generate(ids: number[][], options: GenerateOptions): number[][];
}

/** nanoGPT's LayerNorm: torch's with an optional bias (eps 1e-5). */
export declare class GPTLayerNorm extends Module {
  constructor(ndim: number, bias: boolean);
  weight: Parameter;
  bias: Parameter | null;
  forward(x: Tensor): Tensor;
}

export declare class CausalSelfAttention extends Module {
  c_attn: Linear; c_proj: Linear; attn_dropout: Module; resid_dropout: Module;
  n_head: number; n_embd: number; dropout: number;
}

export declare class GPTBlock extends Module {
  ln_1: GPTLayerNorm; attn: CausalSelfAttention; ln_2: GPTLayerNorm; mlp: Module & { c_fc: Linear; c_proj: Linear };
}

export declare class GPT extends Generative {
  constructor(config?: GPTConfig);
  readonly config: Readonly<Required<GPTConfig>>;
  transformer: ModuleDict & {
    wte: Module & { weight: Parameter }; wpe: Module & { weight: Parameter }; drop: Module;
    h: ModuleList; ln_f: GPTLayerNorm;
  };
  /** Its weight is transformer.wte.weight (tied). */
  lm_head: Linear;
  /** nanoGPT's get_num_params. */
  getNumParams(nonEmbedding?: boolean): number;
  /**
   * Also takes GPT-2 state dicts in Hugging Face's layout (Conv1D weights [in, out], found by c_attn.weight's
   * shape; attn.bias / attn.masked_bias ignored; lm_head.weight optional), transposed as from_pretrained does.
   */
  loadStateDict(stateDict: { [key: string]: Tensor } | Map<string, Tensor>,
    options?: { strict?: boolean; layout?: 'auto' | 'nanogpt' | 'conv1d' }): { missingKeys: string[]; unexpectedKeys: string[] };
  /** A GPT shaped by a state dict (nHead from config, else GPT-2's for the width), loaded from it. */
  static fromStateDict(stateDict: { [key: string]: Tensor } | Map<string, Tensor>, config?: GPTConfig): GPT;
}

export declare class RMSNorm extends Module {
  constructor(dim: number, eps: number);
  eps: number;
  weight: Parameter;
  forward(x: Tensor): Tensor;
}

export declare class LlamaAttention extends Module {
  wq: Linear; wk: Linear; wv: Linear; wo: Linear;
  n_kv_heads: number; n_local_heads: number; n_local_kv_heads: number; n_rep: number; head_dim: number;
}

export declare class FeedForward extends Module {
  w1: Linear; w2: Linear; w3: Linear;
  forward(x: Tensor): Tensor;
}

export declare class TransformerBlock extends Module {
  attention: LlamaAttention; feed_forward: FeedForward; attention_norm: RMSNorm; ffn_norm: RMSNorm; layer_id: number;
}

export declare class Llama extends Generative {
  constructor(config?: LlamaConfig);
  readonly params: Readonly<LlamaConfig>;
  tok_embeddings: Module & { weight: Parameter };
  layers: ModuleList;
  norm: RMSNorm;
  /** Its weight is tok_embeddings.weight (tied). */
  output: Linear;
  /** Non-persistent buffers [maxSeqLen, headDim / 2]: model.py's precompute_freqs_cis. */
  freqs_cos: Tensor;
  freqs_sin: Tensor;
}

/** The classes and builders made for one weft API object (once per object). */
export interface Models {
  readonly ResNet: typeof ResNet;
  readonly BasicBlock: typeof BasicBlock;
  readonly Bottleneck: typeof Bottleneck;
  readonly MobileNetV2: typeof MobileNetV2;
  readonly InvertedResidual: typeof InvertedResidual;
  readonly Conv2dNormActivation: typeof Conv2dNormActivation;
  resnet18(options?: ResNetOptions): ResNet;
  resnet34(options?: ResNetOptions): ResNet;
  resnet50(options?: ResNetOptions): ResNet;
  mobilenetV2(options?: MobileNetV2Options): MobileNetV2;
  readonly GPT: typeof GPT;
  readonly Block: typeof GPTBlock;
  readonly CausalSelfAttention: typeof CausalSelfAttention;
  readonly MLP: ModuleClass;
  readonly LayerNorm: typeof GPTLayerNorm;
  readonly Llama: typeof Llama;
  readonly Attention: typeof LlamaAttention;
  readonly FeedForward: typeof FeedForward;
  readonly TransformerBlock: typeof TransformerBlock;
  readonly RMSNorm: typeof RMSNorm;
  readonly KVCache: typeof KVCache;
  gpt(config?: GPTConfig): GPT;
  llama(config?: LlamaConfig): Llama;
  /** torchvision's _make_divisible(v, divisor, min_value). */
  makeDivisible(v: number, divisor: number, minValue?: number | null): number;
}

export declare function models(wt: Weft): Models;
export declare function resnet18(wt: Weft, options?: ResNetOptions): ResNet;
export declare function resnet34(wt: Weft, options?: ResNetOptions): ResNet;
export declare function resnet50(wt: Weft, options?: ResNetOptions): ResNet;
export declare function mobilenetV2(wt: Weft, options?: MobileNetV2Options): MobileNetV2;
export declare function gpt(wt: Weft, config?: GPTConfig): GPT;
export declare function llama(wt: Weft, config?: LlamaConfig): Llama;
