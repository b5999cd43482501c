/* cuda_test_products.h - what the compression tests (test_cuda_cold_pack, test_cuda_rowpat,
 * test_cuda_hot_pack) share: the three products of a device on host vectors and their bitwise
 * comparison, generated matrices, array checks. Header-only, one translation unit per test. */
#ifndef CUDA_TEST_PRODUCTS_H
#define CUDA_TEST_PRODUCTS_H

#include "cuda_test_util.h"

template <typename T>
static bool same_array(const T *a, const T *b, size_t n) {
  if (n == 0) return true;
  if (!a || !b) return false;
  return memcmp(a, b, n * sizeof(T)) == 0;
}

/* a and b bitwise equal, except that two NaNs match whatever their payloads: IEEE 754 leaves open
 * which operand's payload an operation on two NaNs returns, and ptxas may order the operands of a
 * commutative add differently in two kernels that take the same sums (the "special" values carry
 * two NaN payloads; a pipelined variant of the packed kernel tried on 2026-11-26 differed from the
 * plain kernel in NaN payloads only, on those values only). The first real difference is printed
 * with both bit patterns; payload-only differences are counted and reported at the end. */
static long g_nan_payload_diffs = 0;
static bool bitwise_equal(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t ua, ub;
    memcpy(&ua, &a[i], sizeof ua);
    memcpy(&ub, &b[i], sizeof ub);
    if (ua == ub) continue;
    if (std::isnan(a[i]) && std::isnan(b[i])) {
      ++g_nan_payload_diffs;
      continue;
    }
    printf("  y[%zu]: %016llx vs %016llx\n", i, (unsigned long long)ua, (unsigned long long)ub);
    return false;
  }
  return true;
}

static bool all_finite(const std::vector<double> &v) {
  for (double d : v)
    if (!std::isfinite(d)) return false;
  return true;
}

/* y = D x (+ z) on host vectors through D's staging buffers. */
static std::vector<double> product(mx_device *D, const std::vector<double> &x, const std::vector<double> *z, size_t m) {
  std::vector<double> y(m, NAN);
  if (mx_device_spmv_host(D, x.data(), z ? z->data() : nullptr, y.data(), nullptr))
    expect(false, std::string("spmv_host: ") + mx_device_last_error());
  return y;
}

/* y = D x + y in place on device vectors */
static std::vector<double> product_in_place(mx_device *D, const std::vector<double> &x, const std::vector<double> &z) {
  DevVec dx(x.size()), dy(z.size());
  dx.put(x);
  dy.put(z);
  if (mx_device_spmv(D, dx.p, dy.p, dy.p, nullptr)) expect(false, std::string("spmv in place: ") + mx_device_last_error());
  CK(cudaDeviceSynchronize());
  return dy.get();
}

/* The three products of D on (x, z). */
struct Products {
  std::vector<double> y, yz, yin;
};
static Products products(mx_device *D, const std::vector<double> &x, const std::vector<double> &z, size_t m) {
  return {product(D, x, nullptr, m), product(D, x, &z, m), product_in_place(D, x, z)};
}

static void expect_same_products(const Products &a, const Products &b, const std::string &tag) {
  expect(bitwise_equal(a.y, b.y), tag + " y = A x bitwise equal to the uncompressed device's");
  expect(bitwise_equal(a.yz, b.yz), tag + " y = A x + z bitwise equal");
  expect(bitwise_equal(a.yin, b.yin), tag + " y = A x + y in place bitwise equal");
}

static Csr generated(const char *spec) {
  Csr A;
  mx_io_csr B;
  char err[512];
  memset(&B, 0, sizeof B);
  if (mx_gen(spec, 0, &B, err, sizeof err)) {
    expect(false, std::string(spec) + " gen: " + err);
    return A;
  }
  from_io(spec, B, &A);
  mx_io_csr_free(&B);
  return A;
}

#endif
