/* test_core_rowpat.c - the row-pattern form (mx_cold_rowpat.h) against an independent naive encoder.
 *
 * For every matrix: the build succeeds exactly when the naive encoder (each row compared with the
 * first row of every earlier pattern, O(rows x patterns)) finds no row longer than MX_ROWPAT_MAX_LEN
 * and at most MX_ROWPAT_MAX_ENTRIES pattern entries; a refusal is MX_ERR_ARG with *R zeroed. A built
 * form equals the naive one byte for byte (ids in their 1- or 2-byte array, pattern pointers,
 * offsets, value bits), has the bytes of the formula, expands back to the input bit for bit, and its
 * y = C x, y = C x + z and z = C x + z (in place) are bitwise equal to a plain CSR loop of the same
 * expression and to the plain CPU cold kernel (mx_spmv of a format with no hot part), within 1e-12
 * of the reference. Scaling by -1, 0, 0.5, 3, -2.5 equals scaling every entry, bit for bit.
 * Matrices: 2D 5-point, 3D 7-point, 3D 27-point and convection-diffusion stencils (boundary rows:
 * exact pattern counts), unsorted rows, empty rows (all, leading, trailing), 0 rows, 1 row,
 * rectangular, signed zeros and NaN/inf bit patterns (exact ids), random (refused, or many
 * patterns), exactly 256 / 257 patterns (1- / 2-byte ids), the most patterns possible (4097), rows
 * of MX_ROWPAT_MAX_LEN and one more, exactly MX_ROWPAT_MAX_ENTRIES entries and one more, malformed
 * input, and the real Matrix Market files of tests/data/matrices/real (or the files given as
 * arguments). */
#include "core/mx_cold_rowpat.h"
#include "io/mx_io.h"
#include "test_util.h"

static uint64_t bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

static double of_bits(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

static int bits_equal(const double *a, const double *b, int32_t n) { return n == 0 || memcmp(a, b, (size_t)n * 8) == 0; }

static t_csr csr_copy(const t_csr *A) {
  t_csr B = {A->nrows, A->ncols, A->nnz, malloc(((size_t)A->nrows + 1) * 4), malloc(((size_t)A->nnz + 1) * 4),
             malloc(((size_t)A->nnz + 1) * 8)};
  memcpy(B.rowptr, A->rowptr, ((size_t)A->nrows + 1) * 4);
  if (A->nnz) memcpy(B.colidx, A->colidx, (size_t)A->nnz * 4), memcpy(B.val, A->val, (size_t)A->nnz * 8);
  return B;
}

/* ---- the naive encoder ------------------------------------------------------------------------- */

/* 1 iff rows i and j of A have the same content relative to their row: length, and at every position
 * the same column minus row and the same value bits. */
static int same_row(const t_csr *A, int32_t i, int32_t j) {
  const int32_t bi = A->rowptr[i], bj = A->rowptr[j], len = A->rowptr[i + 1] - bi;
  if (A->rowptr[j + 1] - bj != len) return 0;
  for (int32_t k = 0; k < len; k++)
    if ((int64_t)A->colidx[bi + k] - i != (int64_t)A->colidx[bj + k] - j || bits(A->val[bi + k]) != bits(A->val[bj + k])) return 0;
  return 1;
}

typedef struct {
  int refused;         /* a row longer than MX_ROWPAT_MAX_LEN, or more than MX_ROWPAT_MAX_ENTRIES entries */
  int32_t npat, nent;
  int32_t *id;         /* nrows */
  int32_t *ptr, *off;  /* npat+1, nent */
  double *val;         /* nent */
} t_ref;

static t_ref ref_build(const t_csr *A) {
  t_ref F = {0, 0, 0, malloc(((size_t)A->nrows + 1) * 4), NULL, NULL, NULL};
  int32_t *first = malloc(((size_t)A->nrows + 1) * 4);
  int64_t nent = 0;
  for (int32_t i = 0; i < A->nrows; i++) {
    const int32_t len = A->rowptr[i + 1] - A->rowptr[i];
    if (len > MX_ROWPAT_MAX_LEN) F.refused = 1;
    int32_t p = 0;
    while (p < F.npat && !same_row(A, first[p], i)) p++;
    if (p == F.npat) first[F.npat++] = i, nent += len;
    F.id[i] = p;
  }
  if (nent > MX_ROWPAT_MAX_ENTRIES) F.refused = 1;
  F.nent = (int32_t)nent;
  F.ptr = malloc(((size_t)F.npat + 1) * 4), F.off = malloc(((size_t)nent + 1) * 4), F.val = malloc(((size_t)nent + 1) * 8);
  F.ptr[0] = 0;
  for (int32_t p = 0, e = 0; p < F.npat; p++) {
    const int32_t i = first[p];
    for (int32_t q = A->rowptr[i]; q < A->rowptr[i + 1]; q++, e++) F.off[e] = A->colidx[q] - i, F.val[e] = A->val[q];
    F.ptr[p + 1] = e;
  }
  free(first);
  return F;
}

static void ref_free(t_ref *F) { free(F->id), free(F->ptr), free(F->off), free(F->val); }

/* ---- checks ------------------------------------------------------------------------------------- */

/* y = A x + z (z == NULL: A x) by the plain CSR loop: s from z[i] (or 0), s += v * x[c] left to right */
static void plain_mult(const t_csr *A, const double *x, const double *z, double *y) {
  for (int32_t i = 0; i < A->nrows; i++) {
    double s = z ? z[i] : 0.0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      const double v = A->val[p];
      s += v * x[A->colidx[p]];
    }
    y[i] = s;
  }
}

static int is_zeroed(const mx_cold_rowpat *R) {
  return R->nrows == 0 && R->ncols == 0 && R->nnz == 0 && R->npat == 0 && R->nent == 0 && R->id_bytes == 0 && !R->id8 && !R->id16 &&
         !R->pat_ptr && !R->pat_off && !R->pat_val;
}

/* R expands to A bit for bit; its products are bitwise the plain loop's and the plain cold kernel's. */
static void check_decoding(const mx_cold_rowpat *R, const t_csr *A, const char *what, uint64_t seed) {
  const int32_t m = A->nrows, n = A->ncols, nz = A->nnz;
  int32_t *Bp = malloc(((size_t)m + 1) * 4), *Bj = malloc(((size_t)nz + 1) * 4);
  double *Bx = malloc(((size_t)nz + 1) * 8);
  mx_cold_rowpat_expand(R, Bp, Bj, Bx);
  CHECK(memcmp(Bp, A->rowptr, ((size_t)m + 1) * 4) == 0, "%s: expanded rowptr", what);
  CHECK(nz == 0 || memcmp(Bj, A->colidx, (size_t)nz * 4) == 0, "%s: expanded columns", what);
  CHECK(bits_equal(Bx, A->val, nz), "%s: expanded values (bits)", what);
  t_rng r = {seed};
  double *x = t_vec(&r, n), *z = t_vec(&r, m), *y = t_vec(&r, m), *yr = t_vec(&r, m), *yk = t_vec(&r, m), *ref = t_vec(&r, m);
  /* the plain CPU cold kernel: a format of A with no hot part (crux (0,0)) */
  const mx_csr V = t_view(A);
  mx_format F;
  const int have_F = mx_format_build_borrow(&V, (mx_crux){0, 0}, MX_MODE_AUTO, &F) == MX_OK && F.hot_nnz == 0;
  CHECK(have_F, "%s: format build", what);
  t_ref_spmv(A, x, ref);
  plain_mult(A, x, NULL, y);
  mx_cold_rowpat_spmv(R, x, NULL, yr);
  CHECK(bits_equal(y, yr, m), "%s: y = C x not bitwise equal to the plain loop", what);
  CHECK(t_relerr(yr, ref, m) <= 1e-12, "%s: y = C x err %g", what, t_relerr(yr, ref, m));
  if (have_F) {
    mx_spmv(&F, x, yk);
    CHECK(bits_equal(yk, yr, m), "%s: y = C x not bitwise equal to the plain cold kernel", what);
  }
  plain_mult(A, x, z, y);
  mx_cold_rowpat_spmv(R, x, z, yr);
  CHECK(bits_equal(y, yr, m), "%s: y = C x + z not bitwise equal to the plain loop", what);
  for (int32_t i = 0; i < m; i++) ref[i] += z[i];
  CHECK(t_relerr(yr, ref, m) <= 1e-12, "%s: y = C x + z err %g", what, t_relerr(yr, ref, m));
  if (have_F) {
    mx_spmv_add(&F, x, z, yk);
    CHECK(bits_equal(yk, yr, m), "%s: y = C x + z not bitwise equal to the plain cold kernel", what);
  }
  memcpy(yk, z, (size_t)m * 8);
  mx_cold_rowpat_spmv(R, x, yk, yk);
  CHECK(bits_equal(y, yk, m), "%s: z = C x + z (in place) not bitwise equal", what);
  if (have_F) mx_format_free(&F);
  free(Bp), free(Bj), free(Bx), free(x), free(z), free(y), free(yr), free(yk), free(ref);
}

/* R equals the naive encoding F byte for byte, and its bytes are the formula's. */
static void check_arrays(const mx_cold_rowpat *R, const t_ref *F, const t_csr *A, const char *what) {
  CHECK(R->nrows == A->nrows && R->ncols == A->ncols && R->nnz == A->nnz, "%s: sizes %d x %d nnz %d", what, R->nrows, R->ncols, R->nnz);
  CHECK(R->npat == F->npat && R->nent == F->nent, "%s: npat %d nent %d, naive %d %d", what, R->npat, R->nent, F->npat, F->nent);
  if (R->npat != F->npat || R->nent != F->nent) return;
  const int idb = F->npat <= 256 ? 1 : 2;
  CHECK(R->id_bytes == idb, "%s: id_bytes %d for %d patterns", what, R->id_bytes, F->npat);
  if (R->id_bytes != idb) return;
  const int32_t m = A->nrows;
  uint8_t *e8 = malloc((size_t)m + 1);
  uint16_t *e16 = malloc(((size_t)m + 1) * 2);
  int ids_ok = 1;
  for (int32_t i = 0; i < m; i++) e8[i] = (uint8_t)F->id[i], e16[i] = (uint16_t)F->id[i];
  for (int32_t i = 0; i < m; i++) ids_ok &= mx_rowpat_id(R, i) == F->id[i];
  CHECK(ids_ok, "%s: mx_rowpat_id differs from the naive ids", what);
  if (idb == 1)
    CHECK(!R->id16 && (m == 0 || (R->id8 && memcmp(R->id8, e8, (size_t)m) == 0)), "%s: 1-byte ids differ", what);
  else
    CHECK(!R->id8 && R->id16 && memcmp(R->id16, e16, (size_t)m * 2) == 0, "%s: 2-byte ids differ", what);
  CHECK(R->pat_ptr && memcmp(R->pat_ptr, F->ptr, ((size_t)F->npat + 1) * 4) == 0, "%s: pattern pointers differ", what);
  CHECK(F->nent == 0 || (R->pat_off && memcmp(R->pat_off, F->off, (size_t)F->nent * 4) == 0), "%s: pattern offsets differ", what);
  CHECK(F->nent == 0 || (R->pat_val && bits_equal(R->pat_val, F->val, F->nent)), "%s: pattern values differ (bits)", what);
  const size_t b = (size_t)idb * (size_t)m + 4 * ((size_t)F->npat + 1) + 12 * (size_t)F->nent;
  CHECK(mx_cold_rowpat_bytes(R) == b && mx_rowpat_bytes_of(m, F->npat, F->nent) == b, "%s: bytes %zu / %zu, formula %zu", what,
        mx_cold_rowpat_bytes(R), mx_rowpat_bytes_of(m, F->npat, F->nent), b);
  free(e8), free(e16);
}

/* Scaled forms == the form of the scaled matrix: expansion and products bit for bit. */
static void check_scale(const t_csr *A, const char *name) {
  static const double alphas[] = {-1.0, 0.0, 0.5, 3.0, -2.5};
  const mx_csr V = t_view(A);
  for (int a = 0; a < 5; a++) {
    char what[400];
    snprintf(what, sizeof what, "%s scaled by %g", name, alphas[a]);
    mx_cold_rowpat R;
    if (mx_cold_rowpat_build(&V, &R) != MX_OK) {
      CHECK(0, "%s: build", what);
      return;
    }
    mx_cold_rowpat_scale(&R, alphas[a]);
    t_csr S = csr_copy(A);
    for (int32_t p = 0; p < S.nnz; p++) S.val[p] = alphas[a] * S.val[p];
    check_decoding(&R, &S, what, 300 + (uint64_t)a);
    t_csr_free(&S);
    mx_cold_rowpat_free(&R);
    CHECK(is_zeroed(&R), "%s: free does not zero", what);
  }
}

/* Everything on A. expect: 1 built, 0 refused, -1 as the naive encoder says. Returns npat (-1 if
 * refused) for callers that know the count. */
static int32_t check_matrix(const t_csr *A, const char *name, int expect) {
  char what[320];
  snprintf(what, sizeof what, "%s %dx%d nnz %d", name, A->nrows, A->ncols, A->nnz);
  t_ref F = ref_build(A);
  if (expect >= 0) CHECK(F.refused == !expect, "%s: the naive encoder %s it (test expectation wrong)", what, F.refused ? "refuses" : "holds");
  const mx_csr V = t_view(A);
  mx_cold_rowpat R;
  memset(&R, 0xab, sizeof R); /* garbage: a refusal must zero it */
  const mx_status s = mx_cold_rowpat_build(&V, &R);
  const int proven = mx_rowpat_cannot_hold(&V, MX_ROWPAT_PROOF_ROWS);
  int32_t npat = -1;
  /* the proof is sound, and exact when it reads every row */
  CHECK(!proven || s == MX_ERR_ARG, "%s: proven not holdable, yet built", what);
  if (A->nrows <= MX_ROWPAT_PROOF_ROWS) CHECK(proven == F.refused, "%s: every row read, proof %d but the naive encoder %s it", what, proven, F.refused ? "refuses" : "holds");
  if (F.refused) {
    CHECK(s == MX_ERR_ARG && is_zeroed(&R), "%s: not refused (status %d) or *R not zeroed", what, (int)s);
  } else {
    CHECK(s == MX_OK, "%s: build returned %d", what, (int)s);
    if (s == MX_OK) {
      check_arrays(&R, &F, A, what);
      check_decoding(&R, A, what, 1000 + (uint64_t)A->nnz);
      npat = R.npat;
      mx_cold_rowpat_free(&R);
      check_scale(A, what);
    }
  }
  ref_free(&F);
  return npat;
}

/* ---- matrices ----------------------------------------------------------------------------------- */

/* A generated stencil: its pattern count is npat_expected (-1: not known). */
static void check_gen(const char *spec, int32_t npat_expected) {
  t_csr A;
  if (t_gen(spec, &A)) return;
  const int32_t npat = check_matrix(&A, spec, 1);
  if (npat_expected >= 0) CHECK(npat == npat_expected, "%s: %d patterns, expected %d", spec, npat, npat_expected);
  const mx_csr V = t_view(&A);
  mx_cold_rowpat R;
  if (mx_cold_rowpat_build(&V, &R) == MX_OK) {
    printf("%-14s %7d rows %3d patterns %4d entries: %.2f bytes/nnz (plain CSR %.2f)\n", spec, A.nrows, R.npat, R.nent,
           (double)mx_cold_rowpat_bytes(&R) / (A.nnz ? A.nnz : 1), (double)mx_csr_bytes(A.nrows, A.nnz) / (A.nnz ? A.nnz : 1));
    mx_cold_rowpat_free(&R);
  }
  t_csr_free(&A);
}

/* Row i of (m x n) holds the entries (row_col[i][k], row_val[i][k]) given as lengths and flat lists. */
static t_csr from_rows(int32_t m, int32_t n, const int32_t *len, const int32_t *col, const double *val) {
  t_csr A = {m, n, 0, malloc(((size_t)m + 1) * 4), NULL, NULL};
  A.rowptr[0] = 0;
  for (int32_t i = 0; i < m; i++) A.rowptr[i + 1] = A.rowptr[i] + len[i];
  A.nnz = A.rowptr[m];
  A.colidx = malloc(((size_t)A.nnz + 1) * 4), A.val = malloc(((size_t)A.nnz + 1) * 8);
  if (A.nnz) memcpy(A.colidx, col, (size_t)A.nnz * 4), memcpy(A.val, val, (size_t)A.nnz * 8);
  return A;
}

/* m x m, row i empty where f sets *empty, else the one entry (i, i) of value f(i, K). */
typedef double (*diag_value_fn)(int32_t i, int32_t K, int *empty);

static t_csr diag_rows(int32_t m, int32_t K, diag_value_fn f) {
  int32_t *len = malloc(((size_t)m + 1) * 4), *col = malloc(((size_t)m + 1) * 4);
  double *val = malloc(((size_t)m + 1) * 8);
  int32_t nz = 0;
  for (int32_t i = 0; i < m; i++) {
    int empty = 0;
    const double v = f(i, K, &empty);
    len[i] = !empty;
    if (!empty) col[nz] = i, val[nz++] = v;
  }
  t_csr A = from_rows(m, m, len, col, val);
  free(len), free(col), free(val);
  return A;
}

/* K values (7 is prime to every K used): rows 0 .. K-1 distinct, row i repeats row i % K */
static double cyclic_value(int32_t i, int32_t K, int *empty) { return *empty = 0, 1.0 + (double)((7 * i) % K); }
/* the same with rows K-1, 2K-1, ... empty: K-1 valued patterns and the empty one */
static double cyclic_or_empty(int32_t i, int32_t K, int *empty) {
  *empty = i % K == K - 1;
  return 1.0 + (double)((7 * i) % K);
}

/* Exactly K patterns in 3K rows: 1-byte ids up to 256, 2-byte beyond. */
static void check_pattern_counts(void) {
  static const int32_t Ks[] = {255, 256, 257, 300};
  for (int k = 0; k < 4; k++) {
    const int32_t K = Ks[k];
    char name[64];
    for (int with_empty = 0; with_empty <= 1; with_empty++) {
      snprintf(name, sizeof name, "%d patterns%s", K, with_empty ? " (one empty)" : "");
      t_csr A = diag_rows(3 * K, K, with_empty ? cyclic_or_empty : cyclic_value);
      const int32_t npat = check_matrix(&A, name, 1);
      CHECK(npat == K, "%s: %d patterns", name, npat);
      const mx_csr V = t_view(&A);
      mx_cold_rowpat R;
      if (mx_cold_rowpat_build(&V, &R) == MX_OK) {
        CHECK(R.id_bytes == (K <= 256 ? 1 : 2), "%s: id_bytes %d", name, R.id_bytes);
        CHECK(mx_cold_rowpat_bytes(&R) == (size_t)(K <= 256 ? 1 : 2) * 3 * K + 4 * ((size_t)K + 1) + 12 * (size_t)(K - with_empty),
              "%s: bytes %zu", name, mx_cold_rowpat_bytes(&R));
        mx_cold_rowpat_free(&R);
      }
      t_csr_free(&A);
    }
  }
  /* the most patterns the form can hold: MX_ROWPAT_MAX_ENTRIES one-entry rows, all distinct, and
   * the empty row; a one-entry row more is refused */
  for (int extra = 0; extra <= 1; extra++) {
    const int32_t K = MX_ROWPAT_MAX_ENTRIES + 1 + extra;
    t_csr A = diag_rows(K + 5, K, cyclic_or_empty); /* row K-1 is the empty one; K .. K+4 repeat 0 .. 4 */
    const int32_t npat = check_matrix(&A, extra ? "4098 patterns" : "4097 patterns", !extra);
    if (!extra) CHECK(npat == MX_ROWPAT_MAX_ENTRIES + 1, "4097 patterns: %d", npat);
    t_csr_free(&A);
  }
}

/* Rows of length MX_ROWPAT_MAX_LEN (held) and one more (refused), and the entry limit: nd distinct
 * rows of length len (row i: columns i .. i+len-1, all of value 1 + i % nd), then extra rows. */
static t_csr long_rows(int32_t m, int32_t nd, int32_t len, int32_t tail_len, double tail_val) {
  const int64_t nz = (int64_t)m * len + tail_len;
  int32_t *rl = malloc(((size_t)m + 2) * 4), *col = malloc((size_t)nz * 4 + 4);
  double *val = malloc((size_t)nz * 8 + 8);
  int64_t q = 0;
  for (int32_t i = 0; i < m; i++) {
    rl[i] = len;
    for (int32_t k = 0; k < len; k++, q++) col[q] = i + k, val[q] = 1.0 + (double)(i % nd);
  }
  rl[m] = tail_len;
  for (int32_t k = 0; k < tail_len; k++, q++) col[q] = m + k, val[q] = tail_val;
  t_csr A = from_rows(m + 1, m + 1 + (len > tail_len ? len : tail_len), rl, col, val);
  free(rl), free(col), free(val);
  return A;
}

static void check_limits(void) {
  const int32_t L = MX_ROWPAT_MAX_LEN, E = MX_ROWPAT_MAX_ENTRIES;
  struct {
    const char *name;
    int32_t m, nd, len, tail_len;
    double tail_val;
    int held;
    int32_t npat;
  } c[] = {
      {"one row of MAX_LEN", 0, 1, 0, L, 5.0, 1, 1},
      {"one row of MAX_LEN+1", 0, 1, 0, L + 1, 5.0, 0, 0},
      {"10 equal rows of MAX_LEN", 10, 1, L, L, 1.0, 1, 1}, /* the tail row: same columns offset, value 1 */
      {"rows of MAX_LEN, a last of MAX_LEN+1", 50, 2, L, L + 1, 1.0, 0, 0},
      {"exactly MAX_ENTRIES entries", E / L, E / L, L, 0, 0.0, 1, E / L + 1},
      {"exactly MAX_ENTRIES entries, repeats", 3 * E / L, E / L, L, 0, 0.0, 1, E / L + 1},
      {"MAX_ENTRIES + 1 entries", E / L, E / L, L, 1, 9.0, 0, 0},
      {"MAX_ENTRIES + 1 entries, the last after repeats", 3 * E / L, E / L, L, 1, 9.0, 0, 0},
      {"MAX_ENTRIES + MAX_LEN entries", E / L + 1, E / L + 1, L, 0, 0.0, 0, 0},
  };
  for (size_t t = 0; t < sizeof c / sizeof c[0]; t++) {
    t_csr A = long_rows(c[t].m, c[t].nd, c[t].len, c[t].tail_len, c[t].tail_val);
    const int32_t npat = check_matrix(&A, c[t].name, c[t].held);
    if (c[t].held) CHECK(npat == c[t].npat, "%s: %d patterns, expected %d", c[t].name, npat, c[t].npat);
    t_csr_free(&A);
  }
  /* a stencil matrix whose last row is too long: refused late (after many patterns were found) */
  t_csr A;
  if (!t_gen("lap2d:30", &A)) {
    t_csr B = {A.nrows + 1, A.ncols, A.nnz + L + 1, malloc(((size_t)A.nrows + 2) * 4), malloc(((size_t)A.nnz + L + 1) * 4),
               malloc(((size_t)A.nnz + L + 1) * 8)};
    memcpy(B.rowptr, A.rowptr, ((size_t)A.nrows + 1) * 4);
    memcpy(B.colidx, A.colidx, (size_t)A.nnz * 4), memcpy(B.val, A.val, (size_t)A.nnz * 8);
    for (int32_t k = 0; k <= L; k++) B.colidx[A.nnz + k] = k, B.val[A.nnz + k] = 1.0;
    B.rowptr[B.nrows] = B.nnz;
    check_matrix(&B, "lap2d:30 + a row of MAX_LEN+1", 0);
    t_csr_free(&B);
    t_csr_free(&A);
  }
}

/* Signed zeros, NaN payloads, infinities: one diagonal entry per row, exact ids. */
static void check_special_values(void) {
  const double nan1 = of_bits(0x7ff8000000000001ull), nan2 = of_bits(0xfff4000000000abcull), nan3 = of_bits(0x7ff8000000000001ull);
  const double v[] = {0.0, -0.0, 0.0, nan1, nan2, nan3, INFINITY, -INFINITY, INFINITY, -0.0, nan2, 1.0};
  const int32_t ids[] = {0, 1, 0, 2, 3, 2, 4, 5, 4, 1, 3, 6};
  const int32_t m = (int32_t)(sizeof v / sizeof v[0]);
  int32_t len[12], col[12];
  for (int32_t i = 0; i < m; i++) len[i] = 1, col[i] = i;
  t_csr A = from_rows(m, m, len, col, v);
  CHECK(check_matrix(&A, "signed zeros, NaNs, infs", 1) == 7, "special values: 7 patterns");
  mx_cold_rowpat R;
  const mx_csr V = t_view(&A);
  if (mx_cold_rowpat_build(&V, &R) == MX_OK) {
    for (int32_t i = 0; i < m; i++) CHECK(mx_rowpat_id(&R, i) == ids[i], "special values: row %d id %d, expected %d", i, mx_rowpat_id(&R, i), ids[i]);
    mx_cold_rowpat_free(&R);
  }
  t_csr_free(&A);
  /* -0.0 and 0.0 in a 3-point stencil (two rows equal but for the sign of a zero) */
  const int32_t l3[] = {3, 3, 3, 3}, c3[] = {0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 5};
  const double v3[] = {-1, 0.0, -1, -1, -0.0, -1, -1, 0.0, -1, -1, -0.0, -1};
  t_csr B = from_rows(4, 6, l3, c3, v3);
  CHECK(check_matrix(&B, "stencil with +-0", 1) == 2, "stencil with +-0: 2 patterns");
  t_csr_free(&B);
}

/* Empty rows: all of them, leading and trailing; 0 rows; 1 row. Exact ids where small. */
static void check_small(void) {
  static const int32_t none_col[1] = {0};
  static const double none_val[1] = {0.0};
  {
    const int32_t len[] = {0, 0, 0, 0, 0};
    t_csr A = from_rows(5, 3, len, none_col, none_val);
    CHECK(check_matrix(&A, "all rows empty", 1) == 1, "all rows empty: 1 pattern");
    t_csr_free(&A);
  }
  {
    const int32_t len[] = {0, 1, 1, 0, 2, 0}, col[] = {1, 2, 3, 4}, ids[] = {0, 1, 1, 0, 2, 0};
    const double val[] = {1.0, 1.0, 2.0, 1.0};
    t_csr A = from_rows(6, 6, len, col, val);
    CHECK(check_matrix(&A, "leading/trailing empty rows", 1) == 3, "leading/trailing empty rows: 3 patterns");
    mx_cold_rowpat R;
    const mx_csr V = t_view(&A);
    if (mx_cold_rowpat_build(&V, &R) == MX_OK) {
      for (int32_t i = 0; i < 6; i++) CHECK(mx_rowpat_id(&R, i) == ids[i], "empty rows: row %d id %d", i, mx_rowpat_id(&R, i));
      CHECK(R.pat_ptr[0] == 0 && R.pat_ptr[1] == 0 && R.pat_ptr[2] == 1 && R.pat_ptr[3] == 3, "empty rows: pattern pointers");
      mx_cold_rowpat_free(&R);
    }
    t_csr_free(&A);
  }
  for (int32_t n = 0; n <= 5; n += 5) { /* 0 rows */
    t_csr A = from_rows(0, n, NULL, none_col, none_val);
    CHECK(check_matrix(&A, "0 rows", 1) == 0, "0 rows: patterns");
    mx_cold_rowpat R;
    const mx_csr V = t_view(&A);
    if (mx_cold_rowpat_build(&V, &R) == MX_OK) {
      CHECK(R.npat == 0 && R.nent == 0 && R.pat_ptr && R.pat_ptr[0] == 0 && mx_cold_rowpat_bytes(&R) == 4, "0 rows: form");
      mx_cold_rowpat_free(&R);
    }
    t_csr_free(&A);
  }
  {
    const mx_csr V = {0, 0, NULL, NULL, NULL}; /* 0 rows, no arrays at all */
    mx_cold_rowpat R;
    CHECK(mx_cold_rowpat_build(&V, &R) == MX_OK && R.npat == 0 && R.pat_ptr && R.pat_ptr[0] == 0, "0 rows without arrays");
    mx_cold_rowpat_free(&R);
  }
  {
    const int32_t len[] = {1}, col[] = {0};
    const double val[] = {2.5};
    t_csr A = from_rows(1, 1, len, col, val);
    CHECK(check_matrix(&A, "1x1", 1) == 1, "1x1: 1 pattern");
    t_csr_free(&A);
  }
  {
    t_spec s = {1, 100, 50, 0, 0, 0, 0, 0, 0, 0.2, 18}; /* one row of 60, unsorted, duplicates */
    t_csr A = t_random(&s);
    CHECK(check_matrix(&A, "one row", 1) == 1, "one row: 1 pattern");
    t_csr_free(&A);
  }
}

/* Unsorted rows: the order is part of the pattern. */
static void check_unsorted(void) {
  {
    const int32_t len[] = {3, 3, 3}, col[] = {0, 1, 2, 1, 2, 3, 4, 3, 2}, ids[] = {0, 0, 1};
    const double val[] = {1, 2, 3, 1, 2, 3, 3, 2, 1};
    t_csr A = from_rows(3, 5, len, col, val);
    CHECK(check_matrix(&A, "same row reversed", 1) == 2, "same row reversed: 2 patterns");
    mx_cold_rowpat R;
    const mx_csr V = t_view(&A);
    if (mx_cold_rowpat_build(&V, &R) == MX_OK) {
      for (int32_t i = 0; i < 3; i++) CHECK(mx_rowpat_id(&R, i) == ids[i], "reversed: row %d id %d", i, mx_rowpat_id(&R, i));
      mx_cold_rowpat_free(&R);
    }
    t_csr_free(&A);
  }
  t_csr A;
  if (t_gen("lap2d:12", &A)) return;
  for (int mode = 0; mode < 2; mode++) { /* every other row reversed; every row shuffled */
    t_csr B = csr_copy(&A);
    t_rng r = {77};
    for (int32_t i = 0; i < B.nrows; i++) {
      const int32_t b = B.rowptr[i], len = B.rowptr[i + 1] - b;
      for (int32_t k = len - 1; k > 0 && (mode == 1 || i % 2); k--) {
        const int32_t u = mode ? t_below(&r, k + 1) : len - 1 - k;
        if (mode == 0 && u >= k) break;
        int32_t c = B.colidx[b + k];
        B.colidx[b + k] = B.colidx[b + u], B.colidx[b + u] = c;
        double v = B.val[b + k];
        B.val[b + k] = B.val[b + u], B.val[b + u] = v;
      }
    }
    const int32_t npat = check_matrix(&B, mode ? "lap2d:12 shuffled rows" : "lap2d:12 odd rows reversed", 1);
    /* 4 corners, left (even) and right (odd) edges 1 each, bottom, top and interior 2 each (parity of x) */
    if (mode == 0) CHECK(npat == 12, "lap2d:12 odd rows reversed: %d patterns, expected 12", npat);
    t_csr_free(&B);
  }
  t_csr_free(&A);
}

/* Random band: row i holds a random subset of offsets -w..w (in order) with values from nv choices. */
static t_csr random_band(int32_t m, int32_t n, int32_t w, int32_t nv, uint64_t seed) {
  t_rng r = {seed};
  int32_t *len = calloc((size_t)m + 1, 4), *col = malloc(((size_t)m * (2 * w + 1) + 1) * 4);
  double *val = malloc(((size_t)m * (2 * w + 1) + 1) * 8);
  int32_t q = 0;
  for (int32_t i = 0; i < m; i++)
    for (int32_t d = -w; d <= w; d++)
      if (i + d >= 0 && i + d < n && t_below(&r, 2)) col[q] = i + d, val[q++] = (double)t_below(&r, nv) - 1.0, len[i]++;
  t_csr A = from_rows(m, n, len, col, val);
  free(len), free(col), free(val);
  return A;
}

/* The proof on more rows than it reads: a random matrix of unique values is proven not holdable from
 * its sample (check_matrix: the form refuses it too); lap3d:30's 27000 rows are not (it is held). */
static void check_proof_sampled(void) {
  const t_spec s = {20000, 20000, 200000, 0, 0, 0, 0, 0, 0, 0, 50};
  t_csr A = t_random(&s);
  const mx_csr V = t_view(&A);
  CHECK(mx_rowpat_cannot_hold(&V, MX_ROWPAT_PROOF_ROWS) == 1, "proof: 20000 random rows of unique values not proven");
  CHECK(mx_rowpat_cannot_hold(&V, 100) == 0, "proof: 100 rows of 10 entries prove nothing (1000 entries)");
  check_matrix(&A, "random 20000 rows", 0);
  t_csr_free(&A);
  t_csr L;
  const int gen_rc = t_gen("lap3d:30", &L);
  CHECK(gen_rc == 0, "proof: lap3d:30 not generated");
  if (gen_rc == 0) {
    const mx_csr W = t_view(&L);
    CHECK(mx_rowpat_cannot_hold(&W, MX_ROWPAT_PROOF_ROWS) == 0, "proof: lap3d:30 proven not holdable");
    t_csr_free(&L);
  }
}

static void check_random(void) {
  /* m, n, nz, row_pw, col_pw, skip_row, skip_col, dense_rows, dense_cols, dup, seed */
  static const struct {
    const char *name;
    t_spec s;
    int expect;
  } cases[] = {
      {"uniform unique 100", {100, 100, 500, 0, 0, 0, 0, 0, 0, 0, 8}, 1},
      {"uniform unique 2000", {2000, 2000, 20000, 0, 0, 0, 0, 0, 0, 0, 9}, 0},
      {"uniform 600 (2-byte ids)", {600, 600, 1500, 0, 0, 0, 0, 0, 0, 0, 10}, 1},
      {"empty rows+cols", {200, 150, 1200, 0, 0, 3, 4, 0, 0, 0, 20}, 1},
      {"dense row", {120, 80, 300, 0, 0, 0, 0, 1, 0, 0, 21}, 0},
      {"dense column", {60, 80, 300, 0, 0, 0, 0, 0, 1, 0, 22}, 1},
      {"power law", {3000, 3000, 9000, 3, 3, 0, 0, 0, 0, 0, 25}, -1},
      {"duplicates", {100, 60, 800, 2, 2, 0, 0, 0, 0, 0.3, 28}, -1},
      {"tall", {300, 50, 900, 0, 0, 0, 0, 0, 0, 0, 17}, 1},
      {"wide", {50, 3000, 900, 0, 0, 0, 0, 0, 0, 0, 16}, 1},
  };
  int refused = 0, two_byte = 0;
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    t_csr A = t_random(&cases[t].s);
    const int32_t npat = check_matrix(&A, cases[t].name, cases[t].expect);
    refused += npat < 0, two_byte += npat > 256;
    /* few values (-2 .. 2, with +-0): repeats become likelier but stay rare */
    t_rng r = {cases[t].s.seed};
    for (int32_t p = 0; p < A.nnz; p++) A.val[p] = t_below(&r, 2) ? (double)(t_below(&r, 5) - 2) : (t_below(&r, 2) ? 0.0 : -0.0);
    char name[128];
    snprintf(name, sizeof name, "%s few values", cases[t].name);
    check_matrix(&A, name, -1);
    t_csr_free(&A);
  }
  CHECK(refused >= 2 && two_byte >= 1, "random: %d refused, %d with 2-byte ids", refused, two_byte);
  /* random bands: many rows, a bounded number of patterns (the hash table's repeat path) */
  static const struct {
    int32_t m, n, w, nv;
  } bands[] = {{5000, 5000, 1, 2}, {3000, 2500, 2, 1}, {2000, 2000, 1, 3}, {400, 900, 3, 1}};
  for (int b = 0; b < 4; b++) {
    t_csr A = random_band(bands[b].m, bands[b].n, bands[b].w, bands[b].nv, 50 + (uint64_t)b);
    char name[128];
    snprintf(name, sizeof name, "random band w %d values %d", bands[b].w, bands[b].nv);
    const int32_t npat = check_matrix(&A, name, -1);
    CHECK(npat != 0, "%s: %d patterns", name, npat);
    t_csr_free(&A);
  }
}

/* Rectangular structured: a tall tridiagonal cut at the last column, a wide two-diagonal band. */
static void check_rectangular(void) {
  int32_t len[300], col[900];
  double val[900];
  int32_t q = 0;
  for (int32_t i = 0; i < 300; i++) {
    len[i] = 0;
    for (int32_t d = -1; d <= 1; d++)
      if (i + d >= 0 && i + d < 50) col[q] = i + d, val[q++] = d ? -1.0 : 2.0, len[i]++;
  }
  t_csr A = from_rows(300, 50, len, col, val);
  CHECK(check_matrix(&A, "tall tridiagonal", 1) == 5, "tall tridiagonal: 5 patterns");
  t_csr_free(&A);
  q = 0;
  for (int32_t i = 0; i < 20; i++) len[i] = 2, col[q] = i, val[q++] = 1.0, col[q] = i + 500, val[q++] = -1.0;
  t_csr B = from_rows(20, 1000, len, col, val);
  CHECK(check_matrix(&B, "wide two diagonals", 1) == 1, "wide two diagonals: 1 pattern");
  t_csr_free(&B);
}

/* Malformed input: refused with *R zeroed. */
static void check_malformed(void) {
  const int32_t rp_bad0[] = {1, 2, 3}, rp_dec[] = {0, 2, 1}, rp_ok[] = {0, 1, 2}, col[] = {0, 1, 0};
  const double val[] = {1, 2, 3};
  const mx_csr bad[] = {{2, 2, rp_bad0, col, val}, {2, 2, rp_dec, col, val}, {-1, 2, rp_dec, col, val}, {2, -1, rp_dec, col, val},
                        {2, 2, NULL, col, val},     {2, 2, rp_ok, NULL, val}};
  for (int b = 0; b < 6; b++) {
    mx_cold_rowpat R;
    memset(&R, 0xab, sizeof R);
    CHECK(mx_cold_rowpat_build(&bad[b], &R) == MX_ERR_ARG && is_zeroed(&R), "malformed input %d not refused", b);
  }
  mx_cold_rowpat R;
  memset(&R, 0xab, sizeof R);
  CHECK(mx_cold_rowpat_build(NULL, &R) == MX_ERR_ARG && is_zeroed(&R), "NULL matrix not refused");
  CHECK(mx_cold_rowpat_build(&bad[0], NULL) == MX_ERR_ARG, "NULL form not refused");
}

/* Real matrices: their own values, then pattern only (every value 1). */
static void check_real(const char *path) {
  t_csr A;
  if (t_read_mtx(path, &A)) {
    printf("skipped %s (cannot read)\n", path);
    return;
  }
  const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  const int32_t npat = check_matrix(&A, name, -1);
  for (int32_t p = 0; p < A.nnz; p++) A.val[p] = 1.0;
  char n1[256];
  snprintf(n1, sizeof n1, "%s ones", name);
  const int32_t npat1 = check_matrix(&A, n1, -1);
  printf("%-24s %6d rows: %s, ones: %s (%d patterns)\n", name, A.nrows, npat < 0 ? "refused" : "held", npat1 < 0 ? "refused" : "held", npat1);
  t_csr_free(&A);
}

int main(int argc, char **argv) {
  check_gen("lap2d:1", 1);
  check_gen("lap2d:2", 4);
  check_gen("lap2d:3", 9);
  check_gen("lap2d:40", 9);
  check_gen("lap3d:3", 27);
  check_gen("lap3d:12", 27);
  check_gen("lap3d:30", 27);
  check_gen("lap3d27:3", 27);
  check_gen("lap3d27:8", 27);
  check_gen("lap2d9:20", 9);
  check_gen("convdiff2d:30", 9);
  check_gen("convdiff3d:10", 27);
  check_small();
  check_unsorted();
  check_special_values();
  check_rectangular();
  check_pattern_counts();
  check_limits();
  check_random();
  check_proof_sampled();
  check_malformed();
  t_for_each_real(argc, argv, __FILE__, check_real);
  return t_report("test_core_rowpat");
}
