/* mx_gen_graph.c - graph families: Kronecker/R-MAT (Graph500), random geometric, Chung-Lu.
 *
 * Edge-sampling families are built in two passes over the same random stream (reseeded): the
 * first counts row lengths, the second scatters columns into CSR, so no edge list is stored. Rows
 * are then sorted and duplicates dropped; values (1.0, or a hash of the edge with ":v") come last. */
#include "io/mx_io_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* one edge (u, v) from the family's sampler */
typedef void (*mx_edge_fn)(void *st, mx_rng *r, int32_t *u, int32_t *v);

/* graph values: 1.0, or with ":v" a hash of (seed, row, col) in (0,1], symmetric if sym */
static void graph_values(const mx_gen_ctx *g, mx_io_csr *A, int sym)
{
  for (int32_t i = 0; i < A->nrows; i++)
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
      int32_t j = A->colidx[k];
      if (!g->values) A->val[k] = 1.0;
      else if (sym) A->val[k] = mx_hash_unit(g->seed, (uint64_t)(i < j ? i : j), (uint64_t)(i < j ? j : i));
      else A->val[k] = mx_hash_unit(g->seed, (uint64_t)i, (uint64_t)j);
    }
}

/* m sampled edges -> n x n CSR without self-loops and duplicates; sym: both (u,v) and (v,u) */
static int build_from_edges(const mx_gen_ctx *g, int32_t n, int64_t m, int sym, mx_edge_fn edge, void *st,
                            uint64_t stream, mx_io_csr *A)
{
  int64_t *rp = mx_io_calloc((size_t)n + 2, sizeof(int64_t));
  if (!rp) return mx_gen_err(g, "out of memory (%d rows)", (int)n);
  mx_rng r;
  mx_rng_seed(&r, g->seed, stream);
  mx_rng r0 = r;
  int32_t u, v;
  const int64_t tenth = m / 10 + 1; /* progress every tenth of the edges */
  for (int64_t e = 0; e < m; e++) {
    if (e % tenth == 0) mx_gen_report(g, "counting edges per row", (double)e / (double)m);
    edge(st, &r, &u, &v);
    if (u == v) continue;
    rp[u + 2]++;
    if (sym) rp[v + 2]++;
  }
  for (int32_t i = 0; i < n; i++) rp[i + 2] += rp[i + 1];
  int64_t nz0 = rp[n + 1];
  int32_t *col = mx_io_malloc((size_t)nz0, sizeof(int32_t));
  if (!col) {
    free(rp);
    return mx_gen_err(g, "out of memory (%lld nonzeros before merging)", (long long)nz0);
  }
  r = r0;
  for (int64_t e = 0; e < m; e++) {
    if (e % tenth == 0) mx_gen_report(g, "placing edges", (double)e / (double)m);
    edge(st, &r, &u, &v);
    if (u == v) continue;
    col[rp[u + 1]++] = v;
    if (sym) col[rp[v + 1]++] = u;
  }
  mx_gen_report(g, "sorting rows, removing duplicates", 0.0);
  int64_t nnz = mx_io_csr_sort_dedup(n, rp, col, NULL);
  if (mx_gen_finish(A, n, n, rp, col, nnz)) return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  graph_values(g, A, sym);
  return 0;
}

/* ---- kron: Graph500 R-MAT, quadrant probabilities A=0.57 B=0.19 C=0.19 D=0.05 --------------------- */
typedef struct {
  int scale;
  uint32_t tA, tAB, tABC; /* cumulative thresholds on 32 random bits */
  const int32_t *perm;
} kron_state;

/* per level one 32-bit draw picks the quadrant: (0,0) A, (0,1) B, (1,0) C, (1,1) D */
static void kron_edge(void *stv, mx_rng *r, int32_t *u, int32_t *v)
{
  const kron_state *st = stv;
  uint32_t i = 0, j = 0;
  uint64_t bits = 0;
  for (int l = 0; l < st->scale; l++) {
    if (!(l & 1)) bits = mx_rng_next(r);
    uint32_t x = (uint32_t)bits;
    bits >>= 32;
    uint32_t ib = x >= st->tAB, jb = ib ? x >= st->tABC : x >= st->tA;
    i = (i << 1) | ib;
    j = (j << 1) | jb;
  }
  *u = st->perm[i];
  *v = st->perm[j];
}

int mx_gen_kron(const mx_gen_ctx *g, int scale, int64_t ef, mx_io_csr *A)
{
  int32_t n = (int32_t)((int64_t)1 << scale);
  mx_rng r;
  mx_rng_seed(&r, g->seed, ((uint64_t)MX_STREAM_KRON << 32) | 1);
  int32_t *perm = mx_gen_random_perm(&r, n);
  if (!perm) return mx_gen_err(g, "out of memory (%d vertices)", (int)n);
  kron_state st = {scale, (uint32_t)(0.57 * 4294967296.0), (uint32_t)(0.76 * 4294967296.0),
                   (uint32_t)(0.95 * 4294967296.0), perm};
  int rc = build_from_edges(g, n, ef * (int64_t)n, 1, kron_edge, &st, (uint64_t)MX_STREAM_KRON << 32, A);
  free(perm);
  return rc;
}

/* ---- Chung-Lu: endpoints drawn from weights (i+1)^(-1/(EXP-1)) with Walker/Vose alias tables ------ */
typedef struct {
  int32_t n;
  double *prob;   /* alias method: keep k with probability prob[k], else take alias[k] */
  int32_t *alias;
  const int32_t *perm_u, *perm_v;
} cl_state;

static inline int32_t cl_draw(const cl_state *st, mx_rng *r)
{
  int32_t k = (int32_t)mx_rng_below(r, (uint64_t)st->n);
  return mx_rng_unif(r) < st->prob[k] ? k : st->alias[k];
}

static void cl_edge(void *stv, mx_rng *r, int32_t *u, int32_t *v)
{
  const cl_state *st = stv;
  *u = st->perm_u[cl_draw(st, r)];
  *v = st->perm_v[cl_draw(st, r)];
}

/* Vose's alias table for p_i ~ (i+1)^(-alpha) */
static int alias_build(cl_state *st, double alpha)
{
  int32_t n = st->n;
  double *p = st->prob;
  int32_t *small = mx_io_malloc((size_t)n, sizeof(int32_t)), *large = mx_io_malloc((size_t)n, sizeof(int32_t));
  if (!small || !large) {
    free(small);
    free(large);
    return 1;
  }
  double sum = 0;
  for (int32_t i = 0; i < n; i++) sum += p[i] = pow((double)i + 1.0, -alpha);
  int32_t ns = 0, nl = 0;
  for (int32_t i = 0; i < n; i++) {
    p[i] *= (double)n / sum;
    if (p[i] < 1.0) small[ns++] = i;
    else large[nl++] = i;
  }
  while (ns && nl) {
    int32_t s = small[--ns], l = large[nl - 1];
    st->alias[s] = l;
    p[l] -= 1.0 - p[s];
    if (p[l] < 1.0) {
      nl--;
      small[ns++] = l;
    }
  }
  while (nl) p[large[--nl]] = 1.0, st->alias[large[nl]] = large[nl];
  while (ns) p[small[--ns]] = 1.0, st->alias[small[ns]] = small[ns]; /* rounding leftovers */
  free(small);
  free(large);
  return 0;
}

int mx_gen_chunglu(const mx_gen_ctx *g, int32_t n, double avgdeg, double expo, int directed, mx_io_csr *A)
{
  uint64_t stream = (uint64_t)(directed ? MX_STREAM_CHUNGLU_DIR : MX_STREAM_CHUNGLU) << 32;
  mx_rng r;
  mx_rng_seed(&r, g->seed, stream | 1);
  cl_state st = {n, mx_io_malloc((size_t)n, sizeof(double)), mx_io_malloc((size_t)n, sizeof(int32_t)), NULL, NULL};
  int32_t *pu = NULL, *pv = NULL;
  int rc = 1;
  if (!st.prob || !st.alias || alias_build(&st, 1.0 / (expo - 1.0))) {
    mx_gen_err(g, "out of memory (%d vertices)", (int)n);
    goto done;
  }
  pu = mx_gen_random_perm(&r, n);
  pv = directed ? mx_gen_random_perm(&r, n) : pu;
  if (!pu || !pv) {
    mx_gen_err(g, "out of memory (%d vertices)", (int)n);
    goto done;
  }
  st.perm_u = pu;
  st.perm_v = pv;
  int64_t m = llround(directed ? (double)n * avgdeg : (double)n * avgdeg / 2.0);
  rc = build_from_edges(g, n, m, !directed, cl_edge, &st, stream, A);
done:
  free(st.prob);
  free(st.alias);
  if (pv != pu) free(pv);
  free(pu);
  return rc;
}

/* ---- rgg: random geometric graph in the unit square ---------------------------------------------- */
/* Points are bucketed into a G x G grid of cells of side 1/G >= radius, so a point's neighbours lie in
 * the 3 x 3 cells around it. Vertex ids follow the cells in row-major order (points of one cell in
 * draw order); visiting the 3 x 3 cells row by row then yields each row's columns already sorted. */
typedef struct {
  int32_t n, G;
  double r2;
  const double *x, *y;
  const int64_t *cstart; /* G*G + 1: first vertex of each cell */
} rgg_state;

static inline int32_t rgg_cell(double c, int32_t G)
{
  int32_t k = (int32_t)(c * G);
  return k < G ? k : G - 1;
}

/* neighbours of vertex i: count them (col == NULL) or write them to col; returns the count */
static int64_t rgg_row(const rgg_state *st, int32_t i, int32_t *col)
{
  int32_t G = st->G, cx = rgg_cell(st->x[i], G), cy = rgg_cell(st->y[i], G);
  double xi = st->x[i], yi = st->y[i];
  int64_t cnt = 0;
  for (int32_t yy = cy - 1; yy <= cy + 1; yy++) {
    if (yy < 0 || yy >= G) continue;
    int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx + 1 < G ? cx + 1 : G - 1;
    /* cells (yy, x0..x1) are consecutive: their vertices are one contiguous id range */
    for (int64_t j = st->cstart[(int64_t)yy * G + x0]; j < st->cstart[(int64_t)yy * G + x1 + 1]; j++) {
      double dx = st->x[j] - xi, dy = st->y[j] - yi;
      if (j != i && dx * dx + dy * dy < st->r2) {
        if (col) col[cnt] = (int32_t)j;
        cnt++;
      }
    }
  }
  return cnt;
}

int mx_gen_rgg(const mx_gen_ctx *g, int log2n, mx_io_csr *A)
{
  int32_t n = (int32_t)((int64_t)1 << log2n);
  double rad = 0.55 * sqrt(log((double)n) / (double)n);
  int64_t G64 = (int64_t)floor(1.0 / rad);
  int32_t G = G64 < 1 ? 1 : G64 > 46340 ? 46340 : (int32_t)G64;
  int64_t ncell = (int64_t)G * G;
  double *x0 = mx_io_malloc((size_t)n, sizeof(double)), *y0 = mx_io_malloc((size_t)n, sizeof(double));
  double *x = mx_io_malloc((size_t)n, sizeof(double)), *y = mx_io_malloc((size_t)n, sizeof(double));
  int64_t *cs = mx_io_calloc((size_t)ncell + 2, sizeof(int64_t));
  int64_t *rp = mx_io_malloc((size_t)n + 1, sizeof(int64_t));
  int32_t *col = NULL;
  int rc = 1;
  if (!x0 || !y0 || !x || !y || !cs || !rp) {
    mx_gen_err(g, "out of memory (%d points)", (int)n);
    goto done;
  }
  mx_rng r;
  mx_rng_seed(&r, g->seed, (uint64_t)MX_STREAM_RGG << 32);
  for (int32_t i = 0; i < n; i++) {
    x0[i] = mx_rng_unif(&r);
    y0[i] = mx_rng_unif(&r);
  }
  /* counting sort of the points by cell; cs[c+1] is the cursor of cell c during the scatter */
  for (int32_t i = 0; i < n; i++) cs[(int64_t)rgg_cell(y0[i], G) * G + rgg_cell(x0[i], G) + 2]++;
  for (int64_t c = 0; c < ncell; c++) cs[c + 2] += cs[c + 1];
  for (int32_t i = 0; i < n; i++) {
    int64_t at = cs[(int64_t)rgg_cell(y0[i], G) * G + rgg_cell(x0[i], G) + 1]++;
    x[at] = x0[i];
    y[at] = y0[i];
  }
  free(x0);
  free(y0);
  x0 = y0 = NULL;
  rgg_state st = {n, G, rad * rad, x, y, cs};
  rp[0] = 0;
  for (int32_t i = 0; i < n; i++) rp[i + 1] = rp[i] + rgg_row(&st, i, NULL);
  col = mx_io_malloc((size_t)rp[n], sizeof(int32_t));
  if (!col) {
    mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)rp[n]);
    goto done;
  }
  const int32_t tenth = n / 10 + 1; /* progress every tenth of the rows */
  for (int32_t i = 0; i < n; i++) {
    if (i % tenth == 0) mx_gen_report(g, "finding neighbours", (double)i / (double)n);
    rgg_row(&st, i, col + rp[i]);
  }
  if (mx_gen_finish(A, n, n, rp, col, rp[n])) {
    rp = NULL;
    col = NULL;
    mx_gen_err(g, "out of memory");
    goto done;
  }
  rp = NULL;
  col = NULL;
  graph_values(g, A, 1);
  rc = 0;
done:
  free(x0);
  free(y0);
  free(x);
  free(y);
  free(cs);
  free(rp);
  free(col);
  return rc;
}
