/* mx_cold_pack_none.c - the packed cold CSR entry points of mx_device.h in a build without CUDA:
 * there is never a device, so they only report that (as mx_device_none.c does for the others). */
#include <string.h>
#include "mx_device.h"

int mx_device_compress(mx_device *D, const mx_pack_request *req) {
  (void)D, (void)req;
  return 1;
}

int mx_device_pack_release_plain(mx_device *D) {
  (void)D;
  return 1;
}

int mx_device_pack_restore_plain(mx_device *D) {
  (void)D;
  return 1;
}

size_t mx_device_pack_plain_released(const mx_device *D) {
  (void)D;
  return 0;
}

int mx_device_compress_info(const mx_device *D, mx_device_pack_info *info) {
  (void)D;
  if (info) memset(info, 0, sizeof *info);
  return 1;
}

int mx_device_download_pack(const mx_device *D, mx_cold_pack *P) {
  (void)D;
  if (P) memset(P, 0, sizeof *P);
  return 1;
}

int mx_device_download_rowpat(const mx_device *D, mx_cold_rowpat *R) {
  (void)D;
  if (R) memset(R, 0, sizeof *R);
  return 1;
}
