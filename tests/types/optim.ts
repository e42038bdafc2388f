// wt.optim's declarations (js/optim.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type {
  AdamOptions, LRScheduler, Optimizer, OptimizerStateDict, ParamGroup, Params, RemovableHandle, SGDOptions, Tensor,
} from 'weft';

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

// parameter groups, state dicts, schedulers, clipping, hooks (issue 23)
async function fineTune() {
  const wt = await init();
  const backbone: Tensor[] = [wt.randn([4, 3], { requiresGrad: false })];
  const head: Tensor = wt.zeros([3], { requiresGrad: true });
  const opt = new wt.optim.SGD([{ params: backbone, lr: 1e-4 }, { params: [head], tag: 'head' }], { lr: 1e-2, momentum: 0.9 });
  const group: ParamGroup<SGDOptions> = opt.paramGroups[0];
  group.lr = 1e-3;
  opt.addParamGroup({ params: wt.zeros([2], { requiresGrad: true }), weightDecay: 0.1 });
  const sd: OptimizerStateDict = opt.stateDict();
  opt.loadStateDict(sd);
  const first: Tensor | number | null | undefined = opt.state.get(head)?.momentumBuffer;
  const sched: LRScheduler = new wt.optim.lrScheduler.StepLR(opt, 10, { gamma: 0.5 });
  const cos = new wt.optim.lrScheduler.CosineAnnealingLR(opt, 50, { etaMin: 1e-5, lastEpoch: -1 });
  const multi = new wt.optim.lrScheduler.MultiStepLR(opt, [10, 20]);
  const linear = new wt.optim.lrScheduler.LinearLR(opt, { startFactor: 0.1, totalIters: 4 });
  const lambda = new wt.optim.lrScheduler.LambdaLR(opt, (e) => 0.9 ** e, { verbose: false });
  sched.step();
  const lrs: number[] = sched.getLastLr();
  const epoch: number = cos.lastEpoch + multi.baseLrs.length;
  linear.loadStateDict(lambda.stateDict());
  const total: Tensor = wt.nn.utils.clipGradNorm_(opt.params, 1.0, { normType: 'inf', errorIfNonfinite: true });
  wt.nn.utils.clipGradValue_(head, 0.5);
  const handle: RemovableHandle = head.registerHook((g) => g.mul(2));
  head.registerHook(() => undefined);
  handle.remove();
  const ps: Params<AdamOptions> = [{ params: [head], betas: [0.8, 0.9] }];
  new wt.optim.Adam(ps).dispose();
  // @ts-expect-error a group's params are tensors
  opt.addParamGroup({ params: [1, 2] });
  console.log(first, lrs, epoch, total, handle.id);
  opt.dispose();
}
void fineTune;
