/* The README's C example: a generator for this process, a few IDs, decoding and encoding,
 * public IDs. */
#include <inttypes.h>
#include <stdio.h>

#include <snowflake.h>

int main(void) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *gen = NULL;
  SnowflakePublicIds *public_ids = NULL;
  SnowflakeParts parts;
  uint64_t id, back, worker, batch[1000];
  char text[21], shown[21];
  /* In production: 16 secret random bytes, the same in every process that shows IDs. */
  const uint8_t key[16] = {0x5e, 0x1f, 0x9c, 0x07, 0x3a, 0xd2, 0x64, 0xb8,
                           0x21, 0xee, 0x40, 0x9b, 0x73, 0x0d, 0xc5, 0x16};
  int round_trip;
  SnowflakeStatus st;

  if ((st = snowflake_layout_new("twitter", &layout)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_generator_new(layout, "datacenter=1,worker=3", "max_wait_ms=100", &gen)) !=
          SNOWFLAKE_STATUS_OK ||
      (st = snowflake_next_id(gen, &id)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_next_ids(gen, batch, 1000)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_layout_decode(layout, id, &parts)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_layout_field_value(layout, &parts, "worker", &worker)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_encode(id, "base62", false, text, sizeof text)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_public_new(key, sizeof key, NULL, &public_ids)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_public_encode(public_ids, id, shown, sizeof shown)) != SNOWFLAKE_STATUS_OK ||
      (st = snowflake_public_decode(public_ids, shown, &back)) != SNOWFLAKE_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", snowflake_status_code(st), snowflake_last_error());
    snowflake_public_free(public_ids);
    snowflake_generator_free(gen);
    snowflake_layout_free(layout);
    return 1;
  }
  /* A field by name; parts.fields also holds every field in layout order (time, datacenter,
   * worker, sequence). */
  printf("id %" PRIu64 " = %s at %" PRIu64 " ms, worker %" PRIu64 "\n", id, text, parts.unix_ms,
         worker);
  /* The same ID for the public: encrypted, it shows neither its time nor its order. */
  round_trip = back == id;
  printf("public %s, decodes back: %s\n", shown, round_trip ? "yes" : "NO");

  st = snowflake_layout_compose(layout, parts.unix_ms, "worker=99", 0, &id);
  printf("%s: %s\n", snowflake_status_code(st), snowflake_last_error());

  snowflake_public_free(public_ids);
  snowflake_generator_free(gen);
  snowflake_layout_free(layout);
  return st == SNOWFLAKE_STATUS_VALUE && round_trip ? 0 : 1;
}
