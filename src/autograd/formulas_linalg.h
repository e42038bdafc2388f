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

/* the inverse of each matrix of a, solved with its LU whatever the pivots
 * (1.13's linalg_inv_ex: a singular matrix gives infinities and NaNs) */
static T inv_unchecked(weft__bctx* c, T a) {
  weft_tensor* outs[2] = {NULL, NULL}; /* (the name t is taken by the transpose wrapper here) */
  if (a) {
    weft_tensor2 r = weft_linalg_inv_ex(a, false);
    memcpy(outs, &r, sizeof outs);
  }
  weft_tensor_release(outs[1]);
  return outs[0] ? keep(c, outs[0]) : NULL;
}

/* linalg_inv_ex: as linalg_inv, with X = A^-1 recomputed (the node saves A) */
static T linalg_inv_ex_backward(weft__bctx* c, T g) {
  T xt = mT(c, inv_unchecked(c, S(0)));
  return neg(c, matmul2(c, xt, matmul2(c, g, xt)));
}

/* the matrices of A, those where mask is true replaced by I */
static T masked_to_eye(weft__bctx* c, T a, T mask) {
  T eye = keep(c, weft_eye(a->sizes[a->ndim - 1], a->dtype, a->device));
  T m = unsq(c, unsq(c, mask, -1), -1);
  return m && eye ? keep(c, weft_where(m, eye, a)) : NULL;
}

/* 0: mask has no true entry, 1: some, 2: all (a Meta mask: none) */
static int mask_state(T mask) {
  if (!mask || mask->device == WEFT_DEVICE_META) return 0;
  weft_tensor* any = weft_any(mask);
  weft_tensor* all = any ? weft_all(mask) : NULL;
  int r = !all ? 0 : !*(const bool*)weft_tensor_data_ptr(any) ? 0 : *(const bool*)weft_tensor_data_ptr(all) ? 2 : 1;
  weft_tensor_release(any);
  weft_tensor_release(all);
  return r;
}

/* 1.13's singular branch of linalg_det_backward: the adjugate through the
 * SVD, U diag(alpha prod_{j != i} S_j) Vh with alpha = det(U) det(Vh) g
 * (prod_safe_zeros_backward), differentiable where S's values are distinct */
static T det_adjugate(weft__bctx* c, T a, T g) {
  if (!a) return NULL;
  weft_tensor3 r = weft_linalg_svd(a, true);
  weft_tensor* usv[3];
  memcpy(usv, &r, sizeof usv);
  T u = keep(c, usv[0]), s = keep(c, usv[1]), vh = keep(c, usv[2]);
  if (!u || !s || !vh) return NULL;
  T alpha = mul(c, mul(c, keep(c, weft_linalg_det(u)), keep(c, weft_linalg_det(vh))), g);
  T d = mul(c, unsq(c, alpha, -1), prod_of_others(c, s, s->ndim - 1));
  return matmul2(c, mul(c, u, unsq(c, d, -2)), vh);
}

/* g det A^-T, the matrices where mask is true (singular) taken as I */
static T det_cofactors(weft__bctx* c, T g, T mask) {
  T a = mask ? masked_to_eye(c, S(0), mask) : S(0);
  T gd = unsq(c, unsq(c, mul(c, g, RES), -1), -1);
  T inv = a ? keep(c, weft_linalg_inv(a)) : NULL;
  return mul(c, gd, mT(c, inv));
}

/* linalg_det (1.13's linalg_det_backward): gA = g det A^-T. Without
 * createGraph 1.13 solves with the LU, a zero pivot nudged to eps: as the
 * right-hand side g det is 0 there, a singular matrix's gradient is 0.
 * With createGraph it takes the matrices with |det| < 100 eps through the
 * SVD (det_adjugate: the cofactors, differentiable again) and the others
 * through a solve; in a batch of both, each branch sees the other's
 * matrices as I, and where() keeps its own (its gradient never reaches
 * the replaced ones). */
static T linalg_det_backward(weft__bctx* c, T g) {
  if (!weft_grad_enabled()) {
    T zero = has_zero(RES) ? keep(c, weft_eq_scalar(RES, weft_scalar_int(0))) : NULL;
    return det_cofactors(c, g, zero);
  }
  double eps = S(0)->dtype == WEFT_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
  T mag = keep(c, weft_abs(RES));
  T tiny = mag ? keep(c, weft_lt_scalar(mag, weft_scalar_double(100 * eps))) : NULL;
  if (!tiny) return NULL;
  int state = mask_state(tiny);
  if (state == 0) return det_cofactors(c, g, NULL);
  if (state == 2) return det_adjugate(c, S(0), g);
  T not_tiny = call1(c, weft_logical_not, tiny);
  T m = unsq(c, unsq(c, tiny, -1), -1);
  T sing = det_adjugate(c, masked_to_eye(c, S(0), not_tiny), g);
  T rest = det_cofactors(c, g, tiny);
  return sing && rest && m ? keep(c, weft_where(m, sing, rest)) : NULL;
}

/* linalg_slogdet (1.13's slogdet_backward, real A): the node owns
 * logabsdet, RES is the sign; g_logabsdet A^-T. Without createGraph 1.13
 * solves A^T X = g I with the forward's LU and no check: a singular A
 * gives the infinities and NaNs of its zero pivot (inv_unchecked of A^T
 * factors the same matrix and solves the same system). With createGraph it
 * calls linalg.solve(A^T, g I), which refuses a singular A. */
static T linalg_slogdet_backward(weft__bctx* c, T g) {
  T gd = unsq(c, unsq(c, g, -1), -1);
  if (!weft_grad_enabled()) return mul(c, gd, inv_unchecked(c, mT(c, S(0))));
  T eye = keep(c, weft_eye(SIZES(0)[NDIM(0) - 1], S(0)->dtype, S(0)->device));
  return solve2(c, mT(c, S(0)), mul(c, gd, eye), true);
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

/* ---- linalg_lstsq(A, B): 1.13's linalg_lstsq_backward (whatever the
 * driver), through pinv(A) and pinv_backward. pinv(A) is the minimum-norm
 * least-squares solution of A X = I by 'gelsd', whose SVD cut (singular
 * values at or below eps * max(m, n) * s_max dropped) is 1.13's
 * linalg_pinv's default ---- */
static T pinv_of(weft__bctx* c, T a) {
  int64_t m = a->sizes[a->ndim - 2];
  int64_t sizes[WEFT_MAX_DIMS]; /* I with a's number of dims: a 2-D B under a batched A would be a vector */
  for (int i = 0; i < a->ndim; i++) sizes[i] = i < a->ndim - 2 ? 1 : m;
  T eye = keep(c, weft_eye(m, a->dtype, a->device));
  eye = eye ? keep(c, weft_reshape(eye, sizes, a->ndim)) : NULL;
  if (!eye) return NULL;
  weft_tensor4 r = weft_linalg_lstsq(a, eye, NAN, "gelsd");
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
