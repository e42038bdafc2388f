// weft/models (js/models/index.d.ts): the builders, the classes per wt, their options and members.
import { init } from 'weft';
import type { Tensor } from 'weft';
import { models, mobilenetV2, resnet18, resnet34, resnet50 } from 'weft/models';
import type { MobileNetV2, Models, ResNet } from 'weft/models';

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
