/* mx_upload.h - host-to-device copies of large pageable host arrays (the AIJ arrays a build uploads,
 * the values a refresh uploads). Internal to the device layer. */
#ifndef MX_UPLOAD_H
#define MX_UPLOAD_H

#include <cstddef>
#include <cuda_runtime.h>

/* One array to copy: bytes from host src (pageable) to device dst. */
struct mx_h2d_piece {
  void *dst;
  const void *src;
  size_t bytes;
};

/* Copy every piece host -> device and return when all have landed. Work queued on stream before the
 * call (which may still read a dst) finishes first; work queued after it sees the new data.
 * Small copies (or one upload thread) are one cudaMemcpyAsync per piece on stream; large ones go
 * through the pinned staging pool, several host threads filling it (mx_device_set_upload_threads).
 * Returns 0 or nonzero with the device layer's last error set (what names the copy). */
int mx_h2d_copy(const mx_h2d_piece *pieces, int npieces, cudaStream_t stream, const char *what);

/* Free the pinned staging pool (the next staged copy makes it again). */
void mx_h2d_release(void);

#endif
