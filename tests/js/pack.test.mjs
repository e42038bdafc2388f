// npm pack's tarball installs into an empty folder and runs every
// demo/node/*.mjs there (the package must carry everything it needs; the
// examples' data files, demo/data/*.npy and *.pt, train_digits.mjs's shared loop,
// demo/train/*.mjs, and digits_cnn.mjs's model, demo/digits/*.mjs, sit beside the app as in the repo).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from 'weft';
import { mobilenetV2 } from 'weft/models';

const root = fileURLToPath(new URL('../../', import.meta.url));
const demo = join(root, 'demo/node');

function sh(cmd, args, cwd) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout: 120000, env: { ...process.env, npm_config_update_notifier: 'false' } },
      (err, out, errOut) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${errOut}`))
        : resolve(out)));
  });
}

// an example whose default input is a test fixture gets it by path
const ARGS = { 'inspect_checkpoint.mjs': [join(root, 'tests/fixtures/pt/checkpoint.pt')] };

// classify.mjs's arguments: a small mobilenet_v2 state dict saved by weft and an 8x6 PPM image, in dir
async function classifyArgs(dir) {
  const wt = await init({ variant: 'simd' });
  const model = mobilenetV2(wt, { widthMult: 0.25, numClasses: 3 });
  writeFileSync(join(dir, 'mobilenet.pt'), wt.save(model.stateDict()));
  model.dispose();
  const pixels = Uint8Array.from({ length: 8 * 6 * 3 }, (_, i) => (i * 37) % 256);
  writeFileSync(join(dir, 'image.ppm'), Buffer.concat([Buffer.from('P6\n8 6\n255\n'), pixels]));
  return [join(dir, 'mobilenet.pt'), join(dir, 'image.ppm')];
}

test('npm pack installs into an empty folder and runs demo/node/*.mjs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-pack-'));
  try {
    const packed = JSON.parse(await sh('npm', ['pack', '--json', '--pack-destination', dir], root));
    const files = packed[0].files.map((f) => f.path);
    for (const f of ['dist/index.js', 'dist/browser.js', 'dist/weft.d.ts', 'dist/build-id.js', 'dist/worker.js',
      'dist/weft-simd-threads.wasm', 'dist/weft-simd.wasm', 'dist/weft-scalar.wasm',
      'dist/node/weft-simd-threads.worker.js', 'dist/node/package.json']) {
      assert.ok(files.includes(f), `${f} is in the tarball`);
    }
    assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('tests/')), 'no sources or tests');
    const app = join(dir, 'app');
    await sh('mkdir', ['-p', app], dir);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    await sh('npm', ['install', '--no-audit', '--no-fund', '--offline', join(dir, packed[0].filename)], app);
    await sh('mkdir', ['-p', join(dir, 'data')], dir);
    for (const f of readdirSync(join(root, 'demo/data')).filter((n) => n.endsWith('.npy') || n.endsWith('.pt'))) {
      copyFileSync(join(root, 'demo/data', f), join(dir, 'data', f));
    }
    // the modules the examples share with the pages (train_digits.mjs's loop, inspect_checkpoint.mjs's
    // tables, digits_cnn.mjs's model, classify.mjs's pipeline), at ../train/, ../checkpoint/, ../digits/ and
    // ../classify/ as in the repo, and char_gpt.mjs's model and checkpoint at ../gpt/
    ARGS['classify.mjs'] = await classifyArgs(dir);
    for (const sub of ['train', 'checkpoint', 'digits', 'classify', 'gpt']) {
      await sh('mkdir', ['-p', join(dir, sub)], dir);
      const wanted = (n) => n.endsWith('.mjs') || (sub === 'gpt' && /^char_gpt\.(pt|json)$/.test(n));
      for (const f of readdirSync(join(root, 'demo', sub)).filter(wanted)) {
        copyFileSync(join(root, 'demo', sub, f), join(dir, sub, f));
      }
    }
    for (const f of readdirSync(demo).filter((n) => n.endsWith('.mjs'))) {
      copyFileSync(join(demo, f), join(app, f));
      const out = await sh(process.execPath, [f, ...(ARGS[f] ?? [])], app);
      assert.ok(out.length > 0, `${f} printed something`);
    }
    const out = await sh(process.execPath, ['-e',
      "import('weft').then(async (m) => { const wt = await m.init(); console.log(wt.backend.variant, wt.buildId) })"], app);
    assert.match(out, /^simd-threads \d+\.\d+\.\d+\+\w+\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
