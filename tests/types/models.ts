// weft/models (js/models/index.d.ts): the builders, the classes per wt, their options and members.
import { init } from 'weft';
import type { Tensor } from 'weft';
import { gpt, llama, models, mobilenetV2, resnet18, resnet34, resnet50 } from 'weft/models';
import type { GPT, KVCache, Llama, MobileNetV2, Models, ResNet } from 'weft/models';

export async function modelsTour(): Promise<number[]> {
  const wt = await init();
  const r: ResNet = resnet18(wt, { numClasses: 10, zeroInitResidual: true });
  const m: MobileNetV2 = mobilenetV2(wt, { widthMult: 0.25, numClasses: 10, dropout: 0 });
  const all: Models = models(wt);
  const deeper = [resnet34(wt), resnet50(wt, { replaceStrideWithDilation: [false, true, true] }), all.resnet18()];
  const custom = new all.ResNet(all.Bottleneck, [1, 1, 1, 1], { numClasses: 5, widthPerGroup: 128 });
  const block = new all.InvertedResidual(16, 16, 1, 6);
  const cna = new all.Conv2dNormActivation(3, 8, { stride: 2, activationLayer: wt.nn.ReLU6 });
  const basic = new all.BasicBlock(64, 64);
  r.eval().to({ memoryFormat: 'channels_last' });
  const x: Tensor = wt.randn([1, 3, 64, 64]);
  const y: Tensor = wt.noGrad(() => r(x));
  const z: Tensor = m.forward(x);
  const shapes = [r.fc, r.layer4.at(0), m.features.length, m.classifier.at(1), m.lastChannel, block.useResConnect,
    cna.outChannels, basic.conv1.weight.shape, basic.downsample, all.makeDivisible(32 * 0.25, 8), custom.layer1.length,
    all.BasicBlock.expansion, all.MobileNetV2.name, all.Conv2dNormActivation.name];
  for (const t of [x, z]) t.dispose();
  for (const d of [...deeper, custom, r, m]) d.dispose();
  return [shapes.length, ...y.shape];
}

// issue 24: nanoGPT's GPT and llama2.c's Transformer, with generate()
export async function generationTour(): Promise<number[]> {
  const wt = await init();
  const all: Models = models(wt);
  const g: GPT = gpt(wt, { blockSize: 16, vocabSize: 11, nLayer: 1, nHead: 2, nEmbd: 8, bias: false });
  const l: Llama = llama(wt, { dim: 16, nLayers: 1, nHeads: 4, nKvHeads: 2, vocabSize: 13, maxSeqLen: 16, multipleOf: 8 });
  g.eval();
  const ids: number[] = g.generate([1, 2], { maxNewTokens: 3, temperature: 0.8, topK: 5, seed: 1, onToken: (id, step) => step < 9 });
  const rows: number[][] = l.generate([[1, 2], [3, 4]], { maxNewTokens: 2, temperature: 0 });
  const t: Tensor = wt.tensor([[1, 2, 3]], { dtype: 'int64' });
  const out: Tensor = l.generate(t, { maxNewTokens: 2 });
  const cache: KVCache = l.kvCache(1, 8);
  const logits: Tensor = wt.noGrad(() => l.forward([[1, 2]], { startPos: 0, kvCache: cache }));
  const [lg, loss]: [Tensor, Tensor] = g.forward(t, { targets: t });
  const sd = g.stateDict();
  const g2: GPT = all.GPT.fromStateDict(sd, { nHead: 2 });
  const r = g2.loadStateDict(sd, { layout: 'auto', strict: true });
  const sizes = [g.config.nEmbd, g.getNumParams(), l.layers.length, l.freqs_cos.shape[0], cache.k.length, r.missingKeys.length,
    g.transformer.h.length, g.lm_head.weight.shape[0], l.output.weight.shape[0], ids.length, rows.length];
  cache.dispose();
  for (const x of [t, out, logits, lg, loss, ...Object.values(sd)]) x.dispose();
  for (const m of [g, g2, l]) m.dispose();
  return sizes;
}
