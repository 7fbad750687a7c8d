#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads and breaks the .note.stapsdt notes of an ELF64 little-endian file,
for t-fault-notes-outside. Its own parsing (section and program headers,
notes), independent of the daemon's reader, so that the test's expectations
do not come from the code under test.

  stapsdt.py list FILE
      one line per stapsdt note, in file order: "INDEX PROVIDER NAME PC SEMA"
  stapsdt.py mutate IN OUT INDEX=KIND...
      copies IN to OUT with note INDEX broken as KIND (see KINDS); prints one
      line per mutation: "INDEX KIND REASON" with the reason class the
      validating reader must give (kernel-helper/README.md, "Trust model")
  stapsdt.py check-sites FILE [NAME] < uprobe_events lines naming FILE (as NAME: its alias)
      every site "PATH:0xOFF(0xREF)" must be a NOP (0x90) in the file-backed
      part of an executable PT_LOAD, and REF (if any) an even offset in the
      file-backed part of a writable PT_LOAD; prints each violation, exit 1
"""
import shutil
import struct
import sys

PT_LOAD, PF_X, PF_W = 1, 1, 2


class Elf:
    def __init__(self, path):
        self.data = bytearray(open(path, 'rb').read())
        d = self.data
        if d[:4] != b'\x7fELF' or d[4] != 2 or d[5] != 1:
            sys.exit('%s: not an ELF64 little-endian file' % path)
        (self.phoff, self.shoff) = struct.unpack_from('<QQ', d, 0x20)
        (self.phentsize, self.phnum, self.shentsize, self.shnum,
         self.shstrndx) = struct.unpack_from('<HHHHH', d, 0x36)
        self.loads = []
        for i in range(self.phnum):
            o = self.phoff + i * self.phentsize
            ptype, flags, off, vaddr, _, filesz, memsz = struct.unpack_from('<IIQQQQQ', d, o)
            if ptype == PT_LOAD:
                self.loads.append((flags, off, vaddr, filesz, memsz))
        self.sections = {}
        stroff = struct.unpack_from('<Q', d, self.shoff + self.shstrndx * self.shentsize + 24)[0]
        for i in range(self.shnum):
            o = self.shoff + i * self.shentsize
            name, _, _, addr, off, size = struct.unpack_from('<IIQQQQ', d, o)
            end = d.index(b'\0', stroff + name)
            self.sections[d[stroff + name:end].decode()] = (addr, off, size)

    def notes(self):
        """stapsdt notes: dicts with the header's offset and the desc's fields."""
        if '.note.stapsdt' not in self.sections:
            return []
        _, off, size = self.sections['.note.stapsdt']
        d, pos, out = self.data, off, []
        while pos + 12 <= off + size:
            namesz, descsz, ntype = struct.unpack_from('<III', d, pos)
            name_off = pos + 12
            desc_off = name_off + ((namesz + 3) & ~3)
            if bytes(d[name_off:name_off + namesz]) == b'stapsdt\0':
                pc, base, sema = struct.unpack_from('<QQQ', d, desc_off)
                strs = bytes(d[desc_off + 24:desc_off + descsz]).split(b'\0')
                out.append({'hdr': pos, 'desc': desc_off, 'pc': pc, 'base': base,
                            'sema': sema, 'provider': strs[0].decode(), 'name': strs[1].decode()})
            pos = desc_off + ((descsz + 3) & ~3)
        return out

    def adjust(self):
        """What the reader adds to pc and sema (.stapsdt.base vs the note's base)."""
        return self.sections.get('.stapsdt.base', (0,))[0]

    def file_off(self, addr, flag):
        """The file offset of addr if it is in the file-backed part of a PT_LOAD with flag."""
        for flags, off, vaddr, filesz, _ in self.loads:
            if flags & flag and vaddr <= addr < vaddr + filesz:
                return addr - vaddr + off
        return None

    def segment_of(self, flag):
        return next(s for s in self.loads if s[0] & flag)


def mutate(src, dst, specs):
    e = Elf(src)
    notes = e.notes()
    top = max(v + m for _, _, v, _, m in e.loads)
    _, xoff, xvaddr, xfilesz, _ = e.segment_of(PF_X)
    _, _, wvaddr, wfilesz, wmemsz = e.segment_of(PF_W)
    _, _, rvaddr, _, _ = next(s for s in e.loads if not s[0] & (PF_X | PF_W))
    _, sec_off, sec_size = e.sections['.note.stapsdt']
    for spec in specs:
        idx, kind = spec.split('=')
        n = notes[int(idx)]
        # Link-time addresses are what the note holds: undo the base adjustment.
        delta = e.adjust() - n['base']
        pc, sema = n['pc'], n['sema']
        if kind == 'pc-outside':  # beyond every PT_LOAD
            pc, why = top + 0x100000 - delta, 'pc-outside-code'
        elif kind == 'pc-rodata':  # inside a read-only, non-executable PT_LOAD
            pc, why = rvaddr + 0x10 - delta, 'pc-outside-code'
        elif kind == 'pc-data':  # inside the writable PT_LOAD's file-backed part
            pc, why = wvaddr + 8 - delta, 'pc-outside-code'
        elif kind == 'pc-past-text':  # one byte past the executable segment's file-backed end
            pc, why = xvaddr + xfilesz - delta, 'pc-outside-code'
        elif kind == 'pc-not-nop':  # in the code, next to the NOP, on a byte that is none
            at = n['pc'] + delta
            for step in (-1, 1, -2, 2, -3, 3, -4, 4):
                o = e.file_off(at + step, PF_X)
                if o is not None and e.data[o] != 0x90:
                    pc = n['pc'] + step
                    break
            else:
                sys.exit('no non-NOP byte near the probe %s' % n['name'])
            why = 'pc-not-nop'
        elif kind == 'sema-text':  # in the executable (not writable) segment
            sema, why = ((xvaddr + 0x10) & ~1) - delta, 'semaphore-outside-data'
        elif kind == 'sema-bss':  # in the writable segment, past its file-backed part
            if wmemsz - wfilesz < 8:
                sys.exit('no bss to point into')
            sema, why = ((wvaddr + wfilesz + 2) & ~1) - delta, 'semaphore-outside-data'
        elif kind == 'sema-outside':  # beyond every PT_LOAD
            sema, why = top + 0x200000 - delta, 'semaphore-outside-data'
        elif kind == 'sema-misaligned':
            if not sema:
                sys.exit('the probe %s has no semaphore' % n['name'])
            sema, why = sema + 1, 'semaphore-misaligned'
        elif kind == 'desc-overrun':  # the desc runs past the section's end
            struct.pack_into('<I', e.data, n['hdr'] + 4, sec_size * 2)
            why = 'bad-note-header'
        elif kind == 'name-overrun':  # the name runs past the section's end
            struct.pack_into('<I', e.data, n['hdr'], sec_size + 0x100)
            why = 'bad-note-header'
        else:
            sys.exit('unknown mutation %s' % kind)
        if kind not in ('desc-overrun', 'name-overrun'):
            struct.pack_into('<QQ', e.data, n['desc'], pc, n['base'])
            struct.pack_into('<Q', e.data, n['desc'] + 16, sema)
        print(idx, kind, why)
    open(dst, 'wb').write(e.data)
    shutil.copymode(src, dst)


def check_sites(path, name=None):
    """The sites of uprobe_events lines (stdin) naming the file as `name`
    (its alias, when the daemon made one; default: path) must be sane in it."""
    import re
    e = Elf(path)
    bad = 0
    for line in sys.stdin:
        m = re.search(r' (\S+):0x([0-9a-f]+)(?:\(0x([0-9a-f]+)\))?', line)
        if not m or m.group(1) != (name or path):
            continue
        off = int(m.group(2), 16)
        ok_pc = any(f & PF_X and o <= off < o + fs for f, o, _, fs, _ in e.loads) and \
            e.data[off] == 0x90
        if not ok_pc:
            print('site at file offset %#x is not a NOP in the code: %s' % (off, line.strip()))
            bad += 1
        if m.group(3):
            ref = int(m.group(3), 16)
            if ref % 2 or not any(f & PF_W and o <= ref < o + fs for f, o, _, fs, _ in e.loads):
                print('ref_ctr %#x is not in the writable data: %s' % (ref, line.strip()))
                bad += 1
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'list':
        for i, n in enumerate(Elf(sys.argv[2]).notes()):
            print(i, n['provider'], n['name'], '%#x' % n['pc'], '%#x' % n['sema'])
    elif len(sys.argv) >= 5 and sys.argv[1] == 'mutate':
        mutate(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == 'check-sites':
        check_sites(*sys.argv[2:])
    else:
        sys.exit(__doc__)
