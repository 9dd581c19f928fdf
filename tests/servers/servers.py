"""The Python client of tests/servers/serve.py (see tests/servers/README.md).

    from servers import Servers
    with Servers("redis", "--password", "pw", dir=tmp_path) as s:
        port = s.info["redis"]["port"]
        s.command("restart")          # same address, empty; s.info is updated

The supervisor is a child process reading our end of a pipe: if this process dies in any way,
the pipe closes and the servers are stopped and their files removed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional, Union

SERVE = Path(__file__).resolve().parent / "serve.py"


class ServerError(RuntimeError):
    pass


class Servers:
    def __init__(self, kind: str, *args: str, dir: Optional[Union[str, Path]] = None) -> None:
        argv = [sys.executable, str(SERVE), kind, *args]
        if dir is not None:
            argv += ["--dir", str(dir)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     close_fds=True)
        self.info: dict[str, Any] = {}
        try:
            self.info = self._reply(f"starting {kind} {' '.join(args)}")
        except BaseException:
            self.stop()
            raise

    def _reply(self, what: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            raise ServerError(f"{what}: serve.py exited with status {self.proc.returncode} without an answer")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise ServerError(f"{what}: {reply.get('error')}\n{reply.get('log', '')}")
        return reply

    def command(self, *words: str) -> dict[str, Any]:
        """Sends one command (`restart`, `kill master`, `failover`...); returns and keeps the
        new description."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(words) + "\n")
        self.proc.stdin.flush()
        self.info = self._reply(" ".join(words))
        return self.info

    def stop(self) -> None:
        """Stops the servers and removes their files; returns when that is done."""
        if self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()  # end of input: the supervisor cleans up and exits
            except BrokenPipeError:
                pass
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> "Servers":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def redis_call(node: dict[str, Any], *args: Any, tls: Optional[dict[str, str]] = None, timeout: float = 30) -> Any:
    """One command to a server described by the JSON (`info["redis"]`), over its unix socket
    when it has one; a small RESP client, so that tests need no Redis package for checks."""
    sys.path.insert(0, str(SERVE.parent))
    try:
        import serve
    finally:
        sys.path.pop(0)
    address = ("unix", node["unix_socket"]) if node.get("unix_socket") else (node["host"], node["port"])
    with serve.Resp(address, tls=tls if address[0] != "unix" else None, client_cert=bool(tls), timeout=timeout) as c:
        if node.get("password"):
            c.call("AUTH", node["password"])
        return c.call(*args)


__all__ = ["Servers", "ServerError", "redis_call", "SERVE"]
