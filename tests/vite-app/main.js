// A tiny app importing the package the way a bundled site does. The test
// reads window.weftResult.
import { init, initWorker } from 'weft';

async function run() {
  // ?threads4 asks for 4 threads, twice: a page that cannot have them must
  // say so once (console.warn), and still run.
  const asked = location.search.includes('threads4');
  const wt = await init(asked ? { threads: 4 } : undefined);
  if (asked) await init({ threads: 4 });
  const workers = await wt.threadsReady();
  const x = wt.rand([1, 3, 2, 2]);
  const y = x.contiguous({ memoryFormat: 'channels_last' });
  const result = {
    backend: wt.backend,
    workers,
    maxThreads: wt.maxThreads(),
    buildId: wt.buildId,
    strides: y.stride(),
    same: Array.from(x.data()).join() === Array.from(y.data()).join(),
    text: String(wt.arange(4).view(2, 2)),
  };
  x.dispose();
  y.dispose();
  if (!location.search.includes('noworker')) {
    const ww = await initWorker();
    result.worker = { backend: await ww.backend(), values: await ww.arange(6).view(2, 3).t().contiguous().toArray() };
    await ww.terminate();
  }
  return result;
}

run().then((r) => {
  window.weftResult = r;
  document.getElementById('out').textContent = JSON.stringify(r, null, 2);
}, (e) => {
  window.weftResult = { error: String(e && e.stack || e) };
  document.getElementById('out').textContent = String(e);
});
