/* mx_gen_rand.c - random-structure families: band, rand / bipartite (k distinct random columns per
 * row), lp (single-entry rows and power-law row lengths, uniform columns), blockdense (random background plus dense
 * blocks). Values uniform in [-1,1), drawn in CSR order from their own stream after the structure is
 * fixed. */
#include "io/mx_io_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int mx_gen_band(const mx_gen_ctx *g, int32_t n, int64_t w, mx_io_csr *A)
{
  /* row i holds columns max(0, i-w) .. min(n-1, i+w) */
  int64_t nnz = (int64_t)n * (2 * w + 1) - w * (w + 1);
  int64_t *rp = mx_io_malloc((size_t)n + 1, sizeof(int64_t));
  int32_t *col = mx_io_malloc((size_t)nnz, sizeof(int32_t));
  if (!rp || !col) {
    free(rp);
    free(col);
    return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  }
  if (mx_gen_finish(A, n, n, rp, col, nnz)) return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  int64_t k = 0;
  rp[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t lo = i - w < 0 ? 0 : i - w, hi = i + w >= n ? n - 1 : i + w;
    for (int64_t j = lo; j <= hi; j++) A->colidx[k++] = (int32_t)j;
    rp[i + 1] = k;
  }
  mx_gen_fill_uniform(g, MX_STREAM_BAND, A->val, nnz);
  return 0;
}

/* k distinct sorted values from [0, n) into c[0..k).
 * k > n/2: selection sampling (Knuth's algorithm S), one pass over 0..n-1, output already sorted.
 * otherwise: draw, sort, merge duplicates, redraw the missing ones until there are k. */
static void sample_distinct(mx_rng *r, int64_t n, int64_t k, int32_t *c)
{
  if (2 * k > n) {
    int64_t need = k, w = 0;
    for (int64_t t = 0; t < n && need; t++)
      if ((int64_t)mx_rng_below(r, (uint64_t)(n - t)) < need) {
        c[w++] = (int32_t)t;
        need--;
      }
    return;
  }
  int64_t have = 0;
  while (have < k) {
    for (int64_t i = have; i < k; i++) c[i] = (int32_t)mx_rng_below(r, (uint64_t)n);
    mx_io_sort_pairs(c, NULL, k);
    int64_t w = 1;
    for (int64_t i = 1; i < k; i++)
      if (c[i] != c[w - 1]) c[w++] = c[i];
    have = w;
  }
}

int mx_gen_randrows(const mx_gen_ctx *g, int32_t m, int32_t n, int64_t perrow, uint64_t stream, mx_io_csr *A)
{
  int64_t nnz = (int64_t)m * perrow;
  int64_t *rp = mx_io_malloc((size_t)m + 1, sizeof(int64_t));
  int32_t *col = mx_io_malloc((size_t)nnz, sizeof(int32_t));
  if (!rp || !col) {
    free(rp);
    free(col);
    return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  }
  if (mx_gen_finish(A, m, n, rp, col, nnz)) return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  mx_rng r;
  mx_rng_seed(&r, g->seed, stream << 32);
  rp[0] = 0;
  const int64_t tenth = m / 10 + 1; /* progress every tenth of the rows */
  for (int64_t i = 0; i < m; i++) {
    if (i % tenth == 0) mx_gen_report(g, "drawing columns", (double)i / (double)m);
    sample_distinct(&r, n, perrow, A->colidx + rp[i]);
    rp[i + 1] = rp[i] + perrow;
  }
  mx_gen_fill_uniform(g, stream, A->val, nnz);
  return 0;
}

/* the row lengths of lp: `single` rows of one entry; of the other q = m - single rows, the i-th
 * longest max(1, min(n, round(a q w_i / sum w))) with w_i = (i+1)^(-1/(expo-1)) and a = (avg m -
 * single) / q, so that the mean is about avg; the i-th longest at row perm[i]; rp[i+1] = row i's
 * length */
static void lp_row_lengths(int32_t m, int32_t n, double avg, double expo, int32_t single, const int32_t *perm, int64_t *rp)
{
  const int32_t q = m - single;
  const double a = q > 0 ? (avg * (double)m - (double)single) / (double)q : 1.0;
  double sum = 0.0;
  for (int32_t i = 0; i < q; i++) sum += pow((double)i + 1.0, -1.0 / (expo - 1.0));
  for (int32_t i = 0; i < m; i++) {
    double len = i < q ? floor(a * (double)q * pow((double)i + 1.0, -1.0 / (expo - 1.0)) / sum + 0.5) : 1.0;
    rp[perm[i] + 1] = len < 1.0 ? 1 : len > (double)n ? n : (int64_t)len;
  }
}

int mx_gen_lp(const mx_gen_ctx *g, int32_t m, int32_t n, double avg, double expo, int32_t single, mx_io_csr *A)
{
  mx_rng r;
  mx_rng_seed(&r, g->seed, (uint64_t)MX_STREAM_LP << 32);
  int64_t *rp = mx_io_malloc((size_t)m + 1, sizeof(int64_t));
  int32_t *perm = mx_gen_random_perm(&r, m), *col = NULL;
  if (!rp || !perm) {
    free(rp), free(perm);
    return mx_gen_err(g, "out of memory (%d rows)", (int)m);
  }
  lp_row_lengths(m, n, avg, expo, single, perm, rp);
  free(perm);
  rp[0] = 0;
  for (int32_t i = 0; i < m; i++) rp[i + 1] += rp[i];
  const int64_t nnz = rp[m];
  col = mx_io_malloc((size_t)nnz, sizeof(int32_t));
  if (!col) {
    free(rp);
    return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  }
  if (mx_gen_finish(A, m, n, rp, col, nnz)) return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  const int64_t tenth = m / 10 + 1;
  for (int64_t i = 0; i < m; i++) {
    if (i % tenth == 0) mx_gen_report(g, "drawing columns", (double)i / (double)m);
    sample_distinct(&r, n, rp[i + 1] - rp[i], A->colidx + rp[i]);
  }
  mx_gen_fill_uniform(g, MX_STREAM_LP, A->val, nnz);
  return 0;
}

#define MX_BD_BACKGROUND 4 /* random background columns per row, besides the diagonal */

int mx_gen_blockdense(const mx_gen_ctx *g, int32_t n, int64_t nb, int64_t bs, mx_io_csr *A)
{
  mx_rng r;
  mx_rng_seed(&r, g->seed, (uint64_t)MX_STREAM_BLOCKDENSE << 32);
  int32_t *r0 = mx_io_malloc((size_t)nb, sizeof(int32_t)), *c0 = mx_io_malloc((size_t)nb, sizeof(int32_t));
  int64_t *rp = mx_io_calloc((size_t)n + 3, sizeof(int64_t)); /* rows, +1 shift, +1 for the differences */
  int32_t *col = NULL;
  if (!r0 || !c0 || !rp) goto oom;
  /* block b covers rows r0[b] .. r0[b]+bs-1 and columns c0[b] .. c0[b]+bs-1 */
  for (int64_t b = 0; b < nb; b++) {
    r0[b] = (int32_t)mx_rng_below(&r, (uint64_t)(n - bs + 1));
    c0[b] = (int32_t)mx_rng_below(&r, (uint64_t)(n - bs + 1));
  }
  /* row lengths before merging: 1 + background + bs per covering block (difference array) */
  for (int64_t b = 0; b < nb; b++) {
    rp[r0[b] + 2] += bs;
    rp[r0[b] + bs + 2] -= bs; /* r0 + bs <= n: index <= n + 2 */
  }
  int64_t cover = 0;
  for (int32_t i = 0; i < n; i++) {
    cover += rp[i + 2];
    rp[i + 2] = cover + 1 + MX_BD_BACKGROUND;
  }
  for (int32_t i = 0; i < n; i++) rp[i + 2] += rp[i + 1];
  col = mx_io_malloc((size_t)rp[n + 1], sizeof(int32_t));
  if (!col) goto oom;
  /* background (rp[i+1] is row i's cursor), then the blocks */
  for (int32_t i = 0; i < n; i++) {
    col[rp[i + 1]++] = i;
    for (int k = 0; k < MX_BD_BACKGROUND; k++) col[rp[i + 1]++] = (int32_t)mx_rng_below(&r, (uint64_t)n);
  }
  for (int64_t b = 0; b < nb; b++)
    for (int64_t i = r0[b]; i < r0[b] + bs; i++)
      for (int64_t j = c0[b]; j < c0[b] + bs; j++) col[rp[i + 1]++] = (int32_t)j;
  free(r0);
  free(c0);
  int64_t nnz = mx_io_csr_sort_dedup(n, rp, col, NULL);
  if (mx_gen_finish(A, n, n, rp, col, nnz)) return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  mx_gen_fill_uniform(g, MX_STREAM_BLOCKDENSE, A->val, nnz);
  return 0;
oom:
  free(r0);
  free(c0);
  free(rp);
  free(col);
  return mx_gen_err(g, "out of memory (%lld blocks of %lld x %lld)", (long long)nb, (long long)bs, (long long)bs);
}
