// The WebGPU device (docs/webgpu.md): the adapter and device, the table of
// GPUBuffers that webgpu storages hold handles into, a caching allocator, the
// command encoder submitted at sync points, and the asynchronous reads. C
// reaches it through src/webgpu/bridge.c's EM_JS calls on M.weftWebGPU.

// Smallest size class: tiny tensors share one bucket instead of one each.
const MIN_CLASS = 256;
// The JS codes of src/webgpu/bridge.c.
const NO_DEVICE = -1;
const OUT_OF_MEMORY = -2;
const FAILED = -3;

// A JS exception must not unwind through wasm: it becomes a code C reports.
const guarded = (fn) => (...args) => {
  try {
    return fn(...args);
  } catch (e) {
    console.error('weft webgpu:', e);
    return FAILED;
  }
};

const sizeClass = (n) => Math.max(MIN_CLASS, 2 ** Math.ceil(Math.log2(Math.max(1, n))));
// writeBuffer and copyBufferToBuffer move whole 4-byte words
const words = (n) => Math.ceil(n / 4) * 4;
const cstrlen = (memory, p) => new Uint8Array(memory, p).indexOf(0);

// The device state behind M.weftWebGPU: one per module.
function makeBridge(device, GPUBufferUsage) {
  const table = new Map(); // handle -> { buffer, cls }
  const pool = new Map();  // size class -> free GPUBuffers
  let nextHandle = 1;
  let encoder = null;
  const pipelines = new Map(); // program key -> GPUComputePipeline
  let spent = [];              // parameter buffers of recorded passes, destroyed once submitted
  const stats = { allocatedBytes: 0, cachedBytes: 0, peakAllocatedBytes: 0, submits: 0, dispatches: 0 };
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

  const bridge = {
    stats,
    // a size-class buffer, reused from the pool when one is free
    alloc: guarded((nbytes) => {
      const cls = sizeClass(nbytes);
      if (cls > device.limits.maxBufferSize) return OUT_OF_MEMORY;
      let buffer = pool.get(cls)?.pop();
      if (buffer) stats.cachedBytes -= cls;
      else buffer = device.createBuffer({ size: cls, usage });
      const h = nextHandle++;
      table.set(h, { buffer, cls });
      stats.allocatedBytes += cls;
      stats.peakAllocatedBytes = Math.max(stats.peakAllocatedBytes, stats.allocatedBytes);
      return h;
    }),
    // back to its class's free list: commands recorded before still see it
    // in queue order, so reuse inside one encoder is safe
    free(h) {
      const e = table.get(h);
      if (!e) return;
      table.delete(h);
      stats.allocatedBytes -= e.cls;
      stats.cachedBytes += e.cls;
      if (!pool.has(e.cls)) pool.set(e.cls, []);
      pool.get(e.cls).push(e.buffer);
    },
    buffer(h) { return table.get(h)?.buffer; },
    // host bytes into the start of a buffer; pending commands go first, as
    // writeBuffer overtakes anything not yet submitted
    upload: guarded((h, memory, ptr, nbytes) => {
      const e = table.get(h);
      if (!e) return NO_DEVICE;
      bridge.flush();
      const bytes = new Uint8Array(words(nbytes));
      bytes.set(new Uint8Array(memory, ptr, nbytes));
      device.queue.writeBuffer(e.buffer, 0, bytes);
      return 0;
    }),
    commandEncoder() {
      if (!encoder) encoder = device.createCommandEncoder();
      return encoder;
    },
    // one compute pass of a generated program (src/webgpu/wgsl.c) into the
    // current encoder: buffers at bindings 0.., its parameter words after them
    dispatch: guarded((key, wgslPtr, buffersPtr, nbuffers, paramsPtr, nparams, gridPtr, memory) => {
      let pipeline = pipelines.get(key);
      if (!pipeline) {
        const code = new TextDecoder().decode(new Uint8Array(memory, wgslPtr, cstrlen(memory, wgslPtr)).slice());
        pipeline = device.createComputePipeline({
          layout: 'auto', compute: { module: device.createShaderModule({ code }), entryPoint: 'main' },
        });
        pipelines.set(key, pipeline);
      }
      const handles = new Int32Array(memory, buffersPtr, nbuffers);
      const params = device.createBuffer({ size: Math.max(16, words(nparams * 4)), usage: GPUBufferUsage.STORAGE,
        mappedAtCreation: true });
      new Uint32Array(params.getMappedRange()).set(new Uint32Array(memory, paramsPtr, nparams));
      params.unmap();
      spent.push(params);
      const entries = Array.from(handles, (h, i) => ({ binding: i, resource: { buffer: table.get(h).buffer } }));
      entries.push({ binding: nbuffers, resource: { buffer: params } });
      const grid = new Uint32Array(memory, gridPtr, 3);
      const pass = bridge.commandEncoder().beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
      pass.dispatchWorkgroups(grid[0], grid[1], grid[2]);
      pass.end();
      stats.dispatches++;
      return 0;
    }),
    // the sync point: one submit for everything recorded since the last
    flush() {
      if (!encoder) return;
      device.queue.submit([encoder.finish()]);
      encoder = null;
      stats.submits++;
      for (const b of spent) b.destroy();
      spent = [];
    },
    async synchronize() {
      bridge.flush();
      await device.queue.onSubmittedWorkDone();
    },
    // nbytes from byte `offset` of buffer h, as an ArrayBuffer
    async read(h, offset, nbytes) {
      const src = table.get(h).buffer;
      const start = offset - (offset % 4);
      const size = words(offset + nbytes - start);
      const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      bridge.commandEncoder().copyBufferToBuffer(src, start, staging, 0, size);
      bridge.flush();
      try {
        await staging.mapAsync(1 /* GPUMapMode.READ */);
        return staging.getMappedRange().slice(offset - start, offset - start + nbytes);
      } finally {
        staging.destroy();
      }
    },
    // frees the cached buffers (PyTorch's torch.cuda.empty_cache)
    emptyCache() {
      bridge.flush();
      for (const list of pool.values()) for (const b of list) b.destroy();
      pool.clear();
      stats.cachedBytes = 0;
    },
  };
  return bridge;
}

function adapterInfo(adapter, info) {
  const limits = {};
  for (const k of ['maxBufferSize', 'maxStorageBufferBindingSize', 'maxComputeWorkgroupSizeX',
    'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupsPerDimension', 'maxComputeWorkgroupStorageSize',
    'minStorageBufferOffsetAlignment', 'maxStorageBuffersPerShaderStage']) limits[k] = adapter.limits[k];
  return Object.freeze({
    vendor: info?.vendor ?? '', architecture: info?.architecture ?? '', device: info?.device ?? '',
    description: info?.description ?? '', isFallbackAdapter: !!(info?.isFallbackAdapter ?? adapter.isFallbackAdapter),
    features: Object.freeze([...adapter.features].sort()), limits: Object.freeze(limits),
  });
}

export function installWebGPU(api, { M, Tensor, WeftError }) {
  let info = null;
  const gpu = () => M.weftWebGPU;

  // await wt.initWebGPU(): finds an adapter and a device once; later calls
  // return the same description
  async function initWebGPU(opts = {}) {
    if (info) return info;
    const nav = typeof navigator === 'undefined' ? undefined : navigator;
    if (!nav?.gpu) {
      const where = typeof process === 'object' && process.versions?.node
        ? 'Node has no WebGPU (navigator.gpu is undefined); run weft on the webgpu device in a browser'
        : 'navigator.gpu is undefined: this browser has no WebGPU, or the page is not a secure context ' +
          '(https:// or http://localhost)';
      throw new WeftError('NotImplemented', `initWebGPU: no WebGPU here: ${where}`);
    }
    const adapter = await nav.gpu.requestAdapter({ powerPreference: opts.powerPreference });
    if (!adapter) throw new WeftError('NotImplemented', 'initWebGPU: navigator.gpu.requestAdapter() found no adapter');
    const device = await adapter.requestDevice({
      requiredLimits: {
        maxBufferSize: adapter.limits.maxBufferSize,
        maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      },
    });
    const adapterDetails = adapter.info ?? (adapter.requestAdapterInfo ? await adapter.requestAdapterInfo() : null);
    M.weftWebGPU = makeBridge(device, globalThis.GPUBufferUsage);
    info = adapterInfo(adapter, adapterDetails);
    return info;
  }

  const need = (op) => {
    if (!gpu()) throw new WeftError('NotImplemented', `${op}: no WebGPU device: call await wt.initWebGPU() first`);
    return gpu();
  };

  // A webgpu tensor's bytes in a new cpu tensor with the same sizes and
  // strides (a dense layout is copied as it lies, as to() keeps strides).
  async function download(t, op) {
    if (!t.isNonOverlappingAndDense()) {
      // a strided view: the device's copy kernel makes it dense first
      const c = t.contiguous();
      try { return await download(c, op); } finally { c.dispose(); }
    }
    const g = need(op);
    const out = api.emptyStrided(t.shape, t.stride(), { dtype: t.dtype });
    try {
      const nbytes = t.numel() * t.elementSize();
      if (nbytes > 0) {
        // a dense layout's lowest element is at the storage offset
        const h = M._weft_wasm_webgpu_buffer(t.handle(op));
        const bytes = await g.read(h, t.storageOffset() * t.elementSize(), nbytes);
        new Uint8Array(M.wasmMemory.buffer, out.dataPtr(), nbytes).set(new Uint8Array(bytes));
      }
      return out;
    } catch (e) {
      out.dispose();
      throw e;
    }
  }

  const P = Tensor.prototype;
  const methods = {
    async toAsync(device, ...rest) {
      if (device !== 'cpu') return this.to(device, ...rest);
      if (this.device !== 'webgpu') return this.to(device, ...rest);
      const cpu = await download(this, 'toAsync');
      if (!rest.length) return cpu;
      try { return cpu.to(...rest); } finally { cpu.dispose(); }
    },
    async dataAsync(opts = {}) { return readVia(this, 'dataAsync', (c) => c.data(opts)); },
    async toArrayAsync(opts = {}) { return readVia(this, 'toArrayAsync', (c) => c.toArray(opts)); },
    async itemAsync(opts = {}) { return readVia(this, 'itemAsync', (c) => c.item(opts)); },
  };
  async function readVia(t, op, fn) {
    if (t.device !== 'webgpu') return fn(t);
    const c = await download(t, op);
    try { return fn(c); } finally { c.dispose(); }
  }
  for (const [k, v] of Object.entries(methods)) {
    Object.defineProperty(P, k, { value: v, writable: true, configurable: true });
  }

  // to('webgpu') uploads through copy_ into a tensor with the same strides
  // (when dense); to('cpu') of a webgpu tensor must wait for the GPU
  const prevTo = P.to;
  const deviceArg = (a) => (a instanceof Tensor ? a.device : a === 'webgpu' || a === 'cpu' || a === 'meta' ? a : null);
  function to(self, first, ...rest) {
    const dev = deviceArg(first);
    if (!(self instanceof Tensor) || dev === null || dev === self.device || dev === 'meta' || self.device === 'meta') {
      return prevTo.call(self, first, ...rest);
    }
    if (dev === 'cpu') {
      throw new WeftError('NotImplemented', "to: a webgpu tensor is read back asynchronously: use await t.toAsync('cpu')");
    }
    const dtype = first instanceof Tensor ? first.dtype : typeof rest[0] === 'string' ? rest[0] : self.dtype;
    const dense = self.isNonOverlappingAndDense();
    const r = dense ? api.emptyStrided(self.shape, self.stride(), { dtype, device: dev })
      : api.empty(self.shape, { dtype, device: dev });
    try {
      r.copy_(self);
    } catch (e) {
      r.dispose();
      throw e;
    }
    return r;
  }
  Object.defineProperty(P, 'to', {
    value: function (...args) { return to(this, ...args); }, writable: true, configurable: true,
  });
  const apiTo = api.to;
  api.to = (self, ...args) => (self instanceof Tensor ? to(self, ...args) : apiTo(self, ...args));

  api.initWebGPU = initWebGPU;
  api.webgpu = Object.freeze({
    isAvailable: () => !!gpu(),
    // the adapter initWebGPU found (wt.backend.webgpu), or null
    info: () => info,
    synchronize: async () => { if (gpu()) await gpu().synchronize(); },
    emptyCache: () => { if (gpu()) gpu().emptyCache(); },
    // the allocator's figures: bytes of size classes in use and cached
    memory: () => (gpu() ? { ...gpu().stats }
      : { allocatedBytes: 0, cachedBytes: 0, peakAllocatedBytes: 0, submits: 0, dispatches: 0 }),
  });
}
