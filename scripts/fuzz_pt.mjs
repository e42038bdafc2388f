// A seeded mutation fuzzer for the checkpoint reader (js/checkpoint.js,
// js/pickle.js, js/zip.js via wt.load). Seeds: the real torch.save files of
// tests/fixtures/pt/ and the adversarial ones of tests/fixtures/pt/bad/.
// Half the mutants are raw byte edits (the zip layer: directory, headers,
// truncation); the other half edit one entry (the pickle, by bytes and by
// opcode tokens, or a storage record) and are zipped again with valid CRCs,
// so the unpickler and the tensor rebuilding see them. Fails on any exception
// that is not a WeftError, on a call over a second (a hang), on a loaded
// value that wt.save then wt.load cannot take back, and on tensors left alive.
//   node scripts/fuzz_pt.mjs [--time 5] [--seed 1] [--variant simd]
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { rng } from './fuzz_npy.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const enc = (s) => [...Buffer.from(s, 'latin1')];
// pickle opcodes and the shapes torch.save emits them in
const TOKENS = [
  '(', 't', 'R', 'b', 'Q', '.', ']', '}', ')', 'a', 'e', 's', 'u', '0', '1', '2', 'N', '\x88', '\x89', '\x85', '\x86', '\x87',
  'h\x00', 'h\x01', 'q\x00', 'q\xff', 'j\xff\xff\xff\xff', 'r\xff\xff\xff\xff', 'K\x00', 'K\xff', 'M\xff\xff',
  'J\xff\xff\xff\xff', 'J\x00\x00\x00\x80', '\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40', '\x8a\x00', 'G\x7f\xf8\x00\x00\x00\x00\x00\x00',
  'X\x07\x00\x00\x00storage', 'X\x01\x00\x00\x000', 'X\x03\x00\x00\x00cpu', 'X\xff\xff\xff\x7f', '\x8c\x01a', '\x94', '\x95\x01\x00\x00\x00\x00\x00\x00\x00',
  'ctorch\nFloatStorage\n', 'ctorch\nLongStorage\n', 'ctorch\nBoolStorage\n', 'ctorch\nComplexFloatStorage\n',
  'ctorch._utils\n_rebuild_tensor_v2\n', 'ctorch._utils\n_rebuild_parameter\n', 'ccollections\nOrderedDict\n',
  'ctorch\nSize\n', 'ctorch\nfloat32\n', 'cos\nsystem\n', 'cbuiltins\neval\n', 'ctorch.nn.parameter\nParameter\n', '\x81', '\x93',
].map(enc);

export function loadCorpus() {
  const files = (rel) => {
    const dir = path.join(root, rel);
    return readdirSync(dir).filter((f) => f.endsWith('.pt')).sort().map((f) => new Uint8Array(readFileSync(path.join(dir, f))));
  };
  return [...files('tests/fixtures/pt'), ...files('tests/fixtures/pt/bad')];
}

function mutateBytes(r, input, tokens, most = 4) {
  let b = Array.from(input);
  const int = (k) => Math.floor(r() * k);
  for (let m = 1 + int(most); m > 0; m--) {
    const at = int(b.length + 1);
    switch (int(7)) {
      case 0: if (b.length) b[at % b.length] ^= 1 << int(8); break;
      case 1: b.splice(at, 0, int(256)); break;
      case 2: b.splice(at, 1 + int(16)); break;
      case 3: b.splice(at, 0, ...tokens[int(tokens.length)]); break;
      case 4: if (b.length) b = b.slice(0, at); break;
      case 5: { // copy a range elsewhere (repeats opcodes, memo writes, whole tensors)
        const from = int(b.length + 1);
        b.splice(at, 0, ...b.slice(from, from + 1 + int(40)));
        break;
      }
      default: for (let k = 0; k < 4 && at + k < b.length; k++) b[at + k] = [0x00, 0xff, 0x7f, 0x80][int(4)];
    }
  }
  return new Uint8Array(b);
}

// One entry of the zip mutated, the zip written again with valid CRCs.
function mutateEntry(r, input, zip) {
  let z;
  try {
    z = zip.readZip(input, 'fuzz');
  } catch {
    return mutateBytes(r, input, TOKENS);
  }
  const names = [...z.entries.keys()];
  const pkl = names.find((n) => n.endsWith('/data.pkl'));
  const records = names.filter((n) => n.includes('/data/'));
  const target = pkl && (r() < 0.8 || !records.length) ? pkl : records[Math.floor(r() * records.length)];
  const out = names.map((name) => {
    let data;
    try {
      data = z.read(name);
    } catch {
      data = new Uint8Array(0);
    }
    // mostly one edit: a pickle that still parses reaches the tensors
    return { name, data: name === target ? mutateBytes(r, data, TOKENS, r() < 0.7 ? 1 : 4) : data };
  });
  return zip.writeZip(out);
}

export function fuzzPt(wt, zip, { seconds = 5, seed = 1, maxRuns = Infinity } = {}) {
  const r = rng(seed);
  const corpus = loadCorpus();
  const before = wt.memory();
  const stats = { runs: 0, loaded: 0, errors: 0 };
  const end = Date.now() + seconds * 1000;
  const fail = (input, msg) => {
    throw new Error(`pt fuzz (seed ${seed}, run ${stats.runs}): ${msg}\ninput (base64): ${Buffer.from(input).toString('base64')}`);
  };
  while (Date.now() < end && stats.runs < maxRuns) {
    const pick = corpus[Math.floor(r() * corpus.length)];
    const input = stats.runs < corpus.length ? corpus[stats.runs] : r() < 0.5 ? mutateBytes(r, pick, TOKENS) : mutateEntry(r, pick, zip);
    stats.runs++;
    const t0 = Date.now();
    try {
      wt.tidy(() => {
        const value = wt.load(input);
        stats.loaded++;
        // what weft loaded, weft saves and loads again
        wt.load(wt.save(value));
      });
    } catch (e) {
      if (!(e instanceof wt.WeftError)) fail(input, `${e?.name}: ${e?.message}\n${e?.stack}`);
      stats.errors++;
    }
    // a hang detector, not a speed test: a valid 300 KB checkpoint loads in ~50 ms, a loaded CI
    // machine may take 20× that; a size field that makes the reader loop takes far longer
    if (Date.now() - t0 > 10000) fail(input, 'a call took over 10 s');
    const now = wt.memory();
    if (now.tensors !== before.tensors || now.bytesInUse !== before.bytesInUse) {
      fail(input, `tensors left alive (${before.tensors} -> ${now.tensors})`);
    }
  }
  return stats;
}

async function main() {
  const arg = (k, d) => { const i = process.argv.indexOf(`--${k}`); return i > 0 ? process.argv[i + 1] : d; };
  const { init } = await import('../dist/index.js');
  const zip = await import('../dist/zip.js');
  const wt = await init({ variant: arg('variant', 'simd') });
  const seconds = Number(arg('time', 5));
  const seed = Number(arg('seed', 1));
  const t0 = Date.now();
  const s = fuzzPt(wt, zip, { seconds, seed });
  console.log(`fuzz: pt: ${s.runs} executions in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
    `(${s.loaded} loaded, ${s.errors} WeftErrors), seed ${seed}`);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main();
