/* Speed of the C API: ns per snowflake_next_id (on a layout whose capacity is not the limit,
 * and on twitter, bound by its 4096 IDs/ms), and snowflake_next_ids throughput. Each figure
 * is the best of 11 short runs (on a shared machine the best run is the least disturbed).
 * ffi-c/examples/timing.rs measures the Rust calls the same way; tests/c/bench.sh runs both.
 * Usage: bench [label]. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <snowflake.h>

/* 22 sequence bits: 4M IDs a millisecond, so the clock never limits (as core's benches). */
#define WIDE "time:41,worker:1,sequence:22;epoch=1288834974657;tick=1ms"
#define RUNS 11

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static SnowflakeGenerator *make(const char *spec) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *g = NULL;
  if (snowflake_layout_new(spec, &layout) != SNOWFLAKE_STATUS_OK ||
      snowflake_generator_new(layout, NULL, "isolated=true", &g) != SNOWFLAKE_STATUS_OK) {
    fprintf(stderr, "setup: %s\n", snowflake_last_error());
    exit(1);
  }
  snowflake_layout_free(layout);
  return g;
}

static uint64_t sink;

/* Best ns per call of `calls` snowflake_next_id calls. */
static double time_next_id(const SnowflakeGenerator *g, long calls) {
  double best = 1e300;
  int r;
  for (r = 0; r < RUNS; r++) {
    double t0 = now_ns(), ns;
    long i;
    uint64_t id = 0, acc = 0;
    for (i = 0; i < calls; i++) {
      if (snowflake_next_id(g, &id) != SNOWFLAKE_STATUS_OK) {
        fprintf(stderr, "next_id: %s\n", snowflake_last_error());
        exit(1);
      }
      acc ^= id;
    }
    ns = (now_ns() - t0) / (double)calls;
    sink ^= acc;
    if (ns < best) best = ns;
  }
  return best;
}

/* Best IDs per second of snowflake_next_ids in batches of `batch`. */
static double time_next_ids(const SnowflakeGenerator *g, size_t batch, long ids) {
  uint64_t *buf = malloc(batch * sizeof *buf);
  double best = 0;
  int r;
  for (r = 0; r < RUNS; r++) {
    double t0 = now_ns(), rate;
    long done;
    for (done = 0; done < ids; done += (long)batch) {
      if (snowflake_next_ids(g, buf, batch) != SNOWFLAKE_STATUS_OK) {
        fprintf(stderr, "next_ids: %s\n", snowflake_last_error());
        exit(1);
      }
      sink ^= buf[batch - 1];
    }
    rate = (double)done / ((now_ns() - t0) / 1e9);
    if (rate > best) best = rate;
  }
  free(buf);
  return best;
}

int main(int argc, char **argv) {
  const char *label = argc > 1 ? argv[1] : "C";
  SnowflakeGenerator *wide = make(WIDE), *twitter = make("twitter");
  double wide_ns, twitter_ns, per_ms;

  time_next_id(wide, 1000000); /* warm up */
  wide_ns = time_next_id(wide, 2000000);
  twitter_ns = time_next_id(twitter, 1000000);
  per_ms = 1e6 / twitter_ns;
  printf("%-10s next_id, 22 sequence bits:  %6.2f ns/call\n", label, wide_ns);
  printf("%-10s next_id, twitter:           %6.2f ns/call = %.0f IDs/ms = %.1f%% of 4096/ms\n",
         label, twitter_ns, per_ms, 100.0 * per_ms / 4096.0);
  printf("%-10s next_ids(1000), 22 bits:    %6.1f M IDs/s\n", label,
         time_next_ids(wide, 1000, 10000000) / 1e6);
  printf("%-10s next_ids(100000), 22 bits:  %6.1f M IDs/s\n", label,
         time_next_ids(wide, 100000, 10000000) / 1e6);
  snowflake_generator_free(wide);
  snowflake_generator_free(twitter);
  return sink == 42 ? 2 : 0; /* use the sink so the loops are not optimized away */
}
