/* matxtract-predictor - the plan predictor on the CPU: input names, features, model checks,
 * predictions, and the cost of features + prediction per nonzero.
 *
 *   matxtract-predictor names                          the model's input names, one per line
 *   matxtract-predictor features MATRIX                one JSON line of features (what labels.py stores)
 *   matxtract-predictor check MODEL                    load MODEL; exit 1 with the loader's message
 *   matxtract-predictor predict [-model F] MATRIX      the plan the model picks (default: the embedded)
 *   matxtract-predictor export-default FILE            write the embedded model as a model file
 *   matxtract-predictor cost [-model F] [-synthetic TREES:DEPTH:CANDS] [-reps N] MATRIX...
 * MATRIX: -gen SPEC [-seed N] or -f FILE (.mtx or PETSc binary); cost takes several.
 * cost prints, per matrix, the median over -reps runs (default 5) of mx_features_compute and of
 * mx_predict_plan (each prediction timed as the mean of a batch of calls), in ns per nonzero.
 * -synthetic builds a random model of that shape (complete trees, random splits, a candidate grid)
 * to time a model as large as train.py may produce: it predicts nothing meaningful. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/mx_predictor.h"
#include "pred_matrix.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int usage(void) {
  fprintf(stderr, "usage: matxtract-predictor names | features MATRIX | check MODEL | predict [-model F] MATRIX |\n"
                  "       export-default FILE | cost [-model F] [-synthetic TREES:DEPTH:CANDS] [-reps N] MATRIX...\n"
                  "MATRIX: -gen SPEC [-seed N] | -f FILE\n");
  return 2;
}

typedef struct {
  const char *spec, *path;
  unsigned long long seed;
} matrix_arg;

/* Parses "-gen SPEC", "-seed N" (applies to the last -gen), "-f FILE" at argv[*i]; 1 if consumed. */
static int matrix_option(int argc, char **argv, int *i, matrix_arg *m, int *n, int max) {
  const char *a = argv[*i];
  if (*i + 1 >= argc) return 0;
  if (!strcmp(a, "-gen") || !strcmp(a, "-f")) {
    if (*n == max) return 0;
    m[*n] = (matrix_arg){!strcmp(a, "-gen") ? argv[*i + 1] : NULL, !strcmp(a, "-f") ? argv[*i + 1] : NULL, 0};
    ++*n, ++*i;
    return 1;
  }
  if (!strcmp(a, "-seed") && *n > 0) {
    m[*n - 1].seed = strtoull(argv[++*i], NULL, 10);
    return 1;
  }
  return 0;
}

static int load_model(const char *path, mx_model *own, const mx_model **M) {
  char err[512];
  if (!path) return *M = mx_model_default(), 0;
  if (mx_model_read(path, own, err, sizeof err) != MX_MODEL_OK) {
    fprintf(stderr, "matxtract-predictor: %s\n", err);
    return 1;
  }
  *M = own;
  return 0;
}

static int load_features(const matrix_arg *m, mx_features *f, double *nnz) {
  pred_matrix P;
  char err[512];
  if (pred_matrix_load(m->spec, m->path, m->seed, &P, err, sizeof err)) {
    fprintf(stderr, "matxtract-predictor: %s\n", err);
    return 1;
  }
  const mx_status st = mx_features_compute(&P.A, f);
  *nnz = (double)P.io.nnz;
  pred_matrix_free(&P);
  if (st != MX_OK) fprintf(stderr, "matxtract-predictor: features failed (status %d)\n", (int)st);
  return st != MX_OK;
}

/* ---- synthetic model (cost measurement only) ----------------------------------------------------- */

typedef struct {
  mx_model M;
  int32_t *start, *feat, *left, *right;
  double *weight, *thr, *val;
  mx_model_node *node;
  mx_plan *cand;
} synthetic;

/* ntrees complete trees of the given depth with random splits on random inputs, and a candidate
 * grid tau in {0, 1/k, ..} x mode {du, se} x cold {segment, merge, cusparse} cut to ncand. */
static int synthetic_build(int ntrees, int depth, int ncand, synthetic *S) {
  const int32_t per = (1 << (depth + 1)) - 1, nn = per * ntrees;
  memset(S, 0, sizeof(*S));
  S->start = malloc(((size_t)ntrees + 1) * sizeof(int32_t));
  S->weight = malloc((size_t)ntrees * sizeof(double));
  S->feat = malloc((size_t)nn * sizeof(int32_t));
  S->left = malloc((size_t)nn * sizeof(int32_t));
  S->right = malloc((size_t)nn * sizeof(int32_t));
  S->thr = malloc((size_t)nn * sizeof(double));
  S->val = malloc((size_t)nn * sizeof(double));
  S->node = malloc((size_t)nn * sizeof(mx_model_node));
  S->cand = malloc((size_t)ncand * sizeof(mx_plan));
  if (!S->start || !S->weight || !S->feat || !S->left || !S->right || !S->thr || !S->val || !S->node || !S->cand) return 1;
  srand(12345);
  for (int t = 0; t < ntrees; t++) {
    S->start[t] = t * per;
    S->weight[t] = 0.1;
    for (int32_t n = 0; n < per; n++) {
      const int32_t k = t * per + n, internal = 2 * n + 2 < per;
      S->feat[k] = internal ? rand() % MX_MODEL_NINPUTS : -1;
      S->thr[k] = internal ? (double)rand() / RAND_MAX : 0.0;
      S->left[k] = internal ? 2 * n + 1 : -1;
      S->right[k] = internal ? 2 * n + 2 : -1;
      S->val[k] = (double)rand() / RAND_MAX - 0.5;
    }
  }
  S->start[ntrees] = nn;
  for (int c = 0; c < ncand; c++) {
    const int grid = 10, crux = c / 6, a = crux % (grid + 1), b = (crux / (grid + 1)) % (a + 1);
    S->cand[c] = (mx_plan){{(double)a / grid, (double)b / grid}, (mx_mode_request)(1 + c % 2), (mx_plan_cold)(1 + (c / 2) % 3)};
  }
  S->M = (mx_model){.version = MX_MODEL_VERSION, .ensemble = MX_ENSEMBLE_SUM, .ntrees = ntrees, .nnodes = nn,
                    .tree_start = S->start, .tree_weight = S->weight, .feature = S->feat, .threshold = S->thr,
                    .left = S->left, .right = S->right, .value = S->val, .node = S->node, .ncandidates = ncand,
                    .candidates = S->cand};
  mx_model_nodes_fill(&S->M, S->node);
  snprintf(S->M.trained_on, sizeof S->M.trained_on, "synthetic random model for timing only");
  char err[256];
  if (mx_model_check(&S->M, err, sizeof err) != MX_MODEL_OK) return fprintf(stderr, "synthetic: %s\n", err), 1;
  return 0;
}

static void synthetic_free(synthetic *S) {
  free(S->start), free(S->weight), free(S->feat), free(S->left), free(S->right), free(S->thr), free(S->val), free(S->node), free(S->cand);
}

/* ---- commands ------------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Seconds of one mx_predict_plan: mean over a batch of at least 0.05 s. */
static double predict_seconds(const mx_model *M, const mx_features *f) {
  mx_prediction p;
  int batch = 1;
  for (;;) {
    const double t0 = now_s();
    for (int k = 0; k < batch; k++) mx_predict_plan(M, f, &p);
    const double dt = now_s() - t0;
    if (dt >= 0.05) return dt / batch;
    batch *= 4;
  }
}

static int cost_one(const matrix_arg *m, const mx_model *M, int reps) {
  pred_matrix P;
  char err[512];
  if (pred_matrix_load(m->spec, m->path, m->seed, &P, err, sizeof err)) return fprintf(stderr, "%s\n", err), 1;
  double tf[64], tp[64];
  mx_features f;
  for (int r = 0; r < reps; r++) {
    const double t0 = now_s();
    if (mx_features_compute(&P.A, &f) != MX_OK) return pred_matrix_free(&P), 1;
    tf[r] = now_s() - t0;
    tp[r] = predict_seconds(M, &f);
  }
  const double nnz = (double)P.io.nnz, f_s = median(tf, reps), p_s = median(tp, reps);
  printf("%-28s %10d %10d %11.0f %10.3f %9.2f %10.4f %9.2f\n", m->spec ? m->spec : m->path, (int)P.io.nrows,
         (int)P.io.ncols, nnz, 1e3 * f_s, 1e9 * f_s / nnz, 1e3 * p_s, 1e9 * (f_s + p_s) / nnz);
  pred_matrix_free(&P);
  return 0;
}

static int cmd_cost(int argc, char **argv) {
  matrix_arg mats[256];
  int nm = 0, reps = 5, trees = 0, depth = 0, ncand = 0;
  const char *model = NULL;
  for (int i = 2; i < argc; i++) {
    if (matrix_option(argc, argv, &i, mats, &nm, 256)) continue;
    if (!strcmp(argv[i], "-model") && i + 1 < argc) model = argv[++i];
    else if (!strcmp(argv[i], "-reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-synthetic") && i + 1 < argc) {
      if (sscanf(argv[++i], "%d:%d:%d", &trees, &depth, &ncand) != 3 || trees < 1 || depth < 0 || depth > 20 || ncand < 1)
        return fprintf(stderr, "-synthetic TREES:DEPTH:CANDS (depth <= 20)\n"), 2;
    } else return usage();
  }
  if (nm == 0 || reps < 1 || reps > 64) return usage();
  mx_model own = {0};
  const mx_model *M;
  synthetic S = {0};
  if (trees) {
    if (synthetic_build(trees, depth, ncand, &S)) return 1;
    M = &S.M;
  } else if (load_model(model, &own, &M)) return 1;
  printf("# model: %s; %d trees, %d nodes, %d candidates; median of %d runs\n", M->trained_on, (int)M->ntrees,
         (int)M->nnodes, (int)M->ncandidates, reps);
  printf("%-28s %10s %10s %11s %10s %9s %10s %9s\n", "matrix", "rows", "cols", "nnz", "feat_ms", "feat_ns/nz", "pred_ms",
         "total_ns/nz");
  int rc = 0;
  for (int k = 0; k < nm; k++) rc |= cost_one(&mats[k], M, reps);
  mx_model_free(&own);
  if (trees) synthetic_free(&S);
  return rc;
}

static int cmd_predict(int argc, char **argv) {
  matrix_arg m[1];
  int nm = 0;
  const char *model = NULL;
  for (int i = 2; i < argc; i++) {
    if (matrix_option(argc, argv, &i, m, &nm, 1)) continue;
    if (!strcmp(argv[i], "-model") && i + 1 < argc) model = argv[++i];
    else return usage();
  }
  mx_model own = {0};
  const mx_model *M;
  mx_features f;
  mx_prediction p;
  double nnz;
  if (nm != 1) return usage();
  if (load_model(model, &own, &M) || load_features(&m[0], &f, &nnz)) return 1;
  mx_predict_plan(M, &f, &p);
  printf("plan crux %.17g,%.17g mode %s cold %s candidate %d predicted_ratio %.6g extra_setup_s %.6g\nmodel %s\n",
         p.plan.crux.tau_c, p.plan.crux.tau_r, mx_plan_mode_name(p.plan.mode), mx_plan_cold_name(p.plan.cold), (int)p.index,
         p.ratio, mx_setup_extra_seconds(&M->setup, &p.plan, nnz), M->trained_on);
  mx_model_free(&own);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  const char *cmd = argv[1];
  if (!strcmp(cmd, "names") && argc == 2) {
    for (int i = 0; i < MX_MODEL_NINPUTS; i++) printf("%s\n", mx_model_input_name(i));
    return 0;
  }
  if (!strcmp(cmd, "features")) {
    matrix_arg m[1];
    int nm = 0;
    mx_features f;
    double nnz;
    for (int i = 2; i < argc; i++)
      if (!matrix_option(argc, argv, &i, m, &nm, 1)) return usage();
    if (nm != 1) return usage();
    if (load_features(&m[0], &f, &nnz)) return 1;
    pred_print_features_json(stdout, &f);
    return 0;
  }
  if (!strcmp(cmd, "check") && argc == 3) {
    mx_model M;
    const mx_model *pm;
    if (load_model(argv[2], &M, &pm)) return 1;
    printf("%s: ok, %s ensemble, %d trees, %d nodes, %d candidates; trained_on: %s\n", argv[2],
           M.ensemble == MX_ENSEMBLE_SUM ? "sum" : M.ensemble == MX_ENSEMBLE_MEAN ? "mean" : "weighted_median",
           (int)M.ntrees, (int)M.nnodes, (int)M.ncandidates, M.trained_on);
    mx_model_free(&M);
    return 0;
  }
  if (!strcmp(cmd, "export-default") && argc == 3) {
    char err[256];
    if (mx_model_write(mx_model_default(), argv[2], err, sizeof err) != MX_MODEL_OK)
      return fprintf(stderr, "matxtract-predictor: %s\n", err), 1;
    return 0;
  }
  if (!strcmp(cmd, "predict")) return cmd_predict(argc, argv);
  if (!strcmp(cmd, "cost")) return cmd_cost(argc, argv);
  return usage();
}
