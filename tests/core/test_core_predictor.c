/* test_core_predictor.c - the plan predictor: a model file with known trees gives known predictions
 * and plans (sum, mean, weighted median; float32 splits as scikit-learn), inputs read by name (a
 * model of an older, shorter input list predicts as in this library's layout), every kind of bad model
 * file is refused with its status and the line, the node array agrees with the arrays (or the model
 * is refused), the embedded model checks and round-trips through
 * the file format, a model of many trees evaluates as its trees walked one by one, a list of plans as
 * its plans one by one, plans and their names, the setup model, and the ski-rental rule's bound. */
#include "core/mx_features.h"
#include "core/mx_format.h"
#include "core/mx_plan.h"
#include "core/mx_predictor.h"
#include "cuda/mx_device.h" /* pure C header: only for the enum values below */
#include "io/mx_io.h"
#include "test_util.h"

_Static_assert((int)MX_PLAN_COLD_AUTO == (int)MX_COLD_AUTO && (int)MX_PLAN_COLD_SEGMENT == (int)MX_COLD_SEGMENT &&
                   (int)MX_PLAN_COLD_MERGE == (int)MX_COLD_MERGE && (int)MX_PLAN_COLD_CUSPARSE == (int)MX_COLD_CUSPARSE,
               "mx_plan_cold must equal mx_cold_kernel value for value");

/* ---- a model file with known trees ---------------------------------------------------------------- */

/* Tree 0 splits on nnz (input 2) at 1000, then on plan_tau_c (input TC of the file) at 0.5:
 *   nnz <= 1000 -> 1.0;  nnz > 1000 and tau_c <= 0.5 -> 2.0;  tau_c > 0.5 -> -1.0
 * Tree 1 splits on plan_cold (input COLD of the file) at 1.5: segment (1) -> 0.25, merge/cusparse -> -0.75
 * (format arguments: TC, the weight of tree 1, COLD) */
static const char *known_trees =
    "node 0 2 1000 1 2 9\n"
    "node 1 -1 0 -1 -1 1.0\n"
    "node 2 %d 0.5 3 4 9\n"
    "node 3 -1 0 -1 -1 2.0\n"
    "node 4 -1 0 -1 -1 -1.0\n"
    "tree 1 3 %s\n"
    "node 0 %d 1.5 1 2 0\n"
    "node 1 -1 0 -1 -1 0.25\n"
    "node 2 -1 0 -1 -1 -0.75\n";

/* This library's inputs: plan_tau_c and plan_cold at 82 and 85 (the bad-file cases below name them;
 * a feature added moves them) */
#define TC_S   "82"
#define NIN_S  "86"
_Static_assert(MX_NFEATURES == 82 && MX_MODEL_NINPUTS == 86, "the bad-file cases' input numbers");

/* The model file text: header with `ensemble`, base 0.5, weights w0, w1, three candidates. old: the
 * inputs of a library of 80 features (before val_row_eq_frac and val_col_eq_frac: 84 inputs, the plan
 * inputs at 80..83), else this library's, in its order. */
static char *model_text_of(const char *ensemble, const char *w0, const char *w1, int old) {
  size_t cap = 1 << 16, n = 0;
  char *s = malloc(cap);
  int listed = 0, tc = -1, cold = -1;
  n += snprintf(s + n, cap - n, "# a test model\nmatxtract-model 1\ntrained_on hand-written test trees\n"
                                "ensemble %s\nbase_score 0.5\ninputs %d\n", ensemble, old ? 84 : MX_MODEL_NINPUTS);
  for (int i = 0; i < MX_MODEL_NINPUTS; i++) {
    const char *name = mx_model_input_name(i);
    if (old && !strncmp(name, "val_", 4)) continue;
    if (!strcmp(name, "plan_tau_c")) tc = listed;
    if (!strcmp(name, "plan_cold")) cold = listed;
    n += snprintf(s + n, cap - n, "input %d %s\n", listed++, name);
  }
  n += snprintf(s + n, cap - n, "\ntrees 2\ntree 0 5 %s\n", w0);
  n += snprintf(s + n, cap - n, known_trees, tc, w1, cold);
  n += snprintf(s + n, cap - n, "candidates 3\ncandidate 0 0 0 auto segment\ncandidate 1 0.4 0.2 du merge\n"
                                "candidate 2 1 1 se cusparse\nsetup_ns_per_nnz 10 20 30\nend\n");
  return s;
}

static char *model_text(const char *ensemble, const char *w0, const char *w1) { return model_text_of(ensemble, w0, w1, 0); }

static mx_model_status read_text(const char *text, mx_model *M, char *err, size_t errlen) {
  FILE *f = tmpfile();
  fputs(text, f);
  rewind(f);
  const mx_model_status st = mx_model_read_stream(f, "t.model", M, err, errlen);
  fclose(f);
  return st;
}

static mx_features features_with_nnz(double nnz) {
  mx_features f;
  for (int i = 0; i < MX_NFEATURES; i++) f.v[i] = 0.125 * i;
  f.v[2] = nnz;
  return f;
}

static double plan_y(const mx_model *M, const mx_features *f, double tc, double tr, mx_plan_cold cold) {
  const mx_plan p = {{tc, tr}, MX_MODE_DU, cold};
  return mx_model_plan_log_ratio(M, f, &p);
}

static void known_sum(void) {
  char err[512], *text = model_text("sum", "0.1", "0.2");
  mx_model M;
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_OK, "known model refused: %s", err);
  CHECK(M.ntrees == 2 && M.nnodes == 8 && M.ncandidates == 3 && !strcmp(M.trained_on, "hand-written test trees"), "shape");
  const mx_features small = features_with_nnz(500), big = features_with_nnz(5000);
  /* y = 0.5 + 0.1*tree0 + 0.2*tree1 */
  CHECK(plan_y(&M, &small, 0.9, 0.1, MX_PLAN_COLD_SEGMENT) == 0.5 + 0.1 * 1.0 + 0.2 * 0.25, "small/segment");
  CHECK(plan_y(&M, &big, 0.3, 0.1, MX_PLAN_COLD_SEGMENT) == 0.5 + 0.1 * 2.0 + 0.2 * 0.25, "big/low tc/segment");
  CHECK(plan_y(&M, &big, 0.9, 0.1, MX_PLAN_COLD_MERGE) == 0.5 + 0.1 * -1.0 + 0.2 * -0.75, "big/high tc/merge");
  CHECK(plan_y(&M, &big, 0.5, 0.1, MX_PLAN_COLD_SEGMENT) == 0.5 + 0.1 * 2.0 + 0.2 * 0.25, "x <= threshold goes left");
  mx_prediction p;
  /* big: candidates give 0.75, 0.55 (tc .4 -> 2.0, merge), 0.25 (tc 1 -> -1.0, cusparse): candidate 2 */
  CHECK(mx_predict_plan(&M, &big, &p) == MX_OK && p.index == 2 && p.plan.cold == MX_PLAN_COLD_CUSPARSE &&
            p.plan.mode == MX_MODE_SE && p.plan.crux.tau_c == 1.0 && p.log_ratio == 0.5 - 0.1 - 0.15 && p.ratio == exp(p.log_ratio),
        "big picks candidate 2 (got %d, %g)", p.index, p.log_ratio);
  /* small: tree0 gives 1.0 for all; tree1 favours merge/cusparse; candidates 1 and 2 tie: the first wins */
  CHECK(mx_predict_plan(&M, &small, &p) == MX_OK && p.index == 1, "small: tie goes to the first (got %d)", p.index);
  CHECK(mx_setup_extra_seconds(&M.setup, &p.plan, 1e6) == 1e-9 * 1e6 * (10 + 20 * 0.4 + 30 * 0.2), "setup model");
  mx_model_free(&M);
  CHECK(M.ntrees == 0 && M.feature == NULL, "free zeroes");
  free(text);
}

static void known_mean_and_median(void) {
  char err[512], *text = model_text("mean", "1", "1");
  mx_model M;
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_OK, "mean model: %s", err);
  const mx_features big = features_with_nnz(5000);
  CHECK(plan_y(&M, &big, 0.9, 0.1, MX_PLAN_COLD_MERGE) == (-1.0 + -0.75) / 2, "mean ignores base and weights");
  mx_model_free(&M);
  free(text);
  /* weighted median of outputs {tree0, tree1} with weights {w0, w1}: the first (ascending) whose
   * cumulative weight reaches half the total */
  text = model_text("weighted_median", "3", "1");
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_OK, "median model: %s", err);
  CHECK(plan_y(&M, &big, 0.3, 0.1, MX_PLAN_COLD_SEGMENT) == 2.0, "outputs 0.25(w1) 2.0(w3): cum 1 < 2, 4 >= 2 -> 2.0");
  CHECK(plan_y(&M, &big, 0.9, 0.1, MX_PLAN_COLD_SEGMENT) == -1.0, "outputs -1(w3) 0.25(w1): 3 >= 2 -> -1");
  mx_model_free(&M);
  free(text);
  text = model_text("weighted_median", "1", "1");
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_OK, "median model: %s", err);
  CHECK(plan_y(&M, &big, 0.3, 0.1, MX_PLAN_COLD_SEGMENT) == 0.25, "equal weights: cum 1 >= 1 -> the lower output");
  mx_model_free(&M);
  free(text);
}

/* Inputs are read by name: a model file of a library with fewer features (the old layout, 84
 * inputs) predicts as the same trees in this library's layout, its nodes renumbered to this
 * library's inputs; written again it lists every input of this library and reads back the same. */
static void inputs_by_name(void) {
  char err[512], *now = model_text("sum", "0.1", "0.2"), *old = model_text_of("sum", "0.1", "0.2", 1);
  mx_model A, B, C;
  CHECK(read_text(now, &A, err, sizeof err) == MX_MODEL_OK, "this library's layout: %s", err);
  CHECK(read_text(old, &B, err, sizeof err) == MX_MODEL_OK, "the old layout (84 inputs) refused: %s", err);
  CHECK(B.feature[2] == MX_NFEATURES && B.feature[5] == MX_NFEATURES + 3, "old layout's plan inputs renumbered (%d, %d)",
        (int)B.feature[2], (int)B.feature[5]);
  const mx_features small = features_with_nnz(500), big = features_with_nnz(5000);
  const double tcs[] = {0.3, 0.5, 0.9};
  const mx_plan_cold colds[] = {MX_PLAN_COLD_SEGMENT, MX_PLAN_COLD_MERGE};
  for (int k = 0; k < 3; k++)
    for (int c = 0; c < 2; c++)
      CHECK(plan_y(&A, &small, tcs[k], 0.1, colds[c]) == plan_y(&B, &small, tcs[k], 0.1, colds[c]) &&
                plan_y(&A, &big, tcs[k], 0.1, colds[c]) == plan_y(&B, &big, tcs[k], 0.1, colds[c]),
            "old and new layout predict alike (tc %g, cold %d)", tcs[k], (int)colds[c]);
  FILE *f = tmpfile();
  CHECK(mx_model_write_stream(&B, f, err, sizeof err) == MX_MODEL_OK, "write: %s", err);
  rewind(f);
  CHECK(mx_model_read_stream(f, "again", &C, err, sizeof err) == MX_MODEL_OK, "read back: %s", err);
  fclose(f);
  CHECK(C.nnodes == A.nnodes && !memcmp(C.feature, A.feature, (size_t)A.nnodes * sizeof(int32_t)), "written in this library's layout");
  mx_model_free(&A);
  mx_model_free(&B);
  mx_model_free(&C);
  free(now);
  free(old);
}

/* scikit-learn compares float32(x) with the double threshold: 2^24+1 becomes 2^24 <= 2^24 + 0.5. */
static void float32_split(void) {
  char err[512], *text = model_text("sum", "1", "0");
  size_t n = strlen(text) + 64;
  char *t2 = malloc(n);
  char *at = strstr(text, "node 0 2 1000 1 2 9\n");
  snprintf(t2, n, "%.*snode 0 2 16777216.5 1 2 9\n%s", (int)(at - text), text, at + strlen("node 0 2 1000 1 2 9\n"));
  mx_model M;
  CHECK(read_text(t2, &M, err, sizeof err) == MX_MODEL_OK, "float32 model: %s", err);
  const mx_features f = features_with_nnz(16777217.0);
  CHECK(plan_y(&M, &f, 0.9, 0.1, MX_PLAN_COLD_SEGMENT) == 0.5 + 1.0, "float32(2^24+1) <= 2^24+0.5 must go left");
  const mx_features g = features_with_nnz(16777218.0);
  CHECK(plan_y(&M, &g, 0.9, 0.1, MX_PLAN_COLD_SEGMENT) == 0.5 - 1.0, "2^24+2 goes right");
  mx_model_free(&M);
  free(t2);
  free(text);
}

/* ---- bad files -------------------------------------------------------------------------------------- */

/* text with the first occurrence of `from` replaced by `to` (NULL text if absent) */
static char *replaced(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (!at) return NULL;
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char *s = malloc(n);
  snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return s;
}

/* line number (1-based) of the first occurrence of `needle` in text */
static int line_of(const char *text, const char *needle) {
  const char *at = strstr(text, needle);
  int line = 1;
  for (const char *c = text; c < at; c++) line += *c == '\n';
  return line;
}

typedef struct {
  const char *from, *to; /* replacement applied to the good text */
  mx_model_status st;
  const char *msg;       /* expected in the message */
  const char *at;        /* the message names the line of this text in the bad file (NULL: skip) */
} bad_case;

static void bad_files(void) {
  char *good = model_text("sum", "0.1", "0.2");
  const bad_case cases[] = {
      {"matxtract-model 1", "xgboost-model 1", MX_MODEL_ERR_VERSION, "not a matxtract model", "xgboost"},
      {"matxtract-model 1", "matxtract-model 2", MX_MODEL_ERR_VERSION, "version '2'", "matxtract-model 2"},
      {"trained_on hand-written test trees\n", "", MX_MODEL_ERR_SYNTAX, "trained_on", "ensemble"},
      {"ensemble sum", "ensemble vote", MX_MODEL_ERR_VALUE, "'vote'", "ensemble vote"},
      {"base_score 0.5", "base_score nan", MX_MODEL_ERR_VALUE, "not finite", "base_score"},
      {"base_score 0.5", "base_score 0.5x", MX_MODEL_ERR_SYNTAX, "not a number", "base_score"},
      {"inputs " NIN_S, "inputs 87", MX_MODEL_ERR_INPUTS, "inputs 87 is outside 1.." NIN_S, "inputs 87"},
      {"inputs " NIN_S, "inputs 0", MX_MODEL_ERR_INPUTS, "inputs 0 is outside", "inputs 0"},
      {"input 3 row_mean", "input 3 row_average", MX_MODEL_ERR_INPUTS, "'row_average' is none of", "input 3 row_average"},
      {"input 5 row_min\ninput 6 row_max", "input 5 row_min\ninput 6 row_min", MX_MODEL_ERR_INPUTS, "input 6 'row_min' is input 5 as well", "input 6 row_min"},
      {"input 3 row_mean", "input 4 row_mean", MX_MODEL_ERR_SYNTAX, "input index", "input 4 row_mean"},
      {"trees 2", "trees 0", MX_MODEL_ERR_VALUE, "outside 1..", "trees 0"},
      {"trees 2", "trees 3", MX_MODEL_ERR_SYNTAX, "'candidates' where 'tree' was expected", "candidates 3"},
      {"node 0 2 1000 1 2 9", "node 0 " NIN_S " 1000 1 2 9", MX_MODEL_ERR_TREE, "input " NIN_S "; the file lists " NIN_S " inputs", "node 0 " NIN_S},
      {"node 0 2 1000 1 2 9", "node 0 99999999999 1000 1 2 9", MX_MODEL_ERR_TREE, "feature", "node 0 999"},
      {"node 0 2 1000 1 2 9", "node 0 2 nan 1 2 9", MX_MODEL_ERR_TREE, "threshold nan is not finite", "node 0 2 nan"},
      {"node 0 2 1000 1 2 9", "node 0 2 1000 1 5 9", MX_MODEL_ERR_TREE, "children 1, 5", "node 0 2 1000 1 5"},
      {"node 2 " TC_S " 0.5 3 4 9", "node 2 " TC_S " 0.5 3 1 9", MX_MODEL_ERR_TREE, "no cycles", "node 2 " TC_S " 0.5 3 1"},
      {"node 2 " TC_S " 0.5 3 4 9", "node 2 " TC_S " 0.5 2 4 9", MX_MODEL_ERR_TREE, "no cycles", "node 2 " TC_S " 0.5 2 4"},
      {"node 2 " TC_S " 0.5 3 4 9", "node 2 " TC_S " 0.5 3 3 9", MX_MODEL_ERR_TREE, "both children", "node 2 " TC_S " 0.5 3 3"},
      {"node 0 2 1000 1 2 9", "node 0 2 1000 -1 2 9", MX_MODEL_ERR_TREE, "children -1, 2", "node 0 2 1000 -1"},
      {"node 1 -1 0 -1 -1 1.0", "node 1 7 0 -1 -1 1.0", MX_MODEL_ERR_TREE, "leaf has feature 7", "node 1 7"},
      {"node 1 -1 0 -1 -1 1.0", "node 1 -1 0 -1 -1 inf", MX_MODEL_ERR_TREE, "value inf", "node 1 -1 0 -1 -1 inf"},
      {"node 1 -1 0 -1 -1 1.0", "node 2 -1 0 -1 -1 1.0", MX_MODEL_ERR_SYNTAX, "node index", "node 2 -1 0 -1 -1 1.0"},
      {"node 1 -1 0 -1 -1 1.0", "node 1 -1 0 -1 -1 1.0 7", MX_MODEL_ERR_SYNTAX, "takes 6 fields, found 7", "1.0 7"},
      {"node 1 -1 0 -1 -1 1.0", "node 1 -1 0 -1 1.0", MX_MODEL_ERR_SYNTAX, "found 5", "node 1 -1 0 -1 1.0"},
      {"tree 0 5 0.1", "tree 0 5 inf", MX_MODEL_ERR_VALUE, "tree weight inf", "tree 0 5 inf"},
      {"tree 0 5 0.1", "tree 0 4 0.1", MX_MODEL_ERR_TREE, "children 3, 4", "node 2 " TC_S},
      {"tree 0 5 0.1", "tree 0 6 0.1", MX_MODEL_ERR_SYNTAX, "'tree' where 'node' was expected", "tree 1 3"},
      {"candidate 1 0.4 0.2 du merge", "candidate 1 0.2 0.4 du merge", MX_MODEL_ERR_PLAN, "outside 0 <= tau_r", "candidate 1 0.2"},
      {"candidate 1 0.4 0.2 du merge", "candidate 1 1.5 0.2 du merge", MX_MODEL_ERR_PLAN, "outside", "candidate 1 1.5"},
      {"candidate 1 0.4 0.2 du merge", "candidate 1 0.4 0.2 dense merge", MX_MODEL_ERR_PLAN, "mode 'dense'", "dense"},
      {"candidate 1 0.4 0.2 du merge", "candidate 1 0.4 0.2 du csr5", MX_MODEL_ERR_PLAN, "cold kernel 'csr5'", "csr5"},
      {"candidates 3", "candidates 0", MX_MODEL_ERR_PLAN, "candidates 0 is outside", "candidates 0"},
      {"setup_ns_per_nnz 10 20 30", "setup_ns_per_nnz 10 inf 30", MX_MODEL_ERR_VALUE, "not finite", "setup_ns"},
      {"end\n", "end\nextra 1\n", MX_MODEL_ERR_SYNTAX, "'extra' after 'end'", "extra 1"},
      {"end\n", "", MX_MODEL_ERR_TRUNCATED, "file ends where 'end'", NULL},
      {"candidates 3", "# cut", MX_MODEL_ERR_SYNTAX, "'candidate' where 'candidates'", "candidate 0"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char *text = replaced(good, cases[k].from, cases[k].to), err[512] = "";
    CHECK(text != NULL, "case %zu: '%s' not in the good text", k, cases[k].from);
    if (!text) continue;
    mx_model M;
    memset(&M, 0x5a, sizeof M);
    const mx_model_status st = read_text(text, &M, err, sizeof err);
    CHECK(st == cases[k].st, "case %zu (%s): status %s, expected %s (%s)", k, cases[k].to, mx_model_status_name(st),
          mx_model_status_name(cases[k].st), err);
    CHECK(strstr(err, cases[k].msg) != NULL, "case %zu: message '%s' lacks '%s'", k, err, cases[k].msg);
    if (cases[k].at) {
      char where[64];
      snprintf(where, sizeof where, "t.model:%d: ", line_of(text, cases[k].at));
      CHECK(strncmp(err, where, strlen(where)) == 0, "case %zu: message '%s' should start with '%s'", k, err, where);
    }
    CHECK(M.ntrees == 0 && M.feature == NULL && M.candidates == NULL, "case %zu: failed read leaves M zeroed", k);
    free(text);
  }
  free(good);
}

/* Files cut at every record, an over-long line, a NUL byte, weights, a missing file. */
static void bad_files_more(void) {
  char *good = model_text("sum", "0.1", "0.2"), err[512];
  mx_model M;
  int cuts = 0, refused = 0;
  for (const char *c = good; *c; c++) { /* cut after every newline but the last */
    if (*c != '\n' || c[1] == 0) continue;
    char *cut = strndup(good, (size_t)(c - good + 1));
    cuts++;
    refused += read_text(cut, &M, err, sizeof err) == MX_MODEL_ERR_TRUNCATED;
    free(cut);
  }
  CHECK(cuts > 100 && refused == cuts, "every cut file is truncated (%d of %d)", refused, cuts);
  char *cut = strndup(good, strlen(good) / 2); /* mid-line */
  CHECK(read_text(cut, &M, err, sizeof err) != MX_MODEL_OK, "cut mid-line accepted");
  free(cut);
  CHECK(read_text("", &M, err, sizeof err) == MX_MODEL_ERR_TRUNCATED && strstr(err, "t.model:0: file ends"), "empty: %s", err);

  char *longline = malloc(10000);
  memset(longline, 'x', 9998);
  longline[9998] = '\n', longline[9999] = 0;
  char *text = replaced(good, "# a test model\n", longline);
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_ERR_SYNTAX && strstr(err, "t.model:1: line longer"), "long line: %s", err);
  free(text);
  free(longline);

  FILE *f = tmpfile();
  fputs("matxtract-model 1\ntrained_on a", f);
  fputc(0, f);
  fputs("b\n", f);
  rewind(f);
  CHECK(mx_model_read_stream(f, "t.model", &M, err, sizeof err) == MX_MODEL_ERR_SYNTAX && strstr(err, "t.model:2: NUL"),
        "NUL byte: %s", err);
  fclose(f);

  text = model_text("weighted_median", "-1", "1");
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_ERR_VALUE && strstr(err, "weight -1 < 0"), "negative weight: %s", err);
  free(text);
  text = model_text("weighted_median", "0", "0");
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_ERR_VALUE && strstr(err, "positive total"), "zero weights: %s", err);
  free(text);
  CHECK(mx_model_read("/nonexistent/dir/x.model", &M, err, sizeof err) == MX_MODEL_ERR_IO && strstr(err, "cannot open"),
        "missing file: %s", err);
  free(good);
}

/* mx_model_check on in-memory models: the same node rules name tree and node. */
static void check_in_memory(void) {
  char err[512], *text = model_text("sum", "0.1", "0.2");
  mx_model M;
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_OK, "%s", err);
  int32_t *left = (int32_t *)M.left;
  left[M.tree_start[1] + 0] = 0; /* tree 1 node 0 points at itself */
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_ERR_TREE && strstr(err, "tree 1 node 0"), "self loop: %s", err);
  left[M.tree_start[1] + 0] = 1;
  double *thr = (double *)M.threshold;
  thr[2] = NAN;
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_ERR_TREE && strstr(err, "tree 0 node 2"), "NaN: %s", err);
  thr[2] = 0.5;
  mx_plan *cand = (mx_plan *)M.candidates;
  cand[2].cold = (mx_plan_cold)MX_PLAN_NCOLD;
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_ERR_PLAN && strstr(err, "candidate 2"), "cold out of range: %s", err);
  cand[2].cold = MX_PLAN_COLD_CUSPARSE;
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_OK, "restored: %s", err);
  mx_model_free(&M);
  free(text);
}

/* The node array the evaluation reads: what mx_model_read builds, and mx_model_check refusing one
 * that is missing or differs from the arrays in any field (naming tree and node). */
static void node_array(void) {
  char err[512], *text = model_text("sum", "0.1", "0.2");
  mx_model M;
  CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_OK, "%s", err);
  int differ = 0;
  for (int32_t k = 0; k < M.nnodes; k++) {
    const mx_model_node *n = &M.node[k];
    const double split = M.left[k] < 0 ? M.value[k] : M.threshold[k];
    differ += n->split != split || n->feature != M.feature[k] || n->left != M.left[k] || n->right != M.right[k];
  }
  CHECK(differ == 0, "read: %d nodes differ from the arrays", differ);
  mx_model_node *node = (mx_model_node *)M.node;
  const mx_model_node keep = node[2]; /* tree 0 node 2: split on plan_tau_c at 0.5, children 3, 4 */
  node[2].split = 0.25;
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_ERR_TREE && strstr(err, "tree 0 node 2") && strstr(err, "threshold 0.5"),
        "split: %s", err);
  node[2] = keep, node[2].feature = 81;
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_ERR_TREE && strstr(err, "tree 0 node 2") && strstr(err, "feature 81"),
        "feature: %s", err);
  node[2] = keep, node[2].right = 3;
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_ERR_TREE && strstr(err, "tree 0 node 2") && strstr(err, "children 3, 3"),
        "children: %s", err);
  node[2] = keep;
  const mx_model_node leaf = node[M.tree_start[1] + 2]; /* tree 1 node 2: leaf -0.75 */
  node[M.tree_start[1] + 2].split = 0.75;
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_ERR_TREE && strstr(err, "tree 1 node 2") && strstr(err, "value -0.75"),
        "leaf: %s", err);
  node[M.tree_start[1] + 2] = leaf;
  CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_OK, "restored: %s", err);
  mx_model copy = M;
  copy.node = NULL;
  CHECK(mx_model_check(&copy, err, sizeof err) == MX_MODEL_ERR_VALUE && strstr(err, "node array"), "missing: %s", err);
  mx_model_free(&M);
  CHECK(M.node == NULL, "free zeroes node");
  free(text);
}

/* ---- round trips and the embedded model ------------------------------------------------------------ */

/* M written and read back predicts exactly the same for every candidate on random features. */
static void round_trip(const mx_model *M, const char *what) {
  char err[512];
  FILE *f = tmpfile();
  CHECK(mx_model_write_stream(M, f, err, sizeof err) == MX_MODEL_OK, "%s: write: %s", what, err);
  rewind(f);
  mx_model R;
  CHECK(mx_model_read_stream(f, what, &R, err, sizeof err) == MX_MODEL_OK, "%s: read back: %s", what, err);
  fclose(f);
  if (t_failures) return;
  CHECK(R.ntrees == M->ntrees && R.nnodes == M->nnodes && R.ncandidates == M->ncandidates && R.ensemble == M->ensemble &&
            !strcmp(R.trained_on, M->trained_on) && R.setup.ns_tau_r == M->setup.ns_tau_r,
        "%s: header differs", what);
  t_rng rng = {42};
  int differ = 0;
  for (int k = 0; k < 200; k++) {
    mx_features x;
    for (int i = 0; i < MX_NFEATURES; i++) x.v[i] = (t_unif(&rng) - 0.2) * pow(10.0, (double)t_below(&rng, 8));
    for (int32_t c = 0; c < M->ncandidates; c++)
      differ += mx_model_plan_log_ratio(M, &x, &M->candidates[c]) != mx_model_plan_log_ratio(&R, &x, &R.candidates[c]);
    mx_prediction a, b;
    mx_predict_plan(M, &x, &a);
    mx_predict_plan(&R, &x, &b);
    differ += a.index != b.index || a.log_ratio != b.log_ratio;
  }
  CHECK(differ == 0, "%s: %d predictions differ after the round trip", what, differ);
  mx_model_free(&R);
}

static void embedded(void) {
  char err[512];
  const mx_model *D = mx_model_default();
  CHECK(D && mx_model_check(D, err, sizeof err) == MX_MODEL_OK, "embedded model: %s", err);
  CHECK(D->trained_on[0] != 0 && D->owned == 0, "embedded model says what it was trained on");
  for (int32_t c = 0; c < D->ncandidates; c++) CHECK(mx_plan_check(&D->candidates[c]) == MX_OK, "candidate %d", c);
  round_trip(D, "embedded");
  mx_model copy = *D;
  mx_model_free(&copy); /* not owned: a no-op */
  CHECK(copy.ntrees == D->ntrees, "free leaves a model it did not allocate alone");
  const mx_features f = features_with_nnz(1e6);
  mx_prediction p;
  CHECK(mx_predict_plan(D, &f, &p) == MX_OK && p.index >= 0 && p.index < D->ncandidates && isfinite(p.ratio), "embedded predicts");
  const char *kinds[] = {"sum", "mean", "weighted_median"};
  for (int k = 0; k < 3; k++) {
    char *text = model_text(kinds[k], "0.75", "0.5");
    mx_model M;
    CHECK(read_text(text, &M, err, sizeof err) == MX_MODEL_OK, "%s: %s", kinds[k], err);
    round_trip(&M, kinds[k]);
    mx_model_free(&M);
    free(text);
  }
}

/* ---- many trees: every tree's walk and each plan's evaluation --------------------------------------- */

#define MANY_TREES 150 /* more than one batch of trees walked together (64), and a partial one */
#define MANY_NODES (MANY_TREES * 63)

/* Tree t of the many-trees model: complete to depth 1 + t % 5 (depth 0 for every seventh tree: a
 * single leaf), random inputs and thresholds in [0, 1), leaf values t + a random fraction (distinct,
 * so the weighted median has no ties). Nodes in breadth-first order: children 2k+1, 2k+2. */
static int32_t many_tree(int32_t t, int32_t *feature, double *threshold, int32_t *left, int32_t *right, double *value) {
  const int depth = t % 7 == 0 ? 0 : 1 + t % 5, n = (1 << (depth + 1)) - 1, inner = (1 << depth) - 1;
  for (int k = 0; k < n; k++) {
    const int leaf = k >= inner;
    feature[k] = leaf ? -1 : rand() % MX_MODEL_NINPUTS;
    threshold[k] = leaf ? 0.0 : (double)rand() / RAND_MAX;
    left[k] = leaf ? -1 : 2 * k + 1;
    right[k] = leaf ? -1 : 2 * k + 2;
    value[k] = leaf ? t + (double)rand() / RAND_MAX : 0.0;
  }
  return n;
}

/* the reference: tree t walked alone (float32 inputs, as mx_model_eval compares them) */
static double walk_alone(const mx_model *M, int32_t t, const double *x) {
  int32_t n = 0;
  const int32_t b = M->tree_start[t];
  while (M->left[b + n] >= 0) n = (float)x[M->feature[b + n]] <= M->threshold[b + n] ? M->left[b + n] : M->right[b + n];
  return M->value[b + n];
}

/* The ensemble's output from the trees walked one by one; the weighted median by its definition:
 * the smallest output whose trees at or below it weigh at least half the total (outputs are distinct). */
static double reference_eval(const mx_model *M, const double *x) {
  double out[MANY_TREES], y = M->ensemble == MX_ENSEMBLE_SUM ? M->base_score : 0.0, total = 0.0, best = INFINITY;
  for (int32_t t = 0; t < M->ntrees; t++) out[t] = walk_alone(M, t, x), total += M->tree_weight[t];
  if (M->ensemble != MX_ENSEMBLE_WEIGHTED_MEDIAN) {
    for (int32_t t = 0; t < M->ntrees; t++) y += M->ensemble == MX_ENSEMBLE_SUM ? M->tree_weight[t] * out[t] : out[t];
    return M->ensemble == MX_ENSEMBLE_MEAN ? y / M->ntrees : y;
  }
  for (int32_t t = 0; t < M->ntrees; t++) {
    double at_or_below = 0.0;
    for (int32_t u = 0; u < M->ntrees; u++) at_or_below += out[u] <= out[t] ? M->tree_weight[u] : 0.0;
    if (at_or_below >= 0.5 * total && out[t] < best) best = out[t];
  }
  return best;
}

static void many_trees(void) {
  static int32_t start[MANY_TREES + 1], feature[MANY_NODES], left[MANY_NODES], right[MANY_NODES];
  static double weight[MANY_TREES], threshold[MANY_NODES], value[MANY_NODES];
  const mx_plan cand[2] = {{{0, 0}, MX_MODE_AUTO, MX_PLAN_COLD_SEGMENT}, {{1, 0.5}, MX_MODE_SE, MX_PLAN_COLD_MERGE}};
  srand(7);
  for (int32_t t = 0; t < MANY_TREES; t++) {
    start[t + 1] = start[t] + many_tree(t, feature + start[t], threshold + start[t], left + start[t], right + start[t], value + start[t]);
    weight[t] = 0.5 + (double)rand() / RAND_MAX;
  }
  static mx_model_node node[MANY_NODES];
  mx_model M = {.version = 1, .base_score = 0.25, .ntrees = MANY_TREES, .nnodes = start[MANY_TREES], .tree_start = start,
                .tree_weight = weight, .feature = feature, .threshold = threshold, .left = left, .right = right,
                .value = value, .node = node, .ncandidates = 2, .candidates = cand};
  mx_model_nodes_fill(&M, node); /* reference_eval walks the arrays, mx_model_eval the node array */
  char err[512];
  const mx_ensemble kinds[] = {MX_ENSEMBLE_SUM, MX_ENSEMBLE_MEAN, MX_ENSEMBLE_WEIGHTED_MEDIAN};
  for (int k = 0; k < 3; k++) {
    M.ensemble = kinds[k];
    CHECK(mx_model_check(&M, err, sizeof err) == MX_MODEL_OK, "many-trees model: %s", err);
    int differ = 0;
    for (int r = 0; r < 40; r++) {
      double x[MX_MODEL_NINPUTS];
      for (int i = 0; i < MX_MODEL_NINPUTS; i++) x[i] = (double)rand() / RAND_MAX;
      differ += mx_model_eval(&M, x) != reference_eval(&M, x);
    }
    CHECK(differ == 0, "ensemble %d: %d of 40 evaluations differ from the trees walked one by one", (int)kinds[k], differ);
  }
}

/* mx_model_plans_log_ratio: each plan's output as mx_model_plan_log_ratio gives it, duplicates and
 * order included; bad arguments refused */
static void plan_lists(void) {
  const mx_model *D = mx_model_default();
  const mx_features f = features_with_nnz(3e6);
  enum { N = 9 };
  mx_plan list[N];
  double y[N];
  for (int i = 0; i < N; i++) list[i] = D->candidates[(i * 5) % D->ncandidates]; /* repeats, out of order */
  list[N - 1].crux = (mx_crux){0.3, 0.1};                                          /* not a candidate */
  CHECK(mx_model_plans_log_ratio(D, &f, N, list, y) == MX_OK, "plan list");
  int differ = 0;
  for (int i = 0; i < N; i++) differ += y[i] != mx_model_plan_log_ratio(D, &f, &list[i]);
  CHECK(differ == 0, "%d of %d plans' outputs differ from one-by-one evaluation", differ, N);
  CHECK(mx_model_plans_log_ratio(D, &f, 0, NULL, NULL) == MX_OK, "empty list");
  CHECK(mx_model_plans_log_ratio(D, &f, -1, list, y) == MX_ERR_ARG && mx_model_plans_log_ratio(D, NULL, N, list, y) == MX_ERR_ARG &&
            mx_model_plans_log_ratio(D, &f, N, NULL, y) == MX_ERR_ARG,
        "bad arguments refused");
}

/* ---- plans, setup model, ski rental ---------------------------------------------------------------- */

static void plans(void) {
  const mx_plan ok = {{0.7, 0.3}, MX_MODE_SE, MX_PLAN_COLD_MERGE};
  CHECK(mx_plan_check(&ok) == MX_OK, "valid plan");
  const mx_plan bad[] = {{{0.3, 0.7}, MX_MODE_AUTO, MX_PLAN_COLD_AUTO}, {{NAN, 0}, MX_MODE_AUTO, MX_PLAN_COLD_AUTO},
                         {{1.01, 0}, MX_MODE_AUTO, MX_PLAN_COLD_AUTO},  {{0.5, -0.0001}, MX_MODE_AUTO, MX_PLAN_COLD_AUTO},
                         {{0.5, 0.5}, (mx_mode_request)3, MX_PLAN_COLD_AUTO}, {{0.5, 0.5}, MX_MODE_AUTO, (mx_plan_cold)-1}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) CHECK(mx_plan_check(&bad[k]) == MX_ERR_ARG, "bad plan %zu accepted", k);
  CHECK(mx_plan_check(NULL) == MX_ERR_ARG, "NULL plan");
  for (int c = 0; c < MX_PLAN_NCOLD; c++) {
    mx_plan_cold back;
    CHECK(mx_plan_cold_parse(mx_plan_cold_name((mx_plan_cold)c), &back) == 0 && back == (mx_plan_cold)c, "cold name %d", c);
  }
  for (int m = 0; m < 3; m++) {
    mx_mode_request back;
    CHECK(mx_plan_mode_parse(mx_plan_mode_name((mx_mode_request)m), &back) == 0 && back == (mx_mode_request)m, "mode %d", m);
  }
  mx_plan_cold c;
  CHECK(mx_plan_cold_parse("AUTO", &c) == -1 && mx_plan_cold_parse(NULL, &c) == -1, "unknown names refused");
  const mx_setup_model s = {100, -50, 20};
  const mx_plan none = {{0.8, 0.0}, MX_MODE_AUTO, MX_PLAN_COLD_SEGMENT}, hot = {{0.8, 0.5}, MX_MODE_DU, MX_PLAN_COLD_SEGMENT};
  CHECK(mx_setup_extra_seconds(&s, &none, 1e6) == 0.0, "tau_r = 0 builds no hot region: no extra setup");
  CHECK(fabs(mx_setup_extra_seconds(&s, &hot, 1e6) - 1e-3 * (100 - 40 + 10)) < 1e-15, "linear model");
  const mx_setup_model neg = {-100, 0, 0};
  CHECK(mx_setup_extra_seconds(&neg, &hot, 1e6) == 0.0, "never negative");
}

/* Online cost of N MatMults when, before each, the rule is asked with the time spent so far. */
static double online_cost(double t_cur, double t_new, double S, int N, double expected) {
  double cost = 0.0, spent = 0.0;
  int switched = 0;
  for (int k = 0; k < N; k++) {
    if (!switched && mx_upgrade_decide(t_cur, t_new, S, spent, expected) == MX_UPGRADE_NOW) switched = 1, cost += S;
    cost += switched ? t_new : t_cur;
    if (!switched) spent += t_cur;
  }
  return cost;
}

static void ski_rental(void) {
  const double tcur[] = {1.0, 2.5e-4};
  const double ratio[] = {0.999, 0.99, 0.9, 0.5, 0.1, 0.001};
  const double setup_in_calls[] = {0.0, 1e-3, 0.3, 1.0, 1.5, 7.0, 100.0, 1234.5};
  const int calls[] = {1, 2, 3, 5, 8, 13, 50, 99, 100, 101, 500, 2000, 20000};
  int checked = 0, worst_over = 0, known_over = 0;
  double worst = 0.0;
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < sizeof ratio / sizeof ratio[0]; b++)
      for (size_t s = 0; s < sizeof setup_in_calls / sizeof setup_in_calls[0]; s++)
        for (size_t n = 0; n < sizeof calls / sizeof calls[0]; n++) {
          const double tc = tcur[a], tn = ratio[b] * tc, S = setup_in_calls[s] * tc;
          const int N = calls[n];
          const double stay = N * tc, at_once = S + N * tn, opt = stay < at_once ? stay : at_once;
          const double alg = online_cost(tc, tn, S, N, 0.0);
          worst = alg / opt > worst ? alg / opt : worst;
          worst_over += alg > 2.0 * opt * (1 + 1e-12);
          known_over += online_cost(tc, tn, S, N, N) > opt * (1 + 1e-12); /* knowing N: the optimum */
          checked++;
        }
  CHECK(checked == 2 * 6 * 8 * 13 && worst_over == 0, "ski rental above 2x on %d of %d cases (worst %.4f)", worst_over, checked, worst);
  CHECK(known_over == 0, "with expected mults known the rule must be optimal (%d cases above)", known_over);
  CHECK(worst > 1.5, "the grid must reach the hard cases (worst ratio %.3f)", worst);
  /* the rule's answers */
  CHECK(mx_upgrade_decide(1.0, 1.0, 0.0, 0.0, 0.0) == MX_UPGRADE_NEVER, "no gain: never");
  CHECK(mx_upgrade_decide(1.0, 1.5, 0.0, 0.0, 0.0) == MX_UPGRADE_NEVER, "slower: never");
  CHECK(mx_upgrade_decide(1.0, 0.5, 0.0, 0.0, 0.0) == MX_UPGRADE_NOW, "free setup: now");
  CHECK(mx_upgrade_decide(1.0, 0.5, 10.0, 0.0, 0.0) == MX_UPGRADE_LATER, "unknown N, regret 0.5 < 10: later");
  CHECK(mx_upgrade_decide(1.0, 0.5, 10.0, 19.0, 0.0) == MX_UPGRADE_NOW, "regret (19+1)*0.5 = 10: now");
  CHECK(mx_upgrade_decide(1.0, 0.5, 10.0, 0.0, 20.0) == MX_UPGRADE_NEVER, "20 calls earn exactly 10: not strictly more");
  CHECK(mx_upgrade_decide(1.0, 0.5, 10.0, 0.0, 21.0) == MX_UPGRADE_NOW, "21 calls earn 10.5 > 10");
  CHECK(mx_upgrade_decide(NAN, 0.5, 1, 0, 0) == MX_UPGRADE_NEVER && mx_upgrade_decide(1, 0.5, INFINITY, 0, 0) == MX_UPGRADE_NEVER &&
            mx_upgrade_decide(1, 0.5, -1, 0, 0) == MX_UPGRADE_NEVER && mx_upgrade_decide(1, 0, 1, 0, 0) == MX_UPGRADE_NEVER &&
            mx_upgrade_decide(1, 0.5, 1, -1, 0) == MX_UPGRADE_NEVER && mx_upgrade_decide(1, 0.5, 1, 0, NAN) == MX_UPGRADE_NEVER,
        "bad inputs: never");
}

/* Every plan the embedded model can predict builds (the host builder, borrowing the input as the
 * library and matxtract-bench do) on a matrix of each generator family, and the prediction for the
 * matrix's own features is one of them: a predicted plan that cannot be built would be a failed
 * upgrade (issue 39). */
static void embedded_candidates_build(void) {
  const char *specs[] = {"kron:13:16", "kron:13:16@unique", "kron:13:16@pagerank", "chunglu:20000:16:2.1@unique", "rgg:14@unique",
                         "lap2d:150@unique", "lap3d:30", "band:50000:5", "rand:50000:8", "blockdense:50000:500:32", "bipartite:20000:40000:16"};
  const mx_model *D = mx_model_default();
  char err[256];
  for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
    mx_io_csr A;
    if (mx_gen(specs[s], 7, &A, err, sizeof err)) {
      CHECK(0, "%s: %s", specs[s], err);
      continue;
    }
    int32_t *rowptr = malloc(sizeof(int32_t) * ((size_t)A.nrows + 1));
    for (int32_t i = 0; i <= A.nrows; i++) rowptr[i] = (int32_t)A.rowptr[i];
    const mx_csr a = {A.nrows, A.ncols, rowptr, A.colidx, A.val};
    mx_features f;
    mx_prediction p;
    CHECK(mx_features_compute(&a, &f) == MX_OK && mx_predict_plan(D, &f, &p) == MX_OK, "%s: features and prediction", specs[s]);
    for (int32_t c = 0; c < D->ncandidates; c++) {
      mx_format F;
      const mx_status st = mx_format_build_borrow(&a, D->candidates[c].crux, D->candidates[c].mode, &F);
      CHECK(st == MX_OK, "%s: candidate %d (%g,%g) %s builds: %s", specs[s], c, D->candidates[c].crux.tau_c, D->candidates[c].crux.tau_r,
            mx_plan_mode_name(D->candidates[c].mode), mx_status_name(st));
      if (st == MX_OK) mx_format_free(&F);
    }
    free(rowptr);
    mx_io_csr_free(&A);
  }
}

int main(void) {
  known_sum();
  known_mean_and_median();
  float32_split();
  inputs_by_name();
  bad_files();
  bad_files_more();
  check_in_memory();
  node_array();
  embedded();
  many_trees();
  plan_lists();
  plans();
  ski_rental();
  embedded_candidates_build();
  if (t_failures) {
    fprintf(stderr, "test_core_predictor: %d failure(s)\n", t_failures);
    return 1;
  }
  printf("test_core_predictor: ok\n");
  return 0;
}
