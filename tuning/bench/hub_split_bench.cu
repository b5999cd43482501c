/* hub_split_bench - the hub split (issue 13, power-law graphs; src/core/mx_cold_hub.h and
 * src/cuda/mx_cold_hub_dev.h) against the whole matrix: y = rest x on our packed cold kernels
 * (mx_device, crux (0,0)), then y += hub x (the K most used columns' x values in shared memory).
 * Results and the kernels tried before this one: tuning/results/h100/hub-split-2026-11-26g/README.md.
 *
 * Usage: hub-split-bench [-warmup N] [-reps N] [-K "8192 16384"] [-merge_only] [-sequential] [-floor] [-val E] SPEC[@ones|@pagerank|@unique|@few][~deg|~rcm|~bfs] ...
 * Prints, per matrix: cusparseSpMV CSR ALG1/ALG2, the merge and segment kernels on the whole matrix
 * (packed) and the merge kernel's y = z + A x (what MatMultAdd's z costs it), and per K: the hub part
 * alone, and per cold kernel the rest alone and the split product (the hub staging, the rest, the hub
 * kernel started early as mx_device_hub_launch does; -sequential: the rest, then the hub part, each
 * kernel after the one before it ends), each product
 * checked against a CPU reference (relative 2-norm error < 1e-12). -merge_only: no segment kernel;
 * -floor: also the gather floor (gather_floor_kernel) of the whole matrix's and the rest's columns; -val E: the packs'
 * value encoding forced to mx_val_enc E (e.g. 3 = DICT16; default: AUTO). One x and one y
 * (every matrix here is many times the L2). Exit 1 if any product was wrong. */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <functional>
#include <string>
#include <vector>
#include "cuda_check.h"
#include "../common/rel_err.h"
#include "../common/event_timing.cuh"
#include "../common/csr32.h"
#include "../common/cusparse_check.h"

extern "C" int mx_cold_pack_set_merge(int on);
extern "C" {
#include "core/mx_cold_hub.h"
#include "core/mx_cold_pack.h"
#include "cuda/mx_cold_hub_dev.h"
#include "core/mx_format.h"
#include "cuda/mx_device.h"
#include "io/mx_io.h"
}



static cudaStream_t g_stream;
static bool g_merge_only = false; /* -merge_only: no segment kernel */
static bool g_sequential = false; /* -sequential: the split's kernels one after another, no early start */
static bool g_floor = false;      /* -floor: the gather floor of the whole matrix's and the rest's columns */
static int g_val = MX_PACK_AUTO;  /* -val: the packs' value encoding */

struct Csr {
  int32_t nrows = 0, ncols = 0;
  std::vector<int32_t> rowptr, col;
  std::vector<double> val;
  int32_t nnz() const { return rowptr[nrows]; }
};

/* ---- the hub part: src/core/mx_cold_hub.h, src/cuda/mx_cold_hub_dev.h ------------------------------ */

template <class T>
static T *upload(const std::vector<T> &v) {
  T *d = nullptr;
  CK(cudaMalloc(&d, sizeof(T) * std::max<size_t>(1, v.size())));
  if (!v.empty()) CK(cudaMemcpy(d, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return d;
}

/* The gather floor: every x[col[i]] of a column array read once (the array coalesced, the gathers
 * through L2 as the CSR kernels do), summed per thread: no rows, no y, no values. What any kernel that
 * gathers these x values through L2 costs at least (one L2 sector per gather where they scatter). */
__global__ void __launch_bounds__(256) gather_floor_kernel(long long n, const int *__restrict__ col, const double *__restrict__ x,
                                                           double *__restrict__ out) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  double s = 0.0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const int c0 = __ldcs(col + i), c1 = __ldcs(col + i + stride), c2 = __ldcs(col + i + 2 * stride), c3 = __ldcs(col + i + 3 * stride);
    s += __ldg(x + c0) + __ldg(x + c1) + __ldg(x + c2) + __ldg(x + c3);
  }
  for (; i < n; i += stride) s += __ldg(x + __ldcs(col + i));
  out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

/* the floor's time for the column array cols (median of reps) */
static double gather_floor(const std::vector<int32_t> &cols, const double *dx, int warmup, int reps) {
  int nsm = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gather_floor_kernel, 256, 0));
  const int grid = nsm * std::max(1, per_sm);
  int32_t *dc = upload(cols);
  double *dout = nullptr;
  CK(cudaMalloc(&dout, sizeof(double) * (size_t)grid * 256));
  const Timing t = mx_time_calls(g_stream, [&](int) { gather_floor_kernel<<<grid, 256, 0, g_stream>>>((long long)cols.size(), dc, dx, dout); },
                                 warmup, reps);
  CK(cudaGetLastError());
  CK(cudaFree(dc));
  CK(cudaFree(dout));
  return t.med;
}

/* the rest of H as an owned Csr (what ours_upload borrows) */
static Csr rest_of(const mx_cold_hub &H) {
  Csr R;
  R.nrows = H.nrows, R.ncols = H.ncols;
  R.rowptr.assign(H.rest_rowptr, H.rest_rowptr + H.nrows + 1);
  R.col.assign(H.rest_col, H.rest_col + R.rowptr.back());
  R.val.assign(H.rest_val, H.rest_val + R.rowptr.back());
  return R;
}

static void hub_spmv(const mx_hub_dev *d, const double *x, double *y) {
  if (mx_hub_dev_spmv_add(d, x, y, g_stream)) {
    fprintf(stderr, "mx_hub_dev_spmv_add: %s\n", mx_device_last_error());
    exit(2);
  }
}

/* ---- our kernels and cuSPARSE ---------------------------------------------------------------------- */

/* the whole of A (crux (0,0)) on cold kernel k, packed (AUTO; the merge kernel reads the pack) */
static mx_device *ours_upload(const Csr &A, mx_cold_kernel k, mx_format *F) {
  const mx_csr a = {A.nrows, A.ncols, A.rowptr.data(), A.col.data(), A.val.data()};
  mx_device *D = nullptr;
  mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_device_pack_info pi;
  rq.val = g_val;
  if (mx_format_build_borrow(&a, mx_crux{0, 0}, MX_MODE_AUTO, F) != MX_OK || mx_device_upload_xhot(F, k, 0, &D) ||
      mx_device_cold_kernel(D) != k || mx_device_compress(D, &rq) || mx_device_compress_info(D, &pi)) {
    fprintf(stderr, "upload/compress failed: %s\n", mx_device_last_error());
    exit(2);
  }
  printf("    (packed values: %s)\n", pi.rowpat ? "none, row-pattern form" : pi.in_use ? mx_val_enc_name(pi.val_enc) : "not packed");
  return D;
}

/* y = A x, or y = z + A x */
static void ours_spmv(mx_device *D, const double *x, const double *z, double *y) {
  if (mx_device_spmv(D, x, z, y, g_stream)) {
    fprintf(stderr, "mx_device_spmv: %s\n", mx_device_last_error());
    exit(2);
  }
}

static std::vector<double> download(const double *d, int n) {
  CK(cudaStreamSynchronize(g_stream));
  std::vector<double> h((size_t)n);
  CK(cudaMemcpy(h.data(), d, sizeof(double) * n, cudaMemcpyDeviceToHost));
  return h;
}

/* time f (median of reps after warmup) and check its y against ref; prints one line */
static bool timed(const char *what, const std::function<void()> &f, double *dy, const std::vector<double> *ref, int n, int warmup,
                  int reps, double *med) {
  CK(cudaMemsetAsync(dy, 0, sizeof(double) * n, g_stream));
  f();
  const double err = ref ? mx_rel_err(download(dy, n), *ref) : 0.0;
  const Timing t = mx_time_calls(g_stream, [&](int) { f(); }, warmup, reps);
  *med = t.med;
  const bool ok = !ref || err < 1e-12;
  printf("    %-34s %9.1f us (min %.1f)%s", what, t.med, t.mn, ref ? "" : "\n");
  if (ref) printf("  err %.1e%s\n", err, ok ? "" : "  WRONG");
  return ok;
}

static double time_cusparse(const Csr &A, cusparseSpMVAlg_t alg, const double *dx, double *dy, const std::vector<double> &ref,
                            int warmup, int reps, bool *ok) {
  int32_t *rp = upload(A.rowptr), *ci = upload(A.col);
  double *v = upload(A.val);
  cusparseHandle_t h;
  SP(cusparseCreate(&h));
  SP(cusparseSetStream(h, g_stream));
  cusparseSpMatDescr_t mA;
  cusparseDnVecDescr_t vx, vy;
  SP(cusparseCreateCsr(&mA, A.nrows, A.ncols, A.nnz(), rp, ci, v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                       CUDA_R_64F));
  SP(cusparseCreateDnVec(&vx, A.ncols, (void *)dx, CUDA_R_64F));
  SP(cusparseCreateDnVec(&vy, A.nrows, dy, CUDA_R_64F));
  const double one = 1.0, zero = 0.0;
  size_t bytes = 0;
  void *buf = nullptr;
  SP(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vx, &zero, vy, CUDA_R_64F, alg, &bytes));
  CK(cudaMalloc(&buf, std::max<size_t>(bytes, 1)));
  SP(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vx, &zero, vy, CUDA_R_64F, alg, buf));
  double med = 0;
  *ok = timed(alg == CUSPARSE_SPMV_CSR_ALG1 ? "cuSPARSE ALG1" : "cuSPARSE ALG2",
              [&] { SP(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vx, &zero, vy, CUDA_R_64F, alg, buf)); }, dy, &ref,
              A.nrows, warmup, reps, &med) && *ok;
  SP(cusparseDestroySpMat(mA));
  SP(cusparseDestroyDnVec(vx));
  SP(cusparseDestroyDnVec(vy));
  SP(cusparseDestroy(h));
  for (void *p : {(void *)rp, (void *)ci, (void *)v, buf}) CK(cudaFree(p));
  return med;
}

/* ---- one matrix -------------------------------------------------------------------------------------- */

/* SPEC[@VALUES][~ORDER]: the generator makes the values and the order (mx_gen) */
static bool make_matrix(const std::string &item, Csr *A) { return mx_csr32_gen(item.c_str(), A, item.c_str()); }

static std::vector<double> reference(const Csr &A, const std::vector<double> &x) {
  std::vector<double> y((size_t)A.nrows);
  for (int32_t i = 0; i < A.nrows; ++i) {
    double s = 0;
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; ++p) s += A.val[p] * x[A.col[p]];
    y[i] = s;
  }
  return y;
}

static bool run_one(const std::string &item, const std::vector<int> &Ks, int warmup, int reps) {
  Csr A;
  if (!make_matrix(item, &A)) return false;
  std::vector<double> x((size_t)A.ncols);
  for (int32_t j = 0; j < A.ncols; ++j) x[j] = 1.0 + 0.5 * sin(0.37 * j);
  const std::vector<double> ref = reference(A, x);
  double *dx = upload(x), *dy = nullptr;
  CK(cudaMalloc(&dy, sizeof(double) * A.nrows));
  printf("  %s: %d rows, %d nnz\n", item.c_str(), A.nrows, A.nnz());
  bool ok = true;
  double t = 0, best_cusparse = 1e30, best_ours = 1e30;
  best_cusparse = std::min(best_cusparse, time_cusparse(A, CUSPARSE_SPMV_CSR_ALG1, dx, dy, ref, warmup, reps, &ok));
  best_cusparse = std::min(best_cusparse, time_cusparse(A, CUSPARSE_SPMV_CSR_ALG2, dx, dy, ref, warmup, reps, &ok));
  const int old = mx_cold_pack_set_merge(1);
  for (mx_cold_kernel k : {MX_COLD_MERGE, MX_COLD_SEGMENT}) {
    if (g_merge_only && k == MX_COLD_SEGMENT) continue;
    mx_format F;
    mx_device *D = ours_upload(A, k, &F);
    ok = timed(k == MX_COLD_MERGE ? "whole: merge packed" : "whole: segment packed", [&] { ours_spmv(D, dx, nullptr, dy); }, dy, &ref, A.nrows,
               warmup, reps, &t) && ok;
    best_ours = std::min(best_ours, t);
    if (k == MX_COLD_MERGE) { /* MatMultAdd's form: what a z costs the merge kernel */
      std::vector<double> z((size_t)A.nrows), refz((size_t)A.nrows);
      for (int32_t i = 0; i < A.nrows; ++i) z[i] = 0.25 + 0.125 * cos(0.11 * i), refz[i] = ref[i] + z[i];
      double *dz = upload(z), tz = 0;
      ok = timed("whole: merge packed, y = z + A x", [&] { ours_spmv(D, dx, dz, dy); }, dy, &refz, A.nrows, warmup, reps, &tz) && ok;
      printf("    the z costs %.1f us (%.1f%%)\n", tz - t, 100.0 * (tz - t) / t);
      CK(cudaFree(dz));
    }
    mx_device_free(D);
    mx_format_free(&F);
  }
  printf("    whole: best ours / best cuSPARSE = %.3fx\n", best_cusparse / best_ours);
  if (g_floor) {
    const double f = gather_floor(A.col, dx, warmup, reps);
    printf("    gather floor, every column:        %9.1f us: best cuSPARSE / floor = %.3fx\n", f, best_cusparse / f);
  }
  for (int K : Ks) {
    mx_cold_hub H;
    const mx_csr a = {A.nrows, A.ncols, A.rowptr.data(), A.col.data(), A.val.data()};
    mx_hub_dev *hd = nullptr;
    if (mx_cold_hub_build(&a, K, &H) != MX_OK || mx_hub_dev_upload(&H, &hd)) {
      fprintf(stderr, "hub split K %d failed: %s\n", K, mx_device_last_error());
      exit(2);
    }
    const Csr rest = rest_of(H);
    if (g_floor) printf("    gather floor, the rest's columns:  %9.1f us\n", gather_floor(rest.col, dx, warmup, reps));
    printf("  K %d: hub part %lld nnz (%.1f%%), %d slices (padding %.1f%%), %d split rows, values %s, %zu bytes\n", H.K,
           (long long)H.nnz, 100.0 * H.nnz / std::max(1, A.nnz()), H.nslices,
           100.0 * ((H.nslices ? H.slice_off[H.nslices] : 0) - H.nnz) / std::max<int64_t>(1, H.nnz), H.nsplit,
           H.hubscale ? "folded (column constants)" : "plain", mx_cold_hub_bytes(&H));
    timed("hub part alone", [&] { hub_spmv(hd, dx, dy); }, dy, nullptr, A.nrows, warmup, reps, &t);
    for (mx_cold_kernel k : {MX_COLD_MERGE, MX_COLD_SEGMENT}) {
      if (g_merge_only && k == MX_COLD_SEGMENT) continue;
      mx_format F;
      mx_device *D = ours_upload(rest, k, &F);
      const char *kn = k == MX_COLD_MERGE ? "merge" : "segment";
      char what[96];
      snprintf(what, sizeof what, "rest alone: %s packed", kn);
      timed(what, [&] { ours_spmv(D, dx, nullptr, dy); }, dy, nullptr, A.nrows, warmup, reps, &t);
      snprintf(what, sizeof what, "split: rest %s, then hub y +=", kn);
      ok = timed(what,
                 [&] {
                   if (g_sequential) { /* -sequential: the order before the staging came first */
                     ours_spmv(D, dx, nullptr, dy);
                     hub_spmv(hd, dx, dy);
                     return;
                   }
                   if (mx_hub_dev_stage(hd, dx, g_stream)) exit(2); /* as mx_device_hub_launch */
                   ours_spmv(D, dx, nullptr, dy);
                   if (mx_hub_dev_add_staged(hd, dy, g_stream, 1)) exit(2);
                 },
                 dy, &ref, A.nrows, warmup, reps, &t) && ok;
      printf("    split (%s) vs best cuSPARSE %.3fx, vs best ours whole %.3fx\n", kn, best_cusparse / t, best_ours / t);
      mx_device_free(D);
      mx_format_free(&F);
    }
    mx_hub_dev_free(hd);
    mx_cold_hub_free(&H);
  }
  mx_cold_pack_set_merge(old);
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  return ok;
}

int main(int argc, char **argv) {
  int warmup = 20, reps = 100;
  std::vector<int> Ks = {8192, 16384};
  std::vector<std::string> items;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-warmup") && i + 1 < argc) warmup = std::max(5, atoi(argv[++i]));
    else if (!strcmp(argv[i], "-reps") && i + 1 < argc) reps = std::max(20, atoi(argv[++i]));
    else if (!strcmp(argv[i], "-merge_only")) g_merge_only = true;
    else if (!strcmp(argv[i], "-sequential")) g_sequential = true;
    else if (!strcmp(argv[i], "-floor")) g_floor = true;
    else if (!strcmp(argv[i], "-val") && i + 1 < argc) g_val = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-K") && i + 1 < argc) {
      Ks.clear();
      std::string list = argv[++i];
      for (char *t = strtok(&list[0], " ,"); t; t = strtok(nullptr, " ,")) Ks.push_back(std::min(atoi(t), MX_HUB_MAX_COLS));
    } else items.push_back(argv[i]);
  }
  if (items.empty()) items = {"kron:21:16@ones", "kron:21:16@pagerank", "chunglu:2000000:16:2.1@ones"};
  if (mx_device_count() == 0) {
    printf("SKIP: no CUDA device visible\n");
    return 77;
  }
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("# %s, %d SMs; warm-up %d, median of %d\n", prop.name, prop.multiProcessorCount, warmup, reps);
  int wrong = 0;
  for (const std::string &item : items) wrong += !run_one(item, Ks, warmup, reps);
  return wrong ? 1 : 0;
}
