#!/usr/bin/env python3
"""ABI check: every constant our mpi.h shares with MPICH's has MPICH's value and size.

Compiles one probe program against each header; the probe prints name, value and sizeof of every
object-like MPI_ macro and enumerator that both headers define. Any difference fails the test.
Usage: test_abi_constants.py [our-include-dir [generated-include-dir [mpich-include-dir]]]
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# mpi.h is a source file, mpi_proto.h a generated one: abs_top_srcdir / abs_top_builddir when the
# test harness exports them, else this source tree for both.
SRC = os.environ.get('abs_top_srcdir', os.path.join(HERE, '..', '..'))
BUILD = os.environ.get('abs_top_builddir', SRC)
OURS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, 'include')
GEN = sys.argv[2] if len(sys.argv) > 2 else os.path.join(BUILD, 'include')
MPICH = sys.argv[3] if len(sys.argv) > 3 else '/usr/include/x86_64-linux-gnu/mpich'
CC = os.environ.get('CC', 'cc')

# Names that differ on purpose, with the reason.
EXPECTED_DIFFERENT = {
    'MPI_SUBVERSION': 'we implement MPI 4.1, Debian\'s MPICH 4.0',
}


def names(incdirs, tmp):
    """Object-like macros and enumerators visible after #include <mpi.h>."""
    src = os.path.join(tmp, 'n.c')
    with open(src, 'w') as f:
        f.write('#include <mpi.h>\n')
    args = [CC, '-E', '-dM'] + ['-I' + d for d in incdirs] + [src]
    macros = set()
    for line in subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines():
        m = re.match(r'#define (MPI_[A-Z0-9_]+) +(\S.*)', line)
        # Values that are addresses of library symbols (MPI_DUP_FN) differ per link: skip them
        # here; test_prototypes checks that the symbol is declared.
        if m and 'MPIR_' not in m.group(2) and 'DUP_FN' not in m.group(2):
            macros.add(m.group(1))
    args = [CC, '-E', '-P'] + ['-I' + d for d in incdirs] + [src]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    enums = set()
    for body in re.findall(r'enum\s*\w*\s*\{([^}]*)\}', text):
        for item in body.split(','):
            m = re.match(r'\s*(MPI_[A-Z0-9_]+)\b', item)
            if m:
                enums.add(m.group(1))
    return macros | enums


def probe(incdirs, common, tmp, tag):
    src = os.path.join(tmp, tag + '.c')
    with open(src, 'w') as f:
        f.write('#include <stdio.h>\n#include <stdint.h>\n#include <mpi.h>\nint main(void)\n{\n')
        for n in sorted(common):
            f.write('    printf("%%s %%lld %%zu\\n", "%s", (long long)(intptr_t)(%s), sizeof(%s));\n'
                    % (n, n, n))
        for t in ('MPI_Aint', 'MPI_Count', 'MPI_Offset', 'MPI_Fint', 'MPI_Comm', 'MPI_Datatype',
                  'MPI_Request', 'MPI_File', 'MPI_Status', 'MPI_T_enum'):
            f.write('    printf("sizeof(%s) %%zu\\n", sizeof(%s));\n' % (t, t))
        f.write('    printf("status %zu %zu %zu\\n", offsetof(MPI_Status, MPI_SOURCE),'
                ' offsetof(MPI_Status, MPI_TAG), offsetof(MPI_Status, MPI_ERROR));\n')
        f.write('    return 0;\n}\n')
    exe = os.path.join(tmp, tag)
    subprocess.run([CC, '-w', '-include', 'stddef.h', '-o', exe, src] + ['-I' + d for d in incdirs],
                   check=True)
    return subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        ours_inc = [OURS, GEN]
        ours = names(ours_inc, tmp)
        theirs = names([MPICH], tmp)
        common = ours & theirs
        a = probe(ours_inc, common, tmp, 'ours')
        b = probe([MPICH], common, tmp, 'mpich')
    bad = 0
    for x, y in zip(a, b):
        if x != y and x.split()[0] not in EXPECTED_DIFFERENT:
            print('MISMATCH ours: %s   mpich: %s' % (x, y))
            bad += 1
    # MPICH's QMPI function enumerators (MPI_SEND_T...) are MPICH internals, not MPI constants.
    only = sorted(n for n in theirs - ours if not n.endswith('_T'))
    print('%d constants compared, %d mismatches; MPICH-only (not in our mpi.h): %s'
          % (len(common), bad, ' '.join(only) or 'none'))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
