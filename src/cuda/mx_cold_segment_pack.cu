/* mx_cold_segment_pack.cu - the segment kernel (mx_cold_segment.cuh) on the packed cold CSR: which
 * instantiation runs. The kernels sit in one translation unit per value encoding
 * (mx_cold_segment_pack_<encoding>.cu) and one for the tuning variants (mx_cold_segment_pack_ab.cu),
 * so that a pack's first product loads a small module (mx_cold_segment_pack.cuh). */
#include "mx_cold_pack_dev.h"
#include "mx_device_impl.h"

static int g_pack_variant = 0;

extern "C" int mx_cold_pack_set_variant(int v) {
  const int old = g_pack_variant;
  if (v >= 0 && v < MX_PACK_VARIANTS) g_pack_variant = v;
  return old;
}

int mx_cold_segment_packed_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  const double *xk; /* x, or xs under COLCONST */
  if (mx_cold_pack_dev_x(D, x, s, &xk)) return 1;
  if (g_pack_variant != 0) return mx_cold_segment_packed_variant(D, xk, z, y, s, g_pack_variant);
  switch (D->pack->val_enc) {
    case MX_VAL_DICT0: return mx_cold_segment_packed_rule<MX_VAL_DICT0>(D, xk, z, y, s);
    case MX_VAL_DICT8: return mx_cold_segment_packed_rule<MX_VAL_DICT8>(D, xk, z, y, s);
    case MX_VAL_DICT16: return mx_cold_segment_packed_rule<MX_VAL_DICT16>(D, xk, z, y, s);
    case MX_VAL_COLCONST: return mx_cold_segment_packed_rule<MX_VAL_COLCONST>(D, xk, z, y, s);
    default: return mx_cold_segment_packed_rule<MX_VAL_PLAIN>(D, xk, z, y, s); /* plain values, packed columns */
  }
}
