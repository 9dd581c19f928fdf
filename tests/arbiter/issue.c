/* One issuing process of the arbiter tests (tests/arbiter/test_arbiter.py), in C.
 *
 *   issue LAYOUT NODE OPTIONS MS OUT SYNC
 *
 * As tests/arbiter/issue.py: opens a generator (OPTIONS in the text form, `-` for none),
 * `error <code> <message>` on failure; else ready, go, snowflake_next_id() for MS ms, then `ok`
 * and one ID a line. */
#define _DEFAULT_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <snowflake.h>

static void pause_a_moment(void) {
  struct timespec ts = {0, 500000};
  nanosleep(&ts, NULL);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void one_line(FILE *f, const char *what, SnowflakeStatus s) {
  const char *m = snowflake_last_error();
  fprintf(f, "%s %s ", what, snowflake_status_code(s));
  for (; *m; m++) fputc(*m == '\n' ? ' ' : *m, f);
  fputc('\n', f);
}

int main(int argc, char **argv) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *g = NULL;
  SnowflakeStatus s;
  const char *node, *options;
  char path[4096];
  uint64_t *ids, id;
  size_t n = 0, cap = 1 << 20;
  double end;
  FILE *f;
  if (argc != 7) return 2;
  node = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
  options = strcmp(argv[3], "-") == 0 ? NULL : argv[3];
  f = fopen(argv[5], "w");
  if (!f) return 1;
  if ((s = snowflake_layout_new(argv[1], &layout)) != SNOWFLAKE_STATUS_OK ||
      (s = snowflake_generator_new(layout, node, options, &g)) != SNOWFLAKE_STATUS_OK) {
    one_line(f, "error", s);
    fclose(f);
    snowflake_layout_free(layout);
    return 0;
  }
  snprintf(path, sizeof path, "%s/ready.%ld", argv[6], (long)getpid());
  fclose(fopen(path, "w"));
  snprintf(path, sizeof path, "%s/go", argv[6]);
  while (access(path, F_OK) != 0) pause_a_moment();
  ids = malloc(cap * sizeof *ids);
  end = now_ms() + atof(argv[4]);
  s = SNOWFLAKE_STATUS_OK;
  /* At least one batch, however late this process runs after `go`. */
  do {
    int i;
    for (i = 0; i < 200 && s == SNOWFLAKE_STATUS_OK; i++) {
      s = snowflake_next_id(g, &id);
      if (s != SNOWFLAKE_STATUS_OK) break;
      if (n == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
      ids[n++] = id;
    }
    if (n == 200) { /* the test may wait for this one: it has issued */
      snprintf(path, sizeof path, "%s/issued.%ld", argv[6], (long)getpid());
      fclose(fopen(path, "w"));
    }
  } while (s == SNOWFLAKE_STATUS_OK && now_ms() < end);
  fputs("ok\n", f);
  for (size_t i = 0; i < n; i++) fprintf(f, "%" PRIu64 "\n", ids[i]);
  if (s != SNOWFLAKE_STATUS_OK) one_line(f, "error", s);
  fclose(f);
  free(ids);
  snowflake_generator_free(g);
  snowflake_layout_free(layout);
  return 0;
}
