#!/usr/bin/env python3
"""Writes the shared test vectors from an independent Python model of DESIGN.md §2-4.

This file does not call libsnowflake: it re-implements layouts, encodings and the generator's
rules (§3) from the design text, so that the Rust core (and through it every binding) is
checked against a second implementation rather than against itself. Run it to regenerate:

    python3 tests/vectors/make_vectors.py

The Rust test `core/tests/vectors.rs` fails if the files differ from what this writes.
"""
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
U64 = (1 << 64) - 1

PRESETS = {
    "twitter": "time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms",
    "discord": "time:42,worker:5,process:5,sequence:12;epoch=1420070400000;tick=1ms",
    "instagram": "time:41,shard:13,sequence:10;epoch=1314220021721;tick=1ms",
    "sonyflake": "time:39,sequence:8,machine:16;epoch=1409529600000;tick=10ms",
    "baidu": "time:28,worker:22,sequence:13;epoch=1463673600000;tick=1s",
    "mastodon": "time:48,sequence:16;epoch=0;tick=1ms",
    "game": "time:39,platform:3,area:11,app:5,sequence:6;epoch=1541001600000;tick=1ms",
    "js53": "time:41,worker:6,sequence:6;epoch=1767225600000;tick=1ms",
}


class Layout:
    """Only well-formed specs: the invalid ones are listed by hand below."""

    def __init__(self, spec):
        spec = PRESETS.get(spec, spec)
        fields_text, _, opts = spec.partition(";")
        self.fields = []
        for f in fields_text.split(","):
            name, bits = f.strip().split(":")
            self.fields.append([name.strip(), int(bits)])
        total = sum(b for _, b in self.fields)
        shift = total
        for f in self.fields:
            shift -= f[1]
            f.append(shift)
        self.total = total
        self.epoch, self.tick = 0, 1
        for o in filter(None, (x.strip() for x in opts.split(";"))):
            k, v = (x.strip() for x in o.split("="))
            if k == "epoch":
                if v.isdigit():
                    self.epoch = int(v)
                else:
                    dt = datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
                    self.epoch = int(round(dt.timestamp() * 1000))
            else:
                self.tick = int(v[:-2]) if v.endswith("ms") else int(v[:-1]) * 1000
        self.time_bits = self.fields[0][1]
        self.seq = next(f for f in self.fields if f[0] == "sequence")
        self.max_tick = (1 << self.time_bits) - 1
        self.last = self.epoch + (self.max_tick + 1) * self.tick - 1

    def canonical(self):
        f = ",".join(f"{n}:{b}" for n, b, _ in self.fields)
        t = f"{self.tick // 1000}s" if self.tick % 1000 == 0 else f"{self.tick}ms"
        return f"{f};epoch={self.epoch};tick={t}"

    def fingerprint(self):
        h = 0xCBF29CE484222325
        for b in self.canonical().encode():
            h = ((h ^ b) * 0x100000001B3) & U64
        return h

    def node_fields(self):
        return [f for f in self.fields if f[0] not in ("time", "sequence")]

    def compose_tick(self, tick, node, seq):
        id_ = tick << self.fields[0][2]
        for name, bits, shift in self.node_fields():
            id_ |= node.get(name, 0) << shift
        return id_ | (seq << self.seq[2])

    def decode(self, id_):
        get = lambda f: (id_ >> f[2]) & ((1 << f[1]) - 1)
        tick = get(self.fields[0])
        return {
            "id": str(id_),
            "unix_ms": self.epoch + tick * self.tick,
            "tick": tick,
            "sequence": get(self.seq),
            "fields": {f[0]: get(f) for f in self.node_fields()},
        }


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & U64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
    return z ^ (z >> 31)


class Model:
    """DESIGN §3 for next_id_at (the caller's clock: never waits)."""

    def __init__(self, layout, node, drift_ms=0, spread=0, rollover=None):
        self.l, self.node = layout, dict(node)
        self.drift = drift_ms // layout.tick
        self.spread, self.rollover = spread, rollover
        self.cap = 1 << layout.seq[1]
        self.roll_max = 0
        if rollover:
            self.roll_field = next(f for f in layout.fields if f[0] == rollover)
            self.roll_max = (1 << self.roll_field[1]) - 1
        self.L, self.r, self.s = 0, 0, 0  # the next free slot

    def start(self, t):
        return splitmix64(t) % self.spread if self.spread else 0

    def next_at(self, ms):
        l = self.l
        if ms < l.epoch or ms > l.last:
            return "ERR_SNOWFLAKE_TIME_RANGE"
        t = (ms - l.epoch) // l.tick
        L, r, s = self.L, self.r, self.s
        if t > L:
            tick, roll, seq = t, r, self.start(t)
        elif t == L:
            tick, roll, seq = L, r, max(s, self.start(L))
        else:
            ahead = L - t
            exhausted = s == 0 and ahead == self.drift + 1
            if ahead <= self.drift:
                tick, roll, seq = L, r, max(s, self.start(L))
            elif not exhausted and self.rollover and r < self.roll_max:
                tick, roll, seq = t, r + 1, self.start(t)
            else:
                return "ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED" if exhausted else "ERR_SNOWFLAKE_CLOCK_BEHIND"
        room = self.cap - 1 if tick == l.max_tick else self.cap
        if seq >= room:
            return "ERR_SNOWFLAKE_TIME_RANGE"
        if seq + 1 == self.cap:
            self.L, self.r, self.s = tick + 1, roll, 0
        else:
            self.L, self.r, self.s = tick, roll, seq + 1
        node = dict(self.node)
        if self.rollover:
            node[self.rollover] = roll
        return l.compose_tick(tick, node, seq)


# --- encodings --------------------------------------------------------------------------
ALPHABETS = {
    "decimal": "0123456789",
    "hex": "0123456789abcdef",
    "base32": "0123456789ABCDEFGHJKMNPQRSTVWXYZ",
    "base36": "0123456789abcdefghijklmnopqrstuvwxyz",
    "base58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
    "base62": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
}
WIDTHS = {"decimal": None, "hex": 16, "base32": 13, "base36": 13, "base58": 11, "base62": 11}


def enc(v, name):
    a = ALPHABETS[name]
    s = ""
    while v:
        v, d = divmod(v, len(a))
        s = a[d] + s
    w = WIDTHS[name]
    return (s or a[0]) if w is None else s.rjust(w, a[0])


def model_parse(text, name):
    """The model's strict parse: None for a wrong length, a foreign character or overflow."""
    a, w = ALPHABETS[name], WIDTHS[name]
    if not text or (w is not None and len(text) != w) or len(text) > 20:
        return None
    if name in ("hex", "base36"):
        text = text.lower()
    if name == "base32":
        text = text.upper().replace("I", "1").replace("L", "1").replace("O", "0")
    if any(c not in a for c in text):
        return None
    v = 0
    for c in text:
        v = v * len(a) + a.index(c)
    return v if v <= U64 else None


def layouts_json():
    real = {
        # Discord's developer documentation, "Snowflakes".
        "discord": [175928847299117063],
        # The tweet ID taken apart in Wikipedia's "Snowflake ID" article.
        "twitter": [1541815603606036480],
    }
    specs = list(PRESETS) + [
        "time:41,sequence:23;epoch=0;tick=1ms",  # 64 bits, IDs above i64::MAX
        "time:41,worker:10,sequence:12;epoch=2010-11-04T01:42:54.657Z;tick=1ms",
        "time:4,sequence:2;epoch=0;tick=1s",  # tiny, for the end of time
    ]
    out = []
    for spec in specs:
        l = Layout(spec)
        ids = list(real.get(spec, []))
        # Computed IDs across the whole range: first and last tick, all-ones fields.
        ids += [0, l.compose_tick(1, {}, 1), (1 << l.total) - 1]
        t = (1700000000000 - l.epoch) // l.tick
        if 0 <= t <= l.max_tick:
            node = {f[0]: (1 << f[1]) - 1 if i % 2 else 1 for i, f in enumerate(l.node_fields())}
            ids.append(l.compose_tick(t, node, 5))
        bounds = []
        for ms in (l.epoch, min(1700000000000, l.last), l.last):
            if ms < l.epoch or ms > l.last:
                continue
            t = (ms - l.epoch) // l.tick
            lo = t << l.fields[0][2]
            bounds.append({"unix_ms": ms, "min_id": str(lo), "max_id": str(lo | ((1 << l.fields[0][2]) - 1))})
        out.append({
            "spec": spec,
            "canonical": l.canonical(),
            "fingerprint": str(l.fingerprint()),
            "total_bits": l.total,
            "capacity_per_tick": 1 << l.seq[1],
            "epoch_ms": l.epoch,
            "tick_ms": l.tick,
            "last_unix_ms": l.last,
            "fields": [{"name": n, "bits": b, "shift": s} for n, b, s in l.fields],
            "decode": [l.decode(i) for i in ids],
            "bounds": bounds,
        })
    d = Layout("discord")
    compose = [
        {"spec": "discord", "unix_ms": 1462015105796, "fields": {"worker": 1, "process": 0}, "sequence": 7,
         "id": "175928847299117063"},
        {"spec": "twitter", "unix_ms": 1656432460105, "fields": {"datacenter": 11, "worker": 26},
         "sequence": 0, "id": str(Layout("twitter").compose_tick(1656432460105 - 1288834974657, {"datacenter": 11, "worker": 26}, 0))},
        {"spec": "sonyflake", "unix_ms": 1700000000009, "fields": {"machine": 65535}, "sequence": 255,
         "id": str(Layout("sonyflake").compose_tick((1700000000009 - 1409529600000) // 10, {"machine": 65535}, 255))},
        {"spec": "twitter", "unix_ms": 1288834974656, "fields": {}, "sequence": 0, "error": "ERR_SNOWFLAKE_TIME_RANGE"},
        {"spec": "twitter", "unix_ms": 1700000000000, "fields": {"worker": 32}, "sequence": 0, "error": "ERR_SNOWFLAKE_VALUE"},
        {"spec": "twitter", "unix_ms": 1700000000000, "fields": {}, "sequence": 4096, "error": "ERR_SNOWFLAKE_VALUE"},
        {"spec": "twitter", "unix_ms": 1700000000000, "fields": {"shard": 1}, "sequence": 0, "error": "ERR_SNOWFLAKE_VALUE"},
        {"spec": "twitter", "unix_ms": 1700000000000, "fields": {"sequence": 1}, "sequence": 0, "error": "ERR_SNOWFLAKE_VALUE"},
        # Naming some node fields but not all: the forgotten one would silently be 0.
        {"spec": "twitter", "unix_ms": 1700000000000, "fields": {"datacenter": 1}, "sequence": 0, "error": "ERR_SNOWFLAKE_VALUE"},
        {"spec": "time:4,sequence:2;epoch=0;tick=1s", "unix_ms": 16000, "fields": {}, "sequence": 0, "error": "ERR_SNOWFLAKE_TIME_RANGE"},
    ]
    assert d.decode(175928847299117063)["unix_ms"] == 1462015105796
    invalid = [
        ("", "empty"),
        ("twiter", "not a preset"),
        ("time:41,sequence:0", "zero width"),
        ("time:41,worker:11,sequence:13", "65 bits"),
        ("worker:10,time:41,sequence:12", "must be `time`"),
        ("sequence:22;epoch=0", "must be `time`"),
        ("sequence:12,time:41;epoch=0", "must be `time`"),
        ("time:41,time:5,sequence:12;epoch=0", "`time` appears more than once"),
        ("time:41,worker:10", "no `sequence`"),
        ("time:41,sequence:2,sequence:3", "`sequence` appears more than once"),
        ("time:41,worker:5,worker:5,sequence:12", "`worker` appears more than once"),
        ("time:41,Worker:5,sequence:12", "field name `worker`".replace("worker", "Worker")),
        ("time:41,worker,sequence:12", "`name:bits`"),
        ("time:x,sequence:12", "not a number of bits"),
        ("time:41,sequence:12;tick=0ms", "at least 1ms"),
        ("time:41,sequence:12;tick=5m", "tick `5m`"),
        ("time:41,sequence:12;foo=1", "unknown layout option `foo`"),
        ("time:41,sequence:12;epoch=abc", "epoch `abc`"),
        ("time:41,sequence:12;epoch=2010-13-01T00:00:00Z", "epoch `2010-13-01t00:00:00z`".replace("t00:00:00z", "T00:00:00Z")),
        ("time:41,sequence:12;epoch=1;epoch=2", "`epoch` is given twice"),
        ("time:41,worker:10,sequence:12", "must state its epoch"),
        ("time:41,worker:10,sequence:12;tick=1ms", "T00:00:00Z` (today)"),
        ("time:60,sequence:4;tick=1s", "overflows"),
        ("time:41,a:1,b:1,c:1,d:1,e:1,f:1,g:1,h:1,i:1,j:1,k:1,l:1,m:1,n:1,o:1,sequence:1", "more than 16 fields"),
    ]
    return {
        "layouts": out,
        "compose": compose,
        "invalid": [{"spec": s, "error": "ERR_SNOWFLAKE_LAYOUT", "message_contains": m} for s, m in invalid],
        "decode_invalid": [
            {"spec": "twitter", "id": str(1 << 63), "error": "ERR_SNOWFLAKE_INVALID_ID"},
            {"spec": "sonyflake", "id": str(1 << 63), "error": "ERR_SNOWFLAKE_INVALID_ID"},
            {"spec": "time:4,sequence:2;epoch=0;tick=1s", "id": str(1 << 6), "error": "ERR_SNOWFLAKE_INVALID_ID"},
        ],
    }


def encodings_json():
    ids = [0, 1, 57, 58, 61, 62, 255, 175928847299117063, 1541815603606036480,
           (1 << 63) - 1, 1 << 63, U64 - 1, U64, 0x0123456789ABCDEF]
    rows = [{"id": str(i),
             "plain": {n: enc(i, n) for n in ALPHABETS},
             "reverse": {n: enc(U64 - i, n) for n in ALPHABETS}} for i in ids]
    aliases = [
        {"encoding": "base32", "text": "0000000000o1l", "id": str(33)},
        {"encoding": "base32", "text": "0000000000IiL", "id": str(1 * 1024 + 1 * 32 + 1)},
        {"encoding": "base32", "text": enc(175928847299117063, "base32").lower(), "id": "175928847299117063"},
        {"encoding": "hex", "text": "00000000000000FF", "id": "255"},
        {"encoding": "base36", "text": enc(175928847299117063, "base36").upper(), "id": "175928847299117063"},
    ]
    invalid = [
        ("decimal", ""), ("decimal", "18446744073709551616"), ("decimal", "12a"), ("decimal", "-1"),
        ("decimal", "123456789012345678901"),
        ("hex", "00000000000000f"), ("hex", "000000000000000g"), ("hex", "00000000000000fff"),
        ("base32", "G000000000000"), ("base32", "000000000000U"), ("base32", "00000000000000"),
        ("base36", "3w5e11264sgsg"), ("base36", "000000000000_"),
        ("base58", "zzzzzzzzzzz"), ("base58", "0000000000O"), ("base58", "1111111111l"),
        ("base62", "0Czks0tP37"), ("base62", "LygHa16AHYG"), ("base62", "0Czks0tP37-"),
    ]
    for e, t in invalid:  # each really is invalid under the model
        assert model_parse(t, e) is None, (e, t)
    for row in rows:
        for n, text in row["plain"].items():
            assert model_parse(text, n) == int(row["id"])
    return {
        "ids": rows,
        "aliases": aliases,
        "invalid": [{"encoding": e, "text": t, "error": "ERR_SNOWFLAKE_INVALID_ID"} for e, t in invalid],
    }


def trace(name, layout, node, steps, drift=0, spread=0, rollover=None):
    l = Layout(layout)
    m = Model(l, node, drift, spread, rollover)
    opts = f"max_drift_ms={drift};max_wait_ms=0"
    if spread:
        opts += f";sequence_start=spread:{spread}"
    if rollover:
        opts += f";rollover={rollover}"
    opts += ";isolated=true"
    out = []
    for ms in steps:
        r = m.next_at(ms)
        out.append({"unix_ms": ms, "error": r} if isinstance(r, str) else {"unix_ms": ms, "id": str(r)})
    return {
        "name": name,
        "layout": layout,
        "node": node,
        "node_spec": ",".join(f"{k}={v}" for k, v in node.items()),
        "options": opts,
        "options_fields": {"max_drift_ms": drift, "max_wait_ms": 0,
                           "sequence_start": f"spread:{spread}" if spread else "zero",
                           "rollover": rollover},
        "steps": out,
    }


def generator_json():
    T = 1700000000000
    small = "time:41,worker:10,sequence:2;epoch=1288834974657;tick=1ms"
    return {"traces": [
        trace("twitter: several IDs a millisecond", "twitter", {"datacenter": 1, "worker": 3},
              [T, T, T, T + 1, T + 1, T + 5, T + 5, T + 5]),
        trace("a full tick fails without waiting, the next tick starts at 0", small, {"worker": 7},
              [T] * 5 + [T + 1] * 2),
        trace("the clock steps back by one tick: behind, no repeat", small, {"worker": 7},
              [T, T, T - 1, T - 1, T, T + 1]),
        trace("max_drift_ms borrows ahead, then stops", small, {"worker": 1},
              [T] * 14 + [T + 2, T - 2, T - 30, T + 3, T + 4], drift=2),
        trace("max_drift_ms absorbs a small step back", small, {"worker": 1},
              [T + 10, T + 10, T + 7, T + 7, T + 6, T + 11], drift=5),
        trace("rollover bumps the clock-sequence field instead of waiting",
              "time:41,clock:2,worker:8,sequence:12;epoch=1288834974657;tick=1ms", {"worker": 200},
              [T, T + 1, T - 100, T - 99, T - 500, T - 2000, T - 3000, T - 2999, T + 5], rollover="clock"),
        trace("rollover does not fire for a full tick", "time:41,clock:3,sequence:2;epoch=0;tick=1ms", {},
              [T] * 6, rollover="clock"),
        trace("spread:16 starts each tick at splitmix64(tick) % 16", "twitter", {"datacenter": 0, "worker": 9},
              [T + i for i in range(12)] + [T + 11, T + 11], spread=16),
        trace("spread with a tiny sequence fills each tick's rest", small, {},
              [T + 3] * 4 + [T + 4] * 4, spread=3),
        trace("sonyflake: 10 ms ticks, sequence above the machine id", "sonyflake", {"machine": 513},
              [T, T + 3, T + 9, T + 10, T + 10, T + 25]),
        trace("baidu: 1 s ticks", "baidu", {"worker": 4000000}, [T, T + 999, T + 1000]),
        trace("64-bit IDs above i64::MAX", "time:41,sequence:23;epoch=0;tick=1ms", {}, [T, T, T + 1]),
        trace("mastodon: 48 time bits, 16 sequence bits", "mastodon", {}, [T, T, T + 1]),
        trace("before the epoch and past the last instant", "time:4,sequence:2;epoch=1000;tick=1s", {},
              [999, 1000, 16998, 16999, 17000] + [16500] * 3),
        trace("game preset", "game", {"platform": 2, "area": 1500, "app": 17}, [T, T, T + 1]),
        trace("2 ms ticks: a full tick carries, drift borrows, then refuses", "time:40,shard:12,sequence:2;epoch=1288834974657;tick=2ms",
              {"shard": 4095}, [T] * 6 + [T + 1, T + 2, T + 2, T - 10, T + 7, T + 8], drift=2),
    ]}


# --- public IDs: Speck64/128 (issue 14) ---------------------------------------------------
# From "The SIMON and SPECK Families of Lightweight Block Ciphers" (Beaulieu et al., 2013):
# 32-bit words, 4 key words, rotations 8 and 3, 27 rounds. Bytes map to words big-endian in
# the order the paper prints its test vectors: the key is l2 l1 l0 k0, the block x y.
M32 = (1 << 32) - 1


def ror32(v, r):
    return ((v >> r) | (v << (32 - r))) & M32


def rol32(v, r):
    return ((v << r) | (v >> (32 - r))) & M32


def speck_round(k, x, y):
    x = ((ror32(x, 8) + y) & M32) ^ k
    return x, rol32(y, 3) ^ x


def speck64_128_keys(key):
    assert len(key) == 16
    words = [int.from_bytes(key[i:i + 4], "big") for i in range(0, 16, 4)]
    k, l = [words[3]], [words[2], words[1], words[0]]
    for i in range(26):
        new_l, new_k = speck_round(i, l[i], k[i])
        l.append(new_l)
        k.append(new_k)
    return k


def speck64_128_encrypt(key, block):
    x, y = block >> 32, block & M32
    for k in speck64_128_keys(key):
        x, y = speck_round(k, x, y)
    return (x << 32) | y


def speck64_128_decrypt(key, block):
    x, y = block >> 32, block & M32
    for k in reversed(speck64_128_keys(key)):
        y = ror32(y ^ x, 3)
        x = rol32(((x ^ k) - y) & M32, 8)
    return (x << 32) | y


def uuid_of(layout, id_):
    """RFC 9562 version 7, written from the RFC's field diagram: unix_ts_ms (48 bits) is the
    start of the ID's tick; the ID's bits below its time fill rand_a then rand_b (74 bits, from
    the top), the rest zero."""
    low_bits = layout.fields[0][2]
    unix_ms = layout.epoch + (id_ >> low_bits) * layout.tick
    if unix_ms >= 1 << 48:
        return None
    rand = (id_ & ((1 << low_bits) - 1)) << (74 - low_bits)
    rand_a, rand_b = rand >> 62, rand & ((1 << 62) - 1)
    return uuid_text((unix_ms << 80) | (7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b)


def uuid_text(value):
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def uuid_json():
    specs = list(PRESETS) + [
        "time:41,sequence:23;epoch=0;tick=1ms",  # 64 bits
        "time:50,sequence:14;epoch=0;tick=1ms",  # past 2^48 ms at its end
        "time:4,sequence:2;epoch=0;tick=1s",
    ]
    cases, too_late = [], []
    for spec in specs:
        l = Layout(spec)
        top = (1 << l.total) - 1
        ids = [0, 1, l.compose_tick(1, {}, 1), top // 3, top // 2, top - 1, top]
        t = (1700000000000 - l.epoch) // l.tick
        if 0 <= t <= l.max_tick:
            node = {f[0]: (1 << f[1]) - 1 if i % 2 else 1 for i, f in enumerate(l.node_fields())}
            ids.append(l.compose_tick(t, node, 5))
        rows = []
        for id_ in sorted(set(ids)):
            u = uuid_of(l, id_)
            if u is None:
                too_late.append({"spec": spec, "id": str(id_), "error": "ERR_SNOWFLAKE_TIME_RANGE"})
            else:
                rows.append({"id": str(id_), "uuid": u, "unix_ms": l.epoch + (id_ >> l.fields[0][2]) * l.tick})
        assert [r["uuid"] for r in rows] == sorted(r["uuid"] for r in rows), spec
        cases.append({"spec": spec, "cases": rows})
    tw = Layout("twitter")
    good = uuid_of(tw, 1541815603606036480)
    flip = lambda u, i, c: u[:i] + c + u[i + 1:]
    invalid = [
        ("twitter", "", "36 characters"),
        ("twitter", good.replace("-", ""), "36 characters"),
        ("twitter", "{" + good[1:], "hex digits"),
        ("twitter", flip(good, 8, "0"), "hyphens"),
        ("twitter", flip(good, 14, "4"), "version is not 7"),
        ("twitter", flip(good, 19, "c"), "variant"),
        ("twitter", flip(good, 35, "1"), "bits set"),
        ("twitter", "018bcfe5-6800-7000-8000-000000000000", None),  # a valid one (2023-11-14)
        ("twitter", "00000000-0001-7000-8000-000000000000", "start of one of the layout's ticks"),  # before the epoch
        # 1 ms into a 10 ms tick.
        ("sonyflake", uuid_text(int(uuid_of(Layout("sonyflake"), 12345 << 24).replace("-", ""), 16) + (1 << 80)),
         "start of one of the layout's ticks"),
    ]
    bad = []
    for spec, text, reason in invalid:
        if reason is None:
            continue
        bad.append({"spec": spec, "uuid": text, "error": "ERR_SNOWFLAKE_INVALID_ID", "message_contains": reason})
    return {"layouts": cases, "to_uuid_invalid": too_late + [
        {"spec": "twitter", "id": str(1 << 63), "error": "ERR_SNOWFLAKE_INVALID_ID"}], "from_uuid_invalid": bad}


def public_ids_json():
    paper_key = bytes.fromhex("1b1a1918131211100b0a090803020100")
    # The paper's Speck64/128 vector (Appendix C): the model must reproduce it.
    assert speck64_128_encrypt(paper_key, 0x3B7265747475432D) == 0x8C6FA548454E028B
    assert speck64_128_decrypt(paper_key, 0x8C6FA548454E028B) == 0x3B7265747475432D
    l = Layout("twitter")
    run = [l.compose_tick(1700000000000 - l.epoch, {"datacenter": 1, "worker": 3}, s) for s in range(6)]
    ids = [0, 1, 2, 175928847299117063, 1541815603606036480, (1 << 63) - 1, 1 << 63, U64] + run
    keys = [
        ("000102030405060708090a0b0c0d0e0f", "base62"),
        (b"libsnowflake key".hex(), "base62"),
        (b"libsnowflake key".hex(), "hex"),
        (b"libsnowflake key".hex(), "base32"),
        ("ffffffffffffffffffffffffffffffff", "base58"),
    ]
    rows = []
    for key_hex, encoding in keys:
        key = bytes.fromhex(key_hex)
        cases = []
        for i in ids:
            c = speck64_128_encrypt(key, i)
            assert speck64_128_decrypt(key, c) == i
            cases.append({"id": str(i), "text": enc(c, encoding)})
        rows.append({"key_hex": key_hex, "encoding": encoding, "cases": cases})
    # Consecutive IDs share no prefix under the model either (the property the tests check).
    texts = [c["text"] for c in rows[1]["cases"][-6:]]
    assert len({t[:2] for t in texts}) == len(texts), texts
    invalid_texts = [("0Czks0tP37", "base62"), ("0Czks0tP37X0", "base62"), ("0Czks0tP37-", "base62"),
                     ("LygHa16AHYG", "base62"), ("", "base62"), ("0000000000000000", "base62"),
                     ("000000000000000g", "hex"), ("0000000000000U", "base32")]
    for t, e in invalid_texts:
        assert model_parse(t, e) is None, (t, e)
    return {
        "cipher": "Speck64/128",
        "known_answer": {"key_hex": paper_key.hex(), "encoding": "hex",
                         "id": str(0x3B7265747475432D), "text": enc(0x8C6FA548454E028B, "hex")},
        "keys": rows,
        "invalid_keys": [{"key_hex": k, "error": "ERR_SNOWFLAKE_VALUE"}
                         for k in ("", "00" * 15, "00" * 17, "00" * 32)],
        "invalid_texts": [{"key_hex": keys[0][0], "encoding": e, "text": t, "error": "ERR_SNOWFLAKE_INVALID_ID"}
                          for t, e in invalid_texts],
        "invalid_encodings": [{"key_hex": keys[0][0], "encoding": "decimal", "error": "ERR_SNOWFLAKE_VALUE"},
                              {"key_hex": keys[0][0], "encoding": "base64", "error": "ERR_SNOWFLAKE_VALUE"}],
    }


def json_ids_json():
    """What every language's JSON helpers accept in a field named as an ID (Node's
    libsnowflake/json parse, Python's SnowflakeId), and which IDs they write: the field's JSON
    text, and the ID it reads as (a decimal string) or null for a refusal. `exact_number`: a
    JSON number above 2^53, read exactly only where the parser keeps its source text (Python;
    Node 21+), refused where it would be rounded."""
    max_id = (1 << 64) - 1
    cases = [
        ('"175928847299117063"', "175928847299117063", False),
        ("175928847299117063", "175928847299117063", True),
        ("0", "0", False),
        ('"0"', "0", False),
        ("12", "12", False),
        (f'"{max_id}"', str(max_id), False),
        (str(max_id), str(max_id), True),
        (f'"{max_id + 1}"', None, False),
        (str(max_id + 1), None, True),
        ("-5", None, False),
        ('"-5"', None, False),
        ("1.5", None, False),
        ('"1.5"', None, False),
        ('" 5"', None, False),
        ('""', None, False),
        ('"12a"', None, False),
        ('"0x10"', None, False),
        ("true", None, False),
        ("false", None, False),
        ("null", None, False),
        ("[]", None, False),
        ("[1]", None, False),
        ("{}", None, False),
        ('{"id": "1"}', None, False),
    ]
    writes = [
        ("0", '"0"'),
        ("175928847299117063", '"175928847299117063"'),
        (str(max_id), f'"{max_id}"'),
        ("-1", None),
        (str(1 << 70), None),
        (str(max_id + 1), None),
    ]
    return {
        "parse": [{"json": j, "id": i, "exact_number": e} for j, i, e in cases],
        "stringify": [{"id": i, "json": j} for i, j in writes],
    }


def main():
    files = {
        "json_ids.json": json_ids_json(),
        "layouts.json": layouts_json(),
        "encodings.json": encodings_json(),
        "generator.json": generator_json(),
        "public_ids.json": public_ids_json(),
        "uuid.json": uuid_json(),
    }
    check = "--check" in sys.argv
    stale = []
    for name, data in files.items():
        text = json.dumps(data, indent=1) + "\n"
        path = os.path.join(HERE, name)
        if check:
            if not os.path.exists(path) or open(path).read() != text:
                stale.append(name)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        sys.exit(f"stale vectors (run python3 tests/vectors/make_vectors.py): {', '.join(stale)}")


if __name__ == "__main__":
    main()
