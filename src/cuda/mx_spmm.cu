/* mx_spmm.cu - C = A B for k dense columns on the GPU (issue 43): the cold CSR on the CUDA cores
 * with a register block of B columns per pass, a DU hot region on the FP64 tensor cores with
 * 8-column slabs of B, an SE hot region on the CUDA cores; or, where the rule says so, one SpMV of D
 * per column.
 *
 * Order and ownership (no floating-point atomics, results bitwise reproducible run to run): the cold
 * kernel writes every row of C (C = cold B); the hot kernel then adds into C at hot_row, each hot
 * row owned by one warp per 8-column slab. A column of C is not bitwise the SpMV of that column
 * (other summation orders); it agrees within rounding (tests: relative error <= 1e-12). */
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"

/* A stored column code as an original column: >= 0 itself, -1 padding (stays -1), <= -2 x-hot rank
 * -2-c (the SpMM reads B in place, never the x-hot buffer). */
__device__ __forceinline__ int spmm_col(int c, const int *__restrict__ xhot_col) {
  return c >= -1 ? c : __ldg(xhot_col + (-2 - c));
}

/* ---- cold: W lanes per row, KB columns of B per pass ------------------------------------------- */

/* Row r = (global thread) / W; its W lanes stride over the row's nonzeros, each accumulating KB
 * columns in registers in nonzero order, then a fixed butterfly sums the lanes; lane u % W writes
 * column u. A row's nonzeros are read once per pass of KB columns (the later passes from L1/L2).
 * Every lane of every warp reaches the butterfly (rows past nrows have no nonzeros). */
template <int W, int KB>
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_cold_kernel(int nrows, int k, const int *__restrict__ rowptr, const int *__restrict__ col,
                    const double *__restrict__ val, const int *__restrict__ xhot_col, const double *__restrict__ B,
                    long long ldb, double *__restrict__ C, long long ldc) {
  const long long row = ((long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x) / W;
  const int lane = threadIdx.x & (W - 1);
  int p0 = 0, p1 = 0;
  if (row < nrows) {
    p0 = __ldg(rowptr + row);
    p1 = __ldg(rowptr + row + 1);
  }
  for (int j0 = 0; j0 < k; j0 += KB) {
    const int kb = min(KB, k - j0);
    const double *Bj = B + (long long)j0 * ldb;
    double acc[KB];
#pragma unroll
    for (int u = 0; u < KB; ++u) acc[u] = 0.0;
    for (int p = p0 + lane; p < p1; p += W) {
      const int c = spmm_col(__ldg(col + p), xhot_col);
      const double v = __ldg(val + p);
#pragma unroll
      for (int u = 0; u < KB; ++u)
        if (u < kb) acc[u] += v * __ldg(Bj + (long long)u * ldb + c);
    }
#pragma unroll
    for (int u = 0; u < KB; ++u) acc[u] = mx_group_sum(acc[u], W);
    if (row < nrows) {
#pragma unroll
      for (int u = 0; u < KB; ++u)
        if (u < kb && (u & (W - 1)) == lane) C[(long long)(j0 + u) * ldc + row] = acc[u];
    }
  }
}

/* ---- hot DU: a warp per (chunk, 8-column slab), mma.m8n8k4 ------------------------------------- */

/* Fragments as the SpMV's DU kernel (mx_hot.cu), with B's 8 columns in place of 8 copies of x: lane
 * holds A[lane>>2][lane&3] (bitmap bit lane) and B[lane&3][lane>>2] = B(du_col[4 blk + (lane&3)],
 * j0 + (lane>>2)); the 8x8 result row lane>>2, columns j0 + 2 (lane&3) + {0, 1}, adds into C. */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_du_kernel(long long nwarps, int nslabs, int k, const int *__restrict__ hot_row, const int *__restrict__ chunkptr,
                  const uint32_t *__restrict__ bitmap, const int *__restrict__ du_col, const int *__restrict__ valptr,
                  const double *__restrict__ du_val, const int *__restrict__ xhot_col, const double *__restrict__ B,
                  long long ldb, double *__restrict__ C, long long ldc) {
  const int lane = threadIdx.x & 31;
  const long long wid = ((long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x) >> 5;
  if (wid >= nwarps) return; /* warp-uniform */
  const int q = (int)(wid / nslabs), j0 = (int)(wid % nslabs) * 8;
  const int jb = j0 + (lane >> 2);
  const double *Bc = B + (long long)(jb < k ? jb : 0) * ldb;
  double d0 = 0.0, d1 = 0.0;
  const int b1 = __ldg(chunkptr + q + 1);
#pragma unroll 4
  for (int blk = __ldg(chunkptr + q); blk < b1; ++blk) {
    const uint32_t bm = __ldg(bitmap + blk);
    const double a = (bm >> lane) & 1u ? __ldg(du_val + __ldg(valptr + blk) + __popc(bm & ((1u << lane) - 1u))) : 0.0;
    const int c = spmm_col(__ldg(du_col + 4 * blk + (lane & 3)), xhot_col);
    const double b = c != -1 && jb < k ? __ldg(Bc + c) : 0.0;
    mx_mma_m8n8k4(d0, d1, a, b);
  }
  const int row = __ldg(hot_row + q * MX_CHUNK_ROWS + (lane >> 2));
  const int j = j0 + 2 * (lane & 3);
  if (row >= 0) {
    if (j < k) C[(long long)j * ldc + row] += d0;
    if (j + 1 < k) C[(long long)(j + 1) * ldc + row] += d1;
  }
}

/* ---- hot SE: a warp per (chunk, 8-column slab), lane = row r (lane & 7) x column group g ----------- */

/* Lane (r, g) sums row r of the chunk for columns j0 + g and j0 + g + 4 in slot order. */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_se_kernel(long long nwarps, int nslabs, int k, const int *__restrict__ hot_row, const int *__restrict__ se_ptr,
                  const int *__restrict__ se_col, const double *__restrict__ se_val, const int *__restrict__ xhot_col,
                  const double *__restrict__ B, long long ldb, double *__restrict__ C, long long ldc) {
  const int lane = threadIdx.x & 31;
  const long long wid = ((long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x) >> 5;
  if (wid >= nwarps) return; /* warp-uniform */
  const int q = (int)(wid / nslabs), j0 = (int)(wid % nslabs) * 8;
  const int r = lane & 7, ja = j0 + (lane >> 3), jc = ja + 4;
  const double *Ba = B + (long long)(ja < k ? ja : 0) * ldb, *Bb = B + (long long)(jc < k ? jc : 0) * ldb;
  const int s0 = __ldg(se_ptr + q), s1 = __ldg(se_ptr + q + 1);
  double acc0 = 0.0, acc1 = 0.0;
  for (int s = s0 + r; s < s1; s += MX_CHUNK_ROWS) {
    const int c = spmm_col(__ldg(se_col + s), xhot_col);
    if (c == -1) continue;
    const double v = __ldg(se_val + s);
    if (ja < k) acc0 += v * __ldg(Ba + c);
    if (jc < k) acc1 += v * __ldg(Bb + c);
  }
  const int row = __ldg(hot_row + q * MX_CHUNK_ROWS + r);
  if (row >= 0) {
    if (ja < k) C[(long long)ja * ldc + row] += acc0;
    if (jc < k) C[(long long)jc * ldc + row] += acc1;
  }
}

/* ---- launchers ------------------------------------------------------------------------------------ */

/* Lanes per cold row: the smallest power of two >= half the mean cold row length, in [2, 32]. */
static int spmm_lanes(const mx_device *D) {
  const double mean = D->nrows > 0 ? (double)D->cold_nnz / D->nrows : 0.0;
  int w = 2;
  while (w < 32 && 2.0 * w < mean) w *= 2;
  return w;
}

template <int W>
static int cold_launch_w(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  const long long blocks = ((long long)D->nrows * W + MX_SPMM_THREADS - 1) / MX_SPMM_THREADS;
  if (k < MX_SPMM_COLS_PER_PASS)
    mx_spmm_cold_kernel<W, 4><<<(unsigned)blocks, MX_SPMM_THREADS, 0, s>>>(D->nrows, k, D->cold_rowptr, D->cold_col, D->cold_val,
                                                                          D->xhot_col, B, ldb, C, ldc);
  else
    mx_spmm_cold_kernel<W, MX_SPMM_COLS_PER_PASS><<<(unsigned)blocks, MX_SPMM_THREADS, 0, s>>>(
        D->nrows, k, D->cold_rowptr, D->cold_col, D->cold_val, D->xhot_col, B, ldb, C, ldc);
  MX_LAUNCH_CHECK("SpMM cold kernel");
  return 0;
}

static int spmm_cold_launch(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  switch (spmm_lanes(D)) {
    case 2: return cold_launch_w<2>(D, k, B, ldb, C, ldc, s);
    case 4: return cold_launch_w<4>(D, k, B, ldb, C, ldc, s);
    case 8: return cold_launch_w<8>(D, k, B, ldb, C, ldc, s);
    case 16: return cold_launch_w<16>(D, k, B, ldb, C, ldc, s);
    default: return cold_launch_w<32>(D, k, B, ldb, C, ldc, s);
  }
}

static int spmm_hot_launch(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (D->mode == MX_HOT_NONE || D->nchunks == 0) return 0;
  const int nslabs = (k + 7) / 8;
  const long long nwarps = (long long)D->nchunks * nslabs;
  const long long blocks = (nwarps * 32 + MX_SPMM_THREADS - 1) / MX_SPMM_THREADS;
  if (blocks > INT32_MAX) return mx_fail("SpMM: %lld hot warps for %d columns exceed one launch", nwarps, k);
  if (D->mode == MX_HOT_DU)
    mx_spmm_du_kernel<<<(unsigned)blocks, MX_SPMM_THREADS, 0, s>>>(nwarps, nslabs, k, D->hot_row, D->du_chunkptr, D->du_bitmap, D->du_col,
                                                                  D->du_valptr, D->du_val, D->xhot_col, B, ldb, C, ldc);
  else
    mx_spmm_se_kernel<<<(unsigned)blocks, MX_SPMM_THREADS, 0, s>>>(nwarps, nslabs, k, D->hot_row, D->se_ptr, D->se_col, D->se_val,
                                                                  D->xhot_col, B, ldb, C, ldc);
  MX_LAUNCH_CHECK("SpMM hot kernel");
  return 0;
}

/* ---- the rule ------------------------------------------------------------------------------------- */

/* Bytes one SpMV of D reads of the matrix: the cold part as its kernel reads it (pack or row
 * patterns where in use) plus the hot part; and the same with the cold part plain (what the SpMM
 * kernels read). */
static void spmm_matrix_bytes(const mx_device *D, double *in_use, double *plain) {
  const double hot = 12.0 * D->hot_nnz + 4.0 * D->nchunks * MX_CHUNK_ROWS;
  *plain = (double)mx_csr_bytes(D->nrows, D->cold_nnz) + hot;
  *in_use = *plain;
  mx_device_pack_info pi;
  if (!D->hub_split && mx_device_compress_info(D, &pi) == 0 && pi.packed && pi.in_use) *in_use = (double)pi.bytes + hot;
}

extern "C" int mx_device_spmm_plan(const mx_device *D, int k, mx_spmm_plan *plan) {
  if (!D || !plan) return mx_fail("mx_device_spmm_plan: NULL argument");
  memset(plan, 0, sizeof *plan);
  plan->k = k;
  if (D->hub_split) { /* the rest by its own rule, the hub part one column at a time */
    if (mx_device_spmm_plan(mx_device_hub_rest(D), k, plan)) return 1;
    plan->hub_per_column = 1;
    return 0;
  }
  double in_use, plain;
  spmm_matrix_bytes(D, &in_use, &plain);
  const double vec = 8.0 * ((double)D->ncols + D->nrows);
  plan->bytes_per_column = (double)k * (in_use + vec);
  plan->bytes_kernel = plain + (double)k * vec;
  plan->kernel = k >= MX_SPMM_MIN_K && plan->bytes_kernel < plan->bytes_per_column;
  plan->lanes_per_row = spmm_lanes(D);
  plan->cols_per_pass = k < MX_SPMM_COLS_PER_PASS ? 4 : MX_SPMM_COLS_PER_PASS;
  plan->hot_mode = D->mode;
  plan->min_k = MX_SPMM_MIN_K;
  /* the smallest k >= MX_SPMM_MIN_K at which the kernel moves fewer bytes (0: none below 2^20) */
  for (int kk = MX_SPMM_MIN_K; kk <= (1 << 20) && !plan->min_k_kernel; kk = kk < 64 ? kk + 1 : 2 * kk)
    if (plain + kk * vec < kk * (in_use + vec)) plan->min_k_kernel = kk;
  return 0;
}

/* The kernels' path: D's plain cold arrays back where a pack released them (they stay from now on:
 * a release frees nothing once D ran an SpMM kernel), then cold, then hot. */
static int spmm_kernels(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (D->pack_released && mx_pack_restore_plain(D, true)) return 1;
  D->spmm_reads_plain = 1;
  return spmm_cold_launch(D, k, B, ldb, C, ldc, s) || spmm_hot_launch(D, k, B, ldb, C, ldc, s);
}

extern "C" int mx_device_spmm(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, void *stream) {
  if (!D) return mx_fail("mx_device_spmm: device format is NULL");
  if (k < 0) return mx_fail("mx_device_spmm: %d columns", k);
  if (k == 0 || D->nrows == 0) return 0;
  if (!C) return mx_fail("mx_device_spmm: C is NULL");
  if (!B && D->ncols > 0) return mx_fail("mx_device_spmm: B is NULL");
  if (ldb < D->ncols || ldc < D->nrows)
    return mx_fail("mx_device_spmm: leading dimensions %lld, %lld below the rows of B (%d) or C (%d)", ldb, ldc, D->ncols, D->nrows);
  cudaStream_t s = (cudaStream_t)stream;
  if (D->hub_split) return mx_device_hub_spmm(D, k, B, ldb, C, ldc, s);
  mx_spmm_plan plan;
  if (mx_device_spmm_plan(D, k, &plan)) return 1;
  if (plan.kernel) return spmm_kernels(D, k, B, ldb, C, ldc, s);
  for (int j = 0; j < k; ++j)
    if (mx_device_spmv(D, B + (long long)j * ldb, nullptr, C + (long long)j * ldc, stream)) return 1;
  return 0;
}

/* Host B and C through device copies made for the call (synchronous). */
extern "C" int mx_device_spmm_host(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, void *stream) {
  if (!D) return mx_fail("mx_device_spmm_host: device format is NULL");
  if (k <= 0 || D->nrows == 0) return k < 0 ? mx_fail("mx_device_spmm_host: %d columns", k) : 0;
  if (!C || (!B && D->ncols > 0)) return mx_fail("mx_device_spmm_host: B or C is NULL");
  if (ldb < D->ncols || ldc < D->nrows) return mx_fail("mx_device_spmm_host: leading dimensions below the rows of B or C");
  cudaStream_t s = (cudaStream_t)stream;
  const size_t m = (size_t)D->nrows, n = (size_t)D->ncols;
  double *dB = nullptr, *dC = nullptr;
  if ((n && mx_cuda_alloc((void **)&dB, sizeof(double) * n * k, "SpMM: device copy of B")) ||
      mx_cuda_alloc((void **)&dC, sizeof(double) * m * k, "SpMM: device copy of C")) {
    if (dB) cudaFree(dB);
    return 1;
  }
  int rc = 0;
  if (n) rc = mx_cuda_check(cudaMemcpy2DAsync(dB, n * sizeof(double), B, (size_t)ldb * sizeof(double), n * sizeof(double), (size_t)k,
                                              cudaMemcpyHostToDevice, s), "SpMM: copying B to the device");
  if (!rc) rc = mx_device_spmm(D, k, dB, n ? (long long)n : 1, dC, (long long)m, stream);
  if (!rc) rc = mx_cuda_check(cudaMemcpy2DAsync(C, (size_t)ldc * sizeof(double), dC, m * sizeof(double), m * sizeof(double), (size_t)k,
                                                cudaMemcpyDeviceToHost, s), "SpMM: copying C to the host");
  if (!rc) rc = mx_cuda_check(cudaStreamSynchronize(s), "SpMM: waiting for the product");
  if (dB) cudaFree(dB);
  cudaFree(dC);
  return rc;
}
