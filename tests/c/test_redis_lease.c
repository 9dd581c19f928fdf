/* The `lease` option with every form of Redis address, through the C API, against real servers
 * (tests/servers, started by servers.h): a password in the URL, an ACL user, IPv6 with the
 * password from a file, a unix socket with db and pass, TLS verified against a CA file, and
 * Sentinel. Core does the work; this checks that the C library hands each form over, that
 * snowflake_generator_stats reports the lease, that no ID repeats across the holders, and that
 * a wrong password or an unverified server is refused with a detail that names the problem
 * and never the password. The Sentinel holder then issues through a failover.
 *
 *   test_redis_lease <temporary directory>   (serve.py: TEST_SERVERS_SERVE or $SNOWFLAKE_SERVE) */
#define _POSIX_C_SOURCE 200809L
#include "../servers/servers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

#define LAYOUT "time:41,worker:3,sequence:12;epoch=1288834974657"
#define PER_FORM 2000
#define FORMS 6
/* After the failover: IDs, paced, until their own instants span two TTLs (renewals and
 * reservations on the new master), at most this many. */
#define AFTER_FAILOVER 20000
#define SPAN_MS 6000

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* How many IDs of ids[0..count) repeat one before them (sorts them). */
static size_t repeats_in(uint64_t *ids, size_t count) {
  size_t i, r = 0;
  qsort(ids, count, sizeof ids[0], cmp_u64);
  for (i = 1; i < count; i++) r += ids[i] == ids[i - 1];
  return r;
}

static const char *field(const TestServers *s, const char *a, const char *b) {
  const cJSON *v = b != NULL ? test_servers_get(s, a, b, NULL) : test_servers_get(s, a, NULL);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static int port_of(const TestServers *s) {
  const cJSON *v = test_servers_get(s, "redis", "port", NULL);
  return cJSON_IsNumber(v) ? v->valueint : 0;
}

/* Opens a generator leasing through `url` (plus one more option, may be NULL), or NULL with
 * the status in *status. */
static SnowflakeGenerator *open_lease(const SnowflakeLayout *layout, const char *url, const char *key,
                                      const char *value, SnowflakeStatus *status) {
  SnowflakeOptions *o = NULL;
  SnowflakeGenerator *g = NULL;
  CHECK_STATUS(snowflake_options_new("lease_ttl_ms=3000", &o), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_options_set_str(o, "lease", url), SNOWFLAKE_STATUS_OK);
  if (key != NULL) CHECK_STATUS(snowflake_options_set_str(o, key, value), SNOWFLAKE_STATUS_OK);
  *status = snowflake_generator_open(layout, NULL, o, &g);
  snowflake_options_free(o);
  return g;
}

int main(int argc, char **argv) {
  TestServers plain, tls, sentinel;
  const char *plain_args[] = {"--password", "c-pw", "--user", "capp:capp-pw", "--ipv6", NULL};
  const char *tls_args[] = {"--tls", NULL};
  const char *sentinel_args[] = {"--replicas", "1", "--sentinels", "3", NULL};
  char urls[FORMS][1024], sentinels[512] = "", wrong[256];
  const char *keys[FORMS] = {NULL}, *values[FORMS] = {NULL};
  static uint64_t all[FORMS * PER_FORM + AFTER_FAILOVER];
  size_t n = 0, i, repeats = 0;
  const cJSON *addr;
  SnowflakeLayout *layout = NULL;
  SnowflakeStatus status;
  SnowflakeGenerator *g, *held = NULL;
  int port, started = 0;
  time_t deadline;

  if (argc != 2) {
    fprintf(stderr, "usage: test_redis_lease <temporary directory>\n");
    return 2;
  }
  if (test_servers_start(&plain, "redis", plain_args, argv[1]) == 0) started |= 1;
  else CHECK(0, "redis: %s", plain.error);
  if (test_servers_start(&tls, "redis", tls_args, argv[1]) == 0) started |= 2;
  else CHECK(0, "redis --tls: %s", tls.error);
  if (test_servers_start(&sentinel, "sentinel", sentinel_args, argv[1]) == 0) started |= 4;
  else CHECK(0, "sentinel: %s", sentinel.error);
  if (started != 7) goto done;

  port = port_of(&plain);
  snprintf(urls[0], sizeof urls[0], "redis://:c-pw@127.0.0.1:%d/0", port);
  snprintf(urls[1], sizeof urls[1], "redis://capp:capp-pw@localhost:%d/1", port);
  snprintf(urls[2], sizeof urls[2], "redis://[::1]:%d/0", port);
  keys[2] = "lease_password_file";
  values[2] = field(&plain, "password_file", NULL);
  snprintf(urls[3], sizeof urls[3], "unix://%s?db=2&pass=c-pw", field(&plain, "redis", "unix_socket"));
  snprintf(urls[4], sizeof urls[4], "rediss://localhost:%d/0", port_of(&tls));
  keys[4] = "lease_tls_ca";
  values[4] = field(&tls, "tls", "ca_cert");
  cJSON_ArrayForEach(addr, test_servers_get(&sentinel, "sentinel_addrs", NULL)) {
    if (sentinels[0] != '\0') strcat(sentinels, ",");
    strncat(sentinels, addr->valuestring, sizeof sentinels - strlen(sentinels) - 2);
  }
  snprintf(urls[5], sizeof urls[5], "redis+sentinel://%s/%s/0", sentinels, field(&sentinel, "master_name", NULL));

  CHECK_STATUS(snowflake_layout_new(LAYOUT, &layout), SNOWFLAKE_STATUS_OK);
  for (i = 0; i < FORMS; i++) {
    SnowflakeStats stats = {.size = sizeof(SnowflakeStats)};
    g = open_lease(layout, urls[i], keys[i], values[i], &status);
    CHECK(status == SNOWFLAKE_STATUS_OK, "%s: %s: %s", urls[i], snowflake_status_code(status), snowflake_last_error());
    if (g == NULL) continue;
    CHECK_STATUS(snowflake_next_ids(g, all + n, PER_FORM), SNOWFLAKE_STATUS_OK);
    n += PER_FORM;
    CHECK_STATUS(snowflake_generator_stats(g, &stats), SNOWFLAKE_STATUS_OK);
    CHECK(stats.lease_claims == 1 && stats.lease_losses == 0, "%s: %llu claims, %llu losses", urls[i],
          (unsigned long long)stats.lease_claims, (unsigned long long)stats.lease_losses);
    CHECK(stats.lease_value >= 0 && stats.lease_value < 8, "%s: lease_value %lld", urls[i],
          (long long)stats.lease_value);
    if (i == FORMS - 1) held = g; /* the Sentinel holder: through a failover below */
    else snowflake_generator_free(g);
  }

  /* A failover: the holder follows the new master (it may say so with a lease error for a
   * while: retried, with a deadline of minutes that bounds a hang) and repeats nothing. */
  if (held != NULL) {
    size_t got = 0;
    uint64_t first_ms = 0, last_ms = 0;
    SnowflakeParts parts;
    SnowflakeStats stats = {.size = sizeof(SnowflakeStats)};
    CHECK(test_servers_command(&sentinel, "failover") == 0, "failover: %s", sentinel.error);
    deadline = time(NULL) + 180;
    status = SNOWFLAKE_STATUS_OK;
    while (got < AFTER_FAILOVER && last_ms < first_ms + SPAN_MS && time(NULL) < deadline) {
      status = snowflake_next_id(held, all + n + got);
      if (status != SNOWFLAKE_STATUS_OK && status != SNOWFLAKE_STATUS_LEASE) break;
      if (status == SNOWFLAKE_STATUS_OK && snowflake_layout_decode(layout, all[n + got], &parts) == SNOWFLAKE_STATUS_OK) {
        last_ms = parts.unix_ms;
        if (got++ == 0) first_ms = last_ms;
      }
      nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
    }
    CHECK(last_ms >= first_ms + SPAN_MS && got > 0, "IDs over %llu ms after the failover (%zu IDs); last: %s %s",
          (unsigned long long)(last_ms - first_ms), got, snowflake_status_code(status), snowflake_last_error());
    CHECK_STATUS(snowflake_generator_stats(held, &stats), SNOWFLAKE_STATUS_OK);
    printf("after the failover: %zu IDs over %llu ms, %llu claims, %llu losses\n", got,
           (unsigned long long)(last_ms - first_ms), (unsigned long long)stats.lease_claims,
           (unsigned long long)stats.lease_losses);
    n += got;
    snowflake_generator_free(held);
  }
  /* No repeat within a coordination domain: one Redis database of one server. Forms 0 and 2
   * lease from the plain server's db 0; forms 1 (db 1) and 3 (db 2), the TLS server and the
   * Sentinel set are domains of their own, which may legitimately hand out the same worker
   * value and issue the same IDs in the same tick (two fleets that share no Redis). */
  if (n >= FORMS * PER_FORM) {
    uint64_t block[PER_FORM];
    memcpy(block, all + PER_FORM, sizeof block); /* form 2's IDs next to form 0's */
    memcpy(all + PER_FORM, all + 2 * PER_FORM, sizeof block);
    memcpy(all + 2 * PER_FORM, block, sizeof block);
    repeats = repeats_in(all, 2 * PER_FORM);
    for (i = 2; i < FORMS - 1; i++) repeats += repeats_in(all + i * PER_FORM, PER_FORM);
    repeats += repeats_in(all + (FORMS - 1) * PER_FORM, n - (FORMS - 1) * PER_FORM);
  }
  CHECK(n >= FORMS * PER_FORM && repeats == 0, "%zu IDs, %zu repeated within a domain", n, repeats);

  /* Without a lease, the stats say so. */
  CHECK_STATUS(snowflake_generator_new(layout, "worker=1", NULL, &g), SNOWFLAKE_STATUS_OK);
  if (g != NULL) {
    SnowflakeStats stats = {.size = sizeof(SnowflakeStats)};
    CHECK_STATUS(snowflake_generator_stats(g, &stats), SNOWFLAKE_STATUS_OK);
    CHECK(stats.lease_value == -1 && stats.lease_claims == 0, "no lease: value %lld", (long long)stats.lease_value);
    snowflake_generator_free(g);
  }

  /* Refusals name the problem, never the password. */
  snprintf(wrong, sizeof wrong, "redis://:wr0ng-c@127.0.0.1:%d/0", port);
  g = open_lease(layout, wrong, NULL, NULL, &status);
  CHECK(g == NULL && status == SNOWFLAKE_STATUS_LEASE, "a wrong password: %s", snowflake_status_code(status));
  CHECK(strstr(snowflake_last_error(), "refused the credentials") != NULL &&
            strstr(snowflake_last_error(), "wr0ng-c") == NULL,
        "detail: %s", snowflake_last_error());
  snowflake_generator_free(g);
  snprintf(wrong, sizeof wrong, "rediss://127.0.0.1:%d/0", port_of(&tls));
  g = open_lease(layout, wrong, NULL, NULL, &status);
  CHECK(g == NULL && status == SNOWFLAKE_STATUS_LEASE, "an unverified server: %s", snowflake_status_code(status));
  CHECK(strstr(snowflake_last_error(), "certificate") != NULL, "detail: %s", snowflake_last_error());
  snowflake_generator_free(g);

done:
  snowflake_layout_free(layout);
  if (started & 1) test_servers_stop(&plain);
  if (started & 2) test_servers_stop(&tls);
  if (started & 4) test_servers_stop(&sentinel);
  printf("RESULT %d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed != 0;
}
