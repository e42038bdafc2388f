/* Gradient formulas of issue 25's data ops (included by formulas.c):
 * index_add, index_fill. bincount, histc and one_hot have none in 1.13. */

/* index_add(self, dim, index, source, alpha): source's gradient is the
 * slices its rows went to, times alpha (index_copy's, scaled); into a 0-dim
 * self every source element went to the one value */
static T index_add_source_backward(weft__bctx* c, T g) {
  T sel = NDIM(0) ? index_copy_source_backward(c, g) : expand(c, g, SIZES(3), NDIM(3));
  return scale(c, sel, SC(4));
}

/* index_fill(self, dim, index, value): self's gradient is grad with the
 * filled slices zeroed */
static T index_fill_self_backward(weft__bctx* c, T g) {
  return g ? keep(c, weft_index_fill_scalar(g, INT(1), S(2), weft_scalar_int(0))) : NULL;
}

/* a 0-dim value tensor's gradient: grad summed over the filled slices, each
 * once however often the index repeats it (1.13 sums index_select over the
 * unique indices) */
static T index_fill_value_backward(weft__bctx* c, T g) {
  T z = zeros_like_g(c, g);
  T mask = z ? keep(c, weft_index_fill_scalar(z, INT(1), S(2), weft_scalar_int(1))) : NULL;
  return total(c, mul(c, g, mask));
}
