/* mx_cold_segment_pack_plain.cu - the packed segment kernels of plain values (each column encoding, with
 * and without the split-row code): a module of their own (mx_cold_segment_pack.cuh). */
#include "mx_cold_segment_pack.cuh"

MX_COLD_SEGMENT_PACK_INSTANTIATE(MX_VAL_PLAIN)
