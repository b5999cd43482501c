/* mx_cold_segment_pack_ab.cu - the packed segment kernel's tuning variants 1-7 (cold-pack-bench's
 * A/B, mx_cold_pack_set_variant), every encoding: a module of their own, loaded only by a process
 * that asks for one (mx_cold_segment_pack.cuh). */
#include "mx_cold_segment_pack.cuh"

/* variant v: its blocks per SM, lane-group rule and staging (mx_cold_pack_dev.h). 1 every encoding
 * at 6 blocks per SM, 2 every encoding at 8; 3, 4, 5: lane groups by gk = 2 (the rule before
 * MX_SEG_GROUP_K), 8, 32 instead of MX_SEG_GROUP_K (other summation orders: not bitwise the plain
 * kernel's y, for timing only); 6 strided staging for every encoding, 7 vectorized staging for every
 * encoding (the same products and sums: bitwise the plain kernel's y, like 1 and 2). All carry the
 * split-row code. */
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

/* the variant's kernel with staging Stg at minb (6 or 8) blocks per SM */
template <class Dec, class Stg>
static int variant_launch_stg(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s, const Dec &dec, int minb,
                              int gk) {
  if (minb == 8) return mx_packed_segment_launch<Dec, 8, Stg, true>(D, x, z, y, s, dec, gk);
  return mx_packed_segment_launch<Dec, 6, Stg, true>(D, x, z, y, s, dec, gk);
}

/* y = C x + z by variant v for the decoder mx_pack_dispatch picks */
struct variant_launch {
  const mx_device *D;
  const double *x, *z;
  double *y;
  cudaStream_t s;
  const pack_variant &pv;
  template <int VE, int IE>
  int run() const {
    typedef mx_dec_pack<VE, IE> Dec;
    const Dec dec = mx_pack_decoder<VE, IE>(D->pack);
    const int minb = pv.minb == 0 ? (int)mx_pack_minb<VE, IE>::value : pv.minb;
    const bool vec8 = pv.stg == STAGE_RULE ? (bool)mx_pack_vec8<VE, IE>::value : pv.stg == STAGE_VEC8;
    if (vec8) return variant_launch_stg<Dec, mx_seg_stage_vec8>(D, x, z, y, s, dec, minb, pv.gk);
    return variant_launch_stg<Dec, mx_seg_stage_strided>(D, x, z, y, s, dec, minb, pv.gk);
  }
};

int mx_cold_segment_packed_variant(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s, int v) {
  if (v < 1 || v >= MX_PACK_VARIANTS) return mx_fail("mx_cold_segment_packed_variant: no variant %d", v);
  return mx_pack_dispatch(D->pack, variant_launch{D, x, z, y, s, pack_variants[v]});
}
