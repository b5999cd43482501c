/* mx_features.c - f = sparsity features of A in O(nnz + nrows + ncols): per-length histograms
 * (a counting sort, kept as their non-empty bins) give every order statistic; one pass over the
 * entries gives the positional ones.
 *
 * Conventions (n = rows or columns, l_i their lengths, mean = nnz/n):
 *   std, skew        population moments (1/n); skew = 0 if std = 0
 *   pratio           max / max(min, 1): an empty row/column would make max/min infinite
 *   top<k>           k-th largest length / mean; 0 if n < k or mean = 0
 *   hot<R>           (fewest rows, longest first, whose lengths sum to >= R% of nnz) / n; 0 if nnz = 0
 *   cv               std / mean; gini from the ascending order; both 0 if nnz = 0
 *   p<P>             nearest-rank percentile: the ceil(P*n/100)-th smallest length (raw count)
 *   empty, single    fraction of rows/columns with 0, with exactly 1 entry
 *   aspect           nrows / ncols
 *   diag, upper      fraction of entries with j = i, with j > i
 *   band_max/mean    max and mean |i - j| over entries, / max(nrows, ncols)
 *   row_span         mean over nonempty rows of (max col - min col + 1) / ncols
 *   row_long32       fraction of nnz in rows longer than 32 (a warp)
 *   row_adjdiff      mean |l_i - l_{i+1}| / mean row length (original order)
 *   ell8_fill        nnz / sum over 8-row groups of 8 * (longest row): ELL fill of the original order;
 *   ell8_sorted_fill the same with rows sorted by length, descending
 *   chunk8_density   nnz / (8 * sum over 8-row groups of distinct columns): the density after the
 *                    first cascade at crux (1,1) without sorting (duplicates can make it exceed 1);
 *   chunk8_sorted_density the same with rows sorted by length (descending, ties by index)
 *   val_row_eq_frac  fraction of entries whose value equals (==) their row's first entry's: 1 when
 *                    every row holds one value (a 1.0-valued graph), about rows / nnz when no two
 *                    values are equal
 *   val_col_eq_frac  the same for columns, a column's first entry being its entry of the smallest
 *                    position: 1 for column constants (a PageRank-scaled graph's 1 / out-degree)
 *                    and for one value
 * Every feature of an empty dimension (n = 0) is 0; both value features are 0 when nnz = 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mx_core_internal.h"
#include "mx_features.h"

#define NTOP 10
#define NHOT 9
static const int32_t top_k[NTOP] = {1, 2, 3, 4, 5, 10, 50, 100, 200, 300};

static const char *const feature_names[MX_NFEATURES] = {
    "nrows", "ncols", "nnz",
    "row_mean", "row_std", "row_min", "row_max", "row_pratio",
    "col_mean", "col_std", "col_min", "col_max", "col_pratio",
    "row_top1", "row_top2", "row_top3", "row_top4", "row_top5",
    "row_top10", "row_top50", "row_top100", "row_top200", "row_top300",
    "col_top1", "col_top2", "col_top3", "col_top4", "col_top5",
    "col_top10", "col_top50", "col_top100", "col_top200", "col_top300",
    "row_hot10", "row_hot20", "row_hot30", "row_hot40", "row_hot50", "row_hot60", "row_hot70", "row_hot80", "row_hot90",
    "col_hot10", "col_hot20", "col_hot30", "col_hot40", "col_hot50", "col_hot60", "col_hot70", "col_hot80", "col_hot90",
    "density",
    "row_cv", "col_cv", "row_gini", "col_gini",
    "row_empty_frac", "col_empty_frac", "row_single_frac", "col_single_frac",
    "row_p50", "row_p90", "row_p99", "col_p50", "col_p90", "col_p99",
    "row_skew", "col_skew",
    "aspect", "diag_frac", "upper_frac", "band_max", "band_mean", "row_span", "row_long32_frac", "row_adjdiff",
    "ell8_fill", "ell8_sorted_fill", "chunk8_density", "chunk8_sorted_density",
    "val_row_eq_frac", "val_col_eq_frac"};

/* Positions of the feature groups in f->v (checked against the name table by the tests). */
enum {
  F_NROWS = 0, F_NCOLS, F_NNZ,
  F_ROW_STATS = 3, F_COL_STATS = 8,   /* mean, std, min, max, pratio */
  F_ROW_TOP = 13, F_COL_TOP = 23,     /* NTOP each */
  F_ROW_HOT = 33, F_COL_HOT = 42,     /* NHOT each */
  F_DENSITY = 51, F_ROW_CV, F_COL_CV, F_ROW_GINI, F_COL_GINI, F_ROW_EMPTY, F_COL_EMPTY, F_ROW_SINGLE,
  F_COL_SINGLE, F_ROW_P50, F_ROW_P90, F_ROW_P99, F_COL_P50, F_COL_P90, F_COL_P99, F_ROW_SKEW, F_COL_SKEW,
  F_ASPECT, F_DIAG, F_UPPER, F_BAND_MAX, F_BAND_MEAN, F_ROW_SPAN, F_ROW_LONG32, F_ROW_ADJDIFF,
  F_ELL8, F_ELL8_SORTED, F_CHUNK8, F_CHUNK8_SORTED, F_VAL_ROW_EQ, F_VAL_COL_EQ, F_END
};
_Static_assert(F_END == MX_NFEATURES, "feature positions must fill MX_NFEATURES exactly");
_Static_assert(sizeof(feature_names) / sizeof(feature_names[0]) == MX_NFEATURES, "one name per feature");

const char *mx_feature_name(int i) { return (i >= 0 && i < MX_NFEATURES) ? feature_names[i] : NULL; }

int mx_feature_index(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < MX_NFEATURES; i++)
    if (strcmp(feature_names[i], name) == 0) return i;
  return -1;
}

/* Order statistics of one dimension's lengths, all from its bins H (mx_length_bins). Walking the
 * non-empty bins in the order of the lengths gives the same sums bit for bit as walking every length:
 * an empty length adds +0.0 (or -0.0) to a sum, which leaves it as it is. */
typedef struct {
  double mean, std, min, max, pratio, top[NTOP], hot[NHOT], cv, gini, empty, single, p50, p90, p99, skew, ell8;
} len_stats;

/* mean, std, skew, cv of the lengths. */
static void moments(const mx_length_bins *H, int32_t n, int32_t nnz, len_stats *s) {
  s->mean = (double)nnz / n;
  double m2 = 0.0, m3 = 0.0;
  for (int32_t b = 0; b < H->nbins; b++) {
    const double d = H->len[b] - s->mean;
    m2 += H->cnt[b] * d * d;
    m3 += H->cnt[b] * d * d * d;
  }
  s->std = sqrt(m2 / n);
  s->skew = s->std > 0.0 ? (m3 / n) / (s->std * s->std * s->std) : 0.0;
  s->cv = s->mean > 0.0 ? s->std / s->mean : 0.0;
}

/* k-th largest / mean for each k in top_k. */
static void top_ratios(const mx_length_bins *H, len_stats *s) {
  int64_t seen = 0; /* lengths >= len[b] */
  int t = 0;
  for (int32_t b = H->nbins - 1; b >= 0 && t < NTOP; b--) {
    seen += H->cnt[b];
    while (t < NTOP && top_k[t] <= seen) s->top[t++] = s->mean > 0.0 ? H->len[b] / s->mean : 0.0;
  }
  for (; t < NTOP; t++) s->top[t] = 0.0;
}

/* Gini = 2 sum_i i x_(i) / (n sum x) - (n+1)/n over the ascending order x_(1) <= ... <= x_(n). */
static double gini(const mx_length_bins *H, int32_t n, int32_t nnz) {
  if (nnz == 0) return 0.0;
  double w = 0.0;
  int64_t before = 0;
  for (int32_t b = 0; b < H->nbins; b++) {
    const double c = (double)H->cnt[b]; /* ranks before+1 .. before+c */
    w += (double)H->len[b] * (c * (double)before + c * (c + 1.0) / 2.0);
    before += H->cnt[b];
  }
  return 2.0 * w / ((double)n * nnz) - ((double)n + 1.0) / n;
}

/* The ceil(P*n/100)-th smallest length (nearest rank, at least the first). */
static double percentile(const mx_length_bins *H, int32_t n, int p) {
  int64_t rank = ((int64_t)p * n + 99) / 100, seen = 0;
  if (rank < 1) rank = 1;
  for (int32_t b = 0; b < H->nbins; b++)
    if ((seen += H->cnt[b]) >= rank) return H->len[b];
  return H->len[H->nbins - 1];
}

/* nnz / sum over groups of 8 of the descending order of 8 * (first length of the group). */
static double ell8_sorted_fill(const mx_length_bins *H, int32_t nnz) {
  int64_t pos = 0, cells = 0;
  for (int32_t b = H->nbins - 1; b >= 0; b--) { /* positions pos..pos+c-1; group starts are multiples of 8 */
    const int64_t c = H->cnt[b], starts = (pos + c + 7) / 8 - (pos + 7) / 8;
    cells += 8 * starts * H->len[b];
    pos += c;
  }
  return cells > 0 ? (double)nnz / cells : 0.0;
}

/* hot[R/10-1] = (fewest lengths, longest first, with 100*sum >= R*nnz) / n, exact in integers. */
static void hot_fractions(const mx_length_bins *H, int32_t n, int32_t nnz, len_stats *s) {
  int32_t b = H->nbins - 1;
  int64_t cum = 0, items = 0, left = H->cnt[b], l = H->len[b];
  for (int r = 0; r < NHOT; r++) {
    const int64_t goal = (int64_t)(r + 1) * 10 * nnz; /* reached when 100*cum >= goal */
    while (100 * cum < goal) {
      if (left == 0) left = H->cnt[--b], l = H->len[b]; /* l > 0 here: the lengths sum to nnz >= goal/100 */
      const int64_t need = (goal - 100 * cum + 100 * l - 1) / (100 * l);
      const int64_t take = need < left ? need : left;
      cum += take * l;
      items += take;
      left -= take;
    }
    s->hot[r] = nnz > 0 ? (double)items / n : 0.0;
  }
}

/* items of length l in H (0 when none) */
static int64_t bin_count(const mx_length_bins *H, int32_t l) {
  for (int32_t b = 0; b < H->nbins && H->len[b] <= l; b++)
    if (H->len[b] == l) return H->cnt[b];
  return 0;
}

/* All order statistics of n lengths summing to nnz, from their bins H (nbins > 0 when n > 0). */
static void length_stats(const mx_length_bins *H, int32_t n, int32_t nnz, len_stats *s) {
  memset(s, 0, sizeof(*s));
  if (n == 0) return;
  const int32_t minl = H->len[0], maxl = H->len[H->nbins - 1];
  moments(H, n, nnz, s);
  s->min = minl;
  s->max = maxl;
  s->pratio = (double)maxl / (minl > 1 ? minl : 1);
  top_ratios(H, s);
  hot_fractions(H, n, nnz, s);
  s->gini = gini(H, n, nnz);
  s->empty = (double)bin_count(H, 0) / n;
  s->single = maxl >= 1 ? (double)bin_count(H, 1) / n : 0.0;
  s->p50 = percentile(H, n, 50);
  s->p90 = percentile(H, n, 90);
  s->p99 = percentile(H, n, 99);
  s->ell8 = ell8_sorted_fill(H, nnz);
}

/* The bins of len[0..n) into new arrays *blen, *bcnt (*nbins of them; freed by the caller, also on
 * error): a counting pass up to the longest length, then its non-empty bins. */
static mx_status length_bins(const int32_t *len, int32_t n, int32_t **blen, int64_t **bcnt, int32_t *nbins) {
  int32_t maxl = 0, k = 0;
  *blen = NULL, *bcnt = NULL, *nbins = 0;
  for (int32_t i = 0; i < n; i++)
    if (len[i] > maxl) maxl = len[i];
  int64_t *hist = calloc((size_t)maxl + 1, sizeof(int64_t));
  if (!hist) return MX_ERR_MEM;
  for (int32_t i = 0; i < n; i++) hist[len[i]]++;
  for (int32_t l = 0; l <= maxl; l++) k += hist[l] > 0;
  *blen = malloc(((size_t)k + 1) * sizeof(int32_t));
  *bcnt = malloc(((size_t)k + 1) * sizeof(int64_t));
  if (*blen && *bcnt)
    for (int32_t l = 0; l <= maxl; l++)
      if (hist[l] > 0) (*blen)[*nbins] = l, (*bcnt)[(*nbins)++] = hist[l];
  free(hist);
  return *blen && *bcnt ? MX_OK : MX_ERR_MEM;
}

/* Whether H holds the bins of items lengths adding up to nnz (see mx_length_bins). */
static int bins_valid(const mx_length_bins *H, int32_t items, int32_t nnz) {
  if (items == 0) return H->nbins == 0;
  if (H->nbins <= 0 || !H->len || !H->cnt) return 0;
  int64_t count = 0, sum = 0;
  for (int32_t b = 0; b < H->nbins; b++) {
    if (H->len[b] < 0 || (b > 0 && H->len[b] <= H->len[b - 1]) || H->cnt[b] <= 0 || H->cnt[b] > items - count) return 0;
    count += H->cnt[b];
    if (H->len[b] > 0 && H->cnt[b] > (nnz - sum) / H->len[b]) return 0; /* the lengths would add up to more than nnz */
    sum += H->cnt[b] * H->len[b];
  }
  return count == items && sum == nnz;
}

/* Sum over groups of 8 rows, in the order perm (NULL = 0..m-1), of the group's distinct columns. */
static int64_t chunk8_distinct(const mx_csr *A, const int32_t *perm, int32_t *mark) {
  const int32_t m = A->nrows, *Ap = A->rowptr, *Aj = A->colidx;
  int64_t distinct = 0;
  for (int32_t j = 0; j < A->ncols; j++) mark[j] = -1;
  for (int32_t t = 0; t < m; t++) {
    const int32_t i = perm ? perm[t] : t, g = t / MX_CHUNK_ROWS;
    for (int32_t k = Ap[i]; k < Ap[i + 1]; k++)
      if (mark[Aj[k]] != g) mark[Aj[k]] = g, distinct++;
  }
  return distinct;
}

/* Positional counts and the value counts from one pass over the entries and the row lengths. For
 * the value counts, first[j] (ncols of scratch) is the position of column j's first entry once the
 * pass has seen one (-1 before), so that each entry is compared as it is met. */
static void positional(const mx_csr *A, const int32_t *rowlen, int32_t *first, mx_feature_counts *c) {
  const int32_t m = A->nrows, *Ap = A->rowptr, *Aj = A->colidx;
  const double *v = A->val;
  int64_t diag = 0, upper = 0, bmax = 0, long32 = 0, adj = 0, cells = 0, nonempty = 0, bsum = 0, span = 0, row_eq = 0, col_eq = 0;
  for (int32_t j = 0; j < A->ncols; j++) first[j] = -1;
  for (int32_t i = 0; i < m; i++) {
    int32_t jmin = INT32_MAX, jmax = -1;
    for (int32_t k = Ap[i]; k < Ap[i + 1]; k++) {
      const int32_t j = Aj[k];
      const int64_t d = j > i ? (int64_t)j - i : (int64_t)i - j;
      diag += j == i;
      upper += j > i;
      bsum += d;
      if (d > bmax) bmax = d;
      if (j < jmin) jmin = j;
      if (j > jmax) jmax = j;
      if (first[j] < 0) first[j] = k;
      row_eq += v[k] == v[Ap[i]];
      col_eq += v[k] == v[first[j]];
    }
    if (jmax >= 0) nonempty++, span += (int64_t)jmax - jmin + 1;
    if (rowlen[i] > 32) long32 += rowlen[i];
    if (i + 1 < m) adj += llabs((int64_t)rowlen[i] - rowlen[i + 1]);
    if (i % MX_CHUNK_ROWS == 0) { /* longest row of the group starting at i */
      int32_t w = 0;
      for (int32_t r = i; r < m && r < i + MX_CHUNK_ROWS; r++)
        if (rowlen[r] > w) w = rowlen[r];
      cells += (int64_t)MX_CHUNK_ROWS * w;
    }
  }
  c->diag = diag;
  c->upper = upper;
  c->band_max = bmax;
  c->band_sum = bsum;
  c->nonempty_rows = nonempty;
  c->span_sum = span;
  c->long32_nnz = long32;
  c->adj_sum = adj;
  c->ell8_cells = cells;
  c->row_first_eq = row_eq;
  c->col_first_eq = col_eq;
}

/* The positional features from their counts. */
static void positional_features(const mx_feature_counts *c, mx_features *f) {
  const int32_t m = c->nrows, n = c->ncols, nnz = c->nnz;
  const double big = (double)(m > n ? m : n), mean = m > 0 ? (double)nnz / m : 0.0;
  f->v[F_ASPECT] = n > 0 ? (double)m / n : 0.0;
  f->v[F_DIAG] = nnz > 0 ? (double)c->diag / nnz : 0.0;
  f->v[F_UPPER] = nnz > 0 ? (double)c->upper / nnz : 0.0;
  f->v[F_BAND_MAX] = nnz > 0 ? (double)c->band_max / big : 0.0;
  f->v[F_BAND_MEAN] = nnz > 0 ? (double)c->band_sum / nnz / big : 0.0;
  f->v[F_ROW_SPAN] = c->nonempty_rows > 0 ? (double)c->span_sum / n / (double)c->nonempty_rows : 0.0;
  f->v[F_ROW_LONG32] = nnz > 0 ? (double)c->long32_nnz / nnz : 0.0;
  f->v[F_ROW_ADJDIFF] = (m > 1 && mean > 0.0) ? (double)c->adj_sum / (m - 1) / mean : 0.0;
  f->v[F_ELL8] = c->ell8_cells > 0 ? (double)nnz / c->ell8_cells : 0.0;
}

/* Write one dimension's statistics at their positions. */
static void put_stats(const len_stats *s, int stats, int top, int hot, int cv, int gi, int em, int si, int p50,
                      int skew, mx_features *f) {
  const double st[5] = {s->mean, s->std, s->min, s->max, s->pratio};
  for (int t = 0; t < 5; t++) f->v[stats + t] = st[t];
  for (int t = 0; t < NTOP; t++) f->v[top + t] = s->top[t];
  for (int t = 0; t < NHOT; t++) f->v[hot + t] = s->hot[t];
  f->v[cv] = s->cv;
  f->v[gi] = s->gini;
  f->v[em] = s->empty;
  f->v[si] = s->single;
  f->v[p50] = s->p50;
  f->v[p50 + 1] = s->p90;
  f->v[p50 + 2] = s->p99;
  f->v[skew] = s->skew;
}

mx_status mx_features_from_counts(const mx_feature_counts *c, mx_features *f) {
  if (!c || !f) return MX_ERR_ARG;
  memset(f, 0, sizeof(*f));
  if (c->nrows < 0 || c->ncols < 0 || c->nnz < 0 || !bins_valid(&c->rows, c->nrows, c->nnz) || !bins_valid(&c->cols, c->ncols, c->nnz))
    return MX_ERR_ARG;
  if (c->row_first_eq < 0 || c->row_first_eq > c->nnz || c->col_first_eq < 0 || c->col_first_eq > c->nnz) return MX_ERR_ARG;
  const int32_t m = c->nrows, n = c->ncols, nnz = c->nnz;
  len_stats rs, cs;
  length_stats(&c->rows, m, nnz, &rs);
  length_stats(&c->cols, n, nnz, &cs);
  f->v[F_NROWS] = m;
  f->v[F_NCOLS] = n;
  f->v[F_NNZ] = nnz;
  f->v[F_DENSITY] = (m > 0 && n > 0) ? (double)nnz / ((double)m * n) : 0.0;
  put_stats(&rs, F_ROW_STATS, F_ROW_TOP, F_ROW_HOT, F_ROW_CV, F_ROW_GINI, F_ROW_EMPTY, F_ROW_SINGLE, F_ROW_P50,
            F_ROW_SKEW, f);
  put_stats(&cs, F_COL_STATS, F_COL_TOP, F_COL_HOT, F_COL_CV, F_COL_GINI, F_COL_EMPTY, F_COL_SINGLE, F_COL_P50,
            F_COL_SKEW, f);
  positional_features(c, f);
  f->v[F_ELL8_SORTED] = rs.ell8;
  f->v[F_CHUNK8] = c->chunk8_distinct > 0 ? (double)nnz / (8.0 * (double)c->chunk8_distinct) : 0.0;
  f->v[F_CHUNK8_SORTED] = c->chunk8_sorted_distinct > 0 ? (double)nnz / (8.0 * (double)c->chunk8_sorted_distinct) : 0.0;
  f->v[F_VAL_ROW_EQ] = nnz > 0 ? (double)c->row_first_eq / nnz : 0.0;
  f->v[F_VAL_COL_EQ] = nnz > 0 ? (double)c->col_first_eq / nnz : 0.0;
  return MX_OK;
}

mx_status mx_features_compute(const mx_csr *A, mx_features *f) {
  if (!f) return MX_ERR_ARG;
  memset(f, 0, sizeof(*f));
  mx_status st = mx_csr_validate(A);
  if (st != MX_OK) return st;
  const int32_t m = A->nrows, n = A->ncols, nnz = A->rowptr[m];
  int32_t *rowlen = malloc(((size_t)m + 1) * sizeof(int32_t)), *collen = calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *perm = malloc(((size_t)m + 1) * sizeof(int32_t)), *mark = malloc(((size_t)n + 1) * sizeof(int32_t));
  int32_t *row_len = NULL, *col_len = NULL;
  int64_t *row_cnt = NULL, *col_cnt = NULL;
  mx_feature_counts c = {0};
  st = (rowlen && collen && perm && mark) ? MX_OK : MX_ERR_MEM;
  if (st == MX_OK) {
    for (int32_t i = 0; i < m; i++) rowlen[i] = A->rowptr[i + 1] - A->rowptr[i];
    for (int32_t k = 0; k < nnz; k++) collen[A->colidx[k]]++;
    st = length_bins(rowlen, m, &row_len, &row_cnt, &c.rows.nbins);
  }
  if (st == MX_OK) st = length_bins(collen, n, &col_len, &col_cnt, &c.cols.nbins);
  if (st == MX_OK) st = mx_sort_desc_by_length(m, rowlen, perm);
  if (st == MX_OK) {
    c.nrows = m;
    c.ncols = n;
    c.nnz = nnz;
    c.rows.len = row_len, c.rows.cnt = row_cnt;
    c.cols.len = col_len, c.cols.cnt = col_cnt;
    positional(A, rowlen, mark, &c);
    c.chunk8_distinct = chunk8_distinct(A, NULL, mark);
    c.chunk8_sorted_distinct = chunk8_distinct(A, perm, mark);
    st = mx_features_from_counts(&c, f);
  }
  free(row_len);
  free(row_cnt);
  free(col_len);
  free(col_cnt);
  free(rowlen);
  free(collen);
  free(perm);
  free(mark);
  return st;
}
