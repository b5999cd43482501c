/* mx_gen_order.c - a generated matrix relabelled for locality (SPEC~ORDER): A := P A Q, the rows
 * in a new order and the columns renumbered, each row sorted again, every value moving with its
 * entry. A square matrix gets one permutation for rows and columns (P A P^T: the same operator in
 * new numbers); a rectangular one (~deg only) a row order and a column order of their own.
 * The key of a vertex i of a square matrix is its entries in A + A^T (row i's length plus column
 * i's count). Ties go to the lower old number, so the same matrix always gets the same order.
 * Below mx_gen.c's spec parsing (mx_io_internal.h): it calls none of the families. */
#include "io/mx_io_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const mx_order_names[] = {"", "deg", "rcm", "bfs"};

int mx_gen_order_kind(const char *s)
{
  for (int k = 1; k < (int)(sizeof(mx_order_names) / sizeof(mx_order_names[0])); k++)
    if (!strcmp(s, mx_order_names[k])) return k;
  return -1;
}

/* the relabelled copy; rcm/bfs: A + A^T's pattern, its fill pointers, the starts and the marks;
 * all: the keys, the sort pairs and the two permutations (n = the larger dimension) */
double mx_gen_order_bytes(mx_order_kind kind, double n, double nnz)
{
  double copy = 8.0 * (n + 1) + 12.0 * nnz;
  double walk = kind == MX_ORDER_DEG ? 4.0 * n : 8.0 * (n + 1) + 8.0 * nnz + 8.0 * n + 4.0 * n + n;
  return copy + walk + 8.0 * n + 16.0 * (n + 1) + 8.0 * n;
}

typedef struct {
  int64_t key;
  int32_t idx;
} key_idx;

static int by_key_desc(const void *a, const void *b)
{
  const key_idx *x = a, *y = b;
  if (x->key != y->key) return (x->key < y->key) - (x->key > y->key);
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static int by_key_asc(const void *a, const void *b)
{
  const key_idx *x = a, *y = b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->idx > y->idx) - (x->idx < y->idx);
}

/* idx[0..m) reordered by key[idx] (descending if desc), ties by idx; pairs holds m entries */
static void sort_by_key(int32_t *idx, int64_t m, const int64_t *key, int desc, key_idx *pairs)
{
  for (int64_t t = 0; t < m; t++) pairs[t].key = key[idx[t]], pairs[t].idx = idx[t];
  qsort(pairs, (size_t)m, sizeof(key_idx), desc ? by_key_desc : by_key_asc);
  for (int64_t t = 0; t < m; t++) idx[t] = pairs[t].idx;
}

/* key[i] = row i's length + column i's count (square A) */
static void vertex_keys(const mx_io_csr *A, int64_t *key)
{
  for (int32_t i = 0; i < A->nrows; i++) key[i] = A->rowptr[i + 1] - A->rowptr[i];
  for (int64_t p = 0; p < A->nnz; p++) key[A->colidx[p]]++;
}

/* the pattern of A + A^T (square A; an entry present both ways appears twice); 1 out of memory */
static int symmetric_pattern(const mx_io_csr *A, int64_t **sp_out, int32_t **sc_out)
{
  int32_t n = A->nrows;
  int64_t *sp = mx_io_calloc((size_t)n + 1, sizeof(int64_t));
  int32_t *sc = mx_io_malloc(2 * (size_t)A->nnz, sizeof(int32_t));
  if (!sp || !sc) return free(sp), free(sc), 1;
  for (int32_t i = 0; i < n; i++) sp[i + 1] += A->rowptr[i + 1] - A->rowptr[i];
  for (int64_t p = 0; p < A->nnz; p++) sp[A->colidx[p] + 1]++;
  for (int32_t i = 0; i < n; i++) sp[i + 1] += sp[i];
  int64_t *fill = mx_io_malloc((size_t)n, sizeof(int64_t));
  if (!fill) return free(sp), free(sc), 1;
  memcpy(fill, sp, (size_t)n * sizeof(int64_t));
  for (int32_t i = 0; i < n; i++)
    for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      int32_t j = A->colidx[p];
      sc[fill[i]++] = j;
      sc[fill[j]++] = i;
    }
  free(fill);
  *sp_out = sp, *sc_out = sc;
  return 0;
}

/* order[0..n) = the vertices in breadth-first order over (sp, sc): each component from the unvisited
 * vertex of the smallest key (largest if desc), a vertex's unvisited neighbours queued by key in
 * the same sense. order doubles as the queue. 1 when out of memory. */
static int breadth_first(int32_t n, const int64_t *sp, const int32_t *sc, const int64_t *key, int desc, key_idx *pairs,
                         int32_t *order)
{
  char *seen = mx_io_calloc((size_t)n, 1);
  int32_t *starts = mx_io_malloc((size_t)n, sizeof(int32_t));
  if (!seen || !starts) return free(seen), free(starts), 1;
  for (int32_t i = 0; i < n; i++) starts[i] = i;
  sort_by_key(starts, n, key, desc, pairs);
  int64_t head = 0, tail = 0;
  for (int32_t s = 0; tail < n; s++) {
    if (seen[starts[s]]) continue;
    seen[starts[s]] = 1;
    order[tail++] = starts[s];
    while (head < tail) {
      int32_t v = order[head++];
      int64_t first = tail;
      for (int64_t p = sp[v]; p < sp[v + 1]; p++)
        if (!seen[sc[p]]) seen[sc[p]] = 1, order[tail++] = sc[p];
      sort_by_key(order + first, tail - first, key, desc, pairs);
    }
  }
  free(seen), free(starts);
  return 0;
}

int mx_gen_order_perm(mx_order_kind kind, const mx_io_csr *A, int32_t *rowold, int32_t *colnew)
{
  int32_t n = A->nrows;
  int square = A->nrows == A->ncols;
  int64_t *key = mx_io_malloc((size_t)(n > A->ncols ? n : A->ncols), sizeof(int64_t));
  key_idx *pairs = mx_io_malloc((size_t)(n > A->ncols ? n : A->ncols) + 1, sizeof(key_idx));
  if (!key || !pairs) return free(key), free(pairs), 1;
  int rc = 0;
  if (kind == MX_ORDER_DEG && !square) {
    for (int32_t i = 0; i < n; i++) rowold[i] = i, key[i] = A->rowptr[i + 1] - A->rowptr[i];
    sort_by_key(rowold, n, key, 1, pairs);
    int32_t *colold = mx_io_malloc((size_t)A->ncols, sizeof(int32_t));
    if (!colold) rc = 1;
    else {
      memset(key, 0, (size_t)A->ncols * sizeof(int64_t));
      for (int64_t p = 0; p < A->nnz; p++) key[A->colidx[p]]++;
      for (int32_t j = 0; j < A->ncols; j++) colold[j] = j;
      sort_by_key(colold, A->ncols, key, 1, pairs);
      for (int32_t k = 0; k < A->ncols; k++) colnew[colold[k]] = k;
      free(colold);
    }
  } else {
    vertex_keys(A, key);
    if (kind == MX_ORDER_DEG) {
      for (int32_t i = 0; i < n; i++) rowold[i] = i;
      sort_by_key(rowold, n, key, 1, pairs);
    } else {
      int64_t *sp;
      int32_t *sc;
      if (symmetric_pattern(A, &sp, &sc)) rc = 1;
      else {
        rc = breadth_first(n, sp, sc, key, kind == MX_ORDER_BFS, pairs, rowold);
        free(sp), free(sc);
        if (!rc && kind == MX_ORDER_RCM)
          for (int32_t k = 0; k < n / 2; k++) {
            int32_t t = rowold[k];
            rowold[k] = rowold[n - 1 - k], rowold[n - 1 - k] = t;
          }
      }
    }
    if (!rc)
      for (int32_t k = 0; k < n; k++) colnew[rowold[k]] = k;
  }
  free(key), free(pairs);
  return rc;
}

/* B = the rows of A in the order rowold, columns renumbered by colnew, each row sorted */
static int permuted_copy(const mx_io_csr *A, const int32_t *rowold, const int32_t *colnew, mx_io_csr *B)
{
  int64_t *rp = mx_io_malloc((size_t)A->nrows + 1, sizeof(int64_t));
  int32_t *c = mx_io_malloc((size_t)A->nnz, sizeof(int32_t));
  double *v = mx_io_malloc((size_t)A->nnz, sizeof(double));
  if (!rp || !c || !v) return free(rp), free(c), free(v), 1;
  rp[0] = 0;
  for (int32_t k = 0; k < A->nrows; k++) {
    int32_t i = rowold[k];
    int64_t q = rp[k];
    for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++, q++) c[q] = colnew[A->colidx[p]], v[q] = A->val[p];
    rp[k + 1] = q;
    mx_io_sort_pairs(c + rp[k], v + rp[k], q - rp[k]);
  }
  B->nrows = A->nrows, B->ncols = A->ncols, B->nnz = A->nnz;
  B->rowptr = rp, B->colidx = c, B->val = v;
  return 0;
}

int mx_gen_relabel(const mx_gen_ctx *g, mx_order_kind kind, mx_io_csr *A)
{
  char why[200];
  if (kind != MX_ORDER_DEG && A->nrows != A->ncols)
    return mx_gen_err(g, "~%s needs a square matrix (this one is %d x %d; ~deg orders rows and columns apart)",
                      mx_order_names[kind], (int)A->nrows, (int)A->ncols);
  if (!mx_mem_fits(mx_gen_order_bytes(kind, (double)(A->nrows > A->ncols ? A->nrows : A->ncols), (double)A->nnz), why,
                   sizeof why))
    return mx_gen_err(g, "relabelling %lld nonzeros (~%s): %s", (long long)A->nnz, mx_order_names[kind], why);
  mx_gen_report(g, "relabel", 0.0);
  int32_t *rowold = mx_io_malloc((size_t)A->nrows, sizeof(int32_t));
  int32_t *colnew = mx_io_malloc((size_t)A->ncols, sizeof(int32_t));
  mx_io_csr B;
  int rc = !rowold || !colnew || mx_gen_order_perm(kind, A, rowold, colnew) || permuted_copy(A, rowold, colnew, &B);
  free(rowold), free(colnew);
  if (rc) return mx_gen_err(g, "out of memory while relabelling (~%s)", mx_order_names[kind]);
  mx_io_csr_free(A);
  *A = B;
  mx_gen_report(g, "relabel", 1.0);
  return 0;
}
