// wt.nn's declarations (js/nn.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { Module, Parameter, Tensor } from 'weft';

async function nn() {
  const wt = await init();
  class Net extends wt.nn.Module {
    conv = new wt.nn.Conv2d(1, 8, 3, { padding: 1 });
    bn = new wt.nn.BatchNorm2d(8);
    head = new wt.nn.Sequential(new wt.nn.Flatten(), new wt.nn.Linear(8 * 4 * 4, 10));
    forward(x: Tensor): Tensor { return this.head(wt.relu(this.bn(this.conv(x)))); }
  }
  const model: Module = new Net();
  const sub: Module = model.getSubmodule("head.1");
  const out: Tensor = model(wt.randn(2, 1, 4, 4));
  const params: Parameter[] = model.parameters();
  const sd = model.stateDict();
  const { missingKeys, unexpectedKeys } = model.loadStateDict(new Map(Object.entries(sd)), { strict: false });
  model.train().eval().requiresGrad_(false).to('float64').to({ memoryFormat: 'channels_last' });
  model.zeroGrad({ setToNone: true });
  model.apply((m) => console.log(m.training));
  const names: string[] = model.namedParameters().map(([n]) => n);
  const p = new wt.nn.Parameter(wt.zeros(3));
  const p2: Parameter = wt.nn.Parameter(wt.zeros(2), false);
  p2.dispose();
  model.registerParameter('extra', p);
  model.registerBuffer('scale', wt.ones(1), { persistent: false });
  const seq = new wt.nn.Sequential({ a: new wt.nn.ReLU(), b: new wt.nn.Dropout(0.1) });
  const first: Module = seq.at(0);
  const list = new wt.nn.ModuleList([new wt.nn.Tanh()]);
  const dict = new wt.nn.ModuleDict({ act: new wt.nn.GELU({ approximate: 'tanh' }) });
  const loss: Tensor = new wt.nn.CrossEntropyLoss({ labelSmoothing: 0.1 })(out, wt.tensor([1, 2], { dtype: 'int64' }));
  const w: Tensor = wt.nn.init.kaimingUniform_(wt.empty(3, 4), Math.sqrt(5));
  wt.nn.init.xavierNormal_(w, wt.nn.init.calculateGain('relu'));
  const F = wt.nn.functional;
  const y: Tensor = F.relu(w);
  console.log(String(model), sub, missingKeys, unexpectedKeys, params.length, names, first, list.length, dict.keys(), loss, y, wt.nn.F === F);
  model.dispose();
}
console.log(nn);
