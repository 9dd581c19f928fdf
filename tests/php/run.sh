#!/usr/bin/env bash
# The PHP binding's tests: builds the release library, then runs every tests/php/*_test.php
# against it under PHPUnit (tests/php/phpunit.xml: the shared vectors, errors, 64-bit IDs, 1M
# IDs, preload under the CLI and PHP-FPM, the docs' example). Exits non-zero on a failure.
# Arguments go to phpunit: `--filter 'preload'` runs the tests whose name matches.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release -p snowflake-ffi
export SNOWFLAKE_LIB="$PWD/target/release/libsnowflake.so"
test -f "$SNOWFLAKE_LIB" || { echo "no $SNOWFLAKE_LIB after the build" >&2; exit 1; }

exec php -d zend.assertions=1 /usr/bin/phpunit -c tests/php/phpunit.xml "$@"
