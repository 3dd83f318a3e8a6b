#!/usr/bin/env python3
"""ABI check for NCCL: src/cuda/umpi_nccl_api.h declares NCCL's types, values and
functions itself (no nccl.h at build time). Where an nccl.h is installed (the CUDA toolkit's, or
NCCL_HOME/include), one probe compiled against both headers asserts that every value umpi uses
equals NCCL's and that every function of umpi's table is declared by NCCL; where a libnccl.so.2
loads, its version must be one umpi accepts and every function of the table must be exported.
Exit 77 (skipped) when no nccl.h is found. Usage: test_nccl_abi.py [nccl-include-dir]
"""
import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get('abs_top_srcdir', os.path.join(HERE, '..', '..'))
CC = os.environ.get('CC', 'cc')


def find_include():
    if len(sys.argv) > 1:
        return sys.argv[1]
    cands = [os.path.join(os.environ['NCCL_HOME'], 'include')] if os.environ.get('NCCL_HOME') else []
    cands += ['/usr/include', '/usr/local/cuda/include'] + sorted(glob.glob('/usr/local/cuda-*/include'))
    for d in cands:
        if os.path.exists(os.path.join(d, 'nccl.h')):
            return d
    return None


def main():
    inc = find_include()
    if inc is None:
        print('SKIP: no nccl.h (NCCL is not installed)')
        return 77
    api = open(os.path.join(SRC, 'src', 'cuda', 'umpi_nccl_api.h')).read()
    funcs = re.findall(r'X\((nccl\w+), [01],', api)
    if len(funcs) < 10:
        print('FAIL: found only %d functions in umpi_nccl_api.h' % len(funcs))
        return 1
    pairs = [('UMPI_NCCL_SUCCESS', 'ncclSuccess'), ('UMPI_NCCL_UNHANDLED_CUDA_ERROR', 'ncclUnhandledCudaError'),
             ('UMPI_NCCL_SYSTEM_ERROR', 'ncclSystemError'), ('UMPI_NCCL_INTERNAL_ERROR', 'ncclInternalError'),
             ('UMPI_NCCL_INVALID_ARGUMENT', 'ncclInvalidArgument'), ('UMPI_NCCL_INVALID_USAGE', 'ncclInvalidUsage'),
             ('UMPI_NCCL_REMOTE_ERROR', 'ncclRemoteError'), ('UMPI_NCCL_IN_PROGRESS', 'ncclInProgress'),
             ('UMPI_NCCL_INT8', 'ncclInt8'), ('UMPI_NCCL_UINT8', 'ncclUint8'), ('UMPI_NCCL_INT32', 'ncclInt32'),
             ('UMPI_NCCL_UINT32', 'ncclUint32'), ('UMPI_NCCL_INT64', 'ncclInt64'),
             ('UMPI_NCCL_UINT64', 'ncclUint64'), ('UMPI_NCCL_FLOAT16', 'ncclFloat16'),
             ('UMPI_NCCL_FLOAT32', 'ncclFloat32'), ('UMPI_NCCL_FLOAT64', 'ncclFloat64'),
             ('UMPI_NCCL_BFLOAT16', 'ncclBfloat16'), ('UMPI_NCCL_SUM', 'ncclSum'), ('UMPI_NCCL_PROD', 'ncclProd'),
             ('UMPI_NCCL_MAX', 'ncclMax'), ('UMPI_NCCL_MIN', 'ncclMin'),
             ('UMPI_NCCL_UNIQUE_ID_BYTES', 'NCCL_UNIQUE_ID_BYTES'),
             ('UMPI_NCCL_MIN_VERSION', 'NCCL_VERSION(2, 10, 0)')]
    # umpi_nccl_api.h names nccl.h's types too: ours are renamed for the probe, which sees both
    renamed = ['ncclComm_t', 'ncclUniqueId', 'ncclResult_t', 'ncclDataType_t', 'ncclRedOp_t']
    probe = ['#include <nccl.h>'] + ['#define %s umpi_probe_%s' % (t, t) for t in renamed]
    probe += ['#include "cuda/umpi_nccl_api.h"'] + ['#undef %s' % t for t in renamed]
    probe += ['_Static_assert((%s) == (%s), "%s");' % (a, b, a) for a, b in pairs]
    probe += ['_Static_assert(sizeof(ncclUniqueId) == UMPI_NCCL_UNIQUE_ID_BYTES, "id size");',
              'void *umpi_nccl_probe[] = {%s};' % ', '.join('(void *) %s' % f for f in funcs + ['ncclGetErrorString',
                                                                                                  'ncclGetLastError'])]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'probe.c')
        with open(src, 'w') as f:
            f.write('\n'.join(probe) + '\n')
        args = [CC, '-c', '-std=gnu11', '-I' + inc, '-I' + os.path.join(SRC, 'src'), '-o',
                os.path.join(tmp, 'probe.o'), src]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            print('FAIL: umpi_nccl_api.h disagrees with %s/nccl.h:\n%s' % (inc, r.stderr[-3000:]))
            return 1
    print('umpi_nccl_api.h agrees with %s/nccl.h: %d values, %d functions' % (inc, len(pairs), len(funcs) + 2))
    try:
        lib = ctypes.CDLL('libnccl.so.2')
    except OSError as e:
        print('no libnccl.so.2 to load (%s): the library checks are skipped' % e)
        return 0
    v = ctypes.c_int(0)
    if lib.ncclGetVersion(ctypes.byref(v)) != 0 or v.value < 21000:
        print('FAIL: libnccl.so.2 reports version code %d, below 2.10 (21000)' % v.value)
        return 1
    missing = [f for f in funcs + ['ncclGetErrorString'] if not hasattr(lib, f)]
    if missing:
        print('FAIL: libnccl.so.2 lacks %s' % ', '.join(missing))
        return 1
    print('libnccl.so.2: version code %d, all %d functions exported' % (v.value, len(funcs) + 1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
