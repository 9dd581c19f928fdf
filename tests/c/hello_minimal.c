/* A static hello-world: a generator for this process and one ID. tests/dist/run.sh links it
 * against libsnowflake_minimal.a and against the full libsnowflake.a, stripped and with
 * --gc-sections, and compares their sizes (issue 29). The minimal library has no leases: it
 * refuses `lease=local` with SNOWFLAKE_STATUS_VALUE: "libsnowflake_minimal has no leases: link
 * libsnowflake". It does read
 * the deployment's configuration (SNOWFLAKE_LAYOUT, SNOWFLAKE_NODE, SNOWFLAKE_OPTIONS) as the
 * full one does (issue 28). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <snowflake.h>

int main(void) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *ids = NULL, *leased = NULL, *deployed = NULL;
  SnowflakeParts parts;
  uint64_t id, worker = 0;
  char sources[2048];
  SnowflakeStatus st;
  if ((st = snowflake_layout_new("twitter", &layout)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_generator_new(layout, "datacenter=1,worker=1", NULL, &ids)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_next_id(ids, &id)) != SNOWFLAKE_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", snowflake_status_code(st), snowflake_last_error());
    return 1;
  }
  printf("id %" PRIu64 "\n", id);

  /* The code names the layout; the node values and the options come from the environment
   * (a Kubernetes pod's SNOWFLAKE_NODE), and the generator says where each came from. */
  if ((st = snowflake_generator_from_env(layout, NULL, NULL, &deployed)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_next_id(deployed, &id)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_layout_decode(layout, id, &parts)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_layout_field_value(layout, &parts, "worker", &worker)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_generator_sources(deployed, sources, sizeof sources)) != SNOWFLAKE_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", snowflake_status_code(st), snowflake_last_error());
    return 1;
  }
  /* `layout=code;node=SNOWFLAKE_NODE;…`: the first two sources. */
  *strchr(strchr(sources, ';') + 1, ';') = '\0';
  printf("from the environment: worker=%" PRIu64 " (%s)\n", worker, sources);

  st = snowflake_generator_new(layout, "datacenter=1", "lease=local", &leased);
  if (st == SNOWFLAKE_STATUS_OK) {
    printf("lease=local: %s\n", snowflake_status_code(st));
  } else {
    printf("lease=local: %s (%s)\n", snowflake_status_code(st), snowflake_last_error());
  }
  snowflake_generator_free(leased);
  snowflake_generator_free(deployed);
  snowflake_generator_free(ids);
  snowflake_layout_free(layout);
  return st == SNOWFLAKE_STATUS_OK || st == SNOWFLAKE_STATUS_VALUE ? 0 : 1;
}
