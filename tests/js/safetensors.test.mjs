// safetensors in and out: the files of tests/fixtures/gen_safetensors.py
// (written from the format's specification with struct/json, values from
// numpy/torch) read back, saved again byte for byte, round trips of every
// dtype and layout, and adversarial files that must each be a WeftError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { initWorker } from 'weft';
import { counts, init, throwsWeft } from './helpers.mjs';

const dir = new URL('../fixtures/safetensors/', import.meta.url);
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8'));
const file = (name) => new Uint8Array(readFileSync(new URL(`${name}.safetensors`, dir)));
const badFiles = readdirSync(new URL('bad/', dir)).filter((f) => f.endsWith('.safetensors'));

const fromJson = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);

function checkTensor(name, t, want) {
  assert.equal(t.dtype, want.dtype, name);
  assert.deepEqual(t.shape, want.shape, name);
  const got = [...t.data()];
  if (want.dtype === 'int64') assert.deepEqual(got.map(String), want.values, name);
  else if (want.dtype === 'bool') assert.deepEqual(got.map((v) => v !== 0), want.values, name);
  else assert.deepEqual(got, want.values.map(fromJson), name);
}

const disposeAll = (tensors) => Object.values(tensors).forEach((t) => t.dispose());

test('the generator writes every reference and adversarial file', () => {
  assert.deepEqual(Object.keys(expected).sort(), ['all_dtypes', 'names', 'no_tensors', 'scalar_empty', 'unaligned']);
  assert.ok(badFiles.length >= 40, `${badFiles.length} adversarial files`);
});

test('reference files: values, dtypes, shapes and metadata', async () => {
  const wt = await init();
  const before = counts(wt);
  for (const [name, want] of Object.entries(expected)) {
    const { tensors, metadata } = wt.loadSafetensors(file(name), { metadata: true });
    assert.deepEqual(metadata === null ? null : { ...metadata }, want.metadata, name);
    assert.deepEqual(Object.keys(tensors).sort(), Object.keys(want.tensors).sort(), name);
    for (const [n, t] of Object.entries(tensors)) checkTensor(`${name}/${n}`, t, want.tensors[n]);
    disposeAll(tensors);
  }
  assert.deepEqual(counts(wt), before);
});

test('the result is a map of tensors with no prototype, in header order', async () => {
  const wt = await init();
  const tensors = wt.loadSafetensors(file('names'));
  assert.equal(Object.getPrototypeOf(tensors), null);
  assert.ok(tensors.constructor instanceof wt.Tensor);
  assert.deepEqual(tensors.toString.toArray(), [-1]);
  assert.deepEqual(Object.keys(tensors), expected.names.order);
  disposeAll(tensors);
  assert.deepEqual(Object.keys(wt.loadSafetensors(file('no_tensors'))), []);
});

test('readSafetensorsHeader describes the tensors without loading them', async () => {
  const wt = await init();
  const before = counts(wt);
  const h = wt.readSafetensorsHeader(file('unaligned'));
  assert.deepEqual({ ...h.tensors.a_f32 }, { dtype: 'float32', shape: [2], dataOffsets: [1, 9] });
  assert.equal(h.metadata, null);
  assert.deepEqual(counts(wt), before);
  throwsWeft(() => wt.readSafetensorsHeader(readFileSync(new URL('bad/overlap.safetensors', dir))), 'InvalidArgument',
    /^readSafetensorsHeader: tensors "a" and "b" overlap/);
});

test('saveSafetensors writes the generator\'s bytes (same layout rule)', async () => {
  const wt = await init();
  for (const name of ['all_dtypes', 'names', 'scalar_empty', 'no_tensors']) {
    const bytes = file(name);
    const { tensors, metadata } = wt.loadSafetensors(bytes, { metadata: true });
    const opts = metadata === null ? undefined : { metadata: { ...metadata } };
    assert.deepEqual(wt.saveSafetensors(tensors, opts), bytes, name);
    disposeAll(tensors);
  }
});

test('round trips: every dtype, 0-dim, empty, non-contiguous and half-precision tensors', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const base = wt.arange(24, { dtype: 'float32' }).view(2, 3, 4).sub(11.5);
    const src = {
      transposed: base.transpose(0, 2),
      sliced: base.slice(2, 1, null, 2),
      expanded: wt.tensor([1, 2, 3], { dtype: 'int16' }).expand(2, 3),
      channelsLast: wt.rand([1, 3, 2, 2]).contiguous({ memoryFormat: 'channels_last' }),
      scalar: wt.full([], -3, { dtype: 'int64' }),
      empty: wt.empty([0, 5], { dtype: 'bfloat16' }),
      7: wt.ones(2, { dtype: 'uint8' }),
    };
    for (const dtype of ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64']) {
      src[`all.${dtype}`] = base.to(dtype);
    }
    const bytes = wt.saveSafetensors(src, { metadata: { format: 'pt' } });
    assert.equal(new DataView(bytes.buffer).getUint32(0, true) % 8, 0);
    const back = wt.loadSafetensors(bytes, { metadata: true });
    assert.deepEqual({ ...back.metadata }, { format: 'pt' });
    assert.deepEqual(Object.keys(back.tensors).sort(), Object.keys(src).sort());
    for (const [name, t] of Object.entries(src)) {
      const u = back.tensors[name];
      assert.equal(u.dtype, t.dtype, name);
      assert.deepEqual(u.shape, t.shape, name);
      assert.ok(u.isContiguous(), name);
      assert.deepEqual(u.data({ bits: true }), t.data({ bits: true }), name);
    }
    // each tensor's data starts at a multiple of its element size
    const h = wt.readSafetensorsHeader(bytes);
    for (const info of Object.values(h.tensors)) {
      assert.equal(info.dataOffsets[0] % src['all.' + info.dtype].elementSize(), 0, info.dtype);
    }
    disposeAll(back.tensors);
  });
  assert.deepEqual(counts(wt), before);
});

test('every adversarial file is a WeftError and leaves nothing behind', async () => {
  const wt = await init();
  const before = counts(wt);
  for (const f of badFiles) {
    const bytes = readFileSync(new URL(`bad/${f}`, dir));
    const code = /^unsupported_/.test(f) ? 'NotImplemented' : 'InvalidArgument';
    assert.throws(() => wt.loadSafetensors(bytes), (e) => {
      assert.ok(e instanceof wt.WeftError, `${f}: ${e}`);
      assert.equal(e.code, code, `${f}: ${e.message}`);
      assert.match(e.message, /^loadSafetensors: /, f);
      return true;
    });
  }
  assert.deepEqual(counts(wt), before);
});

test('what the adversarial files are refused for', async () => {
  const wt = await init();
  const why = {
    overlap: /tensors "a" and "b" overlap/,
    hole: /bytes \[4, 6\) of the data belong to no tensor/,
    trailing_bytes: /bytes \[8, 12\) of the data belong to no tensor/,
    offsets_past_end: /tensor "b": data_offsets \[8, 16\] are outside the 8 bytes/,
    shape_mismatch: /shape \[3\] of F32 takes 12 bytes, but data_offsets \[0, 8\] hold 8/,
    duplicate_name: /the key "a" twice/,
    proto_name: /'__proto__'/,
    header_too_long: /truncated header \(10000 bytes announced/,
    header_len_max: /header size 18446744073709551615 is too large/,
    header_deep: /nested/,
    unsupported_u16: /tensor "b" has dtype U16, which weft does not have/,
    metadata_not_strings: /__metadata__\["n"\] must be a string/,
    truncated_data: /outside the 5 bytes of data/,
  };
  for (const [f, re] of Object.entries(why)) {
    throwsWeft(() => wt.loadSafetensors(readFileSync(new URL(`bad/${f}.safetensors`, dir))), undefined, re);
  }
});

test('bad arguments are WeftErrors', async () => {
  const wt = await init();
  const t = wt.ones(2);
  throwsWeft(() => wt.loadSafetensors('abc'), 'TypeError', /argument 'bytes' must be an ArrayBuffer/);
  throwsWeft(() => wt.loadSafetensors(file('names'), { meta: true }), 'TypeError', /unexpected keyword argument 'meta'/);
  throwsWeft(() => wt.saveSafetensors(t), 'TypeError', /must be an object of name: Tensor, not a Tensor/);
  throwsWeft(() => wt.saveSafetensors([t]), 'TypeError', /not an array/);
  throwsWeft(() => wt.saveSafetensors({ a: [1, 2] }), 'TypeError', /tensors\["a"\] must be a Tensor/);
  throwsWeft(() => wt.saveSafetensors({ __metadata__: t }), 'InvalidArgument', /cannot name a tensor/);
  throwsWeft(() => wt.saveSafetensors({ a: t }, { metadata: { n: 1 } }), 'InvalidArgument', /must be a string/);
  throwsWeft(() => wt.saveSafetensors({ a: wt.empty(2, { device: 'meta' }) }), 'InvalidArgument', /meta tensor/);
  const gone = wt.ones(1);
  gone.dispose();
  throwsWeft(() => wt.saveSafetensors({ gone }), 'InvalidArgument', /"gone" has been disposed/);
  t.dispose();
});

test('worker mode: loadSafetensors gives WorkerTensors, saveSafetensors bytes', async () => {
  const ww = await initWorker();
  try {
    const bytes = file('all_dtypes');
    const { tensors, metadata } = await ww.loadSafetensors(bytes, { metadata: true });
    assert.equal(metadata.format, 'pt');
    assert.deepEqual(await tensors.i8.toArray(), [-128, -1, 0, 1, 127]);
    const plain = await ww.loadSafetensors(bytes);
    assert.deepEqual(Object.keys(plain).sort(), Object.keys(tensors).sort());
    const again = await ww.saveSafetensors(plain, { metadata: { ...metadata } });
    assert.deepEqual(again, bytes);
    const h = await ww.readSafetensorsHeader(bytes);
    assert.deepEqual(h.tensors.f32.shape, [3, 4]);
    await assert.rejects(ww.loadSafetensors(readFileSync(new URL('bad/hole.safetensors', dir))),
      (e) => e instanceof ww.WeftError && /belong to no tensor/.test(e.message));
  } finally {
    await ww.terminate();
  }
});

// Seeded mutations of the reference files (bytes overwritten in the header,
// the size field changed, the file cut short): each load succeeds or is a
// WeftError, and nothing outlives it.
test('mutated files: a WeftError or tensors, never another exception or a leak', async () => {
  const wt = await init();
  const before = counts(wt);
  let seed = 14;
  const rnd = (n) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const sources = Object.keys(expected).map(file);
  const outcomes = { loaded: 0, refused: 0 };
  for (let k = 0; k < 3000; k++) {
    const src = sources[k % sources.length];
    const headerEnd = 8 + new DataView(src.buffer).getUint32(0, true);
    let bytes = src.slice();
    const kind = rnd(4);
    if (kind === 0) bytes[8 + rnd(headerEnd - 8)] = rnd(256);
    else if (kind === 1) bytes[8 + rnd(headerEnd - 8)] = '0123456789[]{}",: -.e'.charCodeAt(rnd(21));
    else if (kind === 2) bytes[rnd(8)] = rnd(256);
    else bytes = bytes.subarray(0, rnd(bytes.length));
    try {
      disposeAll(wt.loadSafetensors(bytes));
      outcomes.loaded++;
    } catch (e) {
      assert.ok(e instanceof wt.WeftError, `mutation ${k} (kind ${kind}): ${e && e.stack}`);
      outcomes.refused++;
    }
  }
  assert.ok(outcomes.loaded > 0 && outcomes.refused > 1000, JSON.stringify(outcomes));
  assert.deepEqual(counts(wt), before);
});
