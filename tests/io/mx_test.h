/* mx_test.h - minimal assertions for the io tests: count failures, print FILE:LINE and the condition. */
#ifndef MX_TEST_H
#define MX_TEST_H
#include <stdio.h>

static int mx_test_failures = 0, mx_test_checks = 0;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    mx_test_checks++;                                                      \
    if (!(cond)) {                                                         \
      mx_test_failures++;                                                  \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)

#define TEST_DONE(name)                                                                        \
  do {                                                                                         \
    printf("%s: %d checks, %d failed\n", name, mx_test_checks, mx_test_failures);              \
    return mx_test_failures ? 1 : 0;                                                           \
  } while (0)
#endif
