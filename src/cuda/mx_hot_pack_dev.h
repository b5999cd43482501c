/* mx_hot_pack_dev.h - the SE hot region's packed values on the device (mx_hot_pack.cu; internal to
 * src/cuda). D->hot_pack is NULL or holds the encoding the SE kernel reads its values by. */
#ifndef MX_HOT_PACK_DEV_H
#define MX_HOT_PACK_DEV_H

#include "mx_device_impl.h"
extern "C" {
#include "../core/mx_hot_pack.h" /* mx_val_enc, mx_hot_values_choose */
}

struct mx_hot_pack_dev {
  mx_val_enc enc;  /* PLAIN (se_val), DICT0 (one) or COLCONST (s; the kernel reads xs for x) */
  double one;      /* DICT0: every hot value */
  double *s;       /* COLCONST: ncols, s_j (0.0 for a column with no hot slot) */
  double *xs;      /* COLCONST: ncols, s .* x of the product in flight (mx_hot_pack_dev_x) */
  mx_val_enc prev; /* the last refresh: the encoding before it, */
  int fell_back;   /* and 1 if it fell back to plain values */
};

/* D's SE values encoded again after mx_device_compress freed them (nothing unless D->mode is SE):
 * DICT0 where every hot slot holds one value, COLCONST where each column's hot slots hold one value
 * and that moves fewer bytes (and x-hot does not code the cold CSR), else plain. 0 or 1 with the
 * error recorded (D then holds no hot pack). */
int mx_hot_pack_dev_build(mx_device *D);
/* after D's se_val was refreshed on stream s: the encoding chosen again (fell_back where it was
 * packed and no longer is) */
int mx_hot_pack_dev_refresh(mx_device *D, cudaStream_t s);
/* the x the SE kernel reads: x, or under COLCONST xs = s .* x computed on stream s */
int mx_hot_pack_dev_x(const mx_device *D, const double *x, cudaStream_t s, const double **xh);
void mx_hot_pack_dev_free(mx_device *D);

#endif
