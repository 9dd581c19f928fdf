/* snowflake.h on its own, included twice, compiled as C99 and as C++ (run.sh) with
 * -Wall -Wextra -Werror -pedantic: the generated header is clean in both languages. */
#include "snowflake.h"
#include "snowflake.h"

#ifdef __cplusplus
static_assert(sizeof(SnowflakeStatus) == 4, "SnowflakeStatus is a uint32_t");
#else
typedef char status_is_32_bits[sizeof(SnowflakeStatus) == 4 ? 1 : -1];
typedef char parts_hold_every_field[sizeof(((SnowflakeParts *)0)->fields) ==
                                            SNOWFLAKE_MAX_FIELDS * sizeof(uint64_t)
                                        ? 1
                                        : -1];
#endif

int main(void) {
  SnowflakeStatus s = SNOWFLAKE_STATUS_OK;
  SnowflakeField f;
  f.kind = SNOWFLAKE_FIELD_NODE;
  return (int)s + (int)f.kind - (int)SNOWFLAKE_FIELD_NODE + SNOWFLAKE_VERSION_MAJOR * 0;
}
