// PyTorch checkpoints (js/checkpoint.js): wt.load reads torch.save's zip
// format as torch.load(weights_only=True) does (no global but the tensor,
// parameter, OrderedDict, storage, dtype and torch.Size ones: a file cannot
// run code); wt.save writes it so that torch.load reads it.
import type { Tensor } from './weft.js';

/**
 * What a checkpoint holds, as weft gives it: a tensor; None as null; bool, int (a bigint past 2^53)
 * and float as numbers; str; bytes as a Uint8Array; list and tuple as arrays; dict and OrderedDict
 * as objects without prototype, in key order (int keys as decimal strings, so array-index keys come
 * first, as in any JS object). A state dict's `_metadata` is a non-enumerable property.
 */
export type CheckpointValue = Tensor | null | boolean | number | bigint | string | Uint8Array |
  CheckpointValue[] | { [key: string]: CheckpointValue };
/** What wt.save takes: a CheckpointValue, and Maps keyed by strings or integers (written as dicts). */
export type SaveableValue = CheckpointValue | readonly SaveableValue[] | { readonly [key: string]: SaveableValue } |
  ReadonlyMap<string | number | bigint, SaveableValue>;
/** Bytes read later: a fetch Response (refused when not ok), a Blob or a File. */
export interface BytesSource { arrayBuffer(): Promise<ArrayBuffer> }
/** Bytes read now: an ArrayBuffer, a TypedArray (a Node Buffer), a DataView. */
export type Bytes = ArrayBufferLike | ArrayBufferView;

export interface CheckpointFunctions {
  /**
   * Reads a torch.save file (PyTorch >= 1.6's zip format; legacy files are refused). Each storage
   * becomes one weft storage and each tensor a view of it with the saved offset and strides, so
   * tensors that shared a storage still do; a Parameter is a leaf tensor with requires_grad as saved.
   * Any other global than torch.load(weights_only=True) allows is a WeftError naming it. Given a
   * Response, Blob or File, returns a Promise.
   */
  load<T = CheckpointValue>(bytes: Bytes): T;
  load<T = CheckpointValue>(source: BytesSource): Promise<T>;
  /**
   * The bytes of a torch.save file of obj (pickle protocol 2, one record per storage, written once
   * however many tensors view it, as far as they reach). Deterministic. Integral numbers are written
   * as Python ints, others as floats.
   */
  save(obj: SaveableValue): Uint8Array;
}
