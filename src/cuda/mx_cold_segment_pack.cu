/* mx_cold_segment_pack.cu - the segment kernel (mx_cold_segment.cuh) on the packed cold CSR: one
 * instantiation per (value, column) encoding and tuning variant, in a translation unit of its own. */
#include <type_traits>
#include "mx_cold_segment.cuh"

/* ---- the packed form: one instantiation per (value, column) encoding, x-hot off ------------------- */

/* The segment kernel on the packed form is mx_cold_segment_kernel with the packed decoder and x-hot
 * off, compiled for the blocks per SM below. Products, slots and summation order are the plain
 * kernel's, so y is bitwise the same. The kernel is bound by the latency of its load -> gather -> sum
 * chain per block, not by its load instructions: staging the 1/2-byte arrays in shared memory by
 * cp.async was slower than the per-element loads (docs/performance.md, "Cold kernels"). */

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

/* which packed kernel runs (tuning A/B; mx_cold_pack_set_variant): its blocks per SM, lane-group
 * rule and staging. 0 as mx_pack_minb and mx_pack_vec8 say; 1 every encoding at 6 blocks per SM,
 * 2 every encoding at 8; 3, 4, 5: lane groups by gk = 2 (the rule before MX_SEG_GROUP_K), 8, 32
 * instead of MX_SEG_GROUP_K (other summation orders: not bitwise the plain kernel's y, for timing
 * only); 6 strided staging for every encoding, 7 vectorized staging for every encoding (the same
 * products and sums: bitwise the plain kernel's y, like 0-2) */
enum pack_staging { STAGE_RULE, STAGE_STRIDED, STAGE_VEC8 };
struct pack_variant {
  int minb;          /* 6 or 8; 0: mx_pack_minb's */
  int gk;            /* the lane-group rule's gk (seg_rows_from_shared) */
  pack_staging stg;  /* STAGE_RULE: mx_pack_vec8's */
};
static const pack_variant pack_variants[MX_PACK_VARIANTS] = {
    {0, MX_SEG_GROUP_K, STAGE_RULE}, {6, MX_SEG_GROUP_K, STAGE_RULE}, {8, MX_SEG_GROUP_K, STAGE_RULE},
    {0, 2, STAGE_RULE},              {0, 8, STAGE_RULE},              {0, 32, STAGE_RULE},
    {0, MX_SEG_GROUP_K, STAGE_STRIDED}, {0, MX_SEG_GROUP_K, STAGE_VEC8}};
static int g_pack_variant = 0;

extern "C" int mx_cold_pack_set_variant(int v) {
  const int old = g_pack_variant;
  if (v >= 0 && v < MX_PACK_VARIANTS) g_pack_variant = v;
  return old;
}

template <class Dec, int MINB, class Stg, bool SPLIT = true>
static int packed_launch_mb(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s, const Dec &dec) {
  static bool carveout = false; /* 8 blocks of 26.7 KB need the largest shared-memory carveout */
  if (MINB > 6 && !carveout) {
    MX_CUDA_TRY(cudaFuncSetAttribute(mx_cold_segment_kernel<MX_XH_OFF, Dec, MINB, SPLIT, Stg>, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    carveout = true;
  }
  static bool tuned = false; /* MX_SEG_CARVEOUT, where set, overrides it */
  if (mx_cold_carveout_once(mx_cold_segment_kernel<MX_XH_OFF, Dec, MINB, SPLIT, Stg>, MX_COLD_SEGMENT, &tuned)) return 1;
  mx_cold_segment_kernel<MX_XH_OFF, Dec, MINB, SPLIT, Stg><<<D->seg_nblocks, MX_SEG_THREADS, 0, s>>>(
      D->cold_nnz, D->cold_rowptr, D->cold_col, D->cold_val, D->seg_plan, x, nullptr, z, y, dec, pack_variants[g_pack_variant].gk, D->seg_parts);
  return 0;
}

/* the packed kernel with staging Stg at minb (6 or 8) blocks per SM */
template <class Dec, class Stg>
static int packed_launch_stg(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s, const Dec &dec,
                             int minb) {
  if (minb == 8) return packed_launch_mb<Dec, 8, Stg>(D, x, z, y, s, dec);
  return packed_launch_mb<Dec, 6, Stg>(D, x, z, y, s, dec);
}

/* y = C x + z from the packed form (mx_cold_pack_dev_active(D) holds), decoder by mx_pack_dispatch */
struct packed_segment_launch {
  const mx_device *D;
  const double *x, *z;
  double *y;
  cudaStream_t s;
  template <int VE, int IE>
  int run() const {
    typedef mx_dec_pack<VE, IE> Dec;
    const Dec dec = mx_pack_decoder<VE, IE>(D->pack);
    typedef typename std::conditional<(bool)mx_pack_vec8<VE, IE>::value, mx_seg_stage_vec8, mx_seg_stage_strided>::type RuleStg;
    /* the rule's kernel without the split-row code where no row is long enough to split; the A/B
     * variants 1-7 always carry that code, which alone slows a stencil (docs/performance.md) */
    if (g_pack_variant == 0 && !D->seg_split)
      return packed_launch_mb<Dec, (int)mx_pack_minb<VE, IE>::value, RuleStg, false>(D, x, z, y, s, dec);
    const pack_variant &pv = pack_variants[g_pack_variant];
    const int minb = pv.minb == 0 ? (int)mx_pack_minb<VE, IE>::value : pv.minb;
    const bool vec8 = pv.stg == STAGE_RULE ? (bool)mx_pack_vec8<VE, IE>::value : pv.stg == STAGE_VEC8;
    if (vec8) return packed_launch_stg<Dec, mx_seg_stage_vec8>(D, x, z, y, s, dec, minb);
    return packed_launch_stg<Dec, mx_seg_stage_strided>(D, x, z, y, s, dec, minb);
  }
};

int mx_cold_segment_packed_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  const double *xk; /* x, or xs under COLCONST */
  return mx_cold_pack_dev_x(D, x, s, &xk) || mx_pack_dispatch(D->pack, packed_segment_launch{D, xk, z, y, s});
}
