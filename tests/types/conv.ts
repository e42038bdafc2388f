// conv2d's declarations (js/conv.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { ConvPlan, Tensor } from 'weft';

async function convs() {
  const wt = await init();
  const x: Tensor = wt.rand([1, 4, 8, 8]);
  const w: Tensor = wt.rand([8, 4, 3, 3]);
  const a: Tensor = wt.conv2d(x, w);
  const b: Tensor = wt.conv2d(x, w, null, { padding: 'same' });
  const c: Tensor = wt.conv2d(x, w, wt.rand([8]), { stride: [2, 1], padding: [1, 0], dilation: 1, groups: 1 });
  const plan: ConvPlan = wt.explain('conv2d', x.contiguous({ memoryFormat: 'channels_last' }), w);
  const alg: string = plan.algorithm;
  console.log(a, b, c, alg, plan.gemm?.m);
}
void convs;
