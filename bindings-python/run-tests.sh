#!/usr/bin/env bash
# The Python binding's tests, as CI runs them (`make test-python`):
#   1. `pip wheel ./bindings-python` builds the abi3 wheel once, through the build backend
#      (maturin from PyPI, in pip's isolated build environment);
#   2. that wheel goes into a brand-new virtualenv, and must work there;
#   3. `pip install ./bindings-python` from the repository root, into another new
#      virtualenv, must work too (a second build: pip never reuses a local build);
#   4. the wheel is installed into the repository's .venv (scripts/install-deps.sh makes it,
#      with pytest, hypothesis and mypy) and pytest runs every test, the stubs check included.
# With SNOWFLAKE_WHEEL=<a wheel> (scripts/check.sh passes dist/python's, which tests/dist has
# just installed on the oldest and newest CPython and built from its sdist) steps 1 and 3 and
# the other CPythons are left out: the wheel is not built a second and a third time.
# Exits non-zero on any failure; pytest's summary line is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

VENV_PY=.venv/bin/python
if [ ! -x "$VENV_PY" ]; then
  echo "no .venv: run scripts/install-deps.sh first (it creates .venv with maturin, pytest, hypothesis, mypy)" >&2
  exit 1
fi
PYTHON=${PYTHON:-python3}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log="$tmp/build.log"

step() { printf '\n---- python: %s ----\n' "$*"; }
quiet() {
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "FAILED: $*" >&2
    exit 1
  fi
}

smoke='
import array, libsnowflake as sf
g = sf.Generator("twitter", node={"datacenter": 1, "worker": 3})
ids = [g.next_id(), *g.next_ids(1000), *g.next_ids_array(1000)]
assert ids == sorted(set(ids)) and len(ids) == 2001
assert sf.Layout("twitter").decode(ids[0]).fields == {"datacenter": 1, "worker": 3}
assert sf.encode(175928847299117063) == "0Czks0tP37X"
print("libsnowflake", sf.__version__, "works:", sf.__file__)
'

if [ -n "${SNOWFLAKE_WHEEL:-}" ]; then
  wheel=$SNOWFLAKE_WHEEL
  [ -f "$wheel" ] || { echo "SNOWFLAKE_WHEEL=$wheel: no such file" >&2; exit 1; }
  step "the wheel of scripts/dist.sh: $(basename "$wheel")"
else
  step "pip wheel ./bindings-python (maturin through the build backend)"
  quiet "$VENV_PY" -m pip wheel --no-deps -w "$tmp/wheels" ./bindings-python
  wheel=$(ls "$tmp"/wheels/libsnowflake-*.whl)
  echo "built $(basename "$wheel")"
fi
case "$(basename "$wheel")" in
  *-abi3-*) ;;
  *) echo "FAILED: the wheel is not abi3" >&2; exit 1 ;;
esac

step "the wheel in a new virtualenv"
quiet "$PYTHON" -m venv "$tmp/venv-wheel"
quiet "$tmp/venv-wheel/bin/pip" install "$wheel"
(cd "$tmp" && "$tmp/venv-wheel/bin/python" -c "$smoke")

# abi3: the one wheel must load on every CPython >= 3.9. Whichever other versions this
# machine has (pyenv's, here) get it too.
for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
  [ -z "${SNOWFLAKE_WHEEL:-}" ] || break
  [ -x "$py" ] || continue
  if "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    step "the wheel on CPython $v"
    quiet "$py" -m venv "$tmp/venv-$v"
    quiet "$tmp/venv-$v/bin/pip" install "$wheel"
    (cd "$tmp" && "$tmp/venv-$v/bin/python" -c "$smoke")
  fi
done

if [ -z "${SNOWFLAKE_WHEEL:-}" ]; then
  step "pip install ./bindings-python in a new virtualenv"
  quiet "$PYTHON" -m venv "$tmp/venv-src"
  quiet "$tmp/venv-src/bin/pip" install ./bindings-python
  (cd "$tmp" && "$tmp/venv-src/bin/python" -c "$smoke")
fi

if [ "${SNOWFLAKE_WHEEL_IN_VENV:-}" = "$wheel" ]; then
  # scripts/check.sh's build step installed it before the steps that run at once: installing
  # it again would rewrite files that their processes are importing.
  step "the wheel is in .venv already (scripts/check.sh's build step)"
else
  step "install the wheel into .venv"
  quiet "$VENV_PY" -m pip install --force-reinstall --no-deps "$wheel"
fi

step "bench.py --quick (figures only; the full run is bindings-python/bench.py)"
"$VENV_PY" bindings-python/bench.py --quick

step "pytest"
exec "$VENV_PY" -m pytest bindings-python/tests -p no:cacheprovider -q
