#!/usr/bin/env python3
"""ABI check: every prototype in our generated mpi_proto.h equals MPICH's.

A binary compiled against MPICH calls our functions with MPICH's argument types, so the types
(const-ness included) must match exactly. Parameter names, whitespace and MPICH's attribute
macros (MPICH_API_PUBLIC, MPICH_ATTR_POINTER_WITH_TYPE_TAG(...)) and ours (UMPI_API) are
ignored. Functions MPICH does not have (newer than MPICH 4.0) are listed, not failed.
Usage: test_prototypes.py [our mpi_proto.h [MPICH's mpi_proto.h]]
(default: $abs_top_builddir/include/mpi_proto.h, else the one beside this source tree)
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# mpi_proto.h is generated in the build tree: abs_top_builddir (exported by the test harness)
BUILD = os.environ.get('abs_top_builddir', os.path.join(HERE, '..', '..'))
OURS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(BUILD, 'include', 'mpi_proto.h')
MPICH = sys.argv[2] if len(sys.argv) > 2 else '/usr/include/x86_64-linux-gnu/mpich/mpi_proto.h'

PROTO = re.compile(r'\b(int|double)\s+(P?MPI_\w+)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*[^;]*;')


def norm_param(p):
    """'const int  array_of_x[]' -> 'const int []': the type with the parameter name removed."""
    p = ' '.join(p.split())
    if p in ('void', '...'):
        return p
    m = re.match(r'^(.*?)(\w+)\s*(\[\s*\])?$', p)
    if not m or not m.group(1).strip():
        return p                     # unnamed parameter: already a bare type
    t = m.group(1).strip()
    t = re.sub(r'\s*\*\s*', ' *', t).replace('* *', '**').replace('* *', '**')
    return t + (' []' if m.group(3) else '')


def load(path):
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    text = re.sub(r'MPICH_ATTR_\w+\s*\([^)]*\)', '', text)
    text = re.sub(r'\b(MPICH_API_PUBLIC|UMPI_API)\b', '', text)
    protos = {}
    for ret, name, params in PROTO.findall(text):
        protos[name] = (ret, tuple(norm_param(p) for p in params.split(',')))
    return protos


def main():
    ours, theirs = load(OURS), load(MPICH)
    if not ours:
        print('no prototypes found in %s' % OURS)
        return 1
    bad, missing = 0, []
    for name in sorted(ours):
        if name not in theirs:
            missing.append(name)
            continue
        if ours[name] != theirs[name]:
            bad += 1
            print('MISMATCH %s\n   ours:  %s(%s)\n   mpich: %s(%s)' % (
                name, ours[name][0], ', '.join(ours[name][1]),
                theirs[name][0], ', '.join(theirs[name][1])))
    print('%d prototypes compared, %d mismatches%s' % (
        len(ours) - len(missing), bad,
        '; not in MPICH 4.0: ' + ' '.join(missing) if missing else ''))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
