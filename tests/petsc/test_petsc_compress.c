/* test_petsc_compress - -mat_matxtract_compress on|auto|off (the packed cold region, issue 13) through
 * the PETSc type: for matrices whose values compress (2d/3d stencils: a few values; an unweighted
 * graph: all ones; a column-constant matrix a_ij = s_j as PageRank's transition matrix; unique random
 * values; a wide matrix whose columns do not pack either), every product form (MatMult, MatMultAdd
 * with y == z too, MatMultTranspose(Add)) is compared with AIJ (relative error <= 1e-12) under on
 * (packed at the build) and off, and the encodings MatXtractGetInfo and -mat_view report are checked;
 * auto leaves the CPU path plain, and on the GPU packs once the MatMults have paid for it. Then every value refresh
 * path: MatScale, MatShift, MatAXPY (same pattern), MatSetValues + assembly that make the values
 * unique (the dictionary no longer fits: plain values, -info says so, products still right), that
 * give a few hundred values (dict16), MatZeroEntries (dict0), MatCopy back (dict8 again), and a
 * settings change (rebuild). On the CPU by default; -gpu runs the same on the GPU (device vectors,
 * segment cold kernel, which reads the pack) and exits 77 without PETSc+CUDA or a usable GPU. On both
 * the stencils' cold region takes the row-pattern form instead of a pack (MatScale, MatShift, MatAXPY
 * keep it; unique values lose it to a pack, which later refreshes keep). Any
 * number of ranks (the diagonal block's encodings are checked on every rank).
 * Usage: [mpiexec -n N] test_petsc_compress [-gpu] */
#include <matxtract.h>
#include "../common/petsc_check.h"
#include "../common/petsc_gpu_probe.h"

static const char help[] = "MatXtract packed cold region (-mat_matxtract_compress) vs AIJ.\n";

static char      view_path[PETSC_MAX_PATH_LEN], info_path[PETSC_MAX_PATH_LEN];
static PetscBool on_gpu = PETSC_FALSE;
/* the request that packs where MatMult runs, at once: on (auto leaves the CPU path plain:
 * CheckCpuAutoPlain; on the GPU it packs only once the MatMults pay for it: CheckGpuAmortisedPack) */
static const char *pack_on = "on";

/* splitmix64 */
static uint64_t rng_next(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

/* Expect on every rank (each rank checks its own diagonal block). */
static PetscErrorCode ExpectAll(PetscBool ok, const char *what, const char *name)
{
  PetscMPIInt mine = ok ? 1 : 0, all;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  if (!ok) PetscCall(PetscPrintf(PETSC_COMM_SELF, "  (a rank's diagonal block differs on %s: %s)\n", name, what));
  PetscCall(Expect((PetscBool)all, what, name));
  PetscFunctionReturn(0);
}

/* Values of a random m x n AIJ matrix (rows split over the ranks, about `len` nonzeros per row,
 * columns uniform over [0, n)): kind 0 all ones, 1 column-constant s_j = 1/(j+2) (a PageRank
 * transition matrix's shape: a_ij depends on j only), 2 unique random values. */
static PetscErrorCode RandomAIJ(PetscInt m, PetscInt n, PetscInt len, int kind, uint64_t seed, Mat *A)
{
  PetscInt     rs, re, *cols;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, m, n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, len, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, len, NULL, len, NULL));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  PetscCall(PetscMalloc2(len, &cols, len, &vals));
  for (PetscInt i = rs; i < re; i++) {
    uint64_t s = seed + 7919 * (uint64_t)i; /* the same matrix on any number of ranks */
    for (PetscInt k = 0; k < len; k++) {
      cols[k] = (PetscInt)(rng_next(&s) % (uint64_t)n);
      vals[k] = kind == 0 ? 1.0 : kind == 1 ? 1.0 / (double)(cols[k] + 2) : 2.0 * rng_unit(&s) - 1.0;
    }
    PetscCall(MatSetValues(*A, 1, &i, len, cols, vals, INSERT_VALUES)); /* a repeated column keeps one value */
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* B = A converted to matxtract with -mat_matxtract_compress `compress` at crux (tc, tr). */
static PetscErrorCode ToMatXtract(Mat A, const char *compress, PetscReal tc, PetscReal tr, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_compress", compress));
  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, B)); /* the options database path */
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_compress"));
  if (tc > 0) PetscCall(MatXtractSetCrux(*B, tc, tr));
  PetscFunctionReturn(0);
}


/* B's -mat_view ::ascii_info_detail into buf (rank 0's diagonal block under MPI), through view_path */
static PetscErrorCode ViewInfo(Mat B, char *buf, size_t size)
{
  PetscViewer viewer;
  FILE       *f;
  size_t      n;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, view_path, &viewer));
  PetscCall(PetscViewerPushFormat(viewer, PETSC_VIEWER_ASCII_INFO_DETAIL));
  PetscCall(MatView(B, viewer));
  PetscCall(PetscViewerPopFormat(viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  /* only our lines: MPIAIJ's ::ascii_info_detail lists every ghost of its scatter before them */
  buf[0] = 0;
  n      = 0;
  f      = fopen(view_path, "r");
  if (f) {
    char   *line = NULL;
    size_t  cap  = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0)
      if (strstr(line, "MatXtract:") && n + (size_t)len < size) {
        memcpy(buf + n, line, (size_t)len + 1);
        n += (size_t)len;
      }
    free(line);
    fclose(f);
  }
  PetscFunctionReturn(0);
}

/* info's values are `values`: "patterns" = the row-pattern form, else that value encoding of a pack */
static PetscBool ValuesAre(const MatXtractInfo *info, const char *values)
{
  if (!strcmp(values, "patterns")) return (PetscBool)(info->compress_row_patterns > 0);
  return (PetscBool)(!strcmp(info->compress_values, values) && info->compress_row_patterns == 0);
}

/* The encodings B reports (values, columns; NULL: not checked; values "patterns": the row-pattern
 * form, columns then not checked), packed or not, and -mat_view's line. */
static PetscErrorCode CheckEncodings(Mat B, const char *values, const char *columns, PetscBool packed, const char *name)
{
  const PetscBool patterns = (PetscBool)(values && !strcmp(values, "patterns"));
  MatXtractInfo info;
  char          what[256];
  char          buf[8192] = "";

  PetscFunctionBegin;
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(PetscSNPrintf(what, sizeof what, "packed %d (%s: values %s, columns %s; expected %s, %s)", (int)packed, info.compress_note ? info.compress_note : "-", info.compress_values, info.compress_columns, values ? values : "any", columns ? columns : "any"));
  PetscCall(ExpectAll((PetscBool)(info.compress_packed == packed), what, name));
  if (values) PetscCall(ExpectAll(ValuesAre(&info, values), what, name));
  if (columns && !patterns) PetscCall(ExpectAll((PetscBool)!strcmp(info.compress_columns, columns), what, name));
  PetscCall(ExpectAll((PetscBool)(info.on_device == on_gpu), "MatMult runs where asked (CPU, or the GPU under -gpu)", name));
  if (packed) {
    PetscCall(ExpectAll((PetscBool)(info.compress_in_use && info.compress_note == NULL), "the pack is read by MatMult", name));
    PetscCall(ExpectAll((PetscBool)(info.packed_bytes_per_nnz < info.plain_bytes_per_nnz && info.plain_bytes_per_nnz >= 12.0), "fewer bytes per nonzero than plain", name));
  } else PetscCall(ExpectAll((PetscBool)(info.compress_note != NULL && info.packed_bytes_per_nnz == info.plain_bytes_per_nnz), "not packed: a note says why, plain bytes", name));
  /* -mat_view ::ascii_info_detail (rank 0's diagonal block under MPI) */
  {
    char want[128];
    PetscCall(ViewInfo(B, buf, sizeof buf));
    if (patterns) PetscCall(PetscSNPrintf(want, sizeof want, "cold region in row-pattern form (-mat_matxtract_compress %s): %" PetscInt_FMT " row patterns", pack_on, info.compress_row_patterns));
    else if (packed && values) PetscCall(PetscSNPrintf(want, sizeof want, "cold region packed (-mat_matxtract_compress %s): values %s", pack_on, values));
    else if (packed) PetscCall(PetscSNPrintf(want, sizeof want, "cold region packed"));
    else PetscCall(PetscSNPrintf(want, sizeof want, "MatXtract: cold region %s", info.compress_note));
    PetscCall(Expect((PetscBool)(strstr(buf, want) != NULL && strstr(buf, "bytes per nonzero") != NULL), "-mat_view ::ascii_info_detail shows the encodings and bytes per nonzero", name));
    if (!(strstr(buf, want) != NULL)) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  wanted \"%s\" in:\n%s\n", want, buf));
    if (packed && !patterns) { /* the row pointers' encoding too: plain under auto (16-bit offsets are forced only) */
      PetscCall(PetscSNPrintf(want, sizeof want, ", row pointers %s:", info.compress_rows));
      PetscCall(Expect((PetscBool)(!strcmp(info.compress_rows, "plain") && strstr(buf, want) != NULL), "-mat_view shows the row pointers' encoding", name));
    }
  }
  PetscFunctionReturn(0);
}

/* Whether -info printed `text` since the last call (each rank reads its own -info file: PETSc
 * appends ".<rank>" to the name). */
static PetscErrorCode InfoSaid(const char *text, PetscBool *said)
{
  static long done = 0;
  char        path[PETSC_MAX_PATH_LEN + 16], *name;
  PetscMPIInt rank;
  FILE       *f;

  PetscFunctionBegin;
  *said = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscInfoGetFile(&name, &f));
  if (f) fflush(f);
  PetscCall(PetscSNPrintf(path, sizeof path, "%s.%d", info_path, (int)rank));
  f = fopen(path, "r");
  if (f) {
    char line[1024];
    long at = 0;
    while (fgets(line, sizeof line, f)) {
      if (at++ >= done && strstr(line, text)) *said = PETSC_TRUE;
    }
    done = at;
    fclose(f);
  }
  PetscFunctionReturn(0);
}

/* Set every stored value of A's local rows through MatSetValues + assembly: value(i, j) = f(k)
 * with k counting the row's entries; kind 0: unique (a_ij + 1e-3 (1 + (i + k) % 100000) / 1e5),
 * kind 1: 300 distinct values ((i + k) % 300 - 150) / 7. Same pattern. */
static PetscErrorCode SetValues(Mat A, int kind)
{
  PetscInt     rs, re, nnz = 0, *ptr, *cc;
  PetscScalar *vv;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(PetscMalloc1(re - rs + 1, &ptr));
  ptr[0] = 0;
  for (PetscInt i = rs; i < re; i++) { /* every row read before any is set (MatGetRow needs an assembled matrix) */
    PetscInt nc;
    PetscCall(MatGetRow(A, i, &nc, NULL, NULL));
    ptr[i - rs + 1] = ptr[i - rs] + nc;
    PetscCall(MatRestoreRow(A, i, &nc, NULL, NULL));
  }
  nnz = ptr[re - rs];
  PetscCall(PetscMalloc2(nnz, &cc, nnz, &vv));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt           nc;
    const PetscInt    *c;
    const PetscScalar *v;
    PetscCall(MatGetRow(A, i, &nc, &c, &v));
    for (PetscInt k = 0; k < nc; k++) {
      cc[ptr[i - rs] + k] = c[k];
      vv[ptr[i - rs] + k] = kind == 0 ? v[k] + 1e-3 * (double)(1 + (i * 7 + k) % 100000) / 1e5 : (double)((i + k) % 300 - 150) / 7.0;
    }
    PetscCall(MatRestoreRow(A, i, &nc, &c, &v));
  }
  for (PetscInt i = rs; i < re; i++) PetscCall(MatSetValues(A, 1, &i, ptr[i - rs + 1] - ptr[i - rs], cc + ptr[i - rs], vv + ptr[i - rs], INSERT_VALUES));
  PetscCall(PetscFree2(cc, vv));
  PetscCall(PetscFree(ptr));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* The same change to A (AIJ) and B (matxtract, same values as A) through SetValues. */
static PetscErrorCode SetValuesBoth(Mat A, Mat B, int kind)
{
  PetscFunctionBegin;
  PetscCall(SetValues(A, kind));
  PetscCall(SetValues(B, kind));
  PetscFunctionReturn(0);
}

/* Every value refresh path on a stencil A0 (values -1 and 2d: dict8 at crux (0,0)) under `compress`
 * at crux (tc, tr); encodings checked at crux (0,0) (the whole matrix is cold). */
static PetscErrorCode CheckRefreshPaths(Mat A0, const char *spec, const char *compress, PetscReal tc, PetscReal tr, uint64_t seed)
{
  const PetscBool auto_ = (PetscBool)!!strcmp(compress, "off"), cold = (PetscBool)(tc == 0), chk = (PetscBool)(auto_ && cold);
  Mat             A, B, E;
  PetscBool       said;
  char            name[256];
  MatXtractInfo   info;
  PetscInt        builds;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof name, "%s compress %s crux (%g,%g) refresh", spec, compress, (double)tc, (double)tr));
  PetscCall(MatDuplicate(A0, MAT_COPY_VALUES, &A));
  PetscCall(ToMatXtract(A, compress, tc, tr, &B));
  PetscCall(CheckProducts(A, B, name, seed));
  PetscCall(MatXtractGetInfo(B, &info));
  builds = info.builds;
  if (chk) PetscCall(CheckEncodings(B, "patterns", NULL, PETSC_TRUE, name));
  if (!auto_) PetscCall(CheckEncodings(B, "plain", "plain", PETSC_FALSE, name));

  PetscCall(MatScale(A, -2.5));
  PetscCall(MatScale(B, -2.5));
  PetscCall(CheckProducts(A, B, "after MatScale", seed + 1));
  if (chk) PetscCall(CheckEncodings(B, "patterns", NULL, PETSC_TRUE, "after MatScale"));
  PetscCall(MatShift(A, 3.0));
  PetscCall(MatShift(B, 3.0));
  PetscCall(CheckProducts(A, B, "after MatShift", seed + 2));
  if (chk) PetscCall(CheckEncodings(B, "patterns", NULL, PETSC_TRUE, "after MatShift"));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &E));
  PetscCall(MatScale(E, 0.5));
  PetscCall(MatAXPY(A, 1.0, E, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(B, 1.0, E, SAME_NONZERO_PATTERN));
  PetscCall(MatDestroy(&E));
  PetscCall(CheckProducts(A, B, "after MatAXPY", seed + 3));
  if (chk) PetscCall(CheckEncodings(B, "patterns", NULL, PETSC_TRUE, "after MatAXPY"));

  /* unique values: the dictionary no longer fits (dict16 would take more bytes than plain) */
  PetscCall(InfoSaid("", &said));
  PetscCall(SetValuesBoth(A, B, 0));
  PetscCall(CheckProducts(A, B, "after MatSetValues (unique values)", seed + 4));
  PetscCall(MatXtractGetInfo(B, &info));
  /* the row patterns no longer hold them: a pack (plain values) takes over; at a crux with a hot part
   * the cold region may have been a pack already (its values fall back) */
  if (auto_) PetscCall(ExpectAll((PetscBool)((info.compress_fell_back || info.compress_patterns_lost) && !strcmp(info.compress_values, "plain")), "unique values fell back to plain values", name));
  else PetscCall(ExpectAll((PetscBool)(!info.compress_fell_back && !info.compress_packed), "compression off: nothing packed, nothing fell back", name));
  if (chk) PetscCall(CheckEncodings(B, "plain", NULL, PETSC_TRUE, "after MatSetValues (unique values)")); /* the columns stay packed */
#if defined(PETSC_USE_INFO)
  PetscCall(InfoSaid("no longer fit the row patterns: packed", &said));
  if (chk) PetscCall(ExpectAll(said, "-info says the values fell back to plain", name));
  if (!auto_) PetscCall(ExpectAll((PetscBool)!said, "-info says nothing of packing under compress off", name));
#endif
  /* 300 distinct values: dict16 */
  PetscCall(SetValuesBoth(A, B, 1));
  PetscCall(CheckProducts(A, B, "after MatSetValues (300 values)", seed + 5));
  PetscCall(MatXtractGetInfo(B, &info));
  if (auto_) PetscCall(ExpectAll((PetscBool)(!info.compress_fell_back && !info.compress_patterns_lost), "plain -> dict16 is no fall back", name));
  if (chk) PetscCall(CheckEncodings(B, "dict16", NULL, PETSC_TRUE, "after MatSetValues (300 values)"));
  /* all zero: one value */
  PetscCall(MatZeroEntries(A));
  PetscCall(MatZeroEntries(B));
  PetscCall(CheckProducts(A, B, "after MatZeroEntries", seed + 6));
  if (chk) PetscCall(CheckEncodings(B, "dict0", NULL, PETSC_TRUE, "after MatZeroEntries"));
  /* and back: the stencil's values again (a pack stays a pack until the next compression: dict8) */
  PetscCall(MatCopy(A0, A, SAME_NONZERO_PATTERN));
  PetscCall(MatCopy(A0, B, SAME_NONZERO_PATTERN));
  PetscCall(CheckProducts(A, B, "after MatCopy back", seed + 7));
  if (chk) PetscCall(CheckEncodings(B, "dict8", NULL, PETSC_TRUE, "after MatCopy back"));
  if (!auto_) PetscCall(CheckEncodings(B, "plain", "plain", PETSC_FALSE, name));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(info.builds == builds), "value changes refresh, never rebuild", name));

  /* a duplicate keeps the setting */
  {
    Mat C;
    PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &C));
    PetscCall(CheckProducts(A, C, "MatDuplicate", seed + 8));
    if (chk) PetscCall(CheckEncodings(C, "patterns", NULL, PETSC_TRUE, "MatDuplicate"));
    if (!auto_) PetscCall(CheckEncodings(C, "plain", "plain", PETSC_FALSE, "MatDuplicate"));
    PetscCall(MatDestroy(&C));
  }
  /* the other setting through MatSetFromOptions: a rebuild, then products and encodings follow */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_compress", auto_ ? "off" : pack_on));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_compress"));
  PetscCall(CheckProducts(A, B, "after -mat_matxtract_compress changed", seed + 9));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(info.builds > builds && !strcmp(info.compress, auto_ ? "off" : pack_on)), "a compress change rebuilds", name));
  if (cold) PetscCall(CheckEncodings(B, auto_ ? "plain" : "patterns", auto_ ? "plain" : NULL, (PetscBool)!auto_, "after -mat_matxtract_compress changed"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* On the CPU, auto packs nothing (the C kernel decodes slower than plain) and says so; products as AIJ. */
static PetscErrorCode CheckCpuAutoPlain(Mat A, const char *name, uint64_t seed)
{
  Mat           B;
  MatXtractInfo info;

  PetscFunctionBegin;
  PetscCall(ToMatXtract(A, "auto", 0, 0, &B));
  PetscCall(CheckProducts(A, B, "CPU auto", seed));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(!info.compress_packed && info.compress_note && strstr(info.compress_note, "not packed on the CPU")), "auto leaves the CPU path plain and says why", name));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* On the GPU, auto packs once the MatMult time spent pays for the packing at its assumed gain: not packed
 * after the first product (a note says it waits), packed after enough MatMults (the guard is off in
 * this test: the pack is kept), and the products before and after are bitwise the same. */
static PetscErrorCode CheckGpuAmortisedPack(Mat A, const char *name, const char *values, uint64_t seed)
{
  Mat           B;
  Vec           x, y0, y;
  PetscRandom   rnd;
  MatXtractInfo info;
  PetscMPIInt   packed = 0, all = 0;
  PetscInt      k;
  PetscBool     same;
  char          what[256];

  PetscFunctionBegin;
  PetscCall(ToMatXtract(A, "auto", 0, 0, &B));
  PetscCall(MatCreateVecs(B, &x, &y0));
  PetscCall(VecDuplicate(y0, &y));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, (unsigned long)seed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatMult(B, x, y0));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(!info.compress_packed && info.compress_note && strstr(info.compress_note, "not packed yet")), "auto on the GPU: not packed at setup, a note says it waits", name));
  for (k = 0; k < 20000 && !all; k++) {
    PetscCall(MatMult(B, x, y));
    PetscCall(MatXtractGetInfo(B, &info));
    packed = info.compress_packed ? 1 : 0;
    PetscCallMPI(MPI_Allreduce(&packed, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  }
  PetscCall(PetscSNPrintf(what, sizeof what, "auto on the GPU: packed after %" PetscInt_FMT " MatMults, values %s (expected %s)", k, info.compress_values, values));
  PetscCall(ExpectAll((PetscBool)(all && ValuesAre(&info, values) && info.compress_in_use), what, name));
  PetscCall(VecEqual(y0, y, &same));
  PetscCall(Expect(same, "auto on the GPU: products bitwise the same before and after the pack", name));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y0));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* On the GPU, with -mat_matxtract_expected_mults N auto decides at the first MatMult: 3 MatMults cannot
 * pay for packing (never packed, the note says why), a million can (packed before the second). */
static PetscErrorCode CheckGpuExpectedMultsPack(Mat A, const char *name)
{
  static const char *const n[]      = {"3", "1000000"};
  static const PetscBool   packed[] = {PETSC_FALSE, PETSC_TRUE};

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Mat           B;
    Vec           x, y;
    MatXtractInfo info;
    char          what[256];

    PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_expected_mults", n[k]));
    PetscCall(ToMatXtract(A, "auto", 0, 0, &B));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_expected_mults"));
    PetscCall(MatCreateVecs(B, &x, &y));
    PetscCall(VecSet(x, 1.0));
    for (int i = 0; i < 3; i++) PetscCall(MatMult(B, x, y));
    PetscCall(MatXtractGetInfo(B, &info));
    PetscCall(PetscSNPrintf(what, sizeof what, "expected_mults %s: packed %d (note: %s)", n[k], (int)info.compress_packed, info.compress_note ? info.compress_note : "-"));
    PetscCall(ExpectAll((PetscBool)(info.compress_packed == packed[k]), what, name));
    if (!packed[k]) PetscCall(ExpectAll((PetscBool)(info.compress_note && strstr(info.compress_note, "expected MatMults")), what, name));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(0);
}

/* A's first local row (each rank's) replaced by a long one: LONG_ROW columns spread over all of A's,
 * value 1/(j+2) (column-constant, as RandomAIJ's kind 1), more than half of them in the rank's
 * diagonal block on 1 or 2 ranks: longer than the row-length rule's 4 segments (32768), so the rule
 * picks the merge kernel for every block. */
#define LONG_ROW 80000
static PetscErrorCode AddLongRow(Mat A)
{
  PetscInt     rs, re, n, *cols;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, NULL, &n));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(PetscMalloc2(LONG_ROW, &cols, LONG_ROW, &vals));
  for (PetscInt k = 0; k < LONG_ROW; k++) {
    cols[k] = (PetscInt)(((int64_t)k * n) / LONG_ROW);
    vals[k] = 1.0 / (double)(cols[k] + 2);
  }
  PetscCall(MatSetValues(A, 1, &rs, LONG_ROW, cols, vals, INSERT_VALUES));
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* On the GPU with the cold kernel left free and the guard on (a million expected MatMults: the pack
 * lever at the first), A on the merge kernel (AddLongRow): the pack lever times the pack on the merge
 * and the segment kernel (-info says both times) and keeps the faster, or, where the guard times
 * that slower than the plain plan, is undone with the merge kernel again. Products vs AIJ either
 * way; the segment kernel, once kept, is told as chosen by the guard. */
static PetscErrorCode CheckGpuPackPicksKernel(Mat A, const char *name, uint64_t seed)
{
  Mat           B;
  Vec           x, y;
  MatXtractInfo info;
  char          plain_kernel[32], what[256];
  PetscBool     said, other;

  PetscFunctionBegin;
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_cold"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_guard", "1"));
  PetscCall(ToMatXtract(A, "off", 0, 0, &B)); /* the kernel the row-length rule picks */
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(B, x, y));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(PetscStrncpy(plain_kernel, info.cold_kernel, sizeof plain_kernel));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscCall(InfoSaid("", &said)); /* -info read up to here */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_expected_mults", "1000000"));
  PetscCall(ToMatXtract(A, "auto", 0, 0, &B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_expected_mults"));
  PetscCall(CheckProducts(A, B, name, seed));
  PetscCall(MatXtractGetInfo(B, &info));
  said = PETSC_TRUE;
#if defined(PETSC_USE_INFO)
  PetscCall(InfoSaid("the pack read by the", &said));
#endif
  PetscCall(PetscSNPrintf(what, sizeof what, "the pack timed on both kernels (the rule's: %s; now %s, packed %d)", plain_kernel, info.cold_kernel, (int)info.compress_packed));
  PetscCall(ExpectAll((PetscBool)!strcmp(plain_kernel, "merge"), "the row-length rule picks merge (a row longer than 32768)", name));
  PetscCall(ExpectAll((PetscBool)(said && (!strcmp(info.cold_kernel, "segment") || !strcmp(info.cold_kernel, "merge"))), what, name));
  other = (PetscBool)!!strcmp(info.cold_kernel, plain_kernel);
  if (!info.compress_packed) PetscCall(ExpectAll((PetscBool)!other, "the pack undone: the kernel before it again", name));
  else if (other) PetscCall(ExpectAll((PetscBool)(info.cold_source == MATXTRACT_CRUX_GUARD), "the pack's kernel told as the guard's", name));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_guard", "0"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_cold", "segment"));
  PetscFunctionReturn(0);
}

/* Products under auto and off, and the encodings auto chose (values, columns; NULL: not checked;
 * packed 0: plain is smallest). */
/* The whole matrix hot in SE mode (crux (1,1), -mat_matxtract_mode se) packs its SE values as
 * `values` ("dict0", "colconst") under compress on (on the GPU, or on the host for the CPU MatMult)
 * and keeps them plain under off; products vs AIJ, MatXtractInfo and -mat_view's line. */
static PetscErrorCode CheckHotValues(Mat A, const char *name, const char *values, uint64_t seed)
{
  const char *compress[] = {pack_on, "off"};

  PetscFunctionBegin;
  for (int c = 0; c < 2; c++) {
    Mat           B;
    MatXtractInfo info;
    char          label[256], want[128];
    char          buf[8192] = "";
    const char   *expect = c == 0 ? values : "plain";
    PetscCall(PetscSNPrintf(label, sizeof label, "%s SE crux (1,1) compress %s", name, compress[c]));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_mode", "se"));
    PetscCall(ToMatXtract(A, compress[c], 1, 1, &B));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_mode"));
    PetscCall(CheckProducts(A, B, label, seed + c));
    PetscCall(MatXtractGetInfo(B, &info));
    PetscCall(PetscSNPrintf(want, sizeof want, "SE hot values %s (expected %s), %g bytes per slot", info.compress_hot_values, expect, info.hot_bytes_per_slot));
    PetscCall(ExpectAll((PetscBool)(!strcmp(info.compress_hot_values, expect) && info.hot_bytes_per_slot > 0 && (c == 1) == (info.hot_bytes_per_slot == 12.0)), want, label));
    PetscCall(ViewInfo(B, buf, sizeof buf));
    PetscCall(PetscSNPrintf(want, sizeof want, "SE hot region values %s:", expect));
    PetscCall(Expect((PetscBool)(strstr(buf, want) != NULL), "-mat_view shows the SE hot values' encoding", label));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckMatrix(Mat A, const char *name, const char *values, const char *columns, PetscBool packed, uint64_t seed)
{
  static const PetscReal cruxes[][2] = {{0, 0}, {0.7, 0.5}};
  const char            *compress[]  = {pack_on, "off"};

  PetscFunctionBegin;
  for (int q = 0; q < 2; q++)
    for (int c = 0; c < 2; c++) {
      Mat  B;
      char label[256];
      PetscCall(PetscSNPrintf(label, sizeof label, "%s compress %s crux (%g,%g)", name, compress[c], (double)cruxes[q][0], (double)cruxes[q][1]));
      PetscCall(ToMatXtract(A, compress[c], cruxes[q][0], cruxes[q][1], &B));
      PetscCall(CheckProducts(A, B, label, seed + 10 * q + c));
      if (q == 0 && c == 0) PetscCall(CheckEncodings(B, values, columns, packed, label));
      if (c == 1) PetscCall(CheckEncodings(B, "plain", "plain", PETSC_FALSE, label));
      PetscCall(MatDestroy(&B));
    }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-gpu", &on_gpu, NULL));
  PetscCall(PetscSNPrintf(view_path, sizeof view_path, "%s/test_petsc_compress_view_np%d%s.txt", MX_TEST_TMPDIR, (int)size, on_gpu ? "_gpu" : ""));
  PetscCall(PetscSNPrintf(info_path, sizeof info_path, "%s/test_petsc_compress_info_np%d%s.txt", MX_TEST_TMPDIR, (int)size, on_gpu ? "_gpu" : ""));
  /* the plan stays as asked (no predicted upgrade moves the crux under the checks) */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_predictor", "0"));
  /* and the pack stays as chosen by bytes: the pack guard (timing) would make tiny matrices flaky */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_guard", "0"));
  if (on_gpu) {
    PetscBool usable;
    /* the segment cold kernel is the one that reads the pack */
    PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_cold", "segment"));
    PetscCall(MatXtractTestGpuUsable(&usable));
    if (!usable) {
      PetscCall(PetscFinalize());
      return 77;
    }
    PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", "gpu"));
  } else PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", "cpu"));
#if defined(PETSC_USE_INFO)
  PetscCall(PetscInfoSetFile(info_path, "w"));
  PetscCall(PetscInfoAllow(PETSC_TRUE));
#endif

  { /* stencils: 2d (-1, 4) and 3d (-1, 6): dict8; columns within 8 bits in 2d, 16 bits in 3d */
    static const char *const specs[] = {"lap2d:40", "lap3d:12"};
    static const char *const cols[]  = {"delta8", "delta16"};
    /* the GPU's amortised pack weighs its gain against the part of a product above the engine's
     * floor (MATXTRACT_GPU_PRODUCT_FLOOR_S): a block whose product takes no longer than the floor
     * rightly never packs, as lap2d:40's halves on 2 ranks of one GPU did; these have 1.2M and 1.8M
     * nonzeros per rank on 2 ranks, products well above it */
    static const char *const gpu_specs[] = {"lap2d:700", "lap3d:80"};
    for (int s = 0; s < 2; s++) {
      Mat A;
      PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, specs[s], "aij_", &A));
      PetscCall(CheckMatrix(A, specs[s], "patterns", cols[s], PETSC_TRUE, 100 * (uint64_t)s));
      PetscCall(CheckRefreshPaths(A, specs[s], pack_on, 0, 0, 1000 + 100 * (uint64_t)s));
      PetscCall(CheckRefreshPaths(A, specs[s], pack_on, 0.7, 0.5, 2000 + 100 * (uint64_t)s));
      if (!on_gpu) PetscCall(CheckCpuAutoPlain(A, specs[s], 5000 + 100 * (uint64_t)s));
      else {
        Mat G;
        PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, gpu_specs[s], "aij_", &G));
        PetscCall(CheckGpuAmortisedPack(G, gpu_specs[s], "patterns", 8000 + 100 * (uint64_t)s));
        PetscCall(CheckGpuExpectedMultsPack(G, gpu_specs[s]));
        PetscCall(MatDestroy(&G));
      }
      PetscCall(CheckRefreshPaths(A, specs[s], "off", 0, 0, 3000 + 100 * (uint64_t)s));
      PetscCall(MatDestroy(&A));
    }
  }
  {
    Mat A;
    /* an unweighted graph: one value */
    PetscCall(RandomAIJ(2000, 2000, 10, 0, 11, &A));
    PetscCall(CheckMatrix(A, "ones 2000 x 2000", "dict0", "delta16", PETSC_TRUE, 4000));
    PetscCall(CheckHotValues(A, "ones 2000 x 2000", "dict0", 4500));
    PetscCall(MatDestroy(&A));
    /* column-constant (PageRank's transition matrix: a_ij = s_j): one value per column, more than a
     * dictionary holds (> 65536 in each diagonal block on 1 or 2 ranks: colconst is then the only
     * value encoding that fits, also under a rule that prefers any dictionary that pays) */
    PetscCall(RandomAIJ(140000, 140000, 8, 1, 12, &A));
    PetscCall(CheckMatrix(A, "column-constant 140000 x 140000", "colconst", NULL, PETSC_TRUE, 5000));
    PetscCall(CheckHotValues(A, "column-constant 140000 x 140000", "colconst", 5500));
    if (on_gpu) {
      PetscCall(AddLongRow(A));
      PetscCall(CheckGpuPackPicksKernel(A, "column-constant 140000 x 140000, a row of 80000", 5600));
    }
    PetscCall(MatDestroy(&A));
    /* unique values: plain values, packed columns */
    PetscCall(RandomAIJ(1500, 1500, 8, 2, 13, &A));
    PetscCall(CheckMatrix(A, "unique 1500 x 1500", "plain", "delta16", PETSC_TRUE, 6000));
    PetscCall(MatDestroy(&A));
    /* unique values, columns spread over 200000: nothing packs */
    PetscCall(RandomAIJ(100, 200000, 20, 2, 14, &A));
    PetscCall(CheckMatrix(A, "unique 100 x 200000", "plain", "plain", PETSC_FALSE, 7000));
    PetscCall(MatDestroy(&A));
  }
#if defined(PETSC_USE_INFO)
  PetscCall(PetscInfoAllow(PETSC_FALSE)); /* PetscFinalize closes the file */
#endif
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_predictor"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_device"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_cold"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", nchecks - nfail, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
