/* mx_predictor.h - the plan predictor: a tree-ensemble surrogate of SpMV time, evaluated from plain
 * arrays on a fixed list of candidate plans (pure C, no PETSc, no CUDA).
 *
 * Inputs x (MX_MODEL_NINPUTS doubles): the matrix features of mx_features_compute (MX_NFEATURES,
 * in mx_feature_name order), then the plan: tau_c, tau_r, mode (0 auto, 1 du, 2 se), cold
 * (0 auto, 1 segment, 2 merge, 3 cusparse). Output: the predicted log(t_plan / t_ref), t_ref = the
 * time of crux (0,0) with the best cold kernel of the same matrix. The predictor returns the
 * candidate with the smallest prediction (ties: the first in the list) and exp of it.
 *
 * Trees are scikit-learn's tree_ arrays, one tree after the other: node n of tree t is entry
 * tree_start[t] + n; children are local indices (-1 at a leaf) and always greater than their parent
 * (scikit-learn's order), which the checks enforce, so every walk ends. A split sends x left iff
 * (float)x[feature] <= threshold: scikit-learn casts inputs to float32 before comparing them with
 * its double thresholds, and so do we, so predictions match scikit-learn's bit for bit.
 * The evaluation reads the same trees from one array of mx_model_node (one node = one element, so
 * a step of a walk costs one cache miss where the five arrays cost up to five); the five arrays
 * stay, for the file format and the tools, and mx_model_check requires both to agree element for
 * element.
 * Ensembles:
 *   SUM             y = base; y += weight[t] * tree_t(x) for t = 0.. in order
 *                   (GradientBoostingRegressor: base = init_ constant, weight = learning_rate)
 *   MEAN            y = (tree_0(x) + tree_1(x) + ...) / ntrees, summed in order; base and weights
 *                   unused (RandomForestRegressor, ExtraTreesRegressor with n_jobs = 1)
 *   WEIGHTED_MEDIAN AdaBoostRegressor: tree outputs sorted ascending, the first whose cumulative
 *                   weight reaches half the total weight (scikit-learn's _get_median_predict).
 *
 * Model file (text, one record per line, '#' lines and blank lines ignored):
 *   matxtract-model 1
 *   trained_on <text to the end of the line>
 *   ensemble sum|mean|weighted_median
 *   base_score <double>
 *   inputs <n>                        1 <= n <= MX_MODEL_NINPUTS
 *   input <i> <name>                  x n, i = 0.. in order; each name one of this library's
 *                                     inputs (mx_model_input_name), none twice; a node's <feature>
 *                                     i is read as the library's input of that name, so a model
 *                                     trained before a feature was added still loads (the writer
 *                                     lists every input of the library, in its order)
 *   trees <ntrees>
 *   tree <t> <nnodes> <weight>        then nnodes lines:
 *   node <n> <feature> <threshold> <left> <right> <value>   (leaf: feature -1, left -1, right -1)
 *   candidates <n>
 *   candidate <i> <tau_c> <tau_r> <mode name> <cold name>
 *   setup_ns_per_nnz <const> <per tau_c> <per tau_r>          (mx_setup_model)
 *   end
 * Doubles are written with 17 significant digits (exact round trip). */
#ifndef MX_PREDICTOR_H
#define MX_PREDICTOR_H

#include <stdio.h>

#include "mx_features.h"
#include "mx_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MX_MODEL_VERSION 1
#define MX_MODEL_NPLAN_INPUTS 4
#define MX_MODEL_NINPUTS (MX_NFEATURES + MX_MODEL_NPLAN_INPUTS)
#define MX_MODEL_TEXT 256 /* bytes of trained_on, including the terminating 0 */

typedef enum { MX_ENSEMBLE_SUM = 0, MX_ENSEMBLE_MEAN = 1, MX_ENSEMBLE_WEIGHTED_MEDIAN = 2 } mx_ensemble;

typedef enum {
  MX_MODEL_OK = 0,
  MX_MODEL_ERR_IO = 1,       /* file cannot be opened or read */
  MX_MODEL_ERR_SYNTAX = 2,   /* unknown or missing record, bad number, line too long, trailing text */
  MX_MODEL_ERR_VERSION = 3,  /* not a matxtract-model file, or another version */
  MX_MODEL_ERR_INPUTS = 4,   /* input count or a name differs from this library's features */
  MX_MODEL_ERR_TREE = 5,     /* a node's feature, threshold, child or value is out of range */
  MX_MODEL_ERR_PLAN = 6,     /* a candidate is not a valid plan, or there is none */
  MX_MODEL_ERR_VALUE = 7,    /* a count out of range, a weight, base or setup coefficient not finite */
  MX_MODEL_ERR_TRUNCATED = 8,/* the file ends before 'end' */
  MX_MODEL_ERR_MEM = 9
} mx_model_status;

/* Node n of a tree in one element: split is the threshold at an inner node and the value at a leaf
 * (the value of an inner node is never read); feature, left and right as in the arrays (-1 at a
 * leaf, children local to the tree). 24 bytes. */
typedef struct {
  double split;
  int32_t feature;
  int32_t left, right;
} mx_model_node;

typedef struct {
  int version;
  char trained_on[MX_MODEL_TEXT]; /* what the labels were measured on, or why there are none */
  mx_ensemble ensemble;
  double base_score;
  int32_t ntrees, nnodes;
  const int32_t *tree_start;  /* ntrees+1; tree_start[0] = 0, tree_start[ntrees] = nnodes */
  const double *tree_weight;  /* ntrees */
  const int32_t *feature;     /* nnodes; -1 at leaves */
  const double *threshold;    /* nnodes */
  const int32_t *left, *right;/* nnodes; local to the tree, -1 at leaves */
  const double *value;        /* nnodes */
  const mx_model_node *node;  /* nnodes: the same trees as feature..value, one node per element
                                 (what the evaluation reads; mx_model_nodes_fill makes it) */
  int32_t ncandidates;
  const mx_plan *candidates;  /* ncandidates >= 1 */
  mx_setup_model setup;
  int owned; /* 1: the arrays (node included) were allocated by mx_model_read and are freed by mx_model_free */
} mx_model;

/* The model compiled into the library (src/core/mx_model_default.c, generated by
 * tuning/predictor/train.py, or by model_export.py --c-source from a model file). Its trained_on says
 * what it was trained on. */
const mx_model *mx_model_default(void);

/* Every invariant listed above, node[] agreeing with the arrays included; on failure a message
 * naming the tree and node (or what else). */
mx_model_status mx_model_check(const mx_model *M, char *err, size_t errlen);

/* node[k] for k < M->nnodes from M's arrays feature..value (M->node is neither read nor set): for
 * whoever builds a model by hand; mx_model_read does it itself. */
void mx_model_nodes_fill(const mx_model *M, mx_model_node *node);

/* Read a model file. On failure *M is zeroed, nothing stays allocated, and err says
 * "FILE:LINE: what is wrong". name is the file name used in messages. */
mx_model_status mx_model_read(const char *path, mx_model *M, char *err, size_t errlen);
mx_model_status mx_model_read_stream(FILE *f, const char *name, mx_model *M, char *err, size_t errlen);

/* Write M in the file format (M must pass mx_model_check). */
mx_model_status mx_model_write(const mx_model *M, const char *path, char *err, size_t errlen);
mx_model_status mx_model_write_stream(const mx_model *M, FILE *f, char *err, size_t errlen);

/* Free what mx_model_read allocated and zero *M; a no-op on models it did not allocate. */
void mx_model_free(mx_model *M);

/* Name of input i (features, then the plan's four), or NULL. */
const char *mx_model_input_name(int i);

/* x = (features, plan) as described above. */
void mx_model_inputs(const mx_features *f, const mx_plan *p, double x[MX_MODEL_NINPUTS]);

/* The ensemble's output for x (M checked). */
double mx_model_eval(const mx_model *M, const double x[MX_MODEL_NINPUTS]);

/* Predicted log(t_plan / t_ref) of any plan (also one that is not a candidate, e.g. the current). */
double mx_model_plan_log_ratio(const mx_model *M, const mx_features *f, const mx_plan *p);

/* y[i] = mx_model_plan_log_ratio(M, f, &plans[i]) for i < n, each distinct plan evaluated once
 * (MX_ERR_MEM: no memory to sort the plans; MX_ERR_ARG: n < 0 or a NULL argument). */
mx_status mx_model_plans_log_ratio(const mx_model *M, const mx_features *f, int32_t n, const mx_plan *plans, double *y);

typedef struct {
  int32_t index;     /* candidate index */
  mx_plan plan;
  double log_ratio;  /* predicted log(t_plan / t_ref) */
  double ratio;      /* exp(log_ratio) */
} mx_prediction;

/* The candidate with the smallest predicted time (ties: the first). MX_ERR_ARG on NULL arguments. */
mx_status mx_predict_plan(const mx_model *M, const mx_features *f, mx_prediction *out);

const char *mx_model_status_name(mx_model_status s);

#ifdef __cplusplus
}
#endif
#endif
