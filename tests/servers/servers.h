/* The C client of tests/servers/serve.py (see tests/servers/README.md). Header-only; needs
 * cJSON (pkg-config libcjson) and POSIX.
 *
 *   TestServers s;
 *   if (test_servers_start(&s, "redis", (const char *[]){"--password", "pw", NULL}, dir) != 0)
 *     fail(s.error);
 *   port = cJSON_GetObjectItem(cJSON_GetObjectItem(s.info, "redis"), "port")->valueint;
 *   test_servers_command(&s, "restart");   -- s.info is updated
 *   test_servers_stop(&s);                 -- servers stopped, files removed
 *
 * serve.py is found at $SNOWFLAKE_SERVE or TEST_SERVERS_SERVE (define it when compiling).
 * serve.py reads our end of a pipe (close-on-exec, so programs we start do not hold it): if
 * this process dies in any way, the pipe closes and the servers are stopped. */
#ifndef TEST_SERVERS_H
#define TEST_SERVERS_H

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TEST_SERVERS_SERVE
#define TEST_SERVERS_SERVE "tests/servers/serve.py"
#endif

typedef struct {
  pid_t pid;
  FILE *in;        /* commands */
  FILE *out;       /* answers */
  cJSON *info;     /* serve.py's description, updated by every command */
  char error[4096]; /* why the last call failed */
} TestServers;

static int test_servers_reply_(TestServers *s, const char *what) {
  char *line = NULL;
  size_t cap = 0;
  cJSON *reply, *ok;
  if (getline(&line, &cap, s->out) < 0) {
    free(line);
    snprintf(s->error, sizeof s->error, "%s: serve.py ended without an answer", what);
    return -1;
  }
  reply = cJSON_Parse(line);
  free(line);
  if (reply == NULL) {
    snprintf(s->error, sizeof s->error, "%s: an answer that is not JSON", what);
    return -1;
  }
  ok = cJSON_GetObjectItem(reply, "ok");
  if (!cJSON_IsTrue(ok)) {
    cJSON *e = cJSON_GetObjectItem(reply, "error"), *log = cJSON_GetObjectItem(reply, "log");
    snprintf(s->error, sizeof s->error, "%s: %s\n%s", what, cJSON_IsString(e) ? e->valuestring : "?",
             cJSON_IsString(log) ? log->valuestring : "");
    cJSON_Delete(reply);
    return -1;
  }
  cJSON_Delete(s->info);
  s->info = reply;
  return 0;
}

static void test_servers_stop(TestServers *s);

/* Starts `kind` with serve.py's options (`args`, NULL-terminated, may be NULL) in `dir` (the
 * test's temporary directory; NULL for $TMPDIR). 0 once the servers answer, else -1 with
 * s->error. */
static int test_servers_start(TestServers *s, const char *kind, const char *const *args, const char *dir) {
  int to_child[2], from_child[2];
  const char *argv[64];
  const char *serve = getenv("SNOWFLAKE_SERVE");
  size_t n = 0;
  memset(s, 0, sizeof *s);
  argv[n++] = "python3";
  argv[n++] = serve != NULL ? serve : TEST_SERVERS_SERVE;
  argv[n++] = kind;
  while (args != NULL && *args != NULL && n < 60) argv[n++] = *args++;
  if (dir != NULL) {
    argv[n++] = "--dir";
    argv[n++] = dir;
  }
  argv[n] = NULL;
  if (pipe(to_child) != 0) return -1;
  if (pipe(from_child) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    return -1;
  }
  s->pid = fork();
  if (s->pid < 0) {
    snprintf(s->error, sizeof s->error, "fork: %s", strerror(errno));
    return -1;
  }
  if (s->pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[0]);
    close(to_child[1]);
    close(from_child[0]);
    close(from_child[1]);
    execvp("python3", (char *const *)argv);
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  fcntl(to_child[1], F_SETFD, FD_CLOEXEC);
  fcntl(from_child[0], F_SETFD, FD_CLOEXEC);
  s->in = fdopen(to_child[1], "w");
  s->out = fdopen(from_child[0], "r");
  if (test_servers_reply_(s, kind) != 0) {
    char why[sizeof s->error];
    memcpy(why, s->error, sizeof why);
    test_servers_stop(s); /* serve.py has cleaned up and is exiting: reap it */
    memcpy(s->error, why, sizeof why);
    return -1;
  }
  return 0;
}

/* One command (restart, kill master, freeze, failover...): 0 and s->info updated, else -1
 * with s->error. */
static int test_servers_command(TestServers *s, const char *line) {
  if (fprintf(s->in, "%s\n", line) < 0 || fflush(s->in) != 0) {
    snprintf(s->error, sizeof s->error, "%s: cannot write to serve.py", line);
    return -1;
  }
  return test_servers_reply_(s, line);
}

/* A field of s->info by a path of keys, e.g. test_servers_get(&s, "redis", "port", NULL). */
static const cJSON *test_servers_get(const TestServers *s, ...) {
  va_list ap;
  const char *key;
  const cJSON *v = s->info;
  va_start(ap, s);
  while (v != NULL && (key = va_arg(ap, const char *)) != NULL) v = cJSON_GetObjectItemCaseSensitive(v, key);
  va_end(ap);
  return v;
}

/* Stops the servers and removes their files; returns when that is done. */
static void test_servers_stop(TestServers *s) {
  char buf[4096];
  if (s->pid <= 0) return;
  fclose(s->in); /* end of input: serve.py cleans up and exits */
  while (fread(buf, 1, sizeof buf, s->out) > 0) {
  }
  fclose(s->out);
  waitpid(s->pid, NULL, 0);
  cJSON_Delete(s->info);
  s->info = NULL;
  s->pid = 0;
}

#endif
