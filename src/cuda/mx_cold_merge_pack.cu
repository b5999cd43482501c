/* mx_cold_merge_pack.cu - the merge kernel (mx_cold_merge.cuh) on the packed cold CSR: its
 * instantiations per (value, column) encoding, a module apart from the plain CSR's (mx_cold_merge.cu). */
#include "mx_cold_merge.cuh"
#include "mx_cold_pack_dev.h"

/* the merge kernel on D's packed form, decoder by mx_pack_dispatch */
struct packed_merge_launch {
  const mx_device *D;
  const double *x, *z;
  double *y;
  cudaStream_t s;
  template <int VE, int IE>
  int run() const {
    return merge_kernel_launch<MX_XH_OFF>(D, x, z, y, s, mx_pack_decoder<VE, IE>(D->pack));
  }
};

int mx_cold_merge_packed_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  const double *xk; /* x, or xs under COLCONST */
  return mx_cold_pack_dev_x(D, x, s, &xk) || mx_pack_dispatch(D->pack, packed_merge_launch{D, xk, z, y, s});
}
