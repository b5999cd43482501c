/* matxtract_duplicate.c - MatConvert's copy of a large SeqAIJ (MAT_INITIAL_MATRIX): PETSc's
 * MatDuplicate, but with the arrays copied on several threads into memory advised for huge pages
 * (mx_hostcopy). A new matrix's arrays cost their first touch, not their bytes: on one thread into
 * 4 KiB pages that is most of a conversion's time (docs/performance.md, "MatConvert's copy").
 *
 * The copy is PETSc's MatCreateSeqAIJWithArrays over arrays allocated here; a container composed on
 * the new matrix owns them and frees them when the matrix is destroyed (also after a conversion
 * back to AIJ in place). What MatDuplicate(MAT_COPY_VALUES) carries, this copy carries: sizes and
 * layouts (shared with the source, as MatDuplicate shares them: block sizes, local-to-global
 * mapping), the nonzero pattern and values, the vector type, the stencil, the off-process flags,
 * the DM and the composed functions; inodes and compressed rows are found again by the assembly,
 * from the same pattern. The source's insertion rules cannot be read (PETSc has no getter for them):
 * the copy has those of a preallocated AIJ matrix, whatever the source's (a new nonzero that needs
 * an allocation is PETSc's "caused a malloc" error until MAT_NEW_NONZERO_ALLOCATION_ERR is turned
 * off; MAT_IGNORE_ZERO_ENTRIES, MAT_ROW_ORIENTED, MAT_KEEP_NONZERO_PATTERN at their defaults). */
#include "matxtract_impl.h"
#include "io/mx_io.h"

/* a copy smaller than this goes through MatDuplicate (its first touch is cheap) */
#define MATXTRACT_THREADED_COPY_MIN_BYTES ((size_t)4 << 20)

typedef struct {
  PetscInt    *i, *j;
  PetscScalar *a;
} MatXtractArrays;

static PetscErrorCode MatXtractArraysDestroy(void *ctx)
{
  MatXtractArrays *arr = (MatXtractArrays *)ctx;

  PetscFunctionBegin;
  PetscCall(PetscFree(arr->i));
  PetscCall(PetscFree(arr->j));
  PetscCall(PetscFree(arr->a));
  PetscCall(PetscFree(arr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether MatXtractDuplicateSeqAIJ copies A: an assembled, unfactored matrix of type exactly SeqAIJ
 * whose arrays take at least MATXTRACT_THREADED_COPY_MIN_BYTES, with more than one copy thread. */
PetscErrorCode MatXtractDuplicateThreaded(Mat A, PetscBool *yes)
{
  PetscBool  seqaij;
  MatInfo    info;

  PetscFunctionBegin;
  *yes = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &seqaij));
  if (!seqaij || !A->assembled || A->factortype != MAT_FACTOR_NONE || mx_hostcopy_threads() < 2) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  *yes = (PetscBool)(info.nz_used * (double)(sizeof(PetscScalar) + sizeof(PetscInt)) >= (double)MATXTRACT_THREADED_COPY_MIN_BYTES);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* arr = A's CSR arrays, copied (arr's arrays allocated here) */
static PetscErrorCode MatXtractCopyArrays(Mat A, MatXtractArrays *arr)
{
  const PetscInt    *ai, *aj;
  const PetscScalar *aa;
  PetscInt           m, nz;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: MatGetRowIJ failed");
  nz = ai[m];
  PetscCall(PetscMalloc1(m + 1, &arr->i));
  PetscCall(PetscMalloc1(nz, &arr->j));
  PetscCall(PetscMalloc1(nz, &arr->a));
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  {
    mx_hostcopy_piece pieces[3] = {
      {arr->a, aa, (size_t)nz * sizeof(PetscScalar)},
      {arr->j, aj, (size_t)nz * sizeof(PetscInt)   },
      {arr->i, ai, (size_t)(m + 1) * sizeof(PetscInt)}
    };
    mx_hostcopy(pieces, 3, mx_hostcopy_threads());
  }
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &done));
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
  MatXtractArrays *arr;
  PetscContainer   owner;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  PetscCall(PetscNew(&arr));
  ierr = MatXtractCopyArrays(A, arr);
  if (!ierr) ierr = MatCreateSeqAIJWithArrays(PetscObjectComm((PetscObject)A), A->rmap->n, A->cmap->n, arr->i, arr->j, arr->a, B);
  if (ierr) PetscCall(MatXtractArraysDestroy(arr));
  PetscCall(ierr);
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &owner));
  PetscCall(PetscContainerSetPointer(owner, arr));
  PetscCall(PetscContainerSetUserDestroy(owner, MatXtractArraysDestroy));
  PetscCall(PetscObjectCompose((PetscObject)*B, "MatXtract_duplicated_arrays", (PetscObject)owner));
  PetscCall(PetscContainerDestroy(&owner));
  PetscCall(MatSetOption(*B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE)); /* a preallocated source's rule */
  PetscCall(MatXtractCarryDuplicated(A, *B));
  PetscFunctionReturn(PETSC_SUCCESS);
}
