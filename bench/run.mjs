// npm run bench [-- --json] [--reps N] [--no-native] [--no-wasm] [--no-build]
//
// The issue-5 benchmarks in one run: the native release build of
// bench/bench_weft.c (built here with CMake), then each wasm variant of dist/
// (rebuilt with scripts/build.sh unless --no-build) in its own Node process
// (bench/wasm_bench.mjs), one after the other so they never share the cores.
// Every figure is a median of --reps runs (default 15) after warm-up; ratios
// divide by a ceiling measured in the same process with the same thread
// count (memcpy of the same bytes, or a 3-stream SIMD add for `add`).
// --json prints one JSON object per line: name, build ('native' |
// 'wasm-simd' | 'wasm-simd-threads'), threads, ms, GB/s, ratio, ceiling.
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const has = (f) => args.includes(f);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const json = has('--json');
const reps = opt('--reps', '15');
const log = (s) => process.stderr.write(`${s}\n`);

function run(cmd, cmdArgs, what) {
  const r = spawnSync(cmd, cmdArgs, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) {
    log(r.stdout ?? '');
    log(r.stderr ?? '');
    throw new Error(`bench: ${what} failed (${cmd} ${cmdArgs.join(' ')})`);
  }
  if (r.stderr) process.stderr.write(r.stderr);
  return r.stdout;
}

function parseLines(out) {
  return out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

const results = [];
function emit(rows) {
  for (const r of rows) {
    results.push(r);
    if (json) console.log(JSON.stringify(r));
  }
}

if (!has('--no-native')) {
  const dir = 'build/bench-native';
  log('bench: building the native release benchmark');
  run('cmake', ['-S', '.', '-B', dir, '-DCMAKE_BUILD_TYPE=Release', '-DWEFT_BUILD_TESTS=ON', '-DWEFT_SANITIZE=OFF'],
    'cmake configure');
  run('cmake', ['--build', dir, '-j2', '--target', 'bench_weft'], 'cmake build');
  log('bench: native');
  const out = run(`${dir}/bench_weft`, ['--json', '--reps', reps, '--threads', '1,2'], 'native bench');
  emit(parseLines(out).map(({ isa, ...r }) => r));
}

if (!has('--no-wasm')) {
  if (!has('--no-build')) {
    log('bench: building dist/ (scripts/build.sh)');
    execFileSync('bash', ['scripts/build.sh'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  for (const [variant, threads] of [['simd', '1'], ['simd-threads', '1,2']]) {
    log(`bench: wasm-${variant}`);
    const out = run(process.execPath, ['bench/wasm_bench.mjs', variant, '--threads', threads, '--reps', reps],
      `wasm-${variant}`);
    emit(parseLines(out));
  }
}

if (!json) {
  const cols = [...new Set(results.map((r) => `${r.build} t${r.threads}`))];
  const names = [...new Set(results.map((r) => r.name))];
  const cell = (r) => (r ? `${r['GB/s'].toFixed(2).padStart(6)} ${r.ratio.toFixed(2)}x` : '').padEnd(14);
  console.log('GB/s (bytes read + written / median time) and ratio to the same-run ceiling');
  console.log(`${''.padEnd(20)}${cols.map((c) => c.padEnd(14)).join(' ')}`);
  for (const n of names) {
    const row = cols.map((c) => cell(results.find((r) => r.name === n && `${r.build} t${r.threads}` === c)));
    console.log(`${n.padEnd(20)}${row.join(' ')}`);
  }
  const byName = (n, b, t) => results.find((r) => r.name === n && r.build === b && r.threads === t);
  const t1 = byName('nchw_to_nhwc', 'wasm-simd-threads', 1);
  const t2 = byName('nchw_to_nhwc', 'wasm-simd-threads', 2);
  if (t1 && t2) console.log(`nchw_to_nhwc wasm 2 threads / 1 thread: ${(t1.ms / t2.ms).toFixed(2)}x`);
  const n1 = byName('nchw_to_nhwc', 'native', 1);
  const n2 = byName('nchw_to_nhwc', 'native', 2);
  if (n1 && n2) console.log(`nchw_to_nhwc native 2 threads / 1 thread: ${(n1.ms / n2.ms).toFixed(2)}x`);
}
