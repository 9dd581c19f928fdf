"""One holder of the cross-language fleet test (tests/fleet/test_fleet.py), in Python.

    worker.py URL OPTIONS DIR NAME   opens a generator of LAYOUT leasing through URL with the
                                     text OPTIONS (`key=value;...`, may be empty); prints
                                     `OPEN <value> <clock_skew_ms>` or `OPENERR <code> <message>`;
                                     then issues IDs, appending them to DIR/NAME.ids in batches,
                                     until DIR/stop exists (a lease error is retried after the
                                     time it names); prints `DONE <claims> <losses>`.
"""

import os
import sys
import time

import libsnowflake as sf

LAYOUT = "time:41,worker:3,sequence:12;epoch=1288834974657"


def main(url: str, options: str, dir: str, name: str) -> None:
    kwargs: dict = {}
    for pair in filter(None, options.split(";")):
        key, value = pair.split("=", 1)
        kwargs[key] = int(value) if value.isdigit() else value
    try:
        gen = sf.Generator(LAYOUT, lease=url, **kwargs)
    except sf.SnowflakeError as e:
        print("OPENERR", e.code, str(e).replace("\n", " "), flush=True)
        return
    s = gen.stats()
    print("OPEN", s.lease_value, s.clock_skew_ms, flush=True)
    with open(os.path.join(dir, name + ".ids"), "a") as out:
        while not os.path.exists(os.path.join(dir, "stop")):
            batch = []
            for _ in range(200):
                try:
                    batch.append(gen.next_id())
                except sf.LeaseError as e:
                    time.sleep(min(0.2, (getattr(e, "retry_after_ms", None) or 20) / 1000))
                    break
            out.write("".join(f"{i}\n" for i in batch))
            out.flush()
            time.sleep(0.005)  # about 40,000 IDs a second: the test needs thousands, not millions
    s = gen.stats()
    print("DONE", s.lease_claims, s.lease_losses, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
