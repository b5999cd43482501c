/* mx_predictor_internal.h - limits and helpers shared by mx_predictor.c and mx_model_file.c (and the
 * core tests). Not part of the contract of mx_predictor.h. */
#ifndef MX_PREDICTOR_INTERNAL_H
#define MX_PREDICTOR_INTERNAL_H

#include "mx_predictor.h"

#define MX_MODEL_MAX_TREES 100000
#define MX_MODEL_MAX_NODES (1 << 24)     /* in all trees together: 16M nodes, 512 MB of arrays */
#define MX_MODEL_MAX_MEDIAN_TREES 1024   /* weighted_median sorts the outputs on the stack */
#define MX_MODEL_MAX_CANDIDATES 100000

/* 0 if node n of a tree of nnodes nodes is well formed (see mx_predictor.h), else 1 and what is
 * wrong in what[len]. */
int mx_model_node_problem(int32_t nnodes, int32_t n, int32_t feature, double threshold, int32_t left, int32_t right,
                          double value, char *what, size_t len);

int mx_model_ensemble_parse(const char *s, mx_ensemble *e);
const char *mx_model_ensemble_name(mx_ensemble e);

#endif
