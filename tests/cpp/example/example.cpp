// example.cpp
// One generator shared by the program, IDs decoded and encoded.
#include <snowflake.hpp>

#include <cstdint>
#include <iostream>
#include <vector>

int main() {
  try {
    snowflake::Layout layout("twitter");
    snowflake::Generator gen(layout, "datacenter=1,worker=3", "max_wait_ms=100");

    std::uint64_t id = gen.next_id();
    std::vector<std::uint64_t> batch = gen.next_ids(1000);  // one CAS per tick

    snowflake::Parts parts = layout.decode(id);
    std::cout << "id " << id << " = " << snowflake::encode(id, "base62") << " at " << parts.unix_ms
              << " ms, worker " << parts.field("worker") << ", " << batch.size() << " more\n";

    std::cout << layout.compose(parts.unix_ms, "worker=99", 0);  // throws: worker is 5 bits
  } catch (const snowflake::Error& e) {
    std::cout << e.code() << ": " << e.what() << "\n";
    return e.status() == SNOWFLAKE_STATUS_VALUE ? 0 : 1;
  }
  return 1;
}
