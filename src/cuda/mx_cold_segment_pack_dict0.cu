/* mx_cold_segment_pack_dict0.cu - the packed segment kernels of dict0 values (each column encoding, with
 * and without the split-row code): a module of their own (mx_cold_segment_pack.cuh). */
#include "mx_cold_segment_pack.cuh"

MX_COLD_SEGMENT_PACK_INSTANTIATE(MX_VAL_DICT0)
