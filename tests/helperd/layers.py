#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The daemon's layers hold (issue 33, item 6; kernel-helper/README.md,
"The layers"): each of usdtkit-helperd's files uses names only of files of
the layers below its own, or of its own layer listed after it.

Read from the compiled objects with nm: a file's undefined symbols that
another of the daemon's objects defines are the names it takes from that
file (calls and globals alike). An upward use, or a file of the daemon
missing from the table below (so a new file must be placed in a layer),
fails the test and names the file and the symbols.

    layers.py HELPERD_BUILD_DIR
"""
import glob
import os
import subprocess
import sys

# Top to bottom; within a layer, a file may use only those after it.
LAYERS = [
    ('protocol and connections', ['main', 'serve', 'conn']),
    ('registration logic', ['scan', 'users', 'retire', 'queue', 'list']),
    ('the model', ['procs', 'registry', 'quota']),
    ('persistence', ['state', 'journal', 'ownfiles', 'board']),
    ('the bottom', ['writer', 'worker', 'worker_answer', 'worker_child', 'sandbox', 'proc',
                    'msg', 'loop', 'log']),
]


def symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == 'U':
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in 'TDBRCV':
            defined.add(f[2])
    return defined, undefined


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    objs = glob.glob(os.path.join(sys.argv[1], 'libusdthelperd.a.p', '*.o'))
    objs += glob.glob(os.path.join(sys.argv[1], 'usdtkit-helperd.p', '*.o'))
    rank = {}
    for i, (_, files) in enumerate(LAYERS):
        for j, name in enumerate(files):
            rank[name] = (i, j)
    files = {}
    for o in objs:
        name = os.path.basename(o).split('.c.o')[0]
        files[name] = symbols(o)
    bad = 0
    missing = sorted(set(files) - set(rank))
    for name in missing:
        print(f'layers: {name}.c is in no layer of the table: place it (and in the README)')
        bad += 1
    if len(files) < 10:
        print(f'layers: only {len(files)} objects under {sys.argv[1]}: not the daemon\'s build')
        bad += 1
    owner = {}
    for name, (defined, _) in files.items():
        for s in defined:
            owner[s] = name
    uses = 0
    for name, (_, undefined) in sorted(files.items()):
        if name not in rank:
            continue
        up = {}
        for s in undefined:
            other = owner.get(s)
            if other is None or other == name:
                continue
            uses += 1
            if other not in rank or rank[other] <= rank[name]:
                up.setdefault(other, []).append(s)
        for other, syms in sorted(up.items()):
            print(f'layers: {name}.c ({LAYERS[rank[name][0]][0]}) uses {other}.c, '
                  f'not below it: {", ".join(sorted(syms))}')
            bad += 1
    if uses == 0:
        print('layers: no use of one file by another was read: nm found nothing')
        bad += 1
    if bad:
        sys.exit(1)
    print(f'ok: {len(files)} files in {len(LAYERS)} layers, {uses} uses between files, '
          'all downward')


if __name__ == '__main__':
    main()
