/* One holder of the fault-injection suite (tests/faults/run.py), in C through the release
 * libsnowflake.so: the same as holder.py (holder URL OPTIONS DIR NAME). run.py compiles it
 * against include/snowflake.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "snowflake.h"

static const char *LAYOUT = "time:41,worker:2,sequence:12;epoch=1288834974657";

static void pause_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* The address: URL, or `@FILE`'s content (read again at each look, as holder.py does). */
static void address(const char *url, char *buf, size_t len) {
    buf[0] = '\0';
    if (url[0] != '@') {
        snprintf(buf, len, "%s", url);
        return;
    }
    FILE *f = fopen(url + 1, "r");
    if (f == NULL) return;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
}

static char last[128];

static void refused(SnowflakeStatus st) {
    char key[128];
    snprintf(key, sizeof key, "%s %.48s", snowflake_status_code(st), snowflake_last_error());
    if (strcmp(key, last) != 0) {
        snprintf(last, sizeof last, "%s", key);
        printf("REFUSED %s %s\n", snowflake_status_code(st), snowflake_last_error());
        fflush(stdout);
    }
}

int main(int argc, char **argv) {
    if (argc < 5) return 2;
    const char *url = argv[1], *options = argv[2], *dir = argv[3], *name = argv[4];
    char stop_all[4096], stop_one[4096], ids[4096], opened_with[2048] = "", now[2048];
    snprintf(stop_all, sizeof stop_all, "%s/stop", dir);
    snprintf(stop_one, sizeof stop_one, "%s/%s.stop", dir, name);
    snprintf(ids, sizeof ids, "%s/%s.ids", dir, name);
    struct SnowflakeLayout *layout = NULL;
    if (snowflake_layout_new(LAYOUT, &layout) != SNOWFLAKE_STATUS_OK) return 3;
    FILE *out = fopen(ids, "a");
    if (out == NULL) return 3;
    struct SnowflakeGenerator *gen = NULL;
    uint64_t claims = 0; /* the claims seen: each new one (a lapsed lease healed) is printed */
    while (!exists(stop_all) && !exists(stop_one)) {
        address(url, now, sizeof now);
        if (gen != NULL && strcmp(now, opened_with) != 0) {
            snowflake_generator_free(gen);
            gen = NULL;
        }
        if (gen == NULL) {
            char text[4096];
            snprintf(opened_with, sizeof opened_with, "%s", now);
            snprintf(text, sizeof text, "lease=%s;%s", opened_with, options);
            SnowflakeStatus st = snowflake_generator_new(layout, NULL, text, &gen);
            if (st != SNOWFLAKE_STATUS_OK) {
                gen = NULL;
                refused(st);
                pause_ms(100);
                continue;
            }
            struct SnowflakeStats s;
            snowflake_generator_stats(gen, &s);
            last[0] = '\0';
            claims = s.lease_claims;
            printf("OPEN %lld\n", (long long)s.lease_value);
            fflush(stdout);
        }
        for (int i = 0; i < 20; i++) {
            uint64_t id;
            SnowflakeStatus st = snowflake_next_id(gen, &id);
            if (st != SNOWFLAKE_STATUS_OK) {
                refused(st);
                pause_ms(20);
                break;
            }
            last[0] = '\0'; /* issuing again: the next refusal is news */
            fprintf(out, "%llu\n", (unsigned long long)id);
        }
        fflush(out);
        struct SnowflakeStats now_held;
        if (snowflake_generator_stats(gen, &now_held) == SNOWFLAKE_STATUS_OK && now_held.lease_value >= 0 &&
            now_held.lease_claims != claims) {
            claims = now_held.lease_claims;
            printf("OPEN %lld\n", (long long)now_held.lease_value);
            fflush(stdout);
        }
        pause_ms(10);
    }
    fclose(out);
    struct SnowflakeStats s = {0};
    if (gen != NULL) snowflake_generator_stats(gen, &s);
    printf("DONE %llu %llu\n", (unsigned long long)s.lease_claims, (unsigned long long)s.lease_losses);
    snowflake_generator_free(gen);
    snowflake_layout_free(layout);
    return 0;
}
