// Types for the webgpu device (js/webgpu.js, docs/webgpu.md).
import type { DType, Tensor, TensorData } from './weft.js';

/** The adapter wt.initWebGPU() found (wt.backend.webgpu). */
export interface WebGPUInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
  /** A software adapter such as SwiftShader: a CPU in disguise, its figures are no GPU's. */
  readonly isFallbackAdapter: boolean;
  readonly features: readonly string[];
  readonly limits: { readonly [name: string]: number };
}

/** The caching allocator's figures: bytes of size classes handed out and kept for reuse. */
export interface WebGPUMemory {
  allocatedBytes: number;
  cachedBytes: number;
  peakAllocatedBytes: number;
  /** Command buffers submitted so far (one per sync point, not per op). */
  submits: number;
  /** Compute passes recorded so far. */
  dispatches: number;
}

export interface WebGPUNamespace {
  isAvailable(): boolean;
  info(): WebGPUInfo | null;
  /** Submits the recorded commands and waits for the queue. */
  synchronize(): Promise<void>;
  /** Frees the cached (unused) GPUBuffers, as torch.cuda.empty_cache. */
  emptyCache(): void;
  memory(): WebGPUMemory;
}

export interface WebGPUFunctions {
  /** Finds an adapter and a device (once). Rejects where there is no WebGPU (Node, insecure pages). */
  initWebGPU(options?: { powerPreference?: 'low-power' | 'high-performance' }): Promise<WebGPUInfo>;
  readonly webgpu: WebGPUNamespace;
}

/** The asynchronous reads every tensor has; a webgpu tensor has only these. */
export interface WebGPUTensorReads<D extends DType = DType> {
  /** A cpu copy (same strides when dense); other devices: to(device, ...). */
  toAsync(device: 'cpu' | 'webgpu', ...rest: unknown[]): Promise<Tensor<D>>;
  dataAsync(options?: { bits?: boolean }): Promise<ReturnType<Tensor<D>['data']>>;
  toArrayAsync(options?: { bigint?: boolean }): Promise<TensorData>;
  itemAsync(options?: { bigint?: boolean }): Promise<number | bigint | boolean>;
}
