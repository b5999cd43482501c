/* mx_device_none.c - mx_device.h for builds without CUDA: no device, every call fails clearly. */
#include "mx_device.h"
#include <string.h>

static const char mx_no_cuda[] = "matxtract was built without CUDA";

int mx_device_count(void) { return 0; }
size_t mx_device_l2_bytes(void) { return 0; }
const char *mx_device_last_error(void) { return mx_no_cuda; }
int mx_device_set_upload_threads(int threads) {
  (void)threads;
  return 0;
}
void mx_device_release_pools(void) {}
void mx_device_warm_start(void) {}
void mx_device_warm_wait(void) {}
void mx_device_set_warmup(int on) { (void)on; }
int mx_device_upload(const mx_format *F, mx_cold_kernel cold, mx_device **D) {
  (void)F;
  (void)cold;
  if (D) *D = 0;
  return 1;
}
int mx_device_upload_xhot(const mx_format *F, mx_cold_kernel cold, int xhot_cols, mx_device **D) {
  (void)xhot_cols;
  return mx_device_upload(F, cold, D);
}
int mx_device_build(const mx_csr *A, mx_crux c, mx_mode_request mode, mx_cold_kernel cold, int xhot_cols,
                    mx_format *shell, mx_device **D) {
  (void)A;
  (void)c;
  (void)mode;
  (void)cold;
  (void)xhot_cols;
  (void)shell;
  if (D) *D = 0;
  return 1;
}
int mx_device_download(const mx_device *D, const mx_format *shell, mx_format *F) {
  (void)D;
  (void)shell;
  (void)F;
  return 1;
}
size_t mx_device_build_peak_bytes(const mx_device *D) {
  (void)D;
  return 0;
}
int mx_device_xhot_cols(const mx_device *D) {
  (void)D;
  return 0;
}
int mx_device_refresh_values(mx_device *D, const double *val, void *stream) {
  (void)D;
  (void)val;
  (void)stream;
  return 1;
}
void mx_device_free(mx_device *D) { (void)D; }
size_t mx_device_bytes(const mx_device *D) {
  (void)D;
  return 0;
}
mx_cold_kernel mx_device_cold_kernel(const mx_device *D) {
  (void)D;
  return MX_COLD_AUTO;
}
int mx_device_spmv(mx_device *D, const double *x, const double *z, double *y, void *stream) {
  (void)D;
  (void)x;
  (void)z;
  (void)y;
  (void)stream;
  return 1;
}
int mx_device_spmv_host(mx_device *D, const double *x, const double *z, double *y, void *stream) {
  (void)D;
  (void)x;
  (void)z;
  (void)y;
  (void)stream;
  return 1;
}
int mx_device_spmm_plan(const mx_device *D, int k, mx_spmm_plan *plan) {
  (void)D;
  if (plan) memset(plan, 0, sizeof *plan);
  if (plan) plan->k = k;
  return 1;
}
int mx_device_spmm(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, void *stream) {
  (void)D;
  (void)k;
  (void)B;
  (void)ldb;
  (void)C;
  (void)ldc;
  (void)stream;
  return 1;
}
int mx_device_spmm_set_way(mx_device *D, mx_spmm_way way) {
  (void)D;
  (void)way;
  return 1;
}
int mx_device_spmm_whole(mx_device *D, const mx_csr *A, int k) {
  (void)D;
  (void)A;
  (void)k;
  return 1;
}
int mx_device_spmm_set_group(mx_device *D, int cols) {
  (void)D;
  (void)cols;
  return 1;
}
int mx_device_spmm_host(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, void *stream) {
  return mx_device_spmm(D, k, B, ldb, C, ldc, stream);
}
int mx_device_time_spmv(mx_device *D, int reps, double *seconds) {
  (void)D;
  (void)reps;
  if (seconds) *seconds = 0;
  return 1;
}
int mx_device_set_cold_kernel(mx_device *D, mx_cold_kernel k) {
  (void)D;
  (void)k;
  return 1;
}
int mx_device_features(mx_device *D, mx_features *f) {
  (void)D;
  (void)f;
  return 1;
}
int mx_device_features_start(mx_device *D) {
  (void)D;
  return 1;
}
int mx_device_features_ready(mx_device *D, int *ready) {
  (void)D;
  if (ready) *ready = 0;
  return 1;
}
int mx_device_features_finish(mx_device *D, mx_features *f) {
  (void)D;
  (void)f;
  return 1;
}
int mx_device_synchronize(void) { return 1; }
int mx_device_mem_free(size_t *bytes) {
  *bytes = 0;
  return 1;
}
int mx_device_hub(mx_device *D, const mx_csr *A, int K) {
  (void)D;
  (void)A;
  (void)K;
  return 1;
}
void mx_device_hub_info(const mx_device *D, int *K, int64_t *hub_nnz) {
  (void)D;
  if (K) *K = 0;
  if (hub_nnz) *hub_nnz = 0;
}
int mx_device_hub_stats(mx_device *D, int K, int64_t *hub_nnz, int64_t *hub_rows) {
  (void)D;
  (void)K;
  if (hub_nnz) *hub_nnz = 0;
  if (hub_rows) *hub_rows = 0;
  return 1;
}
int mx_device_hub_release_plain(mx_device *D) {
  (void)D;
  return 1;
}
int mx_device_hub_restore_plain(mx_device *D, const mx_csr *A) {
  (void)D;
  (void)A;
  return 1;
}
int mx_device_hub_plain_released(const mx_device *D) {
  (void)D;
  return 0;
}
