/* bench_cpu_spmv.c - CPU y = A x of the format vs a plain CSR loop on a random matrix (default
 * 500,000 rows, 5M nonzeros, power-law rows/cols). Prints the median time of reps runs in ms. Not a
 * test: timings depend on the machine. Usage: bench_cpu_spmv [nrows] [nnz] [reps] [pw]. */
#include <time.h>

#include "test_util.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The plain CSR loop the (0,0) format must match. */
static void csr_spmv(const t_csr *A, const double *x, double *y) {
  const int32_t m = A->nrows, *Ap = A->rowptr, *Aj = A->colidx;
  const double *Ax = A->val;
  for (int32_t i = 0; i < m; i++) {
    double s = 0.0;
    for (int32_t p = Ap[i]; p < Ap[i + 1]; p++) s += Ax[p] * x[Aj[p]];
    y[i] = s;
  }
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof(double), cmp_d);
  return t[n / 2];
}

int main(int argc, char **argv) {
  const int32_t m = argc > 1 ? atoi(argv[1]) : 500000, nz = argc > 2 ? atoi(argv[2]) : 5000000;
  const int reps = argc > 3 ? atoi(argv[3]) : 21;
  const double pw = argc > 4 ? atof(argv[4]) : 1.5;
  t_spec s = {m, m, nz, pw, pw, 0, 0, 0, 0, 0, 2026};
  t_csr A = t_random(&s);
  const mx_csr V = t_view(&A);
  t_rng r = {7};
  double *x = t_vec(&r, m), *y = t_vec(&r, m), *yr = t_vec(&r, m), *t = malloc((size_t)reps * sizeof(double)),
         *tc = malloc((size_t)reps * sizeof(double));
  printf("matrix %d x %d, %d nonzeros (power law %.2g); median of %d runs, CSR and format interleaved\n", m, m,
         A.nnz, pw, reps);
  const mx_crux cr[] = {{0, 0}, {0.7, 0.5}, {1, 1}};
  const char *mn[] = {"auto", "du", "se"};
  for (int c = 0; c < 3; c++)
    for (int md = 0; md < 3; md++) {
      mx_format F;
      const double tb = now_ms();
      if (mx_format_build(&V, cr[c], (mx_mode_request)md, &F) != MX_OK) return 1;
      const double build = now_ms() - tb;
      for (int k = 0; k < reps; k++) { /* alternate so drift and noise hit both alike */
        double t0 = now_ms();
        csr_spmv(&A, x, yr);
        tc[k] = now_ms() - t0;
        t0 = now_ms();
        mx_spmv(&F, x, y);
        t[k] = now_ms() - t0;
      }
      const double tf = median(t, reps), tcsr = median(tc, reps);
      printf("crux (%.1f,%.1f) %-4s format %7.2f ms  CSR %7.2f ms  (%.2fx)  mode %d, hot nnz %d, build %.0f ms, "
             "err %.1e\n",
             cr[c].tau_c, cr[c].tau_r, mn[md], tf, tcsr, tf / tcsr, (int)F.mode, F.hot_nnz, build, t_relerr(y, yr, m));
      mx_format_free(&F);
      if (cr[c].tau_c == 0) break; /* modes are identical without a hot region */
    }
  free(tc);
  free(x), free(y), free(yr), free(t);
  t_csr_free(&A);
  return 0;
}
