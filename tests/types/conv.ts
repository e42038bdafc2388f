// conv2d's, conv1d's and convTranspose2d's declarations (js/conv.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { ConvPlan, ConvTransposePlan, Tensor } from 'weft';

async function convs() {
  const wt = await init();
  const x: Tensor = wt.rand([1, 4, 8, 8]);
  const w: Tensor = wt.rand([8, 4, 3, 3]);
  const a: Tensor = wt.conv2d(x, w);
  const b: Tensor = wt.conv2d(x, w, null, { padding: 'same' });
  const c: Tensor = wt.conv2d(x, w, wt.rand([8]), { stride: [2, 1], padding: [1, 0], dilation: 1, groups: 1 });
  const plan: ConvPlan = wt.explain('conv2d', x.contiguous({ memoryFormat: 'channels_last' }), w);
  const alg: string = plan.algorithm;
  const d: Tensor = wt.conv1d(wt.rand([2, 4, 9]), wt.rand([6, 2, 3]), null, { stride: 2, padding: 'valid', groups: 2 });
  const e: Tensor = wt.convTranspose2d(x, wt.rand([4, 3, 4, 4]), wt.rand([3]),
    { stride: 2, padding: 1, outputPadding: [1, 0], groups: 1, dilation: 1 });
  const f: Tensor = wt.convTranspose1d(wt.rand([2, 4, 9]), wt.rand([4, 3, 3]), null, { stride: 2, outputPadding: 1 });
  console.log(f);
  const tplan: ConvTransposePlan = wt.explain('conv_transpose2d', x, wt.rand([4, 3, 4, 4]));
  const outPad: number[] = tplan.output_padding;
  console.log(a, b, c, d, e, alg, plan.gemm?.m, tplan.gemm.k, outPad);
}
void convs;
