#!/usr/bin/env python3
"""A helper-daemon peer for `dtrace -l`: it answers USDT_MSG_LIST as
core/protocol.h says usdtkit-helperd does, with entries built from
the live processes named on the command line, so the client side of the
protocol (entries, stale entries, refusals, malformed answers) is tested
whatever the state of the real daemon.

    listpeer.py SOCKET MODE PID:MODULE... [gone:PID:MODULE]...

MODE: ok (entries then REPLY 0), stale (ok, plus an entry for a process that
is gone and one whose inode does not match), refuse (REPLY -EPERM),
garbage (a packet with a bad magic), close (close without answering).
For PID:MODULE the entry is the first mapping of the file named MODULE
(basename) in /proc/PID/maps. It prints "ready" once it listens, and serves
until killed.
"""
import errno
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from usdtproto import LIST, MAGIC, VERSION, parse_hdr, reply  # noqa: E402
import usdtproto  # noqa: E402


def mappings(pid, module):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.rstrip("\n").split(None, 5)
            if len(parts) == 6 and os.path.basename(parts[5]) == module:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                return start, end, parts[5]
    raise SystemExit(f"listpeer: {module} not mapped by {pid}")


def entry(seq, pid, start, end, dev, ino, path):
    return usdtproto.entry(seq, pid, 1, dev, ino, start, end, 0, path)


def answer(conn, mode, targets):
    req = conn.recv(4096)
    magic, version, typ, size, seq = parse_hdr(req)
    if magic != MAGIC or version != VERSION or typ != LIST or size != len(req) or len(req) != 24:
        conn.send(reply(seq, -errno.EPROTO, 0))
        return
    if mode == "close":
        return
    if mode == "garbage":
        conn.send(reply(seq, 0, 0, magic=0xdeadbeef))
        return
    if mode == "refuse":
        conn.send(reply(seq, -errno.EPERM, 0))
        return
    n = 0
    for pid, module in targets:
        start, end, path = mappings(pid, module)
        st = os.stat(f"/proc/{pid}/map_files/{start:x}-{end:x}")
        if mode == "stale":
            # The same range under another inode and name: what a range
            # remapped since the daemon looked looks like. Listed, it would
            # show the module "WRONG".
            conn.send(entry(seq, pid, start, end, st.st_dev, st.st_ino + 1, "/stale/WRONG"))
            n += 1
        conn.send(entry(seq, pid, start, end, st.st_dev, st.st_ino, path))
        n += 1
    if mode == "stale":
        # A process that exited after the daemon looked.
        conn.send(entry(seq, 0x7ffffff0, 0x1000, 0x2000, 1, 1, "/gone/app"))
        n += 1
    conn.send(reply(seq, 0, n))


def main():
    path, mode = sys.argv[1], sys.argv[2]
    targets = []
    for t in sys.argv[3:]:
        pid, module = t.split(":", 1)
        targets.append((int(pid), module))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(path)
    s.listen(8)
    print("ready", flush=True)
    while True:
        conn, _ = s.accept()
        with conn:
            answer(conn, mode, targets)


if __name__ == "__main__":
    main()
