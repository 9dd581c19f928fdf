// libsnowflake for C++17: a header-only wrapper over the C API of snowflake.h.
//
//   snowflake::Layout layout("twitter");
//   snowflake::Generator gen(layout, "datacenter=1,worker=3");
//   std::uint64_t id = gen.next_id();
//   snowflake::Parts parts = layout.decode(id);    // parts.unix_ms, parts.field("worker")
//
// Handles are RAII (std::unique_ptr with the C free function as deleter) and move-only.
// Every failure throws snowflake::Error, which carries the SnowflakeStatus and the library's
// detail message. A Generator may be used from many threads at once.
#ifndef SNOWFLAKE_HPP
#define SNOWFLAKE_HPP

// string_view, [[nodiscard]], inline variables: C++17. Older standards get this one line,
// not a cascade of errors from the standard library.
#if !defined(__cplusplus) || (__cplusplus < 201703L && (!defined(_MSVC_LANG) || _MSVC_LANG < 201703L))
#error "snowflake.hpp needs C++17 or later (e.g. -std=c++17); from C, include snowflake.h"
#else

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "snowflake.h"

namespace snowflake {

/// A failed call: the status, its stable code ("ERR_SNOWFLAKE_VALUE", ...) and the detail
/// (which field, which value, how far the clock is behind). what() is the detail.
class Error : public std::runtime_error {
 public:
  Error(SnowflakeStatus status, const std::string& detail, std::uint64_t retry_after_ms = 0)
      : std::runtime_error(detail.empty() ? std::string(snowflake_status_str(status)) : detail),
        status_(status),
        retry_after_ms_(retry_after_ms) {}

  /// The C status.
  [[nodiscard]] SnowflakeStatus status() const noexcept { return status_; }
  /// The stable code shared by every binding: "ERR_SNOWFLAKE_CLOCK_BEHIND", ...
  [[nodiscard]] const char* code() const noexcept { return snowflake_status_code(status_); }
  /// After SNOWFLAKE_STATUS_CLOCK_BEHIND or SNOWFLAKE_STATUS_SEQUENCE_EXHAUSTED: when a retry
  /// can succeed, in ms; 0 otherwise.
  [[nodiscard]] std::uint64_t retry_after_ms() const noexcept { return retry_after_ms_; }

 private:
  SnowflakeStatus status_;
  std::uint64_t retry_after_ms_;
};

namespace detail {

/// Throws the Error of a failed status (with this thread's detail).
inline void check(SnowflakeStatus status) {
  if (status != SNOWFLAKE_STATUS_OK) throw Error(status, snowflake_last_error(), snowflake_last_retry_after_ms());
}

struct LayoutDeleter {
  void operator()(SnowflakeLayout* p) const noexcept { snowflake_layout_free(p); }
};
struct GeneratorDeleter {
  void operator()(SnowflakeGenerator* p) const noexcept { snowflake_generator_free(p); }
};
struct PublicIdsDeleter {
  void operator()(SnowflakePublicIds* p) const noexcept { snowflake_public_free(p); }
};

}  // namespace detail

/// The library's version ("0.1.0"); SNOWFLAKE_VERSION is the header's.
[[nodiscard]] inline std::string version() { return snowflake_version(); }

/// One bit field of a layout.
struct Field {
  std::string name;
  std::uint8_t bits;
  std::uint8_t shift;
  SnowflakeFieldKind kind;
};

/// A decoded ID: named parts, and the node fields as (name, value) pairs from high to low.
struct Parts {
  std::uint64_t id = 0;
  std::uint64_t unix_ms = 0;
  std::uint64_t tick = 0;
  std::uint64_t sequence = 0;
  std::vector<std::pair<std::string, std::uint64_t>> fields;

  /// The value of node field `name`; throws Error (SNOWFLAKE_STATUS_VALUE) if there is none.
  [[nodiscard]] std::uint64_t field(std::string_view name) const {
    for (const auto& f : fields)
      if (f.first == name) return f.second;
    throw Error(SNOWFLAKE_STATUS_VALUE, "the layout has no node field `" + std::string(name) + "`");
  }
};

/// A run of IDs of one tick: first, first + stride, ..., count of them.
using Block = SnowflakeBlock;
/// What a generator has done.
using Stats = SnowflakeStats;

/// A layout: the bit fields of an ID, an epoch and a tick. Immutable; move-only.
class Layout {
 public:
  /// Parses a spec ("time:41,worker:10,sequence:12;epoch=...") or a preset ("twitter").
  explicit Layout(const std::string& spec) {
    SnowflakeLayout* raw = nullptr;
    detail::check(snowflake_layout_new(spec.c_str(), &raw));
    handle_.reset(raw);
    const std::size_t n = snowflake_layout_field_count(raw);
    fields_.reserve(n);
    for (std::size_t i = 0; i < n; i++) {
      SnowflakeField f;
      detail::check(snowflake_layout_field(raw, i, &f));
      fields_.push_back(Field{f.name, f.bits, f.shift, f.kind});
    }
  }

  /// The canonical text (integer epoch, tick always written).
  [[nodiscard]] std::string to_string() const {
    char buf[1024];  // always enough (documented in snowflake.h)
    detail::check(snowflake_layout_to_string(get(), buf, sizeof buf));
    return buf;
  }
  /// The layout's Lua script for Redis (issue 6), the text of `snowflake redis-script`: load
  /// it with SCRIPT LOAD and call `EVALSHA <sha1> 1 <state-key> <node values in layout
  /// order>`; it returns the ID as a decimal string.
  [[nodiscard]] std::string redis_script() const {
    std::size_t needed = 0;
    const SnowflakeStatus size = snowflake_layout_redis_script(get(), nullptr, 0, &needed);
    if (size != SNOWFLAKE_STATUS_BUFFER_TOO_SMALL) detail::check(size);
    std::string script(needed, '\0');
    detail::check(snowflake_layout_redis_script(get(), script.data(), script.size(), nullptr));
    script.resize(needed - 1);  // the NUL
    return script;
  }
  /// The SQL that installs this layout's ID functions in a database (issue 14), the text of
  /// `snowflake sql`: `dialect` "postgres" (12 or later) installs PREFIX_next_id(<node values in
  /// layout order>), PREFIX_next_id_at(..., unix_ms), PREFIX_min_id / PREFIX_max_id(timestamptz)
  /// and PREFIX_decode(bigint). Throws Error (SNOWFLAKE_STATUS_VALUE) for a 64-bit layout, an
  /// unknown dialect or a bad prefix.
  [[nodiscard]] std::string sql(const std::string& dialect, const std::string& prefix = "snowflake") const {
    std::size_t needed = 0;
    const SnowflakeStatus size = snowflake_layout_sql(get(), dialect.c_str(), prefix.c_str(), nullptr, 0, &needed);
    if (size != SNOWFLAKE_STATUS_BUFFER_TOO_SMALL) detail::check(size);
    std::string text(needed, '\0');
    detail::check(snowflake_layout_sql(get(), dialect.c_str(), prefix.c_str(), text.data(), text.size(), nullptr));
    text.resize(needed - 1);  // the NUL
    return text;
  }
  /// A stable 64-bit fingerprint of the layout.
  [[nodiscard]] std::uint64_t fingerprint() const noexcept { return snowflake_layout_fingerprint(get()); }
  /// The fields, from the most significant down (time first).
  [[nodiscard]] const std::vector<Field>& fields() const noexcept { return fields_; }

  [[nodiscard]] std::uint64_t epoch_ms() const { return info().epoch_ms; }
  [[nodiscard]] std::uint64_t tick_ms() const { return info().tick_ms; }
  [[nodiscard]] std::uint64_t last_unix_ms() const { return info().last_unix_ms; }
  [[nodiscard]] std::uint8_t total_bits() const { return info().total_bits; }

  /// The parts of `id`; throws Error (SNOWFLAKE_STATUS_INVALID_ID) for an ID outside the layout.
  [[nodiscard]] Parts decode(std::uint64_t id) const {
    SnowflakeParts p;
    detail::check(snowflake_layout_decode(get(), id, &p));
    Parts out;
    out.id = p.id;
    out.unix_ms = p.unix_ms;
    out.tick = p.tick;
    out.sequence = p.sequence;
    for (std::size_t i = 0; i < p.field_count && i < fields_.size(); i++)
      if (fields_[i].kind == SNOWFLAKE_FIELD_NODE) out.fields.emplace_back(fields_[i].name, p.fields[i]);
    return out;
  }

  /// The ID of `unix_ms`, node values in text form ("datacenter=1,worker=3") and `sequence`.
  [[nodiscard]] std::uint64_t compose(std::uint64_t unix_ms, const std::string& node,
                                      std::uint64_t sequence) const {
    std::uint64_t id = 0;
    detail::check(snowflake_layout_compose(get(), unix_ms, node.c_str(), sequence, &id));
    return id;
  }

  /// The smallest and largest ID of the tick holding `unix_ms` (bounds of a range query).
  [[nodiscard]] std::uint64_t min_id(std::uint64_t unix_ms) const {
    std::uint64_t id = 0;
    detail::check(snowflake_layout_min_id(get(), unix_ms, &id));
    return id;
  }
  [[nodiscard]] std::uint64_t max_id(std::uint64_t unix_ms) const {
    std::uint64_t id = 0;
    detail::check(snowflake_layout_max_id(get(), unix_ms, &id));
    return id;
  }
  /// The UUIDv7 view of `id` ("0181ab11-8149-75e8-8000-000000000000"): lossless, sorted as
  /// the IDs are, its timestamp the ID's Unix-ms time.
  [[nodiscard]] std::string to_uuid(std::uint64_t id) const {
    char buf[SNOWFLAKE_UUID_TEXT_SIZE];
    detail::check(snowflake_layout_to_uuid(get(), id, buf, sizeof buf));
    return buf;
  }
  /// The ID whose UUIDv7 view is `uuid`; throws for a UUID no ID of the layout maps to.
  [[nodiscard]] std::uint64_t from_uuid(const std::string& uuid) const {
    std::uint64_t id = 0;
    detail::check(snowflake_layout_from_uuid(get(), uuid.c_str(), &id));
    return id;
  }

  /// The C handle, for calling the C API directly.
  [[nodiscard]] const SnowflakeLayout* get() const noexcept { return handle_.get(); }

 private:
  struct Info {
    std::uint64_t epoch_ms, tick_ms, last_unix_ms;
    std::uint8_t total_bits;
  };
  [[nodiscard]] Info info() const {
    Info i{};
    detail::check(snowflake_layout_info(get(), &i.epoch_ms, &i.tick_ms, &i.last_unix_ms, &i.total_bits));
    return i;
  }

  std::unique_ptr<SnowflakeLayout, detail::LayoutDeleter> handle_;
  std::vector<Field> fields_;
};

/// A generator: lock-free, usable from many threads at once; move-only. It keeps its own copy
/// of the layout, so the Layout it was made from may go away.
class Generator {
 public:
  /// `node`: "datacenter=1,worker=3" (every node field, or none for all zeros); `options`:
  /// "max_drift_ms=50;max_wait_ms=0;sequence_start=spread:16;rollover=worker;isolated=true".
  explicit Generator(const Layout& layout, const std::string& node = "", const std::string& options = "") {
    SnowflakeGenerator* raw = nullptr;
    detail::check(snowflake_generator_new(layout.get(), node.c_str(), options.c_str(), &raw));
    handle_.reset(raw);
  }

  /// A generator configured by the environment: SNOWFLAKE_LAYOUT, SNOWFLAKE_NODE and
  /// SNOWFLAKE_OPTIONS, then the defaults (docs/environment.md); throws, naming the variable,
  /// when one is malformed.
  [[nodiscard]] static Generator from_env() {
    SnowflakeGenerator* raw = nullptr;
    detail::check(snowflake_generator_from_env(nullptr, nullptr, nullptr, &raw));
    return Generator(raw);
  }
  /// Where the layout, node values and each option came from:
  /// "layout=SNOWFLAKE_LAYOUT;node=SNOWFLAKE_NODE;max_drift_ms=default;...".
  [[nodiscard]] std::string sources() const {
    char buf[2048];  // always enough (documented in snowflake.h)
    detail::check(snowflake_generator_sources(get(), buf, sizeof buf));
    return buf;
  }

  /// The next ID; waits for the clock up to max_wait_ms, then throws.
  [[nodiscard]] std::uint64_t next_id() const {
    std::uint64_t id = 0;
    detail::check(snowflake_next_id(get(), &id));
    return id;
  }
  /// The next ID without ever blocking (throws where next_id() would wait).
  [[nodiscard]] std::uint64_t try_next_id() const {
    std::uint64_t id = 0;
    detail::check(snowflake_try_next_id(get(), &id));
    return id;
  }
  /// The next ID at the caller's clock reading (deterministic; never waits). It continues the
  /// identity's state: a time behind it, or more than max_drift_ms + 1 s ahead of the clock,
  /// is refused (replays need isolated=true and node values of their own).
  [[nodiscard]] std::uint64_t next_id_at(std::uint64_t unix_ms) const {
    std::uint64_t id = 0;
    detail::check(snowflake_next_id_at(get(), unix_ms, &id));
    return id;
  }
  /// Fills buf[0..n) with increasing IDs (a block per tick: the fast path). On failure it
  /// throws and leaves buf untouched.
  void next_ids(std::uint64_t* buf, std::size_t n) const { detail::check(snowflake_next_ids(get(), buf, n)); }
  /// `n` increasing IDs.
  [[nodiscard]] std::vector<std::uint64_t> next_ids(std::size_t n) const {
    std::vector<std::uint64_t> ids(n);
    next_ids(ids.data(), n);
    return ids;
  }
  /// Up to `n` IDs of one tick, taken at once.
  [[nodiscard]] Block reserve(std::uint64_t n) const {
    Block b{};
    detail::check(snowflake_reserve(get(), n, &b));
    return b;
  }
  [[nodiscard]] Stats stats() const {
    Stats s{};
    s.size = sizeof s;  // this header's struct: a newer library fills just these fields
    detail::check(snowflake_generator_stats(get(), &s));
    return s;
  }

  /// The C handle, for calling the C API directly.
  [[nodiscard]] const SnowflakeGenerator* get() const noexcept { return handle_.get(); }

 private:
  explicit Generator(SnowflakeGenerator* raw) { handle_.reset(raw); }
  std::unique_ptr<SnowflakeGenerator, detail::GeneratorDeleter> handle_;
};

/// `id` in "decimal", "hex", "base32", "base36", "base58" or "base62" (`reverse`: newest
/// sorts first).
[[nodiscard]] inline std::string encode(std::uint64_t id, const std::string& encoding = "decimal",
                                        bool reverse = false) {
  char buf[21];
  detail::check(snowflake_encode(id, encoding.c_str(), reverse, buf, sizeof buf));
  return buf;
}

/// Parses an encoded ID, strictly.
[[nodiscard]] inline std::uint64_t decode_str(const std::string& text, const std::string& encoding = "decimal",
                                              bool reverse = false) {
  std::uint64_t id = 0;
  detail::check(snowflake_decode_str(text.c_str(), encoding.c_str(), reverse, &id));
  return id;
}

/// Public IDs (issue 14): IDs encrypted with Speck64/128 under a 16-byte key and written
/// fixed-width ("base62", 11 characters, by default), so that their texts reveal neither time
/// nor order; decode() gives the ID back. Not authentication: any well-formed text decodes to
/// some ID. Immutable, move-only, usable from many threads.
///
///   snowflake::PublicIds ids(key);           // std::string_view of 16 bytes
///   std::string shown = ids.encode(id);      // "2N80dHGURpY"
///   std::uint64_t back = ids.decode(shown);
class PublicIds {
 public:
  /// Throws Error (SNOWFLAKE_STATUS_VALUE) for a key that is not 16 bytes or an encoding that is
  /// not fixed-width.
  explicit PublicIds(std::string_view key, const std::string& encoding = "base62") {
    SnowflakePublicIds* raw = nullptr;
    detail::check(snowflake_public_new(reinterpret_cast<const std::uint8_t*>(key.data()), key.size(),
                                       encoding.c_str(), &raw));
    handle_.reset(raw);
  }

  /// The public text of `id`.
  [[nodiscard]] std::string encode(std::uint64_t id) const {
    char buf[21];
    detail::check(snowflake_public_encode(handle_.get(), id, buf, sizeof buf));
    return buf;
  }
  /// The ID of a public text; throws Error (SNOWFLAKE_STATUS_INVALID_ID) for a text of the wrong
  /// width or alphabet.
  [[nodiscard]] std::uint64_t decode(const std::string& text) const {
    std::uint64_t id = 0;
    detail::check(snowflake_public_decode(handle_.get(), text.c_str(), &id));
    return id;
  }

 private:
  std::unique_ptr<SnowflakePublicIds, detail::PublicIdsDeleter> handle_;
};

}  // namespace snowflake

#endif  // C++17
#endif  // SNOWFLAKE_HPP
