// A tiny Vite app (tests/vite-app) importing 'weft' as an installed package:
// the production build must carry the hashed .wasm files, and the page must
// run in Chromium both cross-origin isolated (weft-simd-threads, pthreads
// from the bundled worker script) and not (weft-simd), with worker mode, and
// without console errors. The same app unbundled, from a plain
// <script type="module"> over dist/, runs under a strict Content-Security-Policy
// (no blob: workers, no eval).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const chromiumPath = '/usr/bin/chromium';
const haveTools = existsSync(join(root, 'node_modules/vite')) && existsSync(join(root, 'node_modules/playwright-core')) &&
  existsSync(chromiumPath);

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; img-src data:";
const CSP_NO_WORKERS = CSP.replace("worker-src 'self'", "worker-src 'none'");

function serve(dir, isolated, csp = false) {
  const server = createServer((req, res) => {
    const path = normalize(join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    const file = path.endsWith('/') ? join(path, 'index.html') : path;
    if (!file.startsWith(dir) || !existsSync(file)) {
      res.writeHead(404, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>404</title>');
      return;
    }
    const headers = { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' };
    if (csp) headers['Content-Security-Policy'] = csp === 'no-workers' ? CSP_NO_WORKERS : CSP;
    if (isolated) {
      headers['Cross-Origin-Opener-Policy'] = 'same-origin';
      headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
    }
    res.writeHead(200, headers);
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function buildApp() {
  const work = join(root, 'build/vite-app');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, 'node_modules'), { recursive: true });
  cpSync(join(root, 'tests/vite-app'), join(work, 'src'), { recursive: true });
  // node_modules/weft -> the repository, as `npm link` would make it.
  symlinkSync(root, join(work, 'node_modules/weft'), 'dir');
  const { build } = await import(join(root, 'node_modules/vite/dist/node/index.js'));
  await build({
    root: join(work, 'src'),
    configFile: join(work, 'src/vite.config.mjs'),
    build: { outDir: join(work, 'out'), emptyOutDir: true },
    resolve: { preserveSymlinks: false },
    logLevel: 'error',
  });
  return join(work, 'out');
}

test('a Vite app bundles weft and runs it in Chromium', { skip: !haveTools && 'vite/playwright-core/chromium missing', timeout: 240000 }, async () => {
  const out = await buildApp();
  const assets = readdirSync(join(out, 'assets'));
  for (const v of ['simd-threads', 'simd', 'scalar']) {
    assert.ok(assets.some((f) => new RegExp(`^weft-${v}-[\\w-]+\\.wasm$`).test(f)), `hashed weft-${v}.wasm in ${assets}`);
  }
  const js = assets.filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(out, 'assets', f), 'utf8')).join('\n');
  assert.match(js, /weft-simd-[\w-]+\.wasm/, 'the bundle references the hashed .wasm');

  assert.ok(!js.includes('node:worker_threads'), 'the Node entry is not bundled');

  const plain = join(root, 'build/plain-app');
  rmSync(plain, { recursive: true, force: true });
  mkdirSync(plain, { recursive: true });
  cpSync(join(root, 'dist'), join(plain, 'weft'), { recursive: true });
  cpSync(join(root, 'tests/vite-app/index.html'), join(plain, 'index.html'));
  writeFileSync(join(plain, 'main.js'), readFileSync(join(root, 'tests/vite-app/main.js'), 'utf8')
    .replace("from 'weft'", "from './weft/browser.js'"));

  const { chromium } = await import(join(root, 'node_modules/playwright-core/index.mjs'));
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
  });
  try {
    // A page whose CSP forbids workers cannot start pthreads: init() does not
    // wait for them (they load after it resolved), so weft-simd-threads runs
    // on the calling thread alone, and threadsReady() resolves 0 instead of hanging.
    {
      const server = await serve(plain, true, 'no-workers');
      const page = await browser.newPage();
      try {
        await page.goto(`http://127.0.0.1:${server.address().port}/?noworker`);
        await page.waitForFunction(() => window.weftResult !== undefined, null, { timeout: 60000 });
        const r = await page.evaluate(() => window.weftResult);
        assert.equal(r.error, undefined, r.error);
        assert.equal(r.backend.variant, 'simd-threads');
        assert.equal(r.workers, 0, 'no pthread worker loaded');
        assert.deepEqual(r.strides, [12, 1, 6, 3]);
      } finally {
        await page.close();
        server.close();
      }
    }
    for (const [dir, isolated, csp] of [[out, true, false], [out, false, false], [plain, true, true], [plain, false, true]]) {
      const server = await serve(dir, isolated, csp);
      const page = await browser.newPage();
      const problems = [];
      const warnings = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
        if (m.type() === 'warning') warnings.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      const where = `${dir === out ? 'vite' : 'plain'} app, ${isolated ? '' : 'not '}isolated`;
      try {
        await page.goto(`http://127.0.0.1:${server.address().port}/${dir === plain ? '?threads4' : ''}`);
        await page.waitForFunction(() => window.weftResult !== undefined, null, { timeout: 60000 });
        const r = await page.evaluate(() => window.weftResult);
        assert.equal(r.error, undefined, `${where}: ${r.error}`);
        const ours = warnings.filter((w) => w.startsWith('weft:'));
        if (dir === plain && !isolated) {
          assert.equal(ours.length, 1, `${where}: one warning, got ${JSON.stringify(warnings)}`);
          assert.match(ours[0], /threads: 4.*single-threaded \(weft-simd\).*not cross-origin isolated/);
        } else {
          assert.deepEqual(ours, [], where);
        }
        assert.equal(r.backend.variant, isolated ? 'simd-threads' : 'simd', where);
        assert.equal(r.backend.crossOriginIsolated, isolated);
        // one Web Worker per extra thread the page can run (4 at most), loaded after init() resolved
        if (isolated) assert.equal(r.workers, Math.max(1, r.maxThreads - 1), 'pthread workers loaded');
        else assert.match(r.backend.reason, /not cross-origin isolated/);
        assert.deepEqual(r.strides, [12, 1, 6, 3]);
        assert.equal(r.same, true);
        assert.equal(r.text, 'tensor([[0, 1],\n        [2, 3]])');
        assert.match(r.buildId, /^\d+\.\d+\.\d+\+\w+$/);
        assert.equal(r.worker.backend.variant, isolated ? 'simd-threads' : 'simd');
        assert.deepEqual(r.worker.values, [[0, 3], [1, 4], [2, 5]]);
        assert.deepEqual(problems, [], where);
      } finally {
        await page.close();
        server.close();
      }
    }
  } finally {
    await browser.close();
  }
});
