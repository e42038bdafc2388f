/* Issue 25's torch.linalg formulas (included by formulas.c): PyTorch 1.13's
 * linalg_solve, inv, det and cholesky backwards, written with the
 * dispatcher ops so createGraph records them. */
static T mT(weft__bctx* c, T a) { return transpose(c, a, -2, -1); }
static T matmul2(weft__bctx* c, T a, T b) { return a && b ? keep(c, weft_matmul(a, b)) : NULL; }
static T solve2(weft__bctx* c, T a, T b, bool left) {
  return a && b ? keep(c, weft_linalg_solve(a, b, left)) : NULL;
}
static T unsq(weft__bctx* c, T a, int64_t d) { return a ? keep(c, weft_unsqueeze(a, d)) : NULL; }

/* linalg_inv: gA = -X^T g X^T (RES is X = A^-1) */
static T linalg_inv_backward(weft__bctx* c, T g) {
  T xt = mT(c, RES);
  return neg(c, matmul2(c, xt, matmul2(c, g, xt)));
}

/* linalg_solve(A, B, left), RES = X: gB = solve(A^T, g, left), gA = -gB X^T
 * (left) or -X^T gB; a vector B (1.13's linalg_solve_is_vector_rhs) as a
 * column */
static T linalg_solve_grad(weft__bctx* c, int which) {
  bool left = BOOLA(2);
  int64_t na = NDIM(0), nb = NDIM(1);
  bool vec = nb == 1 || (na - 1 == nb && memcmp(SIZES(0), SIZES(1), sizeof(int64_t) * (size_t)nb) == 0);
  T gb = solve2(c, mT(c, S(0)), grad, left);
  if (which == 1) return gb;
  T x = RES;
  if (vec) gb = unsq(c, gb, -1), x = unsq(c, x, -1);
  return neg(c, left ? matmul2(c, gb, mT(c, x)) : matmul2(c, mT(c, x), gb));
}

/* linalg_det: gA = g det A^-T (non-singular A; 1.13 goes through an SVD
 * at singular ones, which weft does not have yet) */
static T linalg_det_backward(weft__bctx* c, T g) {
  T gd = unsq(c, unsq(c, mul(c, g, RES), -1), -1);
  T inv = keep(c, weft_linalg_inv(S(0)));
  return mul(c, gd, mT(c, inv));
}

/* linalg_cholesky(A, upper), RES = L (or U): 1.13's cholesky_backward,
 * its two triangular solves as solves */
static T linalg_cholesky_backward(weft__bctx* c, T g) {
  bool upper = BOOLA(1);
  T l = upper ? mT(c, RES) : RES, gl = upper ? mT(c, g) : g;
  T m = matmul2(c, mT(c, l), gl);
  T ga = m ? keep(c, weft_tril(m, 0)) : NULL;
  T low = ga ? keep(c, weft_tril(ga, -1)) : NULL;
  ga = scale(c, add(c, ga, mT(c, low)), weft_scalar_double(0.5));
  ga = solve2(c, mT(c, l), ga, true);
  return solve2(c, l, ga, false);
}
