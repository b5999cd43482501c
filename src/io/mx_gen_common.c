/* mx_gen_common.c - the steps the generator families share (mx_io_internal.h): the error text of
 * a spec, uniform values from the spec's seed, a random permutation, and the finished CSR. Below the families and
 * mx_gen.c's dispatch: it calls neither. */
#include "io/mx_io_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The message stays one line of text: control characters the spec brought in (echoed in it) become '?'. */
int mx_gen_err(const mx_gen_ctx *g, const char *fmt, ...)
{
  if (g->err && g->errlen) {
    int n = snprintf(g->err, g->errlen, "spec '%s': ", g->spec);
    if (n >= 0 && (size_t)n < g->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(g->err + n, g->errlen - (size_t)n, fmt, ap);
      va_end(ap);
    }
    for (char *c = g->err; *c; c++)
      if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
  }
  return 1;
}

void mx_gen_fill_uniform(const mx_gen_ctx *g, uint64_t stream, double *val, int64_t nnz)
{
  mx_rng r;
  mx_rng_seed(&r, g->seed, ((uint64_t)MX_STREAM_VALUES << 32) ^ stream);
  for (int64_t k = 0; k < nnz; k++) val[k] = 2.0 * mx_rng_unif(&r) - 1.0;
}

int32_t *mx_gen_random_perm(mx_rng *r, int32_t n)
{
  int32_t *p = mx_io_malloc((size_t)n, sizeof(int32_t));
  if (!p) return NULL;
  for (int32_t i = 0; i < n; i++) p[i] = i;
  for (int32_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int32_t j = (int32_t)mx_rng_below(r, (uint64_t)i + 1), t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

int mx_gen_finish(mx_io_csr *A, int32_t nrows, int32_t ncols, int64_t *rowptr, int32_t *col, int64_t nnz)
{
  int32_t *c2 = realloc(col, (size_t)(nnz ? nnz : 1) * sizeof(int32_t));
  if (c2) col = c2;
  double *val = mx_io_malloc((size_t)nnz, sizeof(double));
  if (!val) {
    free(rowptr);
    free(col);
    return 1;
  }
  A->nrows = nrows;
  A->ncols = ncols;
  A->nnz = nnz;
  A->rowptr = rowptr;
  A->colidx = col;
  A->val = val;
  return 0;
}
