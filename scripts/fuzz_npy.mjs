// A seeded mutation fuzzer for the .npy reader (js/npy.js via wt.fromNpy):
// the corpus tests/fuzz/npy/corpus/ (valid files of every dtype, Fortran
// order, big-endian, version 2, and adversarial headers), mutated by byte
// flips, inserts, deletes, header-token swaps and truncation. Fails on any
// exception that is not a WeftError, on a call that takes over a second (a
// hang), on a loaded tensor whose round trip through toNpy() changes it, and
// on tensors left alive.
//   node scripts/fuzz_npy.mjs [--time 5] [--seed 1] [--variant simd]
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const TOKENS = ["'descr'", "'<f4'", "'>i8'", "'|b1'", "'<f2'", "'|u1'", "'fortran_order'", 'True', 'False',
  "'shape'", '()', '(0,)', '(1e9, 0)', '(-1,)', '(3, 4)', '(2**62, 4)', "'__proto__'", '{', '}', ',', ':', ' ', '\n'];

// xorshift32: the same mutants for the same seed (scripts/fuzz_pt.mjs too)
export function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
}

export function loadCorpus() {
  const dir = path.join(root, 'tests/fuzz/npy/corpus');
  return readdirSync(dir).sort().map((f) => new Uint8Array(readFileSync(path.join(dir, f))));
}

function mutate(r, input) {
  let b = Array.from(input);
  const int = (k) => Math.floor(r() * k);
  for (let m = 1 + int(4); m > 0; m--) {
    const at = int(b.length + 1);
    switch (int(6)) {
      case 0: if (b.length) b[at % b.length] ^= 1 << int(8); break;
      case 1: b.splice(at, 0, int(256)); break;
      case 2: b.splice(at, 1 + int(8)); break;
      case 3: b.splice(at, 0, ...Buffer.from(TOKENS[int(TOKENS.length)])); break;
      case 4: b = b.slice(0, at); break;
      default: if (b.length > 9) b[8 + int(2)] = int(256); // the header length
    }
  }
  return new Uint8Array(b);
}

export function fuzzNpy(wt, { seconds = 5, seed = 1, maxRuns = Infinity } = {}) {
  const r = rng(seed);
  const corpus = loadCorpus();
  const before = wt.memory();
  const stats = { runs: 0, loaded: 0, errors: 0 };
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end && stats.runs < maxRuns) {
    const input = stats.runs < corpus.length ? corpus[stats.runs] : mutate(r, corpus[Math.floor(r() * corpus.length)]);
    stats.runs++;
    const t0 = Date.now();
    try {
      const same = wt.tidy(() => {
        const t = wt.fromNpy(input);
        stats.loaded++;
        const again = wt.fromNpy(t.toNpy());
        const bytes = (x) => Buffer.from(x.contiguous().data({ bits: true }).buffer);
        return again.dtype === t.dtype && again.shape.join() === t.shape.join() && bytes(again).equals(bytes(t));
      });
      if (!same) throw new Error(`npy fuzz (seed ${seed}, run ${stats.runs}): a round trip changed the tensor`);
    } catch (e) {
      if (!(e instanceof wt.WeftError)) {
        throw new Error(`npy fuzz (seed ${seed}, run ${stats.runs}): ${e?.name}: ${e?.message}\n` +
          `input (base64): ${Buffer.from(input).toString('base64')}`);
      }
      stats.errors++;
    }
    // a hang detector (see fuzz_pt.mjs), with room for a loaded machine
    if (Date.now() - t0 > 10000) throw new Error(`npy fuzz (seed ${seed}, run ${stats.runs}): a call took over 10 s`);
  }
  const after = wt.memory();
  if (after.tensors !== before.tensors || after.bytesInUse !== before.bytesInUse)
    throw new Error(`npy fuzz: tensors left alive (${before.tensors} -> ${after.tensors})`);
  return stats;
}

async function main() {
  const arg = (k, d) => { const i = process.argv.indexOf(`--${k}`); return i > 0 ? process.argv[i + 1] : d; };
  const { init } = await import('../dist/index.js');
  const wt = await init({ variant: arg('variant', 'simd') });
  const seconds = Number(arg('time', 5));
  const seed = Number(arg('seed', 1));
  const t0 = Date.now();
  const s = fuzzNpy(wt, { seconds, seed });
  console.log(`fuzz: npy: ${s.runs} executions in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
    `(${s.loaded} loaded, ${s.errors} WeftErrors), seed ${seed}`);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main();
