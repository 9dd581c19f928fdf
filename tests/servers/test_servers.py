"""The server helpers' own tests (scripts/check.sh runs them with pytest): every kind of server
starts and answers its protocol; restarts keep the address; a frozen server does not answer
and a thawed one does; a Sentinel set fails over; everything is stopped and removed when the
test process is SIGKILLed, and when the supervisor itself is; the clients of Python, Rust
(core's tests), Node, PHP, bash and C drive the same program."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import serve  # noqa: E402
from servers import Servers, ServerError, redis_call  # noqa: E402

# Waiting for something that must happen: a deadline far beyond what it takes on a loaded
# machine. It bounds a hang; it is not a measure.
PATIENCE_S = 120


def eventually(what: str, cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not cond():
        assert time.monotonic() < deadline, f"{what}: not after {PATIENCE_S} s"
        time.sleep(0.05)


def gone(pid: int) -> bool:
    """No such process (or only a zombie waiting for its parent)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ("Z", "X")


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (PostgreSQL's backends, FPM's workers)."""
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p.name))
            except (OSError, IndexError, ValueError):
                pass
    return out


@pytest.fixture
def open_dir() -> Any:
    """A temporary directory every user can enter (FPM's workers run as nobody when we are
    root; pytest's own directories are closed to them)."""
    import tempfile
    d = Path(tempfile.mkdtemp(prefix="servers-test-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def ping_tcp(node: dict[str, Any], host: str = "127.0.0.1", tls: dict[str, str] | None = None,
             client_cert: bool = False, ca: str | None = None) -> str:
    ctx_tls = None
    if tls is not None:
        ctx_tls = dict(tls, ca_cert=ca or tls["ca_cert"])
    with serve.Resp((host, node["port"]), tls=ctx_tls, client_cert=client_cert, timeout=30) as c:
        if node.get("password"):
            c.call("AUTH", node["password"])
        return str(c.call("PING"))


# --- Redis ----------------------------------------------------------------------------------

def test_redis_answers_on_its_socket_and_port_and_is_removed_after(tmp_path: Path) -> None:
    with Servers("redis", dir=tmp_path) as s:
        r = s.info["redis"]
        assert redis_call(r, "PING") == "PONG"
        assert ping_tcp(r) == "PONG"
        assert Path(s.info["dir"]).parent == tmp_path
        assert r["url"] == f"redis://127.0.0.1:{r['port']}/0"
        pid, dir, sock = r["pid"], s.info["dir"], r["unix_socket"]
        lo, hi = serve._port_range()
        assert lo <= r["port"] <= hi, "drawn outside the ephemeral range"
    assert gone(pid) and not Path(dir).exists() and not Path(sock).exists()


def test_redis_password_and_acl_users(tmp_path: Path) -> None:
    with Servers("redis", "--password", "s3cret", "--user", "alice:wonder", dir=tmp_path) as s:
        r = s.info["redis"]
        assert Path(s.info["password_file"]).read_text() == "s3cret"
        assert r["auth_url"] == f"redis://:s3cret@127.0.0.1:{r['port']}/0"
        with serve.Resp(("unix", r["unix_socket"])) as c:
            with pytest.raises(serve.RespError, match="NOAUTH"):
                c.call("PING")
            with pytest.raises(serve.RespError, match="WRONGPASS"):
                c.call("AUTH", "wrong")
            assert c.call("AUTH", "alice", "wonder") == "OK"
            assert c.call("SET", "k", "v") == "OK"
            assert c.call("ACL", "WHOAMI") == "alice"
        assert redis_call(r, "GET", "k") == "v"


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mtls"])
def test_redis_tls(tmp_path: Path, mutual: bool) -> None:
    with Servers("redis", "--mtls" if mutual else "--tls", dir=tmp_path) as s:
        r, tls = s.info["redis"], s.info["tls"]
        assert r["tls"] and r["url"].startswith("rediss://127.0.0.1:")
        for key in ("ca_cert", "server_cert", "server_key", "client_cert", "client_key", "other_ca_cert"):
            assert Path(tls[key]).is_file(), key
        assert ping_tcp(r, tls=tls, client_cert=True) == "PONG"
        # The certificate names localhost, 127.0.0.1 and ::1, under the CA given.
        text = subprocess.run(["openssl", "x509", "-in", tls["server_cert"], "-noout", "-text"],
                              capture_output=True, text=True).stdout
        assert "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1" in text, text
        with pytest.raises(ssl.SSLCertVerificationError):
            ping_tcp(r, tls=tls, ca=tls["other_ca_cert"])
        if mutual:
            with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
                ping_tcp(r, tls=tls, client_cert=False)
        else:
            assert ping_tcp(r, tls=tls, client_cert=False) == "PONG"
        # No plain TCP on a TLS port.
        with pytest.raises((ConnectionError, OSError, serve.RespError)):
            ping_tcp(r)
        assert redis_call(r, "PING") == "PONG", "the unix socket stays plain"


def test_redis_ipv6_and_unix_only(tmp_path: Path) -> None:
    if not serve.ipv6_available():
        pytest.fail("this machine has no IPv6 loopback (::1)")
    with Servers("redis", "--ipv6", dir=tmp_path) as s:
        r = s.info["redis"]
        assert ping_tcp(r, host="::1") == "PONG" and ping_tcp(r) == "PONG"
        assert r["url_ipv6"] == f"redis://[::1]:{r['port']}/0"
    with Servers("redis", "--no-tcp", dir=tmp_path) as s:
        r = s.info["redis"]
        assert r["port"] is None and redis_call(r, "PING") == "PONG"


def test_a_port_taken_is_retried_with_another(tmp_path: Path) -> None:
    lo, hi = serve._port_range()
    taken = socket.socket()
    taken.bind(("127.0.0.1", serve.candidate_port(["127.0.0.1"])))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        # --port is tried first, without a probe: redis-server itself fails to bind it.
        with Servers("redis", "--port", str(port), dir=tmp_path) as s:
            r = s.info["redis"]
            assert r["port"] != port and r["port_attempts"] >= 2
            assert "Address already in use" in Path(r["log"]).read_text()
            assert ping_tcp(r) == "PONG"
    finally:
        taken.close()


def test_restart_same_address_empty_or_kept_kill_and_start(tmp_path: Path) -> None:
    with Servers("redis", dir=tmp_path) as s:
        r = s.info["redis"]
        redis_call(r, "SET", "k", "v")
        s.command("restart")
        r2 = s.info["redis"]
        assert (r2["port"], r2["unix_socket"]) == (r["port"], r["unix_socket"])
        assert r2["pid"] != r["pid"] and gone(r["pid"])
        assert redis_call(r2, "GET", "k") is None, "restarted empty"
        redis_call(r2, "SET", "k", "kept")
        s.command("restart", "keep")
        assert redis_call(s.info["redis"], "GET", "k") == "kept"
        s.command("kill")
        assert s.info["redis"]["pid"] is None and not s.info["redis"]["running"]
        with pytest.raises(OSError):
            ping_tcp(r)
        s.command("start")
        assert s.info["redis"]["port"] == r["port"] and ping_tcp(s.info["redis"]) == "PONG"
        with pytest.raises(ServerError, match="unknown command"):
            s.command("bogus")
        with pytest.raises(ServerError, match="is running"):
            s.command("start")


def test_freeze_and_thaw(tmp_path: Path) -> None:
    with Servers("redis", dir=tmp_path) as s:
        r = s.info["redis"]
        s.command("freeze")  # returns once the process is stopped
        assert s.info["redis"]["frozen"]
        state = Path(f"/proc/{r['pid']}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state in ("T", "t"), "stopped"
        with socket.socket(socket.AF_UNIX) as c:
            c.connect(r["unix_socket"])  # the kernel accepts it into the backlog
            c.sendall(b"PING\r\n")
            c.settimeout(0.5)
            with pytest.raises(socket.timeout):  # a stopped process cannot answer
                c.recv(100)
            s.command("thaw")
            c.settimeout(PATIENCE_S)
            assert c.recv(100) == b"+PONG\r\n", "the waiting command is answered once thawed"


def test_sentinel_set_fails_over_and_back(tmp_path: Path) -> None:
    with Servers("sentinel", "--password", "pw", dir=tmp_path) as s:
        info = s.info
        assert len(info["sentinels"]) == 3 and len(info["replicas"]) == 1
        old, replica = info["master"], info["replicas"][0]
        for sen in info["sentinels"]:
            with serve.Resp(("127.0.0.1", sen["port"])) as c:
                assert c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster") == ["127.0.0.1", str(old["port"])]
        assert redis_call(replica, "ROLE")[0] == "slave"
        redis_call(old, "SET", "k", "v")
        s.command("failover")
        new = s.info["master"]
        assert new["name"] == replica["name"] and s.info["replicas"][0]["name"] == old["name"]
        for sen in s.info["sentinels"]:
            with serve.Resp(("127.0.0.1", sen["port"])) as c:
                assert c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster") == ["127.0.0.1", str(new["port"])]
        assert redis_call(new, "ROLE")[0] == "master" and redis_call(new, "GET", "k") == "v"
        assert redis_call(old, "ROLE")[0] == "slave"
        s.command("failover")
        assert s.info["master"]["name"] == old["name"]
        pids = [n["pid"] for n in s.info["nodes"] + s.info["sentinels"]]
    assert all(gone(p) for p in pids)


def test_sentinel_fails_over_by_itself_when_the_master_dies(tmp_path: Path) -> None:
    with Servers("sentinel", "--down-after-ms", "2000", dir=tmp_path) as s:
        old, replica = s.info["master"], s.info["replicas"][0]
        s.command("kill", "master")
        s.command("await-master", "new")  # the sentinels notice, agree, promote the replica
        assert s.info["master"]["name"] == replica["name"]
        assert redis_call(s.info["master"], "ROLE")[0] == "master"
        # The old master comes back as a replica of the new one.
        s.command("start", old["name"])
        eventually("node0 replicating", lambda: redis_call(s.info["nodes"][0], "ROLE")[0] == "slave")


def test_sentinel_over_mutual_tls(tmp_path: Path) -> None:
    with Servers("sentinel", "--mtls", dir=tmp_path) as s:
        tls = s.info["tls"]
        sen = s.info["sentinels"][0]
        with serve.Resp(("127.0.0.1", sen["port"]), tls=tls, client_cert=True, timeout=30) as c:
            assert c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")[1] == str(s.info["master"]["port"])


# --- PostgreSQL -----------------------------------------------------------------------------

def psql(pg: dict[str, Any], sql: str, tcp: bool = False) -> str:
    env = dict(os.environ, PGPASSWORD=pg["password"] or "")
    host = "127.0.0.1" if tcp else pg["socket_dir"]
    r = subprocess.run([str(Path(pg["bin_dir"]) / "psql"), "-h", host, "-p", str(pg["port"]), "-U", pg["user"],
                        "-d", pg["database"], "-tAc", sql], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_postgres_runs_unprivileged_answers_and_is_removed(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)  # as pytest makes them: PostgreSQL's user cannot enter
    with Servers("postgres", "--tcp", "--password", "pgpw", dir=tmp_path) as s:
        pg = s.info["postgres"]
        assert psql(pg, "SELECT 1") == "1"
        assert psql(pg, "SELECT current_user", tcp=True) == "snowflake"
        assert psql(pg, "SHOW server_version_num")[:2] >= "15"
        owner = Path(pg["data_dir"]).stat().st_uid
        if os.geteuid() == 0:
            import pwd
            assert owner == pwd.getpwnam("postgres").pw_uid and pg["os_user"] == "postgres"
        r = subprocess.run([str(Path(pg["bin_dir"]) / "pg_isready"), "-h", pg["socket_dir"], "-p", str(pg["port"])],
                           capture_output=True)
        assert r.returncode == 0
        psql(pg, "CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
        s.command("restart")
        assert psql(s.info["postgres"], "SELECT x FROM t") == "7", "a restart keeps the data"
        s.command("kill")
        s.command("start")
        assert psql(s.info["postgres"], "SELECT x FROM t") == "7", "so does a crash"
        pid, data = s.info["postgres"]["pid"], pg["data_dir"]
        backends = children(pid)
        assert len(backends) >= 3, "checkpointer, writers, launchers"
    assert all(gone(p) for p in [pid, *backends]) and not Path(data).exists()


def test_mariadb_replica_replicates_and_is_promoted(tmp_path: Path) -> None:
    with Servers("mariadb", "--replica", "--password", "mpw", dir=tmp_path) as s:
        m = s.info["mariadb"]
        r = m["replica"]

        def sql(node: dict, statement: str) -> str:
            out = subprocess.run(node["client"] + ["--batch", "--skip-column-names", "-e", statement],
                                 capture_output=True, text=True)
            assert out.returncode == 0, out.stderr
            return out.stdout.strip()
        assert sql(r, "SELECT @@server_id, @@read_only") == "2\t1"
        sql(m, "CREATE TABLE t (x INT); INSERT INTO t VALUES (7)")
        deadline = time.monotonic() + 120
        while sql(r, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 't'") != "1" \
                or sql(r, "SELECT COUNT(*) FROM t") != "1":
            assert time.monotonic() < deadline, "the replica never got the primary's row"
            time.sleep(0.05)
        s.command("kill")
        assert not s.info["mariadb"]["running"] and s.info["mariadb"]["replica"]["running"]
        s.command("promote")
        assert s.info["mariadb"]["replica"]["promoted"]
        sql(r, "INSERT INTO t VALUES (8)")
        assert sql(r, "SELECT SUM(x) FROM t") == "15", "the promoted replica takes writes"
        pids = [s.info["mariadb"]["replica"]["pid"]]
    assert all(gone(p) for p in pids)


# --- PHP-FPM --------------------------------------------------------------------------------

def test_fpm_serves_a_script_with_its_workers(open_dir: Path) -> None:
    tmp_path = open_dir
    script = tmp_path / "t.php"
    script.write_text('<?php echo getmypid(), " ", getenv("SF_TEST"), " ", ini_get("memory_limit");')
    script.chmod(0o644)
    with Servers("fpm", "--workers", "3", "--env", "SF_TEST=yes", "--ini-line", "memory_limit = 77M",
                 dir=tmp_path) as s:
        f = s.info["fpm"]
        assert len(f["worker_pids"]) == 3
        pids = set()
        for _ in range(30):
            body = serve.fcgi_get(Path(f["socket"]), str(script))
            assert body is not None
            pid, env, mem = body.split()
            assert (env, mem) == ("yes", "77M")
            pids.add(int(pid))
        assert pids <= set(f["worker_pids"]) and set(children(f["pid"])) == set(f["worker_pids"])
        everyone = [f["pid"], *f["worker_pids"]]
        s.command("restart")
        assert all(gone(p) for p in everyone)
        assert serve.fcgi_get(Path(s.info["fpm"]["socket"]), str(script)) is not None
        everyone = [s.info["fpm"]["pid"], *s.info["fpm"]["worker_pids"]]
    assert all(gone(p) for p in everyone)


def test_a_failing_start_reports_the_servers_log(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match=r"(?s)php-fpm exited.*no_such_directive"):
        Servers("fpm", "--pool-line", "no_such_directive = 1", dir=tmp_path)
    assert list(tmp_path.iterdir()) == [], "nothing left behind"


# --- clean-up when the test dies -------------------------------------------------------------

TEST_PROCESS = """
import json, sys, time
sys.path.insert(0, {here!r})
from servers import Servers
s = Servers(sys.argv[1], *sys.argv[2:-1], dir=sys.argv[-1])
print(json.dumps(s.info), flush=True)
time.sleep(3600)
"""


# (A Sentinel set is redis-servers: the same clean-up as `redis`.)
@pytest.mark.parametrize("kind,args", [("redis", []), ("postgres", []), ("fpm", [])])
def test_a_sigkilled_test_process_leaves_nothing(tmp_path: Path, kind: str, args: list[str]) -> None:
    test = subprocess.Popen([sys.executable, "-c", TEST_PROCESS.format(here=str(HERE)), kind, *args, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert test.stdout is not None
        info = json.loads(test.stdout.readline())
    finally:
        test.kill()  # SIGKILL: no clean-up of its own
        test.wait()
    servers = [info[kind]]
    pids = [n["pid"] for n in servers]
    pids += [p for n in servers for p in n.get("worker_pids", [])]
    assert pids and all(isinstance(p, int) for p in pids)
    eventually("the servers stopped", lambda: all(gone(p) for p in pids))
    eventually("the supervisor exited", lambda: gone(info["supervisor_pid"]))
    eventually("the files removed", lambda: not Path(info["dir"]).exists())


@pytest.mark.parametrize("kind", ["fpm", "postgres"])
def test_a_sigkilled_supervisor_takes_its_servers_along(tmp_path: Path, kind: str) -> None:
    s = Servers(kind, dir=tmp_path)
    node = s.info[kind]
    pids = [node["pid"], *children(node["pid"])]
    os.kill(s.info["supervisor_pid"], signal.SIGKILL)
    s.stop()
    # The leader by PR_SET_PDEATHSIG, its group (FPM's workers) and the files by the watchdog.
    eventually("the servers stopped", lambda: all(gone(p) for p in pids))
    eventually("the files removed", lambda: not Path(s.info["dir"]).exists())


# --- the other languages' clients -----------------------------------------------------------

def test_node_client(tmp_path: Path) -> None:
    code = f"""
import {{ startServers }} from {json.dumps(str(HERE / 'servers.mjs'))};
const s = await startServers('redis', ['--no-tcp'], {{ dir: {json.dumps(str(tmp_path))} }});
const first = s.info.redis.pid;
await s.command('restart');
if (s.info.redis.pid === first) throw new Error('same pid after restart');
await s.command('bogus').then(() => {{ throw new Error('no error'); }}, (e) => {{
  if (!/unknown command/.test(e.message)) throw e;
}});
console.log(JSON.stringify([first, s.info.redis.pid, s.info.dir]));
await s.stop();
"""
    r = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=PATIENCE_S)
    assert r.returncode == 0, r.stderr
    first, second, dir = json.loads(r.stdout)
    assert gone(first) and gone(second) and not Path(dir).exists()


def test_node_client_does_not_keep_a_finished_script_alive(tmp_path: Path) -> None:
    code = f"""
import {{ startServers }} from {json.dumps(str(HERE / 'servers.mjs'))};
const s = await startServers('redis', ['--no-tcp'], {{ dir: {json.dumps(str(tmp_path))} }});
console.log(JSON.stringify(s.info));
"""  # no stop(): the script ends anyway, and its servers with it
    r = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=PATIENCE_S)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    eventually("stopped", lambda: gone(info["redis"]["pid"]) and not Path(info["dir"]).exists())


def test_php_client(tmp_path: Path) -> None:
    code = f"""
require {json.dumps(str(HERE / 'servers.php'))};
$s = TestServers::start('redis', ['--no-tcp'], {json.dumps(str(tmp_path))});
$first = $s->info['redis']['pid'];
$s->command('restart');
try {{ $s->command('bogus'); exit(3); }} catch (RuntimeException $e) {{ if (!str_contains($e->getMessage(), 'unknown command')) exit(4); }}
echo json_encode([$first, $s->info['redis']['pid'], $s->info['dir']]);
$s->stop();
"""
    r = subprocess.run(["php", "-r", code], capture_output=True, text=True, timeout=PATIENCE_S)
    assert r.returncode == 0, r.stdout + r.stderr
    first, second, dir = json.loads(r.stdout)
    assert first != second and gone(first) and gone(second) and not Path(dir).exists()


def test_bash_client(tmp_path: Path) -> None:
    script = f"""
set -euo pipefail
source {str(HERE / 'servers.sh')!r}
servers_start r1 redis --no-tcp --dir {str(tmp_path)!r}
servers_start r2 redis --password 'p w' --dir {str(tmp_path)!r}
first=$(servers_get r1 redis.pid)
servers_command r1 restart
[ "$(servers_get r1 redis.pid)" != "$first" ]
! servers_command r1 bogus 2>/dev/null
echo "$first $(servers_get r1 redis.pid) $(servers_get r2 redis.pid) $(servers_get r2 redis.password | tr ' ' _)"
echo "$(servers_get r1 dir) $(servers_get r2 dir)"
servers_stop r1
servers_stop r2
"""
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=PATIENCE_S)
    assert r.returncode == 0, r.stdout + r.stderr
    pids, dirs = r.stdout.splitlines()
    a, b, c, pw = pids.split()
    assert pw == "p_w"
    assert all(gone(int(p)) for p in (a, b, c))
    assert not any(Path(d).exists() for d in dirs.split())


def test_c_client(tmp_path: Path) -> None:
    cflags = subprocess.run(["pkg-config", "--cflags", "--libs", "libcjson"], capture_output=True, text=True)
    assert cflags.returncode == 0, "libcjson-dev (scripts/install-deps.sh) is needed"
    exe = tmp_path / "selftest"
    r = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                        f"-DTEST_SERVERS_SERVE=\"{HERE / 'serve.py'}\"", str(HERE / "selftest.c"), "-o", str(exe),
                        *cflags.stdout.split()], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    work = tmp_path / "work"
    work.mkdir()
    r = subprocess.run([str(exe), str(work)], capture_output=True, text=True, timeout=PATIENCE_S)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
    assert list(work.iterdir()) == []


def test_certs_alone(tmp_path: Path) -> None:
    with Servers("certs", dir=tmp_path) as s:
        tls = s.info["tls"]
        r = subprocess.run(["openssl", "verify", "-CAfile", tls["ca_cert"], tls["server_cert"], tls["client_cert"]],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        r = subprocess.run(["openssl", "verify", "-CAfile", tls["other_ca_cert"], tls["server_cert"]],
                           capture_output=True, text=True)
        assert r.returncode != 0
        # Valid from 2000: a test that steps its clock back still trusts them.
        dates = subprocess.run(["openssl", "x509", "-in", tls["server_cert"], "-noout", "-startdate"],
                               capture_output=True, text=True).stdout
        assert "2000" in dates
    assert not Path(tls["ca_cert"]).exists()


def test_help_lists_every_kind() -> None:
    out = subprocess.run([sys.executable, str(HERE / "serve.py"), "--help"], capture_output=True, text=True).stdout
    for kind in ("redis", "sentinel", "postgres", "fpm", "certs"):
        assert kind in out
    assert shutil.which("python3")
