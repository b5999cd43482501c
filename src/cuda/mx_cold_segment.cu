/* mx_cold_segment.cu - the segment kernel (mx_cold_segment.cuh) on the plain cold CSR, and the
 * launcher of both forms (the packed one: mx_cold_segment_pack.cu). */
#include "mx_cold_segment.cuh"

template <int XH, class Dec, bool SPLIT>
static int segment_kernel_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s,
                                  const Dec &dec) {
  static bool carveout = false;
  if (mx_cold_carveout_once(mx_cold_segment_kernel<XH, Dec, MX_SEG_MIN_BLOCKS, SPLIT>, MX_COLD_SEGMENT, &carveout)) return 1;
  MX_CUDA_TRY(mx_launch_pdl(true, mx_cold_segment_kernel<XH, Dec, MX_SEG_MIN_BLOCKS, SPLIT>, dim3(D->seg_nblocks),
                            dim3(MX_SEG_THREADS), 0, s, D->cold_nnz, D->cold_rowptr, D->cold_col, D->cold_val, D->seg_plan,
                            x, D->xhot, z, y, dec, MX_SEG_GROUP_K, D->seg_parts, 0));
  return 0;
}

/* the plain kernel with x-hot mode XH, with the split-row code where D may have a row to split */
template <int XH>
static int segment_plain_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  if (D->seg_split) return segment_kernel_launch<XH, mx_dec_plain, true>(D, x, z, y, s, mx_dec_plain());
  return segment_kernel_launch<XH, mx_dec_plain, false>(D, x, z, y, s, mx_dec_plain());
}

int mx_cold_segment_set_carveout(int percent) {
  for (const void *k : {(const void *)mx_cold_segment_kernel<MX_XH_ON, mx_dec_plain, MX_SEG_MIN_BLOCKS, true>,
                        (const void *)mx_cold_segment_kernel<MX_XH_ON, mx_dec_plain, MX_SEG_MIN_BLOCKS, false>})
    MX_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
  return 0;
}

int mx_cold_segment_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  if (D->nrows == 0) return 0;
  if (mx_cold_pack_dev_active(D)) {
    if (mx_cold_segment_packed_launch(D, x, z, y, s)) return 1;
  } else if (D->xhot_mode == MX_XH_ON && D->xhot_cold) {
    if (segment_plain_launch<MX_XH_ON>(D, x, z, y, s)) return 1;
  } else if (segment_plain_launch<MX_XH_OFF>(D, x, z, y, s)) return 1;
  MX_LAUNCH_CHECK("mx_cold_segment_kernel launch");
  return 0;
}
