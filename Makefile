# Conveniences over the scripts; `bash scripts/test.sh` is the README's test command.
.PHONY: test deps check bench

test:
	bash scripts/test.sh

deps:
	bash scripts/install-deps.sh

check:
	bash scripts/check.sh

bench:
	cargo bench -p snowflake-core --bench generator
