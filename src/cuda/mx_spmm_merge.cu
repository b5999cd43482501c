/* mx_spmm_merge.cu - the SpMM's 2-column panel on a merge plan (issue 43): the merge SpMV's tiles
 * (D->merge_coord, mx_cold_merge.cuh) with one 16-byte gather of the panel row and two products a
 * nonzero. On power-law rows the lanes-per-row panel kernel (mx_spmm.cu) is out of balance and k
 * SpMVs gather B twice; the merge tiles balance rows + nonzeros per block and gather each row of
 * the panel once (docs/performance.md, "Many vectors").
 *
 * Ownership and order: as mx_cold_merge_kernel's with carries by the fixup kernel, per column:
 * tile t consumes merge items [t*TILE, (t+1)*TILE); the thread that consumes the end of row r
 * writes both of its sums, once; the row open at a tile's end leaves its carries in
 * carry_row[t], carry0[t], carry1[t], which mx_merge_fixup_launch adds in tile order, a column at
 * a time. The products are the SpMV's (val times the same B value), the tiles, scan and carry
 * order the same, so column j of C is bitwise the merge SpMV of column j of B. No atomics. */
#include "mx_cold_merge.cuh"
#include "mx_cold_pack_dev.h"
#include "mx_scratch.cuh"

/* s_prod[i] = value(n0+i) * Bp2[col(n0+i)] for i < n1-n0 <= MX_MERGE_TILE through decoder Dec (the
 * plain CSR, x-hot codes read through xhot_col; or a pack, whose columns are original), the column
 * loads aligned to 32 as mx_stage_products_aligned's, every load before the first gather */
template <class Dec>
__device__ __forceinline__ void merge2_stage(const Dec &dec, const int *__restrict__ col, const double *__restrict__ val,
                                             const int *__restrict__ xhot_col, const double2 *__restrict__ Bp2, int s0, int s1, double2 *prod) {
  const int a0 = s0 & ~31;
  int c[MX_MERGE_ITEMS + 1];
  typename Dec::raw_t v[MX_MERGE_ITEMS + 1];
#pragma unroll
  for (int i = 0; i <= MX_MERGE_ITEMS; ++i) {
    const int g = a0 + i * MX_MERGE_THREADS + (int)threadIdx.x;
    const bool in = g >= s0 && g < s1;
    c[i] = in ? dec.col_at(col, g) : -1;
    v[i] = in ? dec.raw_at(val, g) : (typename Dec::raw_t)0;
  }
#pragma unroll
  for (int i = 0; i <= MX_MERGE_ITEMS; ++i)
    if (c[i] != -1) {
      const double2 b = __ldg(Bp2 + mx_col_original(c[i], xhot_col));
      prod[a0 + i * MX_MERGE_THREADS + (int)threadIdx.x - s0] = dec.value(v[i], c[i]) * b;
    }
}

template <class Dec>
__global__ void __launch_bounds__(MX_MERGE_THREADS, MX_SPMM_MERGE_MIN_BLOCKS)
mx_spmm_merge2_kernel(const int *__restrict__ rowptr, const int *__restrict__ col, const double *__restrict__ val,
                      const int *__restrict__ xhot_col, const int2 *__restrict__ coord, const double2 *__restrict__ Bp2, int kb,
                      double *__restrict__ C, long long ldc, int *__restrict__ carry_row, double *__restrict__ carry0,
                      double *__restrict__ carry1, const Dec dec) {
  __shared__ double2 s_prod[MX_MERGE_TILE];
  __shared__ int s_rowend[MX_MERGE_TILE + 1];
  __shared__ int s_wkey_last[MX_MERGE_THREADS / 32], s_wkey_first[MX_MERGE_THREADS / 32];
  __shared__ double2 s_wval[MX_MERGE_THREADS / 32];
  __shared__ double2 s_incl[MX_MERGE_THREADS];

  const int2 c0 = coord[blockIdx.x], c1 = coord[blockIdx.x + 1];
  const int r0 = c0.x, n0 = c0.y, tile_rows = c1.x - r0, tile_nnz = c1.y - n0;
  const int tile_items = tile_rows + tile_nnz;
  merge2_stage(dec, col, val, xhot_col, Bp2, n0, n0 + tile_nnz, s_prod);
  for (int i = threadIdx.x; i < tile_rows; i += MX_MERGE_THREADS) s_rowend[i] = dec.row_at(rowptr, r0 + 1 + i);
  if (threadIdx.x == 0) s_rowend[tile_rows] = INT_MAX; /* past the tile's last row end: nonzeros only */
  __syncthreads();

  const int diag = min((int)threadIdx.x * MX_MERGE_ITEMS, tile_items);
  const int2 start = merge_search(diag, s_rowend, tile_rows, n0, tile_nnz);
  const double2 zero = make_double2(0.0, 0.0);
  const merge_state<double2> part = merge_consume<false>(start.x, start.y, tile_items, n0, zero, s_rowend, s_prod, (double2 *)nullptr);
  const int key = r0 + part.r;
  const double2 incl = block_segmented_scan(key, part.run, s_wkey_last, s_wkey_first, s_wval);
  s_incl[threadIdx.x] = incl;
  __syncthreads();
  const double2 carry_in = threadIdx.x > 0 ? s_incl[threadIdx.x - 1] : zero;
  double2 *s_sum = s_prod + tile_nnz; /* the row sums past the products, as the SpMV's */
  merge_consume<true>(start.x, start.y, tile_items, n0, carry_in, s_rowend, s_prod, s_sum);
  __syncthreads();
  for (int i = threadIdx.x; i < tile_rows; i += MX_MERGE_THREADS) {
    const double2 sum = s_sum[i];
    C[r0 + i] = sum.x;
    if (kb > 1) C[ldc + r0 + i] = sum.y;
  }
  if (threadIdx.x == MX_MERGE_THREADS - 1) {
    carry_row[blockIdx.x] = key;
    carry0[blockIdx.x] = incl.x;
    carry1[blockIdx.x] = incl.y;
  }
}

template <class Dec>
static int merge2_launch(const mx_device *D, int kb, const double2 *Bp2, double *C, long long ldc, int *carry_row, double *carry0,
                          double *carry1, cudaStream_t s, const Dec &dec) {
  static bool carveout = false; /* MX_SPMM_MERGE_MIN_BLOCKS blocks of 30 KB, the rest L1 (mx_tuning.h) */
  if (!carveout) MX_CUDA_TRY(cudaFuncSetAttribute(mx_spmm_merge2_kernel<Dec>, cudaFuncAttributePreferredSharedMemoryCarveout, MX_SPMM_MERGE2_CARVEOUT));
  carveout = true;
  mx_spmm_merge2_kernel<Dec><<<D->merge_ntiles, MX_MERGE_THREADS, 0, s>>>(D->cold_rowptr, D->cold_col, D->cold_val, D->xhot_col, D->merge_coord,
                                                                         Bp2, kb, C, ldc, carry_row, carry0, carry1, dec);
  return 0;
}

/* the launch through the decoder of D's pack encodings (mx_pack_dispatch) */
struct merge2_packed_launch {
  const mx_device *D;
  int kb;
  const double2 *Bp2;
  double *C;
  long long ldc;
  int *carry_row;
  double *carry0, *carry1;
  cudaStream_t s;
  template <int VE, int IE> int run() const {
    return merge2_launch(D, kb, Bp2, C, ldc, carry_row, carry0, carry1, s, mx_pack_decoder<VE, IE>(D->pack));
  }
};

int mx_spmm_merge_panel2(const mx_device *D, int kb, const double2 *Bp2, double *C, long long ldc, bool packed, cudaStream_t s) {
  if (D->cold != MX_COLD_MERGE || !D->merge_coord) return mx_fail("mx_spmm_merge_panel2: D has no merge plan");
  if (packed && !mx_cold_pack_dev_active(D)) return mx_fail("mx_spmm_merge_panel2: D has no pack in use");
  if (D->nrows == 0) return 0;
  const int ntiles = D->merge_ntiles;
  void *carries = nullptr; /* carry rows, then the two columns' carry values */
  bool pooled = false;
  const size_t ints = ((size_t)ntiles + 1) & ~(size_t)1; /* the doubles 8-byte aligned */
  if (mx_scratch_malloc(&carries, sizeof(int) * ints + 2 * sizeof(double) * (size_t)ntiles, s, true, &pooled, "SpMM: merge tiles' carries"))
    return 1;
  int *carry_row = (int *)carries;
  double *carry0 = (double *)(carry_row + ints), *carry1 = carry0 + ntiles;
  int rc = packed ? mx_pack_dispatch(D->pack, merge2_packed_launch{D, kb, Bp2, C, ldc, carry_row, carry0, carry1, s})
                  : merge2_launch(D, kb, Bp2, C, ldc, carry_row, carry0, carry1, s, mx_dec_plain());
  if (!rc) rc = mx_cuda_check(cudaGetLastError(), "SpMM merge panel kernel");
  if (!rc) rc = mx_merge_fixup_launch(ntiles, D->nrows, carry_row, carry0, C, s);
  if (!rc && kb > 1) rc = mx_merge_fixup_launch(ntiles, D->nrows, carry_row, carry1, C + ldc, s);
  mx_scratch_free(carries, s, pooled);
  return rc;
}
