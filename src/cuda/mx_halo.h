/* mx_halo.h - the MPI type's ghost exchange on the GPU through NCCL (issue 44): the values of x
 * that other ranks hold as ghosts go from device memory to device memory (ncclSend / ncclRecv in
 * one group), with no host staging and without a CUDA-aware MPI.
 *
 * Built with NCCL when CMake finds it (MATXTRACT_WITH_NCCL); else mx_halo_available returns 0 and
 * the other calls only return 1 (src/cuda/mx_halo_none.c): callers check it first. Errors of the
 * NCCL build are recorded for mx_device_last_error. */
#ifndef MX_HALO_H
#define MX_HALO_H

#ifdef __cplusplus
extern "C" {
#endif

enum { MX_HALO_ID_BYTES = 128 }; /* an ncclUniqueId */

typedef struct mx_halo_comm mx_halo_comm; /* an NCCL communicator over the ranks of an MPI one */
typedef struct mx_halo mx_halo;           /* one exchange pattern on a communicator */

/* 1 when the library was built with NCCL, else 0. */
int mx_halo_available(void);

/* A new communicator's id (on one rank, then broadcast by the caller); 0 or 1. */
int mx_halo_unique_id(unsigned char id[MX_HALO_ID_BYTES]);
/* Every rank of the MPI communicator, each on its own GPU (the current device): collective. */
int mx_halo_comm_create(const unsigned char id[MX_HALO_ID_BYTES], int nranks, int rank, mx_halo_comm **C);
void mx_halo_comm_free(mx_halo_comm *C);

/* The pattern, in CSR-like lists (host arrays, copied):
 *   send: for s < nsend, rank send_rank[s] gets x[send_idx[p]], p in [send_off[s], send_off[s+1]);
 *   recv: for r < nrecv, rank recv_rank[r]'s values go to ghost[recv_idx[p]], p in
 *         [recv_off[r], recv_off[r+1]), in the order that rank sends them.
 * 0 or 1. */
int mx_halo_create(mx_halo_comm *C, int nsend, const int *send_rank, const int *send_off, const int *send_idx, int nrecv,
                   const int *recv_rank, const int *recv_off, const int *recv_idx, mx_halo **H);
void mx_halo_free(mx_halo *H);

/* ghost <- the other ranks' values of x (device pointers): queued on the halo's own stream after
 * the work queued on `stream` so far (x ready), so that `stream` can run other work meanwhile;
 * mx_halo_wait makes `stream` wait for the exchange. Every rank of the communicator must start
 * each exchange (NCCL's point-to-point calls are collective in that sense). 0 or 1. */
int mx_halo_start(mx_halo *H, const double *x, double *ghost, void *stream);
int mx_halo_wait(mx_halo *H, void *stream);

/* The transpose's exchange, the reverse of mx_halo_start: each rank's ghost partial sums go back to
 * the ranks that own those entries, to be added there. mx_halo_reverse_start queues on the halo's
 * stream, after the work queued on `stream` so far (ghost ready): the gather of ghost at the receive
 * indices, and in one group an ncclSend to each owner and an ncclRecv from each rank that holds
 * this rank's entries as ghosts. mx_halo_reverse_finish makes `stream` wait for it and adds the
 * received values into y at the send indices, on `stream`, one neighbour after the other in the
 * pattern's order (within one neighbour the indices are distinct): no atomics, y is bitwise
 * reproducible. Between the two, `stream` may write y (the diagonal block's product). Every rank
 * of the communicator must start each exchange. 0 or 1. */
int mx_halo_reverse_start(mx_halo *H, const double *ghost, void *stream);
int mx_halo_reverse_finish(mx_halo *H, double *y, void *stream);

/* Values each rank sends and receives in one exchange, and the neighbours (for the view). */
void mx_halo_counts(const mx_halo *H, int *nsend_ranks, long long *nsend, int *nrecv_ranks, long long *nrecv);

#ifdef __cplusplus
}
#endif
#endif
