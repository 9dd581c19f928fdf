/* A C program of a user of another platform's package (tests/dist/platforms.sh): built with
 * that platform's C compiler (aarch64-linux-gnu-gcc, musl-gcc, mingw-w64) against the
 * package's library, and run where this machine can run it (qemu-user, natively, Wine).
 *
 *     threads <layout> <node> <options> <ids per thread>
 *
 * Four threads draw IDs from one generator, in blocks of up to 1000 (snowflake_next_ids) and
 * one at a time (snowflake_next_id); then every ID must be distinct, each thread's IDs
 * increasing, and each ID must carry the node values given. Prints the library's
 * version and the last ID, and ends with "RESULT <p> passed, <f> failed".
 */
#include "snowflake.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4

static int passed, failed;

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL %s\n", what);
    }
}

struct work {
    const SnowflakeGenerator *g;
    uint64_t *ids;
    size_t n;
    SnowflakeStatus status;
};

static void *draw(void *arg)
{
    struct work *w = arg;
    size_t done = 0;
    while (done < w->n) {
        size_t want = w->n - done;
        if (want > 1000) {
            want = 1000;
        }
        /* Every other round one ID at a time: both entry points, side by side. */
        if ((done / 1000) % 2 == 1) {
            want = 1;
            w->status = snowflake_next_id(w->g, &w->ids[done]);
        } else {
            w->status = snowflake_next_ids(w->g, &w->ids[done], want);
        }
        if (w->status != SNOWFLAKE_STATUS_OK) {
            return NULL;
        }
        done += want;
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s <layout> <node> <options> <ids per thread>\n", argv[0]);
        return 2;
    }
    size_t per_thread = (size_t)strtoull(argv[4], NULL, 10);
    printf("libsnowflake %s\n", snowflake_version());
    check(strcmp(snowflake_version(), SNOWFLAKE_VERSION) == 0, "the library's version is the header's");

    SnowflakeLayout *layout = NULL;
    SnowflakeGenerator *g = NULL;
    SnowflakeStatus st = snowflake_layout_new(argv[1], &layout);
    check(st == SNOWFLAKE_STATUS_OK, "snowflake_layout_new");
    if (st == SNOWFLAKE_STATUS_OK) {
        st = snowflake_generator_new(layout, argv[2], argv[3], &g);
        if (st != SNOWFLAKE_STATUS_OK) {
            printf("snowflake_generator_new: %s: %s\n", snowflake_status_code(st), snowflake_last_error());
        }
        check(st == SNOWFLAKE_STATUS_OK, "snowflake_generator_new");
    }
    if (g == NULL) {
        snowflake_layout_free(layout);
        printf("RESULT %d passed, %d failed\n", passed, failed);
        return 1;
    }

    uint64_t *all = calloc(THREADS * per_thread, sizeof *all);
    struct work work[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
        work[t] = (struct work){ g, all + t * per_thread, per_thread, SNOWFLAKE_STATUS_OK };
        check(pthread_create(&threads[t], NULL, draw, &work[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        if (work[t].status != SNOWFLAKE_STATUS_OK) {
            printf("thread %d: %s: %s\n", t, snowflake_status_code(work[t].status), snowflake_last_error());
        }
        check(work[t].status == SNOWFLAKE_STATUS_OK, "every thread's IDs issued");
        int increasing = 1;
        for (size_t i = 1; i < per_thread; i++) {
            increasing &= work[t].ids[i - 1] < work[t].ids[i];
        }
        check(increasing, "each thread's IDs increase");
    }

    /* Every ID carries the generator's node values: composed again from its own time and
     * sequence with the node text given, it is the same ID. */
    size_t foreign = 0;
    SnowflakeParts parts;
    for (size_t i = 0; i < THREADS * per_thread; i++) {
        uint64_t again = 0;
        if (snowflake_layout_decode(layout, all[i], &parts) != SNOWFLAKE_STATUS_OK ||
            snowflake_layout_compose(layout, parts.unix_ms, argv[2], parts.sequence, &again) != SNOWFLAKE_STATUS_OK ||
            again != all[i]) {
            foreign++;
        }
    }
    check(foreign == 0, "every ID decodes to the generator's node values");
    uint64_t last = all[THREADS * per_thread - 1];
    snowflake_layout_decode(layout, last, &parts);
    printf("last ID %" PRIu64 ": unix_ms %" PRIu64 ", sequence %" PRIu64 "\n", last, parts.unix_ms, parts.sequence);

    qsort(all, THREADS * per_thread, sizeof *all, by_value);
    size_t repeats = 0;
    for (size_t i = 1; i < THREADS * per_thread; i++) {
        repeats += all[i - 1] == all[i];
    }
    printf("%zu IDs from %d threads, %zu repeated\n", THREADS * per_thread, THREADS, repeats);
    check(repeats == 0, "no ID repeated across the threads");

    free(all);
    snowflake_generator_free(g);
    snowflake_layout_free(layout);
    printf("RESULT %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
