/* test_core_cold_hub.c - the hub split (mx_cold_hub.h) against independent naive references.
 *
 * For every matrix and K: the hub columns equal a qsort ranking (count descending, ties by index,
 * nonempty columns only, at most K); the rest equals the input's non-hub nonzeros in input order, bit
 * for bit; the hub nonzeros are the hub columns' (counts per row, split rows = rows of more than
 * the pseudo-row length, 64 with values and 128 with column constants, parts = their pieces); the slices hold every pseudo-row once, by descending length,
 * padded with rank K (and value 0); hubscale is set exactly when every hub column's nonzeros share one
 * non-NaN value bit for bit. The product rest x (plain loop) + hub x (mx_cold_hub_spmv_add) is within
 * 1e-12 of the reference; rows without split have their hub sum bitwise equal to a sequential sum of
 * their hub products in input order, added to the rest's; a second call gives the same bits.
 * MX_HUB_SLOT is one to one onto each slice's slots, a lane's groups of 4 consecutive and aligned.
 * Matrices: random (uniform, power-law rows and columns, dense rows and columns: split rows, empty
 * rows and columns, duplicates), generated kron / chunglu / lap2d, 0 rows, 1 row, rectangular, rows of
 * exactly either pseudo-row length and one more hub nonzeros, values random, ones, column constants (PageRank),
 * -0.0 beside 0.0 and NaN in a hub column (not constant); K = 0, 1, 5, 64, 1000, ncols, ncols + 7,
 * MX_HUB_MAX_COLS; malformed input and K out of range (MX_ERR_ARG, *H zeroed); and the real Matrix
 * Market files of tests/data/matrices/real (or the files given as arguments). */
#include <limits.h>

#include "core/mx_cold_hub.h"
#include "test_util.h"

static uint64_t bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* ---- naive references ------------------------------------------------------------------------------ */

static const int32_t *g_cnt;
static int cmp_count_desc(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  if (g_cnt[x] != g_cnt[y]) return g_cnt[x] > g_cnt[y] ? -1 : 1;
  return (x > y) - (x < y);
}

/* rank[j] of the naive ranking (-1: not a hub column); returns the hub columns */
static int32_t naive_ranks(const t_csr *A, int32_t K, int32_t *rank) {
  int32_t *cnt = calloc((size_t)A->ncols + 1, 4), *order = malloc(((size_t)A->ncols + 1) * 4);
  for (int32_t p = 0; p < A->nnz; p++) cnt[A->colidx[p]]++;
  for (int32_t j = 0; j < A->ncols; j++) order[j] = j, rank[j] = -1;
  g_cnt = cnt;
  qsort(order, (size_t)A->ncols, 4, cmp_count_desc);
  int32_t used = 0;
  for (int32_t r = 0; r < A->ncols && r < K && cnt[order[r]] > 0; r++) rank[order[r]] = r, used++;
  free(cnt);
  free(order);
  return used;
}

static int naive_constant(const t_csr *A, const int32_t *rank) {
  for (int32_t p = 0; p < A->nnz; p++) {
    if (rank[A->colidx[p]] < 0) continue;
    if (A->val[p] != A->val[p]) return 0;
    for (int32_t q = 0; q < p; q++)
      if (A->colidx[q] == A->colidx[p]) {
        if (bits(A->val[q]) != bits(A->val[p])) return 0;
        break;
      }
  }
  return 1;
}

/* ---- the checks -------------------------------------------------------------------------------------- */

static void check_structure(const t_csr *A, int32_t K, const mx_cold_hub *H, const int32_t *rank, int32_t used, const char *name) {
  CHECK(H->K == used, "%s K=%d: %d hub columns, naive %d", name, K, H->K, used);
  for (int32_t j = 0; j < A->ncols && H->K == used; j++)
    if (rank[j] >= 0) CHECK(H->hubcol[rank[j]] == j, "%s K=%d: hub rank %d is column %d, naive %d", name, K, rank[j], H->hubcol[rank[j]], j);
  /* the pseudo-row length follows the values: mx_hub_row_max (64 with values, 128 folded) */
  const int constant = naive_constant(A, rank), row_max = constant ? MX_HUB_ROW_MAX_FOLDED : MX_HUB_ROW_MAX;
  CHECK(H->row_max == row_max, "%s K=%d: pseudo-rows of %d, not %d", name, K, H->row_max, row_max);
  /* rest: the non-hub nonzeros in input order; hub counts per row */
  int32_t nr = 0, nsplit = 0, nparts = 0;
  int64_t nh = 0;
  for (int32_t i = 0; i < A->nrows; i++) {
    int32_t h = 0;
    CHECK(H->rest_rowptr[i] == nr, "%s K=%d: rest row %d starts at %d, not %d", name, K, i, H->rest_rowptr[i], nr);
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      if (rank[A->colidx[p]] >= 0) {
        h++;
        continue;
      }
      CHECK(H->rest_col[nr] == A->colidx[p] && bits(H->rest_val[nr]) == bits(A->val[p]), "%s K=%d: rest nonzero %d", name, K, nr);
      nr++;
    }
    nh += h;
    if (h > row_max) nsplit++, nparts += (h + row_max - 1) / row_max;
  }
  CHECK(H->rest_rowptr[A->nrows] == nr, "%s K=%d: rest has %d nonzeros, not %d", name, K, H->rest_rowptr[A->nrows], nr);
  CHECK(H->nnz == nh && nh + nr == A->nnz, "%s K=%d: hub %lld + rest %d != %d", name, K, (long long)H->nnz, nr, A->nnz);
  CHECK(H->nsplit == nsplit && H->nparts == nparts, "%s K=%d: split %d/%d parts %d/%d", name, K, H->nsplit, nsplit, H->nparts, nparts);
  CHECK((H->hubscale != NULL) == constant && (H->slice_val == NULL) == constant, "%s K=%d: hubscale %s, naive %d", name, K,
        H->hubscale ? "set" : "NULL", constant);
  /* slices: lengths non-increasing, padding rank K (value 0), every hub nonzero once */
  int64_t real = 0;
  int32_t prev = INT32_MAX;
  for (int32_t s = 0; s < H->nslices; s++) {
    CHECK(H->slice_off[s + 1] - H->slice_off[s] == 32 * H->slice_len[s], "%s K=%d: slice %d size", name, K, s);
    for (int32_t l = 0; l < 32; l++) {
      const int32_t out = H->slice_row[32 * s + l];
      int32_t len = 0;
      for (int32_t j = 0; j < H->slice_len[s]; j++) {
        const int32_t at = MX_HUB_SLOT(H->slice_off[s], H->slice_len[s], j, l), r = H->slice_rank[at];
        CHECK(r <= H->K, "%s K=%d: rank %d", name, K, r);
        if (r < H->K) {
          CHECK(len == j, "%s K=%d: slice %d lane %d: a nonzero after padding", name, K, s, l);
          len++;
        } else if (H->slice_val) {
          CHECK(bits(H->slice_val[at]) == 0, "%s K=%d: padding value", name, K);
        }
      }
      if (out == INT32_MIN) {
        CHECK(len == 0, "%s K=%d: an empty lane holds nonzeros", name, K);
        continue;
      }
      CHECK(len <= prev && len > 0 && len <= row_max, "%s K=%d: pseudo-row length %d after %d", name, K, len, prev);
      CHECK(out >= 0 ? out < A->nrows : ~out < H->nparts, "%s K=%d: slice row %d", name, K, out);
      prev = len, real += len;
    }
  }
  CHECK(real == nh, "%s K=%d: slices hold %lld hub nonzeros, not %lld", name, K, (long long)real, (long long)nh);
}

static void check_product(const t_csr *A, int32_t K, const mx_cold_hub *H, const int32_t *rank, const char *name) {
  t_rng r = {0x5eed + (uint64_t)K};
  double *x = t_vec(&r, A->ncols), *y = malloc(((size_t)A->nrows + 1) * 8), *y2 = malloc(((size_t)A->nrows + 1) * 8);
  double *ref = malloc(((size_t)A->nrows + 1) * 8);
  t_ref_spmv(A, x, ref);
  for (int32_t i = 0; i < A->nrows; i++) {
    double s = 0.0;
    for (int32_t p = H->rest_rowptr[i]; p < H->rest_rowptr[i + 1]; p++) s += H->rest_val[p] * x[H->rest_col[p]];
    y[i] = y2[i] = s;
  }
  CHECK(mx_cold_hub_spmv_add(H, x, y) == MX_OK && mx_cold_hub_spmv_add(H, x, y2) == MX_OK, "%s K=%d: spmv failed", name, K);
  CHECK(t_relerr(y, ref, A->nrows) <= 1e-12, "%s K=%d: rel err %.2e", name, K, t_relerr(y, ref, A->nrows));
  CHECK(A->nrows == 0 || memcmp(y, y2, (size_t)A->nrows * 8) == 0, "%s K=%d: two calls differ", name, K);
  for (int32_t i = 0; i < A->nrows; i++) { /* rows without split: rest sum + (hub products in input order) */
    double rest = 0.0, hub = 0.0;
    int32_t h = 0;
    for (int32_t p = H->rest_rowptr[i]; p < H->rest_rowptr[i + 1]; p++) rest += H->rest_val[p] * x[H->rest_col[p]];
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      if (rank[A->colidx[p]] >= 0) hub += A->val[p] * x[A->colidx[p]], h++;
    if (h > 0 && h <= H->row_max)
      CHECK(bits(y[i]) == bits(rest + hub) || (y[i] != y[i] && rest + hub != rest + hub), "%s K=%d: row %d %.17g vs %.17g", name, K, i, y[i],
            rest + hub);
  }
  free(x);
  free(y);
  free(y2);
  free(ref);
}

/* mx_cold_hub_stats against the naive ranks: hub nonzeros and the rows holding any */
static void check_stats(const t_csr *A, int32_t K, const int32_t *rank, const char *name) {
  int64_t nh = 0, rows = 0, got_nnz = -1, got_rows = -1;
  for (int32_t i = 0; i < A->nrows; i++) {
    int32_t h = 0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) h += rank[A->colidx[p]] >= 0;
    nh += h, rows += h > 0;
  }
  const mx_csr v = t_view(A);
  CHECK(mx_cold_hub_stats(&v, K, &got_nnz, &got_rows) == MX_OK, "%s K=%d: stats failed", name, K);
  CHECK(got_nnz == nh && got_rows == rows, "%s K=%d: stats %lld/%lld, naive %lld/%lld", name, K, (long long)got_nnz, (long long)got_rows,
        (long long)nh, (long long)rows);
}

static void check_one(const t_csr *A, int32_t K, const char *name) {
  mx_cold_hub H;
  const mx_csr v = t_view(A);
  const mx_status st = mx_cold_hub_build(&v, K, &H);
  CHECK(st == MX_OK, "%s K=%d: build status %d", name, K, (int)st);
  if (st != MX_OK) return;
  int32_t *rank = malloc(((size_t)A->ncols + 1) * 4);
  const int32_t used = naive_ranks(A, K, rank);
  check_structure(A, K, &H, rank, used, name);
  check_product(A, K, &H, rank, name);
  check_stats(A, K, rank, name);
  const mx_csr rest = mx_cold_hub_rest(&H);
  CHECK(rest.nrows == A->nrows && rest.ncols == A->ncols && rest.rowptr == H.rest_rowptr, "%s K=%d: rest view", name, K);
  CHECK(mx_cold_hub_bytes(&H) >= (size_t)H.nnz * 2, "%s K=%d: bytes %zu", name, K, mx_cold_hub_bytes(&H));
  free(rank);
  mx_cold_hub_free(&H);
}

static void check_all_k(const t_csr *A, const char *name) {
  const int32_t ks[] = {0, 1, 5, 64, 1000, A->ncols, A->ncols + 7, MX_HUB_MAX_COLS};
  for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
    if (ks[k] <= MX_HUB_MAX_COLS) check_one(A, ks[k], name);
}

/* values: 0 as generated, 1 ones, 2 column constants 1/(j+1) */
static void set_values(t_csr *A, int kind) {
  for (int32_t p = 0; p < A->nnz && kind; p++) A->val[p] = kind == 1 ? 1.0 : 1.0 / (A->colidx[p] + 1.0);
}

static void random_family(void) {
  const t_spec specs[] = {
      {500, 400, 6000, 0, 0, 0, 0, 0, 0, 0, 1},       /* uniform */
      {800, 800, 12000, 0, 3.0, 0, 0, 0, 0, 0, 2},    /* power-law columns */
      {800, 600, 12000, 3.0, 3.0, 0, 0, 0, 0, 0, 3},  /* power-law rows and columns */
      {300, 500, 3000, 0, 2.0, 0, 0, 4, 0, 0, 4},     /* dense rows: split rows */
      {400, 300, 3000, 0, 0, 0, 0, 0, 3, 0, 5},       /* dense columns */
      {600, 500, 5000, 2.0, 2.0, 3, 4, 2, 1, 0.1, 6}, /* empty rows and columns, duplicates */
      {1, 300, 250, 0, 0, 0, 0, 0, 0, 0.2, 7},        /* one row */
      {0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 8},             /* no rows */
      {50, 70000, 3000, 0, 4.0, 0, 0, 1, 0, 0, 9},    /* more columns than MX_HUB_MAX_COLS */
  };
  for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
    for (int kind = 0; kind < 3; kind++) {
      t_csr A = t_random(&specs[s]);
      set_values(&A, kind);
      char name[64];
      snprintf(name, sizeof name, "random %zu values %d", s, kind);
      check_all_k(&A, name);
      t_csr_free(&A);
    }
}

static void generated_family(void) {
  const char *specs[] = {"kron:10:8", "chunglu:3000:8:2.1", "lap2d:30"};
  for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
    for (int kind = 0; kind < 3; kind++) {
      t_csr A;
      if (t_gen(specs[s], &A)) continue;
      set_values(&A, kind);
      char name[64];
      snprintf(name, sizeof name, "%s values %d", specs[s], kind);
      check_all_k(&A, name);
      t_csr_free(&A);
    }
}

/* one column 0 in every row: rows at and past both pseudo-row lengths (MX_HUB_ROW_MAX with values,
 * MX_HUB_ROW_MAX_FOLDED with ones) and twice that, with K covering them; signed zeros and a NaN in a
 * hub column (never constant) */
static void edge_rows_and_values(void) {
  const int32_t lens[] = {MX_HUB_ROW_MAX, MX_HUB_ROW_MAX + 1, MX_HUB_ROW_MAX_FOLDED, MX_HUB_ROW_MAX_FOLDED + 1,
                          2 * MX_HUB_ROW_MAX_FOLDED, 2 * MX_HUB_ROW_MAX_FOLDED + 1, 1};
  const int32_t m = 7, n = 300;
  int32_t nz = 0, ti[1024], tj[1024];
  double tv[1024];
  for (int32_t i = 0; i < m; i++)
    for (int32_t k = 0; k < lens[i]; k++) ti[nz] = i, tj[nz] = k, tv[nz++] = 1.0;
  t_csr A = t_from_triplets(m, n, nz, ti, tj, tv);
  check_all_k(&A, "rows of 64 / 65 / 128 / 129 / 256 / 257 / 1");
  A.val[0] = -0.0; /* column 0: -0.0 beside 1.0 in other rows: not constant */
  check_one(&A, 300, "signed zero");
  A.val[0] = 1.0;
  for (int32_t p = 0; p < A.nnz; p++)
    if (A.colidx[p] == 1) A.val[p] = NAN;
  check_one(&A, 300, "NaN column");
  t_csr_free(&A);
  /* all values 0.0 and -0.0 in separate columns: constant per column */
  t_csr B = t_from_triplets(m, n, nz, ti, tj, tv);
  for (int32_t p = 0; p < B.nnz; p++) B.val[p] = B.colidx[p] % 2 ? -0.0 : 0.0;
  check_one(&B, 300, "signed zeros per column");
  t_csr_free(&B);
}

static void errors(void) {
  const int32_t rp[] = {0, 2, 1}, bad0[] = {1, 2, 3}, col[] = {0, 1, 2}, badcol[] = {0, 5, 1};
  const double val[] = {1, 2, 3};
  const mx_csr dec = {2, 3, rp, col, val}, start = {2, 3, bad0, col, val}, range = {1, 3, (const int32_t[]){0, 3}, badcol, val};
  const mx_csr ok = {1, 3, (const int32_t[]){0, 3}, col, val};
  const struct {
    const mx_csr *C;
    int32_t K;
    const char *what;
  } cases[] = {{NULL, 1, "NULL"}, {&dec, 1, "decreasing rowptr"}, {&start, 1, "rowptr[0] != 0"}, {&range, 1, "column out of range"},
               {&ok, -1, "K < 0"}, {&ok, MX_HUB_MAX_COLS + 1, "K too large"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mx_cold_hub H;
    memset(&H, 0xab, sizeof H);
    CHECK(mx_cold_hub_build(cases[c].C, cases[c].K, &H) == MX_ERR_ARG, "%s: not MX_ERR_ARG", cases[c].what);
    CHECK(H.hubcol == NULL && H.rest_rowptr == NULL && H.K == 0, "%s: *H not zeroed", cases[c].what);
  }
  CHECK(mx_cold_hub_build(&ok, 1, NULL) == MX_ERR_ARG, "NULL H");
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int64_t nh = 7, rows = 7;
    CHECK(mx_cold_hub_stats(cases[c].C, cases[c].K, &nh, &rows) == MX_ERR_ARG && nh == 0 && rows == 0, "stats, %s: not MX_ERR_ARG", cases[c].what);
  }
  int64_t nh = 0;
  CHECK(mx_cold_hub_stats(&ok, 1, &nh, NULL) == MX_ERR_ARG, "stats: NULL hub_rows");
}

/* the default rule's two thresholds, at and just below each */
static void rule(void) {
  const int64_t n = MX_HUB_AUTO_MIN_NNZ, r = MX_HUB_AUTO_MIN_ROW;
  CHECK(mx_hub_pays(n, n / r), "rule: at both thresholds");
  CHECK(!mx_hub_pays(n - 1, 1), "rule: one hub nonzero too few");
  CHECK(!mx_hub_pays(n, n / r + 1), "rule: rows too short");
  CHECK(mx_hub_pays(37435789, 1520000), "rule: kron:21:16 (24.6 per row)");
  CHECK(!mx_hub_pays(13268452, 1800000), "rule: chunglu:2000000:16:2.1 (7.4 per row)");
  CHECK(!mx_hub_pays(n, 0) && !mx_hub_pays(0, 0), "rule: no hub rows");
}

static void check_real(const char *path) {
  t_csr A;
  if (t_read_mtx(path, &A)) {
    CHECK(0, "cannot read %s", path);
    return;
  }
  const int32_t ks[] = {1, 16, 256};
  for (size_t k = 0; k < 3; k++) check_one(&A, ks[k], path);
  t_csr_free(&A);
}

/* MX_HUB_SLOT maps a slice's (element, lane) pairs one to one onto its 32 len slots, each lane's
 * groups of 4 onto 4 consecutive slots starting on a multiple of 4 (the GPU's vector loads), for
 * every length a pseudo-row may have. */
static void slot_map(void) {
  unsigned char hit[32 * MX_HUB_ROW_MAX_FOLDED];
  const int32_t off = 96; /* a multiple of 32, as slice_off */
  for (int32_t len = 0; len <= MX_HUB_ROW_MAX_FOLDED; len++) {
    memset(hit, 0, sizeof hit);
    for (int32_t j = 0; j < len; j++)
      for (int32_t l = 0; l < 32; l++) {
        const int32_t at = MX_HUB_SLOT(off, len, j, l) - off;
        CHECK(at >= 0 && at < 32 * len && !hit[at], "len %d: element %d of lane %d at %d", len, j, l, at);
        if (at >= 0 && at < 32 * len) hit[at] = 1;
        if (j < (len & ~3)) CHECK(at == MX_HUB_SLOT(off, len, j & ~3, l) - off + (j & 3) && (MX_HUB_SLOT(off, len, j & ~3, l) & 3) == 0,
                                  "len %d: element %d of lane %d outside its group of 4", len, j, l);
      }
  }
}

int main(int argc, char **argv) {
  if (argc == 1) {
    slot_map();
    random_family();
    generated_family();
    edge_rows_and_values();
    errors();
    rule();
  }
  t_for_each_real(argc, argv, __FILE__, check_real);
  return t_report("test_core_cold_hub");
}
