// Benchmark W10 (issue 24) for bench/run.mjs: token generation with llama2.c's
// stories15M configuration (dim 288, hidden 768, 6 layers, 6 heads, vocab
// 32000, seq_len 256) and random weights from bench/models/gen_llama_models.py
// (made into bench/models/out/ when missing), batch 1, in one run:
//   C wasm        bench/llama/decode.c, emcc -O3 -msimd128, one thread, in Node
//   C native      the same file, gcc -O3 -march=native; and with -fopenmp on 2 threads
//   pytorch       eager with a KV cache (bench/models/torch_llama_bench.py), 1 and 2 threads
//   weft          weft/models' llama from the state dict (bench/llama_bench.mjs):
//                 wasm-simd at 1 thread, wasm-simd-threads at 1 and 2
// Each row: tokens/s of 128 greedy tokens from token 1, and ms to take a
// 256-token prompt (its next token); every row's token ids must equal
// PyTorch's from the generator (a mismatch is printed as a failed check and
// fails the run). Ratios: weft / C wasm at 1 thread (target >= 1) and weft at
// 2 threads / C wasm (target >= 1.6). The C decoders are built into build/llama/.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';

const CHECK = 'bench/models/out/llama_check.json';
const CKPT = 'bench/models/out/stories15M.bin';
const SRC = 'bench/llama/decode.c';

// out is missing or older than the decoder's source
const stale = (root, out) => !existsSync(`${root}/${out}`) ||
  statSync(`${root}/${out}`).mtimeMs < statSync(`${root}/${SRC}`).mtimeMs;

// The decoders that build here: [label, threads, command, args before the checkpoint, env]
function buildDecoders(root, log) {
  mkdirSync(`${root}/build/llama`, { recursive: true });
  const make = (out, cmd, args, env = {}) => {
    if (!stale(root, out)) return true;
    const r = spawnSync(cmd, [...args, '-o', out, SRC, '-lm'], { cwd: root, encoding: 'utf8', env: { ...process.env, ...env } });
    if (r.status !== 0) log(`bench: W10 ${out} did not build (${cmd}): ${(r.stderr ?? r.error?.message ?? '').split('\n')[0]}`);
    return r.status === 0;
  };
  const rows = [];
  // Debian's emcc finds its acorn module through NODE_PATH; one .cjs with the wasm inside (Node's fetch cannot read a path)
  const emEnv = { NODE_PATH: ['/usr/share/nodejs', process.env.NODE_PATH].filter(Boolean).join(':') };
  if (make('build/llama/decode.cjs', 'emcc', ['-O3', '-msimd128', '-sALLOW_MEMORY_GROWTH=1', '-sNODERAWFS=1',
    '-sENVIRONMENT=node', '-sSINGLE_FILE=1'], emEnv)) {
    rows.push(['c-wasm', 1, process.execPath, ['build/llama/decode.cjs'], {}]);
  }
  if (make('build/llama/decode', 'gcc', ['-O3', '-march=native'])) rows.push(['c-native', 1, 'build/llama/decode', [], {}]);
  if (make('build/llama/decode-omp', 'gcc', ['-O3', '-march=native', '-fopenmp'])) {
    rows.push(['c-native-openmp', 2, 'build/llama/decode-omp', [], { OMP_NUM_THREADS: '2' }]);
  }
  return rows;
}

function runRow(root, log, what, cmd, args, env = {}) {
  log(`bench: W10 ${what}`);
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24, env: { ...process.env, ...env } });
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('{'));
  if (r.status !== 0 || !line) {
    log(`bench: W10 ${what} failed (${cmd} ${args.slice(0, 2).join(' ')} ...)\n${(r.stderr ?? r.error?.message ?? '').slice(-2000)}`);
    return null;
  }
  return JSON.parse(line);
}

// Every row of W10, each in its own process, one after the other.
export function llamaRows({ root, log, reps, has }) {
  if (!existsSync(`${root}/${CHECK}`) || !existsSync(`${root}/${CKPT}`)) {
    log('bench: W10 weights (bench/models/gen_llama_models.py into bench/models/out/)');
    const r = spawnSync('/usr/bin/python3', ['bench/models/gen_llama_models.py'], { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) {
      log(`bench: W10 skipped (gen_llama_models.py failed: ${(r.stderr ?? '').split('\n').slice(-2).join(' ')})`);
      return { rows: [], check: null };
    }
  }
  const check = JSON.parse(readFileSync(`${root}/${CHECK}`, 'utf8'));
  const steps = String(check.gen_ids.length), n = String(reps);
  const rows = [];
  const add = (r, extra) => { if (r) rows.push({ name: 'W10 stories15M', ...r, ...extra }); };
  for (const [build, threads, cmd, pre, env] of buildDecoders(root, log)) {
    add(runRow(root, log, `${build} threads=${threads}`, cmd, [...pre, CKPT, '--steps', steps, '--start',
      String(check.gen_start), '--prompt', check.prompt.join(','), '--reps', n], env), { build });
  }
  for (const t of has('--no-peers') ? [] : [1, 2]) {
    add(runRow(root, log, `pytorch threads=${t}`, '/usr/bin/python3', ['bench/models/torch_llama_bench.py', '--threads',
      String(t), '--reps', n]));
  }
  for (const [lib, threads] of has('--no-wasm') ? [] : [['weft-simd', 1], ['weft-simd-threads', 1], ['weft-simd-threads', 2]]) {
    add(runRow(root, log, `${lib} threads=${threads}`, process.execPath, ['bench/llama_bench.mjs', lib, '--threads',
      String(threads), '--reps', n]));
  }
  return { rows, check };
}

// Each row's ids against PyTorch's from the generator: the rows that differ.
function mismatches(rows, check) {
  const bad = [];
  for (const r of rows) {
    const i = r.ids.findIndex((id, k) => id !== check.gen_ids[k]);
    const lengthOk = r.ids.length === check.gen_ids.length;
    r.ids_ok = i < 0 && lengthOk && r.prefill_next === check.prefill_next;
    if (!r.ids_ok) {
      bad.push(`${r.build} t${r.threads}: ` + (i >= 0 || !lengthOk
        ? `token ${i >= 0 ? i : r.ids.length} is ${r.ids[i]}, PyTorch's reference ${check.gen_ids[i]}`
        : `the token after the prompt is ${r.prefill_next}, PyTorch's reference ${check.prefill_next}`));
    }
  }
  return bad;
}

// The table, the ratios to C wasm and the id check; false when a check failed.
export function llamaReport({ rows, check }, json) {
  if (!check) return true;
  const bad = mismatches(rows, check);
  const find = (b, t) => rows.find((r) => r.build === b && r.threads === t);
  const base = find('c-wasm', 1);
  for (const r of rows) r.vs_c_wasm = base ? +(r.tok_s / base.tok_s).toFixed(3) : null;
  if (json) {
    for (const r of rows) console.log(JSON.stringify({ ...r, ids: undefined }));
  } else {
    console.log('\nW10: stories15M (random weights), batch 1: tokens/s of 128 greedy tokens from token 1, ms to prefill a ' +
      '256-token prompt; median of the runs; vs C wasm: tokens/s over the C decoder\'s in wasm at 1 thread');
    console.log(`${'build'.padEnd(22)}threads ${'tok/s'.padStart(8)} ${'prefill ms'.padStart(11)}  vs C wasm  ids`);
    for (const r of rows) {
      console.log(`${r.build.padEnd(22)}${String(r.threads).padEnd(8)}${r.tok_s.toFixed(1).padStart(8)} ` +
        `${r.prefill_ms.toFixed(1).padStart(11)}  ${(r.vs_c_wasm === null ? '-' : `${r.vs_c_wasm.toFixed(2)}x`).padStart(9)}  ` +
        `${r.ids_ok ? 'same' : 'DIFFERENT'}`);
    }
    const w1 = find('wasm-simd-threads', 1) ?? find('wasm-simd', 1), w2 = find('wasm-simd-threads', 2);
    if (base && w1) console.log(`weft 1 thread / C wasm: ${(w1.tok_s / base.tok_s).toFixed(2)}x (target >= 1)`);
    if (base && w2) console.log(`weft 2 threads / C wasm: ${(w2.tok_s / base.tok_s).toFixed(2)}x (target >= 1.6)`);
  }
  for (const b of bad) console.error(`bench: W10 FAILED CHECK: ${b}`);
  if (!bad.length && rows.length) console.error(`bench: W10 every row's ${check.gen_ids.length} token ids and next token equal PyTorch's`);
  return bad.length === 0;
}
