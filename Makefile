# Conveniences over the scripts; `bash scripts/test.sh` is the README's test command.
.PHONY: test deps check flaky bench dist test-dist test-c test-node test-python test-php bench-php test-cross

test:
	bash scripts/test.sh

deps:
	bash scripts/install-deps.sh

check:
	bash scripts/check.sh

# The suites that start servers or processes, 10 times under load (tests/servers/README.md).
flaky:
	bash scripts/flaky.sh 10

# The packages a release publishes, into dist/ (see scripts/dist.sh), and their install tests.
dist:
	bash scripts/dist.sh

test-dist: dist
	bash tests/dist/run.sh

bench:
	cargo bench -p snowflake-core --bench generator
	cargo bench -p snowflake-core --bench shared

test-c:
	bash tests/c/run.sh

test-node:
	bash bindings-node/run-tests.sh

test-python:
	bash bindings-python/run-tests.sh

test-php:
	bash tests/php/run.sh

bench-php:
	cargo build --release -p snowflake-ffi
	SNOWFLAKE_LIB=$(CURDIR)/target/release/libsnowflake.so php tests/php/bench.php

test-cross:
	bash tests/cross/run.sh
