#!/usr/bin/env bash
# The README's test command: installs every test prerequisite (apt, pip, npm), then runs
# every test suite of every language. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/check.sh
