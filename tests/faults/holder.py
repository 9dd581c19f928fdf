"""One holder of the fault-injection suite (tests/faults/run.py), in Python.

    holder.py URL OPTIONS DIR NAME

Opens a generator of LAYOUT leasing through URL (`@FILE`: the address is read from FILE at
each open, so that a holder follows a failover as a fleet's configuration would) with the text
OPTIONS (`key=value;...`), and issues IDs in small batches, appending them to DIR/NAME.ids,
until DIR/stop or DIR/NAME.stop exists. Prints `OPEN <value>` at each open and whenever the
lease claims again (a lapsed lease healed, onto another value or the same one), `REFUSED <code>
<message>` for each refusal that differs from the one before (or follows IDs) (an open is retried every 0.1 s,
an ID after 20 ms), and `DONE <claims> <losses>` at the end. Any error that is not the
library's typed error ends it with a traceback, which the checker counts as a failure.
"""

import os
import select
import sys

import libsnowflake as sf

LAYOUT = "time:41,worker:2,sequence:12;epoch=1288834974657"


def sleep(seconds: float) -> None:
    # Not time.sleep: under libfaketime with a timestamp file its clock_nanosleep(TIMER_ABSTIME)
    # fails with EINVAL.
    select.select([], [], [], seconds)


def main(url: str, options: str, dir: str, name: str) -> None:
    kwargs: dict = {}
    for pair in filter(None, options.split(";")):
        key, value = pair.split("=", 1)
        kwargs[key] = int(value) if value.lstrip("-").isdigit() else value
    stops = (os.path.join(dir, "stop"), os.path.join(dir, name + ".stop"))
    last = None

    def refused(e: sf.SnowflakeError) -> None:
        nonlocal last
        text = str(e).replace("\n", " ")
        if (e.code, text[:48]) != last:
            last = (e.code, text[:48])
            print("REFUSED", e.code, text, flush=True)

    gen = None
    claims = 0  # the claims seen: each new one (a lapsed lease healed) is printed
    # The address a generator was opened with (`@FILE`: read again when the file changes, and
    # the generator opened anew on the new address, as a fleet's configuration would do).
    opened_with = None

    def address() -> str:
        return open(url[1:]).read().strip() if url.startswith("@") else url

    with open(os.path.join(dir, name + ".ids"), "a") as out:
        while not any(os.path.exists(s) for s in stops):
            if gen is not None and address() != opened_with:
                gen = None
            if gen is None:
                try:
                    opened_with = address()
                    gen = sf.Generator(LAYOUT, lease=opened_with, **kwargs)
                    last = None
                    s = gen.stats()
                    claims = s.lease_claims
                    print("OPEN", s.lease_value, flush=True)
                except sf.SnowflakeError as e:
                    refused(e)
                    sleep(0.1)
                    continue
            batch = []
            for _ in range(20):
                try:
                    batch.append(gen.next_id())
                except sf.SnowflakeError as e:
                    refused(e)
                    sleep(0.02)
                    break
            if batch:
                last = None  # issuing again: the next refusal is news
            out.write("".join(f"{i}\n" for i in batch))
            out.flush()
            s = gen.stats()
            if s.lease_claims != claims and s.lease_value is not None:
                claims = s.lease_claims
                print("OPEN", s.lease_value, flush=True)
            sleep(0.01)
    s = gen.stats() if gen is not None else None
    print("DONE", s.lease_claims if s else 0, s.lease_losses if s else 0, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
