// Shared by the browser tests: the project's server in a child process, and
// Debian's Chromium driven by playwright-core with a fresh profile.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const OUTPUT = path.join(ROOT, 'tests/browser/output');
const CHROMIUM = process.env.WEFT_CHROMIUM ?? '/usr/bin/chromium';

// Starts `node web/server.mjs --port 0 [--no-isolation]` on loopback and
// resolves with the demo URL it prints.
export function startServer({ isolation = true } = {}) {
  const args = ['web/server.mjs', '--port', '0', '--host', '127.0.0.1'];
  if (!isolation) args.push('--no-isolation');
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`server printed no URL in 10 s: ${out}${err}`)); }, 10000);
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/https?:\/\/[^\s)]+/);
      if (!m) return;
      clearTimeout(timer);
      const u = new URL(m[0]);
      if (u.pathname === '/') u.pathname = '/demo/';
      resolve({
        url: u.href,
        stop: () => new Promise((r) => { if (child.exitCode !== null) r(); else { child.once('exit', r); child.kill(); } }),
      });
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${err}`)); });
  });
}

// { webgpu: true }: WebGPU on the software adapter (SwiftShader), as no GPU is lent here.
export async function launchBrowser({ webgpu = false } = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-chromium-'));
  const gpu = webgpu ? ['--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'] : ['--disable-gpu'];
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', ...gpu, '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

// Collects everything that would show as an error in DevTools: console
// errors, uncaught exceptions and failed (4xx/5xx or aborted) requests.
export function watchErrors(page) {
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => errors.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()}: ${r.url()}`); });
  return errors;
}

export async function openDemo(context, url) {
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: 30000 });
  return { page, errors };
}

// Makes a tensor and applies ops through the page's own controls, as a person would.
export async function makeTensor(page, shape, dtype = 'float32') {
  await page.fill('#shape', shape);
  await page.selectOption('#dtype', dtype);
  await page.selectOption('#fill', 'arange');
  await page.click('#make button[type=submit]');
}

export async function applyOp(page, op, args = {}) {
  await page.selectOption('#op', op);
  for (const [name, value] of Object.entries(args)) await page.fill(`#op-args [name="${name}"]`, String(value));
  await page.click('#apply button[type=submit]');
}

export const text = (page, sel) => page.locator(sel).first().innerText();

// Registers a suite's before/after hooks: the server, Chromium, and `file`
// of demo/ opened; the returned object gets { page, errors } once before ran.
export function servedPage({ before, after }, { isolation = true, file = '' } = {}) {
  const s = {};
  before(async () => {
    s.server = await startServer({ isolation });
    s.browser = await launchBrowser();
    Object.assign(s, await openDemo(s.browser.context, new URL(file, s.server.url).href));
  });
  after(async () => {
    await s.browser?.close();
    await s.server?.stop();
  });
  return s;
}

// Registers a WebGPU suite's before/after hooks: the server, Chromium with
// WebGPU on SwiftShader, tests/browser/webgpu.html (a localhost page: WebGPU
// needs a secure context) with window.wt initialized, its device too when
// `device`, then `setup` run in the page (a function: the suite's comparison
// helpers). The returned object gets { page, errors } once before ran, and
// run(fn, arg) evaluates fn(wt, arg) in the page (fn(wt, window.K, arg) with
// `lib`); a thrown error comes back as { error: [name, code, message, stack] }.
export function webgpuPage({ before, after }, { device = true, setup = null, lib = false } = {}) {
  if (!fs.existsSync(path.join(ROOT, 'dist/browser.js'))) {
    throw new Error('dist/browser.js is missing: run `npm run build` first');
  }
  const s = {};
  before(async () => {
    s.server = await startServer();
    s.browser = await launchBrowser({ webgpu: true });
    s.page = await s.browser.context.newPage();
    s.errors = watchErrors(s.page);
    await s.page.goto(new URL('/tests/browser/webgpu.html', s.server.url).href);
    await s.page.evaluate(async (gpu) => {
      const { init } = await import('/dist/browser.js');
      window.wt = await init();
      if (gpu) await window.wt.initWebGPU();
    }, device);
    if (setup) await s.page.evaluate(`(${setup.toString()})()`);
  });
  after(async () => {
    await s.browser?.close();
    await s.server?.stop();
  });
  s.run = (fn, arg) => s.page.evaluate(async ([src, a, withLib]) => {
    const f = (0, eval)(`(${src})`);
    try {
      return await (withLib ? f(window.wt, window.K, a) : f(window.wt, a));
    } catch (e) {
      return { error: [e.name, e.code ?? '', e.message, e.stack] };
    }
  }, [fn.toString(), arg, lib]);
  return s;
}
