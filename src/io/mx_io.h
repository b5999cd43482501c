/* mx_io.h - matrices from files and generators, as plain CSR (pure C99, no PETSc).
 * Every function returns 0 on success; on failure a nonzero code and a one-line message in err
 * that names the file and line (reader) or the spec (generator). Nothing is left allocated then. */
#ifndef MX_IO_H
#define MX_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An owned CSR matrix: columns sorted within each row, duplicates summed. */
typedef struct {
  int32_t nrows, ncols;
  int64_t nnz;
  int64_t *rowptr; /* nrows+1 */
  int32_t *colidx; /* nnz */
  double *val;     /* nnz */
} mx_io_csr;

void mx_io_csr_free(mx_io_csr *A);

/* Matrix Market reader: coordinate (real, integer, pattern; general, symmetric, skew-symmetric)
 * and array (real, general or symmetric). Symmetric and skew entries are expanded. Pattern values
 * are 1. Complex and hermitian are refused. */
int mx_mtx_read(const char *path, mx_io_csr *A, char *err, size_t errlen);

/* Matrix Market writer (coordinate real general). */
int mx_mtx_write(const char *path, const mx_io_csr *A, char *err, size_t errlen);

/* mx_mtx_read with flags. By default a value that is not a finite number (nan, inf, 1e999) is an
 * error; MX_MTX_ALLOW_NONFINITE accepts nan/inf/infinity (any case, with sign) as IEEE values. */
#define MX_MTX_ALLOW_NONFINITE 1u
int mx_mtx_read_flags(const char *path, unsigned flags, mx_io_csr *A, char *err, size_t errlen);

/* 0 if A satisfies the invariants above (rowptr[0] = 0, nondecreasing, rowptr[nrows] = nnz,
 * 0 <= colidx < ncols, strictly increasing within a row); otherwise 1 and a message. */
int mx_io_csr_check(const mx_io_csr *A, char *err, size_t errlen);

/* PETSc binary matrix file as written by MatView on a binary viewer (32-bit PetscInt build), no
 * PETSc needed: big-endian int32 MAT_FILE_CLASSID (1211216), rows, cols, nnz; then int32 row lengths
 * (rows of them); int32 0-based column indices (nnz); big-endian IEEE doubles (nnz). nnz must fit in
 * int32. The reader accepts exactly this layout (it sorts and merges rows if they are not sorted). */
#define MX_PETSC_MAT_FILE_CLASSID 1211216
int mx_petsc_write(const char *path, const mx_io_csr *A, char *err, size_t errlen);
int mx_petsc_read(const char *path, mx_io_csr *A, char *err, size_t errlen);

/* Generators: spec strings such as "kron:18:16", "rgg:16", "lap2d:1000", "lap2d9:N", "lap3d:N",
 * "lap3d27:N", "band:N:W", "rand:N:PERROW", "chunglu:N:AVGDEG:EXP", "chunglu-dir:N:AVGDEG:EXP",
 * "blockdense:N:NB:BS", "bipartite:M:N:PERROW", "convdiff2d:N", "convdiff3d:N". seed 0 = the
 * spec's documented default seed (MX_GEN_DEFAULT_SEED for every family). mx_gen_help() returns the
 * multi-line help text (families, sizes, values, seeds). */
#define MX_GEN_DEFAULT_SEED 20240601u
int mx_gen(const char *spec, uint64_t seed, mx_io_csr *A, char *err, size_t errlen);
const char *mx_gen_help(void);

/* Generation with progress: progress(ctx, step, done) is called at most a few dozen times, with
 * done in [0, 1] within each named step of the families whose loops are long (kron, chunglu,
 * rgg, rand, bipartite); NULL = mx_gen. */
typedef void (*mx_gen_progress_fn)(void *ctx, const char *step, double done);
int mx_gen_with_progress(const char *spec, uint64_t seed, mx_gen_progress_fn progress, void *ctx, mx_io_csr *A, char *err,
                         size_t errlen);

/* What a spec will take, without generating: an upper bound on its nonzeros and the peak bytes the
 * generator allocates (the returned CSR included). 0 ok; a bad spec gives mx_gen's message. */
int mx_gen_estimate(const char *spec, int64_t *nnz, double *bytes, char *err, size_t errlen);

/* Memory this process may still allocate: the least of the address-space limit (RLIMIT_AS, i.e.
 * `ulimit -v`) minus what is mapped now, physical memory, and a test cap; *bound (may be NULL) names
 * the one that binds. The readers and generators check their need against it before allocating. */
uint64_t mx_mem_available(const char **bound);

/* 1 if need bytes fit in mx_mem_available; otherwise 0 and, in why, "needs N bytes (X GB) of
 * memory, M bytes (Y GB) available under BOUND". */
int mx_mem_fits(double need, char *why, size_t whylen);

/* Copies into memory nothing has touched yet (mx_hostcopy.c): each piece's bytes from src to dst on
 * `threads` threads, each thread one contiguous slice of the pieces laid end to end (its pages'
 * first touch included), destinations of 4 MiB or more advised for transparent huge pages. */
#define MX_HOSTCOPY_MAX_THREADS 16
typedef struct {
  void       *dst;
  const void *src;
  size_t      bytes;
} mx_hostcopy_piece;
void mx_hostcopy(const mx_hostcopy_piece *pieces, int npieces, int threads);
/* OpenMP's thread count (OMP_NUM_THREADS, else the cores) less 2, at least 1 and at most
 * MX_HOSTCOPY_MAX_THREADS; 1 without OpenMP */
int mx_hostcopy_default_threads(void);
/* threads for the library's copies (0 = the default); 1 if threads is outside 0..MAX */
int mx_hostcopy_set_threads(int threads);
int mx_hostcopy_threads(void);

#ifdef __cplusplus
}
#endif
#endif
