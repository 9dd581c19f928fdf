/* One process of the cross-language shared-state test (tests/cross/test_cross.py), in C.
 *
 *   draw draw NAME COUNT OUT DIR   opens the shared generator NAME (twitter, datacenter=3,
 *                                  worker=7), or a plain one (no coordination option) when
 *                                  NAME is `-`, writes DIR/ready.<pid>, waits for DIR/go, then
 *                                  draws COUNT IDs (runs of 1000 snowflake_next_id() calls and
 *                                  snowflake_next_ids(1000) batches, alternating) and writes
 *                                  them to OUT, one decimal a line
 *   draw mismatch NAME             opens NAME with another layout, node and policy; prints
 *                                  `<case> <status code> <message>` a case, or
 *                                  `<case> OPENED <first ID>`
 *   draw killopen NAME ROUNDS      each round: a child opens the shared state NAME-<r> in a
 *                                  fresh directory $SNOWFLAKE_SHM_DIR/<r> (a state is named
 *                                  by its identity, the name is a label: a directory of its
 *                                  own makes it fresh) and issues IDs; it is SIGKILLed 0-400 us
 *                                  after the fork, at any point of setting the file up; then
 *                                  this process opens NAME-<r> and must issue above every ID
 *                                  the child wrote to a pipe. Prints how many children died before, during and
 *                                  after setting the file up; exits 1 on a failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <snowflake.h>

#define NODE "datacenter=3,worker=7"

static void die(const char *what, SnowflakeStatus s) {
  fprintf(stderr, "draw.c: %s: %s: %s\n", what, snowflake_status_code(s), snowflake_last_error());
  exit(1);
}

static SnowflakeLayout *layout_of(const char *spec) {
  SnowflakeLayout *layout = NULL;
  SnowflakeStatus s = snowflake_layout_new(spec, &layout);
  if (s != SNOWFLAKE_STATUS_OK) die("snowflake_layout_new", s);
  return layout;
}

static int draw(const char *name, size_t count, const char *out, const char *dir) {
  char options[128], path[4096];
  SnowflakeLayout *layout = layout_of("twitter");
  SnowflakeGenerator *gen = NULL;
  SnowflakeStatus s;
  uint64_t *ids = malloc(count * sizeof *ids);
  size_t n = 0;
  FILE *f;
  struct timespec half_ms = {0, 500000};

  if (ids == NULL) return 1;
  snprintf(options, sizeof options, "shared=%s", name);
  s = snowflake_generator_new(layout, NODE, strcmp(name, "-") == 0 ? NULL : options, &gen);
  if (s != SNOWFLAKE_STATUS_OK) die("snowflake_generator_new", s);

  snprintf(path, sizeof path, "%s/ready.c.%ld", dir, (long)getpid());
  f = fopen(path, "w");
  if (f == NULL || fclose(f) != 0) return 1;
  snprintf(path, sizeof path, "%s/go", dir);
  while (access(path, F_OK) != 0) nanosleep(&half_ms, NULL);

  while (n < count) {
    size_t k = count - n < 1000 ? count - n : 1000, i;
    for (i = 0; i < k; i++) {
      s = snowflake_next_id(gen, &ids[n++]);
      if (s != SNOWFLAKE_STATUS_OK) die("snowflake_next_id", s);
    }
    k = count - n < 1000 ? count - n : 1000;
    if (k > 0) {
      s = snowflake_next_ids(gen, &ids[n], k);
      if (s != SNOWFLAKE_STATUS_OK) die("snowflake_next_ids", s);
      n += k;
    }
  }

  f = fopen(out, "w");
  if (f == NULL) return 1;
  for (n = 0; n < count; n++) fprintf(f, "%" PRIu64 "\n", ids[n]);
  if (fclose(f) != 0) return 1;
  free(ids);
  snowflake_generator_free(gen);
  snowflake_layout_free(layout);
  return 0;
}

static int mismatch(const char *name) {
  static const struct {
    const char *name, *layout, *node, *extra;
  } cases[] = {
      {"layout", "discord", "worker=3,process=7", ""},
      {"node", "twitter", "datacenter=3,worker=8", ""},
      {"policy", "twitter", NODE, ";max_drift_ms=5"},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char options[128];
    SnowflakeLayout *layout = layout_of(cases[i].layout);
    SnowflakeGenerator *gen = NULL;
    SnowflakeStatus s;
    snprintf(options, sizeof options, "shared=%s%s", name, cases[i].extra);
    s = snowflake_generator_new(layout, cases[i].node, options, &gen);
    if (s == SNOWFLAKE_STATUS_OK) {
      uint64_t id = 0;
      s = snowflake_next_id(gen, &id);
      printf("%s OPENED %" PRIu64 "%s\n", cases[i].name, id, s == SNOWFLAKE_STATUS_OK ? "" : " (next_id failed)");
      snowflake_generator_free(gen);
    } else if (s == SNOWFLAKE_STATUS_SHARED_MISMATCH) {
      printf("%s %s %s\n", cases[i].name, snowflake_status_code(s), snowflake_last_error());
    } else {
      printf("%s WRONG %s %s\n", cases[i].name, snowflake_status_code(s), snowflake_last_error());
    }
    snowflake_layout_free(layout);
  }
  return 0;
}

static int killopen(const char *name, int rounds) {
  SnowflakeLayout *layout = layout_of("twitter");
  int r, no_file = 0, no_magic = 0, set_up = 0, issued = 0, failures = 0;
  const char *base = getenv("SNOWFLAKE_SHM_DIR");
  char dir[4096];
  srand((unsigned)getpid());
  for (r = 0; r < rounds; r++) {
    char options[128];
    int fds[2];
    pid_t child;
    uint64_t last = 0, got, mine;
    SnowflakeGenerator *gen = NULL;
    SnowflakeStatus s;
    struct timespec delay = {0, (long)(rand() % 400) * 1000};

    snprintf(options, sizeof options, "shared=%s-%d", name, r);
    snprintf(dir, sizeof dir, "%s/%d", base ? base : "/tmp", r);
    if (mkdir(dir, 0700) != 0 || setenv("SNOWFLAKE_SHM_DIR", dir, 1) != 0) return 1;
    if (pipe(fds) != 0) return 1;
    child = fork();
    if (child == 0) {
      SnowflakeGenerator *g = NULL;
      uint64_t id;
      close(fds[0]);
      if (snowflake_generator_new(layout, NODE, options, &g) != SNOWFLAKE_STATUS_OK) _exit(3);
      for (;;) {
        if (snowflake_next_id(g, &id) != SNOWFLAKE_STATUS_OK) _exit(4);
        if (write(fds[1], &id, sizeof id) != (ssize_t)sizeof id) _exit(5);
      }
    }
    close(fds[1]);
    nanosleep(&delay, NULL);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    /* Every ID the child wrote in full before it died. */
    while (read(fds[0], &got, sizeof got) == (ssize_t)sizeof got) {
      last = got;
      issued++;
    }
    close(fds[0]);
    /* Where the child was: no file yet, a file not set up (no magic), or set up. */
    {
      char path[8192], magic[8] = {0};
      FILE *f = NULL;
      DIR *d = opendir(dir);
      struct dirent *e;
      /* The state file: the directory's one libsnowflake-*.shm. */
      while (d != NULL && f == NULL && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "libsnowflake-", 13) == 0 && len > 17 && strcmp(e->d_name + len - 4, ".shm") == 0) {
          snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
          f = fopen(path, "rb");
        }
      }
      if (d != NULL) closedir(d);
      if (f == NULL) {
        no_file++;
      } else {
        if (fread(magic, 1, sizeof magic, f) != sizeof magic || memcmp(magic, "SNOWFLK1", 8) != 0) no_magic++;
        else set_up++;
        fclose(f);
      }
    }

    s = snowflake_generator_new(layout, NODE, options, &gen);
    if (s != SNOWFLAKE_STATUS_OK) {
      printf("round %d (killed after %ld us): opening after the kill: %s: %s\n", r, delay.tv_nsec / 1000,
             snowflake_status_code(s), snowflake_last_error());
      failures++;
      continue;
    }
    s = snowflake_next_id(gen, &mine);
    if (s != SNOWFLAKE_STATUS_OK || mine <= last) {
      printf("round %d: next id %" PRIu64 " (%s) is not above the killed child's last %" PRIu64 "\n", r, mine,
             snowflake_status_code(s), last);
      failures++;
    }
    snowflake_generator_free(gen);
  }
  printf("%d rounds: children killed before creating the file %d, while setting it up %d, after %d (%d IDs "
         "written in all); %d failures\n",
         rounds, no_file, no_magic, set_up, issued, failures);
  snowflake_layout_free(layout);
  return failures != 0;
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "draw") == 0) return draw(argv[2], (size_t)strtoul(argv[3], NULL, 10), argv[4], argv[5]);
  if (argc == 3 && strcmp(argv[1], "mismatch") == 0) return mismatch(argv[2]);
  if (argc == 4 && strcmp(argv[1], "killopen") == 0) return killopen(argv[2], atoi(argv[3]));
  fprintf(stderr, "usage: draw draw NAME COUNT OUT DIR | draw mismatch NAME\n");
  return 2;
}
