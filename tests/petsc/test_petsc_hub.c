/* test_petsc_hub - -mat_matxtract_hub K (the hub split for power-law graphs, issue 13) through the
 * PETSc type: for power-law graphs (kron, chunglu: as generated, all ones, column constants) and a
 * stencil, with K = 64 and 4096, every product form (MatMult, MatMultAdd with y == z too,
 * MatMultTranspose(Add)) is compared with AIJ (relative error <= 1e-12), MatXtractGetInfo and
 * -mat_view report the split, and after a value refresh (MatScale, then MatSetValues + assembly of new
 * values) the products are right and the split is made again; MatMatMult with 8 and 3 dense columns
 * under the split (and after the refresh) equals AIJ's (the checks run with
 * -mat_matxtract_expected_mults 1e9: the amortised split is made at the first MatMult; with 2 expected
 * MatMults it is never made). On the CPU (the default) the split is
 * not made (it runs on the GPU only): the products are the CPU kernels', info says requested, not in
 * use. A plan with a hot part (a fixed crux) is never split. -mat_matxtract_hub -1, above the
 * shared-memory limit or not a number are errors. The default, auto: a small Kronecker graph and a
 * stencil are never split; on one GPU rank kron:19:16 is (info, -mat_view, split again after
 * MatScale) and chunglu:1000000:16:2.1 is not (the rule's hub nonzeros per row); off never splits.
 * -gpu runs on the GPU (device vectors) and exits 77 without PETSc+CUDA or a usable GPU. Any number of ranks (each rank's diagonal and off-diagonal blocks).
 * Usage: [mpiexec -n N] test_petsc_hub [-gpu] */
#include <matxtract.h>
#include "../common/petsc_check.h"
#include "../common/petsc_gpu_probe.h"

static const char help[] = "MatXtract hub split (-mat_matxtract_hub) vs AIJ.\n";

static char      view_path[PETSC_MAX_PATH_LEN];
static PetscBool on_gpu = PETSC_FALSE;

/* B = A as matxtract with -mat_matxtract_hub K (and a fixed crux when tc > 0) */
static PetscErrorCode ToMatXtract(Mat A, PetscInt K, PetscReal tc, Mat *B)
{
  char k[32];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(k, sizeof k, "%" PetscInt_FMT, K));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_hub", k));
  if (tc > 0) PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_crux", "0.9,0.8"));
  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_hub"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_crux"));
  PetscFunctionReturn(0);
}

/* whether B's -mat_view ::ascii_info_detail (rank 0's block) contains text */
static PetscErrorCode ViewSays(Mat B, const char *text, PetscBool *says)
{
  PetscViewer viewer;
  FILE       *f;
  static char buf[1 << 20]; /* MPIAIJ's ::ascii_info_detail lists its scatter before our lines */
  size_t      n;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, view_path, &viewer));
  PetscCall(PetscViewerPushFormat(viewer, PETSC_VIEWER_ASCII_INFO_DETAIL));
  PetscCall(MatView(B, viewer));
  PetscCall(PetscViewerPopFormat(viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  f      = fopen(view_path, "r");
  n      = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  buf[n] = 0;
  if (f) fclose(f);
  *says = (PetscBool)(strstr(buf, text) != NULL);
  PetscFunctionReturn(0);
}

/* the split in use (GPU, all cold) or requested and not in use; every rank's diagonal block agrees */
static PetscErrorCode CheckSplit(Mat B, PetscInt K, PetscBool expect_split, const char *name)
{
  MatXtractInfo info;
  PetscBool     says;
  PetscMPIInt   mine, all;

  PetscFunctionBegin;
  PetscCall(MatXtractGetInfo(B, &info));
  mine = (PetscMPIInt)(info.hub_requested == K && (expect_split ? info.hub_columns > 0 && info.hub_columns <= K && info.hub_nnz > 0 : info.hub_columns == 0));
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  PetscCall(Expect((PetscBool)all, expect_split ? "info: the hub split is in use" : "info: requested, not in use", name));
  PetscCall(ViewSays(B, expect_split ? "MatXtract: hub split (-mat_matxtract_hub" : "but not in use", &says));
  PetscCall(Expect(says, "-mat_view reports the hub split", name));
  PetscFunctionReturn(0);
}

/* every stored value of A's local rows set through MatSetValues + assembly (same pattern):
 * kind 0 new values from the old (v / 2 + 1e-3 ((i + k) % 97), k counting the row's entries),
 * 1 all ones, 2 column constants 1 / (j + 2) (PageRank's shape) */
static PetscErrorCode SetRowValues(Mat A, int kind)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt           n;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           c[4096];
    PetscScalar        v[4096];
    PetscCall(MatGetRow(A, i, &n, &cols, &vals));
    PetscCheck(n <= 4096, PETSC_COMM_SELF, PETSC_ERR_SUP, "test row too long");
    for (PetscInt k = 0; k < n; k++) {
      c[k] = cols[k];
      v[k] = kind == 0 ? vals[k] * 0.5 + 1e-3 * (PetscScalar)((i + k) % 97) : kind == 1 ? 1.0 : 1.0 / (PetscScalar)(cols[k] + 2);
    }
    PetscCall(MatRestoreRow(A, i, &n, &cols, &vals));
    PetscCall(MatSetValues(A, 1, &i, n, c, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* MatMatMult of B by k random dense columns (MATDENSECUDA under -gpu), made and then reused, against
 * AIJ's: under a split that freed the plain arrays the SpMM brings them back and times the split's
 * way beside the whole matrix's ways. */
static PetscErrorCode CheckDense(Mat A, Mat B, PetscInt k, const char *name, unsigned long seed)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)A);
  Mat         Xh, X, R, C;
  PetscRandom rnd;
  PetscInt    n, nloc;
  char        what[64];

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, NULL, &n));
  PetscCall(MatGetLocalSize(A, NULL, &nloc));
  PetscCall(PetscRandomCreate(comm, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, seed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(MatCreateDense(comm, nloc, PETSC_DECIDE, n, k, NULL, &Xh));
  PetscCall(MatSetRandom(Xh, rnd));
  PetscCall(MatMatMult(A, Xh, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R));
  PetscCall(MatConvert(Xh, on_gpu ? MATDENSECUDA : MATDENSE, MAT_INITIAL_MATRIX, &X));
  PetscCall(MatMatMult(B, X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(MatMatMult(B, X, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(MatConvert(C, MATDENSE, MAT_INPLACE_MATRIX, &C));
  PetscCall(PetscSNPrintf(what, sizeof what, "MatMatMult, %" PetscInt_FMT " dense columns", k));
  PetscCall(CheckDenseClose(R, C, what, name));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Xh));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckMatrix(Mat A0, const char *name, unsigned long seed)
{
  static const PetscInt Ks[] = {64, 4096};

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Mat  A, B;
    char tag[256];
    PetscCall(PetscSNPrintf(tag, sizeof tag, "%s K=%" PetscInt_FMT, name, Ks[k]));
    PetscCall(MatDuplicate(A0, MAT_COPY_VALUES, &A));
    PetscCall(ToMatXtract(A, Ks[k], 0, &B));
    PetscCall(CheckProducts(A, B, tag, seed + (unsigned long)k));
    PetscCall(CheckSplit(B, Ks[k], on_gpu, tag));
    PetscCall(CheckDense(A, B, 8, tag, seed + 40 + (unsigned long)k));
    PetscCall(CheckDense(A, B, 3, tag, seed + 50 + (unsigned long)k));
    PetscCall(CheckSplit(B, Ks[k], on_gpu, tag));
    PetscCall(MatScale(A, -2.0));
    PetscCall(MatScale(B, -2.0));
    PetscCall(CheckProducts(A, B, tag, seed + 10 + (unsigned long)k));
    PetscCall(CheckSplit(B, Ks[k], on_gpu, tag));
    PetscCall(CheckDense(A, B, 8, tag, seed + 60 + (unsigned long)k));
    PetscCall(SetRowValues(A, 0));
    PetscCall(SetRowValues(B, 0));
    PetscCall(CheckProducts(A, B, tag, seed + 20 + (unsigned long)k));
    PetscCall(CheckSplit(B, Ks[k], on_gpu, tag));
    PetscCall(MatDestroy(&B));
    PetscCall(ToMatXtract(A, Ks[k], 0.9, &B)); /* a hot part: never split */
    PetscCall(CheckProducts(A, B, tag, seed + 30 + (unsigned long)k));
    PetscCall(CheckSplit(B, Ks[k], PETSC_FALSE, tag));
    PetscCall(MatDestroy(&B));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(0);
}

/* a short solve (-mat_matxtract_expected_mults 2): the split never pays, so it is never made */
static PetscErrorCode CheckShortSolve(Mat A, const char *name)
{
  Mat  B;
  char tag[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(tag, sizeof tag, "%s short solve", name));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_expected_mults", "2"));
  PetscCall(ToMatXtract(A, 4096, 0, &B));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_expected_mults", "1000000000"));
  PetscCall(CheckProducts(A, B, tag, 77));
  PetscCall(CheckSplit(B, 4096, PETSC_FALSE, tag));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* -mat_matxtract_hub auto (the default) on spec: products vs AIJ; the split in use exactly when
 * expect_split (the rule: merge kernel, >= 4M hub nonzeros, >= 16 per hub row); info reports auto */
static PetscErrorCode CheckAuto(const char *spec, PetscBool expect_split)
{
  Mat           A, B;
  MatXtractInfo info;
  PetscBool     says = PETSC_TRUE;
  char          tag[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(tag, sizeof tag, "%s hub auto", spec));
  PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, spec, "aij_", &A));
  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B));
  PetscCall(CheckProducts(A, B, tag, 500));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(Expect((PetscBool)(info.hub_requested == MATXTRACT_HUB_AUTO), "info: auto requested", tag));
  PetscCall(Expect((PetscBool)(expect_split ? info.hub_columns > 0 && info.hub_nnz >= 4000000 : info.hub_columns == 0), expect_split ? "info: the rule split it" : "info: the rule did not split it", tag));
  if (expect_split) PetscCall(ViewSays(B, "MatXtract: hub split (-mat_matxtract_hub auto)", &says));
  PetscCall(Expect(says, "-mat_view reports the automatic split", tag));
  PetscCall(MatScale(A, 0.5));
  PetscCall(MatScale(B, 0.5));
  PetscCall(CheckProducts(A, B, tag, 501));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(Expect((PetscBool)(expect_split ? info.hub_columns > 0 : info.hub_columns == 0), "a value refresh splits again", tag));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_hub", "off"));
  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_hub"));
  PetscCall(CheckProducts(A, B, tag, 502));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(Expect((PetscBool)(info.hub_requested == 0 && info.hub_columns == 0), "-mat_matxtract_hub off: no split", tag));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* -mat_matxtract_hub out of range or not a number: an error at the conversion, nothing leaked */
static PetscErrorCode CheckBadOption(Mat A, const char *value)
{
  Mat            B = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_hub", value));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_hub"));
  PetscCall(Expect((PetscBool)(ierr == PETSC_ERR_ARG_OUTOFRANGE), "-mat_matxtract_hub out of range is an error", value));
  PetscCall(MatDestroy(&B));
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
  PetscCall(PetscSNPrintf(view_path, sizeof view_path, "%s/test_petsc_hub_view_np%d%s.txt", MX_TEST_TMPDIR, (int)size, on_gpu ? "_gpu" : ""));
  /* the plan stays as asked: no predicted upgrade moves the crux under the checks; the split is made
   * at the first MatMult (a long solve) and kept (no guard timing tiny matrices); on several ranks
   * the blocks weigh their levers before every MatMult too, as one rank does (the default period
   * would hold the split back to MatMult 33) */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_predictor", "0"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_lever_period", "1"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_expected_mults", "1000000000"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_guard", "0"));
  if (on_gpu) {
    PetscBool usable;
    PetscCall(MatXtractTestGpuUsable(&usable));
    if (!usable) {
      PetscCall(PetscFinalize());
      return 77;
    }
    PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", "gpu"));
  } else PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", "cpu"));

  static const char *const specs[] = {"kron:10:16", "chunglu:3000:8:2.1", "lap2d:30"};
  for (int s = 0; s < 3; s++)
    for (int kind = 0; kind < 3; kind++) {
      Mat  A;
      char name[64];
      if (s == 2 && kind > 0) continue;
      PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, specs[s], "aij_", &A));
      if (kind > 0) PetscCall(SetRowValues(A, kind));
      PetscCall(PetscSNPrintf(name, sizeof name, "%s values %d", specs[s], kind));
      PetscCall(CheckMatrix(A, name, 100 * (unsigned long)s + 10 * (unsigned long)kind));
      if (s == 0 && kind == 0) {
        PetscCall(CheckShortSolve(A, name));
        PetscCall(CheckBadOption(A, "-1"));
        PetscCall(CheckBadOption(A, "28001"));
        PetscCall(CheckBadOption(A, "12x"));
        PetscCall(CheckBadOption(A, "always"));
      }
      PetscCall(MatDestroy(&A));
    }
  /* auto: small graphs and stencils are never split; on one GPU rank a Kronecker graph is (11.7M of its
   * nonzeros in hub columns, over 25 per hub row) and a Chung-Lu graph is not (8 per hub row) */
  PetscCall(CheckAuto("kron:12:16", PETSC_FALSE));
  PetscCall(CheckAuto("lap2d:30", PETSC_FALSE));
  if (on_gpu && size == 1) {
    PetscCall(CheckAuto("kron:19:16", PETSC_TRUE));
    PetscCall(CheckAuto("chunglu:1000000:16:2.1", PETSC_FALSE));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_predictor"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_expected_mults"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_guard"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_device"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", nchecks - nfail, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
