/* cuda_test_util.h - what the GPU tests share: an owned CSR, the matrix zoo (shapes the kernels and
 * the builder must survive, the real matrices, generated ones >= 1M nonzeros), checks with counters,
 * device vectors. Header-only: each test is one translation unit. */
#ifndef CUDA_TEST_UTIL_H
#define CUDA_TEST_UTIL_H

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
#include "../../tuning/common/rel_err.h" /* the same check as the benchmarks */

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

/* an m x n CSR with no rows filled yet (append_row fills row i) */
static Csr csr_shell(const char *name, int32_t m, int32_t n) {
  Csr A;
  A.name = name;
  A.nrows = m;
  A.ncols = n;
  A.rowptr.assign((size_t)m + 1, 0);
  return A;
}

/* row i of A: the columns cols sorted, each with a value drawn from uv */
static void append_row(Csr &A, int32_t i, std::vector<int32_t> &cols, std::uniform_real_distribution<double> &uv,
                       std::mt19937_64 &rng) {
  std::sort(cols.begin(), cols.end());
  for (int32_t c : cols) {
    A.col.push_back(c);
    A.val.push_back(uv(rng));
  }
  A.rowptr[i + 1] = (int32_t)A.col.size();
}

/* rows with lengths drawn by shape; columns uniform (duplicates allowed: the format keeps them) */
static Csr make_random(const char *name, int32_t m, int32_t n, double mean_len, Shape shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uv(-1.0, 1.0), u01(0.0, 1.0);
  Csr A = csr_shell(name, m, n);
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
    append_row(A, i, cols, uv, rng);
  }
  return A;
}

/* rows of the given lengths, random columns in [0, n) (repeats allowed) and values */
static Csr make_lengths(const char *name, int32_t n, const std::vector<int64_t> &lens, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uv(-1.0, 1.0);
  Csr A = csr_shell(name, (int32_t)lens.size(), n);
  for (int32_t i = 0; i < A.nrows; ++i) {
    std::vector<int32_t> cols((size_t)lens[i]);
    for (int32_t &c : cols) c = (int32_t)(rng() % (uint64_t)n);
    append_row(A, i, cols, uv, rng);
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

static void expect(bool ok, const std::string &what) {
  ++g_checks;
  if (!ok) {
    ++g_fail;
    if (g_fail <= 30) fprintf(stderr, "FAIL %s\n", what.c_str());
  }
}

static void expect_close(const std::vector<double> &y, const std::vector<double> &ref, const std::string &what) {
  const double e = mx_rel_err(y, ref);
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

/* "race": the set for compute-sanitizer's racecheck, smaller than "small" (racecheck instruments
 * every shared-memory access: with the small set, test_cuda_spmv's and test_cuda_cold_pack's ran
 * past 400 s on an H100); fewer matrices and cases, still every kernel and staging path */
static bool g_race = false;

/* Arguments [small|race] [MATRICES_DIR] into *small (race implies it), g_race and *dir (default
 * MX_MATRICES_DIR); false (the test then exits 77, skipped) when no CUDA device is visible. */
static bool test_args(int argc, char **argv, bool *small, std::string *dir) {
  *dir = MX_MATRICES_DIR;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "small")) *small = true;
    else if (!strcmp(argv[i], "race")) *small = g_race = true;
    else *dir = argv[i];
  }
  if (mx_device_count() > 0) return true;
  printf("SKIP: no CUDA device visible\n");
  return false;
}

/* The zoo: random shapes (small: the quick set for compute-sanitizer; race: fewer still), the real
 * matrices of dir/real (small: 3, race: 1), and (not small) generated matrices of >= 1M nonzeros. */
static std::vector<Csr> test_zoo(bool small, const std::string &dir) {
  std::vector<Csr> mats;
  mats.push_back(make_random("zero-nnz 5x7", 5, 7, 0, UNIFORM, 1));
  if (!g_race) {
    mats.push_back(make_random("1x1", 1, 1, 1, UNIFORM, 2));
    mats.push_back(make_random("empty 0x4", 0, 4, 1, UNIFORM, 3));
    mats.push_back(make_random("no-cols 6x0", 6, 0, 1, UNIFORM, 4));
    mats.push_back(make_random("tall 300x17", 300, 17, 4, UNIFORM, 5));
  }
  mats.push_back(make_random("wide 17x3000", 17, 3000, 200, UNIFORM, 6));
  mats.push_back(make_random("empty-mix 999x1001", 999, 1001, 6, EMPTY_MIX, 7));
  mats.push_back(make_random("dense-rows 800x900", 800, 900, 5, DENSE_ROWS, 8));
  if (!g_race) mats.push_back(make_random("dense-cols 1000x500", 1000, 500, 3, DENSE_COLS, 9));
  mats.push_back(make_random("powerlaw 4000", 4000, 4000, 12, POWERLAW, 10));
  /* rows of 0-3000 and 5000 nonzeros over 2-4 segments of MX_SEG_NNZ (2048): the segment kernel's
   * crossing rows, long tails read from global memory and short ones it stages */
  mats.push_back(make_random("split-rows 60x5000", 60, 5000, 1500, DENSE_ROWS, 18));
  /* the segment kernel's long rows in parts (tails past their first segment above 1024): a row of
   * exactly two segments, consecutive long rows, rows wholly covering segments, a tail just above
   * and just below the split, empty rows after a split row, a split row ending the matrix */
  mats.push_back(make_lengths("split-parts 16x3000", 3000,
                              {4096, 0, 1, 6149, 0, 3100, 2000, 4000, 9000, 2048, 3071, 3073, 5, 0, 0, 7000}, 20));
  if (!small) {
    mats.push_back(make_random("8k-1 rows", 8191, 8191, 9, UNIFORM, 11));
    mats.push_back(make_random("8k+1 rows", 8193, 5000, 9, UNIFORM, 12));
    mats.push_back(make_random("8k rows", 8192, 8192, 30, POWERLAW, 13));
    mats.push_back(make_random("one-long-row 3x200000", 3, 200000, 60000, UNIFORM, 14));
    /* rows spanning ~140 merge tiles: the fixup's warp walks a run of carries in 5 rounds */
    mats.push_back(make_random("long-rows 2x1000000", 2, 1000000, 250000, UNIFORM, 17));
    /* a row over 300 segments: its finisher waits for the parts in two rounds of MX_SEG_THREADS */
    mats.push_back(make_lengths("huge-row 3x2000000", 2000000, {700, 620000, 300}, 21));
    mats.push_back(make_random("powerlaw 60000", 60000, 60000, 20, POWERLAW, 15));
    mats.push_back(make_random("dense-rows 20000", 20000, 20000, 10, DENSE_ROWS, 16));
  }

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
    if (small && files.size() > (g_race ? 1u : 3u)) files.resize(g_race ? 1 : 3);
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
      if (from_io(f.c_str(), B, &A)) mats.push_back(std::move(A));
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
      if (from_io(spec, B, &A)) mats.push_back(std::move(A));
      mx_io_csr_free(&B);
    }
  }

  return mats;
}

#endif
