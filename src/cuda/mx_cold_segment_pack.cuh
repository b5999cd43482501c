/* mx_cold_segment_pack.cuh - the segment kernel (mx_cold_segment.cuh) on the packed cold CSR: the
 * launch of one (value, column) encoding's instantiation, included by the translation units that
 * instantiate them. CUDA loads a module's code, in proportion to its size, at the first launch of
 * any of its kernels: a pack's first product loads only its value encoding's module
 * (mx_cold_segment_pack_<encoding>.cu: the rule's kernels, with and without the split-row code),
 * and the tuning A/B's variants sit in mx_cold_segment_pack_ab.cu (docs/performance.md, "Plan
 * engine costs"). */
#ifndef MX_COLD_SEGMENT_PACK_CUH
#define MX_COLD_SEGMENT_PACK_CUH
#include <type_traits>
#include "mx_cold_segment.cuh"

/* Blocks per SM the packed kernel is compiled for, per encoding: 8 (32 registers, largest
 * shared-memory carveout) where it measured faster, dict0/delta* and plain/delta8; 6 (40 registers,
 * default carveout; the same code as the plain kernel's template) elsewhere, where 8 lost (plain
 * columns most: the carveout takes their L1). Measured: docs/performance.md, "Cold kernels". */
template <int VE, int IE> struct mx_pack_minb {
  enum { value = (IE != MX_IDX_PLAIN && VE == MX_VAL_DICT0) || (IE == MX_IDX_DELTA8 && VE == MX_VAL_PLAIN) ? 8 : 6 };
};

/* The packed kernel's staging per encoding: vectorized (mx_seg_stage_vec8) where the values are
 * not plain doubles and the columns are deltas, strided elsewhere, where it measured slower
 * (docs/performance.md, "Cold kernels"): a thread's eight 8-byte values or 4-byte columns are two
 * to four vector loads that use half of each sector they touch. */
template <int VE, int IE> struct mx_pack_vec8 {
  enum { value = VE != MX_VAL_PLAIN && IE != MX_IDX_PLAIN };
};
template <int VE, int IE> struct mx_pack_rule_stage {
  typedef typename std::conditional<(bool)mx_pack_vec8<VE, IE>::value, mx_seg_stage_vec8, mx_seg_stage_strided>::type type;
};

/* y = C x + z by the packed kernel of decoder Dec at MINB blocks per SM, staging Stg, with or
 * without the split-row code, lane groups by gk (MX_SEG_GROUP_K in production) */
template <class Dec, int MINB, class Stg, bool SPLIT>
static int mx_packed_segment_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s, const Dec &dec,
                                    int gk) {
  static bool carveout = false; /* 8 blocks of 26.7 KB need the largest shared-memory carveout */
  if (MINB > 6 && !carveout) {
    MX_CUDA_TRY(cudaFuncSetAttribute(mx_cold_segment_kernel<MX_XH_OFF, Dec, MINB, SPLIT, Stg>, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    carveout = true;
  }
  static bool tuned = false; /* MX_SEG_CARVEOUT, where set, overrides it */
  if (mx_cold_carveout_once(mx_cold_segment_kernel<MX_XH_OFF, Dec, MINB, SPLIT, Stg>, MX_COLD_SEGMENT, &tuned)) return 1;
  MX_CUDA_TRY(mx_launch_pdl(true, mx_cold_segment_kernel<MX_XH_OFF, Dec, MINB, SPLIT, Stg>, dim3(D->seg_nblocks),
                            dim3(MX_SEG_THREADS), 0, s, D->cold_nnz, D->cold_rowptr, D->cold_col, D->cold_val, D->seg_plan,
                            x, nullptr, z, y, dec, gk, D->seg_parts, 0));
  return 0;
}

/* The rule's kernel for encodings (VE, IE): blocks per SM and staging as above, the split-row code
 * only where D's longest cold row may be split (it alone slows a stencil: docs/performance.md). */
template <int VE, int IE>
static int mx_packed_segment_rule(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  typedef mx_dec_pack<VE, IE> Dec;
  typedef typename mx_pack_rule_stage<VE, IE>::type Stg;
  const Dec dec = mx_pack_decoder<VE, IE>(D->pack);
  if (D->seg_split) return mx_packed_segment_launch<Dec, (int)mx_pack_minb<VE, IE>::value, Stg, true>(D, x, z, y, s, dec, MX_SEG_GROUP_K);
  return mx_packed_segment_launch<Dec, (int)mx_pack_minb<VE, IE>::value, Stg, false>(D, x, z, y, s, dec, MX_SEG_GROUP_K);
}

/* mx_cold_segment_packed_rule<VE> (mx_cold_pack_dev.h): the column encoding dispatched */
template <int VE>
int mx_cold_segment_packed_rule(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  switch (D->pack->idx_enc) {
    case MX_IDX_DELTA8: return mx_packed_segment_rule<VE, MX_IDX_DELTA8>(D, x, z, y, s);
    case MX_IDX_DELTA16: return mx_packed_segment_rule<VE, MX_IDX_DELTA16>(D, x, z, y, s);
    default: return mx_packed_segment_rule<VE, MX_IDX_PLAIN>(D, x, z, y, s);
  }
}

/* One value encoding's translation unit: its explicit instantiation. */
#define MX_COLD_SEGMENT_PACK_INSTANTIATE(VE) \
  template int mx_cold_segment_packed_rule<VE>(const mx_device *, const double *, const double *, double *, cudaStream_t);

#endif
