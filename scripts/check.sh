#!/usr/bin/env bash
# Every test suite, without installing anything (scripts/test.sh installs first).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n==== %s ====\n' "$*"; }

step "lint: rustfmt, clippy"
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings

step "generated files: vectors (the model), README sections (docs/)"
python3 tests/vectors/make_vectors.py --check
python3 scripts/readme.py --check

step "Rust: core (std and no_std), CLI"
cargo test --workspace
cargo test -p snowflake-core --no-default-features --lib --tests
# Public IDs without std (the cipher is no_std).
cargo build -p snowflake-core --no-default-features --features public-ids

step "C and C++: libsnowflake installed to a temporary prefix, pkg-config, CMake, valgrind"
bash tests/c/run.sh
step "Node: bindings-node (build, index.d.ts up to date, node:test)"
bash bindings-node/run-tests.sh
step "Python: wheel, fresh-venv installs, pytest (bindings-python/run-tests.sh)"
bash bindings-python/run-tests.sh

step "PHP: the FFI binding (builds the release library)"
bash tests/php/run.sh

step "Cross-language: one shared state in Python, Node, PHP and C processes, and PHP-FPM"
bash tests/cross/run.sh
