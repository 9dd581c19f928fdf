// Both headers, twice each, in a second translation unit of test_cpp: include guards hold and
// the wrapper's inline functions link without duplicate definitions.
#include <snowflake.h>
#include <snowflake.hpp>
#include <snowflake.h>
#include <snowflake.hpp>

std::string double_include_encode(std::uint64_t id) { return snowflake::encode(id, "hex"); }
