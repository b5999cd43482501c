/* mx_device_hub.cu - the hub split as a device format's product (mx_device_hub in mx_device.h): the
 * split of D's cold CSR built on the GPU (mx_hub_dev_build, src/cuda/mx_cold_hub.cu: the arrays the
 * host builder src/core/mx_cold_hub.c gives), the rest as an all-cold device of its own, packed. */
#include <stdlib.h>
#include "mx_cold_hub_dev.h"
#include "mx_device_impl.h"
extern "C" {
#include "../core/mx_cold_pack.h"
}

struct mx_hub_split_dev {
  int K;           /* hub columns */
  int64_t hub_nnz; /* their nonzeros */
  mx_device *rest; /* every other nonzero, all cold, D's cold kernel, packed (AUTO) */
  mx_hub_dev *hub;
};

static void hub_free(mx_hub_split_dev *h) {
  if (!h) return;
  mx_hub_dev_free(h->hub);
  mx_device_free(h->rest);
  free(h);
}

void mx_device_hub_drop(mx_device *D) {
  hub_free(D->hub_split);
  D->hub_split = nullptr;
}

/* the split of D's cold CSR by K columns, built on the GPU; the rest finished with kernel cold and packed */
static int hub_make(const mx_device *D, int K, mx_cold_kernel cold, mx_hub_split_dev **out) {
  mx_hub_split_dev *h = (mx_hub_split_dev *)calloc(1, sizeof *h);
  mx_device *rest = (mx_device *)calloc(1, sizeof *rest);
  if (!h || !rest) {
    free(h);
    free(rest);
    return mx_fail("mx_device_hub: out of host memory");
  }
  mx_trace_step(nullptr);
  if (mx_hub_dev_build(D->cold_rowptr, D->cold_col, D->cold_val, D->nrows, D->ncols, D->cold_nnz, K, rest, &h->hub, &h->hub_nnz)) {
    mx_device_free(rest);
    free(h);
    return 1;
  }
  const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  if (mx_device_finish_cold(rest, cold)) { /* frees rest */
    hub_free(h);
    return 1;
  }
  mx_trace_step("hub split: the rest's cold kernel");
  h->rest = rest;
  mx_hub_dev_info(h->hub, &h->K);
  if (mx_device_compress(h->rest, &rq)) {
    hub_free(h);
    return 1;
  }
  mx_trace_step("hub split: the rest packed");
  *out = h;
  return 0;
}

extern "C" int mx_device_hub(mx_device *D, const mx_csr *A, int K) {
  if (!D || !A) return mx_fail("mx_device_hub: NULL argument");
  if (K == 0) {
    mx_device_hub_drop(D);
    return 0;
  }
  if (D->mode != MX_HOT_NONE) return mx_fail("mx_device_hub: the device format has a hot part (the split needs an all-cold one)");
  if (A->nrows != D->nrows || A->ncols != D->ncols || !A->rowptr || A->rowptr[A->nrows] != D->nnz)
    return mx_fail("mx_device_hub: the CSR (%d x %d) is not the one the device format holds (%d x %d, %d nonzeros)", A->nrows,
                   A->ncols, D->nrows, D->ncols, D->nnz);
  if (K < 0 || K > MX_HUB_MAX_COLS) return mx_fail("mx_device_hub: %d hub columns (0 .. %d)", K, MX_HUB_MAX_COLS);
  mx_hub_split_dev *h = nullptr;
  if (hub_make(D, K, D->cold, &h)) return 1;
  mx_device_hub_drop(D);
  D->hub_split = h;
  return 0;
}

extern "C" int mx_device_hub_stats(const mx_device *D, int K, int64_t *hub_nnz, int64_t *hub_rows) {
  if (!D || !hub_nnz || !hub_rows) return mx_fail("mx_device_hub_stats: NULL argument");
  mx_trace_step(nullptr);
  const int rc = mx_hub_dev_stats(D->cold_rowptr, D->cold_col, D->nrows, D->ncols, D->cold_nnz, K, hub_nnz, hub_rows);
  mx_trace_step("hub statistics");
  return rc;
}

extern "C" void mx_device_hub_info(const mx_device *D, int *K, int64_t *hub_nnz) {
  const mx_hub_split_dev *h = D ? D->hub_split : nullptr;
  if (K) *K = h ? h->K : 0;
  if (hub_nnz) *hub_nnz = h ? h->hub_nnz : 0;
}

int mx_device_hub_launch(mx_device *D, const double *x, const double *z, double *y, void *stream) {
  mx_hub_split_dev *h = D->hub_split;
  return mx_device_spmv(h->rest, x, z, y, stream) || mx_hub_dev_spmv_add(h->hub, x, y, stream);
}

void mx_device_hub_kernel(mx_device *D, mx_cold_kernel k) {
  if (D->hub_split && mx_device_set_cold_kernel(D->hub_split->rest, k)) mx_device_hub_drop(D);
}
