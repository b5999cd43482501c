/* mx_spmm_pair.cu - the SpMM's pairs (issue 43): the cold part of A times two columns of B at once
 * by the SpMV's own cold kernel on pairs of values, on the form the SpMV reads (the plain cold CSR
 * or its pack): the segment kernel on double2 (mx_cold_segment.cuh), or the merge kernel's tiles
 * with two sums a row (mx_spmm_merge_panel2). The matrix is read once for two columns and a
 * nonzero's two values of B are one 16-byte gather: where a pack makes the SpMV read fewer matrix
 * bytes than the SpMM kernels (which read the plain arrays), pairs still halve the matrix reads
 * and the gathers' sectors of k SpMVs.
 *
 * Same segments or tiles, same products, same summation order as the SpMV's kernel: column j of C
 * is bitwise the cold SpMV of column j of B (z NULL). Its own translation unit: CUDA loads a
 * module's code at the first launch of any of its kernels, and the SpMV's modules stay small. */
#include "mx_cold_segment.cuh"
#include "mx_scratch.cuh"
#include "mx_spmm_impl.h"

/* Blocks per SM the pair kernel is compiled for: its shared memory (a pair of products per nonzero
 * of a segment, the row pointers) is 45 KB a block, 4 of which fit an SM of the H100/H200 (228 KB). */
#define MX_SPMM_PAIR_MIN_BLOCKS 4

/* Bp2[c] = (B(c, 0), B(c, 1)), each times s_c where s (the pack's column constants: then the
 * decoded value is 1.0 and the product 1.0 * (s_c b) is s_c * b, bitwise, as mx_pack_scale_x's xs
 * makes it for the SpMV) */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_pair_pack(int ncols, const double *__restrict__ B, long long ldb, const double *__restrict__ s, double2 *__restrict__ Bp2) {
  const int c = blockIdx.x * MX_SPMM_THREADS + threadIdx.x;
  if (c >= ncols) return;
  double b0 = __ldg(B + c), b1 = __ldg(B + ldb + c);
  if (s) {
    const double sc = __ldg(s + c);
    b0 = __dmul_rn(sc, b0);
    b1 = __dmul_rn(sc, b1);
  }
  Bp2[c] = make_double2(b0, b1);
}

template <class Dec, bool SPLIT>
static int pair_kernel_launch(const mx_device *D, const double2 *Bp2, double *C, long long ldc, cudaStream_t s, const Dec &dec) {
  static bool carveout = false; /* 4 blocks of 45 KB need most of the SM's shared memory */
  if (!carveout) {
    MX_CUDA_TRY(cudaFuncSetAttribute(mx_cold_segment_kernel<MX_XH_OFF, Dec, MX_SPMM_PAIR_MIN_BLOCKS, SPLIT, mx_seg_stage_strided, double2>,
                                     cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    carveout = true;
  }
  mx_cold_segment_kernel<MX_XH_OFF, Dec, MX_SPMM_PAIR_MIN_BLOCKS, SPLIT, mx_seg_stage_strided, double2>
      <<<D->seg_nblocks, MX_SEG_THREADS, 0, s>>>(D->cold_nnz, D->cold_rowptr, D->cold_col, D->cold_val, D->seg_plan, Bp2, nullptr,
                                                 nullptr, C, dec, MX_SEG_GROUP_K, D->seg_parts, ldc);
  return 0;
}

/* with the split-row code where D's longest cold row may be split, as the SpMV's launch */
template <class Dec>
static int pair_launch(const mx_device *D, const double2 *Bp2, double *C, long long ldc, cudaStream_t s, const Dec &dec) {
  if (D->seg_split) return pair_kernel_launch<Dec, true>(D, Bp2, C, ldc, s, dec);
  return pair_kernel_launch<Dec, false>(D, Bp2, C, ldc, s, dec);
}

/* the launch through the decoder of D's pack encodings (mx_pack_dispatch) */
struct pair_packed_launch {
  const mx_device *D;
  const double2 *Bp2;
  double *C;
  long long ldc;
  cudaStream_t s;
  template <int VE, int IE> int run() const { return pair_launch(D, Bp2, C, ldc, s, mx_pack_decoder<VE, IE>(D->pack)); }
};

bool mx_spmm_pairs_run(const mx_device *D) {
  if (D->hub_split || (D->pack_released && !mx_cold_pack_dev_active(D))) return false;
  if (D->cold == MX_COLD_MERGE) return D->merge_coord != nullptr; /* its pair reads x-hot codes through xhot_col */
  return D->cold == MX_COLD_SEGMENT && D->seg_plan && !(D->xhot_mode == MX_XH_ON && D->xhot_cold);
}

int mx_spmm_pair_cold(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (k % 2 || !mx_spmm_pairs_run(D)) return mx_fail("mx_spmm_pair_cold: %d columns, or D's cold part has no pair kernel", k);
  if (k == 0) return 0;
  const bool packed = mx_cold_pack_dev_active(D);
  const double *scale = packed && D->pack->val_enc == MX_VAL_COLCONST ? D->pack->dict : nullptr;
  double2 *Bp2 = nullptr;
  bool pooled = false;
  if (mx_scratch_malloc((void **)&Bp2, sizeof(double2) * (size_t)std::max(D->ncols, 1), s, true, &pooled, "SpMM: a pair of columns of B"))
    return 1;
  int rc = 0;
  for (int j = 0; j < k && !rc; j += 2) {
    if (D->ncols > 0) {
      mx_spmm_pair_pack<<<(unsigned)((D->ncols + MX_SPMM_THREADS - 1) / MX_SPMM_THREADS), MX_SPMM_THREADS, 0, s>>>(
          D->ncols, B + (long long)j * ldb, ldb, scale, Bp2);
      rc = mx_cuda_check(cudaGetLastError(), "SpMM: a pair of columns of B");
    }
    double *Cj = C + (long long)j * ldc;
    if (!rc && D->cold == MX_COLD_MERGE) rc = mx_spmm_merge_panel2(D, 2, Bp2, Cj, ldc, packed, s);
    else if (!rc) rc = packed ? mx_pack_dispatch(D->pack, pair_packed_launch{D, Bp2, Cj, ldc, s}) : pair_launch(D, Bp2, Cj, ldc, s, mx_dec_plain());
    if (!rc) rc = mx_cuda_check(cudaGetLastError(), "SpMM pair kernel");
  }
  mx_scratch_free(Bp2, s, pooled);
  return rc;
}
