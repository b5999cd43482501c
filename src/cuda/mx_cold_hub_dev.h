/* mx_cold_hub_dev.h - the hub split of a cold CSR (src/core/mx_cold_hub.h) on the GPU: upload of a
 * host-built split (the GPU builder, mx_hub_dev_build in mx_device_impl.h, gives the same arrays) and
 * the product y += hub x, bitwise the CPU kernel mx_cold_hub_spmv_add (same
 * products, same summation order). C-callable; the stream is a cudaStream_t passed as void *.
 *
 * Per product: a staging kernel gathers the K hub x values (times the hub columns' constants where
 * the split has them) into a device buffer; the hub kernel (persistent blocks of 1024 threads, one
 * per SM for the shared memory) copies them into shared memory once per block, and each warp sums the
 * 32 pseudo-rows of a slice, a lane each, one coalesced 2-byte rank load and one shared-memory read
 * per nonzero; a fixup kernel (8 lanes per split row) adds the split rows' parts. Measured:
 * docs/performance.md, "Hub split". */
#ifndef MX_COLD_HUB_DEV_H
#define MX_COLD_HUB_DEV_H

#include "../core/mx_cold_hub.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mx_hub_dev mx_hub_dev;

/* Copy H to the device into *out; 0, or 1 with mx_device_last_error() (nothing left allocated). */
int mx_hub_dev_upload(const mx_cold_hub *H, mx_hub_dev **out);

/* y += hub x on stream (device pointers, y of H's rows, x of its columns); 0 or 1 (launch failure). */
int mx_hub_dev_spmv_add(const mx_hub_dev *d, const double *x, double *y, void *stream);
/* the same in two steps: x's hub values staged, then the hub kernel and the fixup adding to y;
 * after_rest: a plain kernel launch (the rest's first) lies between the two calls on the stream, so
 * that the hub kernel may read the staged values before the kernels before it end */
int mx_hub_dev_stage(const mx_hub_dev *d, const double *x, void *stream);
int mx_hub_dev_add_staged(const mx_hub_dev *d, double *y, void *stream, int after_rest);

/* C += hub B for k columns (column-major, leading dimensions ldb, ldc; device pointers) on stream, in
 * groups of 8 columns, each in a slab of 4 or 8 columns or (below MX_HUB_SLAB_MIN_COLS) by the
 * SpMV per column: each column's whole rows bit for bit the SpMV's, split rows within rounding of
 * it; 0 or 1 (launch or scratch failure). */
int mx_hub_dev_spmm_add(const mx_hub_dev *d, int k, const double *B, long long ldb, double *C, long long ldc, void *stream);

void mx_hub_dev_free(mx_hub_dev *d);

/* The hub columns of d. */
void mx_hub_dev_info(const mx_hub_dev *d, int *K);

#ifdef __cplusplus
}
#endif

#endif
