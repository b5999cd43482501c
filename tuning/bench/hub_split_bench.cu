/* hub_split_bench - EXPERIMENT (issue 13, power-law target): a product in two passes. The K most used
 * columns ("hubs") form the hub part: their x values (times the column constant of a column-constant
 * matrix) are staged into shared memory once per block, its nonzeros store 16-bit hub ranks, rows
 * longer than HUB_ROW_MAX are cut into pieces, and the rows and pieces, sorted by length, are stored
 * in slices of 32 (sliced ELLPACK, column-major in the slice, padded to the slice's longest row with
 * a rank whose x value is 0): lane l of a warp sums row l of its slice in order, one coalesced rank
 * load and one shared-memory x read per nonzero, and adds the sum to y (or writes a piece's part slot;
 * a fixup kernel, a warp per split row, adds the parts). Every other nonzero stays in the rest part,
 * run by our cold kernels as today (mx_device, crux (0,0), packed). Results and the kernels tried
 * before this one: tuning/results/h100/hub-split-2026-11-26g/README.md.
 *
 * Usage: hub-split-bench [-warmup N] [-reps N] [-K "8192 16384"] SPEC[@ones|@pagerank] ...
 * Prints, per matrix: cusparseSpMV CSR ALG1/ALG2 and the merge and segment kernels on the whole matrix
 * (packed), and per K: the hub part alone (y += and z =), and per cold kernel the rest alone and the
 * split product two ways: rest then hub (y +=), or z = 0, hub (z =), rest with z (y = z + rest x);
 * each product checked against a CPU reference (relative 2-norm error < 1e-12). One x and one y
 * (every matrix here is many times the L2). Experiment knobs: HUB_SIGMA=w sorts the rows by length
 * within windows of w (default: all), HUB_ZALL=1 gives every row a slice lane (z = 0 without a
 * memset). Exit 1 if any product was wrong. */
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
#define HUB_ROW_MAX 64  /* longer rows are cut into pieces (a lane sums at most this many products) */
#define HUB_K_MAX 28000 /* hub x values (+ the padding's 0) in shared memory: 227 KB per block */
#define FULL 0xffffffffu

static cudaStream_t g_stream;

struct Csr {
  int32_t nrows = 0, ncols = 0;
  std::vector<int32_t> rowptr, col;
  std::vector<double> val;
  int32_t nnz() const { return rowptr[nrows]; }
};

/* ---- the hub part on the host ---------------------------------------------------------------------- */

/* Hub part: each nonempty row's nonzeros in the K hub columns, as 16-bit hub ranks (rank K: the
 * padding, x value 0). Rows longer than HUB_ROW_MAX are cut into pieces of HUB_ROW_MAX ("split rows");
 * the rows and pieces, sorted by length (descending, stable), 32 per slice (sliced ELLPACK,
 * column-major in the slice: element j of the slice's row l at slice_off + 32 j + l, padded to
 * slice_len); slice_row: the row of each slice lane, ~(part slot) for a piece, INT_MIN for none. The
 * fixup adds split row i's part slots split_first[i] .. split_first[i+1]-1. */
struct HubPart {
  int K = 0;
  std::vector<int32_t> hubcol;     /* K: hub rank -> column */
  std::vector<double> hubscale;    /* K: the column constant (column-constant values), else empty */
  std::vector<int32_t> slice_off, slice_len, slice_row;
  std::vector<uint16_t> slice_rank;
  std::vector<double> slice_val;   /* empty: every value is folded into the staged x (ones, column constants) */
  std::vector<int32_t> split_row, split_first; /* split rows, their first part slot (+1 sentinel) */
  int64_t nnz = 0, npseudo = 0;
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

/* the pseudo-rows (hub CSR prow_ptr/hrank/hval, written to prow_out) into slices */
static void slice(const std::vector<int32_t> &prow_out, const std::vector<int32_t> &prow_ptr, const std::vector<uint16_t> &hrank,
                  const std::vector<double> &hval, bool keep_val, HubPart *H) {
  const auto len = [&](int32_t r) { return prow_ptr[r + 1] - prow_ptr[r]; };
  const int32_t P = (int32_t)prow_out.size(), ns = (P + 31) / 32;
  std::vector<int32_t> order((size_t)P);
  for (int32_t r = 0; r < P; ++r) order[r] = r;
  /* HUB_SIGMA=w: sort within windows of w pseudo-rows (rows stay near each other: y locality), else all */
  const int32_t sigma = getenv("HUB_SIGMA") && atoi(getenv("HUB_SIGMA")) > 0 ? atoi(getenv("HUB_SIGMA")) : P;
  for (int32_t w = 0; w < P; w += sigma)
    std::stable_sort(order.begin() + w, order.begin() + std::min(P, w + sigma), [&](int32_t a, int32_t b) { return len(a) > len(b); });
  H->npseudo = P;
  H->slice_off.assign((size_t)ns + 1, 0), H->slice_len.assign((size_t)ns, 0), H->slice_row.assign((size_t)ns * 32, INT_MIN);
  for (int32_t s = 0; s < ns; ++s) {
    H->slice_len[s] = len(order[32 * s]);
    H->slice_off[s + 1] = H->slice_off[s] + 32 * H->slice_len[s];
  }
  H->slice_rank.assign((size_t)H->slice_off[ns], (uint16_t)H->K);
  H->slice_val.assign(keep_val ? (size_t)H->slice_off[ns] : 0, 0.0);
  for (int32_t q = 0; q < P; ++q) {
    const int32_t r = order[q], s = q / 32, l = q % 32;
    H->slice_row[q] = prow_out[r];
    for (int32_t j = 0; j < len(r); ++j) {
      const size_t at = (size_t)H->slice_off[s] + 32 * (size_t)j + l;
      H->slice_rank[at] = hrank[prow_ptr[r] + j];
      if (keep_val) H->slice_val[at] = hval[prow_ptr[r] + j];
    }
  }
}

static void split(const Csr &A, int K, HubPart *H, Csr *rest) {
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
  const bool all_rows = getenv("HUB_ZALL") && atoi(getenv("HUB_ZALL")) == 1; /* rows without hub nonzeros too: z = 0 there */
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
    if (hrank.size() > h0 || all_rows) hrow_id.push_back(i), hrow_ptr.push_back((int32_t)hrank.size());
  }
  H->nnz = (int64_t)hrank.size();
  /* pseudo-rows: whole rows, and the pieces of the rows longer than HUB_ROW_MAX */
  std::vector<int32_t> prow_out, prow_ptr(1, 0);
  H->split_row.clear(), H->split_first.clear();
  int32_t nparts = 0;
  for (size_t r = 0; r + 1 < hrow_ptr.size(); ++r) {
    const int32_t b = hrow_ptr[r], e = hrow_ptr[r + 1];
    if (e - b <= HUB_ROW_MAX) {
      prow_out.push_back(hrow_id[r]), prow_ptr.push_back(e);
      continue;
    }
    H->split_row.push_back(hrow_id[r]), H->split_first.push_back(nparts);
    for (int32_t q = b; q < e; q += HUB_ROW_MAX) prow_out.push_back(~nparts++), prow_ptr.push_back(std::min(e, q + HUB_ROW_MAX));
  }
  H->split_first.push_back(nparts);
  slice(prow_out, prow_ptr, hrank, hval, !colconst, H);
}

/* ---- the hub part on the device --------------------------------------------------------------------- */

/* xhub[k] = x[hubcol[k]] (times scale[k] for column-constant values: the same product bits) */
__global__ void hub_stage_kernel(int K, const int *__restrict__ hubcol, const double *__restrict__ scale,
                                 const double *__restrict__ x, double *__restrict__ xhub) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < K) xhub[k] = scale ? x[hubcol[k]] * scale[k] : x[hubcol[k]];
}

/* out[row] = s (STORE: out is z, zeroed, the rest then adds) or out[row] += s (y after the rest) */
template <bool STORE>
__device__ __forceinline__ void hub_put(double *out, int row, double s) {
  if (STORE) out[row] = s;
  else out[row] += s;
}

/* A warp per slice (sl = global warp, + all warps, ...): lane l sums row l of the slice in order (the
 * padding adds x value 0: s + 0.0 == s, and s is never -0.0) and puts the sum into out (a whole row:
 * no other lane writes it) or into its part slot (a piece). The 32 warps of a block share one copy
 * of the hub x values. */
template <bool HAS_VAL, bool STORE>
__global__ void __launch_bounds__(HUB_THREADS)
hub_kernel(int nslices, const int *__restrict__ slice_off, const int *__restrict__ slice_len, const int *__restrict__ slice_row,
           const unsigned short *__restrict__ rank, const double *__restrict__ val, const double *__restrict__ xhub, int K,
           double *out, double *__restrict__ part) {
  extern __shared__ double s_x[]; /* K + 1: the hub x values, then the padding's 0 */
  for (int i = threadIdx.x; i < K; i += HUB_THREADS) s_x[i] = xhub[i];
  if (threadIdx.x == 0) s_x[K] = 0.0;
  __syncthreads();
  const int lane = threadIdx.x & 31, nw = gridDim.x * (HUB_THREADS / 32);
  for (int sl = blockIdx.x * (HUB_THREADS / 32) + (int)(threadIdx.x >> 5); sl < nslices; sl += nw) {
    const int off = slice_off[sl] + lane, len = slice_len[sl];
    double s = 0.0;
    int j = 0;
    for (; j + 4 <= len; j += 4) {
      int rk[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) rk[u] = rank[off + 32 * (j + u)];
#pragma unroll
      for (int u = 0; u < 4; ++u) s += HAS_VAL ? val[off + 32 * (j + u)] * s_x[rk[u]] : s_x[rk[u]];
    }
    for (; j < len; ++j) s += HAS_VAL ? val[off + 32 * j] * s_x[rank[off + 32 * j]] : s_x[rank[off + 32 * j]];
    const int row = slice_row[sl * 32 + lane];
    if (row >= 0) hub_put<STORE>(out, row, s);
    else if (row != INT_MIN) part[~row] = s;
  }
}

/* A warp per split row: lane l sums the row's parts l, l + 32, ... in order, a fixed butterfly adds
 * the 32 lane sums (the same order every run), lane 0 puts the total into out. */
template <bool STORE>
__global__ void hub_fixup_kernel(int nsplit, const int *__restrict__ split_row, const int *__restrict__ split_first,
                                 const double *__restrict__ part, double *out) {
  const int i = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (i >= nsplit) return;
  double s = 0.0;
  for (int q = split_first[i] + lane; q < split_first[i + 1]; q += 32) s += part[q];
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(FULL, s, d);
  if (lane == 0) hub_put<STORE>(out, split_row[i], s);
}

template <class T>
static T *upload(const std::vector<T> &v) {
  T *d = nullptr;
  CK(cudaMalloc(&d, sizeof(T) * std::max<size_t>(1, v.size())));
  if (!v.empty()) CK(cudaMemcpy(d, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return d;
}

struct HubDev {
  int K, nslices, nsplit, grid;
  int *hubcol, *slice_off, *slice_len, *slice_row, *split_row, *split_first;
  unsigned short *rank;
  double *scale, *val, *xhub, *part;
};

#define HUB_KERNELS {hub_kernel<true, true>, hub_kernel<true, false>, hub_kernel<false, true>, hub_kernel<false, false>}

static HubDev hub_upload(const HubPart &H) {
  HubDev d;
  d.K = H.K, d.nslices = (int)H.slice_len.size(), d.nsplit = (int)H.split_row.size();
  d.hubcol = upload(H.hubcol), d.slice_off = upload(H.slice_off), d.slice_len = upload(H.slice_len), d.slice_row = upload(H.slice_row);
  d.split_row = upload(H.split_row), d.split_first = upload(H.split_first);
  d.rank = upload(H.slice_rank);
  d.scale = H.hubscale.empty() ? nullptr : upload(H.hubscale);
  d.val = H.hubscale.empty() ? upload(H.slice_val) : nullptr;
  CK(cudaMalloc(&d.xhub, sizeof(double) * std::max(1, H.K)));
  CK(cudaMalloc(&d.part, sizeof(double) * std::max(1, H.split_first.back())));
  const size_t dyn = sizeof(double) * ((size_t)H.K + 1);
  int per_sm = 0, dev = 0, nsm = 0;
  for (auto f : HUB_KERNELS) {
    CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
    CK(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  }
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hub_kernel<true, false>, HUB_THREADS, dyn));
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
  d.grid = std::max(1, per_sm * nsm);
  return d;
}

static void hub_free(HubDev &d) {
  for (void *p : {(void *)d.hubcol, (void *)d.slice_off, (void *)d.slice_len, (void *)d.slice_row, (void *)d.split_row, (void *)d.split_first,
                  (void *)d.rank, (void *)d.scale, (void *)d.val, (void *)d.xhub, (void *)d.part})
    if (p) CK(cudaFree(p));
}

/* out += hub part * x, or (store) out = hub part * x on the rows with hub nonzeros (the others untouched) */
static void hub_spmv(const HubDev &d, const double *x, double *out, bool store) {
  if (d.K == 0 || d.nslices == 0) return;
  hub_stage_kernel<<<(d.K + 255) / 256, 256, 0, g_stream>>>(d.K, d.hubcol, d.scale, x, d.xhub);
  const size_t dyn = sizeof(double) * ((size_t)d.K + 1);
#define HUB_ARGS d.nslices, d.slice_off, d.slice_len, d.slice_row, d.rank, d.val, d.xhub, d.K, out, d.part
  if (d.val && store) hub_kernel<true, true><<<d.grid, HUB_THREADS, dyn, g_stream>>>(HUB_ARGS);
  else if (d.val) hub_kernel<true, false><<<d.grid, HUB_THREADS, dyn, g_stream>>>(HUB_ARGS);
  else if (store) hub_kernel<false, true><<<d.grid, HUB_THREADS, dyn, g_stream>>>(HUB_ARGS);
  else hub_kernel<false, false><<<d.grid, HUB_THREADS, dyn, g_stream>>>(HUB_ARGS);
#undef HUB_ARGS
  if (d.nsplit && store) hub_fixup_kernel<true><<<(d.nsplit + 7) / 8, 256, 0, g_stream>>>(d.nsplit, d.split_row, d.split_first, d.part, out);
  else if (d.nsplit) hub_fixup_kernel<false><<<(d.nsplit + 7) / 8, 256, 0, g_stream>>>(d.nsplit, d.split_row, d.split_first, d.part, out);
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

static bool run_one(const std::string &item, const std::vector<int> &Ks, int warmup, int reps) {
  Csr A;
  if (!make_matrix(item, &A)) return false;
  std::vector<double> x((size_t)A.ncols);
  for (int32_t j = 0; j < A.ncols; ++j) x[j] = 1.0 + 0.5 * sin(0.37 * j);
  const std::vector<double> ref = reference(A, x);
  double *dx = upload(x), *dy = nullptr, *dz = nullptr;
  CK(cudaMalloc(&dy, sizeof(double) * A.nrows));
  CK(cudaMalloc(&dz, sizeof(double) * A.nrows));
  printf("  %s: %d rows, %d nnz\n", item.c_str(), A.nrows, A.nnz());
  bool ok = true;
  double t = 0, best_cusparse = 1e30, best_ours = 1e30;
  best_cusparse = std::min(best_cusparse, time_cusparse(A, CUSPARSE_SPMV_CSR_ALG1, dx, dy, ref, warmup, reps, &ok));
  best_cusparse = std::min(best_cusparse, time_cusparse(A, CUSPARSE_SPMV_CSR_ALG2, dx, dy, ref, warmup, reps, &ok));
  const int old = mx_cold_pack_set_merge(1);
  for (mx_cold_kernel k : {MX_COLD_MERGE, MX_COLD_SEGMENT}) {
    mx_format F;
    mx_device *D = ours_upload(A, k, &F);
    ok = timed(k == MX_COLD_MERGE ? "whole: merge packed" : "whole: segment packed", [&] { ours_spmv(D, dx, nullptr, dy); }, dy, &ref, A.nrows,
               warmup, reps, &t) && ok;
    best_ours = std::min(best_ours, t);
    mx_device_free(D);
    mx_format_free(&F);
  }
  printf("    whole: best ours / best cuSPARSE = %.3fx\n", best_cusparse / best_ours);
  const bool all_rows = getenv("HUB_ZALL") && atoi(getenv("HUB_ZALL")) == 1;
  for (int K : Ks) {
    HubPart H;
    Csr rest;
    split(A, K, &H, &rest);
    printf("  K %d: hub part %lld nnz (%.1f%%), %lld rows and pieces in %zu slices (padding %.1f%%), %zu split rows, values %s\n",
           H.K, (long long)H.nnz, 100.0 * H.nnz / std::max(1, A.nnz()), (long long)H.npseudo, H.slice_len.size(),
           100.0 * (H.slice_off.back() - H.nnz) / std::max<int64_t>(1, H.nnz), H.split_row.size(),
           H.hubscale.empty() ? "plain" : "folded (column constants)");
    HubDev hd = hub_upload(H);
    timed("hub part alone (y +=)", [&] { hub_spmv(hd, dx, dy, false); }, dy, nullptr, A.nrows, warmup, reps, &t);
    timed("hub part alone (z =)", [&] { hub_spmv(hd, dx, dz, true); }, dz, nullptr, A.nrows, warmup, reps, &t);
    for (mx_cold_kernel k : {MX_COLD_MERGE, MX_COLD_SEGMENT}) {
      mx_format F;
      mx_device *D = ours_upload(rest, k, &F);
      const char *kn = k == MX_COLD_MERGE ? "merge" : "segment";
      char what[96];
      snprintf(what, sizeof what, "rest alone: %s packed", kn);
      timed(what, [&] { ours_spmv(D, dx, nullptr, dy); }, dy, nullptr, A.nrows, warmup, reps, &t);
      snprintf(what, sizeof what, "split: rest %s, then hub y +=", kn);
      ok = timed(what,
                 [&] {
                   ours_spmv(D, dx, nullptr, dy);
                   hub_spmv(hd, dx, dy, false);
                 },
                 dy, &ref, A.nrows, warmup, reps, &t) && ok;
      printf("    split (%s, y +=) vs best cuSPARSE %.3fx, vs best ours whole %.3fx\n", kn, best_cusparse / t, best_ours / t);
      snprintf(what, sizeof what, "split: z = 0, hub z =, rest %s y = z + ...", kn);
      ok = timed(what,
                 [&] {
                   if (!all_rows) CK(cudaMemsetAsync(dz, 0, sizeof(double) * A.nrows, g_stream));
                   hub_spmv(hd, dx, dz, true);
                   ours_spmv(D, dx, dz, dy);
                 },
                 dy, &ref, A.nrows, warmup, reps, &t) && ok;
      printf("    split (%s, z =) vs best cuSPARSE %.3fx, vs best ours whole %.3fx\n", kn, best_cusparse / t, best_ours / t);
      mx_device_free(D);
      mx_format_free(&F);
    }
    hub_free(hd);
  }
  mx_cold_pack_set_merge(old);
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dz));
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
      for (char *t = strtok(&list[0], " ,"); t; t = strtok(nullptr, " ,")) Ks.push_back(std::min(atoi(t), HUB_K_MAX));
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
