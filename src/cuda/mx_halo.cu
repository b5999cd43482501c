/* mx_halo.cu - the MPI type's ghost exchange through NCCL (mx_halo.h).
 *
 * One exchange: the halo's stream waits for the caller's stream (x is ready), gathers the values
 * to send into one buffer, sends and receives them in one NCCL group (one ncclSend / ncclRecv per
 * neighbour), scatters the received ones into the ghost vector and records an event that
 * mx_halo_wait hands to the caller's stream. Gather and scatter copy values only: the ghost vector
 * holds the owners' bits.
 * The reverse (the transpose's): the same buffers in the other roles. The ghost partial sums are
 * gathered into the receive buffer and sent to their owners, which receive them into the send
 * buffer; the adds into y run on the caller's stream after its own product. The next exchange's
 * gather into the send buffer is queued after them (it waits for the caller's stream). */
#include <nccl.h>
#include <vector>
#include "mx_device_impl.h"
#include "mx_halo.h"

struct mx_halo_comm {
  ncclComm_t comm;
};

struct mx_halo {
  mx_halo_comm *C;
  std::vector<int> send_rank, send_off, recv_rank, recv_off; /* host: the neighbours and their slices */
  int *send_idx, *recv_idx;                                  /* device */
  double *send_buf, *recv_buf;                               /* device */
  cudaStream_t stream;                                       /* the exchange's own stream */
  cudaEvent_t ready, done;
};

static int nccl_check(ncclResult_t r, const char *what) {
  return r == ncclSuccess ? 0 : mx_fail("ghost exchange: %s: %s", what, ncclGetErrorString(r));
}

extern "C" int mx_halo_available(void) { return 1; }

extern "C" int mx_halo_unique_id(unsigned char id[MX_HALO_ID_BYTES]) {
  static_assert(sizeof(ncclUniqueId) == MX_HALO_ID_BYTES, "an ncclUniqueId is MX_HALO_ID_BYTES bytes");
  ncclUniqueId u;
  if (nccl_check(ncclGetUniqueId(&u), "ncclGetUniqueId")) return 1;
  memcpy(id, &u, sizeof u);
  return 0;
}

extern "C" int mx_halo_comm_create(const unsigned char id[MX_HALO_ID_BYTES], int nranks, int rank, mx_halo_comm **C) {
  *C = nullptr;
  mx_halo_comm *c = (mx_halo_comm *)calloc(1, sizeof *c);
  if (!c) return mx_fail("ghost exchange: out of host memory");
  ncclUniqueId u;
  memcpy(&u, id, sizeof u);
  if (nccl_check(ncclCommInitRank(&c->comm, nranks, u, rank), "ncclCommInitRank (one GPU per rank)")) {
    free(c);
    return 1;
  }
  *C = c;
  return 0;
}

extern "C" void mx_halo_comm_free(mx_halo_comm *C) {
  if (!C) return;
  ncclCommDestroy(C->comm);
  free(C);
}

extern "C" void mx_halo_free(mx_halo *H) {
  if (!H) return;
  if (H->stream) cudaStreamSynchronize(H->stream);
  cudaFree(H->send_idx);
  cudaFree(H->recv_idx);
  cudaFree(H->send_buf);
  cudaFree(H->recv_buf);
  if (H->ready) cudaEventDestroy(H->ready);
  if (H->done) cudaEventDestroy(H->done);
  if (H->stream) cudaStreamDestroy(H->stream);
  delete H;
}

/* n ints to a new device array (at least one element, so that it is never NULL) */
static int halo_upload(const int *h, int n, int **d, const char *what) {
  if (mx_cuda_alloc((void **)d, sizeof(int) * (size_t)(n > 0 ? n : 1), what)) return 1;
  return n > 0 && mx_cuda_check(cudaMemcpy(*d, h, sizeof(int) * (size_t)n, cudaMemcpyHostToDevice), what);
}

extern "C" int mx_halo_create(mx_halo_comm *C, int nsend, const int *send_rank, const int *send_off, const int *send_idx, int nrecv,
                              const int *recv_rank, const int *recv_off, const int *recv_idx, mx_halo **Hp) {
  *Hp = nullptr;
  if (!C || nsend < 0 || nrecv < 0) return mx_fail("mx_halo_create: bad argument");
  mx_halo *H = new (std::nothrow) mx_halo();
  if (!H) return mx_fail("ghost exchange: out of host memory");
  H->C = C;
  H->send_rank.assign(send_rank, send_rank + nsend);
  H->send_off.assign(send_off, send_off + nsend + 1);
  H->recv_rank.assign(recv_rank, recv_rank + nrecv);
  H->recv_off.assign(recv_off, recv_off + nrecv + 1);
  const int ns = send_off[nsend], nr = recv_off[nrecv];
  const int rc = halo_upload(send_idx, ns, &H->send_idx, "ghost exchange: send indices") ||
                 halo_upload(recv_idx, nr, &H->recv_idx, "ghost exchange: receive indices") ||
                 mx_cuda_alloc((void **)&H->send_buf, sizeof(double) * (size_t)(ns > 0 ? ns : 1), "ghost exchange: send buffer") ||
                 mx_cuda_alloc((void **)&H->recv_buf, sizeof(double) * (size_t)(nr > 0 ? nr : 1), "ghost exchange: receive buffer") ||
                 mx_cuda_check(cudaStreamCreateWithFlags(&H->stream, cudaStreamNonBlocking), "ghost exchange: stream") ||
                 mx_cuda_check(cudaEventCreateWithFlags(&H->ready, cudaEventDisableTiming), "ghost exchange: event") ||
                 mx_cuda_check(cudaEventCreateWithFlags(&H->done, cudaEventDisableTiming), "ghost exchange: event");
  if (rc) {
    mx_halo_free(H);
    return 1;
  }
  *Hp = H;
  return 0;
}

__global__ void mx_halo_gather(int n, const int *__restrict__ idx, const double *__restrict__ x, double *__restrict__ buf) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = x[idx[i]];
}

__global__ void mx_halo_scatter(int n, const int *__restrict__ idx, const double *__restrict__ buf, double *__restrict__ ghost) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ghost[idx[i]] = buf[i];
}

/* y[idx[i]] += buf[i]: one neighbour's slice, whose indices are distinct */
__global__ void mx_halo_add(int n, const int *__restrict__ idx, const double *__restrict__ buf, double *__restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[idx[i]] += buf[i];
}

static unsigned halo_blocks(int n) { return (unsigned)((n + 255) / 256); }

/* One NCCL group: send[s] goes to to_rank[s], recv[r] comes from from_rank[r] (slices of the two
 * buffers by their offsets), on the halo's stream. */
static int halo_exchange(mx_halo *H, const std::vector<int> &to_rank, const std::vector<int> &to_off, const double *send,
                         const std::vector<int> &from_rank, const std::vector<int> &from_off, double *recv) {
  if (nccl_check(ncclGroupStart(), "ncclGroupStart")) return 1;
  int rc = 0;
  for (size_t s = 0; s < to_rank.size() && !rc; ++s)
    rc = nccl_check(ncclSend(send + to_off[s], (size_t)(to_off[s + 1] - to_off[s]), ncclDouble, to_rank[s], H->C->comm, H->stream),
                    "ncclSend");
  for (size_t r = 0; r < from_rank.size() && !rc; ++r)
    rc = nccl_check(ncclRecv(recv + from_off[r], (size_t)(from_off[r + 1] - from_off[r]), ncclDouble, from_rank[r], H->C->comm, H->stream),
                    "ncclRecv");
  return nccl_check(ncclGroupEnd(), "ncclGroupEnd") || rc;
}

extern "C" int mx_halo_start(mx_halo *H, const double *x, double *ghost, void *stream) {
  if (!H) return mx_fail("mx_halo_start: no exchange");
  const int ns = H->send_off.back(), nr = H->recv_off.back();
  MX_CUDA_TRY(cudaEventRecord(H->ready, (cudaStream_t)stream));
  MX_CUDA_TRY(cudaStreamWaitEvent(H->stream, H->ready, 0));
  if (ns > 0) {
    mx_halo_gather<<<halo_blocks(ns), 256, 0, H->stream>>>(ns, H->send_idx, x, H->send_buf);
    MX_LAUNCH_CHECK("ghost exchange: gather");
  }
  if (halo_exchange(H, H->send_rank, H->send_off, H->send_buf, H->recv_rank, H->recv_off, H->recv_buf)) return 1;
  if (nr > 0) {
    mx_halo_scatter<<<halo_blocks(nr), 256, 0, H->stream>>>(nr, H->recv_idx, H->recv_buf, ghost);
    MX_LAUNCH_CHECK("ghost exchange: scatter");
  }
  MX_CUDA_TRY(cudaEventRecord(H->done, H->stream));
  return 0;
}

extern "C" int mx_halo_wait(mx_halo *H, void *stream) {
  if (!H) return mx_fail("mx_halo_wait: no exchange");
  MX_CUDA_TRY(cudaStreamWaitEvent((cudaStream_t)stream, H->done, 0));
  return 0;
}

extern "C" int mx_halo_reverse_start(mx_halo *H, const double *ghost, void *stream) {
  if (!H) return mx_fail("mx_halo_reverse_start: no exchange");
  const int nr = H->recv_off.back();
  MX_CUDA_TRY(cudaEventRecord(H->ready, (cudaStream_t)stream));
  MX_CUDA_TRY(cudaStreamWaitEvent(H->stream, H->ready, 0));
  if (nr > 0) {
    mx_halo_gather<<<halo_blocks(nr), 256, 0, H->stream>>>(nr, H->recv_idx, ghost, H->recv_buf);
    MX_LAUNCH_CHECK("ghost exchange (transpose): gather");
  }
  if (halo_exchange(H, H->recv_rank, H->recv_off, H->recv_buf, H->send_rank, H->send_off, H->send_buf)) return 1;
  MX_CUDA_TRY(cudaEventRecord(H->done, H->stream));
  return 0;
}

extern "C" int mx_halo_reverse_finish(mx_halo *H, double *y, void *stream) {
  if (!H) return mx_fail("mx_halo_reverse_finish: no exchange");
  MX_CUDA_TRY(cudaStreamWaitEvent((cudaStream_t)stream, H->done, 0));
  for (size_t s = 0; s < H->send_rank.size(); ++s) {
    const int off = H->send_off[s], n = H->send_off[s + 1] - off;
    if (n <= 0) continue;
    mx_halo_add<<<halo_blocks(n), 256, 0, (cudaStream_t)stream>>>(n, H->send_idx + off, H->send_buf + off, y);
    MX_LAUNCH_CHECK("ghost exchange (transpose): add");
  }
  return 0;
}

extern "C" void mx_halo_counts(const mx_halo *H, int *nsend_ranks, long long *nsend, int *nrecv_ranks, long long *nrecv) {
  *nsend_ranks = H ? (int)H->send_rank.size() : 0;
  *nrecv_ranks = H ? (int)H->recv_rank.size() : 0;
  *nsend = H ? H->send_off.back() : 0;
  *nrecv = H ? H->recv_off.back() : 0;
}
