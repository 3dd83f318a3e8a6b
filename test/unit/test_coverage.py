#!/usr/bin/env python3
"""Coverage audit: every MPI_ function the installed libmpi.so exports is called by some test.

Lists the defined dynamic symbols named MPI_* (the _c large-count variants included; PMPI_* are
the same functions under their profiling names) and looks for a call `MPI_Name(` in the test
sources (test/**/*.c, *.h, *.sh). Fails naming every exported function that no test calls.
Usage: test_coverage.py [libmpi.so [test dir]]
(default: $UMPI_PREFIX/lib/libmpi.so, exported by the test harness; the test tree beside this file)
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(HERE)


def library():
    if len(sys.argv) > 1:
        return sys.argv[1]
    prefix = os.environ.get('UMPI_PREFIX')
    if not prefix:
        print('skipped: no UMPI_PREFIX and no library given')
        sys.exit(77)
    return os.path.join(prefix, 'lib', 'libmpi.so')


def exported(lib):
    out = subprocess.run(['nm', '-D', '--defined-only', lib], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in 'TtWwi' and re.fullmatch(r'MPI_\w+', fields[2]):
            names.add(fields[2])
    return names


def called(root):
    calls = set()
    me = os.path.abspath(__file__)
    for d, _, files in os.walk(root):
        for f in files:
            path = os.path.join(d, f)
            if not f.endswith(('.c', '.h', '.sh')) or os.path.abspath(path) == me:
                continue
            with open(path, errors='replace') as fh:
                calls.update(re.findall(r'\b(MPI_\w+)\s*\(', fh.read()))
    return calls


def main():
    lib = library()
    names = exported(lib)
    if not names:
        print(f'no MPI_ functions exported by {lib}')
        return 1
    missing = sorted(names - called(TESTS))
    print(f'{len(names)} MPI_ functions exported by {lib}; {len(names) - len(missing)} called by a test')
    if missing:
        print(f'{len(missing)} called by no test under {TESTS}:')
        for n in missing:
            print('  ' + n)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
