/* matxtract_duplicate.c - MatConvert's copy of a large SeqAIJ (MAT_INITIAL_MATRIX): PETSc's
 * MatDuplicate, but with the arrays copied on several threads into memory advised for huge pages
 * (mx_hostcopy). A new matrix's arrays cost their first touch, not their bytes: on one thread into
 * 4 KiB pages that is most of a conversion's time (docs/performance.md, "MatConvert's copy").
 *
 * The copy is a SeqAIJ preallocated with the source's row lengths, so PETSc allocates and owns its
 * arrays (nothing of it is ours to free); the threads then write the values and the column indices
 * into them (their pages' first touch), and MatSeqAIJSetColumnIndices marks every row full. What
 * MatDuplicate(MAT_COPY_VALUES) carries, this copy carries: the layouts (shared with the source, as
 * MatDuplicate shares them: block sizes, local-to-global mapping), the nonzero pattern and values,
 * the vector type, the stencil, the off-process flags, the DM and the composed functions; inodes
 * and compressed rows are found again by the assembly, from the same pattern. The source's
 * insertion rules cannot be read (PETSc has no getter for them): the copy has those of a
 * preallocated AIJ matrix, whatever the source's (a new nonzero that needs an allocation is PETSc's
 * "caused a malloc" error until MAT_NEW_NONZERO_ALLOCATION_ERR is turned off; MAT_IGNORE_ZERO_ENTRIES,
 * MAT_ROW_ORIENTED, MAT_KEEP_NONZERO_PATTERN at their defaults). */
#include "matxtract_impl.h"
#include "io/mx_io.h"

/* Which SeqAIJ the threads copy: arrays (values and column indices) of at least
 * MATXTRACT_THREADED_COPY_MIN_BYTES; or of at least MATXTRACT_THREADED_COPY_DENSE_BYTES with at least
 * MATXTRACT_THREADED_COPY_ROW_NNZ nonzeros per row (the copy's own passes over the rows outweigh the
 * threads' gain on small matrices of short rows). Measurements: docs/performance.md, "MatConvert's
 * copy". */
#define MATXTRACT_THREADED_COPY_MIN_BYTES   ((double)(32 << 20))
#define MATXTRACT_THREADED_COPY_DENSE_BYTES ((double)(4 << 20))
#define MATXTRACT_THREADED_COPY_ROW_NNZ     8.0

/* Whether MatXtractDuplicateSeqAIJ copies A: an assembled, unfactored matrix of type exactly SeqAIJ
 * that the rule above admits, with more than one copy thread. */
PetscErrorCode MatXtractDuplicateThreaded(Mat A, PetscBool *yes)
{
  PetscBool seqaij;
  MatInfo   info;
  double    bytes;

  PetscFunctionBegin;
  *yes = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &seqaij));
  if (!seqaij || !A->assembled || A->factortype != MAT_FACTOR_NONE || mx_hostcopy_threads() < 2) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  bytes = info.nz_used * (double)(sizeof(PetscScalar) + sizeof(PetscInt));
  *yes  = (PetscBool)(bytes >= MATXTRACT_THREADED_COPY_MIN_BYTES || (bytes >= MATXTRACT_THREADED_COPY_DENSE_BYTES && info.nz_used >= MATXTRACT_THREADED_COPY_ROW_NNZ * (double)A->rmap->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B (preallocated with A's row lengths) gets A's column indices and values, on the copy threads */
static PetscErrorCode MatXtractCopyArrays(Mat A, Mat B)
{
  const PetscInt    *ai, *aj, *bi, *bj;
  const PetscScalar *aa;
  PetscScalar       *ba;
  PetscInt           m, nz;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: MatGetRowIJ failed");
  nz = ai[m];
  PetscCall(MatSeqAIJGetCSRAndMemType(B, &bi, &bj, &ba, NULL));
  PetscCheck(bi[m] == nz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: the copy holds %" PetscInt_FMT " nonzeros, the source %" PetscInt_FMT, bi[m], nz);
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  {
    mx_hostcopy_piece pieces[2] = {
      {ba,          aa, (size_t)nz * sizeof(PetscScalar)},
      {(void *)bj, aj, (size_t)nz * sizeof(PetscInt)   }
    };
    mx_hostcopy(pieces, 2, mx_hostcopy_threads());
  }
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &done));
  PetscCall(MatSeqAIJSetColumnIndices(B, (PetscInt *)bj)); /* every row full (PETSc copies the indices onto themselves) */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B preallocated with A's row lengths: PETSc allocates its arrays (their pages untouched) */
static PetscErrorCode MatXtractPreallocateLike(Mat A, Mat B)
{
  const PetscInt *ai, *aj;
  PetscInt        m, *rowlen;
  PetscBool       done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: MatGetRowIJ failed");
  PetscCall(PetscMalloc1(m, &rowlen));
  for (PetscInt r = 0; r < m; r++) rowlen[r] = ai[r + 1] - ai[r];
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &done));
  PetscCall(MatSeqAIJSetPreallocation(B, 0, rowlen)); /* also makes a new nonzero's malloc an error */
  PetscCall(PetscFree(rowlen));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the generic MatDuplicate sets on the copy besides the type's own data: B gets A's layouts,
 * vector type, stencil, off-process flags, DM and composed functions. */
static PetscErrorCode MatXtractCarryDuplicated(Mat A, Mat B)
{
  VecType     vtype;
  PetscObject dm;

  PetscFunctionBegin;
  PetscCall(PetscLayoutReference(A->rmap, &B->rmap));
  PetscCall(PetscLayoutReference(A->cmap, &B->cmap));
  PetscCall(MatGetVecType(A, &vtype));
  PetscCall(MatSetVecType(B, vtype));
  B->stencil.dim = A->stencil.dim;
  B->stencil.noc = A->stencil.noc;
  for (PetscInt d = 0; d <= A->stencil.dim && d < (PetscInt)(sizeof A->stencil.dims / sizeof A->stencil.dims[0]); d++) {
    B->stencil.dims[d]   = A->stencil.dims[d];
    B->stencil.starts[d] = A->stencil.starts[d];
  }
  B->nooffproczerorows = A->nooffproczerorows;
  B->nooffprocentries  = A->nooffprocentries;
  PetscCall(PetscObjectQuery((PetscObject)A, "__PETSc_dm", &dm));
  if (dm) PetscCall(PetscObjectCompose((PetscObject)B, "__PETSc_dm", dm));
  PetscCall(PetscFunctionListDuplicate(((PetscObject)A)->qlist, &((PetscObject)B)->qlist));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *B = a copy of A (MatXtractDuplicateThreaded(A) said yes): see the header. */
PetscErrorCode MatXtractDuplicateSeqAIJ(Mat A, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MATXTRACT_Copy, A, 0, 0, 0));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), B));
  PetscCall(MatSetSizes(*B, A->rmap->n, A->cmap->n, A->rmap->n, A->cmap->n));
  PetscCall(MatSetType(*B, MATSEQAIJ));
  PetscCall(MatXtractCarryDuplicated(A, *B)); /* A's layouts before the preallocation, as MatDuplicate */
  PetscCall(MatXtractPreallocateLike(A, *B));
  PetscCall(MatXtractCopyArrays(A, *B));
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscLogEventEnd(MATXTRACT_Copy, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
