#!/usr/bin/env python3
"""Writes the committed seed inputs of the fuzz targets whose formats have no Rust
seed generator: fix_gateway_state, cluster_log, exchange_snapshot, cluster_batch.
Each seed is a valid record (or a minimal one the fuzzer can grow), named by its SHA-1 like the
seeds cargo-fuzz writes. Layouts: crates/peregrine-fix-gateway/src/bridge/persist.rs,
crates/peregrine-cluster/src/log/{records,snapshot}.rs, crates/peregrine-cluster/src/
entry.rs, crates/peregrine-exchange-core/src/codec/snapshot.rs, crates/peregrine-exchange/src/
cluster/batch.rs (with the command records of crates/peregrine-exchange-core/src/codec/
command.rs).

    python3 scripts/fuzz-seeds.py fuzz/seeds
"""
import hashlib
import os
import struct
import sys


def u8(v): return struct.pack("<B", v)
def u16(v): return struct.pack("<H", v)
def u32(v): return struct.pack("<I", v)
def u64(v): return struct.pack("<Q", v & 0xFFFF_FFFF_FFFF_FFFF)
def i128(v): return (v & ((1 << 128) - 1)).to_bytes(16, "little")
def text(b): return u16(len(b)) + b


def order(cl, state):
    out = text(cl) + u32(0) + b"2" + b"2" + b"1" + u64(77) + u64(10) + u64(-5)
    if state is None:
        return out + u8(0)
    return out + u8(1) + u64(10) + u64(4) + u64(6) + i128(400) + u64(100) + b"1"


def gateway_record(orders, natives):
    out = u64(5) + u64(9) + u32(len(orders))
    for i, o in orders:
        out += u32(i) + o
    out += u32(len(natives))
    for native, idx, pending in natives:
        out += u64(native) + u32(0xFFFF_FFFF if idx is None else idx) + pending
    return out


def fix_gateway_state():
    # The target's first byte is the configured instrument count (mod 4).
    new = u8(1) + u32(0)
    cancel = u8(2) + u32(0) + text(b"C1") + text(b"A")
    replace = u8(3) + u32(0) + text(b"R1") + text(b"A")
    mass = u8(4) + text(b"M") + b"1" + u8(1) + text(b"PGN-USD") + b"1"
    mass_all = u8(4) + text(b"M2") + b"7" + u8(0) + u8(0)
    return [
        b"\x01" + gateway_record([], []),
        b"\x01" + gateway_record([(0, order(b"A", None))], [(1, 0, new)]),
        b"\x01" + gateway_record([(0, order(b"A", True))], [(2, 0, cancel), (3, 0, replace)]),
        b"\x01" + gateway_record([], [(4, None, mass), (5, None, mass_all), (6, None, u8(0))]),
        b"\x00" + gateway_record([(0, order(b"A", None))], []),
    ]


def cluster_log():
    header = u8(1) + u8(0) + b"\0\0" + u32(3) + u32(0) + b"\0" * 4 + u64(2) + u64(7)
    hard = u8(1) + b"\0" * 7 + u64(2) + u64(1) + u64(7)
    mark = u8(1) + b"\0" * 7 + u64(7) + u64(2)
    state_hash = u8(2) + b"\0" * 7 + u64(7) + bytes(range(32))
    data = (u8(1) + b"\0" * 3 + u32(1) + bytes(32) + u64(3)
            + u64(1) + text(b"127.0.0.1:7001") + b"abc")
    snap_file = (b"PGCLSNAP" + u32(1) + b"\0" * 4 + u64(7) + u64(2) + u64(2) + u64(1)
                 + u64(7) + b"\0" * 32 + u64(len(data)) + data)
    return [
        u8(0) + header + b"abc",
        u8(0) + header.replace(u8(1) + u8(0), u8(1) + u8(1), 1),
        u8(1) + hard,
        u8(2) + mark,
        u8(3) + u8(1) + b"app payload",
        u8(3) + state_hash,
        u8(3),
        u8(4) + data,
        u8(5) + snap_file,
    ]


def exchange_snapshot():
    def header(version, books):
        return u8(version) + b"\0" * 7 + u64(100) + u64(42) + u64(1_700_000_000) + u32(books) + b"\0" * 4
    return [header(v, 0) + (b"\0" * 16 if v in (2, 4) else b"") for v in (1, 2, 3, 4)]


def cluster_batch():
    def command(tag, ts, body):
        return u8(1) + u8(tag) + b"\0" * 6 + u64(ts) + body
    tick = command(5, 1_000, b"")
    cancel = command(1, 1_001, u32(1) + u32(7) + u64(42) + u64(9))
    deposit = command(6, 1_002, u32(7) + u32(2) + u64(10_000) + u64(3))
    mass = command(8, 1_003, u32(0xFFFF_FFFF) + u32(7) + u8(2) + b"\0" * 7 + u64(11))

    def batch(first, records):
        out = u8(1) + b"\0" * 3 + u32(len(records)) + u64(2) + u64(7)
        for i, r in enumerate(records):
            out += u64(first + i) + u8(len(r)) + r
        return out
    return [batch(41, [tick]), batch(1, [tick, cancel, deposit, mass])]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "fuzz/seeds"
    for name, seeds in [("fix_gateway_state", fix_gateway_state()),
                        ("cluster_log", cluster_log()),
                        ("exchange_snapshot", exchange_snapshot()),
                        ("cluster_batch", cluster_batch())]:
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        for s in seeds:
            with open(os.path.join(d, hashlib.sha1(s).hexdigest()), "wb") as f:
                f.write(s)
        print(f"{d}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
