/* fuzz_replay.c - run a fuzz harness without libFuzzer: LLVMFuzzerTestOneInput on every file named
 * on the command line and on every regular file in every directory named (one level, sorted), so
 * the normal test run replays the committed corpus and the crash regressions. */
#include "fuzz_common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* run the harness on the whole content of path; returns 1 if the file was read, 0 if not */
static int replay_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t cap = 1 << 16, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *b2 = realloc(buf, cap *= 2);
      if (!b2) free(buf);
      buf = b2;
    }
  }
  fclose(f);
  if (!buf) fuzz_fail("out of memory reading a corpus file");
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 1;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* replay every regular file of dir in name order; returns the number replayed */
static int replay_dir(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d) return 0;
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char **n2 = realloc(names, (n + 1) * sizeof *names);
    if (!n2) fuzz_fail("out of memory listing a corpus folder");
    names = n2;
    names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
    if (!names[n]) fuzz_fail("out of memory listing a corpus folder");
    sprintf(names[n++], "%s/%s", dir, e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  int count = 0;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (!stat(names[i], &st) && S_ISREG(st.st_mode)) count += replay_file(names[i]);
    free(names[i]);
  }
  free(names);
  return count;
}

int main(int argc, char **argv)
{
  int count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st)) {
      fprintf(stderr, "fuzz_replay: %s: not found\n", argv[i]);
      return 1;
    }
    count += S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
  }
  printf("%s: %d inputs replayed, no failure\n", argv[0], count);
  return count > 0 ? 0 : 1;
}
