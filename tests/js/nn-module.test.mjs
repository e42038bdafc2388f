// wt.nn's module system (js/nn/module.js, containers.js): registration by
// assignment (PyTorch's __setattr__/__delattr__), registerParameter /
// registerBuffer / addModule and their errors, tied weights, the call form,
// train/eval, requiresGrad_, zeroGrad, to() in place (an optimizer keeps
// working), apply, dispose, the containers, constructor argument checks and
// nothing leaked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, counts, throwsWeft } from './helpers.mjs';

const names = (pairs) => pairs.map(([n]) => n);

test('assignment registers in order; reassigning and deleting behave as in PyTorch', async () => {
  const wt = await init({ variant: 'simd' });
  const nn = wt.nn;
  const before = counts(wt);
  class Net extends nn.Module {
    constructor() {
      super();
      this.b = new nn.Linear(2, 3);
      this.a = new nn.Parameter(wt.zeros(2));
      this.registerBuffer('stat', wt.ones(3));
      this.registerBuffer('scratch', wt.zeros(1), { persistent: false });
      this.c = new nn.ReLU();
      this.note = 'plain';
    }
    forward(x) { return this.c(this.b(x.add(this.a))).mul(this.stat); }
  }
  const net = new Net();
  assert.ok(net instanceof nn.Module && typeof net === 'function');
  assert.deepEqual(names(net.namedParameters()), ['a', 'b.weight', 'b.bias']);
  assert.deepEqual(names(net.namedBuffers()), ['stat', 'scratch']);
  assert.deepEqual(names(net.namedChildren()), ['b', 'c']);
  assert.deepEqual(names(net.namedModules()), ['', 'b', 'c']);
  assert.deepEqual(net.parameters({ recurse: false }).length, 1);
  const sd = net.stateDict();
  assert.deepEqual(Object.keys(sd), ['a', 'stat', 'b.weight', 'b.bias']);
  assert.ok(!sd.a.requiresGrad && sd.a.isLeaf, 'detached');
  for (const t of Object.values(sd)) t.dispose();
  assert.equal(net.note, 'plain');
  assert.ok(net.stat instanceof wt.Tensor, 'a buffer reads back as an attribute');

  // the call form runs forward; the result requires grad through the parameters
  wt.tidy(() => {
    const y = net(wt.ones(4, 2));
    assert.deepEqual(y.shape, [4, 3]);
    assert.ok(y.requiresGrad);
  });

  // reassigning keeps the position; a Tensor cannot replace a Parameter or a Module
  const b = net.b;
  net.b = new nn.Linear(2, 3, { bias: false });
  assert.deepEqual(names(net.namedParameters()), ['a', 'b.weight']);
  b.dispose();
  throwsWeft(() => wt.tidy(() => { net.a = wt.zeros(2); }), 'TypeError', /^cannot assign 'Tensor' as parameter 'a' \(wt\.nn\.Parameter or null expected\)$/);
  throwsWeft(() => { net.c = 3; }, 'TypeError', /^cannot assign 'number' as child module 'c' \(wt\.nn\.Module or null expected\)$/);
  throwsWeft(() => { net.stat = 'x'; }, 'TypeError', /^cannot assign 'string' as buffer 'stat' \(wt\.Tensor or null expected\)$/);
  net.c = null; // PyTorch keeps the name with None
  assert.deepEqual(names(net.namedChildren()), ['b']);
  assert.match(String(net), /\(c\): None/);
  const a = net.a;
  net.a = null;
  assert.deepEqual(names(net.namedParameters()), ['b.weight']);
  a.dispose();
  delete net.c;
  const stat = net.stat;
  delete net.stat; // let go of: disposed by the caller here (no tidy or training step owns it)
  stat.dispose();
  assert.equal(net.c, undefined);
  assert.deepEqual(names(net.namedBuffers()), ['scratch']);
  net.c = new nn.Tanh(); // registered again, at the end
  assert.deepEqual(names(net.namedChildren()), ['b', 'c']);

  // registration errors (PyTorch's words)
  throwsWeft(() => net.registerParameter('x.y', null), 'InvalidArgument', /^parameter name can't contain "\.", got: x\.y$/);
  throwsWeft(() => net.registerBuffer('', null), 'InvalidArgument', /^buffer name can't be empty string ""$/);
  throwsWeft(() => net.registerParameter('note', null), 'InvalidArgument', /^attribute 'note' already exists$/);
  throwsWeft(() => net.registerParameter('forward', null), 'InvalidArgument', /^attribute 'forward' already exists$/);
  throwsWeft(() => wt.tidy(() => net.registerParameter('w', wt.zeros(1))), 'TypeError', /^cannot assign 'Tensor' object to parameter 'w' \(wt\.nn\.Parameter or null required\)$/);
  throwsWeft(() => net.addModule('m', {}), 'TypeError', /^object is not a Module subclass$/);
  throwsWeft(() => wt.tidy(() => net.registerBuffer('q', wt.zeros(1), { persistant: false })), 'TypeError', /did you mean persistent/);
  // a buffer reassigned inside a tidy: the old one is the scope's again
  const old = net.scratch;
  wt.tidy(() => { net.scratch = wt.ones(1); });
  assert.ok(old.isDisposed && !net.scratch.isDisposed);
  // new wt.nn.Parameter(t) takes t over
  const t = wt.zeros(2);
  const p = new nn.Parameter(t);
  throwsWeft(() => t.shape, 'InvalidArgument', /took t over: use the Parameter/);
  p.dispose();
  net.dispose();
  assert.deepEqual(counts(wt), before);
});

test('tied weights: one parameter, two state-dict keys; loadStateDict copies in place', async () => {
  const wt = await init({ variant: 'simd' });
  const nn = wt.nn;
  const before = counts(wt);
  let untied = null;
  class LM extends nn.Module {
    constructor() {
      super();
      this.wte = new nn.Linear(4, 6, { bias: false });
      this.lmHead = new nn.Linear(6, 4, { bias: false });
      untied = this.lmHead.weight; // (an attribute would register it)
      this.lmHead.weight = this.wte.weight; // nanoGPT's tie (its lm_head is Linear(n_embd, vocab), here the same shape)
    }
    forward(x) { return x; }
  }
  const lm = new LM();
  assert.equal(lm.parameters().length, 1);
  const sd = lm.stateDict();
  assert.deepEqual(Object.keys(sd), ['wte.weight', 'lmHead.weight']);
  const w = lm.wte.weight;
  const fresh = { 'wte.weight': wt.full([6, 4], 0.5), 'lmHead.weight': wt.full([6, 4], 0.5) };
  assert.deepEqual(lm.loadStateDict(new Map(Object.entries(fresh))), { missingKeys: [], unexpectedKeys: [] });
  assert.equal(lm.wte.weight, w);
  assert.ok(w.requiresGrad && w.isLeaf);
  assert.deepEqual(Array.from(w.data()).slice(0, 2), [0.5, 0.5]);
  // not a state dict; a non-tensor entry
  throwsWeft(() => lm.loadStateDict([1, 2]), 'TypeError', /^Expected state_dict to be an object or a Map, got an array\.$/);
  throwsWeft(() => lm.loadStateDict({ ...fresh, 'wte.weight': 3 }), 'InvalidArgument',
    /While copying the parameter named "wte\.weight", expected a Tensor from checkpoint but received a number/);
  for (const t of [...Object.values(sd), ...Object.values(fresh), untied]) t.dispose();
  lm.dispose();
  assert.deepEqual(counts(wt), before);
});

test('train/eval, requiresGrad_, zeroGrad, apply, and to() keeping the Parameter objects an optimizer holds', async () => {
  const wt = await init({ variant: 'simd' });
  const nn = wt.nn;
  const before = counts(wt);
  wt.manualSeed(0);
  const model = new nn.Sequential(new nn.Conv2d(2, 3, 3), new nn.ReLU(), new nn.Flatten(), new nn.Linear(12, 2));
  assert.equal(model.training, true);
  model.eval();
  assert.ok(model.modules().every((m) => m.training === false));
  model.train();
  throwsWeft(() => model.train('yes'), 'TypeError', /^training mode is expected to be boolean$/);
  const seen = [];
  assert.equal(model.apply((m) => seen.push(m.constructor.name)), model);
  assert.deepEqual(seen, ['Conv2d', 'ReLU', 'Flatten', 'Linear', 'Sequential']);

  const params = model.parameters();
  const opt = new wt.optim.SGD(params, { lr: 0.1, momentum: 0.9 });
  const x = wt.randn(2, 2, 4, 4);
  const step = (input) => {
    opt.zeroGrad();
    wt.tidy(() => model(input).pow(2).mean().backward());
    opt.step();
  };
  step(x);
  model.to({ memoryFormat: 'channels_last' });
  assert.ok(model.at(0).weight.isContiguous('channels_last'));
  model.to('float64');
  assert.deepEqual(model.parameters(), params, 'the same Parameter objects');
  for (const p of params) {
    assert.equal(p.dtype, 'float64');
    assert.ok(p.requiresGrad && p.isLeaf);
    assert.equal(wt.tidy(() => p.grad.dtype), 'float64', 'the gradient converted too');
  }
  const x64 = x.double();
  step(x64); // the optimizer still updates the model's parameters
  throwsWeft(() => model.to('int64'), 'TypeError', /^nn\.Module\.to only accepts floating point dtypes, but got desired dtype=int64$/);
  throwsWeft(() => model.to({ memoryformat: 'channels_last' }), 'TypeError', /did you mean memoryFormat/);

  model.zeroGrad();
  assert.ok(wt.tidy(() => params.every((p) => p.grad.abs().sum().item() === 0)), 'zeroed in place');
  model.zeroGrad({ setToNone: true });
  assert.ok(params.every((p) => p.grad === null));
  model.requiresGrad_(false);
  assert.ok(params.every((p) => !p.requiresGrad));
  model.at(-1).requiresGrad_(true); // freezing all but the head
  assert.deepEqual(params.map((p) => p.requiresGrad), [false, false, true, true]);

  opt.dispose();
  model.dispose();
  for (const t of [x, x64]) t.dispose();
  assert.deepEqual(counts(wt), before);
});

test('Sequential, ModuleList and ModuleDict', async () => {
  const wt = await init({ variant: 'simd' });
  const nn = wt.nn;
  const before = counts(wt);
  const seq = new nn.Sequential({ fc: new nn.Linear(3, 4), act: new nn.ReLU() });
  seq.append(new nn.Linear(4, 2));
  assert.deepEqual(names(seq.namedChildren()), ['fc', 'act', '2']);
  assert.equal(seq.length, 3);
  assert.equal(seq.at(-1), seq['2']);
  assert.equal(seq.at(0), seq.fc);
  throwsWeft(() => seq.at(3), 'IndexError', /^index 3 is out of range$/);
  const head = seq.slice(1);
  assert.deepEqual(names(head.namedChildren()), ['act', '2']);
  assert.equal(head.at(1), seq.at(2), 'a slice shares the modules');
  assert.deepEqual([...seq].map((m) => m.constructor.name), ['Linear', 'ReLU', 'Linear']);
  wt.tidy(() => assert.deepEqual(seq(wt.ones(5, 3)).shape, [5, 2]));

  const list = new nn.ModuleList([new nn.ReLU(), new nn.Tanh()]);
  list.insert(1, new nn.Sigmoid());
  list.extend([new nn.GELU()]);
  assert.deepEqual(list.items?.() ?? names(list.namedChildren()), ['0', '1', '2', '3']);
  assert.deepEqual([...list].map((m) => m.constructor.name), ['ReLU', 'Sigmoid', 'Tanh', 'GELU']);
  assert.equal(list.pop(0).constructor.name, 'ReLU');
  assert.deepEqual(names(list.namedChildren()), ['0', '1', '2'], 'renumbered');
  assert.equal(String(list.slice(0, 1)), 'ModuleList(\n  (0): Sigmoid()\n)');

  const dict = new nn.ModuleDict({ relu: new nn.ReLU() });
  dict.set('proj', new nn.Linear(2, 2));
  dict.update([['tanh', new nn.Tanh()]]);
  assert.deepEqual(dict.keys(), ['relu', 'proj', 'tanh']);
  assert.deepEqual([...dict], ['relu', 'proj', 'tanh']);
  assert.ok(dict.has('proj') && !dict.has('x'));
  assert.equal(dict.pop('relu').constructor.name, 'ReLU');
  assert.equal(dict.length, 2);
  assert.deepEqual(names(dict.namedParameters()), ['proj.weight', 'proj.bias']);
  throwsWeft(() => dict.set('keys', new nn.ReLU()), 'InvalidArgument', /^attribute 'keys' already exists$/);

  for (const m of [seq, list, dict]) m.dispose();
  assert.deepEqual(counts(wt), before);
});

test('constructor arguments: positional or options, checked with PyTorch words', async () => {
  const wt = await init({ variant: 'simd' });
  const nn = wt.nn;
  const a = new nn.Conv2d(1, 8, 3, 2, 1, 1, 1, false);
  const b = new nn.Conv2d(1, 8, 3, { stride: 2, padding: 1, bias: false });
  assert.equal(String(a), String(b));
  assert.equal(String(a), 'Conv2d(1, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)');
  throwsWeft(() => new nn.Linear(3), 'TypeError', /^Linear\(\) missing required argument 'outFeatures'$/);
  throwsWeft(() => new nn.Linear(3, 4, { biass: false }), 'TypeError', /^Linear\(\) got an unexpected option 'biass' \(did you mean bias\?\)$/);
  throwsWeft(() => new nn.Linear(3, 4, true, { bias: false }), 'TypeError', /^Linear\(\) got multiple values for argument 'bias'$/);
  throwsWeft(() => new nn.Linear(3.5, 4), 'TypeError', /^Linear\(\): argument 'inFeatures' must be an integer, not the number 3\.5$/);
  throwsWeft(() => new nn.Conv2d(3, 4, 3, { groups: 2 }), 'InvalidArgument', /^in_channels must be divisible by groups$/);
  throwsWeft(() => new nn.Conv2d(2, 4, 3, { padding: 'full' }), 'InvalidArgument', /^Invalid padding string 'full', should be one of \['valid', 'same'\]$/);
  throwsWeft(() => new nn.Conv2d(2, 4, 3, { padding: 'same', stride: 2 }), 'InvalidArgument', /^padding='same' is not supported for strided convolutions$/);
  throwsWeft(() => new nn.Conv2d(2, 4, 3, { paddingMode: 'mirror' }), 'InvalidArgument', /^padding_mode must be one of/);
  throwsWeft(() => new nn.ConvTranspose2d(2, 4, 3, { paddingMode: 'reflect' }), 'InvalidArgument', /^Only "zeros" padding mode is supported for ConvTranspose2d$/);
  throwsWeft(() => new nn.Dropout(1.5), 'InvalidArgument', /^dropout probability has to be between 0 and 1, but got 1\.5$/);
  throwsWeft(() => new nn.GroupNorm(3, 4), 'InvalidArgument', /^num_channels must be divisible by num_groups$/);
  throwsWeft(() => new nn.Module()(1), 'NotImplemented', /^Module \[Module\] is missing the required "forward" function$/);
  throwsWeft(() => new nn.Parameter([1, 2]), 'TypeError', /^Parameter\(\): argument 'data' must be a Tensor, not an array$/);
  // an integer Parameter cannot require grad (PyTorch's message, from autograd)
  const ints = wt.tensor([1, 2], { dtype: 'int64' });
  assert.throws(() => new nn.Parameter(ints), /floating point/);
  assert.ok(!ints.isDisposed, 'a failed Parameter() leaves its data alone');
  const p = new nn.Parameter(ints, false);
  assert.equal(p.requiresGrad, false);
  assert.match(String(p), /^Parameter containing:\ntensor\(\[1, 2\]\)$/);
  const q = nn.Parameter(wt.zeros(2)); // PyTorch's spelling, without new
  assert.ok(q instanceof nn.Parameter && q instanceof wt.Tensor);
  assert.equal(String(q), 'Parameter containing:\ntensor([0., 0.], requires_grad=True)');
  q.dispose();
  const net = new nn.Sequential({ block: new nn.Sequential(new nn.Linear(1, 1)) });
  assert.equal(net.getSubmodule('block.0'), net.block.at(0));
  assert.equal(net.getSubmodule(''), net);
  throwsWeft(() => net.getSubmodule('block.1'), 'InvalidArgument', /^Sequential has no attribute `1`$/);
  throwsWeft(() => new nn.ModuleList([])(1), 'NotImplemented', /^Module \[ModuleList\] is missing the required "forward" function$/);
  net.dispose();
  for (const m of [a, b]) m.dispose();
  p.dispose();
});

test('wt.nn.functional aliases the wt functions present', async () => {
  const wt = await init({ variant: 'simd' });
  const F = wt.nn.functional;
  assert.equal(wt.nn.F, F);
  for (const name of ['conv2d', 'linear', 'relu', 'softmax', 'logSoftmax', 'crossEntropy', 'mseLoss', 'nllLoss',
    'binaryCrossEntropyWithLogits', 'maxPool2d', 'avgPool2d', 'adaptiveAvgPool2d', 'gelu', 'sigmoid', 'tanh']) {
    assert.equal(F[name], wt[name], name);
  }
  for (const name of ['batchNorm', 'groupNorm', 'layerNorm', 'conv1d', 'convTranspose2d', 'interpolate', 'pad', 'dropout',
    'dropout2d', 'elu', 'silu', 'mish', 'hardswish', 'hardsigmoid', 'hardtanh', 'relu6', 'leakyRelu', 'softplus', 'l1Loss',
    'smoothL1Loss', 'huberLoss']) {
    assert.equal(F[name], wt[name], `${name}: present exactly when wt has it`);
  }
  if (wt.logSigmoid) assert.equal(F.logsigmoid, wt.logSigmoid);
  if (wt.interpolate) assert.equal(F.upsample, wt.interpolate);
});
