/* test_cuda_spmv - the device kernels against the input CSR's product summed in long double (the
 * core CPU oracle mx_spmv is checked against plain CSR once per matrix): a row of 620K nonzeros
 * with random signs has a sequential double sum whose own rounding error exceeds 1e-12.
 *
 * For every matrix x crux x hot mode x cold kernel: fresh random x and z, y poisoned with NaN before
 * each call; checks y = A x, y = A x + z, y = A x + y (y == z), the host-vector entry point, and a
 * value refresh, each to a relative 2-norm error <= 1e-12, and bitwise equality of two runs; with the
 * x-hot cache forced on (k = 1, ncols/8+1, all columns): bitwise equal to the same kernels without it;
 * the merge kernel's carries added in the kernel: bitwise equal to the fixup kernel's.
 * Usage: test_cuda_spmv [small|race] [MATRICES_DIR]   (small: the quick set for compute-sanitizer,
 * race: a smaller one for its racecheck)
 * Exit: 0 pass, 1 fail, 77 no GPU (CMake SKIP_RETURN_CODE). */
#include "cuda_test_util.h"
#include "cuda/mx_device_impl.h" /* which carries a merge plan holds */

/* y = A x (+ z) with the values val (A's pattern), each row summed in long double */
static void ref_spmv(const Csr &A, const std::vector<double> &val, const std::vector<double> &x, const std::vector<double> *z,
                     std::vector<double> &y) {
  for (int32_t i = 0; i < A.nrows; ++i) {
    long double s = 0.0L;
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; ++p) s += (long double)val[p] * x[A.col[p]];
    y[i] = (double)(z ? s + (*z)[i] : s);
  }
}

/* One (matrix, crux, mode, cold kernel) case, on format F (which the refresh step modifies). */
static void check_case(const Csr &A, mx_format *F, mx_cold_kernel ck, const std::string &tag, std::mt19937_64 &rng) {
  mx_device *D = nullptr;
  if (mx_device_upload(F, ck, &D)) {
    expect(false, tag + " upload: " + mx_device_last_error());
    return;
  }
  /* cuSPARSE is skipped (our kernel runs) for an empty cold CSR or more entries than rows x cols */
  const bool sp_refused = ck == MX_COLD_CUSPARSE && (F->cold_nnz == 0 || (int64_t)F->cold_nnz > (int64_t)F->nrows * F->ncols);
  const mx_cold_kernel got = mx_device_cold_kernel(D);
  if (ck == MX_COLD_AUTO)
    expect(got == MX_COLD_SEGMENT || got == MX_COLD_MERGE || got == MX_COLD_CUSPARSE, tag + " AUTO resolves");
  else
    expect(sp_refused ? got != MX_COLD_CUSPARSE : got == ck, tag + " cold kernel as requested");
  const size_t m = A.nrows, n = A.ncols;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  DevVec dx(n), dy(m), dz(m);
  std::vector<double> ref(m), ref2(m);

  /* y = A x, twice: accurate and bitwise reproducible */
  std::vector<double> x = rand_vec(n, rng), z = rand_vec(m, rng);
  dx.put(x);
  dy.poison();
  expect(mx_device_spmv(D, dx.p, nullptr, dy.p, s) == 0, tag + " spmv: " + mx_device_last_error());
  CK(cudaStreamSynchronize(s));
  std::vector<double> y1 = dy.get();
  ref_spmv(A, A.val, x, nullptr, ref);
  expect_close(y1, ref, tag + " y=Ax");
  dy.poison();
  expect(mx_device_spmv(D, dx.p, nullptr, dy.p, s) == 0, tag + " spmv 2");
  CK(cudaStreamSynchronize(s));
  std::vector<double> y2 = dy.get();
  expect(m == 0 || memcmp(y1.data(), y2.data(), m * sizeof(double)) == 0, tag + " bitwise reproducible");

  /* y = A x + z with fresh x */
  x = rand_vec(n, rng);
  dx.put(x);
  dz.put(z);
  dy.poison();
  expect(mx_device_spmv(D, dx.p, dz.p, dy.p, s) == 0, tag + " spmv z");
  CK(cudaStreamSynchronize(s));
  ref_spmv(A, A.val, x, &z, ref);
  expect_close(dy.get(), ref, tag + " y=Ax+z");

  /* y = A x + y (z == y) */
  dy.put(z);
  expect(mx_device_spmv(D, dx.p, dy.p, dy.p, s) == 0, tag + " spmv y==z");
  CK(cudaStreamSynchronize(s));
  expect_close(dy.get(), ref, tag + " y=Ax+y");

  /* host vectors */
  std::vector<double> yh(m, NAN);
  expect(mx_device_spmv_host(D, x.data(), z.data(), yh.data(), s) == 0, tag + " spmv_host");
  expect_close(yh, ref, tag + " host y=Ax+z");

  /* refresh values (same pattern), then y = A x against the refreshed host format */
  std::vector<double> v2 = rand_vec(A.val.size(), rng);
  expect(mx_device_refresh_values(D, v2.data(), s) == 0, tag + " refresh: " + mx_device_last_error());
  mx_format_refresh_values(F, v2.data());
  x = rand_vec(n, rng);
  dx.put(x);
  dy.poison();
  expect(mx_device_spmv(D, dx.p, nullptr, dy.p, s) == 0, tag + " spmv after refresh");
  CK(cudaStreamSynchronize(s));
  ref_spmv(A, v2, x, nullptr, ref2);
  expect_close(dy.get(), ref2, tag + " refreshed y=Ax");
  mx_format_refresh_values(F, A.val.data()); /* back to the build values for the next case */

  CK(cudaStreamDestroy(s));
  mx_device_free(D);
}

/* x-hot cache forced on with k columns: bitwise equal to the same kernels without it (same products,
 * same order), for y = A x and y = A x + y, and the number of packed columns as documented. */
static void check_xhot(const Csr &A, mx_format *F, mx_cold_kernel ck, int k, const std::string &tag,
                       std::mt19937_64 &rng) {
  mx_device *D0 = nullptr, *D1 = nullptr;
  if (mx_device_upload_xhot(F, ck, 0, &D0) || mx_device_upload_xhot(F, ck, k, &D1)) {
    expect(false, tag + " xhot upload: " + mx_device_last_error());
    mx_device_free(D0);
    mx_device_free(D1);
    return;
  }
  int used = 0;
  {
    std::vector<char> seen(A.ncols, 0);
    for (int32_t c : A.col) used += !seen[c], seen[c] = 1;
  }
  expect(mx_device_xhot_cols(D0) == 0, tag + " xhot off");
  expect(mx_device_xhot_cols(D1) == std::min(k, used), tag + " xhot columns");
  const size_t m = A.nrows, n = A.ncols;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  DevVec dx(n), dy(m);
  std::vector<double> x = rand_vec(n, rng), z = rand_vec(m, rng), ref(m);
  dx.put(x);
  dy.poison();
  expect(mx_device_spmv(D0, dx.p, nullptr, dy.p, s) == 0, tag + " xhot spmv off");
  CK(cudaStreamSynchronize(s));
  const std::vector<double> y0 = dy.get();
  dy.poison();
  expect(mx_device_spmv(D1, dx.p, nullptr, dy.p, s) == 0, tag + " xhot spmv on: " + mx_device_last_error());
  CK(cudaStreamSynchronize(s));
  const std::vector<double> y1 = dy.get();
  ref_spmv(A, A.val, x, nullptr, ref);
  expect_close(y1, ref, tag + " xhot y=Ax");
  expect(m == 0 || memcmp(y0.data(), y1.data(), m * sizeof(double)) == 0, tag + " xhot bitwise = off");
  dy.put(z);
  expect(mx_device_spmv(D1, dx.p, dy.p, dy.p, s) == 0, tag + " xhot spmv y==z");
  CK(cudaStreamSynchronize(s));
  ref_spmv(A, A.val, x, &z, ref);
  expect_close(dy.get(), ref, tag + " xhot y=Ax+y");
  CK(cudaStreamDestroy(s));
  mx_device_free(D0);
  mx_device_free(D1);
}

/* The merge kernel with its carries added in the kernel and by the fixup kernel (both forced):
 * y = A x and y = A x + z bitwise the same, each plan holding the carries it was forced to. */
static void check_merge_carries(const Csr &A, mx_format *F, const std::string &tag, std::mt19937_64 &rng) {
  mx_device *D[2] = {nullptr, nullptr};
  for (int inl = 0; inl < 2; ++inl) {
    const int old = mx_cold_merge_set_inline(inl);
    const int rc = mx_device_upload(F, MX_COLD_MERGE, &D[inl]);
    mx_cold_merge_set_inline(old);
    if (rc) {
      expect(false, tag + " carries upload: " + mx_device_last_error());
      mx_device_free(D[0]);
      return;
    }
  }
  expect(D[0]->carry_slot == nullptr && (D[0]->merge_ntiles == 0 || D[0]->carry_row != nullptr), tag + " carries by the fixup kernel");
  expect(D[1]->carry_row == nullptr && (D[1]->merge_ntiles == 0 || D[1]->carry_slot != nullptr), tag + " carries in the kernel");
  const size_t m = A.nrows, n = A.ncols;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  DevVec dx(n), dz(m), dy(m);
  dx.put(rand_vec(n, rng));
  dz.put(rand_vec(m, rng));
  for (int withz = 0; withz < 2; ++withz) {
    std::vector<double> y[2];
    for (int inl = 0; inl < 2; ++inl) {
      dy.poison();
      expect(mx_device_spmv(D[inl], dx.p, withz ? dz.p : nullptr, dy.p, s) == 0, tag + " carries spmv: " + mx_device_last_error());
      CK(cudaStreamSynchronize(s));
      y[inl] = dy.get();
    }
    expect(m == 0 || memcmp(y[0].data(), y[1].data(), m * sizeof(double)) == 0,
           tag + (withz ? " carries in the kernel: y=Ax+z bitwise = fixup" : " carries in the kernel: y=Ax bitwise = fixup"));
  }
  CK(cudaStreamDestroy(s));
  mx_device_free(D[0]);
  mx_device_free(D[1]);
}

/* plain CSR reference, to check the oracle's format against the input once per matrix */
static void csr_spmv(const Csr &A, const std::vector<double> &x, std::vector<double> &y) {
  for (int32_t i = 0; i < A.nrows; ++i) {
    double s = 0.0;
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; ++p) s += A.val[p] * x[A.col[p]];
    y[i] = s;
  }
}

static void check_matrix(const Csr &A, bool small, std::mt19937_64 &rng) {
  static const mx_crux grid[] = {{0, 0}, {1, 1}, {0.5, 0.3}, {1, 0}, {0.9, 0.8}, {0.7, 0.5}};
  const size_t ngrid = g_race ? 3 : sizeof grid / sizeof grid[0]; /* racecheck: (0,0), all hot, a split */
  static const mx_mode_request modes[] = {MX_MODE_DU, MX_MODE_SE};
  static const mx_cold_kernel colds[] = {MX_COLD_SEGMENT, MX_COLD_MERGE, MX_COLD_CUSPARSE};
  const int fail0 = g_fail;
  mx_csr a = A.view();
  int ncase = 0;
  for (size_t gi = 0; gi < ngrid; ++gi) {
    const mx_crux &c = grid[gi];
    for (mx_mode_request md : modes)
      for (int borrow = 0; borrow <= (c.tau_c == 0 ? 1 : 0); ++borrow) { /* (0,0): owned and borrowed cold CSR */
        if (c.tau_c == 0 && md == MX_MODE_SE) continue; /* (0,0) has no hot region: one mode is enough */
        mx_format F;
        if ((borrow ? mx_format_build_borrow(&a, c, md, &F) : mx_format_build(&a, c, md, &F)) != MX_OK) {
          expect(false, A.name + " mx_format_build failed");
          continue;
        }
        if (borrow) expect(F.cold_borrowed == 1 && F.cold_col == a.colidx && !F.cold_src, A.name + " (0,0) borrows A");
        char tag[256];
        if (c.tau_c == 0 && c.tau_r == 0) { /* the oracle format agrees with plain CSR */
          std::vector<double> x = rand_vec(A.ncols, rng), y0(A.nrows), y1(A.nrows);
          csr_spmv(A, x, y0);
          mx_spmv(&F, x.data(), y1.data());
          expect_close(y1, y0, A.name + " oracle vs CSR");
        }
        for (mx_cold_kernel ck : colds) {
          snprintf(tag, sizeof tag, "%s crux(%g,%g) %s %s%s", A.name.c_str(), c.tau_c, c.tau_r, md == MX_MODE_DU ? "du" : "se",
                   ck == MX_COLD_SEGMENT ? "segment" : ck == MX_COLD_MERGE ? "merge" : "cusparse", borrow ? " borrowed" : "");
          check_case(A, &F, ck, tag, rng);
          if (ck == MX_COLD_MERGE) check_merge_carries(A, &F, tag, rng);
          if (ck != MX_COLD_CUSPARSE) /* cuSPARSE reads plain columns: a coded cold CSR falls back to ours */
            for (int k : g_race ? std::vector<int>{1 + A.ncols / 8} /* racecheck: one size, the same kernels */
                                : std::vector<int>{1, 1 + A.ncols / 8, A.ncols + 3})
              check_xhot(A, &F, ck, k, std::string(tag) + " k=" + std::to_string(k), rng);
          ++ncase;
        }
        mx_format_free(&F);
      }
  }
  /* AUTO on the format -mat_type matxtract builds (borrowed cold CSR at (0,0)): resolves to one of
   * the three kernels, then every check of a case */
  for (const mx_crux &c : {mx_crux{0, 0}, mx_crux{0.9, 0.8}}) {
    mx_format F;
    if (mx_format_build_borrow(&a, c, MX_MODE_AUTO, &F) == MX_OK) {
      check_case(A, &F, MX_COLD_AUTO, A.name + " crux(" + std::to_string(c.tau_c) + ") AUTO", rng);
      ++ncase;
      mx_format_free(&F);
    } else {
      expect(false, A.name + " mx_format_build (AUTO) failed");
    }
  }
  printf("%-28s %9d x %-9d nnz %-10d cases %3d  %s\n", A.name.c_str(), A.nrows, A.ncols, A.nnz(), ncase,
         g_fail == fail0 ? "ok" : "FAILED");
  fflush(stdout);
  (void)small;
}

int main(int argc, char **argv) {
  bool small = false;
  std::string dir;
  if (!test_args(argc, argv, &small, &dir)) return 77;
  std::mt19937_64 rng(20260601);

  for (const Csr &A : test_zoo(small, dir)) check_matrix(A, small, rng);

  printf("%d checks, %d failed\n", g_checks, g_fail);
  return g_fail ? 1 : 0;
}
