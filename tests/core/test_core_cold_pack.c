/* test_core_cold_pack.c - the packed cold CSR (mx_cold_pack.h) against the plain one.
 *
 * For every matrix x crux x request (AUTO, OFF, and every value, column and row encoding forced): the
 * statistics equal an independent count; a forced encoding is refused exactly when it cannot hold the
 * matrix; AUTO takes the fitting encodings of fewest exact bytes (row pointers plain: 16-bit row
 * offsets are forced only); the pack expands back to the cold
 * CSR bit for bit; y = C x and y = C x + z (y == z too) are bitwise equal to the uncompressed cold
 * kernel and within 1e-12 of a plain CSR reference. Then the refresh paths (through the gather map,
 * to fewer/more distinct values, a forced dictionary that no longer fits falls back to plain) and
 * scaling (bitwise equal to scaling every entry). Matrices: random, stencils, unweighted graphs,
 * PageRank transition (column-constant), unique values, empty rows, empty, 1 row, rectangular,
 * signed zeros and NaN/inf bit patterns, a row too long for 16-bit row offsets. */
#include "core/mx_cold_pack.h"
#include "core/mx_hot_pack.h"
#include "io/mx_io.h"
#include "test_util.h"

static uint64_t bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

static int bits_equal(const double *a, const double *b, int32_t n) { return n == 0 || memcmp(a, b, (size_t)n * 8) == 0; }

/* The cold CSR of F as a matrix of its own (an mx_csr view and an owned t_csr copy). */
static mx_csr cold_view(const mx_format *F) {
  mx_csr C = {F->nrows, F->ncols, F->cold_rowptr, F->cold_col, F->cold_val};
  return C;
}

static t_csr cold_copy(const mx_format *F) {
  t_csr C = {F->nrows, F->ncols, F->cold_nnz, malloc(((size_t)F->nrows + 1) * 4), malloc(((size_t)F->cold_nnz + 1) * 4),
             malloc(((size_t)F->cold_nnz + 1) * 8)};
  memcpy(C.rowptr, F->cold_rowptr, ((size_t)F->nrows + 1) * 4);
  if (F->cold_nnz) memcpy(C.colidx, F->cold_col, (size_t)F->cold_nnz * 4), memcpy(C.val, F->cold_val, (size_t)F->cold_nnz * 8);
  return C;
}

/* the uncompressed cold kernel of mx_spmv.c: F without its hot part */
static void plain_cold(const mx_format *F, const double *x, const double *z, double *y) {
  mx_format G = *F;
  G.mode = MX_HOT_NONE;
  if (z) mx_spmv_add(&G, x, z, y);
  else mx_spmv(&G, x, y);
}

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The statistics, computed the slow way (sort for distinct values, a pass per column). */
static mx_cold_pack_stats ref_stats(const t_csr *C) {
  mx_cold_pack_stats st = {C->nnz, C->ncols, 0, 1, 0, C->nrows, 0};
  for (int32_t i = 0; i <= C->nrows && C->nrows > 0; i++) { /* every pointer against its chunk's first */
    const int64_t d = (int64_t)C->rowptr[i] - C->rowptr[i - i % MX_PACK_RCHUNK];
    st.max_row_span = d > st.max_row_span ? d : st.max_row_span;
  }
  uint64_t *b = malloc(((size_t)C->nnz + 1) * 8);
  for (int32_t p = 0; p < C->nnz; p++) b[p] = bits(C->val[p]);
  qsort(b, (size_t)C->nnz, 8, cmp_u64);
  for (int32_t p = 0; p < C->nnz; p++) st.ndistinct += p == 0 || b[p] != b[p - 1];
  if (st.ndistinct > MX_PACK_DICT_MAX + 1) st.ndistinct = MX_PACK_DICT_MAX + 1;
  for (int32_t j = 0; j < C->ncols && st.colconst; j++) {
    int have = 0;
    uint64_t s = 0;
    for (int32_t p = 0; p < C->nnz; p++)
      if (C->colidx[p] == j) {
        if (have && bits(C->val[p]) != s) st.colconst = 0;
        have = 1, s = bits(C->val[p]);
      }
  }
  for (int32_t s0 = 0; s0 < C->nnz; s0 += 32) {
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (int32_t p = s0; p < C->nnz && p < s0 + 32; p++) lo = C->colidx[p] < lo ? C->colidx[p] : lo, hi = C->colidx[p] > hi ? C->colidx[p] : hi;
    if ((int64_t)hi - lo > st.max_span) st.max_span = (int64_t)hi - lo;
  }
  free(b);
  return st;
}

/* P against the cold part of F: expansion, products bitwise, reference within 1e-12. */
static void check_pack_products(const mx_cold_pack *P, const mx_format *F, const char *what, uint64_t seed) {
  const int32_t m = F->nrows, n = F->ncols, nz = F->cold_nnz;
  int32_t *Bp = malloc(((size_t)m + 1) * 4), *Bj = malloc(((size_t)nz + 1) * 4);
  double *Bx = malloc(((size_t)nz + 1) * 8);
  mx_cold_pack_expand(P, Bp, Bj, Bx);
  CHECK(memcmp(Bp, F->cold_rowptr, ((size_t)m + 1) * 4) == 0, "%s: expanded rowptr", what);
  CHECK(nz == 0 || memcmp(Bj, F->cold_col, (size_t)nz * 4) == 0, "%s: expanded columns", what);
  CHECK(bits_equal(Bx, F->cold_val, nz), "%s: expanded values (bits)", what);
  t_rng r = {seed};
  double *x = t_vec(&r, n), *z = t_vec(&r, m), *y = t_vec(&r, m), *yp = t_vec(&r, m), *ref = t_vec(&r, m), *w = t_vec(&r, m);
  t_csr C = cold_copy(F);
  t_ref_spmv(&C, x, ref);
  plain_cold(F, x, NULL, y);
  mx_cold_pack_spmv(P, x, NULL, yp);
  CHECK(bits_equal(y, yp, m), "%s: y = C x not bitwise equal to the plain cold kernel", what);
  CHECK(t_relerr(yp, ref, m) <= 1e-12, "%s: y = C x err %g", what, t_relerr(yp, ref, m));
  plain_cold(F, x, z, y);
  mx_cold_pack_spmv(P, x, z, yp);
  CHECK(bits_equal(y, yp, m), "%s: y = C x + z not bitwise equal", what);
  memcpy(w, z, (size_t)m * 8);
  mx_cold_pack_spmv(P, x, w, w);
  CHECK(bits_equal(y, w, m), "%s: z = C x + z (in place) not bitwise equal", what);
  /* the whole format: packed cold part + hot part == mx_spmv / mx_spmv_add of F */
  mx_spmv(F, x, y);
  mx_spmv_compressed(F, NULL, P, NULL, x, NULL, yp);
  CHECK(bits_equal(y, yp, m), "%s: packed format y = A x not bitwise equal to mx_spmv", what);
  mx_spmv_add(F, x, z, y);
  memcpy(w, z, (size_t)m * 8);
  mx_spmv_compressed(F, NULL, P, NULL, x, w, w);
  CHECK(bits_equal(y, w, m), "%s: packed format z = A x + z not bitwise equal to mx_spmv_add", what);
  t_csr_free(&C);
  free(Bp), free(Bj), free(Bx), free(x), free(z), free(y), free(yp), free(ref), free(w);
}

#define A_ MX_PACK_AUTO
static const mx_pack_request t_requests[] = {
    {A_, A_, A_, MX_FORM_PACK},                             {MX_VAL_PLAIN, MX_IDX_PLAIN, A_, MX_FORM_PACK},           {MX_VAL_DICT0, A_, A_, MX_FORM_PACK},
    {MX_VAL_DICT8, A_, A_, MX_FORM_PACK},                   {MX_VAL_DICT16, A_, A_, MX_FORM_PACK},                    {MX_VAL_COLCONST, A_, A_, MX_FORM_PACK},
    {A_, MX_IDX_DELTA8, A_, MX_FORM_PACK},                  {A_, MX_IDX_DELTA16, A_, MX_FORM_PACK},                   {MX_VAL_DICT16, MX_IDX_DELTA16, A_, MX_FORM_PACK},
    {MX_VAL_COLCONST, MX_IDX_DELTA8, A_, MX_FORM_PACK},     {MX_VAL_PLAIN, MX_IDX_DELTA8, A_, MX_FORM_PACK},          {MX_VAL_DICT8, MX_IDX_PLAIN, A_, MX_FORM_PACK},
    {A_, A_, MX_ROW_PLAIN, MX_FORM_PACK},                   {A_, A_, MX_ROW_OFF16, MX_FORM_PACK},                     {MX_VAL_PLAIN, MX_IDX_PLAIN, MX_ROW_OFF16, MX_FORM_PACK},
    {MX_VAL_DICT8, MX_IDX_DELTA16, MX_ROW_OFF16, MX_FORM_PACK}, {MX_VAL_PLAIN, MX_IDX_DELTA8, MX_ROW_PLAIN, MX_FORM_PACK}};
#undef A_
#define T_NREQ ((int)(sizeof t_requests / sizeof t_requests[0]))

/* Every request on the cold part of F. Returns how many requests packed. */
static int check_requests(const mx_format *F, const char *name) {
  const mx_csr V = cold_view(F);
  t_csr C = cold_copy(F);
  const mx_cold_pack_stats ref = ref_stats(&C);
  mx_cold_pack_stats st;
  CHECK(mx_cold_pack_stats_of(&V, &st) == MX_OK, "%s: stats", name);
  CHECK(st.nnz == ref.nnz && st.ncols == ref.ncols && st.ndistinct == ref.ndistinct && st.colconst == ref.colconst &&
            st.max_span == ref.max_span && st.nrows == ref.nrows && st.max_row_span == ref.max_row_span,
        "%s: stats (%lld distinct, colconst %d, span %lld, row span %lld) vs reference (%lld, %d, %lld, %lld)", name,
        (long long)st.ndistinct, st.colconst, (long long)st.max_span, (long long)st.max_row_span, (long long)ref.ndistinct,
        ref.colconst, (long long)ref.max_span, (long long)ref.max_row_span);
  int packed = 0;
  size_t auto_bytes = 0, least = SIZE_MAX;
  int    auto_colconst = 0; /* AUTO chose COLCONST */
  for (int q = 0; q < T_NREQ; q++) {
    const mx_pack_request *rq = &t_requests[q];
    char what[320];
    snprintf(what, sizeof what, "%s req (%d,%d,%d)", name, rq->val, rq->idx, rq->row);
    const int vfits = rq->val == MX_PACK_AUTO || mx_pack_value_fits((mx_val_enc)rq->val, &ref);
    const int ifits = rq->idx == MX_PACK_AUTO || mx_pack_index_fits((mx_idx_enc)rq->idx, &ref);
    const int rfits = rq->row == MX_PACK_AUTO || mx_pack_row_fits((mx_row_enc)rq->row, &ref);
    mx_cold_pack P;
    const mx_status s = mx_cold_pack_build(&V, rq, &P);
    if (!vfits || !ifits || !rfits) {
      CHECK(s == MX_ERR_ARG && P.rowptr == NULL && P.row_off == NULL, "%s: a forced encoding that cannot hold it was not refused (%d)",
            what, (int)s);
      continue;
    }
    CHECK(s == MX_OK, "%s: build returned %d", what, (int)s);
    if (s != MX_OK) continue;
    packed++;
    if (rq->val != MX_PACK_AUTO) CHECK((int)P.val_enc == rq->val, "%s: value encoding %d", what, (int)P.val_enc);
    if (rq->idx != MX_PACK_AUTO) CHECK((int)P.idx_enc == rq->idx, "%s: column encoding %d", what, (int)P.idx_enc);
    if (rq->row != MX_PACK_AUTO) CHECK((int)P.row_enc == rq->row, "%s: row encoding %d", what, (int)P.row_enc);
    else
      CHECK(P.row_enc == MX_ROW_PLAIN, "%s: AUTO row encoding %s", what, mx_row_enc_name(P.row_enc));
    CHECK((P.row_enc == MX_ROW_OFF16) == (P.rowptr == NULL && P.row_off != NULL && P.nrchunk == F->nrows / MX_PACK_RCHUNK + 1),
          "%s: row arrays of %s", what, mx_row_enc_name(P.row_enc));
    const size_t b = mx_cold_pack_bytes(&P);
    CHECK(b == mx_pack_row_bytes(P.row_enc, F->nrows) + mx_pack_value_bytes(P.val_enc, &ref) + mx_pack_index_bytes(P.idx_enc, ref.nnz),
          "%s: bytes %zu", what, b);
    if (rq->val == MX_VAL_PLAIN && rq->idx == MX_IDX_PLAIN && rq->row != MX_ROW_OFF16)
      CHECK(b == mx_csr_bytes(F->nrows, F->cold_nnz), "%s: plain bytes %zu != CSR", what, b);
    if (q == 0) {
      auto_bytes      = b - mx_pack_row_bytes(P.row_enc, F->nrows);
      auto_colconst = P.val_enc == MX_VAL_COLCONST;
    }
    least = b < least ? b : least;
    check_pack_products(&P, F, what, 1000 + (uint64_t)q);
    mx_cold_pack_free(&P);
  }
  /* AUTO is the least of every fitting (value, column) pair in bytes moved per product: the exact
   * bytes, plus 16 per column for COLCONST (x scaled once per product, mx_cold_pack_choose); its row
   * pointers (the rule is checked above) are not part of the comparison */
  const size_t colconst_extra = 16 * (size_t)ref.ncols;
  least = (size_t)-1;
  for (int v = 0; v <= MX_VAL_COLCONST; v++)
    for (int i = 0; i <= MX_IDX_DELTA16; i++)
      if (mx_pack_value_fits((mx_val_enc)v, &ref) && mx_pack_index_fits((mx_idx_enc)i, &ref)) {
        const size_t b = mx_pack_value_bytes((mx_val_enc)v, &ref) + mx_pack_index_bytes((mx_idx_enc)i, ref.nnz) +
                         (v == MX_VAL_COLCONST ? colconst_extra : 0);
        least = b < least ? b : least;
      }
  const size_t auto_moved = auto_bytes + (auto_colconst ? colconst_extra : 0);
  CHECK(auto_moved == least, "%s: AUTO moves %zu bytes, least is %zu", name, auto_moved, least);
  t_csr_free(&C);
  return packed;
}

/* Refresh through the gather map with new values nv (of the whole input), and scaling; P built by
 * rq on F's cold part. expect_fallback: -1 don't care, 0/1 as P.fell_back must be. */
static void check_refresh(const t_csr *A, mx_crux c, mx_pack_request rq, const double *nv, int expect_fallback, const char *name) {
  char what[320];
  snprintf(what, sizeof what, "%s crux (%g,%g) req (%d,%d,%d) refresh", name, c.tau_c, c.tau_r, rq.val, rq.idx, rq.row);
  const mx_csr V = t_view(A);
  mx_format F;
  mx_cold_pack P;
  if (mx_format_build(&V, c, MX_MODE_AUTO, &F) != MX_OK) {
    CHECK(0, "%s: format build", what);
    return;
  }
  const mx_csr Cv = cold_view(&F);
  if (mx_cold_pack_build(&Cv, &rq, &P) != MX_OK) {
    CHECK(0, "%s: pack build", what);
    mx_format_free(&F);
    return;
  }
  const mx_val_enc before = P.val_enc;
  mx_format_refresh_values(&F, nv);
  CHECK(mx_cold_pack_refresh(&P, nv, F.cold_src) == MX_OK, "%s: refresh failed", what);
  CHECK(P.prev_val_enc == before, "%s: prev_val_enc", what);
  if (expect_fallback >= 0) CHECK(P.fell_back == expect_fallback, "%s: fell_back %d", what, P.fell_back);
  if (P.fell_back) CHECK(P.val_enc == MX_VAL_PLAIN, "%s: fell back but not plain", what);
  t_csr C = cold_copy(&F);
  mx_cold_pack_stats ref = ref_stats(&C);
  if (rq.val == MX_PACK_AUTO) { /* the refreshed encoding is the one a fresh AUTO build takes */
    mx_cold_pack Q;
    CHECK(mx_cold_pack_build(&Cv, &rq, &Q) == MX_OK && Q.val_enc == P.val_enc, "%s: refresh chose %d, a build %d", what,
          (int)P.val_enc, (int)Q.val_enc);
    mx_cold_pack_free(&Q);
  } else {
    CHECK(P.val_enc == (mx_pack_value_fits((mx_val_enc)rq.val, &ref) ? (mx_val_enc)rq.val : MX_VAL_PLAIN), "%s: forced after refresh %d", what,
          (int)P.val_enc);
  }
  check_pack_products(&P, &F, what, 55);
  /* scaling: the pack scaled == every cold value scaled */
  static const double alphas[] = {-2.5, 3.0, 0.0, -1.0};
  for (int a = 0; a < 4; a++) {
    mx_cold_pack_scale(&P, alphas[a]);
    for (int32_t p = 0; p < F.cold_nnz; p++) F.cold_val[p] *= alphas[a];
    char w2[360];
    snprintf(w2, sizeof w2, "%s scaled by %g", what, alphas[a]);
    check_pack_products(&P, &F, w2, 66 + (uint64_t)a);
  }
  t_csr_free(&C);
  mx_cold_pack_free(&P);
  mx_format_free(&F);
}

typedef enum { V_KEEP, V_PAGERANK, V_UNIQUE, V_FEW, V_SPECIAL, V_SIGNED_ZERO_COL } t_values;

/* Replace A's values: PageRank transition (a_ij = 1/(entries of column j)), unique (random), few
 * (one of 5), special bit patterns (0, -0, NaNs with two payloads, +-inf, 1), or a column-constant
 * matrix except that one column holds both 0.0 and -0.0. */
static void make_values(t_csr *A, t_values how, uint64_t seed) {
  t_rng r = {seed};
  int32_t *cnt = calloc((size_t)A->ncols + 1, 4);
  for (int32_t p = 0; p < A->nnz; p++) cnt[A->colidx[p]]++;
  uint64_t nan1 = 0x7ff8000000000001ull, nan2 = 0xfff4000000000abcull;
  double special[7] = {0.0, -0.0, 0, 0, INFINITY, -INFINITY, 1.0};
  memcpy(&special[2], &nan1, 8);
  memcpy(&special[3], &nan2, 8);
  int zero_col = -1;
  for (int32_t p = 0; p < A->nnz; p++) {
    const int32_t j = A->colidx[p];
    switch (how) {
      case V_PAGERANK: A->val[p] = 1.0 / cnt[j]; break;
      case V_UNIQUE: A->val[p] = 2.0 * t_unif(&r) - 1.0; break;
      case V_FEW: A->val[p] = (double)(t_below(&r, 5)) - 2.0; break;
      case V_SPECIAL: A->val[p] = special[t_below(&r, 7)]; break;
      case V_SIGNED_ZERO_COL:
        if (zero_col < 0 && cnt[j] >= 2) zero_col = j;
        A->val[p] = j == zero_col ? (t_below(&r, 2) ? 0.0 : -0.0) : 0.5 * j;
        break;
      default: break;
    }
  }
  if (how == V_SIGNED_ZERO_COL && zero_col >= 0) { /* make sure both zeros occur in that column */
    int k = 0;
    for (int32_t p = 0; p < A->nnz; p++)
      if (A->colidx[p] == zero_col) A->val[p] = (k++ % 2) ? 0.0 : -0.0;
  }
  free(cnt);
}

static const mx_crux cruxes[] = {{0, 0}, {0.5, 0.3}, {1, 1}, {0.9, 0.8}};

/* Every crux x every request on A, then refresh paths at (0,0) and (0.5,0.3). */
static void battery(t_csr *A, const char *name, int expect_colconst_at00) {
  for (int g = 0; g < 4; g++) {
    const mx_csr V = t_view(A);
    mx_format F;
    char what[256];
    snprintf(what, sizeof what, "%s %dx%d nnz %d crux (%g,%g)", name, A->nrows, A->ncols, A->nnz, cruxes[g].tau_c, cruxes[g].tau_r);
    if (mx_format_build(&V, cruxes[g], MX_MODE_AUTO, &F) != MX_OK) {
      CHECK(0, "%s: format build", what);
      continue;
    }
    const int packed = check_requests(&F, what);
    CHECK(packed >= 2, "%s: only %d requests packed", what, packed);
    if (g == 0 && expect_colconst_at00 >= 0) {
      mx_cold_pack_stats st;
      const mx_csr Cv = cold_view(&F);
      mx_cold_pack_stats_of(&Cv, &st);
      CHECK(st.colconst == expect_colconst_at00, "%s: colconst %d", what, st.colconst);
    }
    mx_format_free(&F);
  }
  /* refresh: to unique values (a dictionary no longer fits), to few values, to the same values */
  double *uniq = malloc(((size_t)A->nnz + 1) * 8), *few = malloc(((size_t)A->nnz + 1) * 8);
  t_rng r = {7};
  for (int32_t p = 0; p < A->nnz; p++) uniq[p] = 2.0 * t_unif(&r) - 1.0 + 1e-3 * p, few[p] = (double)(p % 3) - 1.0;
  for (int g = 0; g < 2; g++) {
    const mx_pack_request autoq = {MX_PACK_AUTO, MX_PACK_AUTO, MX_PACK_AUTO, MX_FORM_PACK}, d16 = {MX_VAL_DICT16, MX_PACK_AUTO, MX_PACK_AUTO, MX_FORM_PACK},
                          d8 = {MX_VAL_DICT8, MX_PACK_AUTO, MX_PACK_AUTO, MX_FORM_PACK};
    check_refresh(A, cruxes[g], autoq, uniq, -1, name);
    check_refresh(A, cruxes[g], autoq, few, -1, name);
    check_refresh(A, cruxes[g], autoq, A->val, 0, name);
    t_csr C = *A;
    mx_cold_pack_stats st;
    const mx_csr Cv = t_view(&C);
    mx_cold_pack_stats_of(&Cv, &st);
    if (st.ndistinct <= 256) check_refresh(A, cruxes[g], d8, uniq, A->nnz > 300 ? 1 : -1, name); /* 300+ distinct: falls back */
    if (st.ndistinct <= MX_PACK_DICT_MAX) check_refresh(A, cruxes[g], d16, few, 0, name);
  }
  free(uniq), free(few);
}

/* *A = generated matrix spec with values how (seed); 0 on success, else a failed check. */
static int gen_matrix(const char *spec, t_values how, uint64_t seed, t_csr *A) {
  if (t_gen(spec, A)) return 1;
  make_values(A, how, seed);
  return 0;
}

static void gen_battery(const char *spec, t_values how, const char *name, int expect_colconst) {
  t_csr A;
  if (gen_matrix(spec, how, 11, &A)) return;
  battery(&A, name, expect_colconst);
  t_csr_free(&A);
}

/* AUTO on typical matrices takes the expected encodings at crux (0,0). */
static void check_auto_choice(const char *spec, t_values how, mx_val_enc ve, mx_idx_enc ie, mx_row_enc re) {
  t_csr A;
  if (gen_matrix(spec, how, 3, &A)) return;
  const mx_csr V = t_view(&A);
  const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_cold_pack P;
  CHECK(mx_cold_pack_build(&V, &rq, &P) == MX_OK, "%s: build", spec);
  CHECK(P.val_enc == ve && P.idx_enc == ie && P.row_enc == re, "%s values %d: AUTO chose %s/%s/%s, expected %s/%s/%s", spec,
        (int)how, mx_val_enc_name(P.val_enc), mx_idx_enc_name(P.idx_enc), mx_row_enc_name(P.row_enc), mx_val_enc_name(ve),
        mx_idx_enc_name(ie), mx_row_enc_name(re));
  printf("%-14s values %d: %-8s %-7s %-5s %.2f bytes/nnz (plain %.2f)\n", spec, (int)how, mx_val_enc_name(P.val_enc),
         mx_idx_enc_name(P.idx_enc), mx_row_enc_name(P.row_enc), (double)mx_cold_pack_bytes(&P) / (A.nnz ? A.nnz : 1),
         (double)mx_csr_bytes(A.nrows, A.nnz) / (A.nnz ? A.nnz : 1));
  mx_cold_pack_free(&P);
  t_csr_free(&A);
}

/* mx_pack_colconst_settles: where it says COLCONST is settled without the count of distinct values,
 * the AUTO choice is COLCONST for every count >= 2 (dictionaries of 2 .. 65537 values); with the count
 * 2 it says so exactly when AUTO picks COLCONST; a forced request settles only as itself. */
static void check_colconst_settles(void) {
  static const int64_t nnzs[] = {1, 7, 100, 1000, 100000};
  static const int32_t ncols[] = {1, 5, 60, 1000, 70000};
  static const int64_t counts[] = {2, 3, 255, 256, 257, 65536, MX_PACK_DICT_MAX + 1};
  const mx_pack_request autoq = {MX_PACK_AUTO, MX_IDX_PLAIN, MX_ROW_PLAIN, MX_FORM_PACK};
  int settled = 0, unsettled = 0;
  for (size_t a = 0; a < sizeof nnzs / sizeof nnzs[0]; a++)
    for (size_t b = 0; b < sizeof ncols / sizeof ncols[0]; b++)
      for (int cc = 0; cc <= 1; cc++) {
        mx_cold_pack_stats st = {nnzs[a], ncols[b], 2, cc, 0, 0, 0};
        mx_val_enc v;
        mx_idx_enc ix;
        mx_row_enc rw;
        const int says = mx_pack_colconst_settles(MX_PACK_AUTO, &st);
        CHECK(mx_cold_pack_choose(&autoq, &st, &v, &ix, &rw) == MX_OK && says == (v == MX_VAL_COLCONST),
              "settles nnz %lld ncols %d colconst %d: says %d, AUTO with 2 values picks %s", (long long)st.nnz, st.ncols, cc,
              says, mx_val_enc_name(v));
        for (size_t k = 0; says && k < sizeof counts / sizeof counts[0]; k++) {
          st.ndistinct = counts[k];
          CHECK(mx_cold_pack_choose(&autoq, &st, &v, &ix, &rw) == MX_OK && v == MX_VAL_COLCONST,
                "settles nnz %lld ncols %d: with %lld values AUTO picks %s", (long long)st.nnz, st.ncols, (long long)counts[k],
                mx_val_enc_name(v));
        }
        CHECK(mx_pack_colconst_settles(MX_VAL_COLCONST, &st) == cc, "forced COLCONST settles iff column-constant");
        CHECK(!mx_pack_colconst_settles(MX_VAL_DICT8, &st) && !mx_pack_colconst_settles(MX_VAL_PLAIN, &st),
              "a forced dictionary or plain request never settles COLCONST");
        settled += says, unsettled += cc && !says;
      }
  CHECK(settled > 0 && unsettled > 0, "settles: both outcomes covered (%d settled, %d column-constant not)", settled, unsettled);
}

/* mx_pack_assumed_gain: MX_PACK_GAIN_IN_L2 exactly where the plain cold CSR, x and y fit half the
 * L2 (the boundary byte by byte), the gain given elsewhere, without an L2, or where it is lower. */
static void check_assumed_gain(void) {
  const int32_t nrows = 1000, ncols = 2000;
  const int64_t nnz = 100000;
  const size_t bytes = 12 * (size_t)nnz + 4 * ((size_t)nrows + 1) + 8 * ((size_t)nrows + ncols); /* 1,228,004 */
  CHECK(mx_pack_assumed_gain(0.2, nrows, ncols, nnz, 2 * bytes) == MX_PACK_GAIN_IN_L2, "assumed gain: fits half the L2 exactly");
  CHECK(mx_pack_assumed_gain(0.2, nrows, ncols, nnz, 2 * bytes - 1) == 0.2, "assumed gain: one byte over half the L2");
  CHECK(mx_pack_assumed_gain(0.2, nrows, ncols, nnz, 0) == 0.2, "assumed gain: no L2 known");
  CHECK(mx_pack_assumed_gain(0.01, nrows, ncols, nnz, 100 * bytes) == 0.01, "assumed gain: a lower gain is kept");
  CHECK(mx_pack_assumed_gain(0.2, 0, 0, 0, 1) == 0.2, "assumed gain: an empty matrix's 4 bytes over half of 1 byte");
  CHECK(mx_pack_assumed_gain(0.2, 0, 0, 0, 8) == MX_PACK_GAIN_IN_L2, "assumed gain: an empty matrix in 8 bytes");
  CHECK(mx_pack_assumed_gain(0.2, 2000000000, 2000000000, (int64_t)3000000000, (size_t)60 << 20) == 0.2, "assumed gain: a huge matrix (no overflow)");
}

int main(void) {
  /* m, n, nz, row_pw, col_pw, skip_row, skip_col, dense_rows, dense_cols, dup, seed */
  static const struct {
    const char *name;
    t_spec s;
    t_values v;
  } cases[] = {
      {"0x0", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, V_KEEP},
      {"5x0", {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}, V_KEEP},
      {"no nnz", {40, 30, 0, 0, 0, 0, 0, 0, 0, 0, 7}, V_KEEP},
      {"1x1", {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 4}, V_KEEP},
      {"one row", {1, 100, 60, 0, 0, 0, 0, 0, 0, 0.2, 18}, V_KEEP},
      {"one row few", {1, 300, 200, 0, 0, 0, 0, 0, 0, 0, 18}, V_FEW},
      {"uniform unique", {100, 100, 500, 0, 0, 0, 0, 0, 0, 0, 8}, V_KEEP},
      {"uniform few", {100, 100, 500, 0, 0, 0, 0, 0, 0, 0, 8}, V_FEW},
      {"wide", {50, 3000, 900, 0, 0, 0, 0, 0, 0, 0, 16}, V_FEW},
      {"tall pagerank", {300, 50, 900, 0, 0, 0, 0, 0, 0, 0, 17}, V_PAGERANK},
      {"empty rows+cols", {200, 150, 1200, 0, 0, 3, 4, 0, 0, 0, 20}, V_FEW},
      {"empty rows pagerank", {200, 150, 1200, 0, 0, 3, 4, 0, 0, 0, 20}, V_PAGERANK},
      {"dense rows", {120, 80, 300, 0, 0, 0, 0, 2, 0, 0, 21}, V_KEEP},
      {"power law special", {2000, 2000, 20000, 3, 3, 0, 0, 0, 0, 0, 25}, V_SPECIAL},
      {"duplicates few", {100, 60, 800, 2, 2, 0, 0, 0, 0, 0.3, 28}, V_FEW},
      {"signed zero column", {300, 200, 3000, 0, 0, 0, 0, 0, 0, 0, 32}, V_SIGNED_ZERO_COL},
      {"wide 70000 cols few", {40, 70000, 2000, 0, 0, 0, 0, 0, 0, 0, 33}, V_FEW},
      {"power law big", {8191, 8193, 60000, 2.5, 2.5, 7, 0, 1, 1, 0.01, 31}, V_KEEP},
  };
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    t_csr A = t_random(&cases[t].s);
    make_values(&A, cases[t].v, 100 + t);
    battery(&A, cases[t].name, cases[t].v == V_PAGERANK ? 1 : cases[t].v == V_SIGNED_ZERO_COL ? 0 : -1);
    t_csr_free(&A);
  }
  /* > 65536 distinct values: no dictionary at all */
  {
    t_spec s = {400, 400, 70000, 0, 0, 0, 0, 0, 0, 0, 40};
    t_csr A = t_random(&s);
    make_values(&A, V_UNIQUE, 41);
    const mx_csr V = t_view(&A);
    mx_cold_pack_stats st;
    mx_cold_pack_stats_of(&V, &st);
    CHECK(st.ndistinct == MX_PACK_DICT_MAX + 1, "70000 unique: ndistinct %lld", (long long)st.ndistinct);
    battery(&A, "70000 unique", 0);
    t_csr_free(&A);
  }
  /* a row of 70000 nonzeros: its chunk spans more than 16 bits, so a forced OFF16 is refused */
  {
    t_spec s = {70, 70000, 300, 0, 0, 0, 0, 1, 0, 0, 42};
    t_csr A = t_random(&s);
    make_values(&A, V_FEW, 43);
    const mx_csr V = t_view(&A);
    const mx_pack_request rq = {MX_PACK_AUTO, MX_PACK_AUTO, MX_ROW_OFF16, MX_FORM_PACK};
    mx_cold_pack P;
    CHECK(mx_cold_pack_build(&V, &rq, &P) == MX_ERR_ARG, "long row: a forced OFF16 was not refused");
    battery(&A, "long row", -1);
    t_csr_free(&A);
  }
  gen_battery("lap2d:40", V_KEEP, "lap2d:40", 0);
  gen_battery("lap3d:12", V_KEEP, "lap3d:12", 0);
  gen_battery("lap3d27:8", V_KEEP, "lap3d27:8", 0);
  gen_battery("convdiff2d:30", V_KEEP, "convdiff2d:30", 0);
  gen_battery("kron:9:8", V_KEEP, "kron:9:8 unweighted", 1);
  gen_battery("kron:9:8", V_PAGERANK, "kron:9:8 pagerank", 1);
  gen_battery("rgg:10", V_KEEP, "rgg:10 unweighted", 1);
  gen_battery("rgg:10:v", V_KEEP, "rgg:10:v weighted", 0);
  gen_battery("band:500:3", V_KEEP, "band unique", 0);
  check_auto_choice("lap2d:100", V_KEEP, MX_VAL_DICT8, MX_IDX_DELTA8, MX_ROW_PLAIN);
  check_auto_choice("lap3d:30", V_KEEP, MX_VAL_DICT8, MX_IDX_DELTA16, MX_ROW_PLAIN);
  check_auto_choice("lap3d27:20", V_KEEP, MX_VAL_DICT8, MX_IDX_DELTA16, MX_ROW_PLAIN);
  check_auto_choice("rgg:14", V_KEEP, MX_VAL_DICT0, MX_IDX_DELTA16, MX_ROW_PLAIN);
  check_auto_choice("kron:12:16", V_KEEP, MX_VAL_DICT0, MX_IDX_DELTA16, MX_ROW_PLAIN); /* 4096 columns: any span fits 16 bits */
  check_auto_choice("kron:17:4", V_KEEP, MX_VAL_DICT0, MX_IDX_PLAIN, MX_ROW_PLAIN);
  check_auto_choice("kron:17:4", V_PAGERANK, MX_VAL_DICT16, MX_IDX_PLAIN, MX_ROW_PLAIN); /* 2 bytes x 8 per column < 24 */
  check_auto_choice("kron:14:24", V_PAGERANK, MX_VAL_COLCONST, MX_IDX_DELTA16, MX_ROW_PLAIN); /* 2 x 48 per column > 24 */
  check_auto_choice("band:20000:5", V_KEEP, MX_VAL_PLAIN, MX_IDX_DELTA8, MX_ROW_PLAIN);
  check_colconst_settles();
  check_assumed_gain();
  return t_report("test_core_cold_pack");
}
