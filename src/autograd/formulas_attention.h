/* scaled dot product attention (issue 24): the fused op's one backward call
 * gives the query's, key's and value's gradients (formulas.c's trio); it
 * recomputes the probabilities from the saved logsumexp (RES). Not
 * differentiable twice, as PyTorch's flash backward. */
#define OPT_SCALE(k) (ARG(k)->tag == WEFT_IV_NONE ? NAN : DBL(k)) /* None: 1 / sqrt(E) */
/* _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal, attn_mask, scale, seed) */
static T flash_attention_grads(weft__bctx* c, int which) {
  if (c->trio_done) return c->trio[which];
  return trio_pick(c,
                   weft__scaled_dot_product_flash_attention_for_cpu_backward(grad, S(0), S(1), S(2), RES, DBL(3),
                                                                             BOOLA(4), S(5), OPT_SCALE(6), INT(7)),
                   which);
}
#undef OPT_SCALE
