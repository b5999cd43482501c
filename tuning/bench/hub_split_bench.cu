/* hub_split_bench - EXPERIMENT (issue 13, power-law target): a product in two passes. The K most used
 * columns ("hubs") form the hub part: their x values (times the column constant of a column-constant
 * matrix) are staged into shared memory once per block, its nonzeros store 16-bit hub ranks, and a
 * warp walks whole rows 32 nonzeros at a time (segmented warp scan, y += row sums). Every other
 * nonzero stays in the rest part, run by our cold kernels as today (mx_device, crux (0,0), packed).
 * Why: on kron:21:16 the merge kernel takes 162 us for the 30.2M nonzeros in the top 16384 columns
 * even when they are relabelled into a 128 KB window (cold-pack-bench %hub16384), about as long per
 * nonzero as the scattered rest: the gathers cost one L1 wavefront per lane whether they hit or not.
 * Random shared-memory reads of 8 bytes cost a few wavefronts per warp.
 *
 * Usage: hub-split-bench [-warmup N] [-reps N] [-K "8192 16384"] SPEC[@ones|@pagerank] ...
 * Prints, per matrix: the merge and segment kernels on the whole matrix (packed), cusparseSpMV CSR
 * ALG1/ALG2, and per K: the hub part alone, the rest alone, and the split product (rest, stage, hub,
 * long-row fixup), each checked against a CPU reference (relative 2-norm error < 1e-12). One x and
 * one y (every matrix here is many times the L2). Exit 1 if any product was wrong. */
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

extern "C" int mx_cold_pack_set_merge(int on);
extern "C" {
#include "core/mx_cold_pack.h"
#include "core/mx_format.h"
#include "cuda/mx_device.h"
#include "io/mx_io.h"
}

#define SP(call)                                                                                             \
  do {                                                                                                       \
    cusparseStatus_t s_ = (call);                                                                            \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                                     \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cusparseGetErrorString(s_));              \
      exit(2);                                                                                               \
    }                                                                                                        \
  } while (0)

#define HUB_THREADS 1024
#define FULL 0xffffffffu

static cudaStream_t g_stream;

struct Csr {
  int32_t nrows = 0, ncols = 0;
  std::vector<int32_t> rowptr, col;
  std::vector<double> val;
  int32_t nnz() const { return rowptr[nrows]; }
};

/* ---- the hub part on the host ---------------------------------------------------------------------- */

/* Hub part: pseudo-rows (whole nonempty rows, rows longer than a chunk cut into pieces), each with its
 * nonzeros' 16-bit hub ranks; out[r] >= 0: the pseudo-row is a whole row, y[out[r]] += its sum;
 * out[r] < 0: a piece, its sum goes to part[~out[r]], and the fixup adds a split row's pieces in order.
 * Chunks (whole pseudo-rows, about `target` nonzeros each) are the warps' work items. */
struct HubPart {
  int K = 0;
  std::vector<int32_t> hubcol;     /* K: hub rank -> column */
  std::vector<double> hubscale;    /* K: the column constant (column-constant values), else empty */
  std::vector<int32_t> rowptr, out;
  std::vector<uint16_t> rank;
  std::vector<double> val;         /* empty: every value is folded into the staged x (ones, column constants) */
  std::vector<int32_t> chunk;      /* nchunks + 1: first pseudo-row of each chunk */
  std::vector<int32_t> split_row, split_first; /* split rows and their first part slot (+1 sentinel) */
  int nparts = 0;
  int32_t nnz() const { return rowptr.back(); }
};

/* column counts -> the K most used columns, most used first (ties by column) */
static std::vector<int32_t> rank_of_columns(const Csr &A) {
  std::vector<int32_t> cnt((size_t)A.ncols, 0), order((size_t)A.ncols), rank((size_t)A.ncols);
  for (int32_t c : A.col) cnt[c]++;
  for (int32_t j = 0; j < A.ncols; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return cnt[a] > cnt[b]; });
  for (int32_t r = 0; r < A.ncols; ++r) rank[order[r]] = r;
  return rank;
}

/* true when every column's values are one constant (PageRank transition, ones) */
static bool column_constant(const Csr &A, std::vector<double> *s) {
  s->assign((size_t)A.ncols, 0.0);
  std::vector<char> seen((size_t)A.ncols, 0);
  for (size_t p = 0; p < A.col.size(); ++p) {
    const int32_t c = A.col[p];
    if (!seen[c]) seen[c] = 1, (*s)[c] = A.val[p];
    else if ((*s)[c] != A.val[p]) return false;
  }
  return true;
}

static void split(const Csr &A, int K, int nwarps, HubPart *H, Csr *rest) {
  const std::vector<int32_t> rank = rank_of_columns(A);
  K = std::min(K, A.ncols);
  H->K = K;
  H->hubcol.assign((size_t)K, 0);
  for (int32_t j = 0; j < A.ncols; ++j)
    if (rank[j] < K) H->hubcol[rank[j]] = j;
  std::vector<double> s;
  const bool colconst = column_constant(A, &s);
  if (colconst) {
    H->hubscale.resize((size_t)K);
    for (int k = 0; k < K; ++k) H->hubscale[k] = s[H->hubcol[k]];
  }
  /* hub nonzeros by row, in column order (ranks are not: sort each row's pairs by column) */
  rest->nrows = A.nrows, rest->ncols = A.ncols;
  rest->rowptr.assign((size_t)A.nrows + 1, 0);
  rest->col.clear(), rest->val.clear();
  std::vector<int32_t> hrow_ptr(1, 0), hrow_id;
  std::vector<uint16_t> hrank;
  std::vector<double> hval;
  for (int32_t i = 0; i < A.nrows; ++i) {
    const size_t h0 = hrank.size();
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; ++p) {
      if (rank[A.col[p]] < K) {
        hrank.push_back((uint16_t)rank[A.col[p]]);
        hval.push_back(A.val[p]);
      } else {
        rest->col.push_back(A.col[p]);
        rest->val.push_back(A.val[p]);
      }
    }
    rest->rowptr[i + 1] = (int32_t)rest->col.size();
    if (hrank.size() > h0) hrow_id.push_back(i), hrow_ptr.push_back((int32_t)hrank.size());
  }
  const int64_t hnnz = (int64_t)hrank.size();
  const int32_t target = (int32_t)std::max<int64_t>(256, hnnz / ((int64_t)nwarps * 8));
  /* pseudo-rows: a row longer than target is cut into pieces of target nonzeros */
  H->rowptr.assign(1, 0);
  H->out.clear(), H->chunk.assign(1, 0), H->split_row.clear(), H->split_first.clear();
  H->nparts = 0;
  int32_t in_chunk = 0;
  for (size_t r = 0; r + 1 < hrow_ptr.size(); ++r) {
    const int32_t b = hrow_ptr[r], e = hrow_ptr[r + 1];
    if (e - b > target) {
      H->split_row.push_back(hrow_id[r]);
      H->split_first.push_back(H->nparts);
      for (int32_t q = b; q < e; q += target) {
        if (in_chunk > 0) H->chunk.push_back((int32_t)H->out.size()), in_chunk = 0; /* a piece is its own chunk */
        H->out.push_back(~H->nparts++);
        H->rowptr.push_back(std::min(e, q + target));
        H->chunk.push_back((int32_t)H->out.size());
      }
      continue;
    }
    H->out.push_back(hrow_id[r]);
    H->rowptr.push_back(e);
    in_chunk += e - b;
    if (in_chunk >= target) H->chunk.push_back((int32_t)H->out.size()), in_chunk = 0;
  }
  if (in_chunk > 0) H->chunk.push_back((int32_t)H->out.size());
  H->split_first.push_back(H->nparts);
  H->rank.swap(hrank);
  if (colconst) H->val.clear();
  else H->val.swap(hval);
}

/* ---- the hub part on the device --------------------------------------------------------------------- */

/* xhub[k] = x[hubcol[k]] (times scale[k] for column-constant values: the same product bits) */
__global__ void hub_stage_kernel(int K, const int *__restrict__ hubcol, const double *__restrict__ scale,
                                 const double *__restrict__ x, double *__restrict__ xhub) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < K) xhub[k] = scale ? x[hubcol[k]] * scale[k] : x[hubcol[k]];
}

/* One warp per chunk (static round robin), 32 nonzeros per step: lane l takes nonzero base+l, its
 * pseudo-row is the count of the 32 next row ends <= it (at most 31: every pseudo-row is nonempty),
 * a segmented warp scan sums each row's lanes, the lane that ends a row adds the sum (+ the carry of
 * the row's earlier steps) to y (whole rows: no other warp writes it) or to its part slot. */
template <bool HAS_VAL>
__global__ void __launch_bounds__(HUB_THREADS)
hub_kernel(int nchunks, const int *__restrict__ chunk, const int *__restrict__ rowptr, const int *__restrict__ out,
           const unsigned short *__restrict__ rank, const double *__restrict__ val, const double *__restrict__ xhub, int K,
           double *y, double *__restrict__ part) {
  extern __shared__ double s_x[];
  for (int i = threadIdx.x; i < K; i += HUB_THREADS) s_x[i] = xhub[i];
  __syncthreads();
  const int lane = threadIdx.x & 31, nw = gridDim.x * (HUB_THREADS / 32);
  for (int c = blockIdx.x * (HUB_THREADS / 32) + (int)(threadIdx.x >> 5); c < nchunks; c += nw) {
    int r = chunk[c];
    const int rend = chunk[c + 1], p1 = rowptr[rend];
    double carry = 0.0;
    for (int base = rowptr[r]; base < p1; base += 32) {
      const int p = base + lane;
      double v = 0.0;
      if (p < p1) v = HAS_VAL ? val[p] * s_x[rank[p]] : s_x[rank[p]];
      const int e = r + 1 + lane <= rend ? rowptr[r + 1 + lane] : INT_MAX;
      int k = 0;
#pragma unroll
      for (int step = 16; step > 0; step >>= 1)
        if (__shfl_sync(FULL, e, k + step - 1) <= p) k += step;
      double s = v;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const double t = __shfl_up_sync(FULL, s, d);
        const int kk = __shfl_up_sync(FULL, k, d);
        if (lane >= d && kk == k) s += t;
      }
      const int ek = __shfl_sync(FULL, e, k);
      const double total = k == 0 ? carry + s : s;
      if (p == ek - 1) {
        const int o = out[r + k];
        if (o >= 0) y[o] += total;
        else part[~o] = total;
      }
      const double last = __shfl_sync(FULL, total, 31);
      const int last_ends = __shfl_sync(FULL, (int)(p == ek - 1), 31);
      carry = last_ends ? 0.0 : last;
      r += __popc(__ballot_sync(FULL, e <= base + 32));
    }
  }
}

/* y[split_row[i]] += its parts, in order */
__global__ void hub_fixup_kernel(int nsplit, const int *__restrict__ split_row, const int *__restrict__ split_first,
                                 const double *__restrict__ part, double *y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nsplit) return;
  double s = 0.0;
  for (int q = split_first[i]; q < split_first[i + 1]; ++q) s += part[q];
  y[split_row[i]] += s;
}

template <class T>
static T *upload(const std::vector<T> &v) {
  T *d = nullptr;
  CK(cudaMalloc(&d, sizeof(T) * std::max<size_t>(1, v.size())));
  if (!v.empty()) CK(cudaMemcpy(d, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return d;
}

struct HubDev {
  int K, nchunks, nsplit, grid;
  int *hubcol, *chunk, *rowptr, *out, *split_row, *split_first;
  unsigned short *rank;
  double *scale, *val, *xhub, *part;
};

static HubDev hub_upload(const HubPart &H) {
  HubDev d;
  d.K = H.K, d.nchunks = (int)H.chunk.size() - 1, d.nsplit = (int)H.split_row.size();
  d.hubcol = upload(H.hubcol), d.chunk = upload(H.chunk), d.rowptr = upload(H.rowptr), d.out = upload(H.out);
  d.split_row = upload(H.split_row), d.split_first = upload(H.split_first);
  d.rank = upload(H.rank);
  d.scale = H.hubscale.empty() ? nullptr : upload(H.hubscale);
  d.val = H.val.empty() ? nullptr : upload(H.val);
  CK(cudaMalloc(&d.xhub, sizeof(double) * std::max(1, H.K)));
  CK(cudaMalloc(&d.part, sizeof(double) * std::max(1, H.nparts)));
  const size_t dyn = sizeof(double) * (size_t)H.K;
  int per_sm = 0, dev = 0, nsm = 0;
  for (auto f : {hub_kernel<true>, hub_kernel<false>}) {
    CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
    CK(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  }
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, d.val ? hub_kernel<true> : hub_kernel<false>, HUB_THREADS, dyn));
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
  d.grid = std::max(1, per_sm * nsm);
  return d;
}

static void hub_free(HubDev &d) {
  for (void *p : {(void *)d.hubcol, (void *)d.chunk, (void *)d.rowptr, (void *)d.out, (void *)d.split_row, (void *)d.split_first,
                  (void *)d.rank, (void *)d.scale, (void *)d.val, (void *)d.xhub, (void *)d.part})
    if (p) CK(cudaFree(p));
}

/* y += hub part * x */
static void hub_spmv(const HubDev &d, const double *x, double *y) {
  if (d.K == 0 || d.nchunks == 0) return;
  hub_stage_kernel<<<(d.K + 255) / 256, 256, 0, g_stream>>>(d.K, d.hubcol, d.scale, x, d.xhub);
  const size_t dyn = sizeof(double) * (size_t)d.K;
  if (d.val)
    hub_kernel<true><<<d.grid, HUB_THREADS, dyn, g_stream>>>(d.nchunks, d.chunk, d.rowptr, d.out, d.rank, d.val, d.xhub, d.K, y, d.part);
  else
    hub_kernel<false><<<d.grid, HUB_THREADS, dyn, g_stream>>>(d.nchunks, d.chunk, d.rowptr, d.out, d.rank, nullptr, d.xhub, d.K, y, d.part);
  if (d.nsplit) hub_fixup_kernel<<<(d.nsplit + 127) / 128, 128, 0, g_stream>>>(d.nsplit, d.split_row, d.split_first, d.part, y);
  CK(cudaGetLastError());
}

/* ---- our kernels and cuSPARSE ---------------------------------------------------------------------- */

/* the whole of A (crux (0,0)) on cold kernel k, packed (AUTO; the merge kernel reads the pack) */
static mx_device *ours_upload(const Csr &A, mx_cold_kernel k, mx_format *F) {
  const mx_csr a = {A.nrows, A.ncols, A.rowptr.data(), A.col.data(), A.val.data()};
  mx_device *D = nullptr;
  const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  if (mx_format_build_borrow(&a, mx_crux{0, 0}, MX_MODE_AUTO, F) != MX_OK || mx_device_upload_xhot(F, k, 0, &D) ||
      mx_device_cold_kernel(D) != k || mx_device_compress(D, &rq)) {
    fprintf(stderr, "upload/compress failed: %s\n", mx_device_last_error());
    exit(2);
  }
  return D;
}

static void ours_spmv(mx_device *D, const double *x, double *y) {
  if (mx_device_spmv(D, x, nullptr, y, g_stream)) {
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

static bool make_matrix(const std::string &item, Csr *A) {
  const size_t at = item.find('@');
  const std::string spec = item.substr(0, at), values = at == std::string::npos ? "as" : item.substr(at + 1);
  mx_io_csr B;
  char err[512];
  memset(&B, 0, sizeof B);
  if (mx_gen(spec.c_str(), 0, &B, err, sizeof err)) {
    fprintf(stderr, "skip %s: %s\n", item.c_str(), err);
    return false;
  }
  if (!mx_csr32_take(&B, A, item.c_str())) return false;
  std::vector<int32_t> cnt((size_t)A->ncols, 0);
  for (int32_t c : A->col) cnt[c]++;
  for (size_t p = 0; p < A->val.size(); ++p) {
    if (values == "ones") A->val[p] = 1.0;
    else if (values == "pagerank") A->val[p] = 1.0 / cnt[A->col[p]];
    else if (values != "as") {
      fprintf(stderr, "skip %s: values as, ones or pagerank\n", item.c_str());
      return false;
    }
  }
  return true;
}

static std::vector<double> reference(const Csr &A, const std::vector<double> &x) {
  std::vector<double> y((size_t)A.nrows);
  for (int32_t i = 0; i < A.nrows; ++i) {
    double s = 0;
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; ++p) s += A.val[p] * x[A.col[p]];
    y[i] = s;
  }
  return y;
}

static bool run_one(const std::string &item, const std::vector<int> &Ks, int nwarps, int warmup, int reps) {
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
    mx_format F;
    mx_device *D = ours_upload(A, k, &F);
    ok = timed(k == MX_COLD_MERGE ? "whole: merge packed" : "whole: segment packed", [&] { ours_spmv(D, dx, dy); }, dy, &ref, A.nrows,
               warmup, reps, &t) && ok;
    best_ours = std::min(best_ours, t);
    mx_device_free(D);
    mx_format_free(&F);
  }
  printf("    whole: best ours / best cuSPARSE = %.3fx\n", best_cusparse / best_ours);
  for (int K : Ks) {
    HubPart H;
    Csr rest;
    split(A, K, nwarps, &H, &rest);
    printf("  K %d: hub part %d nnz (%.1f%%), %zu pseudo-rows, %zu chunks, %zu split rows, values %s\n", H.K, H.nnz(),
           100.0 * H.nnz() / std::max(1, A.nnz()), H.out.size(), H.chunk.size() - 1, H.split_row.size(),
           H.val.empty() ? (H.hubscale.empty() ? "folded (ones)" : "folded (column constants)") : "plain");
    HubDev hd = hub_upload(H);
    timed("hub part alone", [&] { hub_spmv(hd, dx, dy); }, dy, nullptr, A.nrows, warmup, reps, &t);
    for (mx_cold_kernel k : {MX_COLD_MERGE, MX_COLD_SEGMENT}) {
      mx_format F;
      mx_device *D = ours_upload(rest, k, &F);
      timed(k == MX_COLD_MERGE ? "rest alone: merge packed" : "rest alone: segment packed", [&] { ours_spmv(D, dx, dy); }, dy,
            nullptr, A.nrows, warmup, reps, &t);
      ok = timed(k == MX_COLD_MERGE ? "split: rest merge + hub" : "split: rest segment + hub",
                 [&] {
                   ours_spmv(D, dx, dy);
                   hub_spmv(hd, dx, dy);
                 },
                 dy, &ref, A.nrows, warmup, reps, &t) && ok;
      printf("    split (%s) vs best cuSPARSE %.3fx, vs best ours whole %.3fx\n", k == MX_COLD_MERGE ? "merge" : "segment",
             best_cusparse / t, best_ours / t);
      mx_device_free(D);
      mx_format_free(&F);
    }
    hub_free(hd);
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
    else if (!strcmp(argv[i], "-K") && i + 1 < argc) {
      Ks.clear();
      std::string list = argv[++i];
      for (char *t = strtok(&list[0], " ,"); t; t = strtok(nullptr, " ,")) Ks.push_back(std::min(atoi(t), 65536));
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
  const int nwarps = prop.multiProcessorCount * (2048 / 32);
  int wrong = 0;
  for (const std::string &item : items) wrong += !run_one(item, Ks, nwarps, warmup, reps);
  return wrong ? 1 : 0;
}
