/* matxtract_load.c - matrices for users and examples: Matrix Market files, PETSc binary files and
 * generator specs, into a Mat whose type comes from the options database (-mat_type ...). */
#include "matxtract_impl.h"
#include "io/mx_io.h"
#include <petsctime.h>

/* generation and copying of more nonzeros than this report their progress with -info */
#define MATXTRACT_PROGRESS_NNZ 10000000

/* Bytes of the SeqAIJ part a rank gets for m local rows and nnz local nonzeros: values and column
 * indices, row starts, and the per-row lengths, maxima and diagonal positions AIJ keeps. */
static double MatXtractAIJBytes(PetscInt m, int64_t nnz)
{
  return 12.0 * (double)nnz + 16.0 * (double)m + 8.0;
}

/* Create A with local rows split by PETSc, its type from the options (default AIJ), and the rows
 * this rank owns copied from the CSR C (which every rank holds whole). */
static PetscErrorCode MatXtractFromCSR(MPI_Comm comm, const mx_io_csr *C, const char *prefix, Mat *A)
{
  PetscInt     rstart, rend, cstart, cend, *dnnz, *onnz, *cols, maxrow = 0;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, C->nrows, C->ncols));
  PetscCall(MatSetOptionsPrefix(*A, prefix));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(*A, &cstart, &cend));
  {
    int64_t local_nnz = C->rowptr[rend] - C->rowptr[rstart];
    char    why[256];
    PetscCheck(mx_mem_fits(MatXtractAIJBytes(rend - rstart, local_nnz), why, sizeof why), PETSC_COMM_SELF, PETSC_ERR_MEM, "Cannot copy the matrix into %s: rows %" PetscInt_FMT "..%" PetscInt_FMT " with %lld nonzeros %s", ((PetscObject)*A)->type_name, rstart, rend - 1, (long long)local_nnz, why);
  }
  PetscCall(PetscCalloc2(rend - rstart, &dnnz, rend - rstart, &onnz));
  for (PetscInt i = rstart; i < rend; i++) {
    for (int64_t k = C->rowptr[i]; k < C->rowptr[i + 1]; k++) {
      if (C->colidx[k] >= cstart && C->colidx[k] < cend) dnnz[i - rstart]++;
      else onnz[i - rstart]++;
    }
    maxrow = PetscMax(maxrow, (PetscInt)(C->rowptr[i + 1] - C->rowptr[i]));
  }
  PetscCall(MatXAIJSetPreallocation(*A, 1, dnnz, onnz, NULL, NULL));
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(PetscMalloc2(maxrow, &cols, maxrow, &vals));
  for (PetscInt i = rstart, tenth = (rend - rstart) / 10 + 1; i < rend; i++) {
    PetscInt len = (PetscInt)(C->rowptr[i + 1] - C->rowptr[i]);
    if (C->nnz > MATXTRACT_PROGRESS_NNZ && (i - rstart) % tenth == 0) PetscCall(PetscInfo(*A, "copying rows into the Mat: %.0f%%\n", 100.0 * (double)(i - rstart) / (double)(rend - rstart)));
    for (PetscInt k = 0; k < len; k++) {
      cols[k] = C->colidx[C->rowptr[i] + k];
      vals[k] = C->val[C->rowptr[i] + k];
    }
    PetscCall(MatSetValues(*A, 1, &i, len, cols, vals, INSERT_VALUES));
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool MatXtractIsMatrixMarket(const char *path)
{
  size_t n = strlen(path);
  return (n >= 4 && !strcmp(path + n - 4, ".mtx")) ? PETSC_TRUE : PETSC_FALSE;
}

/* the compression suffix of path (".gz", ".bz2", ".xz", ".zst"), or NULL: such a file is neither
 * Matrix Market text nor PETSc binary */
static const char *MatXtractCompressedSuffix(const char *path)
{
  static const char *const suffixes[] = {".gz", ".bz2", ".xz", ".zst"};
  size_t                   n          = strlen(path);

  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    size_t m = strlen(suffixes[i]);
    if (n >= m && !strcmp(path + n - m, suffixes[i])) return suffixes[i];
  }
  return NULL;
}

PetscErrorCode MatXtractLoad(MPI_Comm comm, const char *path, const char *prefix, Mat *A)
{
  const char *compressed;

  PetscFunctionBegin;
  PetscAssertPointer(path, 2);
  PetscAssertPointer(A, 4);
  compressed = MatXtractCompressedSuffix(path);
  PetscCheck(!compressed, comm, PETSC_ERR_SUP, "Cannot read %s: a compressed file (%s); matrices are read from Matrix Market (.mtx) or PETSc binary files: decompress it first (e.g. gunzip -k)", path, compressed);
  if (MatXtractIsMatrixMarket(path)) {
    mx_io_csr C = {0};
    char      err[512];
    PetscBool nonfinite = PETSC_FALSE;
    int       rc;
    PetscCall(PetscOptionsGetBool(NULL, prefix, "-mtx_allow_nonfinite", &nonfinite, NULL));
    rc = mx_mtx_read_flags(path, nonfinite ? MX_MTX_ALLOW_NONFINITE : 0u, &C, err, sizeof err);
    PetscCheck(!rc, comm, PETSC_ERR_FILE_UNEXPECTED, "Cannot read Matrix Market file: %s%s", err, strstr(err, "not finite") ? " (-mtx_allow_nonfinite reads inf/nan as IEEE values)" : "");
    PetscCall(MatXtractFromCSR(comm, &C, prefix, A));
    mx_io_csr_free(&C);
  } else {
    PetscViewer viewer;
    PetscCall(PetscViewerBinaryOpen(comm, path, FILE_MODE_READ, &viewer));
    PetscCall(MatCreate(comm, A));
    PetscCall(MatSetOptionsPrefix(*A, prefix));
    PetscCall(MatSetFromOptions(*A));
    PetscCall(MatLoad(*A, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the state of a generation's -info progress report */
typedef struct {
  const char    *spec;
  PetscLogDouble start;
} MatXtractGenProgress;

/* mx_gen progress callback: one -info line per report (a C callback: errors of PetscInfo are dropped) */
static void MatXtractGenReport(void *ctx, const char *step, double done)
{
  MatXtractGenProgress *p = (MatXtractGenProgress *)ctx;
  PetscLogDouble        now = p->start;

  (void)PetscTime(&now);
  (void)PetscInfo(NULL, "generating %s: %s %.0f%% (%.1f s)\n", p->spec, step, 100.0 * done, now - p->start);
}

/* Refuse a spec that cannot fit before anything is allocated: the generator's peak plus the AIJ
 * copy this rank makes of its share of the rows (every rank generates the whole matrix). */
static PetscErrorCode MatXtractGenerateCheckMemory(MPI_Comm comm, const char *spec, int64_t *nnz)
{
  char        err[512], why[256];
  double      gen_bytes;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCheck(!mx_gen_estimate(spec, nnz, &gen_bytes, err, sizeof err), comm, PETSC_ERR_ARG_WRONG, "Cannot generate matrix: %s\n%s", err, mx_gen_help());
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(mx_mem_fits(gen_bytes + MatXtractAIJBytes(0, *nnz / size), why, sizeof why), comm, PETSC_ERR_MEM, "Cannot generate matrix %s (about %lld nonzeros; generator and AIJ copy together): %s", spec, (long long)*nnz, why);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractGenerateSeeded(MPI_Comm comm, const char *spec, PetscInt seed, const char *prefix, Mat *A)
{
  mx_io_csr            C = {0};
  char                 err[512];
  int64_t              nnz;
  MatXtractGenProgress progress = {spec, 0};
  PetscLogDouble       done;

  PetscFunctionBegin;
  PetscAssertPointer(spec, 2);
  PetscAssertPointer(A, 5);
  PetscCheck(seed >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Generator seed %" PetscInt_FMT ": need >= 0 (0 = the family's default)", seed);
  PetscCall(MatXtractGenerateCheckMemory(comm, spec, &nnz));
  PetscCall(PetscInfo(NULL, "generating %s: at most %lld nonzeros\n", spec, (long long)nnz));
  PetscCall(PetscTime(&progress.start));
  PetscCheck(!mx_gen_with_progress(spec, (uint64_t)seed, nnz > MATXTRACT_PROGRESS_NNZ ? MatXtractGenReport : NULL, &progress, &C, err, sizeof err), comm, PETSC_ERR_MEM, "Cannot generate matrix: %s", err);
  PetscCall(PetscTime(&done));
  PetscCall(PetscInfo(NULL, "generated %s: %d x %d, %lld nonzeros in %.2f s\n", spec, (int)C.nrows, (int)C.ncols, (long long)C.nnz, done - progress.start));
  PetscCall(MatXtractFromCSR(comm, &C, prefix, A));
  mx_io_csr_free(&C);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractGenerate(MPI_Comm comm, const char *spec, const char *prefix, Mat *A)
{
  PetscFunctionBegin;
  PetscAssertPointer(spec, 2);
  PetscAssertPointer(A, 4);
  PetscCall(MatXtractGenerateSeeded(comm, spec, 0, prefix, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *MatXtractGenerateHelp(void)
{
  return mx_gen_help();
}

PetscErrorCode MatXtractCreateFromOptions(MPI_Comm comm, const char *prefix, Mat *A)
{
  char      file[PETSC_MAX_PATH_LEN] = "", spec[256] = "";
  PetscBool has_file, has_gen;
  PetscInt  seed = 0;

  PetscFunctionBegin;
  PetscOptionsBegin(comm, prefix, "Matrix input (MatXtract)", "Mat");
  PetscCall(PetscOptionsString("-f", "Matrix file: Matrix Market (.mtx) or PETSc binary", "MatXtractLoad", file, file, sizeof file, &has_file));
  PetscCall(PetscOptionsString("-gen", "Generated matrix, e.g. kron:16:16, lap2d:1000, rgg:16 (see -help output of matxtract-gen)", "MatXtractGenerate", spec, spec, sizeof spec, &has_gen));
  PetscCall(PetscOptionsInt("-gen_seed", "Generator seed (0 = the family's default)", "MatXtractGenerate", seed, &seed, NULL));
  PetscOptionsEnd();
  PetscCheck(!(has_file && has_gen), comm, PETSC_ERR_ARG_INCOMP, "Give either -f FILE or -gen SPEC, not both");
  PetscCheck(has_file || has_gen, comm, PETSC_ERR_ARG_WRONG, "No matrix: give -f FILE (.mtx or PETSc binary) or -gen SPEC");
  if (has_file) PetscCall(MatXtractLoad(comm, file, prefix, A));
  else PetscCall(MatXtractGenerateSeeded(comm, spec, seed, prefix, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
