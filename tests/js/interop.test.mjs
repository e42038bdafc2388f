// TypedArrays in, raw float16/bfloat16 bits, and NumPy .npy in and out
// (fixtures written by tests/fixtures/npy/gen_npy.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { counts, init, throwsWeft, VARIANTS } from './helpers.mjs';

const npyDir = new URL('../fixtures/npy/', import.meta.url);
const expected = JSON.parse(readFileSync(new URL('expected.json', npyDir), 'utf8'));
const npy = (name) => readFileSync(new URL(`${name}.npy`, npyDir));

const fromJson = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const flat = (v) => (Array.isArray(v) ? v.flatMap(flat) : [fromJson(v)]);

for (const variant of VARIANTS) {
  test(`${variant}: every TypedArray`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const cases = [
      [new Float32Array([1.5, 2]), 'float32', [1.5, 2]],
      [new Float64Array([1e300]), 'float64', [1e300]],
      [new Int8Array([-3]), 'int8', [-3]],
      [new Int16Array([-300]), 'int16', [-300]],
      [new Int32Array([-70000]), 'int32', [-70000]],
      [new Uint8Array([255]), 'uint8', [255]],
      [new Uint8ClampedArray([200]), 'uint8', [200]],
      [new Uint16Array([65535]), 'int32', [65535]],
      [new Uint32Array([4294967295]), 'int64', [4294967295]],
      [new BigInt64Array([-(2n ** 40n)]), 'int64', [-(2 ** 40)]],
      [new BigUint64Array([5n]), 'int64', [5]],
    ];
    if (typeof Float16Array === 'function') cases.push([new Float16Array([0.5, 65504]), 'float16', [0.5, 65504]]);
    for (const [arr, dtype, values] of cases) {
      const t = wt.tensor(arr);
      assert.equal(t.dtype, dtype, arr.constructor.name);
      assert.deepEqual(t.toArray(), values, arr.constructor.name);
      t.dispose();
    }
    const sub = new Float32Array([9, 8, 7, 6]).subarray(1, 3);
    const s = wt.tensor(sub);
    assert.deepEqual(s.toArray(), [8, 7]);
    const asBool = wt.tensor(new Uint8Array([0, 2, 1]), { dtype: 'bool' });
    assert.deepEqual(asBool.toArray(), [false, true, true]);
    const nested = wt.tensor([new Int32Array([1, 2]), new Int32Array([3, 4])]);
    assert.deepEqual(nested.shape, [2, 2]);
    for (const t of [s, asBool, nested]) t.dispose();
    throwsWeft(() => wt.tensor(new DataView(new ArrayBuffer(4))), 'TypeError');
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: float16/bfloat16 raw bits in and out`, async () => {
    const wt = await init({ variant });
    const h = wt.tensor(new Uint16Array([0x3c00, 0xc000, 0x7c00, 0x0001]), { dtype: 'float16', bits: true });
    assert.deepEqual(h.toArray(), [1, -2, Infinity, 2 ** -24]);
    assert.deepEqual(Array.from(h.data({ bits: true })), [0x3c00, 0xc000, 0x7c00, 0x0001]);
    assert.ok(h.data({ bits: true }) instanceof Uint16Array);
    const b = wt.tensor(new Uint16Array([0x3f80, 0x4049]), { dtype: 'bfloat16', bits: true });
    assert.deepEqual(b.toArray(), [1, 3.140625]);
    assert.deepEqual(Array.from(b.t().data({ bits: true })), [0x3f80, 0x4049]);
    const notBits = wt.tensor(new Uint16Array([2]), { dtype: 'float16' });
    assert.deepEqual(notBits.toArray(), [2], 'without bits a Uint16Array holds values');
    throwsWeft(() => wt.tensor(new Uint16Array([1]), { bits: true }), 'TypeError', /bits: true/);
    throwsWeft(() => wt.tensor(new Float32Array([1]), { dtype: 'float16', bits: true }), 'TypeError');
    throwsWeft(() => wt.tensor([1], { dtype: 'float32', bits: true }), 'TypeError');
    throwsWeft(() => h.data({ raw: true }), 'TypeError', /unexpected option 'raw' \(options: bits\)/);
    for (const t of [h, b, notBits]) t.dispose();
  });

  test(`${variant}: fromNpy reads every fixture`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    for (const [name, e] of Object.entries(expected)) {
      const t = wt.fromNpy(npy(name));
      assert.equal(t.dtype, e.dtype, name);
      assert.deepEqual(t.shape, e.shape, name);
      assert.deepEqual(t.stride(), e.strides, `${name} strides`);
      if (e.dtype === 'int64') {
        assert.deepEqual(Array.from(t.data(), String), e.values, name);
      } else {
        const got = Array.from(t.data(), (v) => (e.dtype === 'bool' ? v !== 0 : v));
        const want = flat(e.values);
        assert.equal(got.length, want.length, name);
        got.forEach((v, k) => assert.ok(Object.is(v, want[k]) || v === want[k], `${name}[${k}]: ${v} vs ${want[k]}`));
      }
      if (e.fortran) assert.equal(t.isContiguous(), false, `${name} is a Fortran-strided view`);
      t.dispose();
    }
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: toNpy round-trips and matches NumPy's bytes`, async () => {
    const wt = await init({ variant });
    for (const name of ['f4_c', 'f2', 'b1', 'u1', 'i1', 'i2', 'i4', 'i8', 'scalar_f4', 'empty_i4']) {
      const t = wt.fromNpy(npy(name));
      const out = t.toNpy();
      assert.deepEqual(Buffer.from(out), npy(name), `${name}: same bytes as numpy.save`);
      t.dispose();
    }
    // Fortran and big-endian inputs come back as C-order little-endian.
    for (const name of ['f8_fortran', 'be_i8', 'f4_fortran_3d']) {
      const t = wt.fromNpy(npy(name));
      const back = wt.fromNpy(t.toNpy());
      assert.deepEqual(back.toArray(), t.toArray(), name);
      assert.equal(back.isContiguous(), true);
      assert.equal(new TextDecoder().decode(t.toNpy().subarray(10, 30)).includes("'<"), true);
      t.dispose();
      back.dispose();
    }
    const bf = wt.zeros(2, { dtype: 'bfloat16' });
    throwsWeft(() => bf.toNpy(), 'NotImplemented', /bfloat16 has no NumPy dtype/);
    bf.dispose();
  });

  test(`${variant}: malformed and truncated .npy files are WeftErrors`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const good = npy('f4_c');
    const edit = (fn) => { const b = Buffer.from(good); fn(b); return b; };
    const header = (text) => {
      const pad = text.padEnd(117, ' ') + '\n';
      const b = Buffer.alloc(10 + pad.length + 24);
      Buffer.from(good.subarray(0, 8)).copy(b);
      b.writeUInt16LE(pad.length, 8);
      b.write(pad, 10, 'latin1');
      return b;
    };
    const bad = [
      [Buffer.alloc(0), /missing the \\x93NUMPY magic/],
      [Buffer.from('PK\x03\x04 not npy'), /magic/],
      [good.subarray(0, 9), /magic|truncated/],
      [good.subarray(0, 40), /truncated header/],
      [good.subarray(0, good.length - 1), /truncated data \(24 bytes expected/],
      [Buffer.concat([good, Buffer.alloc(4)]), /4 bytes after the data/],
      [edit((b) => { b[6] = 4; }), /unsupported format version 4.0/],
      [header("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }"), /unsupported dtype '<c8'/],
      [header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }"), /structured dtypes/],
      [header("{'descr': '<f4', 'fortran_order': False, }"), /header has no 'shape'/],
      [header("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }"), /malformed header/],
      [header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }"), /malformed header/],
      [header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1, }"), /malformed header/],
      [header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)"), /malformed header/],
      [header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'y': 'z'}"), /unexpected header key 'y'/],
      [header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999, 99999999, 99999999), }"), /truncated data/],
    ];
    for (const [bytes, re] of bad) throwsWeft(() => wt.fromNpy(bytes), 'InvalidArgument', re);
    throwsWeft(() => wt.fromNpy('x'), 'TypeError', /must be an ArrayBuffer or a TypedArray/);
    // Random corruption never crashes: every outcome is a tensor or a WeftError.
    let seed = 7;
    const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
    for (const name of readdirSync(npyDir).filter((f) => f.endsWith('.npy'))) {
      const src = readFileSync(new URL(name, npyDir));
      for (let k = 0; k < 20; k++) {
        const b = Buffer.from(src.subarray(0, rnd() % (src.length + 1)));
        if (b.length > 0 && k % 2) b[rnd() % b.length] = rnd() % 256;
        try {
          wt.fromNpy(b).dispose();
        } catch (e) {
          assert.equal(e.name, 'WeftError', `${name}: ${e.message}`);
        }
      }
    }
    assert.deepEqual(counts(wt), before);
  });
}

for (const variant of VARIANTS) {
  test(`${variant}: JS numbers to bfloat16 give the C converter's bits, NaN included`, async () => {
    const wt = await init({ variant });
    // -NaN and NaNs with payloads all become 0x7FC0, as PyTorch 1.13's c10::BFloat16 (tests/fixtures/half)
    const nans = new Float32Array(new Uint32Array([0xffc00000, 0x7fffffff, 0xffe50000, 0x7f800001]).buffer);
    const vals = [...nans, 1, -2.5, 3.1415927, 65504, 1e-40, Infinity, -Infinity, -0];
    const fromJs = wt.tensor(vals, { dtype: 'bfloat16' });
    const viaC = wt.tensor(Float32Array.from(vals)).to('bfloat16');
    // data() widens bfloat16 to float32, exactly (a shift): the top 16 bits are the stored ones
    const bits = (t) => [...new Uint32Array(Float32Array.from(t.data()).buffer)].map((u) => u >>> 16);
    assert.deepEqual(bits(fromJs), bits(viaC));
    assert.deepEqual(bits(fromJs).slice(0, 4), [0x7fc0, 0x7fc0, 0x7fc0, 0x7fc0]);
    fromJs.dispose();
    viaC.dispose();
  });
}
