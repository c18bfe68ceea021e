#!/usr/bin/env python3
"""An independent client of Peregrine's order-entry protocol, version 2, written from
docs/protocol.md alone with the Python standard library (socket, struct, hmac,
hashlib). The integration tests run it against the real exchange so the protocol is
checked by something other than the Rust code that defines it.

Usage: pgv2.py HOST:PORT ACCOUNT KEY_HEX CLIENT_ORDER_ID
Logs in (challenge-response), prints the login answer, the instruments and the
recovery phase, sends one resting NewOrder (instrument 1, buy 1 @ 100.00 in units of
its tick), waits for its terminal answer, prints it as JSON lines and logs out.
"""
import hashlib
import hmac
import json
import socket
import struct
import sys

HEADER = struct.Struct("<HBBI")


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return buf


def recv_msg(sock):
    head = recv_exact(sock, 8)
    length, msg_type, version, reserved = HEADER.unpack(head)
    assert 8 <= length <= 512 and reserved == 0, (length, reserved)
    return msg_type, version, head + recv_exact(sock, length - 8)


def common(body):
    # session_seq, engine_seq, engine_time
    return struct.unpack_from("<QQQ", body, 8)


def login_bytes(next_seq, proof, account, target, heartbeat, kind):
    body = struct.pack("<Q", next_seq) + proof + struct.pack("<IIIB", account, target, heartbeat, kind) + b"\0\0\0"
    return HEADER.pack(8 + len(body), 0x04, 2, 0) + body


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    account = int(sys.argv[2])
    key = bytes.fromhex(sys.argv[3])
    client_id = int(sys.argv[4])
    sock = socket.create_connection((host, int(port)), timeout=10)
    out = []

    t, v, m = recv_msg(sock)
    assert (t, v, len(m)) == (0x84, 2, 64), ("Challenge", t, v, len(m))
    nonce = m[32:64]

    stored = hashlib.sha256(key).digest()
    blank = login_bytes(1, b"\0" * 32, account, account, 1000, 0)
    sig = hmac.new(stored, b"peregrine-login-v2\0\0" + nonce + blank, hashlib.sha256).digest()
    proof = bytes(a ^ b for a, b in zip(key, sig))
    sock.sendall(login_bytes(1, proof, account, account, 1000, 0))

    t, v, m = recv_msg(sock)
    if t == 0x82:
        reason, = struct.unpack_from("<H", m, 32)
        retry, = struct.unpack_from("<I", m, 36)
        print(json.dumps({"login": "rejected", "reason": reason, "retry_after_ms": retry}))
        return 2
    assert (t, v, len(m)) == (0x81, 2, 65), ("LoginAccepted", t, v, len(m))
    acc, hb, next_seq, oldest, target, count = struct.unpack_from("<IIQQII", m, 32)
    out.append({"login": "accepted", "account": acc, "next_report_seq": next_seq,
                "oldest_report_seq": oldest, "instruments": count})

    for _ in range(count):
        t, v, m = recv_msg(sock)
        assert (t, len(m)) == (0x9A, 111), ("InstrumentDefinition", t, len(m))
        tick, lot, min_q, max_q, ref, band = struct.unpack_from("<6q", m, 32)
        symbol = m[80:96].rstrip(b"\0").decode("ascii")
        inst, = struct.unpack_from("<I", m, 96)
        out.append({"instrument": inst, "symbol": symbol, "tick": tick, "reference": ref})

    t, v, m = recv_msg(sock)
    assert t == 0x85, ("ReplayStart", t)
    frm, to, n, reason = struct.unpack_from("<QQQH", m, 32)
    out.append({"replay": n, "from": frm, "to": to, "reason": reason})
    while True:
        t, v, m = recv_msg(sock)
        if t == 0x86:
            break
    reference = next(x["reference"] for x in out if "reference" in x)

    # NewOrder: client_order_id, price, qty, expire_at, instrument, side, type, tif, stp
    body = struct.pack("<QqqQIBBBB", client_id, reference - 100, 1, 0, 1, 0, 0, 0, 0)
    sock.sendall(HEADER.pack(8 + len(body), 0x10, 1, 0) + body)
    while True:
        t, v, m = recv_msg(sock)
        if t == 0x90:  # Accepted
            order_id, cid = struct.unpack_from("<QQ", m, 32)
            report_seq, acc = struct.unpack_from("<QI", m, 80)
            if cid == client_id:
                out.append({"accepted": order_id, "report_seq": report_seq, "account": acc})
                break
        elif t == 0x91:  # Rejected
            cid, = struct.unpack_from("<Q", m, 32)
            reason, = struct.unpack_from("<H", m, 44)
            if cid == client_id:
                out.append({"rejected": reason})
                break
    sock.sendall(HEADER.pack(8, 0x02, 1, 0))  # Logout
    for line in out:
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
