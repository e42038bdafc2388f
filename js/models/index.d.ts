// weft/models (js/models/): torchvision 0.14's resnet18/34/50 and mobilenet_v2 over wt.nn, with
// torchvision's class names, children, state-dict keys and printed form.
import type { Weft, Tensor } from '../weft.js';
import type { Module, BatchNorm2d, Conv2d, Sequential } from '../nn.js';

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
  /** torchvision's _make_divisible(v, divisor, min_value). */
  makeDivisible(v: number, divisor: number, minValue?: number | null): number;
}

export declare function models(wt: Weft): Models;
export declare function resnet18(wt: Weft, options?: ResNetOptions): ResNet;
export declare function resnet34(wt: Weft, options?: ResNetOptions): ResNet;
export declare function resnet50(wt: Weft, options?: ResNetOptions): ResNet;
export declare function mobilenetV2(wt: Weft, options?: MobileNetV2Options): MobileNetV2;
