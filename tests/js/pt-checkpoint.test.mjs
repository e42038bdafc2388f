// PyTorch checkpoints in and out (js/checkpoint.js, js/pickle.js, js/zip.js):
// the torch.save files of tests/fixtures/gen_pt_fixtures.py read as PyTorch
// 1.13 read them (values, dtypes, shapes, strides, offsets, shared storages,
// containers), on every variant; what wt.save writes, byte for byte, with
// what torch.load found in it; the adversarial files, each a WeftError that
// leaves nothing allocated; every kind of input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { VARIANTS, counts, init, noLeaks, throwsWeft } from './helpers.mjs';
import { weftObjects } from '../fixtures/pt_weft_objects.mjs';
import { repackZip, writeZip } from '../../js/zip.js';

const dir = new URL('../fixtures/pt/', import.meta.url);
const read = (rel) => new Uint8Array(readFileSync(new URL(rel, dir)));
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8'));
const badExpected = JSON.parse(readFileSync(new URL('bad/expected.json', dir), 'utf8'));
const weftExpected = JSON.parse(readFileSync(new URL('weft/expected.json', dir), 'utf8'));

// Every tensor in a loaded value (dicts' attributes included).
function tensorsIn(wt, v, out = new Set()) {
  if (v instanceof wt.Tensor) out.add(v);
  else if (Array.isArray(v)) v.forEach((x) => tensorsIn(wt, x, out));
  else if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
    for (const k of Reflect.ownKeys(v)) tensorsIn(wt, v[k], out);
  }
  return out;
}
const disposeAll = (wt, v) => tensorsIn(wt, v).forEach((t) => t.dispose());

const SPECIAL = { nan: NaN, inf: Infinity, '-inf': -Infinity, '-0': -0 };
const wantNumber = (w) => (typeof w === 'object' && w !== null && 'float' in w ? SPECIAL[w.float] : w);

function tensorProblems(wt, got, want, where, storages) {
  if (!(got instanceof wt.Tensor)) return [`${where}: expected a tensor, got ${typeof got}`];
  const p = [];
  const eq = (what, a, b) => { if (JSON.stringify(a) !== JSON.stringify(b)) p.push(`${where}: ${what} ${JSON.stringify(a)}, want ${JSON.stringify(b)}`); };
  eq('dtype', got.dtype, want.dtype);
  eq('shape', got.shape, want.shape);
  eq('stride', got.stride(), want.stride);
  eq('requiresGrad', got.requiresGrad, want.requires_grad);
  if (want.device === 'meta') {
    eq('device', got.device, 'meta');
    return p;
  }
  eq('offset', got.storageOffset(), want.offset);
  const data = [...got.data()];
  const values = want.dtype === 'int64' ? data.map(String) : want.dtype === 'bool' ? data.map((x) => x !== 0) : data;
  const wanted = want.values.map(wantNumber);
  if (values.length !== wanted.length || values.some((x, i) => !Object.is(x, wanted[i]))) {
    p.push(`${where}: values ${values.slice(0, 8)}, want ${wanted.slice(0, 8)}`);
  }
  if (got.numel() > 0) storages.push([where, want.storage, got.dataPtr() - got.storageOffset() * got.elementSize()]);
  return p;
}

// Problems of a loaded value against the generator's description of what
// PyTorch loaded (dicts in JS key order: array-index keys first).
function problems(wt, got, want, where = 'value', storages = []) {
  if (want === null || typeof want !== 'object') {
    return Object.is(got, want) ? [] : [`${where}: ${String(got)}, want ${String(want)}`];
  }
  if ('tensor' in want) return tensorProblems(wt, got, want.tensor, where, storages);
  if ('float' in want) return Object.is(got, wantNumber(want)) ? [] : [`${where}: ${got}, want ${want.float}`];
  if ('int' in want) return got === BigInt(want.int) ? [] : [`${where}: ${got}, want ${want.int}n`];
  if ('dtype' in want) return got === want.dtype ? [] : [`${where}: ${got}, want '${want.dtype}'`];
  if ('bytes' in want) {
    return got instanceof Uint8Array && Buffer.from(got).toString('hex') === want.bytes ? [] : [`${where}: bytes differ`];
  }
  const items = want.list ?? want.tuple;
  if (items) {
    if (!Array.isArray(got) || got.length !== items.length) return [`${where}: expected an array of ${items.length}`];
    return items.flatMap((w, i) => problems(wt, got[i], w, `${where}[${i}]`, storages));
  }
  if (got === null || typeof got !== 'object' || Object.getPrototypeOf(got) !== null) return [`${where}: expected an object without prototype`];
  const order = Object.create(null);
  for (const [k, v] of want.dict) order[String(k)] = v;
  const keys = Object.keys(got);
  if (JSON.stringify(keys) !== JSON.stringify(Object.keys(order))) return [`${where}: keys ${keys}, want ${Object.keys(order)}`];
  const p = keys.flatMap((k) => problems(wt, got[k], order[k], `${where}[${JSON.stringify(k)}]`, storages));
  if (want.metadata) p.push(...problems(wt, got._metadata, want.metadata, `${where}._metadata`, storages));
  return p;
}

// Tensors PyTorch saw on one storage share one in weft, and only those.
function sharingProblems(storages) {
  const p = [];
  for (const [wa, la, aa] of storages) {
    for (const [wb, lb, ab] of storages) {
      if ((la === lb) !== (aa === ab)) p.push(`${wa} and ${wb}: ${la === lb ? 'share' : 'do not share'} a storage in PyTorch, not in weft`);
    }
  }
  return p;
}

function check(wt, name, value, want) {
  const storages = [];
  const p = [...problems(wt, value, want, name, storages), ...sharingProblems(storages)];
  if (p.length) throw new Error(`${p.length} problem(s):\n  ${p.slice(0, 30).join('\n  ')}`);
}

test('the generator wrote every reference, adversarial and weft-written file', () => {
  assert.deepEqual(Object.keys(expected).sort(), ['bigendian', 'buffer', 'checkpoint', 'cnn', 'dtypes', 'meta', 'nested',
    'parameter', 'parameters', 'protocol4', 'scalars', 'tensor', 'views', 'zip64']);
  assert.ok(Object.keys(badExpected).length >= 60);
  assert.deepEqual(readdirSync(new URL('bad/', dir)).filter((f) => f.endsWith('.pt')).length, Object.keys(badExpected).length);
});

for (const variant of VARIANTS) {
  test(`torch.save files load as PyTorch loads them (${variant})`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      for (const [name, want] of Object.entries(expected)) {
        const value = wt.load(read(`${name}.pt`));
        try {
          check(wt, name, value, want);
        } finally {
          disposeAll(wt, value);
        }
      }
    });
  });
}

test('views share their storage: a write through one shows in the others', async () => {
  const wt = await init();
  await noLeaks(wt, () => {
    const v = wt.load(read('views.pt'));
    assert.equal(Object.getPrototypeOf(v), null);
    v.base.mul_(2);
    assert.deepEqual([...v.row.data()], [12, 14, 16, 18, 20, 22]);
    assert.deepEqual(v.t.shape, [6, 4]);
    assert.equal(v.t.tolist()[2][1], 16);
    assert.equal(v.twice[0], v.twice[1]); // one tensor, memoized, as PyTorch gives
    assert.deepEqual(v.channels_last.stride(), [12, 1, 6, 3]);
    disposeAll(wt, v);
  });
});

test('Parameters load as leaf tensors that require grad (requires_grad as saved); int keys as strings', async () => {
  const wt = await init();
  await noLeaks(wt, () => {
    const p = wt.load(read('parameters.pt'));
    assert.equal(p.p.requiresGrad, true);
    assert.equal(p.p.isLeaf, true);
    assert.equal(p.frozen.requiresGrad, false);
    assert.equal(p.plain.requiresGrad, false);
    const one = wt.load(read('parameter.pt'));
    assert.equal(one.requiresGrad, true);
    wt.tidy(() => wt.sum(one.mul(one)).backward());
    const g = one.grad;
    assert.deepEqual([...g.data()], [0, 2, 4]);
    g.dispose();
    const c = wt.load(read('checkpoint.pt'));
    assert.deepEqual(Object.keys(c.optimizer.state), ['0', '1', '2', '3', '4', '5']);
    assert.deepEqual(c.optimizer.param_groups[0].params, [0, 1, 2, 3, 4, 5]);
    assert.equal(c.model['bn.num_batches_tracked'].dtype, 'int64');
    assert.equal(c.model['bn.num_batches_tracked'].item(), 2);
    const n = wt.load(read('nested.pt'));
    assert.equal(Object.getPrototypeOf(n), null);
    assert.equal(n.__proto__, 'a key, not a prototype');
    for (const v of [p, one, c, n]) disposeAll(wt, v);
  });
});

test('wt.save writes the committed bytes, and torch.load found in them what weft saved', async () => {
  const wt = await init();
  const makers = weftObjects(wt, { repackZip });
  assert.deepEqual(Object.keys(makers).sort(), Object.keys(weftExpected).sort());
  await noLeaks(wt, () => {
    for (const [name, save] of Object.entries(makers)) {
      const bytes = wt.tidy(save);
      assert.ok(Buffer.from(bytes).equals(read(`weft/${name}.pt`)), `${name}: wt.save's bytes differ from the committed file`);
      const value = wt.load(bytes);
      try {
        check(wt, name, value, weftExpected[name].value);
      } finally {
        disposeAll(wt, value);
      }
    }
  });
  // torch.load(weights_only=True) of PyTorch 1.13 reads every file without floats or bytes
  for (const name of ['dtypes', 'views', 'scalars', 'tensor', 'meta', 'requiresGrad', 'many', 'zip64', 'rt_cnn']) {
    assert.equal(weftExpected[name].weightsOnly, true, name);
  }
});

test('wt.save: storages once, reached part only, deterministic; refusals name the path', async () => {
  const wt = await init();
  await noLeaks(wt, () => {
    const base = wt.arange(100, { dtype: 'float32' });
    const a = base.narrow(0, 0, 10);
    const b = base.narrow(0, 5, 10);
    const bytes = wt.save({ a, b });
    assert.ok(bytes.length < 2000, `${bytes.length} bytes: the 15 elements reached, once`);
    assert.deepEqual(wt.save({ a, b }), bytes);
    const back = wt.load(bytes);
    assert.equal(back.a.dataPtr() - back.a.storageOffset() * 4, back.b.dataPtr() - back.b.storageOffset() * 4);
    assert.deepEqual([...back.b.data()], [5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    disposeAll(wt, back);
    const cyclic = { x: [] };
    cyclic.x.push(cyclic);
    throwsWeft(() => wt.save(cyclic), 'InvalidArgument', /^save: obj\["x"\]\[0\] contains itself/);
    let deep = [];
    for (let i = 0; i < 300; i++) deep = [deep];
    throwsWeft(() => wt.save(deep), 'InvalidArgument', /nested more than 256 deep/);
    // shared containers: written once (linear time) and shared again when loaded
    let dag = [wt.tensor([1, 2], { dtype: 'float32' })];
    const leaf = dag;
    for (let i = 0; i < 100; i++) dag = [dag, dag];
    const t0 = Date.now();
    let back2 = wt.load(wt.save(dag));
    assert.ok(Date.now() - t0 < 1000, 'linear in the containers, not in the 2^100 paths');
    assert.equal(back2[0], back2[1]);
    while (!(back2[0] instanceof wt.Tensor)) back2 = back2[0];
    back2[0].dispose();
    leaf[0].dispose();
    // a container met first shallow, then deep: its height counts where it is deep
    let shared = [];
    for (let i = 0; i < 200; i++) shared = [shared];
    let wrapped = shared;
    for (let i = 0; i < 60; i++) wrapped = [wrapped];
    assert.ok(wt.save([shared]).length > 0);
    throwsWeft(() => wt.save([shared, wrapped]), 'InvalidArgument', /nested more than 256 deep/);
    throwsWeft(() => wt.save({ f: () => 1 }), 'TypeError', /^save: obj\["f"\] is a function/);
    throwsWeft(() => wt.save({ u: undefined }), 'TypeError', /^save: obj\["u"\] is undefined/);
    throwsWeft(() => wt.save([new Float32Array(2)]), 'TypeError', /^save: obj\[0\] is a Float32Array/);
    throwsWeft(() => wt.save(new Map([[{}, 1]])), 'TypeError', /has the key a Object; keys must be strings or integers/);
    const gone = wt.zeros([2]);
    gone.dispose();
    throwsWeft(() => wt.save({ w: gone }), 'InvalidArgument', /^save: obj\["w"\] has been disposed/);
    throwsWeft(() => wt.save(1, 2), 'TypeError', /save\(\) takes 1 argument/);
    base.dispose(); a.dispose(); b.dispose();
  });
});

test('adversarial files: each a WeftError naming the problem, nothing left allocated', async () => {
  const wt = await init();
  const before = counts(wt);
  for (const [name, want] of Object.entries(badExpected)) {
    const bytes = read(`bad/${name}.pt`);
    try {
      throwsWeft(() => wt.load(bytes), want.code, new RegExp(want.message));
    } catch (e) {
      throw new Error(`bad/${name}.pt: ${e.message}`);
    }
    assert.deepEqual(counts(wt), before, name);
  }
});

test('a pickle of a million values on its stack is refused, not run out of memory on', async () => {
  const wt = await init();
  const body = new Uint8Array((1 << 20) + 4).fill(0x4e); // NONE ...
  body.set([0x80, 0x02], 0);
  body[body.length - 1] = 0x2e;
  const bytes = writeZip([{ name: 'archive/data.pkl', data: body }, { name: 'archive/version', data: new Uint8Array([0x33, 0x0a]) }]);
  await noLeaks(wt, () => throwsWeft(() => wt.load(bytes), 'InvalidArgument', /more than 1048576 values on the pickle's stack/));
});

test('failed allocations while loading leave nothing behind', async () => {
  const wt = await init({ variant: 'simd' });
  const bytes = read('checkpoint.pt');
  await noLeaks(wt, () => {
    for (let n = 1; n < 40; n++) {
      wt._faultInjection.failAllocation(n);
      try {
        disposeAll(wt, wt.load(bytes));
      } catch (e) {
        assert.ok(e instanceof wt.WeftError, `${n}: ${e}`);
      } finally {
        wt._faultInjection.failAllocation(0);
      }
    }
  });
});

test('inputs: Buffer, ArrayBuffer, typed array views, DataView now; Blob, File and Response as Promises', async () => {
  const wt = await init();
  const bytes = read('tensor.pt');
  const padded = new Uint8Array(bytes.length + 3);
  padded.set(bytes, 3);
  const sync = [readFileSync(new URL('tensor.pt', dir)), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    padded.subarray(3), new DataView(padded.buffer, 3)];
  await noLeaks(wt, async () => {
    for (const input of sync) {
      const t = wt.load(input);
      assert.deepEqual(t.tolist(), [[1, 2], [4, 5]]);
      t.dispose();
    }
    for (const input of [new Blob([bytes]), new File([bytes], 'tensor.pt'), new Response(bytes)]) {
      const p = wt.load(input);
      assert.ok(p instanceof Promise);
      const t = await p;
      assert.deepEqual(t.tolist(), [[1, 2], [4, 5]]);
      t.dispose();
    }
    await assert.rejects(wt.load(new Response('nope', { status: 404, statusText: 'Not Found' })),
      (e) => e instanceof wt.WeftError && /^load: the response is 404 Not Found/.test(e.message));
    await assert.rejects(wt.load(new Blob([bytes.subarray(0, 100)])), (e) => e instanceof wt.WeftError && /truncated/.test(e.message));
    const used = new Response(bytes);
    await used.arrayBuffer();
    await assert.rejects(wt.load(used), (e) => e instanceof wt.WeftError && /could not read the bytes/.test(e.message));
  });
  throwsWeft(() => wt.load('tensor.pt'), 'TypeError',
    /^load\(\): argument 'bytes' must be an ArrayBuffer, a TypedArray, a DataView, a Blob or a Response, not string/);
  throwsWeft(() => wt.loadSafetensors({}), 'TypeError', /^loadSafetensors\(\): argument 'bytes' must be .* not a Object/);
});

test('loadSafetensors takes the same inputs and gives the same state dict as wt.load', async () => {
  const wt = await init();
  await noLeaks(wt, async () => {
    const sd = wt.load(read('cnn.pt'));
    const st = wt.saveSafetensors(sd);
    for (const input of [st, st.buffer, new Blob([st]), new Response(st)]) {
      const got = await wt.loadSafetensors(input);
      assert.equal(Object.getPrototypeOf(got), null);
      assert.deepEqual(Object.keys(got).sort(), Object.keys(sd).sort());
      for (const k of Object.keys(sd)) assert.deepEqual([...got[k].data()], [...sd[k].data()], k);
      disposeAll(wt, got);
    }
    const h = await wt.readSafetensorsHeader(new Blob([st]));
    assert.deepEqual(h.tensors['conv.weight'].shape, [4, 1, 3, 3]);
    disposeAll(wt, sd);
  });
});

test('the reader\'s fuzzer (scripts/fuzz_pt.mjs): a fixed number of mutants, no crash or leak', async () => {
  const { fuzzPt } = await import('../../scripts/fuzz_pt.mjs');
  const zip = await import('../../js/zip.js');
  const wt = await init({ variant: 'simd' });
  const s = fuzzPt(wt, zip, { seconds: 60, seed: 7, maxRuns: 1500 });
  assert.equal(s.runs, 1500);
  assert.ok(s.loaded >= 14, `${s.loaded} loaded (the 14 reference files at least)`);
});

// PyTorch's CNN state dict loads strictly into the same modules and gives
// PyTorch's outputs.
test('a torch.save state dict loads into wt.nn modules and gives PyTorch\'s outputs', async () => {
  const wt = await init();
  const want = JSON.parse(readFileSync(new URL('cnn_forward.json', dir), 'utf8'));
  class CNN extends wt.nn.Module {
    constructor() {
      super();
      this.conv = new wt.nn.Conv2d(1, 4, 3);
      this.bn = new wt.nn.BatchNorm2d(4);
      this.fc = new wt.nn.Linear(16, 3);
    }

    forward(x) {
      return this.fc.forward(wt.relu(this.bn.forward(this.conv.forward(x))).flatten(1));
    }
  }
  const model = new CNN();
  for (const source of ['pt', 'safetensors']) {
    const sd = wt.load(read('cnn.pt'));
    const st = source === 'pt' ? sd : wt.loadSafetensors(wt.saveSafetensors(sd));
    const r = model.loadStateDict(st);
    assert.deepEqual([r.missingKeys, r.unexpectedKeys], [[], []], source);
    disposeAll(wt, sd);
    if (st !== sd) disposeAll(wt, st);
    model.eval();
    const y = wt.tidy(() => [...model.forward(wt.tensor(want.input, { dtype: 'float32' }).view(want.shape)).data()]);
    y.forEach((v, i) => assert.ok(Math.abs(v - want.output[i]) <= 1e-5 * (1 + Math.abs(want.output[i])), `${source} [${i}]: ${v} vs ${want.output[i]}`));
  }
  model.dispose();
});
