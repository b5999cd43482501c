/* matxtract-gen - write a generated (or converted) matrix to a Matrix Market or PETSc binary file.
 *   matxtract-gen SPEC -o FILE [-seed S] [-format mtx|petsc]
 *   matxtract-gen mtx:PATH -o FILE ...     (convert a Matrix Market file)
 *   matxtract-gen -help
 * Without -o the matrix is generated and only its summary and timing are printed. */
#include "io/mx_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(FILE *f)
{
  fprintf(f, "usage: matxtract-gen SPEC [-o FILE] [-seed S] [-format mtx|petsc]\n"
             "       matxtract-gen mtx:PATH -o FILE [-format mtx|petsc]   (convert a Matrix Market file)\n"
             "       matxtract-gen -help\n"
             "Format default from the extension: .mtx -> Matrix Market, anything else -> PETSc binary\n"
             "(MatLoad-compatible, 32-bit indices). Without -o: generate and print the summary only.\n"
             "seed 0 or no -seed: the default seed %u.\n\n%s",
          (unsigned)MX_GEN_DEFAULT_SEED, mx_gen_help());
}

int main(int argc, char **argv)
{
  const char *spec = NULL, *out = NULL, *format = NULL;
  unsigned long long seed = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-help") || !strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "-o") || !strcmp(a, "-seed") || !strcmp(a, "-format")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "matxtract-gen: %s needs a value\n", a);
        return 2;
      }
      const char *v = argv[++i];
      if (!strcmp(a, "-o")) out = v;
      else if (!strcmp(a, "-format")) format = v;
      else {
        char *end;
        seed = strtoull(v, &end, 10);
        if (!*v || *end || v[0] == '-') {
          fprintf(stderr, "matxtract-gen: -seed '%s' is not a non-negative integer\n", v);
          return 2;
        }
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "matxtract-gen: unknown option '%s' (see -help)\n", a);
      return 2;
    } else if (!spec) spec = a;
    else {
      fprintf(stderr, "matxtract-gen: more than one SPEC ('%s' and '%s')\n", spec, a);
      return 2;
    }
  }
  if (!spec) {
    usage(stderr);
    return 2;
  }
  int mtx = 0;
  if (format) {
    if (!strcmp(format, "mtx")) mtx = 1;
    else if (strcmp(format, "petsc")) {
      fprintf(stderr, "matxtract-gen: -format '%s' is not mtx or petsc\n", format);
      return 2;
    }
  } else if (out) {
    size_t n = strlen(out);
    mtx = n >= 4 && !strcmp(out + n - 4, ".mtx");
  }
  mx_io_csr A;
  char err[1024];
  double t0 = now();
  int rc = !strncmp(spec, "mtx:", 4) ? mx_mtx_read(spec + 4, &A, err, sizeof(err))
                                     : mx_gen(spec, (uint64_t)seed, &A, err, sizeof(err));
  double t1 = now();
  if (rc) {
    fprintf(stderr, "matxtract-gen: %s\n", err);
    return 1;
  }
  printf("%s: %d x %d, nnz %lld (%.2f per row), seed %llu, %s %.2f s\n", spec, (int)A.nrows, (int)A.ncols,
         (long long)A.nnz, A.nrows ? (double)A.nnz / A.nrows : 0.0,
         seed ? seed : (unsigned long long)MX_GEN_DEFAULT_SEED, strncmp(spec, "mtx:", 4) ? "generated in" : "read in",
         t1 - t0);
  if (out) {
    rc = mtx ? mx_mtx_write(out, &A, err, sizeof(err)) : mx_petsc_write(out, &A, err, sizeof(err));
    if (rc) fprintf(stderr, "matxtract-gen: %s\n", err);
    else printf("wrote %s (%s) in %.2f s\n", out, mtx ? "Matrix Market" : "PETSc binary", now() - t1);
  }
  mx_io_csr_free(&A);
  return rc ? 1 : 0;
}
