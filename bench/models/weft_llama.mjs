// The weft row of benchmark W10: weft/models' llama built from a config of
// gen_llama_models.py (llama_check.json / tests/fixtures/llama/llama.json, snake_case
// as llama2.c's header) and loaded from its state dict. When the checkpoint's
// classifier is its own (llama2.c's negative vocab_size; with random weights a
// classifier tied to the embedding makes greedy decoding repeat one token),
// tok_embeddings gets a parameter of its own before loading, as model.py ties
// output to tok_embeddings. maxSeqLen defaults to the config's seq_len;
// generate() wants room for the prompt and every new token, so a prefill of
// seq_len ids asks seq_len + 1 (the rotary tables are not in the state dict).
import { llama } from '../../dist/models/index.js';

export function buildLlama(wt, c, stateDict, maxSeqLen = c.seq_len) {
  const m = llama(wt, { dim: c.dim, hiddenDim: c.hidden_dim, nLayers: c.n_layers, nHeads: c.n_heads,
    nKvHeads: c.n_kv_heads, vocabSize: c.vocab_size, normEps: c.norm_eps, maxSeqLen });
  if (!c.tied) m.tok_embeddings.weight = new wt.nn.Parameter(wt.empty([c.vocab_size, c.dim]));
  const { missingKeys, unexpectedKeys } = m.loadStateDict(stateDict);
  if (missingKeys.length || unexpectedKeys.length) {
    throw new Error(`llama state dict: missing ${missingKeys.join(', ') || '-'}; unexpected ${unexpectedKeys.join(', ') || '-'}`);
  }
  return m.eval();
}
