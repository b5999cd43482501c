/* mx_gen.c - matrices from spec strings ("family:field:field[:v]"): parse, check, dispatch, help.
 * The families live in mx_gen_graph.c (kron, rgg, chunglu), mx_gen_grid.c (stencils) and
 * mx_gen_rand.c (band, rand, bipartite, blockdense); the steps they share in mx_gen_common.c.
 * Same spec + same seed -> identical arrays. */
#include "io/mx_io_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char mx_gen_help_text[] =
  "Generator specs (family:fields; sizes are positive integers, n = rows):\n"
  "  kron:SCALE:EF[:v]           Graph500 Kronecker/R-MAT (A=0.57 B=C=0.19 D=0.05), n = 2^SCALE, EF*n edges drawn,\n"
  "                              vertices relabelled by a seeded random permutation, self-loops and duplicates\n"
  "                              removed, made symmetric (undirected, like SuiteSparse kron_g500-logn*);\n"
  "                              nnz a bit under 2*EF*n. SCALE 1..30.\n"
  "  rgg:LOG2N[:v]               random geometric graph, n = 2^LOG2N points uniform in the unit square, edge when\n"
  "                              distance < 0.55*sqrt(ln(n)/n) (like rgg_n_2_*_s0); vertices numbered by grid cell\n"
  "                              (row-major cells of side >= radius), so the matrix is near-banded; nnz ~ 0.95*n*ln(n).\n"
  "  chunglu:N:AVGDEG:EXP[:v]    symmetric power-law Chung-Lu graph: N*AVGDEG/2 edges whose ends are drawn with\n"
  "                              probability ~ (i+1)^(-1/(EXP-1)) (degree tail exponent EXP > 1, e.g. 2.1..3),\n"
  "                              vertices randomly relabelled, self-loops and duplicates removed; nnz <= N*AVGDEG + 1.\n"
  "  chunglu-dir:N:AVGDEG:EXP[:v] directed version: N*AVGDEG edges, rows and columns drawn from the same law with\n"
  "                              independent relabellings (out-hubs are not in-hubs); nnz <= N*AVGDEG + 1.\n"
  "  lap2d:N                     5-point Laplacian on an N x N grid (4, -1), Dirichlet, SPD; n = N^2.\n"
  "  lap2d9:N                    9-point Laplacian on an N x N grid (8, -1), SPD; n = N^2.\n"
  "  lap3d:N                     7-point Laplacian on an N^3 grid (6, -1), SPD; n = N^3.\n"
  "  lap3d27:N                   27-point Laplacian on an N^3 grid (26, -1), SPD; n = N^3.\n"
  "  convdiff2d:N                upwind convection-diffusion, N x N grid, nonsymmetric M-matrix, weakly diagonally\n"
  "                              dominant: centre 5.5, west -2, south -1.5, east -1, north -1 (h*b = (1, 0.5)).\n"
  "  convdiff3d:N                3D version, N^3 grid: centre 7.75, -x -2, -y -1.5, -z -1.25, +x +y +z -1.\n"
  "  band:N:W                    banded, all |i-j| <= W (W >= 0, W < N).\n"
  "  rand:N:PERROW               N x N, exactly PERROW distinct uniform random columns per row.\n"
  "  bipartite:M:N:PERROW        rectangular M x N, exactly PERROW distinct uniform random columns per row.\n"
  "  lp:M:N:AVG:EXP:SINGLE       rectangular M x N like an LP constraint matrix: SINGLE percent of the rows (0..99)\n"
  "                              hold one entry, the others' lengths follow a power law (the i-th longest ~\n"
  "                              (i+1)^(-1/(EXP-1)), EXP > 1, 1..N each: a few long linking rows); mean about\n"
  "                              AVG (>= 1), rows in random order, each row's columns distinct and uniform random;\n"
  "                              nnz <= M*(AVG+1).\n"
  "  blockdense:N:NB:BS          N x N background (diagonal + 4 uniform random columns per row) plus NB dense\n"
  "                              BS x BS blocks at uniform random positions (overlaps merged).\n"
  "Values: stencils use the stencil values above. band, rand, bipartite, lp, blockdense: uniform in [-1,1).\n"
  "Graph families (kron, rgg, chunglu, chunglu-dir): 1.0 per edge; with the suffix ':v', a random value in\n"
  "(0,1] per edge, a hash of (seed, edge), equal for (i,j) and (j,i) in the symmetric families.\n"
  "Any spec may end in @VALUES, replacing every stored value (the pattern stays): @ones (1.0: an unweighted\n"
  "graph), @pagerank (1 / the number of entries of its column: a PageRank transition matrix, column-constant),\n"
  "@unique (uniform in [-1,1): FEM-like values, nothing shared), @few (one of -2, -1, 1, 2, 3).\n"
  "A spec may end in ~ORDER (after any @VALUES): the matrix relabelled, P A P^T, values moving with their\n"
  "entries: ~deg (vertices by entries of A + A^T, most first), ~rcm (reverse Cuthill-McKee on A + A^T),\n"
  "~bfs (breadth-first on A + A^T from the vertex of most entries, neighbours most first). rcm and bfs need a\n"
  "square matrix; ~deg on a rectangular one orders rows by length and columns by count.\n"
  "Seeds: seed 0 means the default seed 20240601 (MX_GEN_DEFAULT_SEED), the same for every family; each\n"
  "family draws from its own stream of xoshiro256** seeded by splitmix64(seed, family). Limits: rows and\n"
  "columns <= 2^31-1, nnz <= 2^34.\n";

const char *mx_gen_help(void) { return mx_gen_help_text; }

/* ---- spec fields ------------------------------------------------------------------------------- */
#define MX_GEN_MAXF 8

typedef struct {
  char *f[MX_GEN_MAXF]; /* f[0] = family */
  int nf;
} mx_fields;

/* integer field f (named name) in [lo, hi] */
static int get_int(const mx_gen_ctx *g, const mx_fields *F, int i, const char *name, int64_t lo, int64_t hi, int64_t *out)
{
  const char *s = F->f[i];
  if (!*s) return mx_gen_err(g, "%s (field %d) is empty", name, i);
  int64_t v = 0;
  for (const char *p = s; *p; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (d > 9)
      return mx_gen_err(g, "%s (field %d) '%.40s' is %s", name, i, s, s[0] == '-' ? "negative" : "not an integer");
    if (v > (INT64_MAX - d) / 10) return mx_gen_err(g, "%s (field %d) '%.40s' is too large", name, i, s);
    v = v * 10 + d;
  }
  if (v < lo) return mx_gen_err(g, "%s (field %d) = %lld must be >= %lld", name, i, (long long)v, (long long)lo);
  if (v > hi) return mx_gen_err(g, "%s (field %d) = %lld must be <= %lld", name, i, (long long)v, (long long)hi);
  *out = v;
  return 0;
}

/* real field: finite, > lo */
static int get_real(const mx_gen_ctx *g, const mx_fields *F, int i, const char *name, double lo, double *out)
{
  const char *s = F->f[i];
  if (!*s) return mx_gen_err(g, "%s (field %d) is empty", name, i);
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || end == s || s[0] == ' ' || !isfinite(v) || errno == ERANGE)
    return mx_gen_err(g, "%s (field %d) '%.40s' is not a finite number", name, i, s);
  if (!(v > lo)) return mx_gen_err(g, "%s (field %d) = %g must be > %g", name, i, v, lo);
  *out = v;
  return 0;
}

/* number of numeric fields (after the family name), whether ":v" is accepted, and field names */
typedef struct {
  const char *name;
  int nnum, graph;
  const char *usage;
} mx_family;

static const mx_family mx_families[] = {
  {"kron", 2, 1, "kron:SCALE:EF[:v]"},
  {"rgg", 1, 1, "rgg:LOG2N[:v]"},
  {"chunglu", 3, 1, "chunglu:N:AVGDEG:EXP[:v]"},
  {"chunglu-dir", 3, 1, "chunglu-dir:N:AVGDEG:EXP[:v]"},
  {"lap2d", 1, 0, "lap2d:N"},
  {"lap2d9", 1, 0, "lap2d9:N"},
  {"lap3d", 1, 0, "lap3d:N"},
  {"lap3d27", 1, 0, "lap3d27:N"},
  {"convdiff2d", 1, 0, "convdiff2d:N"},
  {"convdiff3d", 1, 0, "convdiff3d:N"},
  {"band", 2, 0, "band:N:W"},
  {"rand", 2, 0, "rand:N:PERROW"},
  {"bipartite", 3, 0, "bipartite:M:N:PERROW"},
  {"lp", 5, 0, "lp:M:N:AVG:EXP:SINGLE"},
  {"blockdense", 3, 0, "blockdense:N:NB:BS"},
};

/* The spec needs at most nnz nonzeros and bytes of memory at its peak: store both and stop (-1) when
 * estimating, refuse (1) when the bytes do not fit in the memory left, else go on (0). */
static int plan(const mx_gen_ctx *g, double nnz, double bytes)
{
  char why[200];
  if (g->est_nnz) {
    *g->est_nnz = (int64_t)nnz;
    *g->est_bytes = bytes;
    return -1;
  }
  if (!mx_mem_fits(bytes, why, sizeof why))
    return mx_gen_err(g, "about %.0f nonzeros: %s (nothing was allocated)", nnz, why);
  return 0;
}

/* plan()'s verdict as dispatch's return value: estimate done = 0 (success), refused = 1 */
#define MX_PLAN(g, nnz, bytes)                    \
  do {                                            \
    int p_ = plan((g), (nnz), (bytes));           \
    if (p_) return p_ > 0;                        \
  } while (0)

/* bytes of an owned CSR with n rows and nnz nonzeros (rowptr int64, colidx int32, val double) */
static double csr_bytes(double n, double nnz) { return 8.0 * (n + 1) + 12.0 * nnz; }

static int dispatch(const mx_gen_ctx *g, const mx_family *fam, const mx_fields *F, mx_io_csr *A)
{
  const char *name = fam->name;
  int64_t a = 0, b = 0, c = 0;
  double x = 0, y = 0;
  if (!strcmp(name, "kron")) {
    if (get_int(g, F, 1, "SCALE", 1, 30, &a) || get_int(g, F, 2, "EF", 1, INT64_MAX, &b)) return 1;
    if (b > MX_GEN_MAX_NNZ / 2 >> a) return mx_gen_err(g, "2*EF*2^SCALE nonzeros exceed the limit 2^34");
    double n = ldexp(1.0, (int)a), m = (double)b * n; /* permutation + CSR of both edge directions */
    MX_PLAN(g, 2 * m, 4 * n + csr_bytes(n + 1, 2 * m));
    return mx_gen_kron(g, (int)a, b, A);
  }
  if (!strcmp(name, "rgg")) {
    if (get_int(g, F, 1, "LOG2N", 1, 30, &a)) return 1;
    if (a > 28) return mx_gen_err(g, "LOG2N = %lld: about 0.95*n*ln(n) nonzeros exceed the limit 2^34", (long long)a);
    double n = ldexp(1.0, (int)a), nnz = 1.1 * 0.95 * n * log(n), ncell = n / (0.3025 * log(n)) + 1;
    MX_PLAN(g, nnz, 32 * n + 8 * ncell + csr_bytes(n, nnz)); /* 4 coordinate arrays, cells, CSR; nnz 10% over the mean */
    return mx_gen_rgg(g, (int)a, A);
  }
  if (!strcmp(name, "chunglu") || !strcmp(name, "chunglu-dir")) {
    if (get_int(g, F, 1, "N", 1, INT32_MAX, &a) || get_real(g, F, 2, "AVGDEG", 0.0, &x) ||
        get_real(g, F, 3, "EXP", 1.0, &y))
      return 1;
    if (x > (double)a) return mx_gen_err(g, "AVGDEG = %g must be <= N = %lld", x, (long long)a);
    if (x * (double)a > (double)MX_GEN_MAX_NNZ) return mx_gen_err(g, "N*AVGDEG nonzeros exceed the limit 2^34");
    /* the edges drawn, as mx_gen_chunglu rounds them: each one nonzero (directed) or two */
    const int directed = name[7] == '-';
    const double nnz = directed ? (double)llround(x * (double)a) : 2.0 * (double)llround(x * (double)a / 2.0);
    MX_PLAN(g, nnz, 28.0 * (double)a + csr_bytes((double)a + 1, nnz)); /* alias tables, perms */
    return mx_gen_chunglu(g, (int32_t)a, x, y, directed, A);
  }
  if (!strncmp(name, "lap", 3) || !strncmp(name, "convdiff", 8)) {
    int three = strchr(name, '3') != NULL;
    if (get_int(g, F, 1, "N", 1, three ? 1290 : 46340, &a)) return 1; /* N^d <= 2^31-1 */
    double n = three ? (double)a * a * a : (double)a * a;
    double per_row = strstr(name, "27") ? 27 : strchr(name, '9') ? 9 : three ? 7 : 5;
    MX_PLAN(g, n * per_row, csr_bytes(n, n * per_row));
    return mx_gen_stencil(g, name, a, A);
  }
  if (!strcmp(name, "band")) {
    if (get_int(g, F, 1, "N", 1, INT32_MAX, &a) || get_int(g, F, 2, "W", 0, a - 1, &b)) return 1;
    if ((double)a * (double)(2 * b + 1) > (double)MX_GEN_MAX_NNZ) return mx_gen_err(g, "N*(2W+1) nonzeros exceed the limit 2^34");
    MX_PLAN(g, (double)a * (double)(2 * b + 1), csr_bytes((double)a, (double)a * (double)(2 * b + 1)));
    return mx_gen_band(g, (int32_t)a, b, A);
  }
  if (!strcmp(name, "rand")) {
    if (get_int(g, F, 1, "N", 1, INT32_MAX, &a) || get_int(g, F, 2, "PERROW", 1, a, &b)) return 1;
    if ((double)a * (double)b > (double)MX_GEN_MAX_NNZ) return mx_gen_err(g, "N*PERROW nonzeros exceed the limit 2^34");
    MX_PLAN(g, (double)a * (double)b, csr_bytes((double)a, (double)a * (double)b));
    return mx_gen_randrows(g, (int32_t)a, (int32_t)a, b, MX_STREAM_RAND, A);
  }
  if (!strcmp(name, "lp")) {
    if (get_int(g, F, 1, "M", 1, INT32_MAX, &a) || get_int(g, F, 2, "N", 1, INT32_MAX, &b) ||
        get_real(g, F, 3, "AVG", 0.0, &x) || get_real(g, F, 4, "EXP", 1.0, &y) || get_int(g, F, 5, "SINGLE", 0, 99, &c))
      return 1;
    if (x < 1.0 || x > (double)b) return mx_gen_err(g, "AVG = %g must be in [1, N = %lld]", x, (long long)b);
    if ((double)a * (x + 1.0) > (double)MX_GEN_MAX_NNZ) return mx_gen_err(g, "M*(AVG+1) nonzeros exceed the limit 2^34");
    MX_PLAN(g, (double)a * (x + 1.0), 4.0 * (double)a + csr_bytes((double)a, (double)a * (x + 1.0))); /* row order, CSR */
    return mx_gen_lp(g, (int32_t)a, (int32_t)b, x, y, (int32_t)((double)a * (double)c / 100.0), A);
  }
  if (!strcmp(name, "bipartite")) {
    if (get_int(g, F, 1, "M", 1, INT32_MAX, &a) || get_int(g, F, 2, "N", 1, INT32_MAX, &b) ||
        get_int(g, F, 3, "PERROW", 1, b, &c))
      return 1;
    if ((double)a * (double)c > (double)MX_GEN_MAX_NNZ) return mx_gen_err(g, "M*PERROW nonzeros exceed the limit 2^34");
    MX_PLAN(g, (double)a * (double)c, csr_bytes((double)a, (double)a * (double)c));
    return mx_gen_randrows(g, (int32_t)a, (int32_t)b, c, MX_STREAM_BIPARTITE, A);
  }
  if (!strcmp(name, "blockdense")) {
    if (get_int(g, F, 1, "N", 1, INT32_MAX, &a) || get_int(g, F, 2, "NB", 1, INT32_MAX, &b) ||
        get_int(g, F, 3, "BS", 1, a, &c))
      return 1;
    if ((double)b * (double)c * (double)c + 5.0 * (double)a > (double)MX_GEN_MAX_NNZ)
      return mx_gen_err(g, "NB*BS^2 + 5N nonzeros exceed the limit 2^34");
    double nnz = (double)b * (double)c * (double)c + 5.0 * (double)a;
    MX_PLAN(g, nnz, 8.0 * (double)b + csr_bytes((double)a + 2, nnz)); /* block corners, CSR before merging */
    return mx_gen_blockdense(g, (int32_t)a, b, c, A);
  }
  return mx_gen_err(g, "internal: family '%s' has no generator", name);
}

/* ---- value variants (SPEC@VALUES) ------------------------------------------------------------------- */

typedef enum { MX_VALUES_AS = 0, MX_VALUES_ONES, MX_VALUES_PAGERANK, MX_VALUES_UNIQUE, MX_VALUES_FEW } mx_values_kind;

static const char *const mx_values_names[] = {"", "ones", "pagerank", "unique", "few"};

/* the variant named s, or -1 */
static int values_kind(const char *s)
{
  for (int k = 1; k < (int)(sizeof(mx_values_names) / sizeof(mx_values_names[0])); k++)
    if (!strcmp(s, mx_values_names[k])) return k;
  return -1;
}

/* A's values replaced by variant kind (A's pattern unchanged); 1 when out of memory */
static int apply_values(const mx_gen_ctx *g, mx_values_kind kind, mx_io_csr *A)
{
  static const double few[5] = {-2.0, -1.0, 1.0, 2.0, 3.0};
  if (kind == MX_VALUES_ONES)
    for (int64_t k = 0; k < A->nnz; k++) A->val[k] = 1.0;
  else if (kind == MX_VALUES_UNIQUE) mx_gen_fill_uniform(g, 0x55, A->val, A->nnz);
  else if (kind == MX_VALUES_FEW) {
    mx_rng r;
    mx_rng_seed(&r, g->seed, ((uint64_t)MX_STREAM_VALUES << 32) ^ 0x5f);
    for (int64_t k = 0; k < A->nnz; k++) A->val[k] = few[mx_rng_below(&r, 5)];
  } else if (kind == MX_VALUES_PAGERANK) {
    int64_t *cnt = calloc((size_t)A->ncols + 1, sizeof(int64_t));
    if (!cnt) return mx_gen_err(g, "out of memory for the column counts of @pagerank");
    for (int64_t k = 0; k < A->nnz; k++) cnt[A->colidx[k]]++;
    for (int64_t k = 0; k < A->nnz; k++) A->val[k] = 1.0 / (double)cnt[A->colidx[k]];
    free(cnt);
  }
  return 0;
}

/* parse the spec and dispatch: generate into A, or with g->est_nnz set only estimate */
static int gen_run(mx_gen_ctx g, const char *spec, mx_io_csr *A)
{
  if (!A) return mx_gen_err(&g, "NULL output matrix");
  memset(A, 0, sizeof(*A));
  if (!spec || !*spec) return mx_gen_err(&g, "empty spec (try kron:18:16, lap2d:1000, ...)");
  size_t len = strlen(spec);
  if (len > 200) {
    g.spec = "(too long)";
    return mx_gen_err(&g, "spec longer than 200 characters");
  }
  char buf[201];
  memcpy(buf, spec, len + 1);
  int order = MX_ORDER_NONE;
  char *tilde = strchr(buf, '~');
  if (tilde) {
    *tilde = 0;
    order = mx_gen_order_kind(tilde + 1);
    if (order < 0) return mx_gen_err(&g, "unknown order '~%.40s' (~deg, ~rcm, ~bfs; after any @VALUES)", tilde + 1);
  }
  int values = MX_VALUES_AS;
  char *at = strchr(buf, '@');
  if (at) {
    *at = 0;
    values = values_kind(at + 1);
    if (values < 0) return mx_gen_err(&g, "unknown values '@%.40s' (@ones, @pagerank, @unique, @few)", at + 1);
  }
  mx_fields F = {{0}, 0};
  for (char *p = buf;;) {
    if (F.nf == MX_GEN_MAXF) return mx_gen_err(&g, "too many ':' fields");
    F.f[F.nf++] = p;
    char *q = strchr(p, ':');
    if (!q) break;
    *q = 0;
    p = q + 1;
  }
  const mx_family *fam = NULL;
  for (size_t i = 0; i < sizeof(mx_families) / sizeof(mx_families[0]); i++)
    if (!strcmp(F.f[0], mx_families[i].name)) fam = &mx_families[i];
  if (!fam) return mx_gen_err(&g, "unknown family '%.40s' (see mx_gen_help: kron, rgg, chunglu, chunglu-dir, lap2d, lap2d9, lap3d, lap3d27, convdiff2d, convdiff3d, band, rand, bipartite, lp, blockdense)", F.f[0]);
  int nnum = F.nf - 1;
  if (fam->graph && nnum == fam->nnum + 1) {
    if (strcmp(F.f[F.nf - 1], "v"))
      return mx_gen_err(&g, "last field '%.40s' is not 'v' (usage %s)", F.f[F.nf - 1], fam->usage);
    g.values = 1;
    nnum--;
  }
  if (nnum != fam->nnum)
    return mx_gen_err(&g, "%s expects %d numeric field%s, got %d (usage %s)", fam->name, fam->nnum,
                      fam->nnum == 1 ? "" : "s", nnum, fam->usage);
  if (dispatch(&g, fam, &F, A)) return 1;
  if (g.est_nnz) { /* the rows: 8 (rows + 1) <= bytes; the columns a wider matrix has past that are not
                      counted here (~deg only), mx_gen_relabel checks its need with the real sizes */
    if (order) *g.est_bytes += mx_gen_order_bytes((mx_order_kind)order, *g.est_bytes / 8.0, (double)*g.est_nnz);
    return 0;
  }
  if ((values != MX_VALUES_AS && apply_values(&g, (mx_values_kind)values, A)) ||
      (order && mx_gen_relabel(&g, (mx_order_kind)order, A))) {
    mx_io_csr_free(A);
    return 1;
  }
  return 0;
}

int mx_gen_with_progress(const char *spec, uint64_t seed, mx_gen_progress_fn progress, void *ctx, mx_io_csr *A, char *err,
                         size_t errlen)
{
  mx_gen_ctx g = {spec ? spec : "(null)", seed ? seed : MX_GEN_DEFAULT_SEED, 0, err, errlen, progress, ctx, NULL, NULL};
  return gen_run(g, spec, A);
}

int mx_gen(const char *spec, uint64_t seed, mx_io_csr *A, char *err, size_t errlen)
{
  return mx_gen_with_progress(spec, seed, NULL, NULL, A, err, errlen);
}

int mx_gen_estimate(const char *spec, int64_t *nnz, double *bytes, char *err, size_t errlen)
{
  int64_t n = 0;
  double b = 0;
  mx_io_csr none;
  mx_gen_ctx g = {spec ? spec : "(null)", MX_GEN_DEFAULT_SEED, 0, err, errlen, NULL, NULL, &n, &b};
  int rc = gen_run(g, spec, &none);
  if (nnz) *nnz = n;
  if (bytes) *bytes = b;
  return rc;
}
