/* test_cuda_spmv - the device kernels against the core CPU oracle (mx_spmv / mx_spmv_add).
 *
 * For every matrix x crux x hot mode x cold kernel: fresh random x and z, y poisoned with NaN before
 * each call; checks y = A x, y = A x + z, y = A x + y (y == z), the host-vector entry point, and a
 * value refresh, each to a relative 2-norm error <= 1e-12, and bitwise equality of two runs; with the
 * x-hot cache forced on (k = 1, ncols/8+1, all columns): bitwise equal to the same kernels without it.
 * Usage: test_cuda_spmv [small] [MATRICES_DIR]   (small: the quick set for compute-sanitizer)
 * Exit: 0 pass, 1 fail, 77 no GPU (CMake SKIP_RETURN_CODE). */
#include <cuda_runtime.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <random>
#include <string>
#include <vector>
#define CK_EXIT_CODE 1
#include "../common/cuda_check.h"

extern "C" {
#include "core/mx_format.h"
#include "cuda/mx_device.h"
#include "io/mx_io.h"
}

#ifndef MX_MATRICES_DIR
#define MX_MATRICES_DIR "tests/data/matrices"
#endif

static const double TOL = 1e-12;
static int g_fail = 0, g_checks = 0;

/* An owned CSR with 32-bit row pointers (what mx_format_build takes). */
struct Csr {
  std::string name;
  int32_t nrows = 0, ncols = 0;
  std::vector<int32_t> rowptr, col;
  std::vector<double> val;
  mx_csr view() const {
    mx_csr a;
    a.nrows = nrows;
    a.ncols = ncols;
    a.rowptr = rowptr.data();
    a.colidx = col.data();
    a.val = val.data();
    return a;
  }
  int32_t nnz() const { return rowptr.empty() ? 0 : rowptr[nrows]; }
};

/* ---- generators for the shapes the kernels must survive ------------------------------------------ */

enum Shape { UNIFORM, POWERLAW, DENSE_ROWS, DENSE_COLS, EMPTY_MIX };

/* rows with lengths drawn by shape; columns uniform (duplicates allowed: the format keeps them) */
static Csr make_random(const char *name, int32_t m, int32_t n, double mean_len, Shape shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uv(-1.0, 1.0), u01(0.0, 1.0);
  Csr A;
  A.name = name;
  A.nrows = m;
  A.ncols = n;
  A.rowptr.assign(m + 1, 0);
  for (int32_t i = 0; i < m; ++i) {
    int64_t len = 0;
    if (n > 0) {
      switch (shape) {
        case UNIFORM: len = (int64_t)(u01(rng) * 2 * mean_len + 0.5); break;
        case POWERLAW: len = (int64_t)(mean_len * 0.3 / pow(1.0 - u01(rng) * 0.999999, 1.0 / 1.2)); break;
        case DENSE_ROWS: len = (i % 97 == 3) ? n : (int64_t)(u01(rng) * 2 * mean_len); break;
        case DENSE_COLS: len = (int64_t)(u01(rng) * 2 * mean_len); break;
        case EMPTY_MIX: len = (u01(rng) < 0.5) ? 0 : (int64_t)(u01(rng) * 4 * mean_len); break;
      }
      len = std::min<int64_t>(len, 4 * (int64_t)n);
    }
    std::vector<int32_t> cols;
    for (int64_t k = 0; k < len; ++k) {
      int32_t c = (int32_t)(rng() % (uint64_t)n);
      if (shape == EMPTY_MIX) c = (c / 2) * 2; /* odd columns stay empty */
      cols.push_back(c);
    }
    if (shape == DENSE_ROWS && i % 97 == 3) {
      cols.resize(n);
      for (int32_t c = 0; c < n; ++c) cols[c] = c;
    }
    if (shape == DENSE_COLS && n > 0) {
      cols.push_back(0);
      cols.push_back(n - 1);
      if (n > 2) cols.push_back(n / 2);
    }
    std::sort(cols.begin(), cols.end());
    for (int32_t c : cols) {
      A.col.push_back(c);
      A.val.push_back(uv(rng));
    }
    A.rowptr[i + 1] = (int32_t)A.col.size();
  }
  return A;
}

static bool from_io(const char *name, const mx_io_csr &B, Csr *A) {
  if (B.nnz > INT32_MAX) return false;
  A->name = name;
  A->nrows = B.nrows;
  A->ncols = B.ncols;
  A->rowptr.resize((size_t)B.nrows + 1);
  for (int32_t i = 0; i <= B.nrows; ++i) A->rowptr[i] = (int32_t)B.rowptr[i];
  A->col.assign(B.colidx, B.colidx + B.nnz);
  A->val.assign(B.val, B.val + B.nnz);
  return true;
}

/* ---- checks ---------------------------------------------------------------------------------------- */

static double rel_err(const std::vector<double> &y, const std::vector<double> &ref) {
  double d = 0.0, r = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i])) return INFINITY;
    d += (y[i] - ref[i]) * (y[i] - ref[i]);
    r += ref[i] * ref[i];
  }
  if (r == 0.0) return d == 0.0 ? 0.0 : INFINITY;
  return sqrt(d / r);
}

static void expect(bool ok, const std::string &what) {
  ++g_checks;
  if (!ok) {
    ++g_fail;
    if (g_fail <= 30) fprintf(stderr, "FAIL %s\n", what.c_str());
  }
}

static void expect_close(const std::vector<double> &y, const std::vector<double> &ref, const std::string &what) {
  const double e = rel_err(y, ref);
  char buf[64];
  snprintf(buf, sizeof buf, " (rel err %.3g)", e);
  expect(e <= TOL, what + buf);
}

struct DevVec {
  double *p = nullptr;
  size_t n = 0;
  explicit DevVec(size_t n_) : n(n_) {
    if (n) CK(cudaMalloc(&p, n * sizeof(double)));
  }
  ~DevVec() {
    if (p) cudaFree(p);
  }
  void put(const std::vector<double> &h) {
    if (n) CK(cudaMemcpy(p, h.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
  }
  std::vector<double> get() const {
    std::vector<double> h(n);
    if (n) CK(cudaMemcpy(h.data(), p, n * sizeof(double), cudaMemcpyDeviceToHost));
    return h;
  }
  void poison() { /* all-ones bits: a NaN; finished before the (non-blocking) test stream starts */
    if (n) CK(cudaMemset(p, 0xff, n * sizeof(double)));
    CK(cudaDeviceSynchronize());
  }
};

static std::vector<double> rand_vec(size_t n, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto &e : v) e = u(rng);
  return v;
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
  mx_spmv(F, x.data(), ref.data());
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
  mx_spmv_add(F, x.data(), z.data(), ref.data());
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
  mx_spmv(F, x.data(), ref2.data());
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
  mx_spmv(F, x.data(), ref.data());
  expect_close(y1, ref, tag + " xhot y=Ax");
  expect(m == 0 || memcmp(y0.data(), y1.data(), m * sizeof(double)) == 0, tag + " xhot bitwise = off");
  dy.put(z);
  expect(mx_device_spmv(D1, dx.p, dy.p, dy.p, s) == 0, tag + " xhot spmv y==z");
  CK(cudaStreamSynchronize(s));
  mx_spmv_add(F, x.data(), z.data(), ref.data());
  expect_close(dy.get(), ref, tag + " xhot y=Ax+y");
  CK(cudaStreamDestroy(s));
  mx_device_free(D0);
  mx_device_free(D1);
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
  static const mx_crux grid[] = {{0, 0}, {1, 1}, {1, 0}, {0.5, 0.3}, {0.9, 0.8}, {0.7, 0.5}};
  static const mx_mode_request modes[] = {MX_MODE_DU, MX_MODE_SE};
  static const mx_cold_kernel colds[] = {MX_COLD_SEGMENT, MX_COLD_MERGE, MX_COLD_CUSPARSE};
  const int fail0 = g_fail;
  mx_csr a = A.view();
  int ncase = 0;
  for (const mx_crux &c : grid)
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
          if (ck != MX_COLD_CUSPARSE) /* cuSPARSE reads plain columns: a coded cold CSR falls back to ours */
            for (int k : {1, 1 + A.ncols / 8, A.ncols + 3}) check_xhot(A, &F, ck, k, std::string(tag) + " k=" + std::to_string(k), rng);
          ++ncase;
        }
        mx_format_free(&F);
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
  std::string dir = MX_MATRICES_DIR;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "small")) small = true;
    else dir = argv[i];
  }
  if (mx_device_count() == 0) {
    printf("SKIP: no CUDA device visible\n");
    return 77;
  }
  std::mt19937_64 rng(20260601);

  std::vector<Csr> mats;
  mats.push_back(make_random("zero-nnz 5x7", 5, 7, 0, UNIFORM, 1));
  mats.push_back(make_random("1x1", 1, 1, 1, UNIFORM, 2));
  mats.push_back(make_random("empty 0x4", 0, 4, 1, UNIFORM, 3));
  mats.push_back(make_random("no-cols 6x0", 6, 0, 1, UNIFORM, 4));
  mats.push_back(make_random("tall 300x17", 300, 17, 4, UNIFORM, 5));
  mats.push_back(make_random("wide 17x3000", 17, 3000, 200, UNIFORM, 6));
  mats.push_back(make_random("empty-mix 999x1001", 999, 1001, 6, EMPTY_MIX, 7));
  mats.push_back(make_random("dense-rows 800x900", 800, 900, 5, DENSE_ROWS, 8));
  mats.push_back(make_random("dense-cols 1000x500", 1000, 500, 3, DENSE_COLS, 9));
  mats.push_back(make_random("powerlaw 4000", 4000, 4000, 12, POWERLAW, 10));
  if (!small) {
    mats.push_back(make_random("8k-1 rows", 8191, 8191, 9, UNIFORM, 11));
    mats.push_back(make_random("8k+1 rows", 8193, 5000, 9, UNIFORM, 12));
    mats.push_back(make_random("8k rows", 8192, 8192, 30, POWERLAW, 13));
    mats.push_back(make_random("one-long-row 3x200000", 3, 200000, 60000, UNIFORM, 14));
    /* rows spanning ~140 merge tiles: the fixup's warp walks a run of carries in 5 rounds */
    mats.push_back(make_random("long-rows 2x1000000", 2, 1000000, 250000, UNIFORM, 17));
    mats.push_back(make_random("powerlaw 60000", 60000, 60000, 20, POWERLAW, 15));
    mats.push_back(make_random("dense-rows 20000", 20000, 20000, 10, DENSE_ROWS, 16));
  }
  for (const Csr &A : mats) check_matrix(A, small, rng);

  /* real matrices */
  std::string real = dir + "/real";
  if (DIR *d = opendir(real.c_str())) {
    std::vector<std::string> files;
    while (struct dirent *e = readdir(d)) {
      std::string f = e->d_name;
      if (f.size() > 4 && f.substr(f.size() - 4) == ".mtx") files.push_back(f);
    }
    closedir(d);
    std::sort(files.begin(), files.end());
    if (small && files.size() > 3) files.resize(3);
    for (const std::string &f : files) {
      mx_io_csr B;
      char err[512];
      memset(&B, 0, sizeof B);
      if (mx_mtx_read((real + "/" + f).c_str(), &B, err, sizeof err)) {
        /* e.g. a file holding inf/nan on purpose: not a matrix the kernels can be checked on */
        printf("%-28s skipped (%s)\n", f.c_str(), err);
        continue;
      }
      Csr A;
      if (from_io(f.c_str(), B, &A)) check_matrix(A, small, rng);
      mx_io_csr_free(&B);
    }
  } else {
    expect(false, "cannot open " + real);
  }

  /* generated, >= 1M nonzeros */
  if (!small) {
    const char *specs[] = {"kron:16:16", "lap2d:700", "chunglu:300000:8:2.0"};
    for (const char *spec : specs) {
      mx_io_csr B;
      char err[512];
      memset(&B, 0, sizeof B);
      if (mx_gen(spec, 0, &B, err, sizeof err)) {
        expect(false, std::string(spec) + " gen: " + err);
        continue;
      }
      Csr A;
      if (from_io(spec, B, &A)) check_matrix(A, small, rng);
      mx_io_csr_free(&B);
    }
  }

  printf("%d checks, %d failed\n", g_checks, g_fail);
  return g_fail ? 1 : 0;
}
