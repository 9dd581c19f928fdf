#!/usr/bin/env bash
# The PHP binding's tests: builds the release library, then runs every tests/php/*_test.php
# against it (the shared vectors, errors, 64-bit IDs, 1M IDs, preload under the CLI and
# PHP-FPM, the docs' example). Ends with `N passed, M failed`; exits non-zero on a failure.
# An argument runs only the tests whose name contains it.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release -p snowflake-ffi
export SNOWFLAKE_LIB="$PWD/target/release/libsnowflake.so"
test -f "$SNOWFLAKE_LIB" || { echo "no $SNOWFLAKE_LIB after the build" >&2; exit 1; }

exec php -d memory_limit=1G -d zend.assertions=1 tests/php/all.php "$@"
