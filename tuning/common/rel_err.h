/* rel_err.h - the correctness check every tuning program applies before it times a variant:
 * relative 2-norm error of y against a CPU double reference (BENCHMARKING.md: must be < 1e-12).
 * NaN anywhere in y (e.g. a poisoned entry the kernel never wrote) gives infinity. */
#ifndef MX_TUNING_REL_ERR_H
#define MX_TUNING_REL_ERR_H

#include <math.h>
#include <vector>

static inline double mx_rel_err(const std::vector<double> &y, const std::vector<double> &ref) {
  double d = 0, r = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i])) return INFINITY;
    d += (y[i] - ref[i]) * (y[i] - ref[i]);
    r += ref[i] * ref[i];
  }
  return r > 0 ? sqrt(d / r) : (d > 0 ? INFINITY : 0.0);
}

#endif
