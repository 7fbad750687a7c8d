# SPDX-License-Identifier: MIT
"""core/protocol.h for the tests' Python peers and clients
(tests/list/listpeer.py, the packets of t-fault-bad-messages and
t-helperd-hostile): the constants and the messages, built as drti and the
daemon build them, for each test to spoil as it needs. Integers in the
host's byte order, as the protocol says. tests/lib/common.sh puts this
directory on PYTHONPATH.
"""
import struct

MAGIC = 0x54445355  # "USDT" in little-endian bytes
VERSION = 1
REGISTER, UNREGISTER, LIST = 1, 2, 3
REPLY, LIST_ENTRY = 0x81, 0x82

HDR = "=IHHII"  # magic, version, type, size, seq
MODULE = HDR + "Q"  # addr
LIST_FMT = HDR + "iI"  # pid, pad
REPLY_FMT = HDR + "iI"  # status, nprobes
ENTRY = HDR + "iIQQQQQII"  # pid, nprobes, dev, ino, start, end, load_bias, path_len, pad; path


def hdr(typ, size, seq=0, magic=MAGIC, version=VERSION):
    return struct.pack(HDR, magic, version, typ, size, seq)


def module(typ, addr, seq=0):
    """A well-formed REGISTER or UNREGISTER: 24 bytes."""
    return hdr(typ, struct.calcsize(MODULE), seq) + struct.pack("=Q", addr)


def list_req(pid=0, seq=0):
    """A well-formed LIST: 24 bytes."""
    return hdr(LIST, struct.calcsize(LIST_FMT), seq) + struct.pack("=iI", pid, 0)


def reply(seq, status, nprobes=0, magic=MAGIC):
    return struct.pack(REPLY_FMT, magic, VERSION, REPLY, struct.calcsize(REPLY_FMT), seq,
                       status, nprobes)


def entry(seq, pid, nprobes, dev, ino, start, end, load_bias, path):
    """A LIST_ENTRY naming path (a str), its NUL included."""
    p = path.encode() + b"\0"
    size = struct.calcsize(ENTRY) + len(p)
    return struct.pack(ENTRY, MAGIC, VERSION, LIST_ENTRY, size, seq, pid, nprobes, dev, ino,
                       start, end, load_bias, len(p), 0) + p


def parse_hdr(packet):
    """(magic, version, type, size, seq) of a packet of at least 16 bytes."""
    return struct.unpack_from(HDR, packet)


def reply_status(packet):
    """The status of a REPLY-sized packet."""
    return struct.unpack_from("=i", packet, struct.calcsize(HDR))[0]
