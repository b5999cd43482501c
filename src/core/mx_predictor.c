/* mx_predictor.c - evaluation of the tree-ensemble surrogate, its invariants, and the candidate
 * argmin: plan = argmin over candidates c of model(features, c). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mx_predictor.h"
#include "mx_predictor_internal.h"

static const char *const plan_input_names[MX_MODEL_NPLAN_INPUTS] = {"plan_tau_c", "plan_tau_r", "plan_mode",
                                                                    "plan_cold"};

const char *mx_model_input_name(int i) {
  if (i >= 0 && i < MX_NFEATURES) return mx_feature_name(i);
  if (i >= MX_NFEATURES && i < MX_MODEL_NINPUTS) return plan_input_names[i - MX_NFEATURES];
  return NULL;
}

const char *mx_model_status_name(mx_model_status s) {
  static const char *const names[] = {"ok",    "io error",     "syntax error", "wrong version", "inputs differ",
                                      "bad tree", "bad plan", "bad value",  "truncated",     "out of memory"};
  return ((int)s >= 0 && (int)s <= MX_MODEL_ERR_MEM) ? names[s] : "?";
}

void mx_model_inputs(const mx_features *f, const mx_plan *p, double x[MX_MODEL_NINPUTS]) {
  memcpy(x, f->v, sizeof(f->v));
  x[MX_NFEATURES + 0] = p->crux.tau_c;
  x[MX_NFEATURES + 1] = p->crux.tau_r;
  x[MX_NFEATURES + 2] = (double)p->mode;
  x[MX_NFEATURES + 3] = (double)p->cold;
}

/* numpy's astype(float32) of a double: round to nearest even, +-inf from FLT_MAX + half an ulp on
 * (done by hand: converting an out-of-range double to float is undefined behaviour in C). */
static double as_float32(double v) {
  const double halfway = (double)FLT_MAX + ldexp(1.0, 103); /* FLT_MAX's last bit is odd: the tie goes up */
  if (fabs(v) > FLT_MAX) return fabs(v) >= halfway ? copysign(INFINITY, v) : copysign(FLT_MAX, v);
  return (double)(float)v;
}

/* Trees walked together: their node loads are independent, so walking them level by level in one
 * loop overlaps their cache misses, where one walk after another waits for each miss in turn
 * (docs/performance.md, "Behind the source's constants"). */
#define TREE_BATCH 64

_Static_assert(sizeof(mx_model_node) == 24, "mx_model_node is the 24 bytes mx_predictor.h states");

/* y[i] = output of tree t0 + i, i < nt <= TREE_BATCH: every tree walked from its root, all of them
 * one level per sweep; children are greater than their parent, so every walk ends. Each step reads
 * one element of M->node (split = threshold here, = value at the leaf where the walk stops). */
static void trees_eval(const mx_model *M, int32_t t0, int32_t nt, const double *x32, double *y) {
  const mx_model_node *at[TREE_BATCH]; /* tree t0 + i's walk is at node at[i] */
  for (int32_t i = 0; i < nt; i++) at[i] = &M->node[M->tree_start[t0 + i]];
  for (int walking = 1; walking;) {
    walking = 0;
    for (int32_t i = 0; i < nt; i++) {
      const mx_model_node *n = at[i];
      if (n->left < 0) continue; /* a leaf: this walk is done */
      at[i] = &M->node[M->tree_start[t0 + i] + (x32[n->feature] <= n->split ? n->left : n->right)];
      walking = 1;
    }
  }
  for (int32_t i = 0; i < nt; i++) y[i] = at[i]->split;
}

typedef struct {
  double v;
  int32_t t;
} tree_out;

static int by_value_then_tree(const void *a, const void *b) {
  const tree_out *p = a, *q = b;
  if (p->v != q->v) return p->v < q->v ? -1 : 1;
  return (p->t > q->t) - (p->t < q->t);
}

/* scikit-learn's AdaBoostRegressor._get_median_predict: outputs ascending, first whose cumulative
 * weight >= half the total. Equal outputs are summed in tree order (numpy's argsort order among
 * ties may differ, which can only change the rounding of a cumulative sum exactly at the half). */
static double weighted_median(const mx_model *M, const double *x32) {
  tree_out out[MX_MODEL_MAX_MEDIAN_TREES];
  double y[TREE_BATCH];
  for (int32_t t0 = 0; t0 < M->ntrees; t0 += TREE_BATCH) {
    const int32_t nt = M->ntrees - t0 < TREE_BATCH ? M->ntrees - t0 : TREE_BATCH;
    trees_eval(M, t0, nt, x32, y);
    for (int32_t i = 0; i < nt; i++) out[t0 + i] = (tree_out){y[i], t0 + i};
  }
  qsort(out, (size_t)M->ntrees, sizeof(out[0]), by_value_then_tree);
  double total = 0.0;
  for (int32_t t = 0; t < M->ntrees; t++) total += M->tree_weight[out[t].t];
  double cum = 0.0;
  for (int32_t t = 0; t < M->ntrees; t++) {
    cum += M->tree_weight[out[t].t];
    if (cum >= 0.5 * total) return out[t].v;
  }
  return out[M->ntrees - 1].v;
}

/* The mean of the trees' outputs (weighted: base_score + the weighted sum), summed in tree order. */
static double tree_sum(const mx_model *M, const double *x32, int weighted) {
  double s = weighted ? M->base_score : 0.0, y[TREE_BATCH];
  for (int32_t t0 = 0; t0 < M->ntrees; t0 += TREE_BATCH) {
    const int32_t nt = M->ntrees - t0 < TREE_BATCH ? M->ntrees - t0 : TREE_BATCH;
    trees_eval(M, t0, nt, x32, y);
    for (int32_t i = 0; i < nt; i++) s += weighted ? M->tree_weight[t0 + i] * y[i] : y[i];
  }
  return weighted ? s : s / M->ntrees;
}

double mx_model_eval(const mx_model *M, const double x[MX_MODEL_NINPUTS]) {
  double x32[MX_MODEL_NINPUTS];
  for (int i = 0; i < MX_MODEL_NINPUTS; i++) x32[i] = as_float32(x[i]);
  if (M->ensemble == MX_ENSEMBLE_WEIGHTED_MEDIAN) return weighted_median(M, x32);
  return tree_sum(M, x32, M->ensemble != MX_ENSEMBLE_MEAN);
}

double mx_model_plan_log_ratio(const mx_model *M, const mx_features *f, const mx_plan *p) {
  double x[MX_MODEL_NINPUTS];
  mx_model_inputs(f, p, x);
  return mx_model_eval(M, x);
}

typedef struct {
  mx_plan p;
  int32_t i; /* its index in the caller's list */
} plan_at;

static int cmp_double(double a, double b) { return (a > b) - (a < b); }

/* plans by (tau_c, tau_r, mode, cold), then by index: equal plans end up next to each other */
static int by_plan_then_index(const void *a, const void *b) {
  const plan_at *p = a, *q = b;
  int c = cmp_double(p->p.crux.tau_c, q->p.crux.tau_c);
  if (!c) c = cmp_double(p->p.crux.tau_r, q->p.crux.tau_r);
  if (!c) c = ((int)p->p.mode > (int)q->p.mode) - ((int)p->p.mode < (int)q->p.mode);
  if (!c) c = ((int)p->p.cold > (int)q->p.cold) - ((int)p->p.cold < (int)q->p.cold);
  return c ? c : (p->i > q->i) - (p->i < q->i);
}

static int same_plan(const mx_plan *a, const mx_plan *b) {
  return a->crux.tau_c == b->crux.tau_c && a->crux.tau_r == b->crux.tau_r && a->mode == b->mode && a->cold == b->cold;
}

mx_status mx_model_plans_log_ratio(const mx_model *M, const mx_features *f, int32_t n, const mx_plan *plans, double *y) {
  if (!M || !f || n < 0 || (n > 0 && (!plans || !y))) return MX_ERR_ARG;
  if (n == 0) return MX_OK;
  plan_at *s = malloc((size_t)n * sizeof(*s));
  if (!s) return MX_ERR_MEM;
  for (int32_t i = 0; i < n; i++) s[i] = (plan_at){plans[i], i};
  qsort(s, (size_t)n, sizeof(*s), by_plan_then_index);
  double yk = 0.0;
  for (int32_t k = 0; k < n; k++) {
    if (k == 0 || !same_plan(&s[k].p, &s[k - 1].p)) yk = mx_model_plan_log_ratio(M, f, &s[k].p);
    y[s[k].i] = yk;
  }
  free(s);
  return MX_OK;
}

mx_status mx_predict_plan(const mx_model *M, const mx_features *f, mx_prediction *out) {
  if (!M || !f || !out || M->ncandidates < 1) return MX_ERR_ARG;
  double x[MX_MODEL_NINPUTS];
  mx_model_inputs(f, &M->candidates[0], x);
  int32_t best = -1;
  double best_y = INFINITY;
  for (int32_t c = 0; c < M->ncandidates; c++) {
    const mx_plan *p = &M->candidates[c];
    x[MX_NFEATURES + 0] = p->crux.tau_c;
    x[MX_NFEATURES + 1] = p->crux.tau_r;
    x[MX_NFEATURES + 2] = (double)p->mode;
    x[MX_NFEATURES + 3] = (double)p->cold;
    const double y = mx_model_eval(M, x);
    if (best < 0 || y < best_y) best = c, best_y = y;
  }
  out->index = best;
  out->plan = M->candidates[best];
  out->log_ratio = best_y;
  out->ratio = exp(best_y);
  return MX_OK;
}

/* ---- invariants ---------------------------------------------------------------------------------- */

int mx_model_node_problem(int32_t nnodes, int32_t n, int32_t feature, double threshold, int32_t left, int32_t right,
                          double value, char *what, size_t len) {
  if (!isfinite(value)) return snprintf(what, len, "value %g is not finite", value), 1;
  if (left == -1 && right == -1) {
    if (feature != -1) return snprintf(what, len, "leaf has feature %d (must be -1)", (int)feature), 1;
    return 0;
  }
  if (feature < 0 || feature >= MX_MODEL_NINPUTS)
    return snprintf(what, len, "feature %d is outside 0..%d", (int)feature, MX_MODEL_NINPUTS - 1), 1;
  if (!isfinite(threshold)) return snprintf(what, len, "threshold %g is not finite", threshold), 1;
  if (left <= n || left >= nnodes || right <= n || right >= nnodes)
    return snprintf(what, len, "children %d, %d must lie in %d..%d (after the node: no cycles; inside the tree)",
                    (int)left, (int)right, (int)n + 1, (int)nnodes - 1), 1;
  if (left == right) return snprintf(what, len, "both children are node %d", (int)left), 1;
  return 0;
}

int mx_model_ensemble_parse(const char *s, mx_ensemble *e) {
  static const char *const names[] = {"sum", "mean", "weighted_median"};
  for (int k = 0; k < 3; k++)
    if (s && strcmp(s, names[k]) == 0) return *e = (mx_ensemble)k, 0;
  return -1;
}

const char *mx_model_ensemble_name(mx_ensemble e) {
  return e == MX_ENSEMBLE_SUM ? "sum" : e == MX_ENSEMBLE_MEAN ? "mean" : e == MX_ENSEMBLE_WEIGHTED_MEDIAN ? "weighted_median" : "?";
}

static mx_model_status fail(char *err, size_t errlen, mx_model_status st, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* Counts, weights, base and setup model (everything but the nodes and the candidates). */
static mx_model_status check_header(const mx_model *M, char *err, size_t errlen) {
  if (M->version != MX_MODEL_VERSION) return fail(err, errlen, MX_MODEL_ERR_VERSION, "version %d, expected %d", M->version, MX_MODEL_VERSION);
  if (memchr(M->trained_on, 0, sizeof M->trained_on) == NULL) return fail(err, errlen, MX_MODEL_ERR_VALUE, "trained_on is not terminated");
  if ((int)M->ensemble < MX_ENSEMBLE_SUM || (int)M->ensemble > MX_ENSEMBLE_WEIGHTED_MEDIAN)
    return fail(err, errlen, MX_MODEL_ERR_VALUE, "unknown ensemble %d", (int)M->ensemble);
  if (M->ntrees < 1 || M->ntrees > MX_MODEL_MAX_TREES || M->nnodes < M->ntrees || M->nnodes > MX_MODEL_MAX_NODES)
    return fail(err, errlen, MX_MODEL_ERR_VALUE, "%d trees, %d nodes: out of range", (int)M->ntrees, (int)M->nnodes);
  if (M->ensemble == MX_ENSEMBLE_WEIGHTED_MEDIAN && M->ntrees > MX_MODEL_MAX_MEDIAN_TREES)
    return fail(err, errlen, MX_MODEL_ERR_VALUE, "weighted_median takes at most %d trees, not %d", MX_MODEL_MAX_MEDIAN_TREES, (int)M->ntrees);
  if (!isfinite(M->base_score)) return fail(err, errlen, MX_MODEL_ERR_VALUE, "base_score %g is not finite", M->base_score);
  if (!isfinite(M->setup.ns_const) || !isfinite(M->setup.ns_tau_c) || !isfinite(M->setup.ns_tau_r))
    return fail(err, errlen, MX_MODEL_ERR_VALUE, "setup coefficients must be finite");
  if (!M->tree_start || !M->tree_weight || !M->feature || !M->threshold || !M->left || !M->right || !M->value || !M->candidates)
    return fail(err, errlen, MX_MODEL_ERR_VALUE, "missing arrays");
  if (!M->node) return fail(err, errlen, MX_MODEL_ERR_VALUE, "missing node array (mx_model_nodes_fill makes it from the arrays)");
  double total = 0.0;
  for (int32_t t = 0; t < M->ntrees; t++) {
    const double w = M->tree_weight[t];
    if (!isfinite(w) || (M->ensemble == MX_ENSEMBLE_WEIGHTED_MEDIAN && w < 0.0))
      return fail(err, errlen, MX_MODEL_ERR_VALUE, "tree %d: weight %g", (int)t, w);
    total += w;
  }
  if (M->ensemble == MX_ENSEMBLE_WEIGHTED_MEDIAN && !(total > 0.0))
    return fail(err, errlen, MX_MODEL_ERR_VALUE, "weighted_median needs a positive total tree weight");
  return MX_MODEL_OK;
}

/* Node k as the arrays give it (the value of an inner node is dropped: the walk never reads it). */
static mx_model_node node_of_arrays(const mx_model *M, int32_t k) {
  const int leaf = M->left[k] < 0;
  return (mx_model_node){leaf ? M->value[k] : M->threshold[k], M->feature[k], M->left[k], M->right[k]};
}

void mx_model_nodes_fill(const mx_model *M, mx_model_node *node) {
  for (int32_t k = 0; k < M->nnodes; k++) node[k] = node_of_arrays(M, k);
}

/* 0 if M->node[k] equals node k of the arrays (split compared bit for bit: a leaf's -0.0 is not its
 * 0.0), else 1 and the first field that differs in what[len]. Node k must be well formed. */
static int node_disagrees(const mx_model *M, int32_t k, char *what, size_t len) {
  const mx_model_node a = node_of_arrays(M, k), *n = &M->node[k];
  if (memcmp(&a.split, &n->split, sizeof a.split) != 0)
    return snprintf(what, len, "node array's split %.17g differs from the %s %.17g", n->split,
                    a.left < 0 ? "value" : "threshold", a.split), 1;
  if (a.feature != n->feature)
    return snprintf(what, len, "node array's feature %d differs from the arrays' %d", (int)n->feature, (int)a.feature), 1;
  if (a.left != n->left || a.right != n->right)
    return snprintf(what, len, "node array's children %d, %d differ from the arrays' %d, %d", (int)n->left, (int)n->right,
                    (int)a.left, (int)a.right), 1;
  return 0;
}

mx_model_status mx_model_check(const mx_model *M, char *err, size_t errlen) {
  if (!M) return fail(err, errlen, MX_MODEL_ERR_VALUE, "no model");
  mx_model_status st = check_header(M, err, errlen);
  if (st != MX_MODEL_OK) return st;
  if (M->tree_start[0] != 0 || M->tree_start[M->ntrees] != M->nnodes)
    return fail(err, errlen, MX_MODEL_ERR_TREE, "tree_start must run from 0 to nnodes");
  for (int32_t t = 0; t < M->ntrees; t++) {
    const int32_t b = M->tree_start[t], nn = M->tree_start[t + 1] - b;
    if (nn < 1 || M->tree_start[t + 1] > M->nnodes) return fail(err, errlen, MX_MODEL_ERR_TREE, "tree %d has %d nodes", (int)t, (int)nn);
    for (int32_t n = 0; n < nn; n++) {
      char what[160];
      if (mx_model_node_problem(nn, n, M->feature[b + n], M->threshold[b + n], M->left[b + n], M->right[b + n],
                                M->value[b + n], what, sizeof what) ||
          node_disagrees(M, b + n, what, sizeof what))
        return fail(err, errlen, MX_MODEL_ERR_TREE, "tree %d node %d: %s", (int)t, (int)n, what);
    }
  }
  if (M->ncandidates < 1 || M->ncandidates > MX_MODEL_MAX_CANDIDATES)
    return fail(err, errlen, MX_MODEL_ERR_PLAN, "%d candidates (1..%d)", (int)M->ncandidates, MX_MODEL_MAX_CANDIDATES);
  for (int32_t c = 0; c < M->ncandidates; c++)
    if (mx_plan_check(&M->candidates[c]) != MX_OK) return fail(err, errlen, MX_MODEL_ERR_PLAN, "candidate %d is not a valid plan", (int)c);
  return MX_MODEL_OK;
}

void mx_model_free(mx_model *M) {
  if (!M || !M->owned) return;
  free((void *)M->tree_start);
  free((void *)M->tree_weight);
  free((void *)M->feature);
  free((void *)M->threshold);
  free((void *)M->left);
  free((void *)M->right);
  free((void *)M->value);
  free((void *)M->node);
  free((void *)M->candidates);
  memset(M, 0, sizeof(*M));
}
