/* spmm_kernel_bench - C = A B for k dense columns (issue 43) at kernel level, FP64, B (ncols x k) and
 * C (nrows x k) column-major with leading dimensions ncols and nrows: our mx_device_spmm (the plan of
 * mx_device_spmm_plan: the SpMM kernels or one SpMV per column) vs cusparseSpMM CSR ALG1, ALG2 and
 * ALG3 on the plain CSR, and vs k of our SpMVs (mx_device_spmv once per column).
 *
 * Usage: spmm-kernel-bench [-gen SPEC | -f FILE]... [-k 1,2,4,8,16,32,64,128] [-reps 20] [-crux TC,TR|predicted]
 *                          [-mode auto|du|se] [-bw GBPS] [-group G] [-way W] [-whole 0|1] [-compress auto|off]
 *                          [-merge_panels 0|1|2] [-o DIR]
 *   -gen SPEC  a generated matrix (mx_gen, e.g. lap3d:100, kron:20:16); -f FILE a Matrix Market file
 *   -crux      our format's crux (default 0,0: all cold), built on the GPU (mx_device_build); predicted:
 *              per matrix the plan the embedded model predicts from its host features (crux, hot
 *              mode, cold kernel: what -mat_type matxtract builds at default options once it
 *              predicts; -mode is then ignored), printed with the matrix
 *   -mode      the hot region's layout: auto (default), du (FP64 tensor cores), se
 *   -bw        the HBM bandwidth of the bound (default 3350 GB/s, an H100's HBM3; 4800 on an H200)
 *   -group     columns per launch group forced (mx_device_spmm_set_group; default 0: the library's rule)
 *   -way       the SpMM's way forced (mx_device_spmm_set_way): kernels, panels, padded, panels_spmv, pairs, pairs_in_place, columns (k SpMVs);
 *              default auto, the library's timed choice
 *   -whole 0   beside a hot part, no whole matrix all cold for the timed choice (default 1: offered
 *              before each k's first product through mx_device_spmm_whole, as the PETSc type does)
 *   -compress auto  the cold part compressed after the build as the PETSc type's engine does at default
 *              options (mx_device_compress, MX_COMPRESS_AUTO: row patterns where they pay, else a pack
 *              where it pays); default off (the plain arrays)
 *   -merge_panels M  a 2-column panel on a merge plan: 1 (default) on the merge tiles where two
 *              columns fit half the L2, 2 always, 0 by the lanes-per-row panel kernel
 *              (mx_spmm_set_merge_panels)
 * Besides the plan's time (ours_us, and the way it kept), each row times our kernels on B in place
 * (kernels_us), on row-major panels (panels_us), on padded panels (padded_us, where they differ) and on
 * panels with one SpMV per column past the last multiple of 8 (panels_spmv_us, k > 8 not a multiple of 8),
 * each forced where the plan takes the kernels, the pairs forced (pairs_us: k >= 2, on a segment plan; pairs_in_place_us: the same
 * reading B in place, where the segment kernel can), the whole matrix all cold as the
 * timed choice timed it (whole_us, beside a hot part), and cusparseSpMM CSR ALG2 on
 * row-major B and C (alg2_row_us, k >= 2: B copied to row-major and C back to column-major inside the
 * timing, as a caller with PETSc's column-major blocks would have to).
 * Rules: every time is the median of -reps calls (a round of k SpMVs for kspmv), each between two
 * CUDA events on the default stream, after 20 warm-up calls and at least 50 ms of them (kWarmup,
 * kWarmMs). A cuSPARSE algorithm that refuses column-major B or fails in any step is "n/a" (an
 * empty CSV cell). Our C is checked against the first cuSPARSE algorithm that ran (ALG1 unless it
 * was n/a): relative Frobenius error <= 1e-12, else FAIL. Writes DIR/spmm_kernel.csv and
 * DIR/spmm_kernel_env.txt and prints a table.
 * Exit 77 when no CUDA device is visible, 2 on a bad command line or a CUDA error, 1 if any product
 * failed its check or a matrix could not be loaded, else 0. */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>
#include "cuda_check.h"
#include "../common/rel_err.h"
#include "../common/event_timing.cuh"
#include "../common/csr32.h"
#include "../common/cusparse_check.h"

extern "C" {
#include "core/mx_features.h"
#include "core/mx_format.h"
#include "core/mx_predictor.h"
#include "cuda/mx_device.h"
#include "io/mx_io.h"
}

static const int kWarmup = 20;           /* warm-up calls before every timing (BENCHMARKING.md) */
static const double kWarmMs = 50.0;      /* and at least this long: the reference checks between timings idle the GPU */
static const double kMaxRelErr = 1e-12;  /* our C vs the reference algorithm's */
static const int kNumAlgs = 3;           /* cusparseSpMM CSR ALG1, ALG2, ALG3 */
static const cusparseSpMMAlg_t kAlgs[kNumAlgs] = {CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};

/* ---- command line ---------------------------------------------------------------------------------- */

struct Source {
  bool generated; /* -gen SPEC; else -f FILE */
  std::string arg;
};

struct Opts {
  std::vector<Source> sources;
  std::vector<int> ks = {1, 2, 4, 8, 16, 32, 64, 128};
  int reps = 20;
  mx_crux crux = {0, 0};
  bool predicted = false;              /* -crux predicted: the embedded model's plan per matrix */
  mx_mode_request mode = MX_MODE_AUTO; /* -mode */
  double gbps = 3350; /* an H100's HBM3 */
  int group = 0;      /* -group: columns per launch group forced (0: the library's rule) */
  mx_spmm_way way = MX_SPMM_WAY_AUTO; /* -way: kernels, panels or columns forced (auto: the timed choice) */
  bool whole = true;                  /* -whole: the whole matrix all cold offered beside a hot part */
  bool compress = false;              /* -compress auto: the cold part compressed as the engine does */
  std::string outdir = ".";
};

static void usage() {
  fprintf(stderr, "usage: spmm-kernel-bench [-gen SPEC | -f FILE]... [-k 1,2,4,8,16,32,64,128] [-reps 20] [-crux TC,TR|predicted] [-mode auto|du|se] "
                  "[-bw GBPS] [-group G] [-way auto|kernels|panels|padded|panels_spmv|pairs|pairs_in_place|columns] [-whole 0|1] [-compress auto|off] [-merge_panels 0|1|2] [-o DIR]\n");
  exit(2);
}

/* "1,3,8" -> {1, 3, 8}; every k >= 1, else a usage error */
static std::vector<int> parse_k_list(const char *text) {
  std::vector<int> ks;
  std::string list = text;
  for (char *t = strtok(&list[0], ","); t; t = strtok(nullptr, ",")) {
    const int k = atoi(t);
    if (k < 1) usage();
    ks.push_back(k);
  }
  if (ks.empty()) usage();
  return ks;
}

static Opts parse_args(int argc, char **argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!strcmp(argv[i], "-gen") && has_value) o.sources.push_back({true, argv[++i]});
    else if (!strcmp(argv[i], "-f") && has_value) o.sources.push_back({false, argv[++i]});
    else if (!strcmp(argv[i], "-k") && has_value) o.ks = parse_k_list(argv[++i]);
    else if (!strcmp(argv[i], "-reps") && has_value) o.reps = std::max(1, atoi(argv[++i]));
    else if (!strcmp(argv[i], "-mode") && has_value) {
      const char *m = argv[++i];
      if (!strcmp(m, "auto")) o.mode = MX_MODE_AUTO;
      else if (!strcmp(m, "du")) o.mode = MX_MODE_DU;
      else if (!strcmp(m, "se")) o.mode = MX_MODE_SE;
      else usage();
    } else if (!strcmp(argv[i], "-crux") && has_value) {
      if (!strcmp(argv[++i], "predicted")) o.predicted = true;
      else if (sscanf(argv[i], "%lf,%lf", &o.crux.tau_c, &o.crux.tau_r) != 2) usage();
    } else if (!strcmp(argv[i], "-bw") && has_value) {
      o.gbps = atof(argv[++i]);
      if (!(o.gbps > 0)) usage();
    } else if (!strcmp(argv[i], "-way") && has_value) {
      const char *w = argv[++i];
      if (!strcmp(w, "auto")) o.way = MX_SPMM_WAY_AUTO;
      else if (!strcmp(w, "kernels")) o.way = MX_SPMM_WAY_KERNELS;
      else if (!strcmp(w, "panels")) o.way = MX_SPMM_WAY_PANELS;
      else if (!strcmp(w, "columns")) o.way = MX_SPMM_WAY_COLUMNS;
      else if (!strcmp(w, "padded")) o.way = MX_SPMM_WAY_PADDED;
      else if (!strcmp(w, "panels_spmv")) o.way = MX_SPMM_WAY_PANELS_SPMV;
      else if (!strcmp(w, "pairs")) o.way = MX_SPMM_WAY_PAIRS;
      else if (!strcmp(w, "pairs_in_place")) o.way = MX_SPMM_WAY_PAIRS_IN_PLACE;
      else usage();
    } else if (!strcmp(argv[i], "-whole") && has_value) {
      o.whole = atoi(argv[++i]) != 0;
    } else if (!strcmp(argv[i], "-compress") && has_value) {
      const char *c = argv[++i];
      if (!strcmp(c, "auto")) o.compress = true;
      else if (!strcmp(c, "off")) o.compress = false;
      else usage();
    } else if (!strcmp(argv[i], "-merge_panels") && has_value) {
      const int mp = atoi(argv[++i]);
      if (mp < 0 || mp > 2) usage();
      mx_spmm_set_merge_panels(mp);
    } else if (!strcmp(argv[i], "-group") && has_value) {
      o.group = atoi(argv[++i]);
      if (o.group < 0) usage();
    } else if (!strcmp(argv[i], "-o") && has_value) o.outdir = argv[++i];
    else usage();
  }
  if (o.sources.empty()) usage();
  return o;
}

/* ---- matrices -------------------------------------------------------------------------------------- */

struct Csr {
  int32_t nrows = 0, ncols = 0;
  std::vector<int32_t> rowptr, col;
  std::vector<double> val;
  int32_t nnz() const { return rowptr[nrows]; }
};

/* a matrix's name in the table: the spec, or the file's base name */
static std::string name_of(const Source &s) {
  if (s.generated) return s.arg;
  const size_t slash = s.arg.find_last_of('/');
  return slash == std::string::npos ? s.arg : s.arg.substr(slash + 1);
}

/* the matrix of s into A; false (a "skip" message) when it cannot be made or read */
static bool load_matrix(const Source &s, Csr *A) {
  const std::string name = name_of(s);
  if (s.generated) return mx_csr32_gen(s.arg.c_str(), A, name.c_str());
  mx_io_csr B;
  char err[512];
  memset(&B, 0, sizeof B);
  if (mx_mtx_read(s.arg.c_str(), &B, err, sizeof err)) {
    fprintf(stderr, "skip %s: %s\n", name.c_str(), err);
    return false;
  }
  return mx_csr32_take(&B, A, name.c_str());
}

/* ---- device memory --------------------------------------------------------------------------------- */

/* n elements of T on the device (at least one, so that empty arrays are valid pointers) */
template <class T>
static T *device_alloc(size_t n) {
  T *d = nullptr;
  CK(cudaMalloc(&d, sizeof(T) * std::max<size_t>(1, n)));
  return d;
}

template <class T>
static T *upload(const std::vector<T> &v) {
  T *d = device_alloc<T>(v.size());
  if (!v.empty()) CK(cudaMemcpy(d, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return d;
}

/* n doubles from the device, after all queued work */
static std::vector<double> download(const double *d, size_t n) {
  CK(cudaDeviceSynchronize());
  std::vector<double> h(n);
  if (n) CK(cudaMemcpy(h.data(), d, sizeof(double) * n, cudaMemcpyDeviceToHost));
  return h;
}

/* a rows x k column-major matrix of uniform values in [-1, 1), filled on the host (seeded by k) */
static double *random_dense(int32_t rows, int k) {
  std::mt19937_64 rng(20261201u + (uint64_t)k);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> h((size_t)rows * k);
  for (double &x : h) x = u(rng);
  return upload(h);
}

/* ---- ours ------------------------------------------------------------------------------------------ */

/* our device format of A at crux c, hot mode and cold kernel (GPU build, x-hot cache auto) */
static mx_device *ours_build(const Csr &A, mx_crux c, mx_mode_request mode, mx_cold_kernel cold) {
  const mx_csr a = {A.nrows, A.ncols, A.rowptr.data(), A.col.data(), A.val.data()};
  mx_format shell;
  mx_device *D = nullptr;
  if (mx_device_build(&a, c, mode, cold, MX_XHOT_AUTO, &shell, &D)) {
    fprintf(stderr, "mx_device_build at (%g,%g): %s\n", c.tau_c, c.tau_r, mx_device_last_error());
    exit(2);
  }
  mx_format_free(&shell); /* counts only: every array pointer is NULL */
  return D;
}

static mx_spmm_plan ours_plan(const mx_device *D, int k) {
  mx_spmm_plan p;
  if (mx_device_spmm_plan(D, k, &p)) {
    fprintf(stderr, "mx_device_spmm_plan: %s\n", mx_device_last_error());
    exit(2);
  }
  return p;
}

/* C = A B on the default stream */
static void ours_spmm(mx_device *D, int k, const double *B, int32_t ldb, double *C, int32_t ldc) {
  if (mx_device_spmm(D, k, B, ldb, C, ldc, nullptr)) {
    fprintf(stderr, "mx_device_spmm: %s\n", mx_device_last_error());
    exit(2);
  }
}

/* beside a hot part, the whole matrix all cold for k's timed choice (mx_device_spmm_whole) */
static void ours_whole(mx_device *D, const Csr &A, int k) {
  const mx_csr a = {A.nrows, A.ncols, A.rowptr.data(), A.col.data(), A.val.data()};
  if (mx_device_spmm_whole(D, &a, k)) fprintf(stderr, "mx_device_spmm_whole (the SpMM goes on without it): %s\n", mx_device_last_error());
}

/* C = A B as k SpMVs, column j of C from column j of B, on the default stream */
static void ours_kspmv(mx_device *D, int k, const double *B, int32_t ldb, double *C, int32_t ldc) {
  for (int j = 0; j < k; ++j)
    if (mx_device_spmv(D, B + (size_t)j * ldb, nullptr, C + (size_t)j * ldc, nullptr)) {
      fprintf(stderr, "mx_device_spmv: %s\n", mx_device_last_error());
      exit(2);
    }
}

/* median microseconds of f, each call between two events on the default stream, after the warm-ups */
static double median_us(const std::function<void()> &f, int reps) {
  return mx_time_calls(0, [&](int) { f(); }, kWarmup, reps, kWarmMs).med;
}

/* ---- cuSPARSE -------------------------------------------------------------------------------------- */

/* The plain CSR of A on the device and its cuSPARSE descriptor (32-bit indices, FP64). */
struct CusparseCsr {
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t mat = nullptr;
  int32_t *rowptr = nullptr, *col = nullptr;
  double *val = nullptr;
};

static CusparseCsr cusparse_open(const Csr &A) {
  CusparseCsr S;
  S.rowptr = upload(A.rowptr);
  S.col = upload(A.col);
  S.val = upload(A.val);
  SP(cusparseCreate(&S.handle));
  SP(cusparseCreateCsr(&S.mat, A.nrows, A.ncols, A.nnz(), S.rowptr, S.col, S.val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  return S;
}

static void cusparse_close(CusparseCsr *S) {
  SP(cusparseDestroySpMat(S->mat));
  SP(cusparseDestroy(S->handle));
  CK(cudaFree(S->rowptr));
  CK(cudaFree(S->col));
  CK(cudaFree(S->val));
}

/* One algorithm's run at one k: valid = false where cuSPARSE refused or failed any step. */
struct AlgRun {
  bool valid = false;
  double us = 0;
  std::vector<double> C; /* its C of the first call, where asked for (the reference of our check) */
};

/* Dense descriptors of B (ncols x k) and C (nrows x k), column-major, leading dimension = rows. */
struct DenseOperands {
  cusparseDnMatDescr_t B = nullptr, C = nullptr;
};

static DenseOperands dense_operands(const Csr &A, int k, double *dB, double *dC) {
  DenseOperands d;
  SP(cusparseCreateDnMat(&d.B, A.ncols, k, A.ncols, dB, CUDA_R_64F, CUSPARSE_ORDER_COL));
  SP(cusparseCreateDnMat(&d.C, A.nrows, k, A.nrows, dC, CUDA_R_64F, CUSPARSE_ORDER_COL));
  return d;
}

/* Only ALG1 and ALG3 have a preprocessing step (it has no effect on the others). */
static bool has_preprocess(cusparseSpMMAlg_t alg) { return alg == CUSPARSE_SPMM_CSR_ALG1 || alg == CUSPARSE_SPMM_CSR_ALG3; }

/* buffer size, preprocess and one call of alg; false at the first step cuSPARSE refuses or fails */
static bool cusparse_prepare(const CusparseCsr &S, const DenseOperands &d, cusparseSpMMAlg_t alg, void **buf) {
  const double one = 1.0, zero = 0.0;
  const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  if (cusparseSpMM_bufferSize(S.handle, nt, nt, &one, S.mat, d.B, &zero, d.C, CUDA_R_64F, alg, &bytes) != CUSPARSE_STATUS_SUCCESS)
    return false;
  *buf = device_alloc<char>(bytes);
  if (has_preprocess(alg) &&
      cusparseSpMM_preprocess(S.handle, nt, nt, &one, S.mat, d.B, &zero, d.C, CUDA_R_64F, alg, *buf) != CUSPARSE_STATUS_SUCCESS)
    return false;
  if (cusparseSpMM(S.handle, nt, nt, &one, S.mat, d.B, &zero, d.C, CUDA_R_64F, alg, *buf) != CUSPARSE_STATUS_SUCCESS) return false;
  CK(cudaDeviceSynchronize());
  return true;
}

/* C = A B by cusparseSpMM with alg: run once (its C kept if want_C), then timed (buffer allocated once,
 * preprocessed once) */
static AlgRun run_cusparse(const CusparseCsr &S, const Csr &A, cusparseSpMMAlg_t alg, int k, double *dB, double *dC, int reps,
                           bool want_C) {
  AlgRun r;
  const DenseOperands d = dense_operands(A, k, dB, dC);
  void *buf = nullptr;
  CK(cudaMemset(dC, 0, sizeof(double) * A.nrows * k));
  if (cusparse_prepare(S, d, alg, &buf)) {
    r.valid = true;
    if (want_C) r.C = download(dC, (size_t)A.nrows * k);
    const double one = 1.0, zero = 0.0;
    const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
    r.us = median_us([&] { SP(cusparseSpMM(S.handle, nt, nt, &one, S.mat, d.B, &zero, d.C, CUDA_R_64F, alg, buf)); }, reps);
  }
  SP(cusparseDestroyDnMat(d.B));
  SP(cusparseDestroyDnMat(d.C));
  if (buf) CK(cudaFree(buf));
  return r;
}

/* out (cols x rows, row-major: out[r * cols... ]) = in (rows x cols, column-major, leading dimension rows)
 * transposed, one thread per entry (the bench's own copy; the library's panels have theirs) */
__global__ void transpose_kernel(int64_t rows, int cols, const double *__restrict__ in, double *__restrict__ out) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const int64_t r = i / cols, c = i % cols;
  out[i] = in[c * rows + r];
}

/* out (rows x cols, column-major) = in (rows x cols, row-major) */
__global__ void untranspose_kernel(int64_t rows, int cols, const double *__restrict__ in, double *__restrict__ out) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const int64_t c = i / rows, r = i % rows;
  out[i] = in[r * cols + c];
}

static unsigned blocks_of(int64_t n) { return (unsigned)((n + 255) / 256); }

/* cusparseSpMM CSR ALG2 with B and C row-major: B copied row-major, the product, C copied back, all
 * inside the timing; valid = false where cuSPARSE refuses or fails. Its C is checked against ours. */
static AlgRun run_cusparse_rowmajor(const CusparseCsr &S, const Csr &A, int k, double *dB, double *dC, int reps) {
  AlgRun r;
  double *Br = device_alloc<double>((size_t)A.ncols * k), *Cr = device_alloc<double>((size_t)A.nrows * k);
  cusparseDnMatDescr_t dBr = nullptr, dCr = nullptr;
  SP(cusparseCreateDnMat(&dBr, A.ncols, k, k, Br, CUDA_R_64F, CUSPARSE_ORDER_ROW));
  SP(cusparseCreateDnMat(&dCr, A.nrows, k, k, Cr, CUDA_R_64F, CUSPARSE_ORDER_ROW));
  const double one = 1.0, zero = 0.0;
  const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusparseSpMMAlg_t alg = CUSPARSE_SPMM_CSR_ALG2;
  size_t bytes = 0;
  void *buf = nullptr;
  auto call = [&] {
    transpose_kernel<<<blocks_of((int64_t)A.ncols * k), 256>>>(A.ncols, k, dB, Br);
    const cusparseStatus_t st = cusparseSpMM(S.handle, nt, nt, &one, S.mat, dBr, &zero, dCr, CUDA_R_64F, alg, buf);
    untranspose_kernel<<<blocks_of((int64_t)A.nrows * k), 256>>>(A.nrows, k, Cr, dC);
    return st;
  };
  if (cusparseSpMM_bufferSize(S.handle, nt, nt, &one, S.mat, dBr, &zero, dCr, CUDA_R_64F, alg, &bytes) == CUSPARSE_STATUS_SUCCESS) {
    buf = device_alloc<char>(bytes);
    if (call() == CUSPARSE_STATUS_SUCCESS) {
      CK(cudaGetLastError());
      r.valid = true;
      r.C = download(dC, (size_t)A.nrows * k);
      r.us = median_us([&] { SP(call()); }, reps);
    }
  }
  SP(cusparseDestroyDnMat(dBr));
  SP(cusparseDestroyDnMat(dCr));
  if (buf) CK(cudaFree(buf));
  CK(cudaFree(Br));
  CK(cudaFree(Cr));
  return r;
}

static const char *way_name(int w);

/* ---- one (matrix, k) ------------------------------------------------------------------------------ */

struct Row {
  std::string matrix;
  int32_t nrows = 0, ncols = 0, nnz = 0;
  int k = 0;
  mx_spmm_plan plan;
  double ours_us = 0, kspmv_us = 0;
  double ours_host_us = 0; /* host time per call of ours (mx_time_calls' host): near ours_us, the host set the pace */
  double kernels_us = 0, panels_us = 0, padded_us = 0, panels_spmv_us = 0; /* our kernels on B in place, on row-major panels, padded,
                                                                           * panels and SpMVs (forced; 0: not run) */
  double pairs_us = 0;                  /* the pairs forced (0: not run) */
  double pairs_in_place_us = 0;         /* the pairs in place forced (0: not run) */
  int way = 0;                          /* the way the plan kept (mx_spmm_way) */
  AlgRun alg[kNumAlgs];
  AlgRun alg2_row;                      /* cuSPARSE ALG2 on row-major B and C, the copies included */
  double best_cusparse_us = 0; /* 0: no algorithm ran */
  double bound_us = 0, rel_err = 0;
  bool ok = true;
};

/* the memory-traffic bound: the plain CSR read once (12 nnz + 4 (nrows+1)), B read and C written once */
static double bound_us(const Row &r, double gbps) {
  const double bytes = 12.0 * r.nnz + 4.0 * (r.nrows + 1.0) + 8.0 * r.k * ((double)r.ncols + r.nrows);
  return bytes / (gbps * 1e3);
}

/* the first valid algorithm (the reference of the check), -1 if none ran */
static int reference_alg(const Row &r) {
  for (int a = 0; a < kNumAlgs; ++a)
    if (r.alg[a].valid) return a;
  return -1;
}

static double best_cusparse(const Row &r) {
  double best = 0;
  for (const AlgRun &a : r.alg)
    if (a.valid && (best == 0 || a.us < best)) best = a.us;
  return best;
}

/* every measurement at one k; our C poisoned (NaN) before its checked call so that an unwritten entry fails */
static Row run_k(mx_device *D, const CusparseCsr &S, const Csr &A, const std::string &name, int k, const Opts &o) {
  Row r;
  r.matrix = name, r.nrows = A.nrows, r.ncols = A.ncols, r.nnz = A.nnz(), r.k = k;
  r.plan = ours_plan(D, k);
  double *dB = random_dense(A.ncols, k), *dC = device_alloc<double>((size_t)A.nrows * k);
  CK(cudaMemset(dC, 0xff, sizeof(double) * A.nrows * k));
  if ((o.group && mx_device_spmm_set_group(D, o.group)) || (o.way != MX_SPMM_WAY_AUTO && mx_device_spmm_set_way(D, o.way))) {
    fprintf(stderr, "forcing the SpMM's launch group or way: %s\n", mx_device_last_error());
    exit(2);
  }
  if (o.whole && o.way == MX_SPMM_WAY_AUTO && !o.group) ours_whole(D, A, k);
  ours_spmm(D, k, dB, A.ncols, dC, A.nrows);
  r.plan = ours_plan(D, k); /* the launch group is known after the first product */
  const std::vector<double> C_ours = download(dC, (size_t)A.nrows * k);
  const Timing tours = mx_time_calls(0, [&](int) { ours_spmm(D, k, dB, A.ncols, dC, A.nrows); }, kWarmup, o.reps, kWarmMs);
  r.ours_us = tours.med, r.ours_host_us = tours.host;
  r.way = r.plan.pairs_in_place ? MX_SPMM_WAY_PAIRS_IN_PLACE
          : r.plan.pairs ? MX_SPMM_WAY_PAIRS
          : !r.plan.kernel ? MX_SPMM_WAY_COLUMNS
          : r.plan.whole ? MX_SPMM_WAY_WHOLE
          : r.plan.rowpat ? MX_SPMM_WAY_ROWPAT
          : r.plan.padded_panels ? MX_SPMM_WAY_PADDED
          : r.plan.rest_spmv ? MX_SPMM_WAY_PANELS_SPMV
          : r.plan.cold_panels ? MX_SPMM_WAY_PANELS
                               : MX_SPMM_WAY_KERNELS;
  r.kspmv_us = median_us([&] { ours_kspmv(D, k, dB, A.ncols, dC, A.nrows); }, o.reps);
  if (r.plan.kernel && o.way == MX_SPMM_WAY_AUTO && !o.group) { /* each of our kernel ways forced, then the timed choice again */
    const int rest = k % 64; /* the padded panels differ from the panels where it is above 8 and not a power of two */
    for (mx_spmm_way w : {MX_SPMM_WAY_KERNELS, MX_SPMM_WAY_PANELS, MX_SPMM_WAY_PADDED, MX_SPMM_WAY_PANELS_SPMV}) {
      if (w == MX_SPMM_WAY_PADDED && (rest <= 8 || !(rest & (rest - 1)))) continue;
      if (w == MX_SPMM_WAY_PANELS_SPMV && (k <= 8 || k % 8 == 0)) continue;
      if (mx_device_spmm_set_way(D, w)) {
        fprintf(stderr, "forcing the SpMM's way: %s\n", mx_device_last_error());
        exit(2);
      }
      const double us = median_us([&] { ours_spmm(D, k, dB, A.ncols, dC, A.nrows); }, o.reps);
      (w == MX_SPMM_WAY_KERNELS ? r.kernels_us : w == MX_SPMM_WAY_PANELS ? r.panels_us : w == MX_SPMM_WAY_PADDED ? r.padded_us : r.panels_spmv_us) = us;
    }
    CK(cudaMemset(dC, 0xff, sizeof(double) * A.nrows * k));
    ours_spmm(D, k, dB, A.ncols, dC, A.nrows);
    if (mx_rel_err(download(dC, (size_t)A.nrows * k), C_ours) > kMaxRelErr) {
      fprintf(stderr, "%s k %d: the panels' C is off\n", name.c_str(), k);
      r.ok = false;
    }
    if (mx_device_spmm_set_way(D, MX_SPMM_WAY_AUTO)) exit(2);
  }
  for (mx_spmm_way w : {MX_SPMM_WAY_PAIRS, MX_SPMM_WAY_PAIRS_IN_PLACE}) { /* each where D's cold kernel runs it */
    if (k < 2 || o.way != MX_SPMM_WAY_AUTO || o.group || mx_device_spmm_set_way(D, w) != 0) continue;
    (w == MX_SPMM_WAY_PAIRS ? r.pairs_us : r.pairs_in_place_us) = median_us([&] { ours_spmm(D, k, dB, A.ncols, dC, A.nrows); }, o.reps);
    if (mx_rel_err(download(dC, (size_t)A.nrows * k), C_ours) > kMaxRelErr) {
      fprintf(stderr, "%s k %d: the %s' C is off\n", name.c_str(), k, way_name(w));
      r.ok = false;
    }
    if (mx_device_spmm_set_way(D, MX_SPMM_WAY_AUTO)) exit(2);
    ours_spmm(D, k, dB, A.ncols, dC, A.nrows); /* the timed choice again */
  }
  for (int a = 0; a < kNumAlgs; ++a) r.alg[a] = run_cusparse(S, A, kAlgs[a], k, dB, dC, o.reps, reference_alg(r) < 0);
  r.best_cusparse_us = best_cusparse(r);
  if (k > 1) r.alg2_row = run_cusparse_rowmajor(S, A, k, dB, dC, o.reps); /* k = 1: the layouts coincide, and its row-major C did not match ours there */
  if (r.alg2_row.valid && mx_rel_err(r.alg2_row.C, C_ours) > kMaxRelErr) {
    fprintf(stderr, "%s k %d: cuSPARSE row-major C differs from ours\n", name.c_str(), k);
    r.ok = false;
  }
  std::vector<double>().swap(r.alg2_row.C);
  r.bound_us = bound_us(r, o.gbps);
  const int ref = reference_alg(r);
  r.rel_err = ref < 0 ? 0.0 : mx_rel_err(C_ours, r.alg[ref].C);
  r.ok = r.ok && ref >= 0 && r.rel_err <= kMaxRelErr;
  if (ref < 0) fprintf(stderr, "%s k %d: no cuSPARSE algorithm ran, nothing to check against\n", name.c_str(), k);
  for (AlgRun &a : r.alg) std::vector<double>().swap(a.C);
  CK(cudaFree(dB));
  CK(cudaFree(dC));
  return r;
}

/* ---- output ---------------------------------------------------------------------------------------- */

static const char *plan_name(const mx_spmm_plan &p) { return p.kernel ? "kernel" : "per_column"; }

static const char *way_name(int w) {
  return w == MX_SPMM_WAY_KERNELS ? "kernels" : w == MX_SPMM_WAY_PANELS ? "panels" : w == MX_SPMM_WAY_WHOLE ? "whole" : w == MX_SPMM_WAY_ROWPAT ? "rowpat" : w == MX_SPMM_WAY_PADDED ? "padded" : w == MX_SPMM_WAY_PANELS_SPMV ? "panels_spmv" : w == MX_SPMM_WAY_PAIRS ? "pairs" : w == MX_SPMM_WAY_PAIRS_IN_PLACE ? "pairs_in_place" : "columns";
}

static const char *hot_mode_name(mx_hot_mode m) { return m == MX_HOT_DU ? "DU" : m == MX_HOT_SE ? "SE" : "none"; }

static const char *cold_kernel_name(mx_cold_kernel k) {
  return k == MX_COLD_SEGMENT ? "segment" : k == MX_COLD_MERGE ? "merge" : k == MX_COLD_CUSPARSE ? "cusparse" : "auto";
}

static void print_plan(const mx_spmm_plan &p) {
  printf("  plan k %4d: %-10s lanes/row %2d, cols/pass %d, hot %s; kernels from k %d (min_k %d); bytes per column %.3g, "
         "kernel %.3g\n",
         p.k, plan_name(p), p.lanes_per_row, p.cols_per_pass, hot_mode_name(p.hot_mode), p.min_k_kernel, p.min_k,
         p.bytes_per_column, p.bytes_kernel);
}

static void print_table_header() {
  printf("  %5s %-10s %5s %10s %10s %10s %10s %10s %8s %8s %10s %8s %9s %-8s %10s %10s %10s %8s\n", "k", "plan", "lanes", "ours_us", "kspmv_us",
         "alg1_us", "alg2_us", "alg3_us", "speedup", "vs_kspmv", "bound_us", "x_bound", "rel_err", "way", "kernels_us", "panels_us", "a2row_us", "host_us");
}

/* a value formatted by fmt, or missing when it does not exist (an algorithm that did not run) */
static std::string cell(bool exists, double v, const char *fmt, const char *missing) {
  char s[48];
  if (!exists) return missing;
  snprintf(s, sizeof s, fmt, v);
  return s;
}

static void print_row(const Row &r) {
  const bool any = r.best_cusparse_us > 0;
  printf("  %5d %-10s %5d %10.1f %10.1f %10s %10s %10s %8s %8.3f %10.1f %8.2f %9s %-8s %10s %10s %10s %8.1f%s\n", r.k, plan_name(r.plan), r.plan.lanes_per_row,
         r.ours_us, r.kspmv_us, cell(r.alg[0].valid, r.alg[0].us, "%.1f", "n/a").c_str(), cell(r.alg[1].valid, r.alg[1].us, "%.1f", "n/a").c_str(),
         cell(r.alg[2].valid, r.alg[2].us, "%.1f", "n/a").c_str(), cell(any, r.best_cusparse_us / r.ours_us, "%.3f", "n/a").c_str(),
         r.kspmv_us / r.ours_us, r.bound_us, r.ours_us / r.bound_us, cell(any, r.rel_err, "%.2e", "n/a").c_str(), way_name(r.way),
         cell(r.kernels_us > 0, r.kernels_us, "%.1f", "-").c_str(), cell(r.panels_us > 0, r.panels_us, "%.1f", "-").c_str(),
         cell(r.alg2_row.valid, r.alg2_row.us, "%.1f", "n/a").c_str(), r.ours_host_us, r.ok ? "" : "  FAIL");
  fflush(stdout);
}

static const char *kCsvHeader = "matrix,nrows,ncols,nnz,k,plan,lanes,group,ours_us,kspmv_us,alg1_us,alg2_us,alg3_us,best_cusparse_us,"
                                "speedup,vs_kspmv,bound_us,x_bound,rel_err,way,kernels_us,panels_us,alg2_row_us,whole_us,rowpat_us,ours_host_us,"
                                "padded_us,panels_spmv_us,pairs_us,pairs_in_place_us\n";

static void write_csv_row(FILE *f, const Row &r) {
  const bool any = r.best_cusparse_us > 0;
  fprintf(f, "%s,%d,%d,%d,%d,%s,%d,%d,%.3f,%.3f,%s,%s,%s,%s,%s,%.4f,%.3f,%.4f,%s,%s,%s,%s,%s,%s,%s,%.3f,%s,%s,%s,%s\n", r.matrix.c_str(), r.nrows, r.ncols, r.nnz, r.k,
          plan_name(r.plan), r.plan.lanes_per_row, r.plan.cols_per_launch, r.ours_us, r.kspmv_us, cell(r.alg[0].valid, r.alg[0].us, "%.3f", "").c_str(),
          cell(r.alg[1].valid, r.alg[1].us, "%.3f", "").c_str(), cell(r.alg[2].valid, r.alg[2].us, "%.3f", "").c_str(),
          cell(any, r.best_cusparse_us, "%.3f", "").c_str(), cell(any, r.best_cusparse_us / r.ours_us, "%.4f", "").c_str(),
          r.kspmv_us / r.ours_us, r.bound_us, r.ours_us / r.bound_us, cell(any, r.rel_err, "%.3e", "").c_str(), way_name(r.way),
          cell(r.kernels_us > 0, r.kernels_us, "%.3f", "").c_str(), cell(r.panels_us > 0, r.panels_us, "%.3f", "").c_str(),
          cell(r.alg2_row.valid, r.alg2_row.us, "%.3f", "").c_str(), cell(r.plan.way_us[4] > 0, r.plan.way_us[4], "%.3f", "").c_str(),
          cell(r.plan.way_us[5] > 0, r.plan.way_us[5], "%.3f", "").c_str(), r.ours_host_us,
          cell(r.padded_us > 0, r.padded_us, "%.3f", "").c_str(), cell(r.panels_spmv_us > 0, r.panels_spmv_us, "%.3f", "").c_str(),
          cell(r.pairs_us > 0, r.pairs_us, "%.3f", "").c_str(), cell(r.pairs_in_place_us > 0, r.pairs_in_place_us, "%.3f", "").c_str());
  fflush(f);
}

/* GPU, CUDA runtime, cuSPARSE and the command line into DIR/spmm_kernel_env.txt; false if it cannot be written */
static bool write_env(const std::string &path, const cudaDeviceProp &prop, int argc, char **argv, const Opts &o) {
  FILE *f = fopen(path.c_str(), "w");
  if (!f) return false;
  int rt = 0, major = 0, minor = 0, patch = 0;
  CK(cudaRuntimeGetVersion(&rt));
  SP(cusparseGetProperty(MAJOR_VERSION, &major));
  SP(cusparseGetProperty(MINOR_VERSION, &minor));
  SP(cusparseGetProperty(PATCH_LEVEL, &patch));
  fprintf(f, "gpu_name=%s\ncuda_runtime=%d\ncusparse=%d.%d.%d\nreps=%d\nwarmup=%d\nwarmup_ms=%g\nbw_GBps=%g\n", prop.name, rt, major, minor,
          patch, o.reps, kWarmup, kWarmMs, o.gbps);
  if (o.predicted) fprintf(f, "crux=predicted\nmode=predicted\n");
  else fprintf(f, "crux=%g,%g\nmode=%d\n", o.crux.tau_c, o.crux.tau_r, (int)o.mode);
  fprintf(f, "command=");
  for (int i = 0; i < argc; ++i) fprintf(f, "%s%s", i ? " " : "", argv[i]);
  fprintf(f, "\n");
  fclose(f);
  return true;
}

/* ---- one matrix ------------------------------------------------------------------------------------ */

/* The plan the embedded model predicts for A from its host features (mx_predict_plan over the model's
 * candidates, as MatXtractPredict at default options); false if the features or the model fail. */
static bool predicted_plan(const Csr &A, mx_plan *p) {
  const mx_csr a = {A.nrows, A.ncols, A.rowptr.data(), A.col.data(), A.val.data()};
  mx_features f;
  mx_prediction pred;
  if (mx_features_compute(&a, &f) != MX_OK || mx_predict_plan(mx_model_default(), &f, &pred) != MX_OK) return false;
  *p = pred.plan;
  return true;
}

/* every k of one matrix into the table and the CSV; false if it could not be loaded or a check failed */
static bool run_matrix(const Source &src, const Opts &o, FILE *csv) {
  Csr A;
  if (!load_matrix(src, &A)) return false;
  const std::string name = name_of(src);
  mx_plan plan = {o.crux, o.mode, MX_PLAN_COLD_AUTO};
  if (o.predicted && !predicted_plan(A, &plan)) {
    fprintf(stderr, "%s: no predicted plan\n", name.c_str());
    return false;
  }
  if (o.predicted)
    printf("%s: predicted plan (%g,%g) %s/%s\n", name.c_str(), plan.crux.tau_c, plan.crux.tau_r, mx_plan_mode_name(plan.mode),
           mx_plan_cold_name(plan.cold));
  mx_device *D = ours_build(A, plan.crux, plan.mode, (mx_cold_kernel)plan.cold);
  mx_device_pack_info pi = {};
  if (o.compress) {
    const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
    if (mx_device_compress(D, &rq) || mx_device_compress_info(D, &pi)) {
      fprintf(stderr, "%s: mx_device_compress: %s\n", name.c_str(), mx_device_last_error());
      exit(2);
    }
    printf("%s: compressed: %s (%zu of %zu cold bytes)\n", name.c_str(), pi.rowpat ? "row patterns" : pi.packed ? "pack" : "nothing",
           pi.bytes, pi.plain_bytes);
  }
  printf("%s: %d x %d, %d nnz; crux (%g,%g), cold kernel %s, x-hot %d columns\n", name.c_str(), A.nrows, A.ncols, A.nnz(), plan.crux.tau_c,
         plan.crux.tau_r, cold_kernel_name(mx_device_cold_kernel(D)), mx_device_xhot_cols(D));
  for (int k : o.ks) print_plan(ours_plan(D, k));
  CusparseCsr S = cusparse_open(A);
  print_table_header();
  bool ok = true;
  for (int k : o.ks) {
    const Row r = run_k(D, S, A, name, k, o);
    print_row(r);
    write_csv_row(csv, r);
    ok = ok && r.ok;
  }
  cusparse_close(&S);
  mx_device_free(D);
  return ok;
}

int main(int argc, char **argv) {
  const Opts o = parse_args(argc, argv);
  if (mx_device_count() == 0) {
    printf("SKIP: no CUDA device visible\n");
    return 77;
  }
  mkdir(o.outdir.c_str(), 0755);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  FILE *csv = fopen((o.outdir + "/spmm_kernel.csv").c_str(), "w");
  if (!csv || !write_env(o.outdir + "/spmm_kernel_env.txt", prop, argc, argv, o)) {
    fprintf(stderr, "cannot write into %s\n", o.outdir.c_str());
    return 2;
  }
  fputs(kCsvHeader, csv);
  printf("# %s; median of %d after %d warm-ups and >= %g ms of them (us); bound at %g GB/s\n", prop.name, o.reps, kWarmup, kWarmMs,
         o.gbps);
  int failed = 0;
  for (const Source &src : o.sources) failed += !run_matrix(src, o, csv);
  fclose(csv);
  mx_device_release_pools();
  printf("%s\n", failed ? "FAIL: some products wrong or matrices skipped" : "all products correct");
  return failed ? 1 : 0;
}
