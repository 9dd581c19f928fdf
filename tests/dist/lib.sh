# The helpers of the package tests (tests/dist/run.sh, tests/dist/platforms.sh), sourced by
# them after they set WORK (a scratch directory for each check's output): tests/lib.sh's
# (check, program, says, section), this run's isolation, and no_rust.
# shellcheck source=tests/lib.sh
. tests/lib.sh

# Isolation from other test runs on this machine: shared states, leases and the CLI's run
# locks (in $TMPDIR) all go to this run's directory, and no library or header is named from
# outside.
export SNOWFLAKE_SHM_DIR=$WORK/shm TMPDIR=$WORK/tmp
mkdir -m 700 "$SNOWFLAKE_SHM_DIR" "$TMPDIR"
unset SNOWFLAKE_LIB SNOWFLAKE_HEADER

# The PATH of every user-side command: without ~/.cargo/bin, and with any other directory
# that holds a Rust tool (Debian's cargo-web and rustc-web put theirs in /usr/bin, beside
# node and php) replaced by a directory of links to everything else in it.
NORUST_PATH=$(
  IFS=:
  keep=()
  n=0
  for dir in $PATH; do
    [ "$dir" = "$HOME/.cargo/bin" ] && continue
    if [ -x "$dir/cargo" ] || [ -x "$dir/rustc" ]; then
      n=$((n + 1))
      shim=$WORK/norust-bin-$n
      mkdir -p "$shim"
      for f in "$dir"/*; do
        case ${f##*/} in
          cargo | cargo-* | rustc | rustc-* | rustdoc | rustup | rust-gdb* | rust-lldb | rustfmt | clippy-driver) ;;
          *) ln -s "$f" "$shim/" 2>/dev/null ;;
        esac
      done
      dir=$shim
    fi
    keep+=("$dir")
  done
  echo "${keep[*]}"
)
no_rust() { env PATH="$NORUST_PATH" "$@"; }
rust_is_gone() { ! no_rust bash -c 'command -v cargo || command -v rustc'; }
