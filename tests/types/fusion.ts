// wt.nn.utils' fusion declarations (js/fusion.d.ts) and the fused conv op, checked by tsc --noEmit.
import { init } from 'weft';
import type { FusableBatchNorm, FusableConv, Tensor } from 'weft';

async function fusion() {
  const wt = await init();
  const w: Tensor = wt.randn([8, 3, 3, 3]);
  const rm = wt.zeros([8]), rv = wt.ones([8]);
  const [fw, fb]: [Tensor, Tensor] = wt.nn.utils.fuseConvBnWeights(w, null, rm, rv, 1e-5, null, null);
  const [tw] = wt.nn.utils.fuseConvBnWeights(wt.randn([3, 8, 2, 2]), null, rm, rv, 1e-5, null, null, { transpose: true });
  const conv: FusableConv = { weight: w, bias: null, stride: [1, 1], padding: [1, 1], dilation: [1, 1], groups: 1, training: false };
  const bn: FusableBatchNorm = { runningMean: rm, runningVar: rv, eps: 1e-5, weight: null, bias: null, training: false };
  const fused: FusableConv = wt.nn.utils.fuseConvBnEval(conv, bn);
  // conv + bias + relu6 + a residual in one op
  const x = wt.randn([1, 3, 8, 8]);
  const y: Tensor = wt._conv2dFused(x, fw, fb, [1, 1], [1, 1], [1, 1], 1, 'relu6', wt.zeros([1, 8, 8, 8]));
  [w, rm, rv, fw, fb, tw, fused.weight, x, y].forEach((t) => t.dispose());
}
void fusion;
