/* fuzz_common.h - what the fuzz harnesses share: the libFuzzer entry point, a scratch file for the
 * readers (they take a path), and a failure that stops the run with a message. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* memory the readers may plan for (mx_io_set_mem_cap): a file that declares more is refused with the
 * readers' memory message, well below libFuzzer's 2 GB malloc and RSS limits */
#define FUZZ_MEM_CAP (UINT64_C(512) << 20)

/* libFuzzer's entry point: every harness defines it; fuzz_replay.c calls it on files. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of this process's scratch file (created on first use under $TMPDIR or /tmp, removed at
 * exit), rewritten with data[0..size); aborts if it cannot be written. */
const char *fuzz_write_scratch(const uint8_t *data, size_t size);

/* A second scratch path (for round trips: write what was read, read it back). */
const char *fuzz_scratch_path2(void);

/* Print "fuzz: what" and abort (a crash that libFuzzer records with its input). */
void fuzz_fail(const char *what);

#endif
