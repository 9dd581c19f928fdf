# `make test` installs every test prerequisite (apt, pip, npm) and runs every test.
# `make check` runs the tests without installing anything.
.PHONY: test deps check lint test-rust test-cli test-c test-php test-python test-node bench

test: deps check

deps:
	bash scripts/install-deps.sh

check: lint test-rust test-c test-php test-python test-node
	@echo "all test suites passed"

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

test-rust:
	cargo test --workspace
	cargo test -p snowflake-core --no-default-features --lib --tests

test-c:
	bash tests/c/run.sh

test-php:
	bash tests/php/run.sh

test-python:
	bash bindings-python/run-tests.sh

test-node:
	bash bindings-node/run-tests.sh

bench:
	cargo bench -p snowflake-core
