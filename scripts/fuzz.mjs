// npm run fuzz: the fuzz targets. The libFuzzer targets tests/fuzz/fuzz_*.c
// (schema strings, view chains, TensorIterator build, boxed calls), built
// natively with clang, ASan+UBSan, in build/fuzz/; and the .npy reader's JS
// mutation fuzzer (scripts/fuzz_npy.mjs), and the checkpoint reader's
// (scripts/fuzz_pt.mjs, seeded from tests/fixtures/pt/). For each target it first replays
// every committed crash (tests/fuzz/<target>/crashes/: each is a regression
// test), then fuzzes for --time seconds from the committed seeds
// (tests/fuzz/<target>/corpus/, and <target>.dict when there is one) plus a
// working corpus in build/fuzz/corpus/<target>/. New crashes are written to
// build/fuzz/crashes/ and fail the run. Prints executions and time per target.
//   node scripts/fuzz.mjs [--time 5] [--target views] [--seed 1] [--jobs 1]
// npm test runs `--time 4`; `npm run fuzz -- --time 3600` for long runs.
// Without clang's libFuzzer runtime the build fails, saying what to install.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const arg = (k, d) => {
  const i = process.argv.indexOf(`--${k}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const seconds = Number(arg('time', 5));
const seed = Number(arg('seed', 1));
const only = arg('target', null);
const build = path.join(root, 'build/fuzz');
const C_TARGETS = ['schema', 'views', 'iter', 'boxed'];
const JS_TARGETS = ['npy', 'pt'];
const targets = [...C_TARGETS, ...JS_TARGETS].filter((t) => !only || t === only);
if (!targets.length) throw new Error(`fuzz: no target ${only} (targets: ${[...C_TARGETS, ...JS_TARGETS].join(', ')})`);

function buildNative() {
  const cc = process.env.WEFT_FUZZ_CC || 'clang';
  try {
    execFileSync(cc, ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(`fuzz: ${cc} not found: the libFuzzer targets need clang (Debian: apt-get install clang libclang-rt-dev; scripts/bootstrap.sh does this)`);
  }
  const run = (cmd, args) => {
    const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', env: { ...process.env, CC: cc } });
    if (r.status !== 0) {
      process.stderr.write(r.stdout + r.stderr);
      throw new Error(`fuzz: ${cmd} ${args.join(' ')} failed`);
    }
  };
  run('cmake', ['-S', '.', '-B', build, '-DWEFT_FUZZ=ON', '-DWEFT_BUILD_TESTS=OFF', '-DCMAKE_BUILD_TYPE=',
    '-DCMAKE_C_FLAGS=-O1 -g']);
  run('cmake', ['--build', build, `-j${process.env.WEFT_JOBS || 2}`]);
}

const env = {
  ...process.env,
  ASAN_OPTIONS: 'allocator_may_return_null=1:detect_leaks=1:abort_on_error=0',
  UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
};
const files = (dir) => (existsSync(dir) ? readdirSync(dir).sort().map((f) => path.join(dir, f)) : []);

function runC(t) {
  const bin = path.join(build, `fuzz_${t}`);
  const dir = path.join(root, 'tests/fuzz', t);
  const crashes = files(path.join(dir, 'crashes'));
  if (crashes.length) {
    const r = spawnSync(bin, crashes, { env, encoding: 'utf8' });
    if (r.status !== 0) {
      process.stderr.write(r.stderr.slice(-6000));
      throw new Error(`fuzz: ${t}: a committed crash fails again`);
    }
  }
  const work = path.join(build, 'corpus', t);
  const out = path.join(build, 'crashes');
  mkdirSync(work, { recursive: true });
  mkdirSync(out, { recursive: true });
  const args = [`-max_total_time=${seconds}`, `-seed=${seed}`, '-timeout=10', '-rss_limit_mb=2048',
    '-print_final_stats=1', `-artifact_prefix=${out}/${t}-`];
  const dict = path.join(dir, `${t}.dict`);
  if (existsSync(dict)) args.push(`-dict=${dict}`);
  args.push(work);
  if (existsSync(path.join(dir, 'corpus'))) args.push(path.join(dir, 'corpus'));
  const t0 = Date.now();
  const r = spawnSync(bin, args, { env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  const runs = /stat::number_of_executed_units:\s*(\d+)/.exec(r.stderr)?.[1] ?? '?';
  if (r.status !== 0) {
    process.stderr.write(r.stderr.split('\n').filter((l) => !/^(#\d+\s+(NEW|REDUCE|pulse|INITED)|INFO)/.test(l)).join('\n').slice(-8000));
    throw new Error(`fuzz: ${t}: a crash, a sanitizer report or a leak (input saved under ${out})`);
  }
  console.log(`fuzz: ${t}: ${runs} executions in ${secs} s, ${crashes.length} committed crashes replayed, seed ${seed}`);
}

async function runNpy() {
  const { init } = await import('../dist/index.js');
  const { fuzzNpy } = await import('./fuzz_npy.mjs');
  const wt = await init({ variant: 'simd' });
  const t0 = Date.now();
  const s = fuzzNpy(wt, { seconds, seed });
  console.log(`fuzz: npy: ${s.runs} executions in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
    `(${s.loaded} loaded, ${s.errors} WeftErrors), seed ${seed}`);
}

async function runPt() {
  const { init } = await import('../dist/index.js');
  const zip = await import('../dist/zip.js');
  const { fuzzPt } = await import('./fuzz_pt.mjs');
  const wt = await init({ variant: 'simd' });
  const t0 = Date.now();
  const s = fuzzPt(wt, zip, { seconds, seed });
  console.log(`fuzz: pt: ${s.runs} executions in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
    `(${s.loaded} loaded, ${s.errors} WeftErrors), seed ${seed}`);
}

if (targets.some((t) => C_TARGETS.includes(t))) buildNative();
for (const t of targets) {
  if (t === 'npy') await runNpy();
  else if (t === 'pt') await runPt();
  else runC(t);
}
