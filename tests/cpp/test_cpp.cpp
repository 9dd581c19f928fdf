// The C++ wrapper: a subset of the shared vectors (the Redis scripts included), exceptions,
// RAII and moves, threads, and the second translation unit of double_include.cpp. Usage: test_cpp <vectors-dir>.
#include <snowflake.hpp>

#include <cjson/cJSON.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <type_traits>

#include "../c/check.h"

std::string double_include_encode(std::uint64_t id);

namespace {

struct Json {
  cJSON* root;
  explicit Json(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    root = cJSON_Parse(text.str().c_str());
    if (root == nullptr) {
      std::fprintf(stderr, "cannot parse %s\n", path.c_str());
      std::exit(2);
    }
  }
  ~Json() { cJSON_Delete(root); }
  Json(const Json&) = delete;
  Json& operator=(const Json&) = delete;
  const cJSON* operator[](const char* key) const { return cJSON_GetObjectItemCaseSensitive(root, key); }
};

std::uint64_t u64(const cJSON* item) {
  return cJSON_IsString(item) ? std::strtoull(item->valuestring, nullptr, 10)
                              : static_cast<std::uint64_t>(item->valuedouble);
}
std::uint64_t u64(const cJSON* obj, const char* key) { return u64(cJSON_GetObjectItemCaseSensitive(obj, key)); }
std::string str(const cJSON* obj, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(item) ? item->valuestring : "";
}

void test_layout_vectors(const std::string& dir) {
  Json json(dir + "/layouts.json");
  const cJSON* v;
  cJSON_ArrayForEach(v, json["layouts"]) {
    snowflake::Layout layout(str(v, "spec"));
    CHECK(layout.to_string() == str(v, "canonical"), "%s", layout.to_string().c_str());
    CHECK(layout.fingerprint() == u64(v, "fingerprint"), "fingerprint of %s", str(v, "spec").c_str());
    CHECK(layout.epoch_ms() == u64(v, "epoch_ms") && layout.tick_ms() == u64(v, "tick_ms") &&
              layout.last_unix_ms() == u64(v, "last_unix_ms") && layout.total_bits() == u64(v, "total_bits"),
          "info of %s", str(v, "spec").c_str());
    CHECK(layout.fields().size() == static_cast<std::size_t>(cJSON_GetArraySize(cJSON_GetObjectItem(v, "fields"))),
          "field count of %s", str(v, "spec").c_str());
    const cJSON* d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(v, "decode")) {
      snowflake::Parts p = layout.decode(u64(d, "id"));
      CHECK(p.unix_ms == u64(d, "unix_ms") && p.tick == u64(d, "tick") && p.sequence == u64(d, "sequence"),
            "decode %s", str(d, "id").c_str());
      const cJSON* f;
      std::size_t n = 0;
      std::string node;
      cJSON_ArrayForEach(f, cJSON_GetObjectItem(d, "fields")) {
        CHECK(p.field(f->string) == u64(f), "decode %s: %s", str(d, "id").c_str(), f->string);
        node += (n++ ? "," : "") + std::string(f->string) + "=" + std::to_string(u64(f));
      }
      CHECK(p.fields.size() == n, "decode %s: %zu node fields", str(d, "id").c_str(), p.fields.size());
      CHECK(layout.compose(p.unix_ms, node, p.sequence) == p.id, "compose %s", str(d, "id").c_str());
    }
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(v, "bounds")) {
      CHECK(layout.min_id(u64(d, "unix_ms")) == u64(d, "min_id") &&
                layout.max_id(u64(d, "unix_ms")) == u64(d, "max_id"),
            "bounds of %s", str(v, "spec").c_str());
    }
  }
  cJSON_ArrayForEach(v, json["invalid"]) {
    try {
      snowflake::Layout bad(str(v, "spec"));
      CHECK(false, "\"%s\" parsed", str(v, "spec").c_str());
    } catch (const snowflake::Error& e) {
      CHECK(e.code() == str(v, "error"), "\"%s\": %s", str(v, "spec").c_str(), e.code());
    }
  }
}

void test_encoding_vectors(const std::string& dir) {
  Json json(dir + "/encodings.json");
  const cJSON* v;
  cJSON_ArrayForEach(v, json["ids"]) {
    for (const char* form : {"plain", "reverse"}) {
      const bool reverse = std::string(form) == "reverse";
      const cJSON* e;
      cJSON_ArrayForEach(e, cJSON_GetObjectItem(v, form)) {
        CHECK(snowflake::encode(u64(v, "id"), e->string, reverse) == e->valuestring, "encode %s %s",
              str(v, "id").c_str(), e->string);
        CHECK(snowflake::decode_str(e->valuestring, e->string, reverse) == u64(v, "id"), "decode_str %s",
              e->valuestring);
      }
    }
  }
  cJSON_ArrayForEach(v, json["invalid"]) {
    try {
      (void)snowflake::decode_str(str(v, "text"), str(v, "encoding"));
      CHECK(false, "\"%s\" parsed", str(v, "text").c_str());
    } catch (const snowflake::Error& e) {
      CHECK(e.code() == str(v, "error"), "\"%s\": %s", str(v, "text").c_str(), e.code());
    }
  }
}

void test_generator_vectors(const std::string& dir) {
  Json json(dir + "/generator.json");
  const cJSON* trace;
  cJSON_ArrayForEach(trace, json["traces"]) {
    snowflake::Generator gen(snowflake::Layout(str(trace, "layout")), str(trace, "node_spec"),
                             str(trace, "options"));
    const cJSON* step;
    int i = 0;
    cJSON_ArrayForEach(step, cJSON_GetObjectItem(trace, "steps")) {
      try {
        std::uint64_t id = gen.next_id_at(u64(step, "unix_ms"));
        CHECK(str(step, "error").empty() && id == u64(step, "id"), "%s, step %d", str(trace, "name").c_str(), i);
      } catch (const snowflake::Error& e) {
        CHECK(e.code() == str(step, "error"), "%s, step %d: %s", str(trace, "name").c_str(), i, e.code());
      }
      i++;
    }
  }
}

void test_exceptions() {
  snowflake::Layout layout("time:41,worker:10,sequence:1;epoch=0");
  snowflake::Generator gen(layout, "worker=1", "max_wait_ms=0;isolated=true");
  (void)gen.next_id_at(5000);
  (void)gen.next_id_at(5000);
  try {
    (void)gen.next_id_at(5000);
    CHECK(false, "a third ID in a 2-ID tick");
  } catch (const snowflake::Error& e) {
    CHECK(e.status() == SNOWFLAKE_STATUS_SEQUENCE_EXHAUSTED, "%s", e.code());
    CHECK(std::string(e.code()) == "ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED", "%s", e.code());
    CHECK(e.retry_after_ms() == 1, "retry after %llu", static_cast<unsigned long long>(e.retry_after_ms()));
    CHECK(std::string(e.what()).find("retry in 1 ms") != std::string::npos, "%s", e.what());
  }
  try {
    snowflake::Generator bad(layout, "worker=1024");
    CHECK(false, "worker=1024 accepted");
  } catch (const snowflake::Error& e) {
    CHECK(e.status() == SNOWFLAKE_STATUS_VALUE && e.retry_after_ms() == 0, "%s", e.code());
    CHECK(std::string(e.what()).find("worker = 1024") != std::string::npos, "%s", e.what());
  }
  try {
    (void)layout.decode(5000 << 11).field("shard");
    CHECK(false, "a missing field was found");
  } catch (const snowflake::Error& e) {
    CHECK(e.status() == SNOWFLAKE_STATUS_VALUE, "%s", e.code());
  }
  bool caught_as_std = false;
  try {
    (void)snowflake::encode(1, "base64");
  } catch (const std::exception& e) {
    caught_as_std = std::string(e.what()).find("base64") != std::string::npos;
  }
  CHECK(caught_as_std, "snowflake::Error is a std::exception with the detail");
}

void test_raii_and_batches() {
  static_assert(!std::is_copy_constructible_v<snowflake::Layout>, "Layout is move-only");
  static_assert(!std::is_copy_constructible_v<snowflake::Generator>, "Generator is move-only");
  static_assert(std::is_nothrow_move_constructible_v<snowflake::Generator>, "moves do not throw");

  snowflake::Layout a("discord");
  snowflake::Layout b = std::move(a);
  CHECK(b.get() != nullptr && b.to_string().rfind("time:42", 0) == 0, "moved layout works");
  // A generator outlives the layout it was made from (it keeps a copy).
  auto gen = std::make_unique<snowflake::Generator>(snowflake::Layout("twitter"), "datacenter=0,worker=4");
  snowflake::Generator moved = std::move(*gen);
  gen.reset();  // frees nothing live: the handle moved
  std::uint64_t first = moved.next_id();
  std::vector<std::uint64_t> ids = moved.next_ids(5000);
  CHECK(ids.size() == 5000 && std::is_sorted(ids.begin(), ids.end()) && ids.front() > first, "next_ids(n)");
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end(), "next_ids(n) has no duplicate");
  std::uint64_t buf[64] = {};
  moved.next_ids(buf, 64);
  CHECK(buf[0] > ids.back() && std::is_sorted(buf, buf + 64), "next_ids(ptr, n)");
  snowflake::Block block = moved.reserve(8);
  CHECK(block.count >= 1 && block.first > buf[63], "reserve");
  CHECK(moved.stats().issued == 1 + 5000 + 64 + block.count, "stats: %llu",
        static_cast<unsigned long long>(moved.stats().issued));
  CHECK(double_include_encode(255) == "00000000000000ff", "the second translation unit");
  CHECK(snowflake::version() == SNOWFLAKE_VERSION, "version %s", snowflake::version().c_str());
}

void test_threads() {
  snowflake::Generator gen(snowflake::Layout("twitter"), "datacenter=2,worker=2");
  constexpr int kThreads = 4;
  constexpr std::size_t kEach = 50000;
  std::vector<std::vector<std::uint64_t>> per(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++)
    threads.emplace_back([&gen, &per, t] {
      for (std::size_t i = 0; i < kEach; i++) per[t].push_back(i % 2 ? gen.next_id() : gen.next_ids(3).back());
    });
  for (auto& th : threads) th.join();
  std::vector<std::uint64_t> all;
  for (const auto& ids : per) {
    CHECK(std::is_sorted(ids.begin(), ids.end()), "each thread's IDs increase");
    all.insert(all.end(), ids.begin(), ids.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end(), "no duplicate among %zu IDs", all.size());
}

void test_redis_scripts(const std::string& dir) {
  Json json(dir + "/redis_scripts.json");
  const cJSON* v;
  int n = 0;
  cJSON_ArrayForEach(v, json["scripts"]) {
    n++;
    const std::string script = snowflake::Layout(str(v, "spec")).redis_script();
    CHECK(script == str(v, "script"), "the Redis script of %s differs from core's", str(v, "spec").c_str());
    CHECK(script.size() == std::strlen(script.c_str()), "%s: no NUL inside the string", str(v, "spec").c_str());
  }
  CHECK(n == 8, "%d scripts in redis_scripts.json", n);
}

void test_sql(const std::string& dir) {
  Json json(dir + "/sql_scripts.json");
  const cJSON* v;
  int n = 0, refused = 0;
  cJSON_ArrayForEach(v, json["scripts"]) {
    n++;
    const snowflake::Layout layout(str(v, "spec"));
    if (str(v, "sql").empty()) {
      refused++;
      try {
        (void)layout.sql("postgres");
        CHECK(false, "the 64-bit %s was not refused", str(v, "spec").c_str());
      } catch (const snowflake::Error& e) {
        CHECK(std::string(e.code()) == str(v, "error"), "%s", e.code());
      }
      continue;
    }
    CHECK(layout.sql("postgres") == str(v, "sql"), "the SQL of %s differs from core's", str(v, "spec").c_str());
  }
  CHECK(n == 8 && refused > 0, "%d SQL vectors, %d refused", n, refused);
}

// Issue 28: the UUIDv7 view (the shared vectors) and a generator from the environment.
void test_uuid_and_environment(const std::string& dir) {
  Json json(dir + "/uuid.json");
  const cJSON *row, *c;
  int n = 0;
  cJSON_ArrayForEach(row, json["layouts"]) {
    const snowflake::Layout layout(str(row, "spec"));
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(row, "cases")) {
      n++;
      CHECK(layout.to_uuid(u64(c, "id")) == str(c, "uuid"), "%s: to_uuid", str(c, "uuid").c_str());
      CHECK(layout.from_uuid(str(c, "uuid")) == u64(c, "id"), "%s: from_uuid", str(c, "uuid").c_str());
    }
  }
  CHECK(n > 50, "%d UUID vectors", n);
  try {
    (void)snowflake::Layout("twitter").from_uuid("0181ab11-8149-65e8-8000-000000000000");
    CHECK(false, "a version 6 UUID was accepted");
  } catch (const snowflake::Error& e) {
    CHECK(std::strcmp(e.code(), "ERR_SNOWFLAKE_INVALID_ID") == 0, "%s", e.code());
  }
  setenv("SNOWFLAKE_NODE", "datacenter=4,worker=5", 1);
  setenv("SNOWFLAKE_OPTIONS", "max_wait_ms=0", 1);
  const auto g = snowflake::Generator::from_env();
  SnowflakeParts parts{};
  snowflake::detail::check(snowflake_layout_decode(snowflake::Layout("twitter").get(), g.next_id(), &parts));
  CHECK(parts.fields[1] == 4 && parts.fields[2] == 5, "node values from SNOWFLAKE_NODE");
  CHECK(g.sources().rfind("layout=default;node=SNOWFLAKE_NODE;", 0) == 0, "%s", g.sources().c_str());
  setenv("SNOWFLAKE_NODE", "datacenter=4", 1);
  try {
    (void)snowflake::Generator::from_env();
    CHECK(false, "a partial SNOWFLAKE_NODE was accepted");
  } catch (const snowflake::Error& e) {
    CHECK(std::strstr(e.what(), "SNOWFLAKE_NODE=\"datacenter=4\"") != nullptr, "%s", e.what());
  }
  unsetenv("SNOWFLAKE_NODE");
  unsetenv("SNOWFLAKE_OPTIONS");
}

std::string bytes_of_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::strtoul(hex.substr(i, 2).c_str(), nullptr, 16)));
  return out;
}

void test_public_ids(const std::string& dir) {
  Json json(dir + "/public_ids.json");
  const cJSON* row;
  int n = 0;
  cJSON_ArrayForEach(row, json["keys"]) {
    const snowflake::PublicIds ids(bytes_of_hex(str(row, "key_hex")), str(row, "encoding"));
    const cJSON* c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(row, "cases")) {
      n++;
      CHECK(ids.encode(u64(c, "id")) == str(c, "text"), "public text of %s", str(c, "id").c_str());
      CHECK(ids.decode(str(c, "text")) == u64(c, "id"), "decode %s", str(c, "text").c_str());
    }
  }
  CHECK(n >= 50, "%d public-ID vectors", n);
  try {
    snowflake::PublicIds bad(std::string(15, 'k'));
    CHECK(false, "a 15-byte key was accepted");
  } catch (const snowflake::Error& e) {
    CHECK(e.status() == SNOWFLAKE_STATUS_VALUE, "%s", e.code());
  }
  snowflake::PublicIds ids(std::string(16, 'k'));
  try {
    (void)ids.decode("0Czks0tP37");
    CHECK(false, "a 10-character text was accepted");
  } catch (const snowflake::Error& e) {
    CHECK(e.status() == SNOWFLAKE_STATUS_INVALID_ID, "%s", e.code());
  }
  snowflake::PublicIds moved = std::move(ids);
  CHECK(moved.decode(moved.encode(7)) == 7, "a moved codec works");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string vectors = argc > 1 ? argv[1] : "tests/vectors";
  try {
    test_layout_vectors(vectors);
    test_encoding_vectors(vectors);
    test_generator_vectors(vectors);
    test_redis_scripts(vectors);
    test_sql(vectors);
    test_public_ids(vectors);
    test_uuid_and_environment(vectors);
    test_exceptions();
    test_raii_and_batches();
    test_threads();
  } catch (const snowflake::Error& e) {
    CHECK(false, "unexpected %s: %s", e.code(), e.what());
  }
  return check_summary();
}
