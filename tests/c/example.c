/* The README's C example: a generator for this process, a few IDs, decoding and encoding. */
#include <inttypes.h>
#include <stdio.h>

#include <snowflake.h>

int main(void) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *gen = NULL;
  SnowflakeParts parts;
  uint64_t id, batch[1000];
  char text[21];
  SnowflakeStatus st;

  if ((st = snowflake_layout_new("twitter", &layout)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_generator_new(layout, "datacenter=1,worker=3", "max_wait_ms=100", &gen)) !=
          SNOWFLAKE_STATUS_OK ||
      (st = snowflake_next_id(gen, &id)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_next_ids(gen, batch, 1000)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_layout_decode(layout, id, &parts)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_encode(id, "base62", false, text, sizeof text)) != SNOWFLAKE_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", snowflake_status_code(st), snowflake_last_error());
    snowflake_generator_free(gen);
    snowflake_layout_free(layout);
    return 1;
  }
  /* parts.fields holds every field in layout order: time, datacenter, worker, sequence. */
  printf("id %" PRIu64 " = %s at %" PRIu64 " ms, worker %" PRIu64 "\n", id, text, parts.unix_ms,
         parts.fields[2]);

  st = snowflake_layout_compose(layout, parts.unix_ms, "worker=99", 0, &id);
  printf("%s: %s\n", snowflake_status_code(st), snowflake_last_error());

  snowflake_generator_free(gen);
  snowflake_layout_free(layout);
  return st == SNOWFLAKE_STATUS_VALUE ? 0 : 1;
}
