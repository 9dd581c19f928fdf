/* A tiny check harness shared by the C test programs: counts passed and failed checks and
 * prints one summary line, "RESULT <passed> passed, <failed> failed", that tests/c/run.sh
 * adds up. A failed check prints where and why, and the program goes on. */
#ifndef SNOWFLAKE_TEST_CHECK_H
#define SNOWFLAKE_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

#include "snowflake.h"

static int checks_passed;
static int checks_failed;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (cond) {                                                            \
      checks_passed++;                                                     \
    } else {                                                               \
      checks_failed++;                                                     \
      fprintf(stderr, "FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond);     \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)

/* Checks that `expr` returns the status `want`; on a mismatch prints both codes and the
 * detail. Evaluates to the status. */
#define CHECK_STATUS(expr, want)                                           \
  check_status((expr), (want), #expr, __FILE__, __LINE__)

static inline SnowflakeStatus check_status(SnowflakeStatus got, SnowflakeStatus want,
                                           const char *expr, const char *file, int line) {
  if (got == want) {
    checks_passed++;
  } else {
    checks_failed++;
    fprintf(stderr, "FAIL %s:%d: %s returned %s, expected %s (detail: %s)\n", file, line,
            expr, snowflake_status_code(got), snowflake_status_code(want),
            snowflake_last_error());
  }
  return got;
}

static inline int check_summary(void) {
  printf("RESULT %d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed == 0 ? 0 : 1;
}

#endif /* SNOWFLAKE_TEST_CHECK_H */
