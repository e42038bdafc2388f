// The activations', regression losses' and dropout's declarations (js/activation.d.ts),
// checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { DropoutOptions, Tensor } from 'weft';

async function activations() {
  const wt = await init();
  const x: Tensor = wt.randn([2, 3, 4, 4]);
  const a: Tensor = wt.elu(x, 0.5, { inplace: true });
  const b: Tensor = wt.leakyRelu(x, 0.2);
  const c: Tensor = wt.hardtanh(x, -2, 2, { inplace: false });
  const d: Tensor = wt.relu6(x, { inplace: true });
  const e: Tensor = wt.softplus(x, 2, 10);
  const f: Tensor = wt.gelu(x, { approximate: 'tanh' });
  const g: Tensor = wt.silu(wt.mish(wt.hardswish(wt.hardsigmoid(wt.logSigmoid(x)))));
  const h: Tensor = wt.smoothL1Loss(x, b, { reduction: 'sum', beta: 0.5 });
  const i: Tensor = wt.huberLoss(x, b, 'none', 2);
  const j: Tensor = wt.l1Loss(x, b, { reduction: 'mean' });
  const opts: DropoutOptions = { p: 0.1, training: true };
  const k: Tensor = wt.dropout(x, 0.2, true);
  const l: Tensor = wt.dropout2d(x, opts);
  console.log(a, b, c, d, e, f, g, h, i, j, k, l);
  // @ts-expect-error approximate is 'none' or 'tanh'
  wt.gelu(x, { approximate: 'erf' });
  // @ts-expect-error reduction is 'none', 'mean' or 'sum'
  wt.l1Loss(x, b, { reduction: 'avg' });
}
void activations;
