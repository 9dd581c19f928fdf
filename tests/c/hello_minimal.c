/* A static hello-world: a generator for this process and one ID. tests/dist/run.sh links it
 * against libsnowflake_minimal.a and against the full libsnowflake.a, stripped and with
 * --gc-sections, and compares their sizes (issue 29). The minimal library has no leases: it
 * refuses `lease=local` with SNOWFLAKE_STATUS_VALUE, naming the feature it lacks. */
#include <inttypes.h>
#include <stdio.h>

#include <snowflake.h>

int main(void) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *ids = NULL, *leased = NULL;
  uint64_t id;
  SnowflakeStatus st;
  if ((st = snowflake_layout_new("twitter", &layout)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_generator_new(layout, "datacenter=1,worker=1", NULL, &ids)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_next_id(ids, &id)) != SNOWFLAKE_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", snowflake_status_code(st), snowflake_last_error());
    return 1;
  }
  printf("id %" PRIu64 "\n", id);
  st = snowflake_generator_new(layout, "datacenter=1", "lease=local", &leased);
  if (st == SNOWFLAKE_STATUS_OK) {
    printf("lease=local: %s\n", snowflake_status_code(st));
  } else {
    printf("lease=local: %s (%s)\n", snowflake_status_code(st), snowflake_last_error());
  }
  snowflake_generator_free(leased);
  snowflake_generator_free(ids);
  snowflake_layout_free(layout);
  return st == SNOWFLAKE_STATUS_OK || st == SNOWFLAKE_STATUS_VALUE ? 0 : 1;
}
