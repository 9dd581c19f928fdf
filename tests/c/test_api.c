/* The C API against the shared vectors (tests/vectors: layouts, encodings, generator, Redis
 * scripts), every error path, threads sharing one generator, and fork().
 * Usage: test_api <vectors-dir> [ids-per-thread]. */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid, mkdtemp, setenv */

#include <cjson/cJSON.h>
#include <ctype.h>
#include <inttypes.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* ---- helpers ------------------------------------------------------------------------- */

static cJSON *load_json(const char *dir, const char *name) {
  char path[1024];
  FILE *f;
  long size;
  char *text;
  cJSON *json;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = malloc((size_t)size + 1);
  if (text == NULL || fread(text, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  text[size] = '\0';
  fclose(f);
  json = cJSON_Parse(text);
  free(text);
  if (json == NULL) {
    fprintf(stderr, "%s is not JSON\n", path);
    exit(2);
  }
  return json;
}

/* IDs and fingerprints are decimal strings in the vectors (they exceed 2^53). */
static uint64_t u64_of(const cJSON *item) {
  if (cJSON_IsString(item)) return strtoull(item->valuestring, NULL, 10);
  return (uint64_t)item->valuedouble;
}

static uint64_t u64_field(const cJSON *obj, const char *key) {
  return u64_of(cJSON_GetObjectItemCaseSensitive(obj, key));
}

static const char *str_field(const cJSON *obj, const char *key) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

static void to_lower(const char *s, char *buf, size_t len) {
  size_t i;
  for (i = 0; s[i] != '\0' && i + 1 < len; i++) buf[i] = (char)tolower((unsigned char)s[i]);
  buf[i] = '\0';
}

/* Case-insensitive: `message_contains` quotes the core's message, which quotes the input. */
static int contains_lower(const char *haystack, const char *needle) {
  char h[1024], n[256];
  to_lower(haystack, h, sizeof h);
  to_lower(needle, n, sizeof n);
  return strstr(h, n) != NULL;
}

/* {"worker": 1, "process": 0} -> "worker=1,process=0" */
static void node_text(const cJSON *fields, char *buf, size_t len) {
  const cJSON *f;
  size_t used = 0;
  buf[0] = '\0';
  cJSON_ArrayForEach(f, fields) {
    used += (size_t)snprintf(buf + used, len - used, "%s%s=%" PRIu64, used ? "," : "",
                             f->string, u64_of(f));
  }
}

static int field_index(const SnowflakeLayout *layout, const char *name) {
  size_t i, n = snowflake_layout_field_count(layout);
  SnowflakeField field;
  for (i = 0; i < n; i++) {
    if (snowflake_layout_field(layout, i, &field) == SNOWFLAKE_STATUS_OK &&
        strcmp(field.name, name) == 0)
      return (int)i;
  }
  return -1;
}

/* ---- versions and statuses ----------------------------------------------------------- */

static void test_version(void) {
  char macros[64];
  snprintf(macros, sizeof macros, "%d.%d.%d", SNOWFLAKE_VERSION_MAJOR, SNOWFLAKE_VERSION_MINOR,
           SNOWFLAKE_VERSION_PATCH);
  CHECK(strcmp(snowflake_version(), SNOWFLAKE_VERSION) == 0, "library %s, header %s",
        snowflake_version(), SNOWFLAKE_VERSION);
  CHECK(strcmp(macros, SNOWFLAKE_VERSION) == 0, "macros %s, string %s", macros,
        SNOWFLAKE_VERSION);
}

static void test_statuses(void) {
  static const char *const codes[] = {
      "OK", "ERR_SNOWFLAKE_NULL_ARGUMENT", "ERR_SNOWFLAKE_INVALID_UTF8", "ERR_SNOWFLAKE_LAYOUT",
      "ERR_SNOWFLAKE_VALUE", "ERR_SNOWFLAKE_INVALID_ID", "ERR_SNOWFLAKE_TIME_RANGE",
      "ERR_SNOWFLAKE_CLOCK_BEHIND", "ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED", "ERR_SNOWFLAKE_FORKED",
      "ERR_SNOWFLAKE_BUFFER_TOO_SMALL", "ERR_SNOWFLAKE_PANIC", "ERR_SNOWFLAKE_SHARED_MISMATCH",
      "ERR_SNOWFLAKE_LEASE", "ERR_SNOWFLAKE_STATE_FILE", "ERR_SNOWFLAKE_IO", "ERR_SNOWFLAKE_TYPE",
      "ERR_SNOWFLAKE_BUSY"};
  uint32_t s;
  for (s = 0; s <= SNOWFLAKE_STATUS_BUSY; s++) {
    CHECK(strcmp(snowflake_status_code(s), codes[s]) == 0, "status %u: %s", (unsigned)s,
          snowflake_status_code(s));
    CHECK(strlen(snowflake_status_str(s)) > 0, "status %u has no text", (unsigned)s);
  }
  CHECK(strcmp(snowflake_status_code(99), "ERR_SNOWFLAKE_UNKNOWN") == 0, "%s",
        snowflake_status_code(99));
  CHECK(strcmp(snowflake_status_str(99), "unknown status") == 0, "%s", snowflake_status_str(99));
}

/* ---- vectors: layouts ---------------------------------------------------------------- */

static void test_layout_vector(const cJSON *v) {
  const char *spec = str_field(v, "spec");
  SnowflakeLayout *layout = NULL;
  char text[1024];
  uint64_t epoch_ms = 0, tick_ms = 0, last_unix_ms = 0, id = 0;
  uint8_t total_bits = 0;
  const cJSON *fields = cJSON_GetObjectItemCaseSensitive(v, "fields");
  const cJSON *item;
  size_t i = 0, seq_bits = 0;

  if (CHECK_STATUS(snowflake_layout_new(spec, &layout), SNOWFLAKE_STATUS_OK)) return;
  CHECK_STATUS(snowflake_layout_to_string(layout, text, sizeof text), SNOWFLAKE_STATUS_OK);
  CHECK(strcmp(text, str_field(v, "canonical")) == 0, "%s: canonical %s", spec, text);
  CHECK(snowflake_layout_fingerprint(layout) == u64_field(v, "fingerprint"),
        "%s: fingerprint %" PRIu64, spec, snowflake_layout_fingerprint(layout));
  CHECK_STATUS(snowflake_layout_info(layout, &epoch_ms, &tick_ms, &last_unix_ms, &total_bits),
               SNOWFLAKE_STATUS_OK);
  CHECK(epoch_ms == u64_field(v, "epoch_ms"), "%s: epoch %" PRIu64, spec, epoch_ms);
  CHECK(tick_ms == u64_field(v, "tick_ms"), "%s: tick %" PRIu64, spec, tick_ms);
  CHECK(last_unix_ms == u64_field(v, "last_unix_ms"), "%s: last %" PRIu64, spec, last_unix_ms);
  CHECK(total_bits == u64_field(v, "total_bits"), "%s: bits %u", spec, (unsigned)total_bits);

  CHECK(snowflake_layout_field_count(layout) == (size_t)cJSON_GetArraySize(fields),
        "%s: %zu fields", spec, snowflake_layout_field_count(layout));
  cJSON_ArrayForEach(item, fields) {
    SnowflakeField f;
    const char *name = str_field(item, "name");
    SnowflakeFieldKind kind = i == 0                             ? SNOWFLAKE_FIELD_TIME
                              : strcmp(name, "sequence") == 0 ? SNOWFLAKE_FIELD_SEQUENCE
                                                               : SNOWFLAKE_FIELD_NODE;
    if (CHECK_STATUS(snowflake_layout_field(layout, i, &f), SNOWFLAKE_STATUS_OK) == 0) {
      CHECK(strcmp(f.name, name) == 0, "%s: field %zu is %s", spec, i, f.name);
      CHECK(f.bits == u64_field(item, "bits"), "%s.%s: bits %u", spec, name, (unsigned)f.bits);
      CHECK(f.shift == u64_field(item, "shift"), "%s.%s: shift %u", spec, name,
            (unsigned)f.shift);
      CHECK(f.kind == kind, "%s.%s: kind %u", spec, name, (unsigned)f.kind);
      if (kind == SNOWFLAKE_FIELD_SEQUENCE) seq_bits = f.bits;
    }
    i++;
  }
  CHECK(((uint64_t)1 << seq_bits) == u64_field(v, "capacity_per_tick"), "%s: capacity", spec);

  cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(v, "decode")) {
    SnowflakeParts p;
    const cJSON *fv;
    uint64_t want = u64_field(item, "id");
    if (CHECK_STATUS(snowflake_layout_decode(layout, want, &p), SNOWFLAKE_STATUS_OK)) continue;
    CHECK(p.id == want, "%s: id", spec);
    CHECK(p.unix_ms == u64_field(item, "unix_ms"), "%s %" PRIu64 ": unix_ms %" PRIu64, spec,
          want, p.unix_ms);
    CHECK(p.tick == u64_field(item, "tick"), "%s %" PRIu64 ": tick", spec, want);
    CHECK(p.sequence == u64_field(item, "sequence"), "%s %" PRIu64 ": sequence", spec, want);
    CHECK(p.field_count == snowflake_layout_field_count(layout), "%s: field_count", spec);
    CHECK(p.fields[0] == p.tick, "%s: fields[0] is the tick", spec);
    cJSON_ArrayForEach(fv, cJSON_GetObjectItemCaseSensitive(item, "fields")) {
      int at = field_index(layout, fv->string);
      CHECK(at > 0 && p.fields[at] == u64_of(fv), "%s %" PRIu64 ": %s", spec, want, fv->string);
    }
    /* And back: compose gives the same ID. */
    node_text(cJSON_GetObjectItemCaseSensitive(item, "fields"), text, sizeof text);
    CHECK_STATUS(snowflake_layout_compose(layout, p.unix_ms, text, p.sequence, &id),
                 SNOWFLAKE_STATUS_OK);
    CHECK(id == want, "%s: compose %" PRIu64 " != %" PRIu64, spec, id, want);
  }

  cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(v, "bounds")) {
    uint64_t lo = 0, hi = 0, ms = u64_field(item, "unix_ms");
    CHECK_STATUS(snowflake_layout_min_id(layout, ms, &lo), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_layout_max_id(layout, ms, &hi), SNOWFLAKE_STATUS_OK);
    CHECK(lo == u64_field(item, "min_id"), "%s: min_id %" PRIu64, spec, lo);
    CHECK(hi == u64_field(item, "max_id"), "%s: max_id %" PRIu64, spec, hi);
  }
  snowflake_layout_free(layout);
}

static void test_layout_vectors(const char *dir) {
  cJSON *json = load_json(dir, "layouts.json");
  const cJSON *v;
  int n = 0;
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "layouts")) {
    test_layout_vector(v);
    n++;
  }
  CHECK(n > 0, "no layouts in layouts.json");

  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "compose")) {
    SnowflakeLayout *layout = NULL;
    char node[512];
    uint64_t id = 0;
    SnowflakeStatus st;
    const char *error = str_field(v, "error");
    if (CHECK_STATUS(snowflake_layout_new(str_field(v, "spec"), &layout), SNOWFLAKE_STATUS_OK))
      continue;
    node_text(cJSON_GetObjectItemCaseSensitive(v, "fields"), node, sizeof node);
    st = snowflake_layout_compose(layout, u64_field(v, "unix_ms"), node, u64_field(v, "sequence"),
                                  &id);
    if (error) {
      CHECK(strcmp(snowflake_status_code(st), error) == 0, "compose %s: %s, expected %s", node,
            snowflake_status_code(st), error);
      CHECK(id == 0, "compose wrote its output on failure");
    } else {
      CHECK(st == SNOWFLAKE_STATUS_OK && id == u64_field(v, "id"), "compose %s: %s %" PRIu64,
            node, snowflake_status_code(st), id);
    }
    snowflake_layout_free(layout);
  }

  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "invalid")) {
    SnowflakeLayout *layout = (SnowflakeLayout *)&n; /* must stay untouched */
    const char *spec = str_field(v, "spec");
    SnowflakeStatus st = snowflake_layout_new(spec, &layout);
    CHECK(strcmp(snowflake_status_code(st), str_field(v, "error")) == 0, "\"%s\": %s", spec,
          snowflake_status_code(st));
    CHECK(contains_lower(snowflake_last_error(), str_field(v, "message_contains")),
          "\"%s\": detail \"%s\" lacks \"%s\"", spec, snowflake_last_error(),
          str_field(v, "message_contains"));
    CHECK(layout == (SnowflakeLayout *)&n, "\"%s\": output written on failure", spec);
  }

  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "decode_invalid")) {
    SnowflakeLayout *layout = NULL;
    SnowflakeParts parts;
    SnowflakeStatus st;
    if (CHECK_STATUS(snowflake_layout_new(str_field(v, "spec"), &layout), SNOWFLAKE_STATUS_OK))
      continue;
    parts.id = 12345;
    st = snowflake_layout_decode(layout, u64_field(v, "id"), &parts);
    CHECK(strcmp(snowflake_status_code(st), str_field(v, "error")) == 0, "decode %s: %s",
          str_field(v, "id"), snowflake_status_code(st));
    CHECK(parts.id == 12345, "decode wrote its output on failure");
    snowflake_layout_free(layout);
  }
  cJSON_Delete(json);
}

/* ---- vectors: encodings -------------------------------------------------------------- */

static void test_encoding_vectors(const char *dir) {
  static const char *const names[] = {"decimal", "hex", "base32", "base36", "base58", "base62"};
  cJSON *json = load_json(dir, "encodings.json");
  const cJSON *v;
  size_t e;
  int r;

  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "ids")) {
    uint64_t id = u64_field(v, "id");
    for (r = 0; r < 2; r++) {
      const cJSON *forms = cJSON_GetObjectItemCaseSensitive(v, r ? "reverse" : "plain");
      for (e = 0; e < sizeof names / sizeof names[0]; e++) {
        char buf[21];
        uint64_t back = 0;
        const char *want = str_field(forms, names[e]);
        CHECK_STATUS(snowflake_encode(id, names[e], r != 0, buf, sizeof buf), SNOWFLAKE_STATUS_OK);
        CHECK(want && strcmp(buf, want) == 0, "%" PRIu64 " %s%s: %s", id, names[e],
              r ? " reverse" : "", buf);
        CHECK_STATUS(snowflake_decode_str(want, names[e], r != 0, &back), SNOWFLAKE_STATUS_OK);
        CHECK(back == id, "decode_str %s %s: %" PRIu64, want, names[e], back);
      }
    }
  }
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "aliases")) {
    uint64_t back = 0;
    CHECK_STATUS(snowflake_decode_str(str_field(v, "text"), str_field(v, "encoding"), false, &back),
                 SNOWFLAKE_STATUS_OK);
    CHECK(back == u64_field(v, "id"), "alias %s: %" PRIu64, str_field(v, "text"), back);
  }
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "invalid")) {
    uint64_t back = 777;
    SnowflakeStatus st =
        snowflake_decode_str(str_field(v, "text"), str_field(v, "encoding"), false, &back);
    CHECK(strcmp(snowflake_status_code(st), str_field(v, "error")) == 0, "invalid %s \"%s\": %s",
          str_field(v, "encoding"), str_field(v, "text"), snowflake_status_code(st));
    CHECK(back == 777, "decode_str wrote its output on failure");
  }
  cJSON_Delete(json);
}

/* ---- vectors: generator traces ------------------------------------------------------- */

static void test_generator_vectors(const char *dir) {
  cJSON *json = load_json(dir, "generator.json");
  const cJSON *trace;
  int n = 0;
  cJSON_ArrayForEach(trace, cJSON_GetObjectItemCaseSensitive(json, "traces")) {
    const char *name = str_field(trace, "name");
    SnowflakeLayout *layout = NULL;
    SnowflakeGenerator *g = NULL;
    const cJSON *step;
    int i = 0;
    n++;
    if (CHECK_STATUS(snowflake_layout_new(str_field(trace, "layout"), &layout),
                     SNOWFLAKE_STATUS_OK))
      continue;
    if (CHECK_STATUS(snowflake_generator_new(layout, str_field(trace, "node_spec"),
                                             str_field(trace, "options"), &g),
                     SNOWFLAKE_STATUS_OK)) {
      snowflake_layout_free(layout);
      continue;
    }
    cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(trace, "steps")) {
      uint64_t id = 0;
      SnowflakeStatus st = snowflake_next_id_at(g, u64_field(step, "unix_ms"), &id);
      const char *error = str_field(step, "error");
      if (error) {
        CHECK(strcmp(snowflake_status_code(st), error) == 0, "%s, step %d: %s, expected %s", name,
              i, snowflake_status_code(st), error);
      } else {
        CHECK(st == SNOWFLAKE_STATUS_OK && id == u64_field(step, "id"),
              "%s, step %d: %s %" PRIu64 ", expected %s", name, i, snowflake_status_code(st), id,
              str_field(step, "id"));
      }
      i++;
    }
    snowflake_generator_free(g);
    snowflake_layout_free(layout);
  }
  CHECK(n > 0, "no traces in generator.json");
  cJSON_Delete(json);
}

/* ---- error paths --------------------------------------------------------------------- */

#define CHECK_DETAIL(piece) \
  CHECK(strstr(snowflake_last_error(), piece) != NULL, "detail \"%s\"", snowflake_last_error())

static void test_layout_errors(void) {
  SnowflakeLayout *layout = NULL, *untouched = (SnowflakeLayout *)&layout;
  SnowflakeField field;
  SnowflakeParts parts;
  char buf[128];
  uint64_t out = 42;
  size_t need;

  CHECK_STATUS(snowflake_layout_new(NULL, &layout), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_DETAIL("`spec`");
  CHECK_STATUS(snowflake_layout_new("twitter", NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_DETAIL("`out`");
  CHECK_STATUS(snowflake_layout_new("time:41,w\xff:5,sequence:12", &untouched),
               SNOWFLAKE_STATUS_INVALID_UTF8);
  CHECK_STATUS(snowflake_layout_new("time:41,worker:5,sequence:30", &untouched),
               SNOWFLAKE_STATUS_LAYOUT);
  CHECK_DETAIL("76 bits");
  CHECK(untouched == (SnowflakeLayout *)&layout, "layout_new wrote its output on failure");

  if (CHECK_STATUS(snowflake_layout_new("twitter", &layout), SNOWFLAKE_STATUS_OK)) return;

  CHECK_STATUS(snowflake_layout_to_string(NULL, buf, sizeof buf), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_to_string(layout, NULL, sizeof buf),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_to_string(layout, buf, sizeof buf), SNOWFLAKE_STATUS_OK);
  need = strlen(buf) + 1;
  memset(buf, 'x', sizeof buf);
  CHECK_STATUS(snowflake_layout_to_string(layout, buf, need - 1), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK(buf[0] == 'x' && buf[need - 2] == 'x', "to_string wrote into a short buffer");
  CHECK_DETAIL("bytes");
  CHECK_STATUS(snowflake_layout_to_string(layout, buf, 0), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK_STATUS(snowflake_layout_to_string(layout, buf, need), SNOWFLAKE_STATUS_OK);
  CHECK(strlen(buf) == need - 1, "to_string into an exact buffer");

  CHECK(snowflake_layout_fingerprint(NULL) == 0, "fingerprint(NULL)");
  CHECK(snowflake_layout_field_count(NULL) == 0, "field_count(NULL)");
  CHECK_DETAIL("`layout`");

  CHECK_STATUS(snowflake_layout_field(NULL, 0, &field), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_field(layout, 0, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  field.bits = 99;
  CHECK_STATUS(snowflake_layout_field(layout, 4, &field), SNOWFLAKE_STATUS_VALUE);
  CHECK(field.bits == 99, "layout_field wrote its output on failure");
  CHECK_DETAIL("largest allowed is 3");

  CHECK_STATUS(snowflake_layout_info(NULL, &out, NULL, NULL, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_info(layout, NULL, NULL, NULL, NULL), SNOWFLAKE_STATUS_OK);

  CHECK_STATUS(snowflake_layout_decode(NULL, 1, &parts), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_decode(layout, 1, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_decode(layout, UINT64_MAX, &parts), SNOWFLAKE_STATUS_INVALID_ID);

  CHECK_STATUS(snowflake_layout_compose(NULL, 1700000000000u, NULL, 0, &out),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_compose(layout, 1700000000000u, NULL, 0, NULL),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_compose(layout, 1700000000000u, "worker=x", 0, &out),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_layout_compose(layout, 1700000000000u, "shard=1", 0, &out),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("shard");
  CHECK_STATUS(snowflake_layout_compose(layout, 1700000000000u, "worker=32", 0, &out),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("worker = 32");
  CHECK_STATUS(snowflake_layout_compose(layout, 1700000000000u, "sequence=1", 0, &out),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_layout_compose(layout, 1700000000000u, "", 4096, &out),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_layout_compose(layout, 0, "", 0, &out), SNOWFLAKE_STATUS_TIME_RANGE);
  CHECK_STATUS(snowflake_layout_compose(layout, 1700000000000u, "worker=\xc3", 0, &out),
               SNOWFLAKE_STATUS_INVALID_UTF8);
  CHECK(out == 42, "compose wrote its output on failure");
  CHECK_STATUS(snowflake_layout_compose(layout, 1700000000000u, NULL, 0, &out), SNOWFLAKE_STATUS_OK);

  CHECK_STATUS(snowflake_layout_min_id(NULL, 1700000000000u, &out), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_min_id(layout, 1700000000000u, NULL),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_max_id(NULL, 1700000000000u, &out), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_max_id(layout, 1700000000000u, NULL),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_min_id(layout, 1, &out), SNOWFLAKE_STATUS_TIME_RANGE);
  CHECK_DETAIL("before the layout's epoch");
  CHECK_STATUS(snowflake_layout_max_id(layout, UINT64_MAX, &out), SNOWFLAKE_STATUS_TIME_RANGE);
  CHECK_DETAIL("past the layout's last instant");

  snowflake_layout_free(layout);
  snowflake_layout_free(NULL);
  snowflake_generator_free(NULL);
  CHECK(1, "free(NULL) is a no-op");
}

/* The longest canonical text a layout can have fits in the documented 1024 bytes. */
static void test_longest_layout_text(void) {
  char spec[1024], buf[1024];
  size_t used = 0;
  int i;
  SnowflakeLayout *layout = NULL;
  used += (size_t)snprintf(spec + used, sizeof spec - used, "time:1");
  for (i = 0; i < 14; i++)
    used += (size_t)snprintf(spec + used, sizeof spec - used, ",n%030d:1", i);
  snprintf(spec + used, sizeof spec - used,
           ",sequence:1;epoch=18446744073709551000;tick=1ms");
  if (CHECK_STATUS(snowflake_layout_new(spec, &layout), SNOWFLAKE_STATUS_OK)) return;
  CHECK_STATUS(snowflake_layout_to_string(layout, buf, sizeof buf), SNOWFLAKE_STATUS_OK);
  snowflake_layout_free(layout);
}

static void test_generator_errors(void) {
  SnowflakeLayout *layout = NULL, *tiny = NULL;
  SnowflakeGenerator *g = NULL, *untouched = (SnowflakeGenerator *)&g;
  SnowflakeBlock block = {7, 7, 7};
  SnowflakeStats stats = {.size = sizeof(SnowflakeStats)};
  uint64_t id = 42, buf[8];

  if (CHECK_STATUS(snowflake_layout_new("twitter", &layout), SNOWFLAKE_STATUS_OK)) return;
  CHECK_STATUS(snowflake_generator_new(NULL, NULL, NULL, &g), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_generator_new(layout, NULL, NULL, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_generator_new(layout, "worker=32", NULL, &untouched),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("worker = 32 is out of range: the largest allowed is 31");
  CHECK_STATUS(snowflake_generator_new(layout, "worker", NULL, &untouched), SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_generator_new(layout, "time=3", NULL, &untouched), SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_generator_new(layout, "\xff=1", NULL, &untouched),
               SNOWFLAKE_STATUS_INVALID_UTF8);
  CHECK_DETAIL("`node`");
  CHECK_STATUS(snowflake_generator_new(layout, NULL, "max_wait=3", &untouched),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("max_wait");
  CHECK_STATUS(snowflake_generator_new(layout, NULL, "max_wait_ms=-1", &untouched),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_generator_new(layout, NULL, "sequence_start=spread:0", &untouched),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_generator_new(layout, NULL, "sequence_start=spread:5000", &untouched),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_generator_new(layout, NULL, "rollover=time", &untouched),
               SNOWFLAKE_STATUS_VALUE);
  /* A boolean is `true` or `false`: any other text is the TYPE kind (issue 26), as a value
     of another type is in every typed front end. */
  CHECK_STATUS(snowflake_generator_new(layout, NULL, "isolated=maybe", &untouched),
               SNOWFLAKE_STATUS_TYPE);
  CHECK_STATUS(snowflake_generator_new(layout, NULL, "\xfe", &untouched),
               SNOWFLAKE_STATUS_INVALID_UTF8);
  CHECK(untouched == (SnowflakeGenerator *)&g, "generator_new wrote its output on failure");

  if (CHECK_STATUS(snowflake_generator_new(layout, "datacenter=1,worker=2",
                                           "max_wait_ms=0;isolated=true", &g),
                   SNOWFLAKE_STATUS_OK))
    return;
  CHECK_STATUS(snowflake_next_id(NULL, &id), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_next_id(g, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_try_next_id(NULL, &id), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_try_next_id(g, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_next_id_at(NULL, 1700000000000u, &id), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_next_id_at(g, 1700000000000u, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_next_id_at(g, 5, &id), SNOWFLAKE_STATUS_TIME_RANGE);
  CHECK(id == 42, "next_id_at wrote its output on failure");
  CHECK_STATUS(snowflake_next_ids(NULL, buf, 8), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_next_ids(g, NULL, 8), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_next_ids(g, buf, 0), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_reserve(NULL, 4, &block), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_reserve(g, 4, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_reserve(g, 0, &block), SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_reserve_at(NULL, 1700000000000u, 4, &block),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_reserve_at(g, 1700000000000u, 4, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_reserve_at(g, 1700000000000u, 0, &block), SNOWFLAKE_STATUS_VALUE);
  CHECK(block.first == 7 && block.count == 7, "reserve wrote its output on failure");
  CHECK_STATUS(snowflake_generator_stats(NULL, &stats), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_generator_stats(g, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  snowflake_generator_free(g);

  /* Two IDs a millisecond, never waiting: the third in one ms is refused, and so is a clock
   * that went back. */
  if (CHECK_STATUS(snowflake_layout_new("time:41,worker:10,sequence:1;epoch=0", &tiny),
                   SNOWFLAKE_STATUS_OK) == 0 &&
      CHECK_STATUS(snowflake_generator_new(tiny, "worker=5", "max_wait_ms=0;isolated=true", &g),
                   SNOWFLAKE_STATUS_OK) == 0) {
    CHECK_STATUS(snowflake_next_id_at(g, 1000, &id), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_next_id_at(g, 1000, &id), SNOWFLAKE_STATUS_OK);
    id = 42;
    CHECK_STATUS(snowflake_next_id_at(g, 1000, &id), SNOWFLAKE_STATUS_SEQUENCE_EXHAUSTED);
    CHECK(id == 42, "next_id_at wrote its output on failure");
    CHECK(snowflake_last_retry_after_ms() == 1, "retry after %" PRIu64 " ms",
          snowflake_last_retry_after_ms());
    CHECK_DETAIL("retry in 1 ms");
    CHECK_STATUS(snowflake_next_id_at(g, 1010, &id), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_next_id_at(g, 1003, &id), SNOWFLAKE_STATUS_CLOCK_BEHIND);
    CHECK(snowflake_last_retry_after_ms() == 7, "retry after %" PRIu64 " ms",
          snowflake_last_retry_after_ms());
    CHECK_DETAIL("7 ms behind");
    CHECK_STATUS(snowflake_decode_str("x", "hex", false, &id), SNOWFLAKE_STATUS_INVALID_ID);
    CHECK(snowflake_last_retry_after_ms() == 0, "retry_after after a non-clock error");

    /* A batch that cannot complete says how many IDs it wrote (core's one fill): those are
       valid and increasing, the rest of the buffer is untouched. */
    {
      uint64_t many[1000];
      size_t i, written = 12345;
      int untouched_rest = 1, increasing = 1;
      for (i = 0; i < 1000; i++) many[i] = 7;
      CHECK_STATUS(snowflake_fill(g, many, 1000, &written), SNOWFLAKE_STATUS_SEQUENCE_EXHAUSTED);
      CHECK(written < 1000, "fill wrote %zu of 1000 IDs on a full tick", written);
      for (i = written; i < 1000; i++) untouched_rest &= many[i] == 7;
      for (i = 1; i < written; i++) increasing &= many[i] > many[i - 1];
      CHECK(untouched_rest, "fill wrote past the IDs it reports");
      CHECK(increasing, "the IDs fill wrote are increasing");
      CHECK_STATUS(snowflake_next_ids(g, many, 1000), SNOWFLAKE_STATUS_SEQUENCE_EXHAUSTED);
      CHECK_STATUS(snowflake_fill(NULL, many, 1000, &written), SNOWFLAKE_STATUS_NULL_ARGUMENT);
      CHECK(written == 0, "fill reports 0 IDs written when an argument is NULL");
    }
    snowflake_generator_free(g);
  }
  snowflake_layout_free(tiny);
  snowflake_layout_free(layout);
}

static void test_encoding_errors(void) {
  char buf[32];
  uint64_t id = 42;
  memset(buf, 'x', sizeof buf);
  CHECK_STATUS(snowflake_encode(1, NULL, false, buf, sizeof buf), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_encode(1, "hex", false, NULL, sizeof buf), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_encode(1, "base64", false, buf, sizeof buf), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("base64");
  CHECK_STATUS(snowflake_encode(1, "hex", false, buf, 16), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK(buf[0] == 'x', "encode wrote into a short buffer");
  CHECK_STATUS(snowflake_encode(1, "hex", false, buf, 17), SNOWFLAKE_STATUS_OK);
  CHECK(strcmp(buf, "0000000000000001") == 0, "%s", buf);
  CHECK_STATUS(snowflake_encode(UINT64_MAX, "decimal", false, buf, 21), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_encode(UINT64_MAX, "decimal", false, buf, 20),
               SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK_STATUS(snowflake_decode_str(NULL, "hex", false, &id), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_decode_str("00", NULL, false, &id), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_decode_str("00", "hex", false, NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_decode_str("00", "rot13", false, &id), SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_decode_str("000000000000000\xe9", "hex", false, &id),
               SNOWFLAKE_STATUS_INVALID_UTF8);
  CHECK_STATUS(snowflake_decode_str("18446744073709551616", "decimal", false, &id),
               SNOWFLAKE_STATUS_INVALID_ID);
  CHECK_DETAIL("2^64");
  CHECK(id == 42, "decode_str wrote its output on failure");
}

/* ---- generators: real clock, blocks, stats, sharing ---------------------------------- */

/* The struct carries its size: a program built against an older header passes its shorter
 * struct, and gets exactly the fields it knows, with nothing written past them. */
typedef struct OldStats { /* the first SnowflakeStats, with a guard after it */
  size_t size;
  uint64_t issued, waits, waited_ms, clock_behind, rollovers, drift_ms;
} OldStats;

static void test_stats_size(void) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *g = NULL;
  SnowflakeStats full = {.size = sizeof(SnowflakeStats)};
  struct { OldStats old; unsigned char guard[64]; } older;
  union { SnowflakeStats stats; unsigned char bytes[sizeof(SnowflakeStats) + 64]; } mem;
  size_t cuts[5], c, i, first = offsetof(SnowflakeStats, drift_ms) + sizeof(uint64_t);
  uint64_t ids[3];
  int untouched;

  if (CHECK_STATUS(snowflake_layout_new("twitter", &layout), SNOWFLAKE_STATUS_OK)) return;
  if (CHECK_STATUS(snowflake_generator_new(layout, "datacenter=1,worker=2", "isolated=true", &g),
                   SNOWFLAKE_STATUS_OK) == 0) {
    CHECK_STATUS(snowflake_next_ids(g, ids, 3), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_generator_stats(g, &full), SNOWFLAKE_STATUS_OK);
    CHECK(full.size == sizeof(SnowflakeStats) && full.issued == 3 && full.lease_value == -1 &&
              full.last_unix_ms == 1288834974657u + (1ull << 41) - 1 && !full.clock_skew_measured,
          "full struct: size %zu, issued %" PRIu64, full.size, full.issued);

    /* The older program's own struct: its six fields, and its guard intact. */
    memset(&older, 0xA5, sizeof older);
    older.old.size = sizeof older.old;
    CHECK_STATUS(snowflake_generator_stats(g, (SnowflakeStats *)(void *)&older.old), SNOWFLAKE_STATUS_OK);
    CHECK(older.old.size == sizeof(OldStats) && older.old.issued == 3 && older.old.waits == full.waits &&
              older.old.clock_behind == 0 && older.old.rollovers == 0,
          "older struct: size %zu, issued %" PRIu64, older.old.size, older.old.issued);
    for (i = 0, untouched = 1; i < sizeof older.guard; i++) untouched &= older.guard[i] == 0xA5;
    CHECK(untouched, "the library wrote past the older program's struct");

    /* Every size from the first version's to the whole struct, a field cut in half among
     * them: the fields that end within the size are written, and no byte after them. */
    cuts[0] = first;
    cuts[1] = offsetof(SnowflakeStats, lease_losses) + sizeof(uint64_t);
    cuts[2] = offsetof(SnowflakeStats, lease_value) + 4;
    cuts[3] = offsetof(SnowflakeStats, clock_skew_ms);
    cuts[4] = sizeof(SnowflakeStats);
    for (c = 0; c < 5; c++) {
      size_t written = c == 2 ? offsetof(SnowflakeStats, lease_value) : cuts[c];
      memset(&mem, 0xA5, sizeof mem);
      mem.stats.size = cuts[c];
      CHECK_STATUS(snowflake_generator_stats(g, &mem.stats), SNOWFLAKE_STATUS_OK);
      CHECK(mem.stats.size == cuts[c] && mem.stats.issued == 3, "size %zu: issued %" PRIu64, cuts[c], mem.stats.issued);
      if (cuts[c] >= offsetof(SnowflakeStats, lease_losses) + sizeof(uint64_t))
        CHECK(mem.stats.lease_claims == 0 && mem.stats.lease_losses == 0, "size %zu: lease counts", cuts[c]);
      /* Padding inside the struct is the caller's too: only a field's own bytes change. */
      if (c == 3) CHECK(mem.stats.clock_skew_measured == false, "size %zu: clock_skew_measured", cuts[c]);
      for (i = written, untouched = 1; i < sizeof mem.bytes; i++) untouched &= mem.bytes[i] == 0xA5;
      CHECK(untouched, "size %zu: a byte at or past %zu was written", cuts[c], written);
    }

    /* Below the first version's size (0: never set) nothing is written, with a clear status. */
    memset(&mem, 0xA5, sizeof mem);
    mem.stats.size = first - 1;
    CHECK_STATUS(snowflake_generator_stats(g, &mem.stats), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
    CHECK_DETAIL("set out->size = sizeof(SnowflakeStats)");
    for (i = sizeof(size_t), untouched = 1; i < sizeof mem.bytes; i++) untouched &= mem.bytes[i] == 0xA5;
    CHECK(untouched && mem.stats.size == first - 1, "a refused call wrote its output");
    mem.stats.size = 0;
    CHECK_STATUS(snowflake_generator_stats(g, &mem.stats), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
    CHECK_DETAIL("out->size is 0");
    snowflake_generator_free(g);
  }
  snowflake_layout_free(layout);
}

static void test_generator_basics(void) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *g = NULL, *same = NULL, *iso = NULL;
  SnowflakeBlock block;
  SnowflakeStats stats = {.size = sizeof(SnowflakeStats)};
  SnowflakeParts parts;
  uint64_t a = 0, b = 0, c = 0, ids[10000];
  size_t i;
  int increasing = 1, node_ok = 1;

  if (CHECK_STATUS(snowflake_layout_new("twitter", &layout), SNOWFLAKE_STATUS_OK)) return;
  if (CHECK_STATUS(snowflake_generator_new(layout, "datacenter=3,worker=9", "", &g),
                   SNOWFLAKE_STATUS_OK))
    return;
  /* One state per identity: a second handle with the same layout and node continues it. */
  CHECK_STATUS(snowflake_generator_new(layout, "worker=9,datacenter=3", NULL, &same),
               SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_next_id(g, &a), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_next_id(same, &b), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_try_next_id(g, &c), SNOWFLAKE_STATUS_OK);
  CHECK(a < b && b < c, "shared state: %" PRIu64 " %" PRIu64 " %" PRIu64, a, b, c);
  CHECK_STATUS(snowflake_layout_decode(layout, a, &parts), SNOWFLAKE_STATUS_OK);
  CHECK(parts.fields[1] == 3 && parts.fields[2] == 9, "node fields %" PRIu64 " %" PRIu64,
        parts.fields[1], parts.fields[2]);

  CHECK_STATUS(snowflake_next_ids(g, ids, 10000), SNOWFLAKE_STATUS_OK);
  for (i = 0; i < 10000; i++) {
    if (i > 0 && ids[i] <= ids[i - 1]) increasing = 0;
    if (snowflake_layout_decode(layout, ids[i], &parts) != SNOWFLAKE_STATUS_OK ||
        parts.fields[1] != 3 || parts.fields[2] != 9)
      node_ok = 0;
  }
  CHECK(increasing && ids[0] > c, "next_ids are increasing and after next_id");
  CHECK(node_ok, "next_ids carry the node values");

  CHECK_STATUS(snowflake_reserve(g, 10, &block), SNOWFLAKE_STATUS_OK);
  CHECK(block.count >= 1 && block.count <= 10 && block.stride == 1 && block.first > ids[9999],
        "block %" PRIu64 " x%" PRIu64 " stride %" PRIu64, block.first, block.count, block.stride);
  CHECK_STATUS(snowflake_generator_stats(g, &stats), SNOWFLAKE_STATUS_OK);
  CHECK(stats.issued == 2 + 10000 + block.count, "issued %" PRIu64, stats.issued);

  /* isolated=true: a state of its own, deterministic from the caller's clock. */
  CHECK_STATUS(snowflake_generator_new(layout, "datacenter=3,worker=9", "isolated=true", &iso),
               SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_reserve_at(iso, 1700000000000u, 5000, &block), SNOWFLAKE_STATUS_OK);
  CHECK(block.count == 4096, "a block holds the rest of the tick: %" PRIu64, block.count);
  CHECK_STATUS(snowflake_layout_min_id(layout, 1700000000000u, &a), SNOWFLAKE_STATUS_OK);
  CHECK(block.first == (a | (3u << 17) | (9u << 12)), "block starts at the tick's first ID");

  snowflake_generator_free(iso);
  snowflake_generator_free(same);
  snowflake_generator_free(g);
  snowflake_layout_free(layout);
}

/* ---- threads ------------------------------------------------------------------------- */

#define THREADS 8

struct worker {
  const SnowflakeGenerator *g;
  uint64_t *ids;
  size_t n;
  size_t done; /* IDs written */
  int ok;      /* every call succeeded and this thread's IDs increase */
  int detail_starts_empty;
};

static void *run_worker(void *arg) {
  struct worker *w = arg;
  size_t i;
  w->detail_starts_empty = snowflake_last_error()[0] == '\0';
  w->ok = 1;
  for (i = 0; i < w->n; i++) {
    SnowflakeStatus st = snowflake_next_id(w->g, &w->ids[i]);
    if (st != SNOWFLAKE_STATUS_OK) {
      w->ok = 0;
      fprintf(stderr, "next_id: %s: %s\n", snowflake_status_code(st), snowflake_last_error());
      break;
    }
    if (i > 0 && w->ids[i] <= w->ids[i - 1]) w->ok = 0;
  }
  w->done = i;
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void test_threads(size_t per_thread) {
  SnowflakeLayout *layout = NULL, *unused = NULL;
  SnowflakeGenerator *g = NULL;
  struct worker workers[THREADS];
  pthread_t threads[THREADS];
  uint64_t *all;
  size_t i, dups = 0, total = 0, capacity = per_thread * THREADS;
  int t;

  if (CHECK_STATUS(snowflake_layout_new("twitter", &layout), SNOWFLAKE_STATUS_OK)) return;
  if (CHECK_STATUS(snowflake_generator_new(layout, "datacenter=7,worker=21", NULL, &g),
                   SNOWFLAKE_STATUS_OK))
    return;
  all = malloc(capacity * sizeof *all);
  CHECK(all != NULL, "out of memory");
  if (all == NULL) return;
  /* This thread has a detail; the workers must each start with their own, empty one. */
  CHECK_STATUS(snowflake_layout_new("", &unused), SNOWFLAKE_STATUS_LAYOUT);
  for (t = 0; t < THREADS; t++) {
    workers[t].g = g;
    workers[t].ids = all + (size_t)t * per_thread;
    workers[t].n = per_thread;
    CHECK(pthread_create(&threads[t], NULL, run_worker, &workers[t]) == 0, "pthread_create");
  }
  for (t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    CHECK(workers[t].ok, "thread %d: a call failed or its IDs did not increase", t);
    CHECK(workers[t].detail_starts_empty, "thread %d saw another thread's error detail", t);
    /* Gather what each thread wrote (all of it, unless a call failed). */
    memmove(all + total, workers[t].ids, workers[t].done * sizeof *all);
    total += workers[t].done;
  }
  CHECK(total == capacity, "%zu of %zu IDs issued", total, capacity);
  CHECK(contains_lower(snowflake_last_error(), "empty"), "this thread's detail was overwritten");
  qsort(all, total, sizeof *all, cmp_u64);
  for (i = 1; i < total; i++) dups += all[i] == all[i - 1];
  CHECK(dups == 0, "%zu duplicate IDs among %zu from %d threads", dups, total, THREADS);
  free(all);
  snowflake_generator_free(g);
  snowflake_layout_free(layout);
}

/* ---- fork ---------------------------------------------------------------------------- */

static void test_fork(void) {
  SnowflakeLayout *layout = NULL;
  SnowflakeGenerator *g = NULL;
  uint64_t id = 0;
  pid_t pid;
  int status = 0;

  if (CHECK_STATUS(snowflake_layout_new("twitter", &layout), SNOWFLAKE_STATUS_OK)) return;
  /* process_only: the state is this process's (a default generator's is the host's, which
   * a child goes on using: see test_coordination). */
  if (CHECK_STATUS(snowflake_generator_new(layout, "datacenter=0,worker=1", "process_only=true", &g), SNOWFLAKE_STATUS_OK))
    return;
  CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    /* The child: the inherited process_only generator must refuse (it would repeat the
     * parent's IDs), in every entry point; a new generator with its own worker value works.
     * Exit codes say which check failed. */
    SnowflakeGenerator *mine = NULL;
    uint64_t buf[4];
    SnowflakeBlock block;
    if (snowflake_next_id(g, &id) != SNOWFLAKE_STATUS_FORKED) _exit(10);
    if (strstr(snowflake_last_error(), "fork") == NULL) _exit(11);
    if (snowflake_try_next_id(g, &id) != SNOWFLAKE_STATUS_FORKED) _exit(12);
    if (snowflake_next_ids(g, buf, 4) != SNOWFLAKE_STATUS_FORKED) _exit(13);
    if (snowflake_reserve(g, 4, &block) != SNOWFLAKE_STATUS_FORKED) _exit(14);
    if (snowflake_generator_new(layout, "datacenter=0,worker=2", NULL, &mine) != SNOWFLAKE_STATUS_OK) _exit(15);
    if (snowflake_next_id(mine, &id) != SNOWFLAKE_STATUS_OK) _exit(16);
    snowflake_generator_free(mine);
    snowflake_generator_free(g);
    snowflake_layout_free(layout);
    _exit(0);
  }
  CHECK(pid > 0, "fork failed");
  if (pid > 0) {
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "child: the inherited generator did not fail with FORKED (exit code %d)",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
  snowflake_generator_free(g);
  snowflake_layout_free(layout);
}

/* ---- beyond one process: shared=, lease=, state_file= --------------------------------- */

static void decode_worker(const SnowflakeLayout *layout, uint64_t id, uint64_t *worker) {
  SnowflakeParts parts;
  *worker = UINT64_MAX;
  if (snowflake_layout_decode(layout, id, &parts) == SNOWFLAKE_STATUS_OK) *worker = parts.fields[2];
}

/* Makes the temporary directory `dir` (a mkdtemp template) and keeps this process's shared
 * states there, out of /dev/shm. Returns 0 (after a failed check) when it cannot. */
static int shm_dir_of_own(char *dir) {
  if (mkdtemp(dir) == NULL) {
    CHECK(0, "mkdtemp");
    return 0;
  }
  setenv("SNOWFLAKE_SHM_DIR", dir, 1);
  return 1;
}

static void test_coordination(void) {
  char dir[] = "/tmp/snowflake-c-test-XXXXXX", opts[1024], path[256], cmd[300];
  SnowflakeLayout *twitter = NULL, *discord = NULL;
  SnowflakeGenerator *g = NULL, *again = NULL, *a = NULL, *b = NULL, *other = NULL;
  uint64_t id = 0, wa = 0, wb = 0, *mine, *theirs;
  size_t i, n = 50000, dups = 0, all;
  pid_t pid;
  int status = 0;
  FILE *f;

  if (!shm_dir_of_own(dir)) return;
  CHECK_STATUS(snowflake_layout_new("twitter", &twitter), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_layout_new("discord", &discord), SNOWFLAKE_STATUS_OK);

  snprintf(opts, sizeof opts, "shared=c-test-%ld", (long)getpid());
  if (CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=2,worker=5", opts, &g),
                   SNOWFLAKE_STATUS_OK) == 0) {
    CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=2,worker=5", opts, &again),
                 SNOWFLAKE_STATUS_OK);
    /* A name is a label of the host's state of a layout and node values: another layout or
     * other node values under it are other states. Another policy while it is used is
     * refused, naming the difference. */
    if (CHECK_STATUS(snowflake_generator_new(discord, "worker=5,process=0", opts, &other), SNOWFLAKE_STATUS_OK) == 0)
      snowflake_generator_free(other);
    other = NULL;
    CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=2,worker=5", "max_drift_ms=5", &other),
                 SNOWFLAKE_STATUS_SHARED_MISMATCH);
    CHECK_DETAIL("max_drift_ms=0, not 5");
    CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=2,worker=5", "process_only=true", &other),
                 SNOWFLAKE_STATUS_SHARED_MISMATCH);
    CHECK(other == NULL, "generator_new wrote its output on failure");

    /* A shared state keeps working across fork(): parent and child draw from one state, so
     * together they never repeat an ID. The child leaves its IDs in a file. */
    mine = malloc(2 * n * sizeof *mine);
    snprintf(path, sizeof path, "%s/child-ids", dir);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
      f = fopen(path, "wb");
      for (i = 0; i < n && f; i++) {
        if (snowflake_next_id(g, &id) != SNOWFLAKE_STATUS_OK) _exit(20);
        fwrite(&id, sizeof id, 1, f);
      }
      _exit(f && fclose(f) == 0 ? 0 : 21);
    }
    for (i = 0; i < n && mine; i++)
      if (snowflake_next_id(i % 2 ? g : again, &mine[i]) != SNOWFLAKE_STATUS_OK) break;
    CHECK(mine && i == n, "parent: next_id on the shared state failed (%s)", snowflake_last_error());
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0,
          "child on the shared state: exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    f = fopen(path, "rb");
    theirs = mine ? mine + n : NULL;
    all = f && theirs ? n + fread(theirs, sizeof *theirs, n, f) : 0;
    if (f) fclose(f);
    CHECK(all == 2 * n, "the child's IDs: %zu", all);
    if (all == 2 * n) {
      qsort(mine, all, sizeof *mine, cmp_u64);
      for (i = 1; i < all; i++) dups += mine[i] == mine[i - 1];
      CHECK(dups == 0, "%zu duplicates between two processes on one shared state", dups);
    }
    free(mine);
    snowflake_generator_free(again);
    snowflake_generator_free(g);
  }
  CHECK_STATUS(snowflake_generator_new(twitter, NULL, "shared=../etc", &other), SNOWFLAKE_STATUS_VALUE);

  /* lease=local: each generator claims its own worker value. */
  snprintf(opts, sizeof opts, "lease=local");
  if (CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1", opts, &a), SNOWFLAKE_STATUS_OK) ==
          0 &&
      CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1", opts, &b), SNOWFLAKE_STATUS_OK) ==
          0) {
    CHECK_STATUS(snowflake_next_id(a, &id), SNOWFLAKE_STATUS_OK);
    decode_worker(twitter, id, &wa);
    CHECK_STATUS(snowflake_next_id(b, &id), SNOWFLAKE_STATUS_OK);
    decode_worker(twitter, id, &wb);
    CHECK(wa <= 31 && wb <= 31 && wa != wb, "leased workers %" PRIu64 " and %" PRIu64, wa, wb);
  }
  snowflake_generator_free(a);
  snowflake_generator_free(b);
  CHECK_STATUS(snowflake_generator_new(twitter, "worker=3", opts, &other), SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_generator_new(twitter, NULL, "lease=zookeeper", &other),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_STATUS(snowflake_generator_new(twitter, NULL, "lease=local;shared=x", &other),
               SNOWFLAKE_STATUS_VALUE);

  /* state_file=: a durable high-water mark; a file that is not one is refused. */
  snprintf(opts, sizeof opts, "state_file=%s/ids.state", dir);
  if (CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=0,worker=9", opts, &a), SNOWFLAKE_STATUS_OK) ==
      0) {
    CHECK_STATUS(snowflake_next_id(a, &id), SNOWFLAKE_STATUS_OK);
    snowflake_generator_free(a);
  }
  snprintf(path, sizeof path, "%s/garbage.state", dir);
  f = fopen(path, "wb");
  if (f) {
    fputs("this is not a state file, and it is long enough to look like one........", f);
    fclose(f);
  }
  snprintf(opts, sizeof opts, "state_file=%s", path);
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=0,worker=9", opts, &other),
               SNOWFLAKE_STATUS_STATE_FILE);
  /* Below a regular file: the OS refuses (ENOTDIR). */
  snprintf(opts, sizeof opts, "state_file=%s/ids.state", path);
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=0,worker=9", opts, &other), SNOWFLAKE_STATUS_IO);
  snowflake_generator_free(other); /* NULL unless a check above failed */

  snowflake_layout_free(discord);
  snowflake_layout_free(twitter);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0, "removing %s", dir);
}

/* ---- mixing kinds of generator for one identity (issue 13, step 2) ------------------- */

#define MIX_NODE "datacenter=3,worker=7"

/* Sorts `ids` and counts the repeats among them. */
static size_t count_repeats(uint64_t *ids, size_t n) {
  size_t i, dups = 0;
  qsort(ids, n, sizeof *ids, cmp_u64);
  for (i = 1; i < n; i++) dups += ids[i] == ids[i - 1];
  return dups;
}

/* Draws `n` IDs from `a` and `b` in turn, one at a time; the repeats among the 2n. */
static size_t interleaved_repeats(SnowflakeGenerator *a, SnowflakeGenerator *b, size_t n) {
  uint64_t *ids = malloc(2 * n * sizeof *ids);
  size_t i, dups;
  if (ids == NULL) return SIZE_MAX;
  for (i = 0; i < n; i++) {
    if (snowflake_next_id(a, &ids[2 * i]) != SNOWFLAKE_STATUS_OK ||
        snowflake_next_id(b, &ids[2 * i + 1]) != SNOWFLAKE_STATUS_OK) {
      free(ids);
      return SIZE_MAX;
    }
  }
  dups = count_repeats(ids, 2 * n);
  free(ids);
  return dups;
}

static void test_mixing(void) {
  char dir[] = "/tmp/snowflake-c-mix-XXXXXX", one[96], two[96], node[64], path[1100], cmd[1100];
  SnowflakeLayout *twitter = NULL;
  SnowflakeGenerator *a = NULL, *b = NULL, *other = NULL;
  uint64_t id = 0, worker = 0, *ids;
  size_t i, n = 100000, got = 0, dups;
  pid_t pid;
  int status = 0;
  FILE *f;

  if (!shm_dir_of_own(dir)) return;
  if (CHECK_STATUS(snowflake_layout_new("twitter", &twitter), SNOWFLAKE_STATUS_OK)) return;
  snprintf(one, sizeof one, "shared=c-mix-%ld-one", (long)getpid());
  snprintf(two, sizeof two, "shared=c-mix-%ld-two", (long)getpid());

  /* (a) A plain generator and a shared= one of the same identity, 20,000 + 20,000. */
  if (CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, NULL, &a), SNOWFLAKE_STATUS_OK) == 0 &&
      CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, one, &b), SNOWFLAKE_STATUS_OK) == 0) {
    dups = interleaved_repeats(a, b, 20000);
    CHECK(dups == 0, "a plain and a %s generator of one identity: %zu repeats in 20,000 + 20,000", one, dups);
  }
  snowflake_generator_free(a);
  snowflake_generator_free(b);
  a = b = NULL;

  /* (b) shared= under two names for one identity: in one process... */
  if (CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, one, &a), SNOWFLAKE_STATUS_OK) == 0 &&
      CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, two, &b), SNOWFLAKE_STATUS_OK) == 0) {
    dups = interleaved_repeats(a, b, 20000);
    CHECK(dups == 0, "%s and %s in one process: %zu repeats in 20,000 + 20,000", one, two, dups);
  }
  snowflake_generator_free(a);
  snowflake_generator_free(b);
  a = b = NULL;
  /* ...and in two: a child (a new process with a generator of its own, not an inherited one)
   * opens the second name and draws while the parent draws from the first. */
  ids = malloc(2 * n * sizeof *ids);
  snprintf(path, sizeof path, "%s/child-ids", dir);
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    SnowflakeGenerator *g = NULL;
    f = fopen(path, "wb");
    if (f == NULL || snowflake_generator_new(twitter, MIX_NODE, two, &g) != SNOWFLAKE_STATUS_OK) _exit(20);
    for (i = 0; i < n; i++) {
      if (snowflake_next_id(g, &id) != SNOWFLAKE_STATUS_OK) _exit(21);
      fwrite(&id, sizeof id, 1, f);
    }
    _exit(fclose(f) == 0 ? 0 : 22);
  }
  if (CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, one, &a), SNOWFLAKE_STATUS_OK) == 0) {
    for (i = 0; i < n && ids; i++)
      if (snowflake_next_id(a, &ids[i]) != SNOWFLAKE_STATUS_OK) break;
    CHECK(ids && i == n, "parent: next_id on %s failed (%s)", one, snowflake_last_error());
  }
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the child on %s: exit %d", two, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  f = fopen(path, "rb");
  if (f && ids) got = fread(ids + n, sizeof *ids, n, f);
  if (f) fclose(f);
  CHECK(got == n, "the child's IDs: %zu", got);
  if (ids && got == n) {
    dups = count_repeats(ids, 2 * n);
    CHECK(dups == 0, "%s and %s in two processes: %zu repeats in %zu + %zu", one, two, dups, n, n);
  }
  free(ids);
  snowflake_generator_free(a);
  a = NULL;

  /* (c) A local lease holding worker=v, and a plain generator given worker=v: refused, and
   * the error names the lease. */
  if (CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=3", "lease=local", &a), SNOWFLAKE_STATUS_OK) == 0 &&
      CHECK_STATUS(snowflake_next_id(a, &id), SNOWFLAKE_STATUS_OK) == 0) {
    decode_worker(twitter, id, &worker);
    snprintf(node, sizeof node, "datacenter=3,worker=%" PRIu64, worker);
    CHECK_STATUS(snowflake_generator_new(twitter, node, NULL, &other), SNOWFLAKE_STATUS_SHARED_MISMATCH);
    CHECK_DETAIL("lease");
    CHECK(other == NULL, "generator_new wrote its output on failure");
    CHECK_STATUS(snowflake_next_id(a, &id), SNOWFLAKE_STATUS_OK);
  }
  snowflake_generator_free(a);
  a = NULL;

  /* (d) A process_only generator and a plain one of the same identity: refused, naming the
   * other, in either order. */
  if (CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, "process_only=true", &a), SNOWFLAKE_STATUS_OK) == 0) {
    CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, NULL, &other), SNOWFLAKE_STATUS_SHARED_MISMATCH);
    CHECK_DETAIL("process_only");
    CHECK_STATUS(snowflake_next_id(a, &id), SNOWFLAKE_STATUS_OK);
  }
  snowflake_generator_free(a);
  a = NULL;
  if (CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, NULL, &a), SNOWFLAKE_STATUS_OK) == 0) {
    CHECK_STATUS(snowflake_generator_new(twitter, MIX_NODE, "process_only=true", &other),
                 SNOWFLAKE_STATUS_SHARED_MISMATCH);
    CHECK_STATUS(snowflake_next_id(a, &id), SNOWFLAKE_STATUS_OK);
  }
  snowflake_generator_free(a);
  snowflake_generator_free(other); /* NULL unless a check above failed */

  snowflake_layout_free(twitter);
  unsetenv("SNOWFLAKE_SHM_DIR");
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0, "removing %s", dir);
}

/* ---- the Redis script (issue 6) ------------------------------------------------------- */

/* The options object: one option at a time, so a value may hold `;`, `=` and spaces; typed
 * setters checked by core's table; a state file in a directory named `dir=with eq`. */
static void test_options_object(void) {
  SnowflakeLayout *twitter = NULL;
  SnowflakeOptions *o = NULL;
  SnowflakeGenerator *g = NULL;
  char dir[] = "/tmp/snowflake-opts-XXXXXX";
  char path[512];
  uint64_t id = 0;
  struct stat st;
  CHECK_STATUS(snowflake_layout_new("twitter", &twitter), SNOWFLAKE_STATUS_OK);
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof path, "%s/dir=with eq", dir);
  CHECK(mkdir(path, 0700) == 0, "mkdir %s", path);
  snprintf(path, sizeof path, "%s/dir=with eq/ids;one.state", dir);

  CHECK_STATUS(snowflake_options_new("max_wait_ms=0", &o), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_options_set(o, "state_file", path), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_options_set_int(o, "state_window_ms", 500), SNOWFLAKE_STATUS_OK);
  /* Wrong types and values change nothing and name the problem. */
  CHECK_STATUS(snowflake_options_set_str(o, "max_wait_ms", "5"), SNOWFLAKE_STATUS_TYPE);
  CHECK_DETAIL("`max_wait_ms` must be a whole number, not a string");
  CHECK_STATUS(snowflake_options_set_float(o, "max_wait_ms", 1.5), SNOWFLAKE_STATUS_TYPE);
  CHECK_DETAIL("not 1.5");
  CHECK_STATUS(snowflake_options_set_int(o, "max_wait_ms", -1), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("max_wait_ms = -1 is out of range");
  CHECK_STATUS(snowflake_options_set_bool(o, "state_window_ms", true), SNOWFLAKE_STATUS_TYPE);
  CHECK_STATUS(snowflake_options_set_typename(o, "isolated", "array"), SNOWFLAKE_STATUS_TYPE);
  CHECK_DETAIL("`isolated` must be true or false, not array");
  CHECK_STATUS(snowflake_options_set(o, "max_wait", "0"), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("unknown option `max_wait`; the options are max_drift_ms, max_wait_ms");
  CHECK_STATUS(snowflake_options_set(NULL, "max_wait_ms", "0"), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_options_unset(o, "state_window_ms"), SNOWFLAKE_STATUS_OK);

  CHECK_STATUS(snowflake_generator_open(twitter, "datacenter=0,worker=21", o, &g), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
  CHECK(stat(path, &st) == 0 && st.st_size == 48, "the state file was written at the path with `;` and `=`");
  snowflake_generator_free(g);
  snowflake_options_free(o);
  snowflake_options_free(NULL);
  /* The text form takes a path with `=` and spaces (not `;`, its separator). */
  snprintf(path, sizeof path, "state_file=%s/dir=with eq/ids.state", dir);
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=0,worker=22", path, &g), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
  snowflake_generator_free(g);
  CHECK_STATUS(snowflake_generator_open(twitter, "datacenter=0,worker=23", NULL, &g), SNOWFLAKE_STATUS_OK);
  snowflake_generator_free(g);
  snowflake_layout_free(twitter);
  {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "removing %s", dir);
  }
}

/* Every preset's script equals core's (tests/vectors/redis_scripts.json), asked for the way
 * API.md shows: the size first (buf NULL, len 0), then the text. */
static void test_redis_script_vectors(const char *dir) {
  cJSON *json = load_json(dir, "redis_scripts.json");
  const cJSON *v;
  int n = 0;
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "scripts")) {
    const char *spec = str_field(v, "spec");
    const char *want = str_field(v, "script");
    SnowflakeLayout *layout = NULL;
    size_t needed = 0, again = 0;
    char *buf;
    n++;
    if (CHECK_STATUS(snowflake_layout_new(spec, &layout), SNOWFLAKE_STATUS_OK)) continue;
    CHECK_STATUS(snowflake_layout_redis_script(layout, NULL, 0, &needed),
                 SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed == strlen(want) + 1, "%s: needed %zu for a script of %zu bytes", spec, needed,
          strlen(want));
    buf = malloc(needed);
    if (buf == NULL) exit(2);
    CHECK_STATUS(snowflake_layout_redis_script(layout, buf, needed, &again), SNOWFLAKE_STATUS_OK);
    CHECK(again == needed, "%s: needed %zu on success, %zu before", spec, again, needed);
    CHECK(strcmp(buf, want) == 0, "%s: the script differs from core's", spec);
    free(buf);
    snowflake_layout_free(layout);
  }
  CHECK(n == 8, "redis_scripts.json has %d scripts, expected the 8 presets", n);
  cJSON_Delete(json);
}

static void test_redis_script_errors(void) {
  SnowflakeLayout *layout = NULL;
  const char *first_line = "-- libsnowflake: IDs of the layout time:42,worker:5,process:5,sequence:12;";
  char small[64], *buf;
  size_t needed = 12345, need;

  CHECK_STATUS(snowflake_layout_redis_script(NULL, small, sizeof small, &needed),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_DETAIL("`layout`");
  CHECK(needed == 12345, "redis_script wrote needed for a NULL layout");
  if (CHECK_STATUS(snowflake_layout_new("discord", &layout), SNOWFLAKE_STATUS_OK)) return;
  CHECK_STATUS(snowflake_layout_redis_script(layout, NULL, 10, &needed),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_DETAIL("`buf`");
  CHECK(needed == 12345, "redis_script wrote needed for a NULL buf");

  /* Too small: nothing written into buf, the detail names the size, needed is set. */
  memset(small, 'x', sizeof small);
  CHECK_STATUS(snowflake_layout_redis_script(layout, small, sizeof small, &needed),
               SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK(needed > sizeof small, "needed %zu", needed);
  CHECK(small[0] == 'x' && small[sizeof small - 1] == 'x', "redis_script wrote into a short buffer");
  CHECK_DETAIL("bytes");
  need = needed;
  CHECK_STATUS(snowflake_layout_redis_script(layout, small, 0, NULL), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK(small[0] == 'x', "redis_script wrote into a 0-byte buffer");
  CHECK_STATUS(snowflake_layout_redis_script(layout, NULL, 0, NULL), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);

  /* One byte short (no room for the NUL), then exact; needed may be NULL. */
  buf = malloc(need);
  if (buf == NULL) exit(2);
  memset(buf, 'x', need);
  needed = 0;
  CHECK_STATUS(snowflake_layout_redis_script(layout, buf, need - 1, &needed),
               SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK(needed == need, "needed %zu, then %zu", need, needed);
  CHECK(buf[0] == 'x' && buf[need - 2] == 'x', "redis_script wrote into a buffer 1 byte short");
  CHECK_STATUS(snowflake_layout_redis_script(layout, buf, need, NULL), SNOWFLAKE_STATUS_OK);
  CHECK(strlen(buf) == need - 1, "redis_script into an exact buffer: %zu bytes", strlen(buf));
  CHECK(strncmp(buf, first_line, strlen(first_line)) == 0, "the script's first line: %.80s", buf);
  CHECK(strstr(buf, "\n-- EVALSHA <sha1> 1 <state-key> <worker> <process>\n") != NULL,
        "the script's EVALSHA line");
  CHECK(strstr(buf, "\nlocal EPOCH = 1420070400000\n") != NULL, "the script's epoch");
  free(buf);
  snowflake_layout_free(layout);
}

/* ---- SQL (issue 14) ---------------------------------------------------------------------- */

/* Every preset's PostgreSQL SQL equals core's (tests/vectors/sql_scripts.json), or is refused
 * with SNOWFLAKE_STATUS_VALUE for a 64-bit layout; sizes are asked as for the Redis script. */
static void test_sql_vectors(const char *dir) {
  cJSON *json = load_json(dir, "sql_scripts.json");
  const cJSON *v;
  int n = 0, refused = 0;
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "scripts")) {
    const char *spec = str_field(v, "spec");
    const char *want = str_field(v, "sql");
    SnowflakeLayout *layout = NULL;
    size_t needed = 0;
    char *buf;
    n++;
    if (CHECK_STATUS(snowflake_layout_new(spec, &layout), SNOWFLAKE_STATUS_OK)) continue;
    if (want == NULL) {
      refused++;
      needed = 777;
      CHECK_STATUS(snowflake_layout_sql(layout, "postgres", NULL, NULL, 0, &needed), SNOWFLAKE_STATUS_VALUE);
      CHECK(strcmp(snowflake_status_code(SNOWFLAKE_STATUS_VALUE), str_field(v, "error")) == 0, "%s", spec);
      CHECK_DETAIL("64-bit layout");
      CHECK(needed == 777, "%s: needed written on a failure other than a short buffer", spec);
      snowflake_layout_free(layout);
      continue;
    }
    CHECK_STATUS(snowflake_layout_sql(layout, "postgres", NULL, NULL, 0, &needed),
                 SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed == strlen(want) + 1, "%s: needed %zu for %zu bytes", spec, needed, strlen(want));
    buf = malloc(needed);
    if (buf == NULL) exit(2);
    memset(buf, 'x', needed);
    CHECK_STATUS(snowflake_layout_sql(layout, "postgres", "snowflake", buf, needed - 1, NULL),
                 SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
    CHECK(buf[0] == 'x', "%s: written into a buffer 1 byte short", spec);
    CHECK_STATUS(snowflake_layout_sql(layout, "postgres", str_field(v, "prefix"), buf, needed, NULL),
                 SNOWFLAKE_STATUS_OK);
    CHECK(strcmp(buf, want) == 0, "%s: the SQL differs from core's", spec);
    free(buf);
    snowflake_layout_free(layout);
  }
  CHECK(n == 8 && refused > 0 && refused < n, "sql_scripts.json: %d scripts, %d refused", n, refused);
  cJSON_Delete(json);
}

static void test_sql_errors(void) {
  SnowflakeLayout *layout = NULL;
  char buf[64];
  size_t needed = 5;
  if (CHECK_STATUS(snowflake_layout_new("twitter", &layout), SNOWFLAKE_STATUS_OK)) return;
  CHECK_STATUS(snowflake_layout_sql(NULL, "postgres", NULL, buf, sizeof buf, &needed), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_DETAIL("`layout`");
  CHECK_STATUS(snowflake_layout_sql(layout, NULL, NULL, buf, sizeof buf, &needed), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_DETAIL("`dialect`");
  CHECK_STATUS(snowflake_layout_sql(layout, "postgres", NULL, NULL, 10, &needed), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_sql(layout, "mysql", NULL, buf, sizeof buf, &needed), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("unknown SQL dialect");
  CHECK_STATUS(snowflake_layout_sql(layout, "postgres", "Bad Prefix", buf, sizeof buf, &needed), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("lowercase identifier");
  CHECK_STATUS(snowflake_layout_sql(layout, "postgres", "", buf, sizeof buf, &needed), SNOWFLAKE_STATUS_VALUE);
  CHECK(needed == 5, "needed written on a failure other than a short buffer");
  CHECK_STATUS(snowflake_layout_sql(layout, "postgres", "ids.orders", NULL, 0, &needed), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK(needed > 1000, "needed %zu", needed);
  snowflake_layout_free(layout);
}

/* ---- public IDs (issue 14) --------------------------------------------------------------- */

static size_t key_of(const cJSON *v, uint8_t *key, size_t cap) {
  const char *hex = str_field(v, "key_hex");
  size_t i, n = strlen(hex) / 2;
  for (i = 0; i < n && i < cap; i++) {
    unsigned b;
    sscanf(hex + 2 * i, "%2x", &b);
    key[i] = (uint8_t)b;
  }
  return n;
}

static SnowflakeStatus public_of(const cJSON *v, SnowflakePublicIds **out) {
  uint8_t key[64];
  size_t n = key_of(v, key, sizeof key);
  return snowflake_public_new(n ? key : (const uint8_t *)"", n, str_field(v, "encoding"), out);
}

static void test_public_vectors(const char *dir) {
  cJSON *json = load_json(dir, "public_ids.json");
  const cJSON *ka = cJSON_GetObjectItemCaseSensitive(json, "known_answer"), *row, *c, *v;
  SnowflakePublicIds *ids = NULL;
  char buf[32];
  uint64_t id;
  int n = 0;

  if (!CHECK_STATUS(public_of(ka, &ids), SNOWFLAKE_STATUS_OK)) {
    CHECK_STATUS(snowflake_public_encode(ids, u64_field(ka, "id"), buf, sizeof buf), SNOWFLAKE_STATUS_OK);
    CHECK(strcmp(buf, str_field(ka, "text")) == 0, "the Speck paper's vector: %s", buf);
    snowflake_public_free(ids);
  }
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(json, "keys")) {
    ids = NULL;
    if (CHECK_STATUS(public_of(row, &ids), SNOWFLAKE_STATUS_OK)) continue;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(row, "cases")) {
      const char *text = str_field(c, "text");
      n++;
      CHECK_STATUS(snowflake_public_encode(ids, u64_field(c, "id"), buf, sizeof buf), SNOWFLAKE_STATUS_OK);
      CHECK(strcmp(buf, text) == 0, "%s: %s, expected %s", str_field(row, "encoding"), buf, text);
      CHECK_STATUS(snowflake_public_decode(ids, text, &id), SNOWFLAKE_STATUS_OK);
      CHECK(id == u64_field(c, "id"), "decode %s", text);
    }
    snowflake_public_free(ids);
  }
  CHECK(n >= 50, "%d public-ID vectors", n);
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "invalid_keys")) {
    ids = NULL;
    CHECK_STATUS(public_of(v, &ids), SNOWFLAKE_STATUS_VALUE);
    CHECK_DETAIL("exactly 16 bytes");
    CHECK(ids == NULL, "an output was written on a failure");
  }
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "invalid_encodings")) {
    CHECK_STATUS(public_of(v, &ids), SNOWFLAKE_STATUS_VALUE);
  }
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(json, "invalid_texts")) {
    ids = NULL;
    if (CHECK_STATUS(public_of(v, &ids), SNOWFLAKE_STATUS_OK)) continue;
    id = 42;
    CHECK_STATUS(snowflake_public_decode(ids, str_field(v, "text"), &id), SNOWFLAKE_STATUS_INVALID_ID);
    CHECK(id == 42, "an output was written on a failure");
    snowflake_public_free(ids);
  }
  cJSON_Delete(json);
}

static void test_public_errors(void) {
  SnowflakePublicIds *ids = NULL;
  char buf[12], small[11];
  uint64_t id = 0;
  int i, sorted = 1;
  char prev[12] = "";
  CHECK_STATUS(snowflake_public_new(NULL, 16, NULL, &ids), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_DETAIL("`key`");
  CHECK_STATUS(snowflake_public_new((const uint8_t *)"0123456789abcdef", 16, NULL, NULL),
               SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_public_new((const uint8_t *)"0123456789abcdef", 16, "decimal", &ids), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("fixed-width");
  if (CHECK_STATUS(snowflake_public_new((const uint8_t *)"0123456789abcdef", 16, NULL, &ids), SNOWFLAKE_STATUS_OK)) return;
  CHECK_STATUS(snowflake_public_encode(NULL, 1, buf, sizeof buf), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_public_encode(ids, 1, NULL, sizeof buf), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  memset(small, 'x', sizeof small);
  CHECK_STATUS(snowflake_public_encode(ids, 1, small, sizeof small), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
  CHECK(small[0] == 'x', "written into a short buffer");
  CHECK_STATUS(snowflake_public_decode(ids, NULL, &id), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_public_decode(ids, "0Czks0tP37X", NULL), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_public_decode(ids, "0Czks0tP37\xe9", &id), SNOWFLAKE_STATUS_INVALID_UTF8);
  /* Consecutive IDs: texts round-trip and are not in order. */
  for (i = 0; i < 64; i++) {
    uint64_t in = 1724551110456389632ull + (uint64_t)i;
    CHECK_STATUS(snowflake_public_encode(ids, in, buf, sizeof buf), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_public_decode(ids, buf, &id), SNOWFLAKE_STATUS_OK);
    CHECK(id == in, "round trip of %llu", (unsigned long long)in);
    if (i > 0 && strcmp(prev, buf) > 0) sorted = 0;
    memcpy(prev, buf, sizeof buf);
  }
  CHECK(!sorted, "64 consecutive IDs gave sorted public texts");
  snowflake_public_free(ids);
  snowflake_public_free(NULL);
}

/* Issue 13: a custom spec states its epoch, node values name every node field or none, a bad
 * state_file fails when the generator is made (naming the path), and the stats say how long
 * the layout has left. Issue 25: a state file that is no regular file (a device, a directory)
 * is refused, and the retired lease_dir and run_lock say what replaced them. */
static void test_strict_input(void) {
  SnowflakeLayout *twitter = NULL, *untouched = (SnowflakeLayout *)&twitter;
  SnowflakeGenerator *g = NULL, *other = NULL;
  SnowflakeStats stats = {.size = sizeof(SnowflakeStats)};
  char dir[] = "/tmp/snowflake-c-strict-XXXXXX", opts[512], path[256], cmd[128];
  uint64_t id = 0;
  FILE *f;

  CHECK_STATUS(snowflake_layout_new("time:41,worker:10,sequence:12", &untouched), SNOWFLAKE_STATUS_LAYOUT);
  CHECK(untouched == (SnowflakeLayout *)&twitter, "layout_new wrote its output on failure");
  CHECK_DETAIL("must state its epoch");
  CHECK_DETAIL("T00:00:00Z` (today)");
  if (CHECK_STATUS(snowflake_layout_new("twitter", &twitter), SNOWFLAKE_STATUS_OK)) return;

  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1", "isolated=true", &other), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("`worker`");
  CHECK_STATUS(snowflake_generator_new(twitter, "worker=1", "isolated=true", &other), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("`datacenter`");
  CHECK(other == NULL, "generator_new wrote its output on failure");
  CHECK_STATUS(snowflake_layout_compose(twitter, 1700000000000u, "worker=1", 0, &id), SNOWFLAKE_STATUS_VALUE);
  CHECK(id == 0, "compose wrote its output on failure");
  if (CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1,worker=3", "isolated=true", &g),
                   SNOWFLAKE_STATUS_OK) == 0) {
    if (CHECK_STATUS(snowflake_generator_stats(g, &stats), SNOWFLAKE_STATUS_OK) == 0) {
      CHECK(stats.last_unix_ms == 1288834974657u + (1ull << 41) - 1, "last_unix_ms %" PRIu64, stats.last_unix_ms);
      CHECK(stats.ms_left > 0 && stats.ms_left < stats.last_unix_ms, "ms_left %" PRIu64, stats.ms_left);
      CHECK(stats.years_left > stats.ms_left / (366.0 * 86400000.0) &&
                stats.years_left < stats.ms_left / (365.0 * 86400000.0),
            "years_left %f", stats.years_left);
    }
    snowflake_generator_free(g);
  }

  if (mkdtemp(dir) == NULL) {
    CHECK(0, "mkdtemp");
    snowflake_layout_free(twitter);
    return;
  }
  snprintf(path, sizeof path, "%s/no-such-dir/ids.state", dir);
  snprintf(opts, sizeof opts, "state_file=%s", path);
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1,worker=3", opts, &other), SNOWFLAKE_STATUS_IO);
  CHECK_DETAIL(path);
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1,worker=3", "state_file=/dev/null", &other),
               SNOWFLAKE_STATUS_STATE_FILE);
  CHECK_DETAIL("a character device");
  snprintf(opts, sizeof opts, "state_file=%s", dir);
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1,worker=3", opts, &other), SNOWFLAKE_STATUS_STATE_FILE);
  CHECK_DETAIL("a directory");
  snprintf(path, sizeof path, "%s/a-file", dir);
  f = fopen(path, "wb");
  if (f) fclose(f);
  snprintf(opts, sizeof opts, "lease=local;lease_dir=%s", path);
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1", opts, &other), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("lease_dir was retired");
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=1,worker=3", "run_lock=true", &other),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("run_lock was retired");
  CHECK(other == NULL, "generator_new wrote its output on failure");
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0, "%s", cmd);
  snowflake_layout_free(twitter);
}

/* Issue 26 in C: one spelling of a boolean in the text form, a time far ahead refused where
   the state is shared, and what a time behind the state says. */
static void test_edges(void) {
  SnowflakeLayout *twitter = NULL;
  SnowflakeGenerator *g = NULL, *lone = NULL;
  uint64_t id = 0, now;
  const char *bad_bools[] = {"isolated=1", "isolated=0", "isolated=yes", "isolated=True", "process_only=1", NULL};
  size_t i;

  if (CHECK_STATUS(snowflake_layout_new("twitter", &twitter), SNOWFLAKE_STATUS_OK)) return;
  for (i = 0; bad_bools[i] != NULL; i++) {
    /* Before: isolated=1 was true. The table says true or false: anything else is TYPE. */
    CHECK_STATUS(snowflake_generator_new(twitter, "", bad_bools[i], &g), SNOWFLAKE_STATUS_TYPE);
    CHECK_DETAIL("must be `true` or `false`");
    CHECK(g == NULL, "%s: generator_new wrote its output on failure", bad_bools[i]);
  }
  if (CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=30,worker=29", "process_only=true;max_wait_ms=0", &g),
                   SNOWFLAKE_STATUS_OK) == 0) {
    if (CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK) == 0) {
      SnowflakeParts parts;
      CHECK_STATUS(snowflake_layout_decode(twitter, id, &parts), SNOWFLAKE_STATUS_OK);
      now = parts.unix_ms;
      /* 2080: refused, the identity is not locked out. */
      CHECK_STATUS(snowflake_next_id_at(g, 3471292800000u, &id), SNOWFLAKE_STATUS_VALUE);
      CHECK_DETAIL("ahead of the clock");
      CHECK_DETAIL("`isolated` set to true");
      CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
      /* A week behind: says why, and how long the caller's clock has to go. */
      CHECK_STATUS(snowflake_next_id_at(g, now - 604800000u, &id), SNOWFLAKE_STATUS_CLOCK_BEHIND);
      CHECK_DETAIL("behind this identity's state");
      CHECK_DETAIL("replays and backfills need a generator with `isolated` set to true");
      CHECK(snowflake_last_retry_after_ms() >= 604800000u, "retry_after_ms %" PRIu64, snowflake_last_retry_after_ms());
    }
    snowflake_generator_free(g);
  }
  if (CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=30,worker=29", "isolated=true", &lone),
                   SNOWFLAKE_STATUS_OK) == 0) {
    CHECK_STATUS(snowflake_next_id_at(lone, 3471292800000u, &id), SNOWFLAKE_STATUS_OK);
    snowflake_generator_free(lone);
  }
  snowflake_layout_free(twitter);
}

/* The UUIDv7 view of every vector's ID (tests/vectors/uuid.json), both ways, and the refusals. */
static void test_uuid_vectors(const char *dir) {
  cJSON *json = load_json(dir, "uuid.json");
  const cJSON *row, *c;
  char buf[SNOWFLAKE_UUID_TEXT_SIZE], upper[SNOWFLAKE_UUID_TEXT_SIZE];
  uint64_t id;
  int n = 0;

  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(json, "layouts")) {
    SnowflakeLayout *layout = NULL;
    if (CHECK_STATUS(snowflake_layout_new(str_field(row, "spec"), &layout), SNOWFLAKE_STATUS_OK)) continue;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(row, "cases")) {
      const char *text = str_field(c, "uuid");
      size_t i;
      n++;
      CHECK_STATUS(snowflake_layout_to_uuid(layout, u64_field(c, "id"), buf, sizeof buf), SNOWFLAKE_STATUS_OK);
      CHECK(strcmp(buf, text) == 0, "%s: %s, expected %s", str_field(row, "spec"), buf, text);
      for (i = 0; text[i]; i++) upper[i] = (char)(text[i] >= 'a' && text[i] <= 'f' ? text[i] - 32 : text[i]);
      upper[i] = '\0';
      id = 0;
      CHECK_STATUS(snowflake_layout_from_uuid(layout, upper, &id), SNOWFLAKE_STATUS_OK);
      CHECK(id == u64_field(c, "id"), "from_uuid %s", upper);
    }
    /* One byte short: refused, nothing written. */
    CHECK_STATUS(snowflake_layout_to_uuid(layout, 0, buf, SNOWFLAKE_UUID_TEXT_SIZE - 1), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
    snowflake_layout_free(layout);
  }
  CHECK(n >= 50, "%d UUID vectors", n);
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(json, "to_uuid_invalid")) {
    SnowflakeLayout *layout = NULL;
    if (CHECK_STATUS(snowflake_layout_new(str_field(c, "spec"), &layout), SNOWFLAKE_STATUS_OK)) continue;
    SnowflakeStatus st = snowflake_layout_to_uuid(layout, u64_field(c, "id"), buf, sizeof buf);
    CHECK(strcmp(snowflake_status_code(st), str_field(c, "error")) == 0, "to_uuid %s: %s", str_field(c, "id"), snowflake_status_code(st));
    snowflake_layout_free(layout);
  }
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(json, "from_uuid_invalid")) {
    SnowflakeLayout *layout = NULL;
    if (CHECK_STATUS(snowflake_layout_new(str_field(c, "spec"), &layout), SNOWFLAKE_STATUS_OK)) continue;
    id = 7;
    SnowflakeStatus st = snowflake_layout_from_uuid(layout, str_field(c, "uuid"), &id);
    CHECK(strcmp(snowflake_status_code(st), str_field(c, "error")) == 0, "from_uuid %s: %s", str_field(c, "uuid"), snowflake_status_code(st));
    CHECK(strstr(snowflake_last_error(), str_field(c, "message_contains")) != NULL, "%s", snowflake_last_error());
    CHECK(id == 7, "nothing written on a failure");
    snowflake_layout_free(layout);
  }
  cJSON_Delete(json);
}

/* snowflake_generator_from_env: the code's values win, the environment fills the rest, a
 * malformed variable names itself, and snowflake_generator_sources says where each came from. */
static void test_from_env(void) {
  SnowflakeGenerator *g = NULL;
  SnowflakeLayout *discord = NULL;
  SnowflakeOptions *o = NULL;
  SnowflakeParts parts;
  char sources[2048];
  uint64_t id;

  setenv("SNOWFLAKE_LAYOUT", "twitter", 1);
  setenv("SNOWFLAKE_NODE", "datacenter=3,worker=17", 1);
  setenv("SNOWFLAKE_OPTIONS", "sequence_start=spread:4;max_wait_ms=0", 1);
  if (!CHECK_STATUS(snowflake_generator_from_env(NULL, NULL, NULL, &g), SNOWFLAKE_STATUS_OK)) {
    CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
    SnowflakeLayout *twitter = NULL;
    CHECK_STATUS(snowflake_layout_new("twitter", &twitter), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_layout_decode(twitter, id, &parts), SNOWFLAKE_STATUS_OK);
    CHECK(parts.fields[1] == 3 && parts.fields[2] == 17, "node values from SNOWFLAKE_NODE: %llu %llu",
          (unsigned long long)parts.fields[1], (unsigned long long)parts.fields[2]);
    CHECK_STATUS(snowflake_generator_sources(g, sources, sizeof sources), SNOWFLAKE_STATUS_OK);
    CHECK(strncmp(sources, "layout=SNOWFLAKE_LAYOUT;node=SNOWFLAKE_NODE;max_drift_ms=default;max_wait_ms=SNOWFLAKE_OPTIONS;", 95) == 0, "%s", sources);
    CHECK(strstr(sources, ";sequence_start=SNOWFLAKE_OPTIONS;") != NULL, "%s", sources);
    CHECK_STATUS(snowflake_generator_sources(g, sources, 10), SNOWFLAKE_STATUS_BUFFER_TOO_SMALL);
    snowflake_layout_free(twitter);
    snowflake_generator_free(g);
  }
  /* The code's layout, node values and option win; the rest still comes from the environment. */
  CHECK_STATUS(snowflake_layout_new("discord", &discord), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_options_new("max_wait_ms=5", &o), SNOWFLAKE_STATUS_OK);
  g = NULL;
  if (!CHECK_STATUS(snowflake_generator_from_env(discord, "worker=1,process=2", o, &g), SNOWFLAKE_STATUS_OK)) {
    CHECK_STATUS(snowflake_generator_sources(g, sources, sizeof sources), SNOWFLAKE_STATUS_OK);
    CHECK(strncmp(sources, "layout=code;node=code;max_drift_ms=default;max_wait_ms=code;", 60) == 0, "%s", sources);
    CHECK(strstr(sources, ";sequence_start=SNOWFLAKE_OPTIONS;") != NULL, "%s", sources);
    snowflake_generator_free(g);
  }
  snowflake_options_free(o);
  /* SNOWFLAKE_NODE read against the code's layout: discord has no `datacenter`. */
  g = NULL;
  CHECK_STATUS(snowflake_generator_from_env(discord, NULL, NULL, &g), SNOWFLAKE_STATUS_VALUE);
  CHECK(strstr(snowflake_last_error(), "environment variable SNOWFLAKE_NODE=\"datacenter=3,worker=17\": ") != NULL, "%s", snowflake_last_error());
  CHECK(g == NULL, "nothing written on a failure");
  snowflake_layout_free(discord);
  setenv("SNOWFLAKE_LAYOUT", "twiter", 1);
  CHECK_STATUS(snowflake_generator_from_env(NULL, NULL, NULL, &g), SNOWFLAKE_STATUS_LAYOUT);
  CHECK(strstr(snowflake_last_error(), "environment variable SNOWFLAKE_LAYOUT=\"twiter\": invalid layout") != NULL, "%s", snowflake_last_error());
  setenv("SNOWFLAKE_LAYOUT", "twitter", 1);
  setenv("SNOWFLAKE_OPTIONS", "max_wait_ms=0,isolated=true", 1);
  CHECK_STATUS(snowflake_generator_from_env(NULL, NULL, NULL, &g), SNOWFLAKE_STATUS_VALUE);
  CHECK(strstr(snowflake_last_error(), "SNOWFLAKE_OPTIONS=\"max_wait_ms=0,isolated=true\"") != NULL, "%s", snowflake_last_error());
  /* The options text's `;` hint, read from the environment too (issue 29 meets issue 28). */
  CHECK(strstr(snowflake_last_error(), "options are separated by `;`, not `,`") != NULL, "%s", snowflake_last_error());
  unsetenv("SNOWFLAKE_LAYOUT");
  unsetenv("SNOWFLAKE_NODE");
  unsetenv("SNOWFLAKE_OPTIONS");
}

/* XSI's putenv (this file asks for POSIX alone, which declares setenv but not putenv). */
extern int putenv(char *string);

/* Issue 40: the environment's rules are core's; the same words as every other front end. */
static void test_environment_issue_40(void) {
  static const struct {
    const char *layout, *node, *options, *require, *message;
  } cases[] = {
      {NULL, "datacenter=1,worker=0", "lease=local", NULL,
       "environment variable SNOWFLAKE_NODE=\"datacenter=1,worker=0\": `worker`: this field is set by the generator (the lease or the rollover): give it no node value"},
      {NULL, NULL, "lease=redis://app:pa;ss@cache:6379/0;max_wait_ms=0", NULL,
       "environment variable SNOWFLAKE_OPTIONS=\"lease=redis://***;***;max_wait_ms=0\": `lease`: the lease address holds a `;` (in its password?), which separates options: percent-encode it as %3B, or give the password with lease_password_file="},
      {"twitter;lease=redis://app:s3cret@cache/0", NULL, NULL, NULL,
       "environment variable SNOWFLAKE_LAYOUT=\"twitter;lease=***\": `lease`: is not part of a layout (a layout takes `epoch=` and `tick=`): options go in SNOWFLAKE_OPTIONS"},
      {NULL, NULL, "isolated=true", NULL,
       "environment variable SNOWFLAKE_OPTIONS=\"isolated=true\": `isolated`: isolated takes a generator outside the host's record (for tests and replays with a clock of their own): give it in the code, never from the environment"},
      {NULL, NULL, NULL, "1",
       "environment variable SNOWFLAKE_REQUIRE_NODE=\"1\": `SNOWFLAKE_NODE`: no node values are given, in the code or in SNOWFLAKE_NODE, and node 0 is refused: set SNOWFLAKE_NODE (`datacenter=1,worker=7`) or a lease"},
      {NULL, "datacenter=1,wroker=7", NULL, NULL,
       "environment variable SNOWFLAKE_NODE=\"datacenter=1,wroker=7\": the layout has no field `wroker`: did you mean `worker`? (its node fields: datacenter, worker)"},
  };
  SnowflakeGenerator *g = NULL;
  SnowflakeLayout *twitter = NULL;
  SnowflakeParts parts;
  uint64_t id = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *names[] = {"SNOWFLAKE_LAYOUT", "SNOWFLAKE_NODE", "SNOWFLAKE_OPTIONS", "SNOWFLAKE_REQUIRE_NODE"};
    const char *values[] = {cases[i].layout, cases[i].node, cases[i].options, cases[i].require};
    for (int k = 0; k < 4; k++) {
      if (values[k]) setenv(names[k], values[k], 1);
      else unsetenv(names[k]);
    }
    g = NULL;
    CHECK_STATUS(snowflake_generator_from_env(NULL, NULL, NULL, &g), SNOWFLAKE_STATUS_VALUE);
    CHECK(strcmp(snowflake_last_error(), cases[i].message) == 0, "case %zu: %s", i, snowflake_last_error());
    CHECK(g == NULL, "nothing written on a failure");
  }
  unsetenv("SNOWFLAKE_LAYOUT");
  unsetenv("SNOWFLAKE_REQUIRE_NODE");
  CHECK_STATUS(snowflake_layout_new("twitter", &twitter), SNOWFLAKE_STATUS_OK);
  /* A lease and the other node values, both from the environment. */
  setenv("SNOWFLAKE_NODE", "datacenter=1", 1);
  setenv("SNOWFLAKE_OPTIONS", "lease=local;max_wait_ms=0", 1);
  g = NULL;
  if (!CHECK_STATUS(snowflake_generator_from_env(NULL, NULL, NULL, &g), SNOWFLAKE_STATUS_OK)) {
    CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_layout_decode(twitter, id, &parts), SNOWFLAKE_STATUS_OK);
    CHECK(parts.fields[1] == 1, "datacenter from SNOWFLAKE_NODE beside a lease: %llu", (unsigned long long)parts.fields[1]);
    snowflake_generator_free(g);
  }
  /* Empty node values from the code give none: SNOWFLAKE_NODE applies, as in every front end. */
  setenv("SNOWFLAKE_NODE", "datacenter=2,worker=9", 1);
  setenv("SNOWFLAKE_OPTIONS", "max_wait_ms=0", 1);
  g = NULL;
  if (!CHECK_STATUS(snowflake_generator_from_env(twitter, "", NULL, &g), SNOWFLAKE_STATUS_OK)) {
    CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_layout_decode(twitter, id, &parts), SNOWFLAKE_STATUS_OK);
    CHECK(parts.fields[1] == 2 && parts.fields[2] == 9, "an empty node text reads SNOWFLAKE_NODE: %llu %llu",
          (unsigned long long)parts.fields[1], (unsigned long long)parts.fields[2]);
    snowflake_generator_free(g);
  }
  /* Issue 44: the library reads its variables again only when the environment changes. A
     variable set with putenv() is the caller's buffer: changed in place, the same string at the
     same address, it is still read anew (the environment's fingerprint covers our variables'
     text), for each generator made. */
  {
    static char node_var[] = "SNOWFLAKE_NODE=datacenter=1,worker=1";
    CHECK(putenv(node_var) == 0, "putenv");
    for (char worker = '1'; worker <= '3'; worker++) {
      node_var[sizeof node_var - 2] = worker;
      g = NULL;
      if (!CHECK_STATUS(snowflake_generator_from_env(twitter, NULL, NULL, &g), SNOWFLAKE_STATUS_OK)) {
        CHECK_STATUS(snowflake_next_id(g, &id), SNOWFLAKE_STATUS_OK);
        CHECK_STATUS(snowflake_layout_decode(twitter, id, &parts), SNOWFLAKE_STATUS_OK);
        CHECK(parts.fields[2] == (uint64_t)(worker - '0'), "SNOWFLAKE_NODE changed in place: worker %llu, set %c",
              (unsigned long long)parts.fields[2], worker);
        snowflake_generator_free(g);
      }
    }
  }
  snowflake_layout_free(twitter);
  unsetenv("SNOWFLAKE_NODE");
  unsetenv("SNOWFLAKE_OPTIONS");
}

/* Issue 29: a decoded field by name, and the hints of both text forms. */
static void test_first_hour(void) {
  SnowflakeLayout *twitter = NULL, *discord = NULL;
  SnowflakeGenerator *g = NULL;
  SnowflakeParts parts, other;
  uint64_t id = 0, value = 99;
  CHECK_STATUS(snowflake_layout_new("twitter", &twitter), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_layout_new("discord", &discord), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_layout_compose(twitter, 1700000000123u, "datacenter=7,worker=19", 42, &id),
               SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_layout_decode(twitter, id, &parts), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_layout_field_value(twitter, &parts, "worker", &value), SNOWFLAKE_STATUS_OK);
  CHECK(value == 19, "worker %llu", (unsigned long long)value);
  CHECK_STATUS(snowflake_layout_field_value(twitter, &parts, "datacenter", &value), SNOWFLAKE_STATUS_OK);
  CHECK(value == 7, "datacenter %llu", (unsigned long long)value);
  CHECK_STATUS(snowflake_layout_field_value(twitter, &parts, "sequence", &value), SNOWFLAKE_STATUS_OK);
  CHECK(value == 42, "sequence %llu", (unsigned long long)value);
  CHECK_STATUS(snowflake_layout_field_value(twitter, &parts, "time", &value), SNOWFLAKE_STATUS_OK);
  CHECK(value == parts.tick, "time is the tick");
  value = 99;
  CHECK_STATUS(snowflake_layout_field_value(twitter, &parts, "shard", &value), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("the layout has no field `shard`");
  CHECK(value == 99, "field_value wrote its output on failure");
  CHECK_STATUS(snowflake_layout_field_value(twitter, &parts, NULL, &value), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_field_value(twitter, NULL, "worker", &value), SNOWFLAKE_STATUS_NULL_ARGUMENT);
  CHECK_STATUS(snowflake_layout_decode(discord, 175928847299117063u, &other), SNOWFLAKE_STATUS_OK);
  CHECK_STATUS(snowflake_layout_field_value(discord, &other, "process", &value), SNOWFLAKE_STATUS_OK);
  other.field_count = 3;
  CHECK_STATUS(snowflake_layout_field_value(discord, &other, "process", &value), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("not decoded with this layout");

  /* Options written like node values, and node values written like options: each error says
   * which separator the other uses. */
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=7,worker=20", "max_wait_ms=0,max_drift_ms=5", &g),
               SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("options are separated by `;`, not `,`");
  CHECK_STATUS(snowflake_generator_new(twitter, "datacenter=7;worker=20", NULL, &g), SNOWFLAKE_STATUS_VALUE);
  CHECK_DETAIL("node values are separated by `,`");
  CHECK(g == NULL, "no generator on failure");
  /* An expired layout says when it ended, as a date. */
  {
    SnowflakeLayout *baidu = NULL;
    CHECK_STATUS(snowflake_layout_new("baidu", &baidu), SNOWFLAKE_STATUS_OK);
    CHECK_STATUS(snowflake_layout_min_id(baidu, 1800000000000u, &id), SNOWFLAKE_STATUS_TIME_RANGE);
    CHECK_DETAIL("last instant 1732109055999 (2024-11-20T13:24:15.999Z)");
    snowflake_layout_free(baidu);
  }
  snowflake_layout_free(discord);
  snowflake_layout_free(twitter);
}

int main(int argc, char **argv) {
  const char *vectors = argc > 1 ? argv[1] : "tests/vectors";
  size_t per_thread = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 200000;

  test_version();
  test_statuses();
  test_layout_vectors(vectors);
  test_encoding_vectors(vectors);
  test_generator_vectors(vectors);
  test_layout_errors();
  test_longest_layout_text();
  test_redis_script_vectors(vectors);
  test_redis_script_errors();
  test_sql_vectors(vectors);
  test_sql_errors();
  test_public_vectors(vectors);
  test_public_errors();
  test_uuid_vectors(vectors);
  test_from_env();
  test_environment_issue_40();
  test_generator_errors();
  test_strict_input();
  test_edges();
  test_encoding_errors();
  test_generator_basics();
  test_stats_size();
  test_threads(per_thread);
  test_fork();
  test_options_object();
  test_first_hour();
  test_coordination();
  test_mixing();
  return check_summary();
}
