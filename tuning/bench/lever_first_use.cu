/* lever_first_use - what each lever step of the device layer costs a process the first time and the
 * second (CUDA loads a module's code, in proportion to its size, at the first launch of any of its
 * kernels: docs/performance.md, "Plan engine costs"). On a tiny band matrix (4096 rows of 3
 * nonzeros; with -long, row 0 holds 2048, so that the segment kernel carries its split-row code),
 * each step synchronised and timed on the host clock, in a fresh process:
 *   build + product, the switch to the merge kernel (its plan) and its first and second product,
 *   the switch back, the row-pattern attempt (compress auto), the pack's own choice and its first
 *   and second product, the guard's timing, the pack again, four forced encodings (the pack and its
 *   first product), the feature passes twice.
 * Usage: matxtract-lever-first-use [-long]   (prints one line per step, "STEP  MS ms"; run it once per
 *   CUDA_MODULE_LOADING=LAZY|EAGER to see what loading costs). Exit 1 when a step fails, 77
 *   (skipped) without a GPU. */
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "cuda/mx_device.h"

static double now_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

static int failures = 0;

/* the step's wall time, synchronised; its return code unless 0 */
static void report(const char *step, double t0, int rc) {
  if (cudaDeviceSynchronize() != cudaSuccess) rc = 1;
  failures += rc != 0;
  if (rc) printf("%-36s %8.3f ms  (rc %d: %s)\n", step, now_ms() - t0, rc, mx_device_last_error());
  else printf("%-36s %8.3f ms\n", step, now_ms() - t0);
}

int main(int argc, char **argv) {
  const bool long_row = argc > 1 && strcmp(argv[1], "-long") == 0;
  const int n = 4096;
  std::vector<int32_t> rowptr{0}, col;
  std::vector<double> val;
  for (int r = 0; r < n; ++r) {
    const int lo = r > 0 ? r - 1 : 0, hi = long_row && r == 0 ? 2048 : r + 2 < n ? r + 2 : n;
    for (int c = lo; c < hi; ++c) {
      col.push_back(c);
      val.push_back(1.0 + c % 7);
    }
    rowptr.push_back((int32_t)col.size());
  }
  if (mx_device_count() == 0) {
    printf("no CUDA device: skipped\n");
    return 77;
  }
  const mx_csr A = {n, n, rowptr.data(), col.data(), val.data()};
  const mx_crux crux = {0.0, 0.0};
  double *x = nullptr, *y = nullptr, seconds;
  mx_format F;
  mx_device *D = nullptr;
  cudaFree(0); /* the context, before the clock */
  if (cudaMalloc((void **)&x, n * sizeof(double)) != cudaSuccess || cudaMalloc((void **)&y, n * sizeof(double)) != cudaSuccess ||
      cudaMemset(x, 0, n * sizeof(double)) != cudaSuccess) {
    printf("cudaMalloc failed\n");
    return 1;
  }
  const mx_pack_request off = mx_pack_request_of(MX_COMPRESS_OFF), rowpat_or_pack = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_pack_request pack = rowpat_or_pack;
  pack.form = MX_FORM_PACK;
  double t = now_ms();
  int rc = mx_device_build(&A, crux, MX_MODE_AUTO, MX_COLD_SEGMENT, MX_XHOT_AUTO, &F, &D);
  if (rc) {
    printf("build failed: %s\n", mx_device_last_error());
    return 1;
  }
  rc = mx_device_spmv(D, x, nullptr, y, nullptr);
  report("build + first product", t, rc);
  t = now_ms(), rc = mx_device_spmv(D, x, nullptr, y, nullptr), report("product again", t, rc);
  t = now_ms(), rc = mx_device_set_cold_kernel(D, MX_COLD_MERGE), report("switch to merge (its plan)", t, rc);
  t = now_ms(), rc = mx_device_spmv(D, x, nullptr, y, nullptr), report("merge product, first", t, rc);
  t = now_ms(), rc = mx_device_spmv(D, x, nullptr, y, nullptr), report("merge product, second", t, rc);
  t = now_ms(), rc = mx_device_set_cold_kernel(D, MX_COLD_SEGMENT), report("switch back to segment", t, rc);
  t = now_ms(), rc = mx_device_compress(D, &rowpat_or_pack), report("row-pattern attempt (compress auto)", t, rc);
  t = now_ms(), rc = mx_device_compress(D, &off), report("uncompress", t, rc);
  t = now_ms(), rc = mx_device_compress(D, &pack), report("pack, its own choice", t, rc);
  t = now_ms(), rc = mx_device_spmv(D, x, nullptr, y, nullptr), report("packed product, first", t, rc);
  t = now_ms(), rc = mx_device_spmv(D, x, nullptr, y, nullptr), report("packed product, second", t, rc);
  t = now_ms(), rc = mx_device_time_spmv(D, 5, &seconds), report("guard timing (5 products)", t, rc);
  t = now_ms(), rc = mx_device_compress(D, &off), report("uncompress", t, rc);
  t = now_ms(), rc = mx_device_compress(D, &pack), report("pack again", t, rc);
  (void)mx_device_compress(D, &off);
  const int forced[][2] = {{MX_VAL_DICT16, MX_IDX_DELTA16}, {MX_VAL_DICT8, MX_IDX_DELTA8}, {MX_VAL_PLAIN, MX_IDX_DELTA16}, {MX_VAL_COLCONST, MX_IDX_PLAIN}};
  for (const auto &e : forced) {
    const mx_pack_request req = {e[0], e[1], MX_ROW_PLAIN, MX_FORM_PACK};
    char step[64];
    snprintf(step, sizeof step, "pack %s/%s", mx_val_enc_name((mx_val_enc)e[0]), mx_idx_enc_name((mx_idx_enc)e[1]));
    t = now_ms(), rc = mx_device_compress(D, &req), report(step, t, rc);
    snprintf(step, sizeof step, "pack %s/%s: first product", mx_val_enc_name((mx_val_enc)e[0]), mx_idx_enc_name((mx_idx_enc)e[1]));
    t = now_ms(), rc = mx_device_spmv(D, x, nullptr, y, nullptr), report(step, t, rc);
    (void)mx_device_compress(D, &off);
  }
  mx_features f;
  t = now_ms(), rc = mx_device_features(D, &f), report("feature passes, first", t, rc);
  t = now_ms(), rc = mx_device_features(D, &f), report("feature passes, second", t, rc);
  mx_device_free(D);
  mx_format_free(&F);
  cudaFree(y);
  cudaFree(x);
  return failures ? 1 : 0;
}
