/* _linalg_svd's gradient (included by formulas.c): PyTorch 1.13's
 * svd_backward (FunctionsManual.cpp) for real inputs, after
 * derivatives.yaml's narrowing of full_matrices' U and Vh (and their
 * gradients) to their first k = min(m, n) columns / rows. RES is U, RES2 S,
 * RES3 Vh; c->grads[i] is NULL where output i got no gradient. Distinct
 * singular values are assumed, as 1.13 does; with only gS (svdvals, the
 * 2-norm, the nuclear norm) the gradient U diag(gS) Vh is always defined. */
static T narrow_k(weft__bctx* c, T a, int64_t dim, int64_t k) {
  return a ? keep(c, weft_narrow(a, dim, 0, k)) : NULL;
}
static T skew(weft__bctx* c, T a) { return sub(c, a, mT(c, a)); }

/* the k x k identity, k = s's last size */
static T eye_of(weft__bctx* c, T s) { return s ? keep(c, weft_eye(s->sizes[s->ndim - 1], s->dtype, s->device)) : NULL; }

/* E = S_j^2 - S_i^2, its diagonal 1 (anything non-zero: it divides zeros) */
static T svd_gaps(weft__bctx* c, T s) {
  T s2 = mul(c, s, s);
  return add(c, sub(c, unsq(c, s2, -2), unsq(c, s2, -1)), eye_of(c, s));
}

/* everything of gA but the projections: (U^T gU / E) S + S (V^T gV / E) + diag(gS) */
static T svd_core(weft__bctx* c, T gu, T gs, T gvh, T u, T s, T vh) {
  T e = svd_gaps(c, s);
  T uhgu = gu ? skew(c, matmul2(c, mT(c, u), gu)) : NULL;
  T vhgv = gvh ? skew(c, matmul2(c, vh, mT(c, gvh))) : NULL;
  T ret;
  if (gu && gvh)
    ret = div(c, add(c, mul(c, uhgu, unsq(c, s, -2)), mul(c, unsq(c, s, -1), vhgv)), e);
  else if (gu)
    ret = mul(c, div(c, uhgu, e), unsq(c, s, -2));
  else
    ret = mul(c, unsq(c, s, -1), div(c, vhgv, e));
  if (gs) ret = add(c, ret, mul(c, unsq(c, gs, -1), eye_of(c, s))); /* diag(gS) */
  return ret;
}

static T linalg_svd_backward(weft__bctx* c) {
  bool full = BOOLA(1);
  T s = RES2, gs = c->grads[1];
  int64_t k = s->sizes[s->ndim - 1], m = RES->sizes[RES->ndim - 2], n = RES3->sizes[RES3->ndim - 1];
  T u = full ? narrow_k(c, RES, -1, k) : RES, vh = full ? narrow_k(c, RES3, -2, k) : RES3;
  T gu = full ? narrow_k(c, c->grads[0], -1, k) : c->grads[0];
  T gvh = full ? narrow_k(c, c->grads[2], -2, k) : c->grads[2];
  if (!gu && !gvh) /* svdvals: U diag(gS) Vh */
    return m >= n ? matmul2(c, u, mul(c, unsq(c, gs, -1), vh)) : matmul2(c, mul(c, u, unsq(c, gs, -2)), vh);
  T ga = svd_core(c, gu, gs, gvh, u, s, vh);
  if (m > n && gu) { /* [U gA + (I - U U^T) gU S^-1] Vh */
    T gusinv = div(c, gu, unsq(c, s, -2));
    ga = add(c, matmul2(c, u, ga), sub(c, gusinv, matmul2(c, u, matmul2(c, mT(c, u), gusinv))));
    return matmul2(c, ga, vh);
  }
  if (m < n && gvh) { /* U [gA Vh + S^-1 gVh (I - V Vh)] */
    T sinvgvh = div(c, gvh, unsq(c, s, -1));
    ga = add(c, matmul2(c, ga, vh), sub(c, sinvgvh, matmul2(c, matmul2(c, sinvgvh, mT(c, vh)), vh)));
    return matmul2(c, u, ga);
  }
  return m >= n ? matmul2(c, u, matmul2(c, ga, vh)) : matmul2(c, matmul2(c, u, ga), vh);
}
