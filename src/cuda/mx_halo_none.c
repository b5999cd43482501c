/* mx_halo_none.c - mx_halo.h in a build without NCCL: not available; callers check
 * mx_halo_available before anything else, so the other entry points only return 1. */
#include <string.h>
#include "mx_halo.h"

int mx_halo_available(void) { return 0; }

int mx_halo_unique_id(unsigned char id[MX_HALO_ID_BYTES]) {
  memset(id, 0, MX_HALO_ID_BYTES);
  return 1;
}

int mx_halo_comm_create(const unsigned char id[MX_HALO_ID_BYTES], int nranks, int rank, mx_halo_comm **C) {
  (void)id, (void)nranks, (void)rank;
  *C = NULL;
  return 1;
}

void mx_halo_comm_free(mx_halo_comm *C) { (void)C; }

int mx_halo_create(mx_halo_comm *C, int nsend, const int *send_rank, const int *send_off, const int *send_idx, int nrecv,
                   const int *recv_rank, const int *recv_off, const int *recv_idx, mx_halo **H) {
  (void)C, (void)nsend, (void)send_rank, (void)send_off, (void)send_idx, (void)nrecv, (void)recv_rank, (void)recv_off, (void)recv_idx;
  *H = NULL;
  return 1;
}

void mx_halo_free(mx_halo *H) { (void)H; }

int mx_halo_start(mx_halo *H, const double *x, double *ghost, void *stream) {
  (void)H, (void)x, (void)ghost, (void)stream;
  return 1;
}

int mx_halo_wait(mx_halo *H, void *stream) {
  (void)H, (void)stream;
  return 1;
}

int mx_halo_reverse_start(mx_halo *H, const double *ghost, void *stream) {
  (void)H, (void)ghost, (void)stream;
  return 1;
}

int mx_halo_reverse_finish(mx_halo *H, double *y, void *stream) {
  (void)H, (void)y, (void)stream;
  return 1;
}

void mx_halo_counts(const mx_halo *H, int *nsend_ranks, long long *nsend, int *nrecv_ranks, long long *nrecv) {
  (void)H;
  *nsend_ranks = *nrecv_ranks = 0;
  *nsend = *nrecv = 0;
}
