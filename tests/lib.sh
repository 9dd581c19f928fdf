# The helpers of the shell test scripts (tests/c/run.sh, tests/dist/run.sh through
# tests/dist/lib.sh, ...), sourced by them after they set WORK (a scratch directory for each
# check's output). Each check adds to `passed` or `failed`; the script ends with
# "N passed, M failed".
passed=0
failed=0
# check <description> <command...>: one check, its output shown only when it fails.
check() {
  local desc=$1
  shift
  if "$@" >"$WORK/log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $desc"
  else
    failed=$((failed + 1))
    echo "FAIL $desc"
    tail -n 60 "$WORK/log" | sed 's/^/     /'
  fi
}
# program <description> <command...>: a test program that ends with
# "RESULT <p> passed, <f> failed"; its checks are added to the count.
program() {
  local desc=$1 status line p f
  shift
  "$@" >"$WORK/log" 2>&1
  status=$?
  # (a Windows program's lines end in \r\n)
  line=$(tr -d '\r' <"$WORK/log" | grep -E '^RESULT [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
  if [ -z "$line" ]; then p=0 f=1; else read -r _ p _ f _ <<<"$line"; fi
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$f" -eq 0 ]; then
    echo "ok   $desc ($p checks)"
  else
    echo "FAIL $desc (exit $status, ${line:-no RESULT line})"
    grep -v '^RESULT' "$WORK/log" | tail -n 60 | sed 's/^/     /'
  fi
}
# says <pattern> <command...>: the command succeeds and its output matches the pattern.
says() {
  local pattern=$1
  shift
  "$@" >"$WORK/out" 2>&1
  local status=$?
  cat "$WORK/out"
  [ "$status" -eq 0 ] && grep -Eq "$pattern" "$WORK/out"
}
now_ms() { date +%s%3N; }
section() { printf -- '-- %s\n' "$*"; }
# stop_if_failed: ends the script here, with its summary line, if a check failed (for checks
# that the rest of the script depends on).
stop_if_failed() {
  if [ "$failed" -ne 0 ]; then
    echo "$passed passed, $failed failed"
    exit 1
  fi
}
# files_there <file...>: each exists; the missing ones are named (scripts/dist.sh writes them).
files_there() {
  local f missing=0
  for f; do
    [ -n "$f" ] && [ -f "$f" ] || { echo "missing: ${f:-a file} (run scripts/dist.sh)"; missing=1; }
  done
  return $missing
}
