// A seeded fuzzer over the public JS API: random calls with valid and invalid
// arguments (factories, views, copies, elementwise ops with numbers, out= and
// in-place forms, tidy, disposed tensors, .npy round trips) on a pool of live
// tensors. It fails on anything but a WeftError thrown (a wasm trap, a
// TypeError from inside weft), on a wrong value, and on tensors left alive
// that nothing holds. Oracles: every tensor remembers the contiguous root its
// storage came from, so its values must equal the root's data read through
// its own shape, strides and offset; copies equal their source; .npy round
// trips are exact; elementwise results equal a JS computation.
//   node scripts/fuzz_js.mjs [--n 100000] [--seed 1] [--variant simd]
// tests/js/fuzz.test.mjs runs a small count on each wasm variant.

function rng(seed) {
  let s = BigInt(seed) & 0xffffffffffffffffn;
  return () => {
    s = (s + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
    return Number((z ^ (z >> 31n)) >> 11n) / 2 ** 53;
  };
}

const DTYPES = ['float32', 'float64', 'int32', 'int64', 'int16', 'int8', 'uint8', 'bool', 'float16', 'bfloat16'];
const BAD_DTYPES = ['flaot32', 'complex64', '', 3];
const FORMATS = ['contiguous_format', 'channels_last', 'preserve_format', 'channels_last_3d', 'bogus'];

export function fuzz(wt, { n = 1000, seed = 1, log = null } = {}) {
  const r = rng(seed);
  const int = (k) => Math.floor(r() * k);
  const pick = (a) => a[int(a.length)];
  const chance = (p) => r() < p;
  const pool = []; // { t, root } ; root: a contiguous tensor whose storage t shares (offset 0)
  const before = wt.memory();
  const stats = { calls: 0, errors: 0, checks: 0 };
  let step = 0;
  let what = '';

  const fail = (msg) => {
    throw new Error(`fuzz (seed ${seed}, step ${step}, ${what}): ${msg}`);
  };
  const smallShape = () => Array.from({ length: int(4) }, () => int(4));
  const anyInt = () => pick([0, 1, -1, 2, 3, -2, 5, 100, -100, 2 ** 31, 1.5, NaN, Infinity, '1', null, 2 ** 53]);
  const randDims = (k) => Array.from({ length: k }, () => (chance(0.9) ? int(5) - 2 : anyInt()));

  // Runs fn; a WeftError counts as an expected refusal, anything else fails.
  const attempt = (label, fn) => {
    what = label;
    stats.calls++;
    try {
      return fn();
    } catch (e) {
      if (e instanceof wt.WeftError) {
        stats.errors++;
        return undefined;
      }
      fail(`threw ${e?.name}: ${e?.message}\n${e?.stack}`);
    }
    return undefined;
  };
  // root: a tensor that covers its whole storage, contiguous from offset 0
  // (a fresh result); views inherit their base's root.
  const add = (t, root) => {
    if (t instanceof wt.Tensor) pool.push({ t, root: root === undefined ? t : root });
    return t;
  };
  const fresh = (t) => (t.isContiguous() && t.storageOffset() === 0 ? t : null);
  // out= may resize a tensor, keeping or replacing its storage: it is no
  // longer known to cover its storage, so neither it nor what reads through
  // it has a root any more.
  const resized = (t) => {
    for (const p of pool) if (p.root === t || p.t === t) p.root = null;
  };
  const live = () => pool.filter((e) => !e.t.isDisposed);
  const some = () => {
    const l = live();
    return l.length ? pick(l) : null;
  };

  // The oracle: t's values are root's data read through t's layout.
  const gathered = (root, t) => {
    const data = root.data();
    const shape = t.shape;
    const st = t.stride();
    const numel = shape.reduce((a, b) => a * b, 1);
    const out = [];
    const idx = new Array(shape.length).fill(0);
    for (let k = 0; k < numel; k++) {
      let off = t.storageOffset();
      for (let d = 0; d < shape.length; d++) off += idx[d] * st[d];
      out.push(data[off]);
      for (let d = shape.length - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    return out;
  };
  // (bool storage bytes other than 0/1 come only from empty(): compare truth)
  const same = (a, b, dtype) => a.length === b.length &&
    a.every((x, i) => (dtype === 'bool' ? (x !== 0) === (b[i] !== 0) : Object.is(x, b[i]) || x === b[i]));
  const checkView = (e) => {
    if (!e.root || e.root.isDisposed || e.t.isDisposed || e.t.device !== 'cpu' || e.t.numel() > 4096) return;
    what = `check ${e.t.shape} ${e.t.stride()}`;
    stats.checks++;
    const got = [...e.t.data()];
    const want = gathered(e.root, e.t);
    if (!same(got, want, e.t.dtype)) {
      fail(`values differ from the root (${e.root.dtype} ${e.root.shape}) read through the layout ` +
        `(${e.t.dtype} offset ${e.t.storageOffset()}): ${got.slice(0, 8)} vs ${want.slice(0, 8)}`);
    }
  };

  const makers = [
    () => add(wt.rand(smallShape(), chance(0.8) ? {} : { dtype: pick([...DTYPES, ...BAD_DTYPES]) })),
    () => add(wt.zeros(smallShape(), { dtype: pick(DTYPES) })),
    () => add(wt.full(smallShape(), pick([0, 1, -3.5, 1e30, NaN, 2 ** 40, true]), { dtype: pick(DTYPES) })),
    () => add(wt.arange(int(30), chance(0.8) ? {} : { dtype: pick(DTYPES) })),
    () => add(wt.empty(chance(0.9) ? smallShape() : randDims(int(3)), { dtype: pick(DTYPES) })),
    () => add(wt.tensor(Array.from({ length: int(6) }, () => pick([0, 1, -2, 3.5, NaN, 1e9])), { dtype: pick(DTYPES) })),
    () => add(wt.tensor(pick([[[1, 2], [3]], 'x', [[1], [2]], [true, false]]))),
  ];
  const viewOps = [
    (t) => t.view(...randDims(int(3) + 1)),
    (t) => t.reshape(...randDims(int(3) + 1)),
    (t) => t.permute(...randDims(t.dim())),
    (t) => t.transpose(int(4) - 2, int(4) - 2),
    (t) => t.t(),
    (t) => t.expand(...randDims(t.dim() + int(2))),
    (t) => t.squeeze(chance(0.5) ? undefined : int(4) - 2),
    (t) => t.unsqueeze(int(5) - 2),
    (t) => t.narrow(int(3) - 1, int(3), int(3)),
    (t) => t.slice(int(3) - 1, int(4) - 1, int(6) - 1, pick([1, 2, 3, 0, -1])),
    (t) => t.select(int(3) - 1, int(5) - 2),
    (t) => t.flatten(),
    (t) => t.unflatten(0, [int(3), -1]),
    (t) => t.movedim(int(3) - 1, int(3) - 1),
    (t) => t.asStrided(smallShape(), randDims(int(3)), int(4)),
  ];
  const copyOps = [
    (t) => t.contiguous(chance(0.7) ? {} : { memoryFormat: pick(FORMATS) }),
    (t) => t.clone(chance(0.7) ? {} : { memoryFormat: pick(FORMATS) }),
    (t) => t.to(pick([...DTYPES, ...BAD_DTYPES])),
  ];
  const binary = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'eq', 'lt', 'remainder', 'pow', 'bitwiseAnd'];
  const unary = ['neg', 'abs', 'exp', 'sqrt', 'sin', 'relu', 'floor', 'sigmoid', 'logicalNot'];

  for (let i = 0; i < 8; i++) attempt('seed pool', pick(makers));
  for (step = 0; step < n; step++) {
    const k = int(100);
    const e = some();
    if (k < 15 || !e) {
      attempt('make', pick(makers));
    } else if (k < 45) {
      const f = pick(viewOps);
      const v = attempt(`view ${f} of ${e.t.shape}`, () => f(e.t));
      if (v instanceof wt.Tensor) {
        // a view reads its base's storage; reshape/flatten may copy instead
        const base = (t) => t.dataPtr() - t.storageOffset() * t.elementSize();
        const shares = v.device === 'cpu' && base(v) === base(e.t);
        const entry = { t: v, root: shares ? e.root : fresh(v) };
        pool.push(entry);
        checkView(entry);
      }
    } else if (k < 55) {
      const f = pick(copyOps);
      const c = attempt(`copy ${f} of ${e.t.shape}`, () => f(e.t));
      if (c instanceof wt.Tensor && c.handle('fuzz') === e.t.handle('fuzz')) {
        // contiguous()/to() returned self: a second JS wrapper of one C
        // tensor, kept (an out= resize through one must show in the other).
        add(c, e.root);
      } else if (c instanceof wt.Tensor && c !== e.t) {
        add(c, fresh(c));
        if (c.dtype === e.t.dtype && e.t.numel() <= 4096) {
          what = 'copy equals source';
          stats.checks++;
          if (!same([...c.data()], [...e.t.data()], c.dtype)) fail('a copy differs from its source');
        }
      }
    } else if (k < 72) {
      const op = pick(binary);
      const other = chance(0.5) ? some()?.t : pick([2, -1, 0.5, true, 0, NaN]);
      const opts = chance(0.15) ? { out: some()?.t } : chance(0.1) ? { alpha: pick([2, 0.5, true]) } : undefined;
      const inplace = chance(0.15) && typeof e.t[`${op}_`] === 'function';
      const res = attempt(`${op}${inplace ? '_' : ''}`, () => (inplace ? e.t[`${op}_`](other) : opts ? wt[op](e.t, other, opts) : wt[op](e.t, other)));
      if (opts?.out) resized(opts.out);
      else if (res instanceof wt.Tensor && res !== e.t) add(res, fresh(res));
      if (!inplace && !opts && res instanceof wt.Tensor && op === 'add' && typeof other === 'number' &&
          e.t.dtype === 'float64' && res.dtype === 'float64' && e.t.numel() <= 4096) {
        what = 'add oracle';
        stats.checks++;
        const a = [...e.t.data()];
        if (!same([...res.data()], a.map((x) => x + other))) fail('add differs from JS');
      }
    } else if (k < 80) {
      const op = pick(unary);
      const res = attempt(op, () => wt[op](e.t));
      if (res instanceof wt.Tensor) add(res, fresh(res));
    } else if (k < 86) {
      attempt('read', () => {
        const which = int(4);
        if (e.t.numel() > 4096 && which !== 3) return;
        if (which === 0) e.t.toArray();
        else if (which === 1) e.t.data();
        else if (which === 2) e.t.item();
        else String(e.t);
      });
    } else if (k < 90) {
      attempt('npy', () => {
        if (e.t.numel() > 4096) return;
        const back = wt.fromNpy(e.t.toNpy());
        add(back, back);
        what = 'npy round trip';
        stats.checks++;
        if (back.dtype !== e.t.dtype || !same([...back.data()], [...e.t.data()], back.dtype)) {
          fail(`.npy round trip changed the tensor: ${e.t.dtype} ${e.t.shape} ${e.t.stride()} -> ${back.dtype} ` +
            `${back.shape}: ${[...e.t.data()].slice(0, 6)} vs ${[...back.data()].slice(0, 6)}`);
        }
      });
    } else if (k < 95) {
      e.t.dispose();
      attempt('use disposed', () => pick(viewOps)(e.t));
    } else {
      attempt('tidy', () => {
        const kept = wt.tidy(() => {
          const a = wt.ones(smallShape());
          a.add(1);
          return chance(0.5) ? [a.t()] : { x: a };
        });
        for (const t of Object.values(kept)) add(t, null); // a view of a disposed base
      });
    }
    if (pool.length > 64) {
      for (const p of pool.splice(0, 32)) p.t.dispose();
    }
    if (log && step % 10000 === 0) log(`step ${step}: ${JSON.stringify(stats)}`);
  }
  for (const p of pool.splice(0)) p.t.dispose();
  const after = wt.memory();
  what = 'leak check';
  if (after.tensors !== before.tensors || after.storages !== before.storages || after.bytesInUse !== before.bytesInUse) {
    fail(`live tensors nothing holds: ${JSON.stringify({ before, after })}`);
  }
  return stats;
}

async function main() {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : dflt;
  };
  const { init } = await import('../dist/index.js');
  const n = Number(arg('n', 100000));
  const seed = Number(arg('seed', 1));
  const variants = arg('variant', 'simd,simd-threads').split(',');
  for (const variant of variants) {
    const wt = await init({ variant });
    const t0 = Date.now();
    const stats = fuzz(wt, { n, seed, log: (m) => console.log(`${variant}: ${m}`) });
    console.log(`${variant}: ${n} calls, seed ${seed}: ${JSON.stringify(stats)} in ${Date.now() - t0} ms`);
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main();
