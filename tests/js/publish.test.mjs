// Ready to publish: `npm pack --dry-run` and `npm publish --dry-run` (both
// offline: no network) are clean, the tarball holds what package.json's
// exports, types and relative imports need and nothing from the source tree,
// and the metadata a registry page shows is there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
const built = existsSync(`${root}dist/weft-simd.wasm`) || 'dist/ is not built (npm run build)';

function npm(args) {
  return new Promise((resolve) => {
    execFile('npm', [...args, '--offline', '--ignore-scripts'], { cwd: root, timeout: 120000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => resolve({ code: err ? err.code ?? 1 : 0, stdout, stderr }));
  });
}

// npm's warnings, but the one a dry run cannot avoid (not logged in to the registry)
const warnings = (stderr) => stderr.split('\n').filter((l) => /^npm (warn|WARN|ERR)/.test(l) &&
  !/requires you to be logged in/.test(l));

// Every file path an exports entry names (conditions nested).
function targets(entry) {
  if (typeof entry === 'string') return [entry];
  return Object.values(entry).flatMap(targets);
}
const norm = (p) => p.replace(/^\.\//, '');

test('package.json: publishable metadata', () => {
  assert.equal(pkg.private, undefined, 'not private');
  assert.equal(pkg.license, 'MIT');
  assert.match(readFileSync(`${root}LICENSE`, 'utf8'), /^MIT License\n[\s\S]*Third-party notices[\s\S]*Emscripten/);
  assert.match(readFileSync(`${root}CHANGELOG.md`, 'utf8'), /^# Changelog\n[\s\S]*## \[Unreleased\]/);
  assert.ok(Array.isArray(pkg.keywords) && pkg.keywords.includes('pytorch'));
  assert.equal(pkg.repository?.type, 'git');
  assert.match(pkg.repository?.url ?? '', /^git\+https:\/\/.+\.git$/);
  assert.ok(Array.isArray(pkg.sideEffects), 'sideEffects lists the worker scripts (they run on load)');
  for (const sub of ['.', './models', './browser', './node']) {
    assert.ok(pkg.exports[sub], `exports has ${sub}`);
    assert.ok(pkg.exports[sub].types, `exports ${sub} has types`);
    assert.equal(Object.keys(pkg.exports[sub])[0], 'types', `types first in exports ${sub} (TypeScript reads in order)`);
  }
});

test('npm pack --dry-run: clean, with every exported, typed and imported file', { skip: built === true ? false : built },
  async () => {
    const r = await npm(['pack', '--dry-run', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(warnings(r.stderr), []);
    const files = new Set(JSON.parse(r.stdout)[0].files.map((f) => f.path));
    for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']) assert.ok(files.has(f), f);
    // exports, main, types, browser
    const named = [...Object.values(pkg.exports).flatMap(targets), pkg.main, pkg.types, pkg.browser].map(norm);
    for (const f of named) assert.ok(files.has(f), `${f} (package.json names it) is packed`);
    // what the packed modules import and declare, and the loaders' artifacts
    const missing = [];
    for (const f of files) {
      if (!/\.(m?js|d\.ts)$/.test(f) || !f.startsWith('dist/')) continue;
      const dir = f.slice(0, f.lastIndexOf('/') + 1);
      const text = readFileSync(`${root}${f}`, 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\(\s*|new URL\(\s*)'(\.{1,2}\/[^']+)'/g)) {
        const target = new URL(m[1], `file:///${dir}`).pathname.slice(1);
        const candidates = f.endsWith('.d.ts') ? [target, target.replace(/\.js$/, '.d.ts')] : [target];
        if (!target.endsWith('/') && !candidates.some((c) => files.has(c))) missing.push(`${f} -> ${m[1]}`);
      }
    }
    assert.deepEqual(missing, [], 'relative imports and URLs of packed files resolve inside the tarball');
    for (const v of ['simd-threads', 'simd', 'scalar']) {
      assert.ok(files.has(`dist/weft-${v}.wasm`) && files.has(`dist/node/weft-${v}.js`), v);
    }
    // nothing from the source tree or the build directories
    const stray = [...files].filter((f) => !/^(dist\/|package\.json$|README\.md$|LICENSE$|CHANGELOG\.md$)/.test(f));
    assert.deepEqual(stray, []);
  });

test('npm publish --dry-run: no warnings (package.json needs no auto-correction)', { skip: built === true ? false : built },
  async () => {
    const r = await npm(['publish', '--dry-run']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(warnings(r.stderr), []);
    assert.match(r.stdout + r.stderr, /weft@\d+\.\d+\.\d+/);
  });
