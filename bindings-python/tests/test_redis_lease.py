"""lease= with every form of Redis address, against real servers (tests/servers): a password
in the URL, IPv6 with the password from a file, a unix socket with db and pass, TLS verified
against a CA file, and Sentinel. Core does the work; this checks that Python hands each form
over, that stats() reports the lease, and that no message or repr shows the password."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers import Servers

import libsnowflake as sf

LAYOUT = "time:41,worker:3,sequence:12;epoch=1288834974657"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    d = tmp_path_factory.mktemp("redis-lease")
    with Servers("redis", "--password", "py-pw", "--ipv6", dir=d) as plain, \
            Servers("redis", "--tls", dir=d) as tls, \
            Servers("sentinel", "--replicas", "1", "--sentinels", "3", dir=d) as sentinel:
        yield {"plain": plain.info, "tls": tls.info, "sentinel": sentinel.info}


def forms(s: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    plain, tls, sen = s["plain"], s["tls"], s["sentinel"]
    port = plain["redis"]["port"]
    return [
        (f"redis://:py-pw@127.0.0.1:{port}/0", {}),
        (f"redis://[::1]:{port}/0", {"lease_password_file": plain["password_file"]}),
        (f"unix://{plain['redis']['unix_socket']}?db=2&pass=py-pw", {}),
        (f"rediss://localhost:{tls['redis']['port']}/0", {"lease_tls_ca": Path(tls["tls"]["ca_cert"])}),
        (f"redis+sentinel://{','.join(sen['sentinel_addrs'])}/{sen['master_name']}/0", {}),
    ]


def test_every_form_issues_ids_that_repeat_nothing(servers: dict[str, Any]) -> None:
    seen: set[int] = set()
    for url, extra in forms(servers):
        gen = sf.Generator(LAYOUT, lease=url, lease_ttl_ms=30000, **extra)
        ids = gen.next_ids(2000)
        assert len(set(ids) | seen) == len(ids) + len(seen), url
        seen.update(ids)
        s = gen.stats()
        assert s.lease_claims == 1 and s.lease_losses == 0 and s.lease_value is not None, s
        assert "py-pw" not in repr(gen) and "py-pw" not in repr(s)
    # A plain generator beside the lease, given the value the lease holds, is refused.
    with pytest.raises(sf.SharedMismatchError, match="holds a lease of worker="):
        sf.Generator(LAYOUT, {"worker": gen.node["worker"]})
    del gen
    assert sf.Generator(LAYOUT).stats().lease_value is None


def test_a_wrong_password_names_the_problem_not_the_password(servers: dict[str, Any]) -> None:
    port = servers["plain"]["redis"]["port"]
    with pytest.raises(sf.LeaseError) as e:
        sf.Generator(LAYOUT, lease=f"redis://:wr0ng-py@127.0.0.1:{port}/0", lease_ttl_ms=3000)
    assert "refused the credentials" in str(e.value) and "wr0ng-py" not in str(e.value)
    with pytest.raises(sf.LeaseError) as e:
        sf.Generator(LAYOUT, lease=f"rediss://127.0.0.1:{servers['tls']['redis']['port']}/0")
    assert "certificate" in str(e.value), "an unverified server is refused"
