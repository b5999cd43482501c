/* mx_gen_grid.c - stencil matrices on N^d grids (d = 2, 3), Dirichlet boundary (outside points dropped).
 * Row of grid point p = (x, y, z), index x + N*y + N*N*z: for each stencil point, in increasing
 * order of its index offset, the neighbour if it is inside the grid. So columns come out sorted and
 * the exact nnz is known in advance. */
#include "io/mx_io_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int dx, dy, dz;
  double v;
} mx_spt;

/* all points of the 3^d cube in (dz, dy, dx) lexicographic order = increasing index offset */
static int cube(int dim, double centre, double off, mx_spt *pts)
{
  int n = 0;
  for (int dz = (dim == 3 ? -1 : 0); dz <= (dim == 3 ? 1 : 0); dz++)
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) pts[n++] = (mx_spt){dx, dy, dz, (dx || dy || dz) ? off : centre};
  return n;
}

/* the 2d+1 point star with per-direction values: minus[k], plus[k] for axis k (x, y, z) */
static int star(int dim, double centre, const double *minus, const double *plus, mx_spt *pts)
{
  int n = 0;
  if (dim == 3) pts[n++] = (mx_spt){0, 0, -1, minus[2]};
  pts[n++] = (mx_spt){0, -1, 0, minus[1]};
  pts[n++] = (mx_spt){-1, 0, 0, minus[0]};
  pts[n++] = (mx_spt){0, 0, 0, centre};
  pts[n++] = (mx_spt){1, 0, 0, plus[0]};
  pts[n++] = (mx_spt){0, 1, 0, plus[1]};
  if (dim == 3) pts[n++] = (mx_spt){0, 0, 1, plus[2]};
  return n;
}

int mx_gen_stencil(const mx_gen_ctx *g, const char *kind, int64_t N, mx_io_csr *A)
{
  static const double m1[3] = {-1, -1, -1}, cd_minus[3] = {-2.0, -1.5, -1.25};
  mx_spt pts[27];
  int np, dim = strchr(kind, '3') ? 3 : 2;
  if (!strcmp(kind, "lap2d") || !strcmp(kind, "lap3d")) np = star(dim, 2.0 * dim, m1, m1, pts);
  else if (!strcmp(kind, "lap2d9")) np = cube(2, 8.0, -1.0, pts);
  else if (!strcmp(kind, "lap3d27")) np = cube(3, 26.0, -1.0, pts);
  else if (!strcmp(kind, "convdiff2d")) np = star(2, 5.5, cd_minus, m1, pts);
  else if (!strcmp(kind, "convdiff3d")) np = star(3, 7.75, cd_minus, m1, pts);
  else return mx_gen_err(g, "internal: unknown stencil '%s'", kind);
  int64_t Nz = dim == 3 ? N : 1, n = N * N * Nz;
  /* exact nnz: per axis, offset 0 fits N positions and offset +-1 fits N-1 */
  int64_t nnz = 0;
  for (int k = 0; k < np; k++)
    nnz += (pts[k].dx ? N - 1 : N) * (pts[k].dy ? N - 1 : N) * (dim == 3 ? (pts[k].dz ? N - 1 : N) : 1);
  int64_t *rp = mx_io_malloc((size_t)n + 1, sizeof(int64_t));
  int32_t *col = mx_io_malloc((size_t)nnz, sizeof(int32_t));
  if (!rp || !col || mx_gen_finish(A, (int32_t)n, (int32_t)n, rp, col, nnz)) {
    if (!rp || !col) {
      free(rp);
      free(col);
    }
    return mx_gen_err(g, "out of memory (%lld nonzeros)", (long long)nnz);
  }
  int64_t w = 0, row = 0;
  rp[0] = 0;
  for (int64_t z = 0; z < Nz; z++)
    for (int64_t y = 0; y < N; y++)
      for (int64_t x = 0; x < N; x++, row++) {
        for (int k = 0; k < np; k++) {
          int64_t xx = x + pts[k].dx, yy = y + pts[k].dy, zz = z + pts[k].dz;
          if (xx < 0 || xx >= N || yy < 0 || yy >= N || zz < 0 || zz >= Nz) continue;
          A->colidx[w] = (int32_t)(xx + N * (yy + N * zz));
          A->val[w++] = pts[k].v;
        }
        rp[row + 1] = w;
      }
  return 0;
}
