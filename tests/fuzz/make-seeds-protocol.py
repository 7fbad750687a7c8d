#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Regenerates corpus-protocol/, the socket-protocol fuzz target's seeds.

  make-seeds-protocol.py [OUTDIR]

Each seed is a packet sequence in fuzz-protocol.c's input format (2-byte
length, fix-up byte, bytes): well-formed packets of every type from
core/protocol.h, whole answers (REPLY; LIST_ENTRY... REPLY), and
near misses (a field off by one, a wrong size, magic or version, truncated
and oversized packets, foreign sequence numbers, a bad path).
"""
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus-protocol")
MAGIC, VERSION = 0x54445355, 1
REGISTER, UNREGISTER, LIST, WATCH, READY, REPLY, LIST_ENTRY, NOTICE, HELD = 1, 2, 3, 4, 5, 0x81, 0x82, 0x83, 0x84
FIX_MAGIC, FIX_SIZE, FIX_SEQ, FIX_MAPPING = 1, 2, 4, 8
ENTRY = 72  # sizeof(struct usdt_msg_list_entry)


def hdr(typ, size, seq=0, magic=MAGIC, version=VERSION):
    return struct.pack("<IHHII", magic, version, typ, size, seq)


def module(typ, addr=0x400000, **kw):
    return hdr(typ, 24, **kw) + struct.pack("<Q", addr)


def list_req(pid=0, **kw):
    return hdr(LIST, 24, **kw) + struct.pack("<iI", pid, 0)


def reply(status=0, nprobes=0, **kw):
    return hdr(REPLY, 24, **kw) + struct.pack("<iI", status, nprobes)


def entry(path=b"/usr/lib/libx.so\0", pid=1, nprobes=2, path_len=None, **kw):
    pl = len(path) if path_len is None else path_len
    body = struct.pack("<iIQQQQQII", pid, nprobes, 0x801, 1234, 0x7f0000000000,
                       0x7f0000001000, 0x7f0000000000, pl, 0)
    return hdr(LIST_ENTRY, ENTRY + len(path), **kw) + body + path


def watch(flags=0, **kw):
    return hdr(WATCH, 24, **kw) + struct.pack("<II", flags, 0)


def ready(notice=1, **kw):
    return hdr(READY, 24, **kw) + struct.pack("<II", notice, 0)


def notice(n=1, pid=1, **kw):
    return hdr(NOTICE, 40, **kw) + struct.pack("<IiQQ", n, pid, 254 << 32, 1234)


def held(ms=2000, **kw):
    return hdr(HELD, 24, **kw) + struct.pack("<II", ms, 0)


def seq(*pkts):
    """pkts: (bytes, fixups) pairs."""
    out = b""
    for p, fix in pkts:
        out += struct.pack("<HB", len(p), fix) + p
    return out


S = FIX_SEQ  # the reader's sequence number, patched in
seeds = {
    # client -> daemon
    "register": seq((module(REGISTER), S)),
    "unregister": seq((module(UNREGISTER), S)),
    "list-all": seq((list_req(0), S)),
    "list-pid": seq((list_req(1234), S)),
    "list-negative-pid": seq((list_req(-1), S)),
    "register-short": seq((module(REGISTER)[:20], S)),
    "register-long": seq((module(REGISTER) + b"\0" * 8, S)),
    "register-size-field-wrong": seq((hdr(REGISTER, 32) + b"\0" * 8, S)),
    "register-bad-magic": seq((module(REGISTER, magic=0x54445356), S)),
    "register-bad-version": seq((module(REGISTER, version=2), S)),
    "unknown-type": seq((hdr(9, 24) + b"\0" * 8, S)),
    "header-only": seq((hdr(REGISTER, 16), S)),
    "watch": seq((watch(), S)),
    "watch-flags": seq((watch(1), S)),
    "ready": seq((ready(5), S)),
    "ready-zero": seq((ready(0), S)),
    "empty-packet": seq((b"", 0)),
    # daemon -> drti
    "reply-ok": seq((reply(0, 3), S)),
    "reply-refused": seq((reply(-71, 0), S)),
    "reply-other-seq": seq((reply(0, 1, seq=7), 0), (reply(0, 2), S)),
    "reply-nine-foreign": seq(*[(reply(0, 1, seq=7), 0)] * 9 + [(reply(0, 2), S)]),
    "reply-truncated": seq((reply(0, 1)[:20], S)),
    "reply-oversized": seq((reply(0, 1) + b"\0" * 4000, S | FIX_SIZE)),
    "reply-size-mismatch": seq((hdr(REPLY, 28) + b"\0" * 8, S)),
    "reply-bad-magic": seq((reply(0, 1, magic=0), S)),
    # daemon -> dtrace -l
    "list-answer-empty": seq((reply(0, 0), S)),
    "list-answer-one": seq((entry(), S), (reply(0, 1), S)),
    "list-answer-own-mapping": seq((entry(b"/proc/self/exe\0"), S | FIX_MAPPING),
                                   (entry(b"/x (deleted)\0"), S | FIX_MAPPING),
                                   (reply(0, 2), S)),
    "list-answer-refused": seq((reply(-1, 0), S)),
    "list-entry-path-unterminated": seq((entry(b"/x"), S), (reply(0, 1), S)),
    "list-entry-path-len-wrong": seq((entry(path_len=3), S), (reply(0, 1), S)),
    "list-entry-path-len-zero": seq((entry(b"", path_len=0), S), (reply(0, 1), S)),
    "list-entry-huge-path": seq((entry(b"/" + b"a" * 4094 + b"\0"), S), (reply(0, 1), S)),
    "list-entry-pid-zero": seq((entry(pid=0), S), (reply(0, 1), S)),
    "list-entry-short": seq((entry()[:ENTRY - 8], S | FIX_SIZE), (reply(0, 1), S)),
    "list-no-reply": seq((entry(), S)),
    # daemon -> a watcher (dtrace -Z's retained enablings)
    "notice": seq((reply(0, 0), S), (notice(1, 42), S), (notice(2, 43), S)),
    "notice-zero": seq((notice(0, 42), S)),
    "notice-pid-zero": seq((notice(3, 0), S)),
    "notice-short": seq((notice(1, 42)[:32], S | FIX_SIZE)),
    # daemon -> a held registrant (drti moves its deadline once)
    "held": seq((held(2000), S), (reply(0, 3), S)),
    "held-twice": seq((held(1), S), (held(5000), S), (reply(0, 3), S)),
    "held-zero": seq((held(0), S), (reply(0, 3), S)),
    "held-over-max": seq((held(5001), S), (reply(0, 3), S)),
    "held-short": seq((held()[:20], S | FIX_SIZE), (reply(0, 3), S)),
    "held-foreign-seq": seq((held(2000), FIX_MAGIC | FIX_SIZE), (reply(0, 3), S)),
    "fixups-all": seq((b"\0" * ENTRY + b"/\0", 0x0f), (b"\0" * 24, 0x07)),
}

os.makedirs(OUT, exist_ok=True)
for name in os.listdir(OUT):
    if name.startswith("seed-"):
        os.unlink(os.path.join(OUT, name))
for name, data in seeds.items():
    with open(os.path.join(OUT, "seed-" + name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {OUT}")
