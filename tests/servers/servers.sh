# The bash client of tests/servers/serve.py (see tests/servers/README.md). Source it, then:
#
#   servers_start fpm fpm --workers 8 --ini "$dir/php.ini"   # name, kind, serve.py options
#   sock=$(servers_get fpm fpm.socket)                        # a field of the JSON description
#   servers_command fpm restart                               # the description is updated
#   servers_stop fpm                                          # stopped, files removed
#
# Each set of servers is named (several may run at once); its JSON description is in
# $<name>_INFO. serve.py reads our end of a pipe: if this shell dies in any way, the pipe
# closes and the servers are stopped (once every child that inherited the pipe has ended too).

SERVERS_SERVE=${SERVERS_SERVE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve.py}

# servers_start <name> <kind> [serve.py options...]: returns once the servers answer; on
# failure prints serve.py's error and the server's log to stderr and returns 1.
servers_start() {
  local name=$1 kind=$2 fifos in out
  shift 2
  fifos=$(mktemp -d "${TMPDIR:-/tmp}/servers-fifo.XXXXXX") || return 1
  mkfifo "$fifos/in" "$fifos/out" || return 1
  python3 "$SERVERS_SERVE" "$kind" "$@" <"$fifos/in" >"$fifos/out" &
  printf -v "${name}_PID" %s "$!"
  exec {in}>"$fifos/in" {out}<"$fifos/out"
  rm -rf "$fifos"
  printf -v "${name}_IN" %s "$in"
  printf -v "${name}_OUT" %s "$out"
  _servers_reply "$name" "starting $kind $*"
}

_servers_reply() { # <name> <what>
  local out="${1}_OUT" line
  if ! IFS= read -r line <&"${!out}"; then
    echo "$2: serve.py ended without an answer" >&2
    return 1
  fi
  case $line in
    '{"ok": true'*)
      printf -v "${1}_INFO" %s "$line"
      return 0
      ;;
  esac
  echo "$2: $(_servers_json "$line" error)" >&2
  _servers_json "$line" log >&2
  return 1
}

_servers_json() { # <json> <dotted.path>: the value (JSON for lists and objects)
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v) if isinstance(v, (list, dict)) else ("" if v is None else v))
' "$1" "$2"
}

# servers_get <name> <dotted.path>: a field of the description (fpm.socket, redis.port,
# sentinels.0.port, ...).
servers_get() {
  local info="${1}_INFO"
  _servers_json "${!info}" "$2"
}

# servers_command <name> <command...>: restart, kill, freeze, failover, ...
servers_command() {
  local in="${1}_IN"
  echo "${*:2}" >&"${!in}" || return 1
  _servers_reply "$1" "${*:2}"
}

# servers_stop <name>: stops the servers and removes their files; returns when that is done.
servers_stop() {
  local in="${1}_IN" out="${1}_OUT" pid="${1}_PID" fd
  [ -n "${!pid:-}" ] || return 0
  fd=${!in}
  exec {fd}>&-
  fd=${!out}
  cat <&"$fd" >/dev/null
  exec {fd}<&-
  wait "${!pid}" 2>/dev/null
  printf -v "${1}_PID" %s ""
}
