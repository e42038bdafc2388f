/* Issue 25's torch.linalg formulas (included by formulas.c): PyTorch 1.13's
 * linalg_solve, inv, det, slogdet and cholesky backwards, written with the
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

/* whether a saved det (or sign) has a zero: a singular matrix in the batch */
static bool has_zero(T t) {
  if (!t || t->device == WEFT_DEVICE_META) return false;
  weft_tensor* z = weft_eq_scalar(t, weft_scalar_int(0));
  weft_tensor* a = z ? weft_any(z) : NULL;
  bool r = a && *(const bool*)weft_tensor_data_ptr(a);
  weft_tensor_release(z);
  weft_tensor_release(a);
  return r;
}

/* the matrices of A, the singular ones (det 0) replaced by I */
static T nonsingular(weft__bctx* c, T a, T det) {
  T eye = keep(c, weft_eye(SIZES(0)[NDIM(0) - 1], a->dtype, a->device));
  T sing = keep(c, weft_eq_scalar(det, weft_scalar_int(0)));
  sing = unsq(c, unsq(c, sing, -1), -1);
  return sing && eye ? keep(c, weft_where(sing, eye, a)) : NULL;
}

/* linalg_det (1.13's linalg_det_backward): gA = g det A^-T. Without
 * createGraph 1.13 solves with the LU, a zero pivot nudged to eps: as the
 * right-hand side g det is 0 there, a singular matrix's gradient is 0.
 * With createGraph 1.13 takes singular matrices through an SVD, which weft
 * has not: refused rather than differing. */
static T linalg_det_backward(weft__bctx* c, T g) {
  bool singular = has_zero(RES);
  if (singular && weft_grad_enabled())
    return weft__error_null(WEFT_NOT_IMPLEMENTED, "linalg.det: the gradient with createGraph at a singular matrix "
                                                  "needs linalg.svd, which weft does not have yet");
  T a = singular ? nonsingular(c, S(0), RES) : S(0);
  T gd = unsq(c, unsq(c, mul(c, g, RES), -1), -1);
  T inv = a ? keep(c, weft_linalg_inv(a)) : NULL;
  return mul(c, gd, mT(c, inv));
}

/* linalg_slogdet (1.13's slogdet_backward, real A): the node owns
 * logabsdet, RES is the sign; g_logabsdet A^-T. At a singular matrix
 * 1.13's LU solve divides by the zero pivot (infinities whose signs depend
 * on LAPACK's elimination order): refused with its reason. */
static T linalg_slogdet_backward(weft__bctx* c, T g) {
  if (has_zero(RES))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "linalg.slogdet: the gradient of logabsdet is infinite at a "
                                                   "singular matrix (its sign is 0)");
  T inv = keep(c, weft_linalg_inv(S(0)));
  return mul(c, unsq(c, unsq(c, g, -1), -1), mT(c, inv));
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
