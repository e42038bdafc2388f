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

/* ---- linalg_qr (RES = Q, RES2 = R; gradients c->grads[0], c->grads[1],
 * either NULL): 1.13's linalg_qr_backward ---- */
/* gA = gR R^T - Q^T gQ, from the gradients that reached the node */
static T qr_ga(weft__bctx* c, T q, T r) {
  T gq = c->grads[0], gr = c->grads[1];
  T a = gq ? neg(c, matmul2(c, mT(c, q), gq)) : NULL;
  T b = gr ? matmul2(c, gr, mT(c, r)) : NULL;
  if ((gq && !a) || (gr && !b)) return NULL; /* a failure, not a missing gradient */
  return a && b ? add(c, b, a) : a ? a : b;
}

/* m >= n: (Q syminvadj(triu(gA)) + gQ) R^-T, syminvadj(U) = U + U^T with
 * the diagonal once */
static T qr_backward_tall(weft__bctx* c, T q, T r, T ga) {
  T sym = add(c, tri_(c, ga, 0, false), mT(c, tri_(c, ga, 1, false)));
  T g = matmul2(c, q, sym);
  if (c->grads[0]) g = add(c, g, c->grads[0]);
  return solve2(c, mT(c, r), g, false);
}

/* m < n: [Q tril(X - X^T) R1^-T, 0] + Q gR with X = -gA, R1 R's leading
 * m x m block */
static T qr_backward_wide(weft__bctx* c, T q, T r, T ga, int64_t m, int64_t n) {
  T x = neg(c, ga);
  T g = matmul2(c, q, tri_(c, sub(c, x, mT(c, x)), 0, true));
  T r1 = keep(c, weft_narrow(r, -1, 0, m));
  g = solve2(c, mT(c, r1), g, false);
  if (!g) return NULL;
  int64_t sizes[WEFT_MAX_DIMS];
  memcpy(sizes, g->sizes, sizeof(int64_t) * (size_t)g->ndim);
  sizes[g->ndim - 1] = n - m;
  T z = zeros(c, g, sizes, g->ndim);
  const weft_tensor* parts[2] = {g, z};
  g = z ? keep(c, weft_cat(parts, 2, -1)) : NULL;
  return c->grads[1] ? add(c, g, matmul2(c, q, c->grads[1])) : g;
}

static T linalg_qr_backward(weft__bctx* c) {
  const char* mode = STR(1);
  if (!strcmp(mode, "r"))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "The derivative of linalg.qr depends on Q, which is not computed "
                            "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                            "differentiate through linalg.qr.");
  T q = RES, r = RES2;
  int64_t m = q->sizes[q->ndim - 2], n = r->sizes[r->ndim - 1];
  if (!strcmp(mode, "complete") && m > n)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "The QR decomposition is not differentiable when mode='complete' "
                            "and nrows > ncols.");
  T ga = qr_ga(c, q, r);
  return m >= n ? qr_backward_tall(c, q, r, ga) : qr_backward_wide(c, q, r, ga, m, n);
}

/* ---- linalg_lstsq(A, B): 1.13's linalg_lstsq_backward, through
 * pinv(A) (here the minimum-norm least-squares solution of A X = I, the
 * pseudo-inverse up to gelsy's rank cut) and pinv_backward ---- */
static T pinv_of(weft__bctx* c, T a) {
  int64_t m = a->sizes[a->ndim - 2];
  int64_t sizes[WEFT_MAX_DIMS]; /* I with a's number of dims: a 2-D B under a batched A would be a vector */
  for (int i = 0; i < a->ndim; i++) sizes[i] = i < a->ndim - 2 ? 1 : m;
  T eye = keep(c, weft_eye(m, a->dtype, a->device));
  eye = eye ? keep(c, weft_reshape(eye, sizes, a->ndim)) : NULL;
  if (!eye) return NULL;
  weft_tensor4 r = weft_linalg_lstsq(a, eye, NAN, "gelsy");
  weft_tensor* outs[4]; /* (the name t is taken by the transpose wrapper here) */
  memcpy(outs, &r, sizeof outs);
  for (int i = 1; i < 4; i++) weft_tensor_release(outs[i]);
  return outs[0] ? keep(c, outs[0]) : NULL;
}

/* d pinv(A) -> dA (1.13's pinv_backward, real case), g = d loss / d pinv(A) */
static T pinv_backward(weft__bctx* c, T g, T p, T a) {
  int64_t m = a->sizes[a->ndim - 2], n = a->sizes[a->ndim - 1];
  T ph = mT(c, p), gh = mT(c, g);
  if (m <= n) {
    T k = matmul2(c, gh, p), kph = matmul2(c, k, ph);
    T r = add(c, neg(c, mT(c, matmul2(c, p, k))), kph);
    r = sub(c, r, matmul2(c, matmul2(c, a, p), kph));
    return add(c, r, matmul2(c, matmul2(c, ph, p), sub(c, gh, matmul2(c, k, a))));
  }
  T k = matmul2(c, p, gh), phk = matmul2(c, ph, k);
  T r = add(c, neg(c, mT(c, matmul2(c, k, p))), matmul2(c, matmul2(c, sub(c, gh, matmul2(c, a, k)), p), ph));
  return sub(c, add(c, r, phk), matmul2(c, matmul2(c, phk, p), a));
}

/* which 0: gA = pinv_backward(gX B^T); 1: gB = pinv(A)^T gX; a vector B
 * (A has one dim more) as a column */
static T linalg_lstsq_grad(weft__bctx* c, int which) {
  bool vec = NDIM(0) - NDIM(1) == 1;
  T gx = vec ? unsq(c, grad, -1) : grad, p = pinv_of(c, S(0));
  if (which == 0) return pinv_backward(c, matmul2(c, gx, mT(c, vec ? unsq(c, S(1), -1) : S(1))), p, S(0));
  T gb = matmul2(c, mT(c, p), gx);
  return vec && gb ? keep(c, weft_squeeze_dim(gb, -1)) : gb;
}
