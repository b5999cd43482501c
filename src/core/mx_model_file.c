/* mx_model_file.c - the model file: a strict line parser (every record checked where it is read, so
 * an error names its line) and the writer (17 significant digits: doubles round-trip exactly). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mx_predictor_internal.h"

#define LINE_MAX_BYTES 4096
#define MAX_TOKENS 8

typedef struct {
  FILE *f;
  const char *name;
  int line;
  char buf[LINE_MAX_BYTES + 1], raw[LINE_MAX_BYTES + 1];
  char *tok[MAX_TOKENS];
  int ntok;
  char *err;
  size_t errlen;
} parser;

/* Growable arrays of the model being read (converted to an mx_model at the end). */
typedef struct {
  int32_t *tree_start, *feature, *left, *right;
  double *tree_weight, *threshold, *value;
  mx_plan *cand;
  int32_t ntrees, nnodes, cap, ncand;
  int32_t ninputs, input_at[MX_MODEL_NINPUTS]; /* the file's inputs: input i is this library's input_at[i] */
} building;

static mx_model_status perr(parser *P, mx_model_status st, const char *fmt, ...) {
  if (P->err && P->errlen) {
    int n = snprintf(P->err, P->errlen, "%s:%d: ", P->name, P->line);
    if (n < 0) n = 0;
    if ((size_t)n < P->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(P->err + n, P->errlen - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return st;
}

/* One line into P->buf (without its newline) and P->raw; -1 at the end of the file. A line longer
 * than LINE_MAX_BYTES or holding a NUL byte is an error (a NUL would hide the rest of the line).
 * The stream is locked by mx_model_read_stream for the whole read (getc_unlocked). */
static int read_line(parser *P, mx_model_status *st) {
  size_t len = 0;
  int c, any = 0;
  *st = MX_MODEL_OK;
  while ((c = getc_unlocked(P->f)) != EOF && c != '\n') {
    any = 1;
    if (c == 0 && *st == MX_MODEL_OK) *st = MX_MODEL_ERR_SYNTAX;
    if (len < LINE_MAX_BYTES) P->buf[len] = (char)c;
    len++;
  }
  if (c == EOF && !any) return ferror(P->f) ? (*st = MX_MODEL_ERR_IO, 0) : -1;
  P->line++;
  if (*st != MX_MODEL_OK) return perr(P, *st, "NUL byte in the line"), 0;
  if (len > LINE_MAX_BYTES) return *st = perr(P, MX_MODEL_ERR_SYNTAX, "line longer than %d bytes", LINE_MAX_BYTES), 0;
  P->buf[len] = 0;
  memcpy(P->raw, P->buf, len + 1);
  return 0;
}

/* Next record that is neither blank nor a '#' comment, split on blanks (P->ntok counts every field,
 * P->tok keeps the first MAX_TOKENS); MX_MODEL_ERR_TRUNCATED at the end of the file ("expected"
 * says what was due, in quotes when quote: the message is formatted only then, not per record). */
static mx_model_status next_record(parser *P, const char *expected, int quote) {
  for (;;) {
    mx_model_status st;
    if (read_line(P, &st) < 0) return perr(P, MX_MODEL_ERR_TRUNCATED, quote ? "file ends where '%s' was expected" : "file ends where %s was expected", expected);
    if (st != MX_MODEL_OK) return st == MX_MODEL_ERR_IO ? perr(P, st, "read error") : st;
    P->ntok = 0;
    for (char *s = strtok(P->buf, " \t\r"); s; s = strtok(NULL, " \t\r")) {
      if (P->ntok < MAX_TOKENS) P->tok[P->ntok] = s;
      P->ntok++;
    }
    if (P->ntok > 0 && P->tok[0][0] != '#') return MX_MODEL_OK;
  }
}

/* The record must be `key` with exactly nfields fields after it. */
static mx_model_status expect(parser *P, const char *key, int nfields) {
  mx_model_status st = next_record(P, key, 1);
  if (st != MX_MODEL_OK) return st;
  if (strcmp(P->tok[0], key) != 0) return perr(P, MX_MODEL_ERR_SYNTAX, "'%s' where '%s' was expected", P->tok[0], key);
  if (P->ntok != nfields + 1)
    return perr(P, MX_MODEL_ERR_SYNTAX, "'%s' takes %d field%s, found %d", key, nfields, nfields == 1 ? "" : "s", P->ntok - 1);
  return MX_MODEL_OK;
}

static mx_model_status get_double(parser *P, int i, const char *what, double *v) {
  char *end;
  errno = 0;
  *v = strtod(P->tok[i], &end);
  if (end == P->tok[i] || *end) return perr(P, MX_MODEL_ERR_SYNTAX, "%s '%s' is not a number", what, P->tok[i]);
  return MX_MODEL_OK;
}

static mx_model_status get_int(parser *P, int i, const char *what, long lo, long hi, mx_model_status range_st, int32_t *v) {
  char *end;
  errno = 0;
  const long x = strtol(P->tok[i], &end, 10);
  if (end == P->tok[i] || *end) return perr(P, MX_MODEL_ERR_SYNTAX, "%s '%s' is not an integer", what, P->tok[i]);
  if (errno == ERANGE || x < lo || x > hi) return perr(P, range_st, "%s %s is outside %ld..%ld", what, P->tok[i], lo, hi);
  *v = (int32_t)x;
  return MX_MODEL_OK;
}

static mx_model_status get_finite(parser *P, int i, const char *what, double *v) {
  mx_model_status st = get_double(P, i, what, v);
  if (st == MX_MODEL_OK && !isfinite(*v)) return perr(P, MX_MODEL_ERR_VALUE, "%s %s is not finite", what, P->tok[i]);
  return st;
}

static void building_free(building *B) {
  free(B->tree_start);
  free(B->feature);
  free(B->left);
  free(B->right);
  free(B->tree_weight);
  free(B->threshold);
  free(B->value);
  free(B->cand);
  memset(B, 0, sizeof(*B));
}

/* Room for `more` further nodes (capacity doubles). */
static int reserve_nodes(building *B, int32_t more) {
  const int64_t need = (int64_t)B->nnodes + more;
  if (need <= B->cap) return 0;
  int64_t cap = B->cap ? B->cap : 1024;
  while (cap < need) cap *= 2;
  int32_t *f = realloc(B->feature, (size_t)cap * sizeof(int32_t));
  if (f) B->feature = f;
  int32_t *l = realloc(B->left, (size_t)cap * sizeof(int32_t));
  if (l) B->left = l;
  int32_t *r = realloc(B->right, (size_t)cap * sizeof(int32_t));
  if (r) B->right = r;
  double *t = realloc(B->threshold, (size_t)cap * sizeof(double));
  if (t) B->threshold = t;
  double *v = realloc(B->value, (size_t)cap * sizeof(double));
  if (v) B->value = v;
  if (!f || !l || !r || !t || !v) return -1;
  B->cap = (int32_t)cap;
  return 0;
}

static mx_model_status read_header(parser *P, mx_model *M) {
  mx_model_status st = next_record(P, "matxtract-model", 1);
  if (st != MX_MODEL_OK) return st;
  if (strcmp(P->tok[0], "matxtract-model") != 0 || P->ntok != 2)
    return perr(P, MX_MODEL_ERR_VERSION, "not a matxtract model file (first record '%s')", P->tok[0]);
  int32_t version;
  if (get_int(P, 1, "version", 0, 1000000, MX_MODEL_ERR_VERSION, &version) != MX_MODEL_OK || version != MX_MODEL_VERSION)
    return perr(P, MX_MODEL_ERR_VERSION, "version '%s': this library reads version %d", P->tok[1], MX_MODEL_VERSION);
  M->version = version;
  if ((st = next_record(P, "trained_on", 1)) != MX_MODEL_OK) return st;
  if (strcmp(P->tok[0], "trained_on") != 0 || P->ntok < 2)
    return perr(P, MX_MODEL_ERR_SYNTAX, "'trained_on <text>' expected, found '%s'", P->tok[0]);
  const char *text = P->raw + strspn(P->raw, " \t");
  text += strlen("trained_on");
  text += strspn(text, " \t");
  size_t n = strcspn(text, "\r");
  while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t')) n--;
  if (n >= sizeof M->trained_on) return perr(P, MX_MODEL_ERR_VALUE, "trained_on is longer than %d bytes", MX_MODEL_TEXT - 1);
  memcpy(M->trained_on, text, n);
  M->trained_on[n] = 0;
  if ((st = expect(P, "ensemble", 1)) != MX_MODEL_OK) return st;
  if (mx_model_ensemble_parse(P->tok[1], &M->ensemble))
    return perr(P, MX_MODEL_ERR_VALUE, "ensemble '%s' is none of sum, mean, weighted_median", P->tok[1]);
  if ((st = expect(P, "base_score", 1)) != MX_MODEL_OK) return st;
  return get_finite(P, 1, "base_score", &M->base_score);
}

/* This library's input named name, or -1. */
static int32_t library_input(const char *name) {
  for (int32_t k = 0; k < MX_MODEL_NINPUTS; k++)
    if (strcmp(name, mx_model_input_name(k)) == 0) return k;
  return -1;
}

/* 'inputs N' and N 'input i name' records, i = 0.. in order: every name one of this library's inputs,
 * none twice. A model may use fewer inputs than the library has (one trained before a feature was
 * added): its nodes' input i is read as the library's input of the same name (B->input_at). */
static mx_model_status read_inputs(parser *P, building *B) {
  mx_model_status st = expect(P, "inputs", 1);
  int32_t n;
  if (st != MX_MODEL_OK || (st = get_int(P, 1, "inputs", 1, MX_MODEL_NINPUTS, MX_MODEL_ERR_INPUTS, &n)) != MX_MODEL_OK) return st;
  for (int32_t i = 0; i < n; i++) {
    int32_t idx, at;
    if ((st = expect(P, "input", 2)) != MX_MODEL_OK) return st;
    if ((st = get_int(P, 1, "input index", i, i, MX_MODEL_ERR_SYNTAX, &idx)) != MX_MODEL_OK) return st;
    if ((at = library_input(P->tok[2])) < 0)
      return perr(P, MX_MODEL_ERR_INPUTS, "input %d '%s' is none of this library's %d inputs (%d features + %d plan inputs)", (int)i,
                  P->tok[2], MX_MODEL_NINPUTS, MX_NFEATURES, MX_MODEL_NPLAN_INPUTS);
    for (int32_t q = 0; q < i; q++)
      if (B->input_at[q] == at) return perr(P, MX_MODEL_ERR_INPUTS, "input %d '%s' is input %d as well", (int)i, P->tok[2], (int)q);
    B->input_at[i] = at;
  }
  B->ninputs = n;
  return MX_MODEL_OK;
}

/* One 'node' record of tree t (nn nodes), node n, checked where it is read. */
static mx_model_status read_node(parser *P, building *B, int32_t nn, int32_t n) {
  mx_model_status st = expect(P, "node", 6);
  if (st != MX_MODEL_OK) return st;
  int32_t idx, feat, l, r;
  double thr, val;
  if ((st = get_int(P, 1, "node index", n, n, MX_MODEL_ERR_SYNTAX, &idx)) != MX_MODEL_OK ||
      (st = get_int(P, 2, "feature", -1, INT32_MAX, MX_MODEL_ERR_TREE, &feat)) != MX_MODEL_OK ||
      (st = get_double(P, 3, "threshold", &thr)) != MX_MODEL_OK ||
      (st = get_int(P, 4, "left child", -1, INT32_MAX, MX_MODEL_ERR_TREE, &l)) != MX_MODEL_OK ||
      (st = get_int(P, 5, "right child", -1, INT32_MAX, MX_MODEL_ERR_TREE, &r)) != MX_MODEL_OK ||
      (st = get_double(P, 6, "value", &val)) != MX_MODEL_OK)
    return st;
  char what[160];
  if (feat >= B->ninputs) return perr(P, MX_MODEL_ERR_TREE, "tree %d node %d: input %d; the file lists %d inputs", (int)B->ntrees, (int)n, (int)feat, (int)B->ninputs);
  if (feat >= 0) feat = B->input_at[feat];
  if (mx_model_node_problem(nn, n, feat, thr, l, r, val, what, sizeof what))
    return perr(P, MX_MODEL_ERR_TREE, "tree %d node %d: %s", (int)B->ntrees, (int)n, what);
  const int32_t k = B->nnodes++;
  B->feature[k] = feat;
  B->threshold[k] = thr;
  B->left[k] = l;
  B->right[k] = r;
  B->value[k] = val;
  return MX_MODEL_OK;
}

static mx_model_status read_trees(parser *P, const mx_model *M, building *B) {
  mx_model_status st = expect(P, "trees", 1);
  int32_t nt;
  if (st != MX_MODEL_OK || (st = get_int(P, 1, "trees", 1, MX_MODEL_MAX_TREES, MX_MODEL_ERR_VALUE, &nt)) != MX_MODEL_OK) return st;
  if (M->ensemble == MX_ENSEMBLE_WEIGHTED_MEDIAN && nt > MX_MODEL_MAX_MEDIAN_TREES)
    return perr(P, MX_MODEL_ERR_VALUE, "weighted_median takes at most %d trees, not %d", MX_MODEL_MAX_MEDIAN_TREES, (int)nt);
  B->tree_start = malloc(((size_t)nt + 1) * sizeof(int32_t));
  B->tree_weight = malloc((size_t)nt * sizeof(double));
  if (!B->tree_start || !B->tree_weight) return perr(P, MX_MODEL_ERR_MEM, "out of memory for %d trees", (int)nt);
  B->tree_start[0] = 0;
  for (int32_t t = 0; t < nt; t++) {
    int32_t idx, nn;
    double w;
    if ((st = expect(P, "tree", 3)) != MX_MODEL_OK) return st;
    if ((st = get_int(P, 1, "tree index", t, t, MX_MODEL_ERR_SYNTAX, &idx)) != MX_MODEL_OK ||
        (st = get_int(P, 2, "node count", 1, MX_MODEL_MAX_NODES - B->nnodes, MX_MODEL_ERR_VALUE, &nn)) != MX_MODEL_OK ||
        (st = get_finite(P, 3, "tree weight", &w)) != MX_MODEL_OK)
      return st;
    if (M->ensemble == MX_ENSEMBLE_WEIGHTED_MEDIAN && w < 0.0) return perr(P, MX_MODEL_ERR_VALUE, "tree weight %g < 0", w);
    if (reserve_nodes(B, nn)) return perr(P, MX_MODEL_ERR_MEM, "out of memory for %d nodes", (int)nn);
    B->tree_weight[t] = w;
    for (int32_t n = 0; n < nn; n++)
      if ((st = read_node(P, B, nn, n)) != MX_MODEL_OK) return st;
    B->tree_start[++B->ntrees] = B->nnodes;
  }
  return MX_MODEL_OK;
}

static mx_model_status read_candidates(parser *P, building *B) {
  mx_model_status st = expect(P, "candidates", 1);
  int32_t nc;
  if (st != MX_MODEL_OK || (st = get_int(P, 1, "candidates", 1, MX_MODEL_MAX_CANDIDATES, MX_MODEL_ERR_PLAN, &nc)) != MX_MODEL_OK)
    return st;
  if (!(B->cand = malloc((size_t)nc * sizeof(mx_plan)))) return perr(P, MX_MODEL_ERR_MEM, "out of memory");
  for (int32_t c = 0; c < nc; c++) {
    int32_t idx;
    mx_plan p;
    if ((st = expect(P, "candidate", 5)) != MX_MODEL_OK) return st;
    if ((st = get_int(P, 1, "candidate index", c, c, MX_MODEL_ERR_SYNTAX, &idx)) != MX_MODEL_OK ||
        (st = get_double(P, 2, "tau_c", &p.crux.tau_c)) != MX_MODEL_OK ||
        (st = get_double(P, 3, "tau_r", &p.crux.tau_r)) != MX_MODEL_OK)
      return st;
    if (mx_plan_mode_parse(P->tok[4], &p.mode)) return perr(P, MX_MODEL_ERR_PLAN, "mode '%s' is none of auto, du, se", P->tok[4]);
    if (mx_plan_cold_parse(P->tok[5], &p.cold))
      return perr(P, MX_MODEL_ERR_PLAN, "cold kernel '%s' is none of auto, segment, merge, cusparse", P->tok[5]);
    if (mx_plan_check(&p) != MX_OK)
      return perr(P, MX_MODEL_ERR_PLAN, "crux (%s, %s) is outside 0 <= tau_r <= tau_c <= 1", P->tok[2], P->tok[3]);
    B->cand[B->ncand++] = p;
  }
  return MX_MODEL_OK;
}

/* 'setup_ns_per_nnz a b c', 'end', then nothing but comments. */
static mx_model_status read_tail(parser *P, mx_model *M) {
  mx_model_status st = expect(P, "setup_ns_per_nnz", 3);
  if (st != MX_MODEL_OK || (st = get_finite(P, 1, "setup constant", &M->setup.ns_const)) != MX_MODEL_OK ||
      (st = get_finite(P, 2, "setup per tau_c", &M->setup.ns_tau_c)) != MX_MODEL_OK ||
      (st = get_finite(P, 3, "setup per tau_r", &M->setup.ns_tau_r)) != MX_MODEL_OK)
    return st;
  if ((st = expect(P, "end", 0)) != MX_MODEL_OK) return st;
  st = next_record(P, "nothing", 0);
  if (st == MX_MODEL_OK) return perr(P, MX_MODEL_ERR_SYNTAX, "'%s' after 'end'", P->tok[0]);
  return st == MX_MODEL_ERR_TRUNCATED ? MX_MODEL_OK : st;
}

static void adopt(building *B, mx_model *M) {
  M->ntrees = B->ntrees;
  M->nnodes = B->nnodes;
  M->tree_start = B->tree_start;
  M->tree_weight = B->tree_weight;
  M->feature = B->feature;
  M->threshold = B->threshold;
  M->left = B->left;
  M->right = B->right;
  M->value = B->value;
  M->ncandidates = B->ncand;
  M->candidates = B->cand;
  M->owned = 1;
  memset(B, 0, sizeof(*B));
}

/* M->node from M's arrays (owned like them: mx_model_free frees it). */
static mx_model_status build_nodes(parser *P, mx_model *M) {
  mx_model_node *node = malloc((size_t)M->nnodes * sizeof(*node));
  if (!node) return perr(P, MX_MODEL_ERR_MEM, "out of memory for the node array of %d nodes", (int)M->nnodes);
  mx_model_nodes_fill(M, node);
  M->node = node;
  return MX_MODEL_OK;
}

mx_model_status mx_model_read_stream(FILE *f, const char *name, mx_model *M, char *err, size_t errlen) {
  if (err && errlen) err[0] = 0;
  if (!M) return MX_MODEL_ERR_VALUE;
  memset(M, 0, sizeof(*M));
  if (!f) return MX_MODEL_ERR_IO;
  parser P = {.f = f, .name = name ? name : "model", .err = err, .errlen = errlen};
  building B = {0};
  flockfile(f); /* one lock for the read, not one per character */
  mx_model_status st = read_header(&P, M);
  if (st == MX_MODEL_OK) st = read_inputs(&P, &B);
  if (st == MX_MODEL_OK) st = read_trees(&P, M, &B);
  if (st == MX_MODEL_OK) st = read_candidates(&P, &B);
  if (st == MX_MODEL_OK) st = read_tail(&P, M);
  funlockfile(f);
  if (st == MX_MODEL_OK) {
    adopt(&B, M);
    char what[200];
    if ((st = build_nodes(&P, M)) == MX_MODEL_OK && (st = mx_model_check(M, what, sizeof what)) != MX_MODEL_OK)
      perr(&P, st, "%s", what);
    if (st != MX_MODEL_OK) mx_model_free(M);
  }
  building_free(&B);
  if (st != MX_MODEL_OK) memset(M, 0, sizeof(*M));
  return st;
}

mx_model_status mx_model_read(const char *path, mx_model *M, char *err, size_t errlen) {
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f) {
    if (M) memset(M, 0, sizeof(*M));
    if (err && errlen) snprintf(err, errlen, "%s: cannot open: %s", path ? path : "(null)", strerror(errno));
    return MX_MODEL_ERR_IO;
  }
  mx_model_status st = mx_model_read_stream(f, path, M, err, errlen);
  fclose(f);
  return st;
}

/* ---- writer -------------------------------------------------------------------------------------- */

static void write_trees(const mx_model *M, FILE *f) {
  fprintf(f, "trees %d\n", (int)M->ntrees);
  for (int32_t t = 0; t < M->ntrees; t++) {
    const int32_t b = M->tree_start[t], nn = M->tree_start[t + 1] - b;
    fprintf(f, "tree %d %d %.17g\n", (int)t, (int)nn, M->tree_weight[t]);
    for (int32_t n = 0; n < nn; n++)
      fprintf(f, "node %d %d %.17g %d %d %.17g\n", (int)n, (int)M->feature[b + n], M->threshold[b + n], (int)M->left[b + n],
              (int)M->right[b + n], M->value[b + n]);
  }
}

mx_model_status mx_model_write_stream(const mx_model *M, FILE *f, char *err, size_t errlen) {
  mx_model_status st = mx_model_check(M, err, errlen);
  if (st != MX_MODEL_OK) return st;
  fprintf(f, "matxtract-model %d\ntrained_on %s\nensemble %s\nbase_score %.17g\n", M->version,
          M->trained_on[0] ? M->trained_on : "(nothing)", mx_model_ensemble_name(M->ensemble), M->base_score);
  fprintf(f, "inputs %d\n", MX_MODEL_NINPUTS);
  for (int i = 0; i < MX_MODEL_NINPUTS; i++) fprintf(f, "input %d %s\n", i, mx_model_input_name(i));
  write_trees(M, f);
  fprintf(f, "candidates %d\n", (int)M->ncandidates);
  for (int32_t c = 0; c < M->ncandidates; c++) {
    const mx_plan *p = &M->candidates[c];
    fprintf(f, "candidate %d %.17g %.17g %s %s\n", (int)c, p->crux.tau_c, p->crux.tau_r, mx_plan_mode_name(p->mode),
            mx_plan_cold_name(p->cold));
  }
  fprintf(f, "setup_ns_per_nnz %.17g %.17g %.17g\nend\n", M->setup.ns_const, M->setup.ns_tau_c, M->setup.ns_tau_r);
  if (ferror(f)) {
    if (err && errlen) snprintf(err, errlen, "write error");
    return MX_MODEL_ERR_IO;
  }
  return MX_MODEL_OK;
}

mx_model_status mx_model_write(const mx_model *M, const char *path, char *err, size_t errlen) {
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!f) {
    if (err && errlen) snprintf(err, errlen, "%s: cannot write: %s", path ? path : "(null)", strerror(errno));
    return MX_MODEL_ERR_IO;
  }
  mx_model_status st = mx_model_write_stream(M, f, err, errlen);
  if (fclose(f) != 0 && st == MX_MODEL_OK) {
    if (err && errlen) snprintf(err, errlen, "%s: write error: %s", path, strerror(errno));
    st = MX_MODEL_ERR_IO;
  }
  return st;
}
