// weft/models: torchvision's resnet18/34/50 and mobilenet_v2 over wt.nn
// (issue 23). Every export takes the weft API object first:
//   import { resnet18 } from 'weft/models';
//   const model = resnet18(wt, { numClasses: 1000 });
//   model.loadStateDict(wt.load(bytes));   // torch.save(torchvision_model.state_dict())
// models(wt) gives the classes made for that wt (ResNet, BasicBlock,
// Bottleneck, MobileNetV2, InvertedResidual, Conv2dNormActivation; GPT and its
// blocks, Llama and its blocks, KVCache), built once per API object.
// Issue 24 adds decoder-only transformers with generate():
//   const model = gpt(wt, { blockSize: 256, vocabSize: 65, nLayer: 6, nHead: 6, nEmbd: 384 });   // nanoGPT
//   const llm = llama(wt, { dim: 288, nLayers: 6, nHeads: 6, vocabSize: 32000, maxSeqLen: 256 }); // llama2.c
import { makeCommon } from './common.js';
import { makeResnet } from './resnet.js';
import { makeMobilenet } from './mobilenet.js';
import { makeGeneration } from './generate.js';
import { makeGpt } from './gpt.js';
import { makeLlama } from './llama.js';

const made = new WeakMap();

export function models(wt) {
  if (!wt || typeof wt !== 'object' || !wt.nn || typeof wt.nn.Module !== 'function') {
    throw new TypeError('weft/models: the first argument must be the weft API object (from `await init()`)');
  }
  let m = made.get(wt);
  if (!m) {
    const common = makeCommon(wt);
    const gen = makeGeneration(wt, common);
    m = Object.freeze({
      ...makeResnet(wt, common), ...makeMobilenet(wt, common), ...makeGpt(wt, common, gen), ...makeLlama(wt, common, gen),
      KVCache: gen.KVCache,
    });
    made.set(wt, m);
  }
  return m;
}

export const resnet18 = (wt, options) => models(wt).resnet18(options);
export const resnet34 = (wt, options) => models(wt).resnet34(options);
export const resnet50 = (wt, options) => models(wt).resnet50(options);
export const mobilenetV2 = (wt, options) => models(wt).mobilenetV2(options);
export const gpt = (wt, config) => models(wt).gpt(config);
export const llama = (wt, config) => models(wt).llama(config);
