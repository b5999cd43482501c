/* test_petsc_dense_product - MatProduct of a matxtract matrix with a dense B (issue 43) against AIJ's:
 *   - A B (MatMatMult) and A' B (MatTransposeMatMult) for k = 1, 2, 3, 8, 9, 17, 64, 256 columns, on a
 *     stencil, a power-law graph and a random matrix, at crux (0,0) and at cruxes with a hot part;
 *   - B and C with a leading dimension above their rows (MatDenseSetLDA; each rank's differs), C created by the product
 *     or given (MatProductCreateWithMat), C reused after A's values changed (MAT_REUSE_MATRIX);
 *   - MatPtAP with a dense A and P ours (PETSc composes it of A P and P' (A P), calling the parts'
 *     numeric ops directly);
 *   - MatPtAP with a dense A and P ours (PETSc composes it of A P and P' (A P) and calls the parts'
 *     numeric ops directly);
 *   - every product within 1e-12 of AIJ's; on one rank on the CPU path each column of C bit for bit
 *     MatMult (MatMultTranspose) of A on that column of B, and the type's own SpMM ran (the
 *     MatXtractMultDense event); on the GPU path the device SpMM ran (the same event; its kernels or
 *     one SpMV per column by its plan, checked against AIJ).
 * -gpu: on the GPU with seqdensecuda B and C (77 without PETSc+CUDA or a usable GPU). Runs on any
 * number of ranks (on several, the type's MPI product: the blocks' SpMM and one ghost exchange of all columns,
 * checked against AIJ). */
#include <string.h>
#include <matxtract.h>
#include "../common/petsc_check.h"
#include "../common/petsc_gpu_probe.h"

static const char help[] = "matxtract x dense products vs AIJ.\n";

static MatType   g_dense  = MATDENSE; /* MATDENSECUDA under -gpu */
static PetscBool g_on_gpu = PETSC_FALSE;

/* A dense rows x k matrix of type g_dense with leading dimension local rows + pad + rank (pad > 0:
 * every rank's differs), random entries. */
static PetscErrorCode RandomDense(MPI_Comm comm, PetscInt rows, PetscInt k, PetscInt pad, PetscRandom rnd, Mat *B)
{
  PetscMPIInt rank;
  PetscInt    local = PETSC_DECIDE;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSplitOwnership(comm, &local, &rows)); /* the default layout, as A's */
  PetscCall(MatCreate(comm, B));
  PetscCall(MatSetSizes(*B, local, PETSC_DECIDE, rows, k));
  PetscCall(MatSetType(*B, g_dense));
  if (pad > 0) PetscCall(MatDenseSetLDA(*B, local + pad + rank));
  PetscCall(MatSetUp(*B));
  PetscCall(MatSetRandom(*B, rnd));
  PetscFunctionReturn(0);
}

/* *C = A B (AB) or A' B (AtB) into a C given to MatProductCreateWithMat: rows x k, leading
 * dimension local rows + pad + rank, random entries before the product. */
static PetscErrorCode ProductIntoGiven(Mat A, Mat B, MatProductType type, PetscInt rows, PetscInt pad, PetscRandom rnd, Mat *C)
{
  PetscInt k;

  PetscFunctionBegin;
  PetscCall(MatGetSize(B, NULL, &k));
  PetscCall(RandomDense(PetscObjectComm((PetscObject)A), rows, k, pad, rnd, C));
  PetscCall(MatProductCreateWithMat(A, B, NULL, *C));
  PetscCall(MatProductSetType(*C, type));
  PetscCall(MatProductSetFromOptions(*C));
  PetscCall(MatProductSymbolic(*C));
  PetscCall(MatProductNumeric(*C));
  PetscFunctionReturn(0);
}

/* Each column of C bit for bit op(A) times that column of B (one rank). */
static PetscErrorCode CheckColumnsBitwise(Mat A, PetscBool transpose, Mat B, Mat C, const char *what, const char *name)
{
  PetscInt  k;
  PetscBool same = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCall(MatGetSize(B, NULL, &k));
  for (PetscInt c = 0; c < k; c++) {
    Vec                b, cc, y;
    const PetscScalar *ya, *ca;
    PetscInt           n;
    PetscCall(MatDenseGetColumnVecRead(B, c, &b));
    PetscCall(MatDenseGetColumnVecRead(C, c, &cc));
    PetscCall(VecDuplicate(cc, &y));
    if (transpose) PetscCall(MatMultTranspose(A, b, y));
    else PetscCall(MatMult(A, b, y));
    PetscCall(VecGetLocalSize(y, &n));
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArrayRead(cc, &ca));
    if (n && memcmp(ya, ca, sizeof(PetscScalar) * (size_t)n) != 0) same = PETSC_FALSE;
    PetscCall(VecRestoreArrayRead(cc, &ca));
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDenseRestoreColumnVecRead(C, c, &cc));
    PetscCall(MatDenseRestoreColumnVecRead(B, c, &b));
  }
  PetscCall(Expect(same, what, name));
  PetscFunctionReturn(0);
}

/* How many times the type's own SpMM ran so far. */
static PetscErrorCode SpMMCount(PetscInt *count)
{
  PetscLogEvent      ev;
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId("MatXtractMultDense", &ev));
  PetscCall(PetscLogEventGetPerfInfo(0, ev, &info));
  *count = info.count;
  PetscFunctionReturn(0);
}

/* A B and A' B for every k, C created, given with a leading dimension, and reused after new values. */
static PetscErrorCode CheckMatrix(Mat Aaij, Mat Amx, const char *name, PetscRandom rnd)
{
  static const PetscInt ks[] = {1, 2, 3, 8, 9, 17, 64, 256};
  PetscInt              m, n;
  PetscMPIInt           size;
  MatXtractInfo         info;
  MPI_Comm              comm = PetscObjectComm((PetscObject)Amx);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetSize(Amx, &m, &n));
  PetscCall(MatXtractGetInfo(Amx, &info));
  PetscCall(Expect((PetscBool)(info.on_device == g_on_gpu), "MatMult runs where asked", name));
  for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
    const PetscInt k = ks[q];
    Mat            B, Bt, Cr, Cm, Ctr, Ctm, Cg, Ctg;
    PetscInt       before, after;
    char           what[128];

    PetscCall(RandomDense(comm, n, k, 3, rnd, &B));
    PetscCall(RandomDense(comm, m, k, 5, rnd, &Bt));
    PetscCall(SpMMCount(&before));
    PetscCall(MatMatMult(Aaij, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Cr));
    PetscCall(MatMatMult(Amx, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Cm));
    PetscCall(MatTransposeMatMult(Aaij, Bt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Ctr));
    PetscCall(MatTransposeMatMult(Amx, Bt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Ctm));
    PetscCall(SpMMCount(&after));
    PetscCall(PetscSNPrintf(what, sizeof what, "A B, k = %" PetscInt_FMT, k));
    PetscCall(CheckDenseClose(Cr, Cm, what, name));
    PetscCall(PetscSNPrintf(what, sizeof what, "A' B, k = %" PetscInt_FMT, k));
    PetscCall(CheckDenseClose(Ctr, Ctm, what, name));
    if (size == 1 && !info.on_device) {
      PetscCall(PetscSNPrintf(what, sizeof what, "A B, k = %" PetscInt_FMT ": each column bit for bit MatMult's", k));
      PetscCall(CheckColumnsBitwise(Amx, PETSC_FALSE, B, Cm, what, name));
      PetscCall(PetscSNPrintf(what, sizeof what, "A' B, k = %" PetscInt_FMT ": each column bit for bit MatMultTranspose's", k));
      PetscCall(CheckColumnsBitwise(Amx, PETSC_TRUE, Bt, Ctm, what, name));
    }
    /* one SpMM per product on one rank; on several, one per block of A that has columns (Ad, and Ao where the rank has ghosts) */
    PetscCall(Expect((PetscBool)(size == 1 ? after - before == 2 : after - before >= 2), "both products by the type's own SpMM (MatXtractMultDense)", name));
    /* C given, with a leading dimension above its rows */
    PetscCall(ProductIntoGiven(Amx, B, MATPRODUCT_AB, m, 7, rnd, &Cg));
    PetscCall(PetscSNPrintf(what, sizeof what, "A B into a given C (lda > rows), k = %" PetscInt_FMT, k));
    PetscCall(CheckDenseClose(Cr, Cg, what, name));
    PetscCall(ProductIntoGiven(Amx, Bt, MATPRODUCT_AtB, n, 4, rnd, &Ctg)); /* on several ranks the ghost sums land in its padded array */
    PetscCall(PetscSNPrintf(what, sizeof what, "A' B into a given C (lda > rows), k = %" PetscInt_FMT, k));
    PetscCall(CheckDenseClose(Ctr, Ctg, what, name));
    /* new values in both, the products reused */
    PetscCall(MatScale(Aaij, -0.5));
    PetscCall(MatScale(Amx, -0.5));
    PetscCall(MatMatMult(Aaij, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &Cr));
    PetscCall(MatMatMult(Amx, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &Cm));
    PetscCall(MatTransposeMatMult(Aaij, Bt, MAT_REUSE_MATRIX, PETSC_DEFAULT, &Ctr));
    PetscCall(MatTransposeMatMult(Amx, Bt, MAT_REUSE_MATRIX, PETSC_DEFAULT, &Ctm));
    PetscCall(PetscSNPrintf(what, sizeof what, "A B reused after new values, k = %" PetscInt_FMT, k));
    PetscCall(CheckDenseClose(Cr, Cm, what, name));
    PetscCall(PetscSNPrintf(what, sizeof what, "A' B reused after new values, k = %" PetscInt_FMT, k));
    PetscCall(CheckDenseClose(Ctr, Ctm, what, name));
    PetscCall(MatProductNumeric(Cg)); /* the given C again, on the new values */
    PetscCall(PetscSNPrintf(what, sizeof what, "A B into the given C after new values, k = %" PetscInt_FMT, k));
    PetscCall(CheckDenseClose(Cr, Cg, what, name));
    PetscCall(MatProductNumeric(Ctg));
    PetscCall(PetscSNPrintf(what, sizeof what, "A' B into the given C after new values, k = %" PetscInt_FMT, k));
    PetscCall(CheckDenseClose(Ctr, Ctg, what, name));
    for (Mat *M = (Mat[]){B, Bt, Cr, Cm, Ctr, Ctm, Cg, Ctg}, *e = M + 8; M < e; M++) PetscCall(MatDestroy(M));
  }
  if (m == n) { /* PtAP with a dense A and P ours: PETSc composes it of A P and P' (A P), our A' B in there */
    Mat Ad, Pr, Pm;
    PetscCall(MatConvert(Aaij, MATDENSE, MAT_INITIAL_MATRIX, &Ad));
    PetscCall(MatPtAP(Ad, Aaij, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Pr));
    PetscCall(MatPtAP(Ad, Amx, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Pm));
    PetscCall(CheckDenseClose(Pr, Pm, "PtAP, dense A, P ours", name));
    PetscCall(MatPtAP(Ad, Amx, MAT_REUSE_MATRIX, PETSC_DEFAULT, &Pm));
    PetscCall(CheckDenseClose(Pr, Pm, "PtAP reused, dense A, P ours", name));
    PetscCall(MatDestroy(&Pm));
    PetscCall(MatDestroy(&Pr));
    PetscCall(MatDestroy(&Ad));
  }
  PetscFunctionReturn(0);
}

/* The lower bidiagonal matrix of order n (2 on the diagonal, -1 below): on several ranks the first
 * rank's rows reference none of the others' columns (no ghosts) while the next ranks' do, so the
 * ghost scatters of the MPI product must be entered by every rank. */
static PetscErrorCode LowerBidiagonal(MPI_Comm comm, PetscInt n, Mat *A)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(comm, PETSC_DECIDE, PETSC_DECIDE, n, n, 2, NULL, 1, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscCall(MatSetValue(*A, i, i, 2.0, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  static const char *specs[] = {"lap2d:12", "kron:8:8@unique", "bipartite:150:90:7"};
  static const PetscReal cruxes[][2] = {{0, 0}, {0.7, 0.5}, {1, 1}};
  PetscRandom rnd;

  PetscBool   on_gpu = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-gpu", &on_gpu, NULL));
  if (on_gpu) {
    PetscBool usable;
    PetscCall(MatXtractTestGpuUsable(&usable));
    if (!usable) {
      PetscCall(PetscFinalize());
      return 77;
    }
    g_dense  = MATDENSECUDA;
    g_on_gpu = PETSC_TRUE;
  }
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", on_gpu ? "gpu" : "cpu"));
  /* the plan stays as built: the bitwise checks make hundreds of MatMults, after which the engine may
   * upgrade a plan (a predicted hot mode: another summation order) between a product and its check;
   * seen under the sanitizer build, whose slow MatMults pay for an upgrade sooner */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_predictor", "0"));
  PetscCall(PetscLogDefaultBegin()); /* the SpMM event's count */
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetFromOptions(rnd));
  for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
    for (size_t c = 0; c < sizeof cruxes / sizeof cruxes[0]; c++) {
      Mat  Aaij, Amx;
      char name[96];
      PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, specs[s], NULL, &Aaij));
      PetscCall(MatConvert(Aaij, MATMATXTRACT, MAT_INITIAL_MATRIX, &Amx));
      PetscCall(MatXtractSetCrux(Amx, cruxes[c][0], cruxes[c][1]));
      PetscCall(PetscSNPrintf(name, sizeof name, "%s crux (%g,%g)", specs[s], (double)cruxes[c][0], (double)cruxes[c][1]));
      PetscCall(CheckMatrix(Aaij, Amx, name, rnd));
      PetscCall(MatDestroy(&Amx));
      PetscCall(MatDestroy(&Aaij));
    }
  {
    Mat Aaij, Amx;
    PetscCall(LowerBidiagonal(PETSC_COMM_WORLD, 40, &Aaij));
    PetscCall(MatConvert(Aaij, MATMATXTRACT, MAT_INITIAL_MATRIX, &Amx));
    PetscCall(CheckMatrix(Aaij, Amx, "lower bidiagonal (a rank without ghosts)", rnd));
    PetscCall(MatDestroy(&Amx));
    PetscCall(MatDestroy(&Aaij));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " checks, %" PetscInt_FMT " failed\n", nchecks, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
