// npm run bench [-- --json] [--reps N] [--no-native] [--no-wasm] [--no-build] [--no-peers] [--no-gemm]
//               [--no-pool] [--no-conv] [--no-reduce] [--no-shape] [--no-sort] [--no-index] [--no-gemv]
//               [--only native|wasm|peers|gemm|gemv|pool|conv|cnn|llama|reduce|small|shape|cat|sort|index|train|attention|cast|startup]
//
// The issue-5 benchmarks in one run: the native release build of
// bench/bench_weft.c (built here with CMake), then each wasm variant of dist/
// (rebuilt with scripts/build.sh unless --no-build) in its own Node process
// (bench/wasm_bench.mjs), one after the other so they never share the cores.
// Every figure is a median of --reps runs (default 15) after warm-up; ratios
// divide by a ceiling measured in the same process with the same thread
// count (memcpy of the same bytes, or a 3-stream SIMD add for `add`).
// Then the peers of /work/shared/ANCHORS.md when their devDependencies are
// installed (bench/peers.mjs, each in its own process: tfjs-wasm and
// ndarray-ops / a plain JS loop on 1 thread, onnxruntime-web on 1 and 2);
// a peer's ratio divides its GB/s by the best weft wasm ceiling of the same
// run and thread count.
// --json prints one JSON object per line: name, build ('native' |
// 'wasm-simd' | 'wasm-simd-threads' | a peer), threads, ms, GB/s, ratio, ceiling.
// Then the small-op rows (issue 14, bench/small_ops_bench.mjs; --no-small skips
// them): a 1-element add and a 4-element tensor() with dispose, beside PyTorch
// native, and pointwise ops on a CHW view of an HWC image vs a contiguous copy.
// Then the GEMM rows (issue 12, bench/gemm_bench.mjs; --no-gemm skips them):
// weft wasm-simd-threads, tfjs-wasm and onnxruntime-web at 1 and 2 threads,
// GFLOP/s = 2 M N K / median time, ratio to tfjs-wasm at the same threads.
// Then the pooling rows (bench/pool_bench.mjs; --no-pool skips them): weft
// wasm-simd-threads at 1 and 2 threads beside tfjs-wasm and onnxruntime-web,
// ms and each peer's time / weft's at the same thread count (> 1: weft ahead).
// --only <section> runs that section alone (e.g. --only pool).
// Then the autograd rows (issue 15, bench/autograd_bench.mjs; --no-autograd skips them).
// Then the training-step rows (issue 15, bench/train_bench.mjs; --only train):
// one SGD step of an MLP and of the digits CNN, weft beside tfjs-wasm and
// jax-js, ms/step, weft / peer, and weft's backward / forward.
// Then the joining rows (issue 13, bench/cat_bench.mjs; --only cat): cat and
// stack of contiguous float32 beside the same run's memcpy of the same bytes
// and tfjs-wasm's concat / stack.
// Then the gathering rows (issue 13, bench/index_bench.mjs; --no-index skips
// them): indexSelect and gather of 4096 indices along the last dim of
// [4096, 1024] float32, weft wasm-simd-threads at 1 and 2 threads beside
// tfjs-wasm's gather and onnxruntime-web's Gather, with the time ratios.
// Then the reduction rows (issue 11, bench/reduce_bench.mjs; --no-reduce
// skips them, --only reduce runs nothing else): sum of 16M float32 beside
// the same process's memcpy, [32,64,56,56] summed over (2,3) contiguous and
// channels_last, softmax and argmax of [512,1000]; weft wasm-simd-threads at
// 1 and 2 threads and wasm-simd, tfjs-wasm and onnxruntime-web, with the
// issue's ratios (sum / memcpy, channels_last / contiguous, weft / peers,
// 2 threads / 1 thread).
// Then the conv2d rows (bench/conv_bench.mjs; --no-conv skips them): weft
// wasm-simd-threads in NCHW and channels_last at 1 and 2 threads, tfjs-wasm
// (NHWC) and onnxruntime-web (NCHW) beside them, GFLOP/s and ratios to both.
// --only <native|wasm|peers|gemm|conv> runs that group alone (and builds
// dist/ only when it is missing): `node bench/run.mjs --only conv`.
// Then W10 (issue 24, bench/llama_run.mjs; --only llama, --no-llama skips it): stories15M token
// generation, weft/models' llama beside llama2.c's run.c (bench/peers/llama2c/) and a C decoder of ours (wasm, native, OpenMP) and PyTorch eager.
// --clock cpu times the conv rows by the process's CPU time (robust on a
// loaded machine; at 2 threads it counts both threads' time).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { llamaReport, llamaRows } from './llama_run.mjs';

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
const only = opt('--only', null);
const section = (name) => (only ? only === name : !has(`--no-${name}`));

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

// One library's rows from a one-library bench script (gemm_bench, reduce_bench); none if it fails.
function libraryRows(script, what, lib, t) {
  log(`bench: ${what} ${lib} threads=${t}`);
  try {
    return parseLines(run(process.execPath, [script, lib, '--threads', String(t), '--reps', reps], `${what} ${lib}`));
  } catch (e) {
    log(e.message);
    return [];
  }
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

if (section('native')) {
  const dir = 'build/bench-native';
  log('bench: building the native release benchmark');
  run('cmake', ['-S', '.', '-B', dir, '-DCMAKE_BUILD_TYPE=Release', '-DWEFT_BUILD_TESTS=ON', '-DWEFT_SANITIZE=OFF'],
    'cmake configure');
  run('cmake', ['--build', dir, '-j2', '--target', 'bench_weft'], 'cmake build');
  log('bench: native');
  const out = run(`${dir}/bench_weft`, ['--json', '--reps', reps, '--threads', '1,2'], 'native bench');
  emit(parseLines(out).map(({ isa, ...r }) => r));
}

if (section('wasm')) {
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

// the peers' own package (bench/peers), installed from its lock on first use
function ensurePeers() {
  if (existsSync(`${root}/bench/peers/node_modules`) || has('--no-peers')) return;
  log('bench: installing the peers (bench/peers: npm install from its lock)');
  try {
    run('npm', ['install', '--silent', '--no-audit', '--no-fund', '--prefix', `${root}/bench/peers`], 'npm install');
  } catch (e) {
    log(`bench: peers not installed (${e.message.split('\n')[0]})`);
  }
}

if (section('peers')) {
  const peers = [['tfjs-wasm', '@tensorflow/tfjs-backend-wasm', [1, 2]], ['onnxruntime-web', 'onnxruntime-web', [1, 2]],
    ['ndarray-ops', 'ndarray-ops', [1]], ['js-loop', null, [1]]];
  const ceilingOf = (name, threads) => {
    const c = results.filter((r) => r.build.startsWith('wasm-') && r.threads === threads && r.name === name);
    return c.length ? Math.max(...c.map((r) => r['GB/s'])) : NaN;
  };
  const ceilingName = { add: 'add3_simd_ceiling', cast_f32_f16: 'memcpy_4M' };
  ensurePeers();
  for (const [peer, pkg, threadList] of peers) {
    if (pkg && !existsSync(`${root}/bench/peers/node_modules/${pkg}`)) {
      log(`bench: ${peer} skipped (bench/peers/node_modules/${pkg} is missing)`);
      continue;
    }
    for (const t of threadList) {
      log(`bench: ${peer} threads=${t}`);
      let out;
      try {
        out = run(process.execPath, ['bench/peers.mjs', peer, '--threads', String(t), '--reps', reps], peer);
      } catch (e) {
        log(e.message);
        continue;
      }
      emit(parseLines(out).map((r) => {
        const ceiling = ceilingName[r.name] ?? 'memcpy';
        return { ...r, ratio: +(r['GB/s'] / ceilingOf(ceiling, r.threads)).toFixed(3), ceiling: `wasm ${ceiling}` };
      }));
    }
  }
}

// weft wasm-simd-threads, tfjs-wasm and onnxruntime-web at 1 and 2 threads,
// each in its own process of `script` (gemm_bench.mjs, pool_bench.mjs)
function libRows(script, label) {
  ensurePeers();
  const rows = [];
  const libs = [['weft-simd-threads', null], ['tfjs-wasm', '@tensorflow/tfjs-backend-wasm'],
    ['onnxruntime-web', 'onnxruntime-web']];
  for (const [lib, pkg] of libs) {
    if (lib.startsWith('weft') ? has('--no-wasm') : has('--no-peers')) continue;
    if (pkg && !existsSync(`${root}/bench/peers/node_modules/${pkg}`)) {
      log(`bench: ${label} ${lib} skipped (bench/peers/node_modules/${pkg} is missing)`);
      continue;
    }
    for (const t of [1, 2]) {
      log(`bench: ${label} ${lib} threads=${t}`);
      try {
        rows.push(...parseLines(run(process.execPath, [script, lib, '--threads', String(t), '--reps', reps],
          `${label} ${lib}`)));
      } catch (e) {
        log(e.message);
      }
    }
  }
  return rows;
}

const gemmRows = [];
if (section('gemm')) {
  gemmRows.push(...libRows('bench/gemm_bench.mjs', 'gemm'));
  for (const r of gemmRows) {
    const tf = gemmRows.find((p) => p.build === 'tfjs-wasm' && p.name === r.name && p.threads === r.threads);
    r.ratio = tf ? +(r['GFLOP/s'] / tf['GFLOP/s']).toFixed(3) : null;
    if (json) console.log(JSON.stringify(r));
  }
}

const poolRows = [];
if (section('pool')) {
  poolRows.push(...libRows('bench/pool_bench.mjs', 'pool'));
  // each peer's time over weft's at the same thread count
  for (const r of poolRows) {
    if (!r.build.startsWith('wasm-')) continue;
    for (const peer of ['tfjs-wasm', 'onnxruntime-web']) {
      const p = poolRows.find((x) => x.build === peer && x.name === r.name && x.threads === r.threads);
      r[`vs ${peer}`] = p ? +(p.ms / r.ms).toFixed(3) : null;
    }
  }
  if (json) for (const r of poolRows) console.log(JSON.stringify(r));
}

// ---- gathering (issue 13): indexSelect / gather along the last dim ----
const indexRows = [];
if (section('index')) {
  indexRows.push(...libRows('bench/index_bench.mjs', 'index'));
  // each peer's time over weft's (> 1: weft ahead), at the same thread count when the peer ran it,
  // else beside its 1-thread time
  for (const r of indexRows) {
    if (!r.build.startsWith('wasm-')) continue;
    for (const peer of ['tfjs-wasm', 'onnxruntime-web']) {
      const p = indexRows.find((x) => x.build === peer && x.name === r.name && x.threads === r.threads) ??
        indexRows.find((x) => x.build === peer && x.name === r.name && x.threads === 1);
      r[`vs ${peer}`] = p ? +(p.ms / r.ms).toFixed(3) : null;
    }
  }
  if (json) for (const r of indexRows) console.log(JSON.stringify(r));
}

const convRows = [];
if (section('conv')) {
  if (only && !existsSync(`${root}/dist/index.js`)) {
    log('bench: building dist/ (scripts/build.sh)');
    execFileSync('bash', ['scripts/build.sh'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const libs = [['weft-simd-threads', null, [1, 2]], ['tfjs-wasm', '@tensorflow/tfjs-backend-wasm', [1, 2]],
    ['onnxruntime-web', 'onnxruntime-web', [1, 2]]];
  for (const [lib, pkg, threadList] of libs) {
    if (lib.startsWith('weft') ? has('--no-wasm') && !only : has('--no-peers') && !only) continue;
    if (pkg && !existsSync(`${root}/bench/peers/node_modules/${pkg}`)) {
      log(`bench: conv ${lib} skipped (bench/peers/node_modules/${pkg} is missing)`);
      continue;
    }
    for (const t of threadList) {
      log(`bench: conv ${lib} threads=${t}`);
      try {
        convRows.push(...parseLines(run(process.execPath, ['bench/conv_bench.mjs', lib, '--threads', String(t),
          '--reps', reps, '--clock', opt('--clock', 'wall')], `conv ${lib}`)));
      } catch (e) {
        log(e.message);
      }
    }
  }
  // ratios to tfjs-wasm at the same thread count and to onnxruntime-web
  for (const r of convRows) {
    const peer = (b) => convRows.find((p) => p.build === b && p.name === r.name && p.threads === r.threads);
    const tf = peer('tfjs-wasm'), ort = peer('onnxruntime-web');
    r.ratio = tf ? +(r['GFLOP/s'] / tf['GFLOP/s']).toFixed(3) : null;
    r.ratio_ort = ort ? +(r['GFLOP/s'] / ort['GFLOP/s']).toFixed(3) : null;
    if (json) console.log(JSON.stringify(r));
  }
}

if (!json && results.length) {
  const cols = [...new Set(results.map((r) => `${r.build} t${r.threads}`))];
  const names = [...new Set(results.map((r) => r.name))];
  const fmt = (v) => (Number.isFinite(v) ? v.toFixed(2) : '-');
  const text = (r) => (r ? `${r['GB/s'].toFixed(2).padStart(6)} ${fmt(r.ratio)}x${r.ratio_paired !== undefined ? ` (${fmt(r.ratio_paired)})` : ''}` : '');
  const width = cols.map((c) => Math.max(c.length, ...results.filter((r) => `${r.build} t${r.threads}` === c).map((r) => text(r).length)));
  const cell = (r, w) => text(r).padEnd(w);
  console.log('GB/s (bytes read + written / median time), ratio to the same-run ceiling (paired: median of in-round ratios)');
  console.log(`${''.padEnd(20)}${cols.map((c, i) => c.padEnd(width[i])).join(' ')}`);
  for (const n of names) {
    const row = cols.map((c, i) => cell(results.find((r) => r.name === n && `${r.build} t${r.threads}` === c), width[i]));
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
if (!json && gemmRows.length) {
  const cols = [...new Set(gemmRows.map((r) => `${r.build} t${r.threads}`))];
  console.log('\nGEMM GFLOP/s (2 M N K / median time), ratio to tfjs-wasm at the same thread count');
  console.log(`${''.padEnd(20)}${cols.map((c) => c.padEnd(24)).join('')}`);
  for (const n of [...new Set(gemmRows.map((r) => r.name))]) {
    const cell = (c) => {
      const r = gemmRows.find((x) => x.name === n && `${x.build} t${x.threads}` === c);
      return (r ? `${r['GFLOP/s'].toFixed(2).padStart(7)} ${r.ratio === null ? '-' : r.ratio.toFixed(2)}x` : '').padEnd(24);
    };
    console.log(`${n.padEnd(20)}${cols.map(cell).join('')}`);
  }
}
if (!json && poolRows.length) {
  const cols = [...new Set(poolRows.map((r) => `${r.build} t${r.threads}`))];
  console.log('\nPooling, x [8, 64, 56, 56] float32: median ms; weft rows: (tfjs-wasm ms / weft ms, onnxruntime-web ms / weft ms)');
  console.log(`${''.padEnd(18)}${cols.map((c) => c.padEnd(28)).join('')}`);
  const f = (v) => (v === null || v === undefined ? '-' : `${v.toFixed(2)}x`);
  for (const n of [...new Set(poolRows.map((r) => r.name))]) {
    const cell = (c) => {
      const r = poolRows.find((x) => x.name === n && `${x.build} t${x.threads}` === c);
      if (!r) return ''.padEnd(28);
      const vs = r.build.startsWith('wasm-') ? ` (${f(r['vs tfjs-wasm'])}, ${f(r['vs onnxruntime-web'])})` : '';
      return `${r.ms.toFixed(3).padStart(8)}${vs}`.padEnd(28);
    };
    console.log(`${n.padEnd(18)}${cols.map(cell).join('')}`);
  }
}
if (!json && indexRows.length) {
  console.log('\nGathering, x [4096, 1024] float32, 4096 indices on dim 1 -> [4096, 4096]: median ms; weft rows: ' +
    '(tfjs-wasm ms / weft ms, onnxruntime-web ms / weft ms, at the same thread count)');
  const f = (v) => (v === null || v === undefined ? '-' : `${v.toFixed(2)}x`);
  for (const r of indexRows) {
    const vs = r.build.startsWith('wasm-') ? `  (${f(r['vs tfjs-wasm'])}, ${f(r['vs onnxruntime-web'])})` : '';
    console.log(`${r.name.padEnd(20)}${r.build.padEnd(20)}t${r.threads}  ${r.ms.toFixed(3).padStart(9)} ms${vs}`);
  }
}
if (!json && convRows.length) {
  const f = (v) => (v === null ? '   -' : `${v.toFixed(2)}x`);
  console.log(`\nconv2d GFLOP/s (2 N Ho Wo Cout C/groups kh kw / median ${opt('--clock', 'wall')} time), ratio to tfjs-wasm and to onnxruntime-web`);
  console.log(`${'workload'.padEnd(14)}${'build'.padEnd(34)}threads  ${'ms'.padStart(9)} ${'GFLOP/s'.padStart(8)}  vs tfjs  vs ort`);
  for (const r of convRows) {
    console.log(`${r.name.padEnd(14)}${`${r.build} ${r.layout}`.padEnd(34)}${String(r.threads).padEnd(9)}${r.ms.toFixed(2).padStart(9)} ` +
      `${r['GFLOP/s'].toFixed(2).padStart(8)}  ${f(r.ratio).padStart(6)}  ${f(r.ratio_ort).padStart(6)}`);
  }
}
// ---- W9: eval-mode CNNs (issue 23) ----
// resnet18 and mobilenet_v2 (torchvision's, weights of bench/models/gen_cnn_models.py,
// generated into bench/models/out/ when missing), batch 1, 224x224, ms per image: weft
// wasm-simd-threads in NCHW and channels_last (and channels_last unfused) at 1 and 2
// threads (bench/cnn_bench.mjs, logits checked against PyTorch's first), onnxruntime-web
// at 1 and 2 on the ONNX export of the same weights, PyTorch native (python, 1 and 2
// threads, NCHW and channels_last). `node bench/run.mjs --only cnn [--clock cpu]` (cpu: process CPU
// time, for a loaded machine; at 2 threads it counts both threads' time).
const cnnRows = [];
if (section('cnn')) {
  if (only && !existsSync(`${root}/dist/index.js`)) {
    log('bench: building dist/ (scripts/build.sh)');
    execFileSync('bash', ['scripts/build.sh'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const python = '/usr/bin/python3';
  let ready = existsSync(`${root}/bench/models/out/check.safetensors`);
  if (!ready) {
    log('bench: W9 models (bench/models/gen_cnn_models.py into bench/models/out/)');
    try {
      run(python, ['bench/models/gen_cnn_models.py'], 'gen_cnn_models.py');
      ready = true;
    } catch (e) {
      log(`bench: W9 skipped (${e.message.split('\n')[0]})`);
    }
  }
  const libs = [['weft-simd-threads', null], ['onnxruntime-web', 'onnxruntime-web']];
  for (const [lib, pkg] of ready ? libs : []) {
    if (lib.startsWith('weft') ? has('--no-wasm') && !only : has('--no-peers') && !only) continue;
    if (pkg) ensurePeers();
    if (pkg && !existsSync(`${root}/bench/peers/node_modules/${pkg}`)) {
      log(`bench: W9 ${lib} skipped (bench/peers/node_modules/${pkg} is missing)`);
      continue;
    }
    for (const t of [1, 2]) {
      log(`bench: W9 ${lib} threads=${t}`);
      try {
        cnnRows.push(...parseLines(run(process.execPath, ['bench/cnn_bench.mjs', lib, '--threads', String(t),
          '--reps', reps, '--clock', opt('--clock', 'wall')], `W9 ${lib}`)));
      } catch (e) {
        log(e.message);
      }
    }
  }
  for (const t of ready && !has('--no-peers') ? [1, 2] : []) {
    log(`bench: W9 pytorch-native threads=${t}`);
    try {
      cnnRows.push(...parseLines(run(python, ['bench/models/torch_cnn_bench.py', '--threads', String(t), '--reps',
        reps, '--clock', opt('--clock', 'wall')], 'W9 pytorch-native')));
    } catch (e) {
      log(e.message);
    }
  }
  // weft's speed over onnxruntime-web's at the same thread count (> 1: weft ahead; the target is >= 2)
  for (const r of cnnRows) {
    const ort = cnnRows.find((p) => p.build === 'onnxruntime-web' && p.name === r.name && p.threads === r.threads);
    r.vs_ort = ort ? +(ort.ms / r.ms).toFixed(3) : null;
    if (json) console.log(JSON.stringify(r));
  }
  if (!json && cnnRows.length) {
    const f = (v) => (v === null ? '    -' : `${v.toFixed(2)}x`);
    console.log('\nW9: eval CNNs, batch 1, 224x224, ms per image (median); vs ort: onnxruntime-web\'s ms / this row\'s');
    console.log(`${'model'.padEnd(16)}${'build'.padEnd(42)}threads ${'ms'.padStart(8)}  vs ort`);
    for (const r of cnnRows) {
      console.log(`${r.name.padEnd(16)}${`${r.build} ${r.layout}`.padEnd(42)}${String(r.threads).padEnd(8)}` +
        `${r.ms.toFixed(2).padStart(8)}  ${f(r.vs_ort).padStart(6)}`);
    }
  }
}

// ---- W10: token generation (issue 24, bench/llama_run.mjs; --only llama, --no-llama) ----
// stories15M with random weights: a C decoder of our own in wasm and native, PyTorch eager and
// weft/models' llama, tokens/s of 128 greedy tokens and a 256-token prefill, every row's ids checked.
if (section('llama')) {
  if (only && !existsSync(`${root}/dist/index.js`)) {
    log('bench: building dist/ (scripts/build.sh)');
    execFileSync('bash', ['scripts/build.sh'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!llamaReport(llamaRows({ root, log, reps: Math.min(Number(reps), 5), has }), json)) process.exitCode = 1;
}

// ---- reductions (issue 11) ----

function reduceBench() {
  if (only === 'reduce' && !has('--no-build') && !has('--no-wasm')) {
    log('bench: building dist/ (scripts/build.sh)');
    execFileSync('bash', ['scripts/build.sh'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!has('--no-peers')) ensurePeers();
  const libs = [['weft-simd-threads', null, [1, 2]], ['weft-simd', null, [1]],
    ['tfjs-wasm', '@tensorflow/tfjs-backend-wasm', [1, 2]], ['onnxruntime-web', 'onnxruntime-web', [1, 2]]];
  const rows = [];
  for (const [lib, pkg, threadList] of libs) {
    if (lib.startsWith('weft') ? has('--no-wasm') : has('--no-peers')) continue;
    if (pkg && !existsSync(`${root}/bench/peers/node_modules/${pkg}`)) {
      log(`bench: reduce ${lib} skipped (bench/peers/node_modules/${pkg} is missing)`);
      continue;
    }
    for (const t of threadList) rows.push(...libraryRows('bench/reduce_bench.mjs', 'reduce', lib, t));
  }
  return rows;
}

function reduceReport(rows) {
  const find = (n, b, t) => rows.find((r) => r.name === n && r.build === b && r.threads === t);
  const weft = 'wasm-simd-threads';
  for (const r of rows) {
    const w = find(r.name, weft, r.threads);
    r.ratio = w && r.build !== weft ? +(w['GB/s'] / r['GB/s']).toFixed(3) : null; // weft / this library
    if (json) console.log(JSON.stringify(r));
  }
  if (json) return;
  const cols = [...new Set(rows.map((r) => `${r.build} t${r.threads}`))];
  console.log('\nReductions, GB/s of the bytes read (memcpy: read + written); (x): weft wasm-simd-threads at the same ' +
    'thread count / this library');
  console.log(`${''.padEnd(18)}${cols.map((c) => c.padEnd(24)).join('')}`);
  for (const n of [...new Set(rows.map((r) => r.name))]) {
    const cell = (c) => {
      const r = rows.find((x) => x.name === n && `${x.build} t${x.threads}` === c);
      return (r ? `${r['GB/s'].toFixed(2).padStart(7)}${r.ratio === null ? '' : ` (${r.ratio.toFixed(2)}x)`}` : '').padEnd(24);
    };
    console.log(`${n.padEnd(18)}${cols.map(cell).join('')}`);
  }
  for (const b of [weft, 'wasm-simd']) {
    for (const t of [1, 2]) {
      const sum = find('sum_16M', b, t), cp = find('memcpy_16M', b, t);
      const nchw = find('sum23_nchw', b, t), nhwc = find('sum23_nhwc', b, t);
      if (sum && cp) console.log(`${b} t${t}: sum_16M / memcpy_16M GB/s ${(sum['GB/s'] / cp['GB/s']).toFixed(2)}x (target >= 1.0)`);
      if (nchw && nhwc) console.log(`${b} t${t}: sum23 channels_last / contiguous time ${(nhwc.ms / nchw.ms).toFixed(2)}x (target <= 1.2)`);
    }
  }
  const s1 = find('sum_16M', weft, 1), s2 = find('sum_16M', weft, 2);
  if (s1 && s2) console.log(`${weft}: sum_16M 2 threads / 1 thread ${(s1.ms / s2.ms).toFixed(2)}x (target >= 1.6)`);
}

// Sorting (issue 13, bench/sort_bench.mjs; --no-sort skips it): topk k=5 / k=100 and a full
// sort of [512, 1000] float32 along the last dim, weft wasm-simd-threads at 1 and 2 threads
// beside tfjs-wasm at 1 and 2 threads; the target is topk5 ahead of tfjs-wasm.
const sortRows = [];
if (section('sort')) {
  ensurePeers();
  sortRows.push(...libraryRows('bench/sort_bench.mjs', 'sort', 'weft-simd-threads', 1),
    ...libraryRows('bench/sort_bench.mjs', 'sort', 'weft-simd-threads', 2));
  if (has('--no-peers')) log('bench: sort tfjs-wasm skipped (--no-peers)');
  else if (!existsSync(`${root}/bench/peers/node_modules/@tensorflow/tfjs-backend-wasm`)) {
    log('bench: sort tfjs-wasm skipped (bench/peers/node_modules/@tensorflow/tfjs-backend-wasm is missing)');
  } else {
    sortRows.push(...libraryRows('bench/sort_bench.mjs', 'sort', 'tfjs-wasm', 1),
      ...libraryRows('bench/sort_bench.mjs', 'sort', 'tfjs-wasm', 2));
  }
  for (const r of sortRows) {
    const tf = sortRows.find((p) => p.build === 'tfjs-wasm' && p.name === r.name && p.threads === r.threads);
    r['vs tfjs-wasm'] = tf && r.build !== 'tfjs-wasm' ? +(tf.ms / r.ms).toFixed(3) : null;
    if (json) console.log(JSON.stringify(r));
  }
  if (!json && sortRows.length) {
    console.log('\nSorting, x [512, 1000] float32, last dim: median ms (tfjs-wasm ms / weft ms; target topk5 > 1)');
    for (const r of sortRows) {
      const vs = r['vs tfjs-wasm'] === null ? '' : ` (${r['vs tfjs-wasm'].toFixed(2)}x)`;
      console.log(`${r.name.padEnd(10)}${`${r.build} t${r.threads}`.padEnd(24)}${r.ms.toFixed(3).padStart(9)}${vs}`);
    }
  }
}

if (section('reduce')) reduceReport(reduceBench());
if (section('autograd')) {
  // issue 15: add on plain tensors before / after autograd registered (the
  // Autograd key is skipped by the key set), and an MLP forward + backward
  log('bench: autograd');
  for (const [lib, t] of [['weft-simd', 1], ['weft-simd-threads', 1], ['weft-simd-threads', 2]]) {
    const out = run(process.execPath, ['bench/autograd_bench.mjs', lib, '--threads', String(t), '--reps', reps],
      `autograd ${lib}`);
    process.stdout.write(out);
  }
}

// The rows of a one-library bench script taking --clock (cat_bench, train_bench):
// each [lib, peer package or null, thread counts] of libs in its own process;
// a library whose package is missing, or that fails, gives none.
function clockRows(script, label, libs) {
  const rows = [];
  for (const [lib, pkg, threadList] of libs) {
    if (lib.startsWith('weft') ? has('--no-wasm') : has('--no-peers')) continue;
    if (pkg && !existsSync(`${root}/bench/peers/node_modules/${pkg}`)) {
      log(`bench: ${label} ${lib} skipped (bench/peers/node_modules/${pkg} is missing)`);
      continue;
    }
    for (const t of threadList) {
      log(`bench: ${label} ${lib} threads=${t}`);
      try {
        rows.push(...parseLines(run(process.execPath, [script, lib, '--threads', String(t), '--reps', reps,
          '--clock', opt('--clock', 'wall')], `${label} ${lib}`)));
      } catch (e) {
        log(e.message);
      }
    }
  }
  return rows;
}

// ---- training steps (issue 15, bench/train_bench.mjs; --only train) ----
// One SGD step of the MLP and of the digits CNN: weft wasm-simd (1 thread) and
// wasm-simd-threads (1 and 2), tfjs-wasm, tfjs-cpu (its conv2d has a gradient
// there), jax-js and jax-js under jit (one thread each in Node; tfjs-wasm at 1 and 2),
// each library in its own process; --clock cpu times by process CPU time.

function trainBench() {
  if (only === 'train' && !has('--no-build') && !existsSync(`${root}/dist/index.js`)) {
    log('bench: building dist/ (scripts/build.sh)');
    execFileSync('bash', ['scripts/build.sh'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!has('--no-peers')) ensurePeers();
  const libs = [['weft-simd', null, [1]], ['weft-simd-threads', null, [1, 2]],
    ['tfjs-wasm', '@tensorflow/tfjs-backend-wasm', [1, 2]], ['tfjs-cpu', '@tensorflow/tfjs-backend-cpu', [1]],
    ['jax-js', '@jax-js/jax', [1]], ['jax-js-jit', '@jax-js/jax', [1]]];
  return clockRows('bench/train_bench.mjs', 'train', libs);
}

// weft's step and forward times over each peer's (< 1: weft ahead; tfjs-wasm at
// the same thread count, the peers without threads at their 1-thread times), and
// weft's backward / forward: (forward + backward - forward) / forward.
function trainReport(rows) {
  const find = (n, b, t) => rows.find((r) => r.name === n && r.build === b && r.threads === t);
  const peers = ['tfjs-wasm', 'tfjs-cpu', 'jax-js', 'jax-js-jit'];
  for (const r of rows) {
    if (!r.build.startsWith('wasm-') || !/_(step|forward)$/.test(r.name)) continue;
    for (const p of peers) {
      const q = find(r.name, p, r.threads) ?? find(r.name, p, 1);
      r[`/ ${p}`] = q ? +(r.ms / q.ms).toFixed(3) : null;
    }
    if (!r.name.endsWith('_step')) continue;
    const model = r.name.slice(0, -5);
    const f = find(`${model}_forward`, r.build, r.threads), fb = find(`${model}_forward_backward`, r.build, r.threads);
    if (f && fb) {
      r.forward_ms = f.ms;
      r['backward/forward'] = +((fb.ms - f.ms) / f.ms).toFixed(2);
    }
  }
  if (json) {
    for (const r of rows) console.log(JSON.stringify(r));
    return;
  }
  const fx = (v) => (v === null || v === undefined ? '     -' : `${v.toFixed(2)}x`.padStart(6));
  console.log(`\nTraining step (forward, crossEntropy, backward, SGD), batch 64, median ${opt('--clock', 'wall')} ms; ` +
    'weft / peer: weft\'s time over the peer\'s at the same thread count (< 1: weft ahead; a peer without ' +
    'threads at its 1-thread time); bwd/fwd target <= 2' +
    (opt('--clock', 'wall') === 'cpu' ? '\n(cpu: the process\'s CPU time over all its threads, so 2-thread rows add the worker\'s ' +
      'spin-waits; compare them by wall time on an idle machine)' : ''));
  console.log(`${'model'.padEnd(6)}${'build'.padEnd(20)}threads ${'ms/step'.padStart(9)}  / tfjs  / tfjs-cpu  / jax-js  / jax-jit  ` +
    `${'fwd ms'.padStart(8)}  bwd/fwd  loss 0 -> 5`);
  for (const r of rows.filter((x) => x.name.endsWith('_step'))) {
    const w = r.build.startsWith('wasm-');
    console.log(`${r.name.slice(0, -5).padEnd(6)}${r.build.padEnd(20)}${String(r.threads).padEnd(8)}${r.ms.toFixed(2).padStart(9)}` +
      `  ${w ? fx(r['/ tfjs-wasm']) : '     -'}  ${(w ? fx(r['/ tfjs-cpu']) : '     -').padStart(8)}  ` +
      `${w ? fx(r['/ jax-js']) : '     -'}   ${(w ? fx(r['/ jax-js-jit']) : '     -').padStart(7)}   ` +
      `${r.forward_ms === undefined ? '       -' : r.forward_ms.toFixed(2).padStart(8)}  ` +
      `${r['backward/forward'] === undefined ? '      -' : r['backward/forward'].toFixed(2).padStart(7)}  ${r.loss0} -> ${r.loss5}`);
  }
  console.log('forward alone (the loss read back): median ms, weft / tfjs-wasm at the same thread count (target <= 1)');
  for (const r of rows.filter((x) => x.name.endsWith('_forward'))) {
    const vs = r.build.startsWith('wasm-') ? `  ${fx(r['/ tfjs-wasm'])}` : '';
    console.log(`${r.name.slice(0, -8).padEnd(6)}${r.build.padEnd(20)}${String(r.threads).padEnd(8)}${r.ms.toFixed(3).padStart(9)}${vs}`);
  }
}

if (section('train')) trainReport(trainBench());

// ---- joining (issue 13) ----

function catBench() {
  if (only === 'cat' && !has('--no-build') && !has('--no-wasm')) {
    log('bench: building dist/ (scripts/build.sh)');
    execFileSync('bash', ['scripts/build.sh'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!has('--no-peers')) ensurePeers();
  const libs = [['weft-simd-threads', null, [1, 2]], ['weft-simd', null, [1]], ['tfjs-wasm', '@tensorflow/tfjs-backend-wasm', [1, 2]]];
  return clockRows('bench/cat_bench.mjs', 'cat', libs);
}

// cat / stack against the same run's memcpy of the same bytes (target >= 0.8)
// and against tfjs-wasm at the same thread count (its time / weft's).
function catReport(rows) {
  const find = (n, b, t) => rows.find((r) => r.name === n && r.build === b && r.threads === t);
  const ceiling = { cat4_dim0: 'memcpy_16M', cat4_dim1: 'memcpy_16M', stack8: 'memcpy_8M' };
  for (const r of rows) {
    const c = ceiling[r.name] && r.build.startsWith('wasm-') ? find(ceiling[r.name], r.build, r.threads) : null;
    const tf = r.build.startsWith('wasm-') ? find(r.name, 'tfjs-wasm', r.threads) : null;
    r.vs_memcpy = c ? +(r['GB/s'] / c['GB/s']).toFixed(3) : null;
    r.vs_tfjs = tf ? +(tf.ms / r.ms).toFixed(3) : null;
    if (json) console.log(JSON.stringify(r));
  }
  if (json) return;
  const f = (v) => (v === null ? '     -' : `${v.toFixed(2)}x`.padStart(6));
  console.log(`\nJoining (${opt('--clock', 'wall')} clock), GB/s of the bytes read + written; / memcpy: the same-run ` +
    'copy of the same bytes (target >= 0.80); vs tfjs: its time / weft\'s');
  console.log(`${'workload'.padEnd(12)}${'build'.padEnd(20)}threads ${'ms'.padStart(8)} ${'GB/s'.padStart(7)}  / memcpy  vs tfjs`);
  for (const r of rows) {
    console.log(`${r.name.padEnd(12)}${r.build.padEnd(20)}${String(r.threads).padEnd(8)}${r.ms.toFixed(2).padStart(8)} ` +
      `${r['GB/s'].toFixed(2).padStart(7)}  ${f(r.vs_memcpy).padStart(8)}  ${f(r.vs_tfjs).padStart(6)}`);
  }
}

if (section('cat')) catReport(catBench());
if (section('small')) {
  log('bench: small ops');
  const out = run(process.execPath, ['bench/small_ops_bench.mjs', '--reps', String(Math.min(Number(reps), 9)),
    ...(json ? ['--json'] : [])], 'small ops');
  process.stdout.write(json ? out : `\n${out}`);
}
// Shape ops (issue 13, bench/shape_bench.mjs; --no-shape skips them): weft
// wasm-simd-threads at 1 and 2 threads, each op's GB/s beside the same run's clone.
if (section('shape') && !has('--no-wasm')) {
  const rows = [];
  for (const t of [1, 2]) rows.push(...libraryRows('bench/shape_bench.mjs', 'shape', 'weft-simd-threads', t));
  if (json) for (const r of rows) console.log(JSON.stringify(r));
  else {
    console.log('\nShape ops on float32 [1024, 1024] (weft wasm-simd-threads): ms, GB/s, GB/s / clone\'s');
    for (const r of rows) {
      console.log(`${r.name.padEnd(22)} t${r.threads} ${r.ms.toFixed(3).padStart(8)} ms ${r['GB/s'].toFixed(2).padStart(7)} ` +
        `GB/s ${r.vs_clone.toFixed(2)}x`);
    }
  }
}
// Fused attention (issue 24, bench/attention_bench.mjs; --only attention):
// scaledDotProductAttention at L = S = 1024, d = 64, 8 heads, forward, beside
// the composite matmul -> softmax -> matmul, and the decode path (1 or 4 rows, 1024 or 4096 keys);
// weft wasm-simd-threads at 1 and 2 threads; fused / composite as a speed-up
// (target >= 2x).
if (section('attention') && !has('--no-wasm')) {
  const rows = [];
  for (const t of [1, 2]) {
    log(`bench: attention weft-simd-threads threads=${t}`);
    rows.push(...parseLines(run(process.execPath, ['bench/attention_bench.mjs', 'weft-simd-threads', '--threads',
      String(t), '--reps', reps, '--clock', opt('--clock', 'wall')], 'attention')));
  }
  const find = (name, t) => rows.find((r) => r.name === name && r.threads === t);
  for (const r of rows) {
    const base = r.name.includes('decode') ? r.name.replace('decode_', 'decode_composite_')
      : r.name.includes('causal') ? 'sdpa_composite_causal_1024x1024_d64' : 'sdpa_composite_1024x1024_d64';
    const c = r.name.includes('composite') ? null : find(base, r.threads);
    r.vs_composite = c ? +(c.ms / r.ms).toFixed(2) : null;
  }
  if (json) for (const r of rows) console.log(JSON.stringify(r));
  else {
    console.log(`\nAttention, float32 [1, 8, L, 64] (weft wasm-simd-threads, ${opt('--clock', 'wall')} clock): ms, ` +
      'GFLOP/s, the composite\'s time / this (target >= 2x for the fused rows)');
    for (const r of rows) {
      console.log(`${r.name.padEnd(34)} t${r.threads} ${r.ms.toFixed(3).padStart(9)} ms ` +
        `${r['GFLOP/s'].toFixed(2).padStart(7)} GFLOP/s ${r.vs_composite === null ? '' : `${r.vs_composite.toFixed(2)}x`}`);
    }
  }
}

// Matrix-vector products (issue 24, bench/gemv_bench.mjs; --no-gemv skips them): a decode step's
// one-row products at the stories15M shapes, x @ W^T (linear) and x @ W (matmul), weft
// wasm-simd-threads at 1 and 2 threads: ms per call, GB/s of the weight, GB/s / the same run's
// copy of the weight (a copy's time / this one's). --gemv-baseline DIR runs the same rows on DIR's build
// (e.g. one from before the GEMV path) and prints old ms / new ms.
if (section('gemv') && !has('--no-wasm')) {
  const rows = [], base = [], baseDir = opt('--gemv-baseline', null);
  for (const t of [1, 2]) {
    rows.push(...libraryRows('bench/gemv_bench.mjs', 'gemv', 'weft-simd-threads', t));
    if (baseDir) {
      log(`bench: gemv baseline ${baseDir} threads=${t}`);
      try {
        base.push(...parseLines(run(process.execPath, ['bench/gemv_bench.mjs', 'weft-simd-threads', '--threads',
          String(t), '--reps', reps, '--dist', baseDir], 'gemv baseline')));
      } catch (e) {
        log(e.message);
      }
    }
  }
  const find = (list, n, t) => list.find((r) => r.name === n && r.threads === t);
  for (const r of rows) {
    const copy = find(rows, r.name.replace(/^[tn]_/, 'copy_'), r.threads), old = find(base, r.name, r.threads);
    r.vs_copy = copy && !r.name.startsWith('copy_') ? +(r['GB/s'] / copy['GB/s']).toFixed(3) : null;
    r.vs_old = old ? +(old.ms_call / r.ms_call).toFixed(3) : null;
    const one = find(rows, r.name, 1);
    r.vs_1thread = r.threads > 1 && one ? +(one.ms_call / r.ms_call).toFixed(3) : null;
    if (json) console.log(JSON.stringify(r));
  }
  if (!json && rows.length) {
    const f = (v) => (v === null ? '    -' : `${v.toFixed(2)}x`);
    console.log('\nGEMV: one row x [1, K] against W, float32 (t: linear, W [N, K]; n: matmul, W [K, N]; copy: W.copy_)' +
      '\nms per call, GB/s of W\'s bytes, vs copy: copy of W\'s ms / this one\'s, vs t1: 2 threads / 1, vs old: old build\'s ms / this one\'s');
    console.log(`${'workload'.padEnd(16)}threads ${'ms'.padStart(9)} ${'GB/s'.padStart(7)}  vs copy  vs t1  vs old`);
    for (const r of rows) {
      console.log(`${r.name.padEnd(16)}${String(r.threads).padEnd(8)}${r.ms_call.toFixed(4).padStart(9)} ` +
        `${r['GB/s'].toFixed(2).padStart(7)}  ${f(r.vs_copy).padStart(7)} ${f(r.vs_1thread).padStart(6)} ${f(r.vs_old).padStart(7)}`);
    }
  }
}

// ---- half-float casts (issue 26, bench/cast_bench.mjs; --only cast) ----
// 4M float32 <-> float16 / bfloat16 by copy_: weft wasm-simd and wasm-simd-threads at 1 and 2
// threads beside PyTorch native (bench/torch_cast_bench.py, F16C) at the same thread count;
// vs torch: PyTorch's ms / weft's (the target for f32_to_f16 is >= 0.7).
if (section('cast')) {
  const rows = clockRows('bench/cast_bench.mjs', 'cast', [['weft-simd', null, [1]], ['weft-simd-threads', null, [1, 2]]]);
  for (const t of has('--no-peers') ? [] : [1, 2]) {
    log(`bench: cast pytorch-native threads=${t}`);
    try {
      rows.push(...parseLines(run('/usr/bin/python3', ['bench/torch_cast_bench.py', '--threads', String(t), '--reps',
        reps, '--clock', opt('--clock', 'wall')], 'cast pytorch-native')));
    } catch (e) {
      log(e.message);
    }
  }
  for (const r of rows) {
    const pt = rows.find((p) => p.build === 'pytorch-native' && p.name === r.name && p.threads === r.threads);
    r.vs_torch = pt && r !== pt ? +(pt.ms / r.ms).toFixed(3) : null;
    if (json) console.log(JSON.stringify(r));
  }
  if (!json && rows.length) {
    console.log(`\nHalf-float casts of 4M elements by copy_: median ${opt('--clock', 'wall')} ms, GB/s, vs torch: PyTorch native's ms / this one's`);
    for (const r of rows) {
      console.log(`${r.name.padEnd(13)}${r.build.padEnd(20)}t${r.threads}  ${r.ms.toFixed(3).padStart(8)} ms ` +
        `${r['GB/s'].toFixed(2).padStart(7)} GB/s${r.vs_torch === null ? '' : `  ${r.vs_torch.toFixed(2)}x`}`);
    }
  }
}

// ---- size and startup (issue 26, bench/startup_bench.mjs; --only startup) ----
// Each variant's .wasm raw and gzipped, and init() to the first op's result in fresh
// Node processes and fresh Chromium profiles (target <= 100 ms).
if (section('startup')) {
  log('bench: startup');
  const out = run(process.execPath, ['bench/startup_bench.mjs', ...(json ? ['--json'] : [])], 'startup');
  process.stdout.write(json ? out : `\n${out}`);
}
