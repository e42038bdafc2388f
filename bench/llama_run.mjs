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
// Beside them, llama2.c's own run.c (bench/peers/llama2c/, vendored unmodified,
// a benchmark peer only): the same emcc at -O3 -msimd128 and gcc -O3
// -march=native (-fopenmp on 2 threads), greedy (-t 0) for 128 tokens from its
// BOS token 1 with an empty prompt, on the same checkpoint. Its tokens are read
// back through a tokenizer.bin written here whose piece for token i is "i "
// (run.c prints pieces, not ids); its tok/s is its own report on stderr
// (wall clock, first token excluded). It has no token-id prompt, so no prefill.
// The targets are weft against this row: >= 1x its wasm tok/s at 1
// thread, >= 1.6x at 2.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';

const CHECK = 'bench/models/out/llama_check.json';
const CKPT = 'bench/models/out/stories15M.bin';
const SRC = 'bench/llama/decode.c';
const RUNC = 'bench/peers/llama2c/run.c';
const TOKENIZER = 'build/llama/llama2c_tokenizer.bin';

// out is missing or older than its source
const stale = (root, out, src) => !existsSync(`${root}/${out}`) ||
  statSync(`${root}/${out}`).mtimeMs < statSync(`${root}/${src}`).mtimeMs;

// src built three ways: [label, threads, command, args before the checkpoint, env] for those that build
function buildC(root, log, src, base, label) {
  mkdirSync(`${root}/build/llama`, { recursive: true });
  const make = (out, cmd, args, env = {}) => {
    if (!stale(root, out, src)) return true;
    const r = spawnSync(cmd, [...args, '-o', out, src, '-lm'], { cwd: root, encoding: 'utf8', env: { ...process.env, ...env } });
    if (r.status !== 0) log(`bench: W10 ${out} did not build (${cmd}): ${(r.stderr ?? r.error?.message ?? '').split('\n')[0]}`);
    return r.status === 0;
  };
  const rows = [];
  // Debian's emcc finds its acorn module through NODE_PATH; one .cjs with the wasm inside (Node's fetch cannot read a path)
  const emEnv = { NODE_PATH: ['/usr/share/nodejs', process.env.NODE_PATH].filter(Boolean).join(':') };
  if (make(`build/llama/${base}.cjs`, 'emcc', ['-O3', '-msimd128', '-sALLOW_MEMORY_GROWTH=1', '-sNODERAWFS=1',
    '-sENVIRONMENT=node', '-sSINGLE_FILE=1'], emEnv)) {
    rows.push([`${label}-wasm`, 1, process.execPath, [`build/llama/${base}.cjs`], {}]);
  }
  if (make(`build/llama/${base}`, 'gcc', ['-O3', '-march=native'])) rows.push([`${label}-native`, 1, `build/llama/${base}`, [], {}]);
  if (make(`build/llama/${base}-omp`, 'gcc', ['-O3', '-march=native', '-fopenmp'])) {
    rows.push([`${label}-native-openmp`, 2, `build/llama/${base}-omp`, [], { OMP_NUM_THREADS: '2' }]);
  }
  return rows;
}

// A tokenizer.bin in llama2.c's layout (max token length, then per token: score,
// byte length, bytes) whose piece for token i is "i " (decimal and a space): two
// bytes or more, so run.c's safe_printf never drops one, and never "<0x..>", so
// its decode never turns one into a raw byte; its stdout is then the ids.
function writeTokenizer(root, vocab) {
  const pieces = Array.from({ length: vocab }, (_, i) => Buffer.from(`${i} `));
  const out = Buffer.alloc(4 + pieces.reduce((n, p) => n + 8 + p.length, 0));
  let o = out.writeInt32LE(Math.max(...pieces.map((p) => p.length)), 0);
  for (const p of pieces) {
    o = out.writeFloatLE(0, o);
    o = out.writeInt32LE(p.length, o);
    o += p.copy(out, o);
  }
  writeFileSync(`${root}/${TOKENIZER}`, out);
}

// One run.c build: reps runs (after one warm-up), the median of its own tok/s report, its ids from stdout.
function runLlama2c(root, log, [build, threads, cmd, pre, env], steps, reps) {
  const what = `${build} threads=${threads}`;
  log(`bench: W10 ${what}`);
  const runs = [];
  for (let r = 0; r <= reps; r++) {
    const p = spawnSync(cmd, [...pre, CKPT, '-z', TOKENIZER, '-t', '0', '-n', steps, '-s', '1'],
      { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24, env: { ...process.env, ...env } });
    const tokS = /achieved tok\/s: ([0-9.]+)/.exec(p.stderr ?? '');
    if (p.status !== 0 || !tokS) {
      log(`bench: W10 ${what} failed (${cmd} ${pre.join(' ')} ...)\n${(p.stderr ?? p.error?.message ?? '').slice(-2000)}`);
      return null;
    }
    if (r > 0) runs.push({ tok_s: Number(tokS[1]), ids: p.stdout.trim().split(/\s+/).map(Number) });
  }
  runs.sort((a, b) => a.tok_s - b.tok_s);
  const mid = runs[runs.length >> 1];
  return { build, threads, ids: mid.ids, prefill_next: null, decode_ms: +(Number(steps) * 1000 / mid.tok_s).toFixed(3),
    tok_s: mid.tok_s, prefill_ms: null, reps };
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
  for (const [build, threads, cmd, pre, env] of buildC(root, log, SRC, 'decode', 'c')) {
    add(runRow(root, log, `${build} threads=${threads}`, cmd, [...pre, CKPT, '--steps', steps, '--start',
      String(check.gen_start), '--prompt', check.prompt.join(','), '--reps', n], env), { build });
  }
  if (existsSync(`${root}/${RUNC}`) && check.gen_start === 1) {
    writeTokenizer(root, check.config.vocab_size);
    for (const row of buildC(root, log, RUNC, 'llama2c_run', 'llama2c')) add(runLlama2c(root, log, row, steps, reps));
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
    r.ids_ok = i < 0 && lengthOk && (r.prefill_next === null || r.prefill_next === check.prefill_next);
    if (!r.ids_ok) {
      bad.push(`${r.build} t${r.threads}: ` + (i >= 0 || !lengthOk
        ? `token ${i >= 0 ? i : r.ids.length} is ${r.ids[i]}, PyTorch's reference ${check.gen_ids[i]}`
        : `the token after the prompt is ${r.prefill_next}, PyTorch's reference ${check.prefill_next}`));
    }
  }
  return bad;
}

// The table, the ratios to C wasm and to llama2.c's run.c in wasm, and the id check; false when a check failed.
export function llamaReport({ rows, check }, json) {
  if (!check) return true;
  const bad = mismatches(rows, check);
  const find = (b, t) => rows.find((r) => r.build === b && r.threads === t);
  const base = find('c-wasm', 1), runc = find('llama2c-wasm', 1);
  for (const r of rows) {
    r.vs_c_wasm = base ? +(r.tok_s / base.tok_s).toFixed(3) : null;
    r.vs_llama2c_wasm = runc ? +(r.tok_s / runc.tok_s).toFixed(3) : null;
  }
  if (json) {
    for (const r of rows) console.log(JSON.stringify({ ...r, ids: undefined }));
  } else {
    console.log('\nW10: stories15M (random weights), batch 1: tokens/s of 128 greedy tokens from token 1 | ms to prefill ' +
      'a 256-token prompt (median of the runs); ids: every token equal to PyTorch\'s reference');
    const cell = (r, f) => (r && f(r) !== null ? f(r) : '-');
    const line = (label, b1, b2) => {
      const [r1, r2] = [find(b1, 1), b2 && find(b2, 2)];
      const ok = [r1, r2].filter(Boolean).every((r) => r.ids_ok);
      console.log(`| ${label.padEnd(30)} | ${cell(r1, (r) => r.tok_s.toFixed(1)).padStart(8)} | ${cell(r2, (r) => r.tok_s.toFixed(1)).padStart(8)} ` +
        `| ${cell(r1, (r) => r.prefill_ms?.toFixed(1) ?? null).padStart(10)} | ${cell(r2, (r) => r.prefill_ms?.toFixed(1) ?? null).padStart(10)} | ` +
        `${r1 || r2 ? (ok ? 'same' : 'DIFFERENT') : '-'} |`);
    };
    console.log(`| ${'row'.padEnd(30)} | tok/s 1T | tok/s 2T | prefill 1T | prefill 2T | ids  |`);
    console.log(`|${'-'.repeat(32)}|----------|----------|------------|------------|------|`);
    line('llama2.c run.c, wasm', 'llama2c-wasm', null);
    line('llama2.c run.c, native (OpenMP)', 'llama2c-native', 'llama2c-native-openmp');
    line('C decoder, wasm', 'c-wasm', null);
    line('C decoder, native (2T OpenMP)', 'c-native', 'c-native-openmp');
    line('PyTorch eager', 'pytorch', 'pytorch');
    line('weft llama, wasm-simd', 'wasm-simd', null);
    line('weft llama, wasm-simd-threads', 'wasm-simd-threads', 'wasm-simd-threads');
    const ratio = (label, r, target) => {
      if (base && r) console.log(`${label} / C wasm: ${(r.tok_s / base.tok_s).toFixed(2)}x tokens/s (target >= ${target})`);
      if (runc && r) console.log(`${label} / llama2.c run.c wasm: ${(r.tok_s / runc.tok_s).toFixed(2)}x tokens/s (target >= ${target})`);
    };
    ratio('weft wasm-simd 1 thread', find('wasm-simd', 1), 1);
    ratio('weft wasm-simd-threads 1 thread', find('wasm-simd-threads', 1), 1);
    ratio('weft wasm-simd-threads 2 threads', find('wasm-simd-threads', 2), 1.6);
  }
  for (const b of bad) console.error(`bench: W10 FAILED CHECK: ${b}`);
  if (!bad.length && rows.length) console.error(`bench: W10 every row's ${check.gen_ids.length} token ids and next token (rows with a prefill) equal PyTorch's`);
  return bad.length === 0;
}
