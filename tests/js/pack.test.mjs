// npm pack's tarball installs into an empty folder and runs every
// demo/node/*.mjs there (the package must carry everything it needs; the
// examples' data files, demo/data/*.npy, and train_digits.mjs's shared loop,
// demo/train/*.mjs, sit beside the app as in the repo).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const demo = join(root, 'demo/node');

function sh(cmd, args, cwd) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout: 120000, env: { ...process.env, npm_config_update_notifier: 'false' } },
      (err, out, errOut) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${errOut}`))
        : resolve(out)));
  });
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
    for (const f of readdirSync(join(root, 'demo/data')).filter((n) => n.endsWith('.npy'))) {
      copyFileSync(join(root, 'demo/data', f), join(dir, 'data', f));
    }
    // the shared training loop of train_digits.mjs, at ../train/ as in the repo
    await sh('mkdir', ['-p', join(dir, 'train')], dir);
    for (const f of readdirSync(join(root, 'demo/train')).filter((n) => n.endsWith('.mjs'))) {
      copyFileSync(join(root, 'demo/train', f), join(dir, 'train', f));
    }
    for (const f of readdirSync(demo).filter((n) => n.endsWith('.mjs'))) {
      copyFileSync(join(demo, f), join(app, f));
      const out = await sh(process.execPath, [f], app);
      assert.ok(out.length > 0, `${f} printed something`);
    }
    const out = await sh(process.execPath, ['-e',
      "import('weft').then(async (m) => { const wt = await m.init(); console.log(wt.backend.variant, wt.buildId) })"], app);
    assert.match(out, /^simd-threads \d+\.\d+\.\d+\+\w+\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
