/* test_cuda_upload: mx_h2d_copy (src/cuda/mx_upload.cu) lands every byte of every piece, for every
 * upload thread count, for pieces below, at and above the staging sizes (empty, odd lengths, many
 * slots), and the copy waits for work queued before it on the stream (a kernel still reading the
 * destination sees the old bytes). Thread counts outside 1..16 are refused.
 * Usage: test_cuda_upload [small|race] [MATRICES_DIR]; exits 77 (skipped) without a GPU. */
#include "cuda_test_util.h"
#include "cuda/mx_upload.h"

/* n random bytes */
static std::vector<unsigned char> random_bytes(size_t n, std::mt19937_64 &rng) {
  std::vector<unsigned char> b(n);
  for (auto &c : b) c = (unsigned char)rng();
  return b;
}

/* Pieces of the given sizes copied in one call with `threads` upload threads; each compared. */
static void check_pieces(const std::vector<size_t> &sizes, int threads, std::mt19937_64 &rng) {
  char what[160];
  snprintf(what, sizeof what, "%d threads, %zu pieces, first %zu bytes", threads, sizes.size(), sizes.empty() ? (size_t)0 : sizes[0]);
  expect(mx_device_set_upload_threads(threads) == 0, std::string(what) + ": thread count accepted");
  std::vector<std::vector<unsigned char>> host;
  std::vector<void *> dev(sizes.size());
  std::vector<mx_h2d_piece> pieces;
  for (size_t p = 0; p < sizes.size(); ++p) {
    host.push_back(random_bytes(sizes[p], rng));
    CK(cudaMalloc(&dev[p], std::max<size_t>(sizes[p], 1)));
    CK(cudaMemset(dev[p], 0xA5, std::max<size_t>(sizes[p], 1)));
    pieces.push_back({dev[p], host[p].data(), sizes[p]});
  }
  const int rc = mx_h2d_copy(pieces.data(), (int)pieces.size(), 0, "test upload");
  expect(rc == 0, std::string(what) + ": copy: " + (rc ? mx_device_last_error() : ""));
  for (size_t p = 0; p < sizes.size(); ++p) {
    std::vector<unsigned char> back(sizes[p]);
    if (sizes[p]) CK(cudaMemcpy(back.data(), dev[p], sizes[p], cudaMemcpyDeviceToHost));
    snprintf(what, sizeof what, "%d threads: piece %zu of %zu bytes lands intact", threads, p, sizes[p]);
    expect(back == host[p], what);
    CK(cudaFree(dev[p]));
  }
}

/* spins ~cycles, then copies n bytes src -> dst (a reader of src queued before the upload) */
__global__ void slow_copy(const unsigned char *src, unsigned char *dst, size_t n, long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) dst[i] = src[i];
}

/* A kernel queued on the stream before the copy reads the old bytes of the destination. */
static void check_ordering(int threads, std::mt19937_64 &rng) {
  const size_t n = (size_t)40 << 20; /* staged */
  const std::vector<unsigned char> old_bytes = random_bytes(n, rng), new_bytes = random_bytes(n, rng);
  unsigned char *dst, *seen;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CK(cudaMalloc(&dst, n));
  CK(cudaMalloc(&seen, n));
  CK(cudaMemcpy(dst, old_bytes.data(), n, cudaMemcpyHostToDevice));
  expect(mx_device_set_upload_threads(threads) == 0, "thread count accepted");
  slow_copy<<<256, 256, 0, s>>>(dst, seen, n, 200000000LL); /* ~0.1 s at 2 GHz */
  CK(cudaGetLastError());
  const mx_h2d_piece piece = {dst, new_bytes.data(), n};
  expect(mx_h2d_copy(&piece, 1, s, "test ordering") == 0, std::string("ordered copy: ") + mx_device_last_error());
  std::vector<unsigned char> got(n);
  CK(cudaMemcpy(got.data(), seen, n, cudaMemcpyDeviceToHost));
  expect(got == old_bytes, std::to_string(threads) + " threads: the kernel queued before the upload read the old bytes");
  CK(cudaMemcpy(got.data(), dst, n, cudaMemcpyDeviceToHost));
  expect(got == new_bytes, std::to_string(threads) + " threads: the new bytes landed");
  CK(cudaFree(dst));
  CK(cudaFree(seen));
  CK(cudaStreamDestroy(s));
}

int main(int argc, char **argv) {
  bool small = false;
  std::string dir;
  if (!test_args(argc, argv, &small, &dir)) return 77;
  std::mt19937_64 rng(20261123);
  expect(mx_device_set_upload_threads(0) != 0, "0 upload threads refused");
  expect(mx_device_set_upload_threads(17) != 0, "17 upload threads refused");
  const size_t MiB = (size_t)1 << 20;
  const std::vector<std::vector<size_t>> cases = {
      {0},                                   /* nothing */
      {1, 0, 7},                             /* tiny: the plain path */
      {3 * MiB + 5},                         /* below the staged minimum */
      {16 * MiB},                            /* exactly the staged minimum */
      {4 * MiB + 1, 0, 9 * MiB + 3, 17},     /* staged across pieces, an empty one inside */
      {small ? 20 * MiB + 11 : 97 * MiB + 11} /* many slots per thread */
  };
  for (int threads : {1, 2, 4, 7, 16})
    for (const auto &c : cases) check_pieces(c, threads, rng);
  for (int threads : {1, 4}) check_ordering(threads, rng);
  mx_device_release_pools();
  check_pieces({33 * MiB}, 3, rng); /* the pool is made again after a release */
  mx_device_release_pools();
  printf("%d checks, %d failed\n", g_checks, g_fail);
  return g_fail ? 1 : 0;
}
