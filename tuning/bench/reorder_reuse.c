/* reorder_reuse - issue 42 probe (host only, not built by CMake): for the matrices SPEC (with or
 * without ~ORDER), the share of nonzeros whose x sector (4 columns, 32 bytes) the same merge tile
 * of T consecutive nonzeros already gathered, and the hits of a model L1 per SM (tiles dealt to 132
 * SMs in turn, 4096 sectors = 128 KB per SM, 4-way LRU). With K > 0: the hub split's rest (the K
 * most used columns left out). Usage: reorder-reuse K T SPEC... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/mx_io.h"

#define SMS 132
#define SETS 1024
#define WAYS 4
typedef struct {
  int32_t tag[SETS][WAYS];
  uint32_t age[SETS][WAYS];
  uint32_t clock;
} l1_model;

static int l1_hit(l1_model *c, int32_t sector)
{
  int s = sector & (SETS - 1), lru = 0;
  c->clock++;
  for (int w = 0; w < WAYS; w++) {
    if (c->tag[s][w] == sector) return c->age[s][w] = c->clock, 1;
    if (c->age[s][w] < c->age[s][lru]) lru = w;
  }
  c->tag[s][lru] = sector, c->age[s][lru] = c->clock;
  return 0;
}

typedef struct {
  int64_t count;
  int32_t col;
} col_count;

static int by_count_desc(const void *a, const void *b)
{
  const col_count *x = a, *y = b;
  if (x->count != y->count) return (x->count < y->count) - (x->count > y->count);
  return (x->col > y->col) - (x->col < y->col);
}

/* hub[j] = 1 for the K most used columns */
static char *hub_columns(const mx_io_csr *A, int K)
{
  char *hub = calloc((size_t)A->ncols, 1);
  col_count *cc = calloc((size_t)A->ncols, sizeof *cc);
  for (int32_t j = 0; j < A->ncols; j++) cc[j].col = j;
  for (int64_t p = 0; p < A->nnz; p++) cc[A->colidx[p]].count++;
  qsort(cc, (size_t)A->ncols, sizeof *cc, by_count_desc);
  for (int r = 0; r < K && r < A->ncols; r++) hub[cc[r].col] = 1;
  free(cc);
  return hub;
}

static void measure(const char *spec, int K, int64_t T)
{
  mx_io_csr A;
  char err[256];
  if (mx_gen(spec, 0, &A, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    exit(1);
  }
  char *hub = hub_columns(&A, K);
  int32_t *stamp = malloc(sizeof(int32_t) * ((size_t)A.ncols / 4 + 1));
  for (int32_t i = 0; i <= A.ncols / 4; i++) stamp[i] = -1;
  l1_model *l1 = calloc(SMS, sizeof(l1_model));
  for (int s = 0; s < SMS; s++) memset(l1[s].tag, 0xff, sizeof l1[s].tag);
  int64_t m = 0, in_tile = 0, l1_hits = 0;
  for (int64_t p = 0; p < A.nnz; p++) {
    if (hub[A.colidx[p]]) continue;
    int64_t t = m++ / T;
    int32_t sector = A.colidx[p] >> 2;
    if (stamp[sector] == (int32_t)t) in_tile++;
    else stamp[sector] = (int32_t)t;
    l1_hits += l1_hit(&l1[t % SMS], sector);
  }
  printf("| %s | %d | %lld | %.1f%% | %.1f%% |\n", spec, K, (long long)m, 100.0 * in_tile / m, 100.0 * l1_hits / m);
  fflush(stdout);
  free(hub), free(stamp), free(l1);
  mx_io_csr_free(&A);
}

int main(int argc, char **argv)
{
  if (argc < 4) return fprintf(stderr, "usage: reorder-reuse K T SPEC...\n"), 1;
  int K = atoi(argv[1]);
  int64_t T = atoll(argv[2]);
  printf("| matrix | K | nonzeros gathered | in-tile reuse (T = %lld) | model L1 hits |\n|---|---|---|---|---|\n", (long long)T);
  for (int a = 3; a < argc; a++) measure(argv[a], K, T);
  return 0;
}
