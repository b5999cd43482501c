/* mx_mem.c - how much memory this process may still allocate, and the up-front check that turns a
 * job that cannot fit into a clear error (bytes needed, bytes available, which bound) instead of a
 * long run that dies in malloc or swaps. Bounds: the address-space limit (setrlimit RLIMIT_AS,
 * `ulimit -v`) minus what the process already maps, physical memory, and a cap set by tests. */
#include "io/mx_io_internal.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static uint64_t mx_mem_cap = UINT64_MAX; /* mx_io_set_mem_cap */

void mx_io_set_mem_cap(uint64_t bytes) { mx_mem_cap = bytes ? bytes : UINT64_MAX; }

/* bytes of address space the process maps now (first field of /proc/self/statm), 0 if unknown */
static uint64_t address_space_used(void)
{
  unsigned long long pages = 0;
  long page = sysconf(_SC_PAGESIZE);
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (fscanf(f, "%llu", &pages) != 1) pages = 0;
  fclose(f);
  return page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* RLIMIT_AS soft limit minus the address space in use; UINT64_MAX without a limit */
static uint64_t address_space_left(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  uint64_t used = address_space_used();
  return (uint64_t)rl.rlim_cur > used ? (uint64_t)rl.rlim_cur - used : 0;
}

/* total physical memory; UINT64_MAX if sysconf cannot tell */
static uint64_t physical_memory(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
}

uint64_t mx_mem_available(const char **bound)
{
  uint64_t as = address_space_left(), phys = physical_memory(), best = mx_mem_cap;
  const char *why = "the test cap";
  if (as < best) best = as, why = "the address-space limit (ulimit -v)";
  if (phys < best) best = phys, why = "physical memory";
  if (bound) *bound = best == UINT64_MAX ? "no known limit" : why;
  return best;
}

int mx_mem_fits(double need, char *why, size_t whylen)
{
  const char *bound;
  uint64_t avail = mx_mem_available(&bound);
  if (need <= (double)avail) return 1;
  if (why && whylen)
    snprintf(why, whylen, "needs %.0f bytes (%.2f GB) of memory, %llu bytes (%.2f GB) available under %s", need,
             need / 1e9, (unsigned long long)avail, (double)avail / 1e9, bound);
  return 0;
}
