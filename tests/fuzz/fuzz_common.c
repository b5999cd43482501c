/* fuzz_common.c - scratch files and failure reporting for the fuzz harnesses. */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_path1[4096], fuzz_path2[4096 + 2];

/* remove both scratch files (atexit) */
static void fuzz_remove_scratch(void)
{
  if (fuzz_path1[0]) unlink(fuzz_path1);
  if (fuzz_path2[0]) unlink(fuzz_path2);
}

/* create the two scratch files once: $TMPDIR/mx_fuzz_XXXXXX and the same name with ".2" */
static void fuzz_make_scratch(void)
{
  if (fuzz_path1[0]) return;
  const char *dir = getenv("TMPDIR");
  snprintf(fuzz_path1, sizeof fuzz_path1, "%s/mx_fuzz_XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(fuzz_path1);
  if (fd < 0) fuzz_fail("cannot create a scratch file");
  close(fd);
  snprintf(fuzz_path2, sizeof fuzz_path2, "%s.2", fuzz_path1);
  atexit(fuzz_remove_scratch);
}

void fuzz_fail(const char *what)
{
  fprintf(stderr, "fuzz: %s\n", what);
  abort();
}

const char *fuzz_write_scratch(const uint8_t *data, size_t size)
{
  fuzz_make_scratch();
  FILE *f = fopen(fuzz_path1, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) fuzz_fail("cannot write the scratch file");
  return fuzz_path1;
}

const char *fuzz_scratch_path2(void)
{
  fuzz_make_scratch();
  return fuzz_path2;
}
