#!/usr/bin/env bash
# Installs every test prerequisite on a fresh Debian 12 machine that has Rust, Python 3.11,
# Node 20 and gcc. Idempotent: a second run installs nothing new.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# --- apt ------------------------------------------------------------------------------------
# postgresql: the server the SQL functions of `snowflake sql` are tested in (tests/servers/postgres.py
# starts a throw-away cluster; the package's own cluster is not used).
APT_PACKAGES=(php8.2-cli php8.2-fpm libfcgi-bin redis-server cmake pkg-config valgrind faketime libcjson-dev postgresql)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# --- Rust components ------------------------------------------------------------------------
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt

# --- Python: a virtualenv for the binding's tests --------------------------------------------
if [ ! -x .venv/bin/python ]; then
  # Debian's own python3 needs the python3-venv package for `-m venv` (ensurepip).
  if ! python3 -m venv .venv 2>/dev/null; then
    rm -rf .venv
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
    python3 -m venv .venv
  fi
fi
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q "maturin>=1.5,<2" "pytest>=8" "hypothesis>=6" "mypy>=1.10" "gunicorn>=21" "redis>=5" "psycopg[binary]>=3.1"

# --- Node -------------------------------------------------------------------------------------
if [ -f bindings-node/package.json ]; then
  (cd bindings-node && npm install --no-audit --no-fund --loglevel=error)
fi
