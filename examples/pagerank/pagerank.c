static char help[] = "PageRank of a directed graph with PETSc, by power iteration or by a KSP solve.\n\
The column-stochastic transition matrix P (P_ij = 1/outdeg(j) for an edge j->i) is built in AIJ\n\
(MatGetRowSum, MatDiagonalScale, MatTranspose) and then converted to the type given by -mat_type\n\
(aij, aijcusparse, matxtract): every MatMult of the iteration runs on P in that type.\n\
Dangling nodes (no out-edges) send their rank to the personalization vector v.\n\n\
Input (at most one of -f and -gen; with neither, an embedded R-MAT graph of 4096 nodes is used):\n\
  -f <file>                         adjacency matrix: Matrix Market (.mtx) or PETSc binary (any other name)\n\
  -gen <spec>                       generated adjacency, e.g. kron:16:16 (-gen help lists the generators)\n\
  -gen_seed <0>                     generator seed (0 = the family's default)\n\
  -pagerank_transpose               the input's rows are edge targets (default: row = source, A_ij = edge i->j)\n\
  -pagerank_weighted                stored values are nonnegative edge weights (default: every stored entry is\n\
                                    an edge of weight 1, so P_ij = 1/outdeg(j))\n\
Method:\n\
  -pagerank_method <power|ksp>      power: x <- alpha P x + (alpha d'x + 1 - alpha) v (default)\n\
                                    ksp: solve (I - alpha (P + v d')) x = (1 - alpha) v with -ksp_type/-pc_type\n\
                                    (default gmres, pc none; jacobi works), then x <- x / sum(x)\n\
  -pagerank_alpha <0.85>            damping factor, 0 <= alpha < 1\n\
  -pagerank_tol <1e-10>             power: stop when ||x_k+1 - x_k||_1 < tol (0: never, run -pagerank_max_it\n\
                                    iterations exactly); ksp: relative tolerance (-ksp_rtol wins)\n\
  -pagerank_max_it <1000>           iteration limit\n\
  -pagerank_personalization <uniform|node:K|FILE>  teleport vector v (FILE: PETSc binary Vec, nonnegative)\n\
  -pagerank_partition <none|petsc|rcm>  renumber the nodes before the iterations: petsc = MatPartitioning of the\n\
                                    symmetrized graph (-mat_partitioning_type; PETSc's default: ParMETIS or PT-Scotch\n\
                                    when PETSc has them), rcm = reverse Cuthill-McKee on a copy of the graph per rank,\n\
                                    then contiguous blocks; the ghost count per rank is printed either way, and the\n\
                                    outputs (top, save, compare) use the input's numbering\n\
  -pagerank_seeds <0>               K > 0: K personalized PageRank vectors at once (power method on a dense block\n\
                                    X of K columns: one MatMatMult P X per step), seed c = node floor(c N / K)\n\
  -pagerank_seeds_compare           also run the K single-vector power iterations and compare (error if a\n\
                                    vector differs by more than -pagerank_compare_tol in l1); prints the speedup\n\
Output:\n\
  -pagerank_top <10>                print the k best nodes as 'rank node score' (nodes are 0-based row indices)\n\
  -pagerank_save <file>             write x as a PETSc binary Vec\n\
  -pagerank_compare <file>          compare x with a saved Vec; error if ||x - x_file||_1 > -pagerank_compare_tol\n\
  -pagerank_compare_tol <1e-10>\n\
  -pagerank_view_mat <viewer>       view P after the iterations (e.g. ::ascii_info_detail: a matxtract P shows the plan\n\
                                    it ended on, after any online upgrade)\n\
Every timing line starts with 'time:'; with -mat_type matxtract a line 'matxtract: plan after the iterations: ...'\n\
says which plan MatMult ended on and whether it was upgraded.\n\n";

#include <petscksp.h>
#include <petsctime.h>
#include <matxtract.h>
#include "example_util.h"

#if PETSC_VERSION_GE(3, 24, 0)
  #define PR_OPFN(f) ((PetscErrorCodeFn *)(f))
#else
  #define PR_OPFN(f) ((void (*)(void))(f))
#endif

typedef enum {
  PR_POWER,
  PR_KSP
} PRMethod;
static const char *const PRMethods[] = {"power", "ksp", "PRMethod", "PR_", NULL};

typedef enum {
  PR_PART_NONE,
  PR_PART_PETSC,
  PR_PART_RCM
} PRPartition;
static const char *const PRPartitions[] = {"none", "petsc", "rcm", "PRPartition", "PR_PART_", NULL};

/* The embedded default graph: R-MAT (Graph500 parameters a,b,c = 0.57,0.19,0.19), scale 12 (4096
 * nodes), edge factor 16, fixed seed, node labels randomly permuted, self-loops and duplicates dropped. */
#define PR_RMAT_SCALE      12
#define PR_RMAT_EDGEFACTOR 16
#define PR_RMAT_SEED       0x5eed2026ULL

static uint64_t SplitMix64(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static double Uniform01(uint64_t *s)
{
  return (double)(SplitMix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Every rank draws the same edge sequence and keeps the edges whose source row it owns: the graph does not
 * depend on the number of ranks. */
static PetscErrorCode CreateEmbeddedGraph(MPI_Comm comm, Mat *A)
{
  const PetscInt n = (PetscInt)1 << PR_RMAT_SCALE, nsamples = n * PR_RMAT_EDGEFACTOR;
  const double   a = 0.57, b = 0.19, c = 0.19;
  uint64_t       state = PR_RMAT_SEED;
  PetscInt      *perm, *src, *dst, *dnz, *onz, rstart, rend, nloc = 0, e, i, j;
  PetscLayout    map;
  PetscScalar    one = 1.0;

  PetscFunctionBeginUser;
  PetscCall(PetscLayoutCreate(comm, &map));
  PetscCall(PetscLayoutSetSize(map, n));
  PetscCall(PetscLayoutSetBlockSize(map, 1));
  PetscCall(PetscLayoutSetUp(map));
  PetscCall(PetscLayoutGetRange(map, &rstart, &rend));
  PetscCall(PetscMalloc3(n, &perm, nsamples, &src, nsamples, &dst));
  for (i = 0; i < n; i++) perm[i] = i;
  for (i = n - 1; i > 0; i--) { /* Fisher-Yates */
    PetscInt k = (PetscInt)(SplitMix64(&state) % (uint64_t)(i + 1)), t = perm[i];
    perm[i]    = perm[k];
    perm[k]    = t;
  }
  for (e = 0; e < nsamples; e++) {
    PetscInt s = 0, t = 0, level;
    for (level = 0; level < PR_RMAT_SCALE; level++) {
      double   r   = Uniform01(&state);
      PetscInt bit = (PetscInt)1 << level;
      if (r < a) continue;
      else if (r < a + b) t |= bit;
      else if (r < a + b + c) s |= bit;
      else {
        s |= bit;
        t |= bit;
      }
    }
    s = perm[s];
    t = perm[t];
    if (s == t || s < rstart || s >= rend) continue;
    src[nloc] = s;
    dst[nloc] = t;
    nloc++;
  }
  /* preallocation (an upper bound: duplicates are counted) */
  PetscCall(PetscCalloc2(rend - rstart, &dnz, rend - rstart, &onz));
  for (e = 0; e < nloc; e++) {
    if (dst[e] >= rstart && dst[e] < rend) dnz[src[e] - rstart]++;
    else onz[src[e] - rstart]++;
  }
  for (i = 0; i < rend - rstart; i++) {
    dnz[i] = PetscMin(dnz[i], rend - rstart);
    onz[i] = PetscMin(onz[i], n - (rend - rstart));
  }
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetOptionsPrefix(*A, "pagerank_adj_"));
  PetscCall(MatSetSizes(*A, rend - rstart, rend - rstart, n, n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
  for (e = 0; e < nloc; e++) {
    i = src[e];
    j = dst[e];
    PetscCall(MatSetValues(*A, 1, &i, 1, &j, &one, INSERT_VALUES)); /* a duplicate edge inserts 1 again */
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(PetscFree3(perm, src, dst));
  PetscCall(PetscLayoutDestroy(&map));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values of the AIJ adjacency: 1 for every stored entry, or (weighted) checked to be nonnegative. */
static PetscErrorCode PrepareEdgeValues(Mat A, PetscBool weighted)
{
  Mat         blocks[2];
  PetscInt    nb = 1, b, k, nrows;
  PetscBool   isseq;
  PetscScalar *v;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &isseq));
  if (isseq) blocks[0] = A;
  else {
    PetscCall(MatMPIAIJGetSeqAIJ(A, &blocks[0], &blocks[1], NULL));
    nb = 2;
  }
  for (b = 0; b < nb; b++) {
    const PetscInt *ia, *ja;
    PetscBool       done;
    PetscInt        nz;

    PetscCall(MatGetRowIJ(blocks[b], 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "Cannot access the rows of the adjacency matrix");
    nz = ia[nrows];
    PetscCall(MatRestoreRowIJ(blocks[b], 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
    PetscCall(MatSeqAIJGetArray(blocks[b], &v));
    for (k = 0; k < nz; k++) {
      if (weighted) {
        PetscCheck(PetscRealPart(v[k]) >= 0.0 && !PetscIsInfOrNanScalar(v[k]), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_weighted needs nonnegative finite edge weights; found %g", (double)PetscRealPart(v[k]));
      } else v[k] = 1.0;
    }
    PetscCall(MatSeqAIJRestoreArray(blocks[b], &v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The concrete type that -mat_type names ("matxtract" -> "seqaijmatxtract" on one rank); NULL name = keep AIJ. */
static PetscErrorCode ConvertToRequestedType(Mat *P, char type[], size_t len)
{
  char      opt[256];
  PetscBool set;
  Mat       T;
  MatType   concrete;
  PetscInt  m, n, M, N;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", opt, sizeof(opt), &set));
  if (set) {
    PetscCall(MatGetLocalSize(*P, &m, &n));
    PetscCall(MatGetSize(*P, &M, &N));
    PetscCall(MatCreate(PetscObjectComm((PetscObject)*P), &T));
    PetscCall(MatSetSizes(T, m, n, M, N));
    PetscCall(MatSetType(T, opt)); /* resolves a root name such as aij or matxtract; errors for unknown types */
    PetscCall(MatGetType(T, &concrete));
    PetscCall(PetscStrncpy(type, concrete, len));
    PetscCall(MatDestroy(&T));
    PetscCall(MatConvert(*P, type, MAT_INPLACE_MATRIX, P));
  }
  PetscCall(MatSetFromOptions(*P)); /* type-specific options, e.g. -mat_matxtract_crux */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetPersonalization(Vec v, const char spec[])
{
  PetscBool   isuniform, isnode;
  PetscInt    N, node, lo, hi;
  PetscReal   vmin, sum;
  PetscViewer viewer;

  PetscFunctionBeginUser;
  PetscCall(VecGetSize(v, &N));
  PetscCall(PetscStrcmp(spec, "uniform", &isuniform));
  PetscCall(PetscStrncmp(spec, "node:", 5, &isnode));
  if (isuniform) {
    PetscCall(VecSet(v, 1.0 / (PetscReal)N));
  } else if (isnode) {
    char *end;
    long  k = strtol(spec + 5, &end, 10);
    PetscCheck(end != spec + 5 && *end == '\0' && k >= 0 && k < N, PetscObjectComm((PetscObject)v), PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_personalization %s: need node:K with 0 <= K < %" PetscInt_FMT, spec, N);
    node = (PetscInt)k;
    PetscCall(VecSet(v, 0.0));
    PetscCall(VecGetOwnershipRange(v, &lo, &hi));
    if (node >= lo && node < hi) PetscCall(VecSetValue(v, node, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(v));
    PetscCall(VecAssemblyEnd(v));
  } else {
    PetscCall(PetscViewerBinaryOpen(PetscObjectComm((PetscObject)v), spec, FILE_MODE_READ, &viewer));
    PetscCall(VecLoad(v, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
    PetscCall(VecMin(v, NULL, &vmin));
    PetscCheck(vmin >= 0.0, PetscObjectComm((PetscObject)v), PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_personalization %s: the vector has a negative entry (%g)", spec, (double)vmin);
    PetscCall(VecNorm(v, NORM_1, &sum));
    PetscCheck(sum > 0.0, PetscObjectComm((PetscObject)v), PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_personalization %s: the vector is zero", spec);
    PetscCall(VecScale(v, 1.0 / sum));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Google matrix as a shell: M x = x - alpha (P x + v (d'x)), d = dangling indicator. */
typedef struct {
  Mat       P;
  Vec       dang, v, work;
  PetscReal alpha;
} GoogleCtx;

static PetscErrorCode GoogleMult(Mat M, Vec x, Vec y)
{
  GoogleCtx  *ctx;
  PetscScalar dx;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(M, &ctx));
  PetscCall(MatMult(ctx->P, x, y));
  PetscCall(VecDot(x, ctx->dang, &dx));
  PetscCall(VecAXPY(y, dx, ctx->v));
  PetscCall(VecAYPX(y, -ctx->alpha, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GoogleGetDiagonal(Mat M, Vec d)
{
  GoogleCtx *ctx;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(M, &ctx));
  PetscCall(MatGetDiagonal(ctx->P, d));
  PetscCall(VecPointwiseMult(ctx->work, ctx->v, ctx->dang));
  PetscCall(VecAXPY(d, 1.0, ctx->work));
  PetscCall(VecScale(d, -ctx->alpha));
  PetscCall(VecShift(d, 1.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = G x = alpha (P x + v d'x) + (1 - alpha) v: one step of the power method (x >= 0, sum(x) = 1). */
static PetscErrorCode GoogleStep(Mat P, Vec dang, Vec v, PetscReal alpha, Vec x, Vec y)
{
  PetscScalar dx;

  PetscFunctionBeginUser;
  PetscCall(MatMult(P, x, y));
  PetscCall(VecDot(x, dang, &dx));
  PetscCall(VecAXPBY(y, alpha * dx + (1.0 - alpha), alpha, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P + P' (the graph without directions), in AIJ. */
static PetscErrorCode Symmetrized(Mat P, Mat *S)
{
  Mat Pt;

  PetscFunctionBeginUser;
  PetscCall(MatTranspose(P, MAT_INITIAL_MATRIX, &Pt));
  PetscCall(MatDuplicate(P, MAT_COPY_VALUES, S));
  PetscCall(MatAXPY(*S, 1.0, Pt, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatDestroy(&Pt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *isrows: on each rank, the old numbers of the nodes it owns after renumbering, in their new order. petsc:
 * MatPartitioning of the symmetrized graph (its type from -mat_partitioning_type); rcm: reverse
 * Cuthill-McKee of a copy of the symmetrized graph on every rank, cut into the ranks' current row counts. */
static PetscErrorCode PartitionRows(Mat P, PRPartition how, IS *isrows)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)P);
  Mat      S;

  PetscFunctionBeginUser;
  PetscCall(Symmetrized(P, &S));
  if (how == PR_PART_PETSC) {
    Mat             adj;
    MatPartitioning part;
    MatPartitioningType ptype;
    IS              target;
    PetscCall(MatConvert(S, MATMPIADJ, MAT_INITIAL_MATRIX, &adj));
    PetscCall(MatPartitioningCreate(comm, &part));
    PetscCall(MatPartitioningSetAdjacency(part, adj));
    PetscCall(MatPartitioningSetFromOptions(part));
    PetscCall(MatPartitioningApply(part, &target));
    PetscCall(MatPartitioningGetType(part, &ptype));
    PetscCall(PetscPrintf(comm, "partition: MatPartitioning %s\n", ptype));
    PetscCall(ISBuildTwoSided(target, NULL, isrows));
    PetscCall(ISSort(*isrows));
    PetscCall(ISDestroy(&target));
    PetscCall(MatPartitioningDestroy(&part));
    PetscCall(MatDestroy(&adj));
  } else {
    PetscMPIInt     size;
    Mat             Sseq;
    IS              rperm, cperm;
    const PetscInt *order;
    PetscInt        lo, hi;
    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCall(MatCreateRedundantMatrix(S, size, MPI_COMM_NULL, MAT_INITIAL_MATRIX, &Sseq));
    PetscCall(MatGetOrdering(Sseq, MATORDERINGRCM, &rperm, &cperm));
    PetscCall(MatGetOwnershipRange(P, &lo, &hi));
    PetscCall(ISGetIndices(rperm, &order)); /* order[new] = old */
    PetscCall(ISCreateGeneral(comm, hi - lo, order + lo, PETSC_COPY_VALUES, isrows));
    PetscCall(ISRestoreIndices(rperm, &order));
    PetscCall(PetscPrintf(comm, "partition: reverse Cuthill-McKee, contiguous blocks\n"));
    PetscCall(ISDestroy(&rperm));
    PetscCall(ISDestroy(&cperm));
    PetscCall(MatDestroy(&Sseq));
  }
  PetscCall(MatDestroy(&S));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The nodes renumbered (PartitionRows): *P and *r (a vector of P's column layout) permuted alike; *sc maps
 * a vector of the new numbering to the input's (forward; reverse: back), *old is a vector of the input's
 * layout (the old *r). */
static PetscErrorCode RenumberNodes(PRPartition how, Mat *P, Vec *r, VecScatter *sc, Vec *old)
{
  IS       isrows, isnew;
  Mat      Pn;
  Vec      rn;
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(PartitionRows(*P, how, &isrows));
  PetscCall(MatCreateSubMatrix(*P, isrows, isrows, MAT_INITIAL_MATRIX, &Pn));
  PetscCall(MatCreateVecs(Pn, &rn, NULL));
  PetscCall(VecGetOwnershipRange(rn, &lo, &hi));
  PetscCall(ISCreateStride(PetscObjectComm((PetscObject)rn), hi - lo, lo, 1, &isnew));
  PetscCall(VecScatterCreate(rn, isnew, *r, isrows, sc));
  PetscCall(VecScatterBegin(*sc, *r, rn, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(*sc, *r, rn, INSERT_VALUES, SCATTER_REVERSE));
  *old = *r;
  *r   = rn;
  PetscCall(MatDestroy(P));
  *P = Pn;
  PetscCall(ISDestroy(&isnew));
  PetscCall(ISDestroy(&isrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The ghost values each rank's MatMult receives (the off-diagonal block's columns): min, max, total. */
static PetscErrorCode PrintGhosts(Mat P)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)P);
  PetscMPIInt size;
  PetscInt    ng = 0, N, mn, mx, tot;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetSize(P, &N, NULL));
  if (size > 1) {
    Mat Ad, Ao;
    PetscCall(MatMPIAIJGetSeqAIJ(P, &Ad, &Ao, NULL));
    PetscCall(MatGetSize(Ao, NULL, &ng));
  }
  PetscCallMPI(MPI_Allreduce(&ng, &mn, 1, MPIU_INT, MPI_MIN, comm));
  PetscCallMPI(MPI_Allreduce(&ng, &mx, 1, MPIU_INT, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(&ng, &tot, 1, MPIU_INT, MPI_SUM, comm));
  PetscCall(PetscPrintf(comm, "ghosts per rank: min %" PetscInt_FMT ", max %" PetscInt_FMT ", total %" PetscInt_FMT " (%.1f%% of the nodes)\n", mn, mx, tot, N ? 100.0 * (double)tot / (double)N : 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The run's vectors and P. */
static PetscErrorCode DestroyRun(Vec *x, Vec *y, Vec *dang, Vec *v, Mat *P)
{
  PetscFunctionBeginUser;
  PetscCall(VecDestroy(x));
  PetscCall(VecDestroy(y));
  PetscCall(VecDestroy(dang));
  PetscCall(VecDestroy(v));
  PetscCall(MatDestroy(P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The power method from the start x (y: work): x <- G x until ||x_k+1 - x_k||_1 < tol (or max_it steps;
 * tol 0: exactly max_it). *its: the steps made. */
static PetscErrorCode PowerIterate(Mat P, Vec dang, Vec v, PetscReal alpha, PetscReal tol, PetscInt max_it, Vec x, Vec y, PetscInt *its, PetscBool *converged)
{
  PetscReal diff;

  PetscFunctionBeginUser;
  *converged = PETSC_FALSE;
  for (*its = 1; *its <= max_it; (*its)++) {
    PetscCall(GoogleStep(P, dang, v, alpha, x, y));
    PetscCall(VecAXPY(x, -1.0, y));
    PetscCall(VecNorm(x, NORM_1, &diff));
    PetscCall(VecSwap(x, y));
    if (diff < tol) {
      *converged = PETSC_TRUE;
      break;
    }
  }
  if (!*converged) *its = max_it;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PrintTop(Vec, PetscInt);

/* Seed c of K on N nodes: node floor(c N / K). */
static PetscInt SeedNode(PetscInt c, PetscInt K, PetscInt N) { return (PetscInt)(((PetscInt64)c * N) / K); }

/* Column c of Y <- (alpha d'X_c + 1 - alpha) V_c + alpha Y_c, for every column: GoogleStep's update. */
static PetscErrorCode BlockUpdate(Mat X, Vec dang, Mat V, PetscReal alpha, Mat Y)
{
  PetscInt K;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(X, NULL, &K));
  for (PetscInt c = 0; c < K; c++) {
    Vec         xc, yc, vc;
    PetscScalar dx;
    PetscCall(MatDenseGetColumnVecRead(X, c, &xc));
    PetscCall(VecDot(xc, dang, &dx));
    PetscCall(MatDenseRestoreColumnVecRead(X, c, &xc));
    PetscCall(MatDenseGetColumnVec(Y, c, &yc));
    PetscCall(MatDenseGetColumnVecRead(V, c, &vc));
    PetscCall(VecAXPBY(yc, alpha * dx + (1.0 - alpha), alpha, vc));
    PetscCall(MatDenseRestoreColumnVecRead(V, c, &vc));
    PetscCall(MatDenseRestoreColumnVec(Y, c, &yc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The block power method: X <- G X column by column (one MatMatMult P X per step) from the start X,
 * until every column's l1 change is below tol (or max_it steps; tol 0: exactly max_it). */
static PetscErrorCode BlockPowerIterate(Mat P, Vec dang, Mat V, PetscReal alpha, PetscReal tol, PetscInt max_it, Mat X, PetscInt *its, PetscBool *converged)
{
  Mat        Y = NULL;
  PetscInt   K;
  PetscReal *norms, diff;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(X, NULL, &K));
  PetscCall(PetscMalloc1(K, &norms));
  *converged = PETSC_FALSE;
  for (*its = 1; *its <= max_it; (*its)++) {
    PetscCall(MatMatMult(P, X, Y ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y));
    PetscCall(BlockUpdate(X, dang, V, alpha, Y));
    PetscCall(MatAXPY(X, -1.0, Y, SAME_NONZERO_PATTERN));
    for (PetscInt c = 0; c < K; c++) { /* column by column: every dense type has VecNorm */
      Vec xc;
      PetscCall(MatDenseGetColumnVecRead(X, c, &xc));
      PetscCall(VecNorm(xc, NORM_1, &norms[c]));
      PetscCall(MatDenseRestoreColumnVecRead(X, c, &xc));
    }
    PetscCall(MatCopy(Y, X, SAME_NONZERO_PATTERN));
    diff = 0.0;
    for (PetscInt c = 0; c < K; c++) diff = PetscMax(diff, norms[c]);
    if (diff < tol) {
      *converged = PETSC_TRUE;
      break;
    }
  }
  if (!*converged) *its = max_it;
  PetscCall(PetscFree(norms));
  PetscCall(MatDestroy(&Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The K single-vector power iterations of the seeds, each compared with its column of X: the largest
 * l1 difference, and their time. */
static PetscErrorCode CompareSingleRuns(Mat P, Vec dang, PetscReal alpha, PetscReal tol, PetscInt max_it, Mat X, PetscReal *maxdiff, PetscLogDouble *seconds)
{
  PetscInt       K, N, its;
  PetscBool      conv;
  Vec            v, x, y;
  PetscLogDouble t0 = 0.0, t1 = 0.0;
  MPI_Comm       comm = PetscObjectComm((PetscObject)P);

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(X, &N, &K));
  PetscCall(MatCreateVecs(P, &x, &y));
  PetscCall(VecDuplicate(x, &v));
  *maxdiff = 0.0;
  *seconds = 0.0;
  for (PetscInt c = 0; c < K; c++) {
    Vec       xc;
    PetscReal d;
    PetscCall(VecSet(v, 0.0));
    PetscCall(VecSetValue(v, SeedNode(c, K, N), 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(v));
    PetscCall(VecAssemblyEnd(v));
    PetscCall(VecCopy(v, x));
    PetscCall(Now(comm, &t0));
    PetscCall(PowerIterate(P, dang, v, alpha, tol, max_it, x, y, &its, &conv));
    PetscCall(Now(comm, &t1));
    *seconds += t1 - t0;
    PetscCall(MatDenseGetColumnVecRead(X, c, &xc));
    PetscCall(VecAXPY(x, -1.0, xc));
    PetscCall(MatDenseRestoreColumnVecRead(X, c, &xc));
    PetscCall(VecNorm(x, NORM_1, &d));
    *maxdiff = PetscMax(*maxdiff, d);
  }
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -pagerank_seeds K: the K personalized vectors by the block power method; with compare, the K single runs
 * too (error beyond cmptol). Prints iterations, times and each seed's best node (the first 10 seeds). */
static PetscErrorCode RunSeeds(Mat P, Vec dang, PetscInt K, PetscReal alpha, PetscReal tol, PetscInt max_it, VecType vtype, PetscBool compare, PetscReal cmptol)
{
  Mat            V, X;
  PetscInt       N, its = 0, lo, hi;
  PetscBool      conv = PETSC_FALSE;
  PetscLogDouble t0 = 0.0, t1 = 0.0, tsingle = 0.0;
  PetscReal      maxdiff = 0.0;
  MPI_Comm       comm = PetscObjectComm((PetscObject)P);

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(P, &N, NULL));
  PetscCall(CreateDenseBlock(P, K, vtype, &V));
  PetscCall(MatGetOwnershipRange(V, &lo, &hi));
  PetscCall(MatZeroEntries(V));
  for (PetscInt c = 0; c < K; c++)
    if (SeedNode(c, K, N) >= lo && SeedNode(c, K, N) < hi) PetscCall(MatSetValue(V, SeedNode(c, K, N), c, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(V, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(V, MAT_FINAL_ASSEMBLY));
  PetscCall(MatDuplicate(V, MAT_COPY_VALUES, &X));
  PetscCall(Now(comm, &t0));
  PetscCall(BlockPowerIterate(P, dang, V, alpha, tol, max_it, X, &its, &conv));
  PetscCall(Now(comm, &t1));
  if (compare) PetscCall(CompareSingleRuns(P, dang, alpha, tol, max_it, X, &maxdiff, &tsingle));
  PetscCall(PetscPrintf(comm, "seeds: %" PetscInt_FMT " personalized vectors at once (block power method), seed c = node floor(c N / K)\n", K));
  PetscCall(PetscPrintf(comm, "iterations: %" PetscInt_FMT "\n", its));
  PetscCall(PetscPrintf(comm, "converged: %s\n", conv ? "yes" : "no"));
  PetscCall(PetscPrintf(comm, "time: iterations: %.6f s\n", t1 - t0));
  PetscCall(PetscPrintf(comm, "time: per iteration: %.3e s\n", (t1 - t0) / its));
  PetscCall(PetscPrintf(comm, "time: per iteration and seed: %.3e s\n", (t1 - t0) / its / K));
  PetscCall(PrintMatXtractPlan(P, "iterations"));
  for (PetscInt c = 0; c < PetscMin(K, 10); c++) {
    Vec xc;
    PetscCall(MatDenseGetColumnVecRead(X, c, &xc));
    PetscCall(PetscPrintf(comm, "seed %" PetscInt_FMT " (node %" PetscInt_FMT "): ", c, SeedNode(c, K, N)));
    PetscCall(PrintTop(xc, 1));
    PetscCall(MatDenseRestoreColumnVecRead(X, c, &xc));
  }
  if (compare) {
    PetscCall(PetscPrintf(comm, "time: %" PetscInt_FMT " single-vector runs: %.6f s (their time over the block's: %.2fx)\n", K, tsingle, t1 > t0 ? tsingle / (t1 - t0) : 0.0));
    PetscCall(PetscPrintf(comm, "compare: max over seeds of ||x_single - x_block||_1 = %.3e (tol %.1e)\n", (double)maxdiff, (double)cmptol));
    PetscCheck(maxdiff <= cmptol, comm, PETSC_ERR_PLIB, "-pagerank_seeds_compare: a block vector differs from its single run by %g > %g in l1", (double)maxdiff, (double)cmptol);
  }
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&V));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscInt  node;
  PetscReal score;
} RankEntry;

/* Descending score; scores equal to 1e-10 relative (rounding noise between Mat types) are ordered by node. */
static int CompareRank(const void *pa, const void *pb)
{
  const RankEntry *a = (const RankEntry *)pa, *b = (const RankEntry *)pb;
  PetscReal        tol = 1e-10 * PetscMax(PetscAbsReal(a->score), PetscAbsReal(b->score));
  if (PetscAbsReal(a->score - b->score) > tol) return a->score > b->score ? -1 : 1;
  return (a->node > b->node) - (a->node < b->node);
}

static PetscErrorCode PrintTop(Vec x, PetscInt k)
{
  Vec                x0;
  VecScatter         sc;
  PetscMPIInt        rank;
  const PetscScalar *a;
  RankEntry         *r;
  PetscInt           n, i;

  PetscFunctionBeginUser;
  PetscCall(MPI_Comm_rank(PetscObjectComm((PetscObject)x), &rank));
  PetscCall(VecScatterCreateToZero(x, &sc, &x0));
  PetscCall(VecScatterBegin(sc, x, x0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, x, x0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetSize(x, &n));
  k = PetscMin(k, n);
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)x), "top %" PetscInt_FMT " (rank node score; nodes 0-based):\n", k));
  if (rank == 0 && k > 0) {
    PetscCall(PetscMalloc1(n, &r));
    PetscCall(VecGetArrayRead(x0, &a));
    for (i = 0; i < n; i++) {
      r[i].node  = i;
      r[i].score = PetscRealPart(a[i]);
    }
    PetscCall(VecRestoreArrayRead(x0, &a));
    qsort(r, (size_t)n, sizeof(RankEntry), CompareRank);
    for (i = 0; i < k; i++) PetscCall(PetscPrintf(PETSC_COMM_SELF, "%4" PetscInt_FMT " %8" PetscInt_FMT " %.8e\n", i + 1, r[i].node, (double)r[i].score));
    PetscCall(PetscFree(r));
  }
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&x0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm         comm;
  char             file[PETSC_MAX_PATH_LEN] = "", spec[256] = "", pers[PETSC_MAX_PATH_LEN] = "uniform";
  char             savefile[PETSC_MAX_PATH_LEN] = "", cmpfile[PETSC_MAX_PATH_LEN] = "", ptype[256] = "";
  PetscBool        hasfile = PETSC_FALSE, hasgen = PETSC_FALSE, transpose = PETSC_FALSE, weighted = PETSC_FALSE, save = PETSC_FALSE, cmp = PETSC_FALSE, genhelp = PETSC_FALSE;
  PRMethod         method = PR_POWER;
  PRPartition      partition = PR_PART_NONE;
  VecScatter       tonew = NULL; /* -pagerank_partition: the new numbering -> the input's (forward) */
  Vec              vold = NULL, xout;
  PetscReal        alpha = 0.85, tol = 1e-10, cmptol = 1e-10, res = 0.0, diff;
  PetscScalar      sum;
  PetscInt         max_it = 1000, top = 10, its = 0, genseed = 0, M, N, ndangling, i, lo, hi, seeds = 0;
  PetscBool        seeds_compare = PETSC_FALSE;
  Mat              A, At, P;
  Vec              r, dang, v, x, y, ref;
  MatInfo          info;
  MatType          mtype;
  VecType          vtype;
  PetscLogDouble   t0, t1, t2, t2r, t3, t3c, t4, t5, t6;
  PetscBool        converged = PETSC_FALSE;
  KSP              ksp = NULL;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  const PetscScalar *ra;
  PetscScalar      *da;
  PetscMPIInt      size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatXtractRegister());

  PetscOptionsBegin(comm, NULL, "PageRank input", NULL);
  PetscCall(PetscOptionsString("-f", "Adjacency matrix file (.mtx or PETSc binary)", NULL, file, file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsString("-gen", "Generated adjacency (spec; 'help' lists them)", NULL, spec, spec, sizeof(spec), &hasgen));
  PetscCall(PetscOptionsInt("-gen_seed", "Generator seed (0 = the family's default)", NULL, genseed, &genseed, NULL));
  PetscOptionsEnd();
  PetscOptionsBegin(comm, "pagerank_", "PageRank options", NULL);
  PetscCall(PetscOptionsBool("-transpose", "Rows of the input are edge targets", NULL, transpose, &transpose, NULL));
  PetscCall(PetscOptionsBool("-weighted", "Stored values are nonnegative edge weights", NULL, weighted, &weighted, NULL));
  PetscCall(PetscOptionsEnum("-method", "power or ksp", NULL, PRMethods, (PetscEnum)method, (PetscEnum *)&method, NULL));
  PetscCall(PetscOptionsReal("-alpha", "Damping factor", NULL, alpha, &alpha, NULL));
  PetscCall(PetscOptionsReal("-tol", "Tolerance (power: l1 change; ksp: relative residual)", NULL, tol, &tol, NULL));
  PetscCall(PetscOptionsInt("-max_it", "Iteration limit", NULL, max_it, &max_it, NULL));
  PetscCall(PetscOptionsString("-personalization", "uniform, node:K or a PETSc binary Vec file", NULL, pers, pers, sizeof(pers), NULL));
  PetscCall(PetscOptionsInt("-top", "Number of best nodes to print", NULL, top, &top, NULL));
  PetscCall(PetscOptionsString("-save", "Write the PageRank vector (PETSc binary)", NULL, savefile, savefile, sizeof(savefile), &save));
  PetscCall(PetscOptionsString("-compare", "Compare with a saved PageRank vector (PETSc binary)", NULL, cmpfile, cmpfile, sizeof(cmpfile), &cmp));
  PetscCall(PetscOptionsReal("-compare_tol", "Largest l1 difference accepted by -pagerank_compare", NULL, cmptol, &cmptol, NULL));
  PetscCall(PetscOptionsEnum("-partition", "Renumber the nodes: none, petsc (MatPartitioning) or rcm", NULL, PRPartitions, (PetscEnum)partition, (PetscEnum *)&partition, NULL));
  PetscCall(PetscOptionsInt("-seeds", "K personalized vectors at once (block power method)", NULL, seeds, &seeds, NULL));
  PetscCall(PetscOptionsBool("-seeds_compare", "Compare the block vectors with K single runs", NULL, seeds_compare, &seeds_compare, NULL));
  PetscOptionsEnd();

  PetscCall(CheckMatrixSource(comm, hasfile, hasgen, spec, &genhelp));
  if (genhelp) {
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCheck(alpha >= 0.0 && alpha < 1.0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_alpha %g: need 0 <= alpha < 1", (double)alpha);
  PetscCheck(tol >= 0.0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_tol %g: need tol >= 0", (double)tol);
  PetscCheck(max_it >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_max_it %" PetscInt_FMT ": need at least 1", max_it);
  PetscCheck(top >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_top %" PetscInt_FMT ": need k >= 0", top);
  PetscCheck(seeds >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-pagerank_seeds %" PetscInt_FMT ": need K >= 0", seeds);
  if (seeds > 0) {
    PetscBool uniform;
    PetscCall(PetscStrcmp(pers, "uniform", &uniform));
    PetscCheck(uniform, comm, PETSC_ERR_ARG_INCOMP, "-pagerank_seeds gives each vector its own personalization (its seed node): drop -pagerank_personalization");
    PetscCheck(method == PR_POWER, comm, PETSC_ERR_ARG_INCOMP, "-pagerank_seeds runs the power method: drop -pagerank_method ksp");
    PetscCheck(!save && !cmp, comm, PETSC_ERR_ARG_INCOMP, "-pagerank_save and -pagerank_compare hold one vector: with -pagerank_seeds use -pagerank_seeds_compare");
    PetscCheck(partition == PR_PART_NONE, comm, PETSC_ERR_SUP, "-pagerank_seeds with -pagerank_partition: not supported (the seeds are nodes of the input's numbering)");
  } else PetscCheck(!seeds_compare, comm, PETSC_ERR_ARG_INCOMP, "-pagerank_seeds_compare needs -pagerank_seeds K > 0");

  /* ---- setup 1: the adjacency matrix, in AIJ (its own options prefix keeps -mat_type off it) ---- */
  PetscCall(Now(comm, &t0));
  if (hasfile) PetscCall(MatXtractLoad(comm, file, "pagerank_adj_", &A));
  else if (hasgen) PetscCall(MatXtractGenerateSeeded(comm, spec, genseed, "pagerank_adj_", &A));
  else PetscCall(CreateEmbeddedGraph(comm, &A));
  {
    PetscBool isaij;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
    if (!isaij) PetscCall(MatConvert(A, MATAIJ, MAT_INPLACE_MATRIX, &A));
  }
  PetscCall(MatGetSize(A, &M, &N));
  PetscCheck(M == N, comm, PETSC_ERR_ARG_SIZ, "The adjacency matrix must be square; it is %" PetscInt_FMT " x %" PetscInt_FMT, M, N);
  PetscCheck(N > 0, comm, PETSC_ERR_ARG_SIZ, "The graph has no nodes");
  PetscCall(Now(comm, &t1));

  /* ---- setup 2: P = (D^-1 A)^T in AIJ, D = out-weights; dangling indicator d ---- */
  PetscCall(PrepareEdgeValues(A, weighted));
  if (transpose) {
    PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &At));
    PetscCall(MatDestroy(&A));
    A = At;
  }
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatCreateVecs(A, NULL, &r));
  PetscCall(MatGetRowSum(A, r));
  PetscCall(VecGetArray(r, &da));
  PetscCall(VecGetOwnershipRange(r, &lo, &hi));
  ndangling = 0;
  for (i = 0; i < hi - lo; i++) {
    if (PetscRealPart(da[i]) > 0.0) da[i] = 1.0 / da[i];
    else {
      da[i] = 0.0;
      ndangling++;
    }
  }
  PetscCall(VecRestoreArray(r, &da));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ndangling, 1, MPIU_INT, MPI_SUM, comm));
  PetscCall(MatDiagonalScale(A, r, NULL));
  PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &P));
  PetscCall(MatDestroy(&A));
  PetscCall(Now(comm, &t2));

  /* ---- setup 2b: the nodes renumbered (-pagerank_partition), P and r alike ---- */
  if (partition != PR_PART_NONE) {
    PetscCall(RenumberNodes(partition, &P, &r, &tonew, &vold));
    PetscCall(VecGetOwnershipRange(r, &lo, &hi));
  }
  PetscCall(Now(comm, &t2r));

  /* ---- setup 3: P in the requested type ---- */
  PetscCall(ConvertToRequestedType(&P, ptype, sizeof(ptype)));
  PetscCall(Now(comm, &t3c));
  PetscCall(MatGetType(P, &mtype));

  /* vectors of P's type (-vec_type cuda works); d in P's column layout, 1 on dangling nodes */
  PetscCall(SetVecTypeFromOptions(P));
  PetscCall(MatCreateVecs(P, &x, &y));
  PetscCall(VecDuplicate(x, &dang));
  PetscCall(VecDuplicate(x, &v));
  PetscCall(VecGetType(x, &vtype));
  PetscCall(VecGetArrayRead(r, &ra));
  PetscCall(VecGetArrayWrite(dang, &da));
  for (i = 0; i < hi - lo; i++) da[i] = PetscRealPart(ra[i]) > 0.0 ? 0.0 : 1.0;
  PetscCall(VecRestoreArrayWrite(dang, &da));
  PetscCall(VecRestoreArrayRead(r, &ra));
  PetscCall(VecDestroy(&r));
  if (tonew) { /* v given in the input's numbering, then renumbered */
    PetscCall(SetPersonalization(vold, pers));
    PetscCall(VecScatterBegin(tonew, vold, v, INSERT_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(tonew, vold, v, INSERT_VALUES, SCATTER_REVERSE));
  } else PetscCall(SetPersonalization(v, pers));

  /* ---- setup 4: the first MatMult pays for what a type builds or uploads lazily (aijcusparse: the copy to
   * the GPU); timing it apart keeps the per-iteration time a steady-state number ---- */
  PetscCall(Now(comm, &t3));
  PetscCall(MatMult(P, v, y));
  PetscCall(VecNorm(y, NORM_1, &diff)); /* waits for the device */
  PetscCall(Now(comm, &t6));

  if (hasfile) PetscCall(PetscPrintf(comm, "PageRank of %s%s\n", file, transpose ? " (rows are targets)" : ""));
  else if (hasgen) PetscCall(PetscPrintf(comm, "PageRank of -gen %s%s\n", spec, transpose ? " (rows are targets)" : ""));
  else PetscCall(PetscPrintf(comm, "PageRank of the embedded R-MAT graph (scale %d, edge factor %d, fixed seed)\n", PR_RMAT_SCALE, PR_RMAT_EDGEFACTOR));
  PetscCall(PetscPrintf(comm, "nodes: %" PetscInt_FMT "\n", N));
  PetscCall(PetscPrintf(comm, "edges: %.0f%s\n", (double)info.nz_used, weighted ? " (weighted)" : ""));
  PetscCall(PetscPrintf(comm, "dangling nodes: %" PetscInt_FMT "\n", ndangling));
  PetscCall(PetscPrintf(comm, "method: %s, alpha %g, tol %g, personalization %s\n", PRMethods[method], (double)alpha, (double)tol, pers));
  PetscCall(PetscPrintf(comm, "matrix type: %s\n", mtype));
  {
    PetscBool ours;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)P, &ours, MATSEQAIJMATXTRACT, MATMPIAIJMATXTRACT, ""));
    if (ours) { /* what the format looks like (rank 0's diagonal block under MPI) */
      MatXtractInfo xi;
      PetscCall(MatXtractGetInfo(P, &xi));
      PetscCall(PetscPrintf(comm, "matxtract: crux (%g, %g), hot nnz %" PetscInt_FMT " of %" PetscInt_FMT " (mode %s), format %.2f MB vs CSR %.2f MB, MatMult on the %s\n", (double)xi.tau_c, (double)xi.tau_r, xi.hot_nnz, xi.hot_nnz + xi.cold_nnz, xi.hot_mode,
                            xi.format_bytes / 1e6, xi.csr_bytes / 1e6, xi.on_device ? "GPU" : "CPU"));
    }
  }
  PetscCall(PetscPrintf(comm, "vector type: %s\n", vtype));
  PetscCall(PetscPrintf(comm, "processes: %d\n", (int)size));
  PetscCall(PrintGhosts(P));
  if (seeds > 0) { /* the K personalized vectors instead of the one */
    PetscCall(PetscPrintf(comm, "time: setup total: %.6f s\n", (t3c - t0) + (t6 - t3)));
    PetscCall(RunSeeds(P, dang, seeds, alpha, tol, max_it, vtype, seeds_compare, cmptol));
    PetscCall(DestroyRun(&x, &y, &dang, &v, &P));
    PetscCall(PetscFinalize());
    return 0;
  }

  /* ---- iterate ---- */
  PetscCall(Now(comm, &t4));
  if (method == PR_POWER) {
    PetscCall(VecCopy(v, x)); /* x0 = v */
    PetscCall(PowerIterate(P, dang, v, alpha, tol, max_it, x, y, &its, &converged));
  } else {
    Mat       G;
    PC        pc;
    GoogleCtx ctx;

    ctx.P     = P;
    ctx.dang  = dang;
    ctx.v     = v;
    ctx.alpha = alpha;
    PetscCall(VecDuplicate(x, &ctx.work));
    PetscCall(MatCreateShell(comm, hi - lo, hi - lo, N, N, &ctx, &G));
    PetscCall(MatShellSetOperation(G, MATOP_MULT, PR_OPFN(GoogleMult)));
    PetscCall(MatShellSetOperation(G, MATOP_GET_DIAGONAL, PR_OPFN(GoogleGetDiagonal)));
    PetscCall(MatShellSetVecType(G, vtype));
    PetscCall(KSPCreate(comm, &ksp));
    PetscCall(KSPSetOperators(ksp, G, G));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCNONE));
    PetscCall(KSPSetTolerances(ksp, tol, PETSC_DEFAULT, PETSC_DEFAULT, max_it));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(VecCopy(v, y));
    PetscCall(VecScale(y, 1.0 - alpha)); /* b */
    PetscCall(VecCopy(v, x));            /* initial guess */
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
    PetscCall(KSPSolve(ksp, y, x));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    converged = reason > 0 ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(VecSum(x, &sum));
    PetscCheck(PetscRealPart(sum) > 0.0, comm, PETSC_ERR_NOT_CONVERGED, "The KSP solution sums to %g; cannot normalise (reason %s)", (double)PetscRealPart(sum), KSPConvergedReasons[reason]);
    PetscCall(VecScale(x, 1.0 / sum));
    PetscCall(MatDestroy(&G));
    PetscCall(VecDestroy(&ctx.work));
  }
  PetscCall(Now(comm, &t5));

  /* residual of the final x, same definition for both methods: ||G x - x||_1, G x = one power step */
  PetscCall(GoogleStep(P, dang, v, alpha, x, y));
  PetscCall(VecAXPY(y, -1.0, x));
  PetscCall(VecNorm(y, NORM_1, &res));
  PetscCall(VecSum(x, &sum));

  PetscCall(PetscPrintf(comm, "iterations: %" PetscInt_FMT "\n", its));
  if (ksp) {
    KSPType   kt;
    PC        pc;
    PCType    pt;
    PetscCall(KSPGetType(ksp, &kt));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCGetType(pc, &pt));
    PetscCall(PetscPrintf(comm, "ksp: %s, pc: %s, converged reason: %s\n", kt, pt, KSPConvergedReasons[reason]));
  }
  PetscCall(PetscPrintf(comm, "converged: %s\n", converged ? "yes" : "no"));
  PetscCall(PetscPrintf(comm, "residual ||G x - x||_1: %.2e\n", (double)res));
  PetscCall(PetscPrintf(comm, "sum of x: %.10f\n", (double)PetscRealPart(sum)));
  PetscCall(PetscPrintf(comm, "time: setup, read/generate the graph: %.6f s\n", t1 - t0));
  PetscCall(PetscPrintf(comm, "time: setup, build P in AIJ: %.6f s\n", t2 - t1));
  if (partition != PR_PART_NONE) PetscCall(PetscPrintf(comm, "time: setup, renumber the nodes: %.6f s\n", t2r - t2));
  PetscCall(PetscPrintf(comm, "time: setup, convert P to %s: %.6f s\n", mtype, t3c - t2r));
  PetscCall(PetscPrintf(comm, "time: setup, first MatMult: %.6f s\n", t6 - t3));
  PetscCall(PetscPrintf(comm, "time: setup total: %.6f s\n", (t3c - t0) + (t6 - t3)));
  PetscCall(PetscPrintf(comm, "time: iterations: %.6f s\n", t5 - t4));
  PetscCall(PetscPrintf(comm, "time: per iteration: %.3e s\n", its > 0 ? (t5 - t4) / its : 0.0));
  PetscCall(PetscPrintf(comm, "time: total: %.6f s\n", (t3c - t0) + (t6 - t3) + (t5 - t4)));
  PetscCall(PrintMatXtractPlan(P, "iterations"));
  PetscCall(MatViewFromOptions(P, NULL, "-pagerank_view_mat"));
  xout = x;
  if (tonew) { /* x back to the input's numbering for the outputs */
    PetscCall(VecScatterBegin(tonew, x, vold, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(tonew, x, vold, INSERT_VALUES, SCATTER_FORWARD));
    xout = vold;
  }
  PetscCall(PrintTop(xout, top));

  if (save) {
    PetscViewer viewer;
    PetscCall(PetscViewerBinaryOpen(comm, savefile, FILE_MODE_WRITE, &viewer));
    PetscCall(VecView(xout, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
  }
  if (cmp) {
    PetscViewer viewer;
    PetscCall(VecDuplicate(xout, &ref));
    PetscCall(PetscViewerBinaryOpen(comm, cmpfile, FILE_MODE_READ, &viewer));
    PetscCall(VecLoad(ref, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
    PetscCall(VecAXPY(ref, -1.0, xout));
    PetscCall(VecNorm(ref, NORM_1, &diff));
    PetscCall(PetscPrintf(comm, "compare: ||x - x(%s)||_1 = %.3e (tol %.1e)\n", cmpfile, (double)diff, (double)cmptol));
    PetscCheck(diff <= cmptol, comm, PETSC_ERR_PLIB, "-pagerank_compare: ||x - x(%s)||_1 = %g exceeds %g", cmpfile, (double)diff, (double)cmptol);
    PetscCall(VecDestroy(&ref));
  }

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecScatterDestroy(&tonew));
  PetscCall(VecDestroy(&vold));
  PetscCall(DestroyRun(&x, &y, &dang, &v, &P));
  PetscCall(PetscFinalize());
  return 0;
}
