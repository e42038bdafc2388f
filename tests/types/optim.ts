// wt.optim's declarations (js/optim.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { AdamOptions, Optimizer, Tensor } from 'weft';

async function optim() {
  const wt = await init();
  const w: Tensor = wt.randn([3, 2], { requiresGrad: true });
  const b: Tensor = wt.zeros([2], { requiresGrad: true });
  // every factory takes requiresGrad
  const leaves: Tensor[] = [wt.zerosLike(w, { requiresGrad: true }), wt.fullLike(w, 1, { requiresGrad: true }),
    wt.linspace(0, 1, 3, { requiresGrad: true }), wt.eye(2, { requiresGrad: true }), wt.randLike(w, { requiresGrad: true })];
  leaves.forEach((t) => t.dispose());
  // backward's inputs=
  w.sum().backward(null, { inputs: [w], retainGraph: false });
  w.sum().backward(undefined, { inputs: b });
  const sgd = new wt.optim.SGD([w, b], { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 1e-4 });
  const opts: AdamOptions = { lr: 1e-3, betas: [0.9, 0.999], amsgrad: true };
  const adam: Optimizer<AdamOptions> = new wt.optim.AdamW([w, b], opts);
  sgd.zeroGrad();
  adam.zeroGrad({ setToNone: true });
  const loss: number = adam.step(() => 1);
  sgd.step();
  const lr: number = adam.defaults.lr;
  console.log(loss, lr, sgd.params.length);
  // @ts-expect-error betas is a pair
  new wt.optim.Adam([w], { betas: 0.9 });
  // @ts-expect-error SGD's lr is required
  new wt.optim.SGD([w], { momentum: 0.9 });
  // @ts-expect-error SGD takes no betas
  new wt.optim.SGD([w], { lr: 0.1, betas: [0.9, 0.99] });
  sgd.dispose();
  adam.dispose();
}
void optim;
