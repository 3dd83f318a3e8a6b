#!/usr/bin/env python3
"""Generate umpi's MPI bindings from the MPI standard's API list and our directives.

Inputs:  apis.json (every MPI 4.1 procedure with typed parameter kinds) and maint/bindings.def
         (the functions we implement, with per-function directives; see its header).
Outputs: include/mpi_proto.h      MPI_ and PMPI_ prototypes (plus _c large-count variants)
         src/mpi/gen/bindings.c   the PMPI_ entry points (argument checks, handle decoding, error
                                  dispatch) with MPI_ weak aliases
         src/mpi/gen/umpi_impl.h  the umpi_impl_* functions the entry points call: the contract
                                  with src/core and src/pt2pt
         man/man3/MPI_X.3         a man page per function; maint/man/MPI_X.txt, when present,
                                  supplies its summary (first line) and DESCRIPTION (the rest)

Every C type comes from a parameter's kind through the tables below; a kind missing from them
stops the generator, so a new function cannot get a guessed signature.

A collective is one line with the `coll` directive: it stands for the blocking function, its
nonblocking (MPI_IX) and its persistent (MPI_X_init) forms, which all call one implementation
with the blocking function's arguments and the form in which it was called (COLL_MODES).
"""
import argparse
import json
import os
import re
import sys

# ---- kind -> C type --------------------------------------------------------------------------------

# Kinds whose C declaration does not depend on direction: the type is already a pointer.
OPAQUE_POINTER = {
    'BUFFER': 'void *',          # const when the standard marks it constant
    'C_BUFFER': 'void *',        # address of a pointer, typed void * (MPI_Alloc_mem baseptr)
    'C_BUFFER2': 'void *',       # same (MPI_Buffer_detach buffer_addr)
    'ATTRIBUTE_VAL': 'void *',   # address where the attribute pointer is stored
    'EXTRA_STATE': 'void *',
    'STRING': 'char *',
    'ARGUMENT_LIST': 'char ***',
}

# Value kinds: (C type, C type in the large-count _c variant). Output and in-out parameters
# become pointers, array parameters (length set) become arrays.
VALUE = {
    # large-count ("POLY") kinds: int in the classic binding
    'POLYXFER_NUM_ELEM': ('int', 'MPI_Count'),
    'POLYXFER_NUM_ELEM_NNI': ('int', 'MPI_Count'),
    'POLYDTYPE_NUM_ELEM': ('int', 'MPI_Count'),
    'POLYDTYPE_NUM_ELEM_NNI': ('int', 'MPI_Count'),
    'POLYDTYPE_NUM_ELEM_PI': ('int', 'MPI_Count'),
    'POLYNUM_BYTES': ('int', 'MPI_Count'),
    'POLYNUM_BYTES_NNI': ('int', 'MPI_Count'),
    'POLYDISPLACEMENT': ('int', 'MPI_Aint'),
    'POLYDISPLACEMENT_COUNT': ('int', 'MPI_Count'),
    'POLYDISPLACEMENT_AINT_COUNT': ('MPI_Aint', 'MPI_Count'),
    'POLYDTYPE_STRIDE_BYTES': ('MPI_Aint', 'MPI_Count'),
    'POLYDTYPE_PACK_SIZE': ('MPI_Aint', 'MPI_Count'),
    'POLYLOCATION': ('MPI_Aint', 'MPI_Count'),
    'POLYNUM_PARAM_VALUES': ('int', 'MPI_Count'),
    # fixed-width counts and sizes
    'XFER_NUM_ELEM': ('MPI_Count', None),
    'XFER_NUM_ELEM_NNI': ('MPI_Count', None),
    'XFER_NUM_ELEM_SMALL': ('int', None),
    'NUM_BYTES': ('MPI_Count', None),
    'NUM_BYTES_SMALL': ('int', None),
    'ALLOC_MEM_NUM_BYTES': ('MPI_Aint', None),
    'DISPLACEMENT': ('MPI_Aint', None),
    # one-sided communication (src/rma): window sizes and displacements are byte addresses
    'WINDOW_SIZE': ('MPI_Aint', None),
    'WIN_ATTACH_SIZE': ('MPI_Aint', None),
    'RMA_DISPLACEMENT_NNI': ('MPI_Aint', None),
    'POLYRMA_DISPLACEMENT': ('int', 'MPI_Aint'),
    'ASSERT': ('int', None),
    'LOCK_TYPE': ('int', None),
    # plain integers
    'COMBINER': ('int', None),
    'COMM_SIZE_PI': ('int', None),
    'DISTRIB_ENUM': ('int', None),
    'DTYPE_DISTRIBUTION': ('int', None),
    'PROCESS_GRID_SIZE': ('int', None),
    'GENERIC_DTYPE_INT': ('int', None),
    'GENERIC_DTYPE_COUNT': ('MPI_Count', None),
    'ORDER': ('int', None),
    'TYPECLASS': ('int', None),
    'TYPECLASS_SIZE': ('int', None),
    'ARGUMENT_COUNT': ('int', None),
    'ARRAY_LENGTH': ('int', None),
    'ARRAY_LENGTH_NNI': ('int', None),
    'ARRAY_LENGTH_PI': ('int', None),
    'COMM_SIZE': ('int', None),
    'COMM_COMPARISON': ('int', None),
    'GROUP_COMPARISON': ('int', None),
    'COLOR': ('int', None),
    'KEY': ('int', None),
    'SPLIT_TYPE': ('int', None),
    'ERROR_CLASS': ('int', None),
    'ERROR_CODE': ('int', None),
    'INDEX': ('int', None),
    'INFO_VALUE_LENGTH': ('int', None),
    'KEY_INDEX': ('int', None),
    'KEYVAL': ('int', None),
    'LOGICAL': ('int', None),
    'RANK': ('int', None),
    'RANK_NNI': ('int', None),
    'STRING_LENGTH': ('int', None),
    'TAG': ('int', None),
    'THREAD_LEVEL': ('int', None),
    'VERSION': ('int', None),
    # process topologies
    'NUM_DIMS': ('int', None),
    'DIMENSION': ('int', None),
    'COORDINATE': ('int', None),
    'DEGREE': ('int', None),
    'WEIGHT': ('int', None),
    'TOPOLOGY_TYPE': ('int', None),
    # handles and statuses
    'COMMUNICATOR': ('MPI_Comm', None),
    'DATATYPE': ('MPI_Datatype', None),
    'ERRHANDLER': ('MPI_Errhandler', None),
    'FILE': ('MPI_File', None),
    'GROUP': ('MPI_Group', None),
    'INFO': ('MPI_Info', None),
    'MESSAGE': ('MPI_Message', None),
    'OPERATION': ('MPI_Op', None),
    'REQUEST': ('MPI_Request', None),
    'SESSION': ('MPI_Session', None),
    'STATUS': ('MPI_Status', None),
    'WINDOW': ('MPI_Win', None),
}

RETURN = {'ERROR_CODE': 'int', 'WALL_TIME': 'double', 'TICK_RESOLUTION': 'double'}

# Kinds checked as element counts / byte sizes (MPI_ERR_COUNT when negative).
NNI_COUNT = {'POLYXFER_NUM_ELEM_NNI', 'POLYDTYPE_NUM_ELEM_NNI', 'POLYNUM_BYTES_NNI',
             'XFER_NUM_ELEM_NNI'}
# Kinds that give the length of another array parameter (MPI_ERR_ARG when negative).
ARRAY_LENGTH = {'ARRAY_LENGTH_NNI', 'ARRAY_LENGTH_PI'}
# Kinds that count the elements of a neighbouring BUFFER argument.
ELEMENT_COUNT = {'POLYXFER_NUM_ELEM_NNI', 'POLYXFER_NUM_ELEM', 'POLYDTYPE_NUM_ELEM_NNI',
                 'POLYDTYPE_NUM_ELEM', 'XFER_NUM_ELEM_NNI'}
# Pointers never checked for NULL by kind: NULL is legal or means something (MPI_Init's argc and
# argv, function pointers such as MPI_COMM_NULL_COPY_FN), or the check is by count (buffers).
NO_NULL_CHECK = {'ARGUMENT_COUNT', 'ARGUMENT_LIST', 'BUFFER'}


class GenError(Exception):
    pass


# ---- model -----------------------------------------------------------------------------------------

class Param:
    def __init__(self, j):
        self.name = j['name']
        self.kind = j['kind']
        self.dir = j['param_direction']
        self.pointer = j['pointer']
        self.length = j['length']
        self.const = j['constant']
        self.large_only = j['large_only']
        self.func_type = j['func_type']
        self.desc = j['desc']
        self.root_only = j.get('root_only', False)

    @property
    def is_array(self):
        return self.length not in (None, '') and self.kind not in OPAQUE_POINTER

    @property
    def length_name(self):
        """The parameter giving the array's (outer) length."""
        return self.length[0] if isinstance(self.length, list) else self.length

    def c_type(self, large):
        """(type, suffix) of the C declaration: 'const int *', '' or 'MPI_Request ', '[]'."""
        const = 'const ' if self.const else ''
        if self.kind in ('FUNCTION', 'POLYFUNCTION'):
            if not self.func_type:
                raise GenError('FUNCTION parameter %s has no func_type' % self.name)
            # POLYFUNCTION: the large-count variant takes the _c function type (MPI_Op_create_c)
            return self.func_type + ('_c' if large and self.kind == 'POLYFUNCTION' else '') + ' *', ''
        if self.kind == 'ARGUMENT_LIST' and (self.dir == 'in' or self.pointer is False):
            return 'char *', '[]'                 # MPI_Info_create_env: argv itself, not &argv
        if self.kind == 'STRING' and self.pointer is False and self.length == '*':
            return const + 'char ', '[]'          # MPI_Unpack_external's datarep, as MPICH has it
        if self.kind in OPAQUE_POINTER:
            return const + OPAQUE_POINTER[self.kind], ''
        if isinstance(self.length, list) and len(self.length) == 2 and self.length[1].isdigit() \
                and self.kind in VALUE:
            return const + VALUE[self.kind][0] + ' ', '[][%s]' % self.length[1]   # int ranges[][3]
        if isinstance(self.length, list):
            raise GenError('parameter %s is a %d-D array: teach maint/gen_bindings.py its C form'
                           % (self.name, len(self.length)))
        if self.kind not in VALUE:
            raise GenError('no C type for parameter kind %s (parameter %s): add it to the tables of '
                           'maint/gen_bindings.py' % (self.kind, self.name))
        small, big = VALUE[self.kind]
        base = big if (large and big) else small
        if self.is_array:
            return const + base + ' ', '[]'
        # a status is always passed by address; other values by address when written to
        if self.pointer or self.kind == 'STATUS' or (self.dir in ('out', 'inout')
                                                      and self.pointer is not False):
            return const + base + ' *', ''
        return base + ' ', ''

    def c_decl(self, large):
        t, suffix = self.c_type(large)
        return t + self.name + suffix

    def is_poly(self):
        return self.kind.startswith('POLY')

    def is_ptr(self, large=False):
        t, suffix = self.c_type(large)
        return t.endswith('*') or suffix == '[]'


# The forms of a collective (`coll`): the function's name from the blocking one's, and the mode its
# entry point passes to the shared implementation (src/coll/umpi_coll_mode.h).
COLL_MODES = [
    (lambda short: short, 'UMPI_COLL_BLOCKING'),
    (lambda short: 'I' + short[0].lower() + short[1:], 'UMPI_COLL_NONBLOCKING'),
    (lambda short: short + '_init', 'UMPI_COLL_PERSISTENT'),
]
# What the nonblocking and persistent forms add to the blocking one's parameters: the request the
# implementation gets (after the mode), and the persistent form's info (checked, not passed: umpi
# takes no hints for collectives).
COLL_ADDED = ('request', 'info')


class Func:
    def __init__(self, j, directives, coll=None):
        self.name = j['name']                                  # MPI_Send
        self.short = self.name[4:]                             # Send
        # a form of a collective (`coll`): (its mode, the implementation's name); else None
        self.coll = coll[0] if coll else None
        self.ret = RETURN.get(j['return_kind'])
        if self.ret is None:
            raise GenError('%s: no C type for return kind %s' % (self.name, j['return_kind']))
        self.all_params = [Param(p) for p in j['parameters'] if 'c_parameter' not in p['suppress']]
        self.has_large = any(p.is_poly() for p in self.all_params)
        self.anytime = 'anytime' in directives
        self.variant = 'variant' in directives
        self.any = set(directives.get('any', '').split(',')) - {''}
        self.nullok = set(directives.get('nullok', '').split(',')) - {''}
        self.raw = set(directives.get('raw', '').split(',')) - {''}
        self.local = set(directives.get('local', '').split(',')) - {''}
        self.impl = coll[1] if coll else directives.get('impl', self.short.lower())
        # len=P:FN,...: array P ('*' in the standard) has umpi_len_FN(comm_ptr) entries
        self.len = dict(x.split(':', 1) for x in directives.get('len', '').split(',') if x)
        names = {p.name for p in self.all_params}
        if self.coll is not None and ('request' in names) != (self.coll != 'UMPI_COLL_BLOCKING'):
            raise GenError('%s: not a form of a collective the coll directive knows' % self.name)
        for p in self.any | self.nullok | self.raw | self.local | set(self.len):
            if p not in names:
                raise GenError('%s: directive names unknown parameter %s' % (self.name, p))

    def params(self, large):
        return [p for p in self.all_params if large or not p.large_only]

    def impl_params(self, large):
        """The parameters passed on to the implementation as they are (decoded, widened): for the
        forms of a collective, those of the blocking function (the mode and request follow)."""
        if self.coll is None:
            return self.params(large)
        return [p for p in self.params(large) if p.name not in COLL_ADDED]

    def variants(self):
        """(C function name, large?) of each entry point."""
        v = [(self.name, False)]
        if self.has_large:
            v.append((self.name + '_c', True))
        return v


def load_directives(path):
    funcs = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split('#', 1)[0].split()
            if not line:
                continue
            d = {}
            for word in line[1:]:
                k, _, v = word.partition('=')
                if k not in ('anytime', 'any', 'coll', 'impl', 'len', 'local', 'nullok', 'raw', 'variant') or \
                        (k in ('anytime', 'coll', 'variant')) != (v == ''):
                    raise GenError('%s:%d: bad directive %r' % (path, lineno, word))
                d[k] = v
            if 'coll' in d and ('impl' in d or 'variant' in d or 'anytime' in d):
                raise GenError('%s:%d: coll goes with neither impl, variant nor anytime' % (path, lineno))
            funcs.append((line[0], d))
    return funcs


# ---- C text ----------------------------------------------------------------------------------------

def signature(f, large, prefix):
    params = f.params(large)
    args = ', '.join(p.c_decl(large) for p in params)
    fname = prefix + f.name[4:] + ('_c' if large else '')
    return '%s %s(%s)' % (f.ret, fname, args or 'void')


def impl_signature(f):
    """Parameter declarations of the implementation: the _c signature when there is one, else the
    classic one, with input communicators and datatypes decoded (shared/DESIGN.md, src/mpi);
    with the `variant` directive, a last `int large`: 1 when called as MPI_X_c; for the forms of a
    collective, the blocking function's then the form and the request (NULL when blocking)."""
    out = []
    for p in f.impl_params(f.has_large):
        if p.kind in ('COMMUNICATOR', 'DATATYPE') and p.dir == 'in' and not p.is_array \
                and p.name not in f.raw:
            out.append('%s *%s_ptr' % ('umpi_comm_t' if p.kind == 'COMMUNICATOR'
                                       else 'umpi_dtype_t', p.name))
        else:
            out.append(p.c_decl(f.has_large))
    if f.variant:
        out.append('int large')
    if f.coll is not None:
        out += ['umpi_coll_mode_t mode', 'MPI_Request *request']
    return out


def merge_impl_signatures(name, sigs):
    """Functions sharing one implementation: their signatures must agree, except that a scalar
    int input may meet an MPI_Count input (MPI_Status_set_elements / _x): the impl takes the wider."""
    base = list(sigs[0])
    for s in sigs[1:]:
        if len(s) != len(base):
            raise GenError('functions sharing umpi_impl_%s have different parameter lists' % name)
        for i, (a, b) in enumerate(zip(base, s)):
            if a == b:
                continue
            ta, tb = a.rsplit(' ', 1), b.rsplit(' ', 1)
            if ta[1] == tb[1] and {ta[0], tb[0]} == {'int', 'MPI_Count'}:
                base[i] = 'MPI_Count ' + ta[1]
            else:
                raise GenError('functions sharing umpi_impl_%s disagree: %s vs %s' % (name, a, b))
    return base


def same_width(a, b):
    """Two declarations that differ only in MPI_Aint vs MPI_Count."""
    return a.replace('MPI_Aint', 'MPI_Count') == b.replace('MPI_Aint', 'MPI_Count')


def c_str(s):
    return '"%s"' % s


class Body:
    """The statements of one entry point."""

    def __init__(self):
        self.decls = []
        self.lines = []
        self.after = []      # statements after a successful impl call (output conversions)
        self.widen = []      # checked calls that widen int arrays for the implementation
        self.widen_plain = []  # in-out values copied into wider temporaries

    def check(self, call):
        self.lines += ['    err = %s;' % call,
                       '    if (umpi_unlikely(err != MPI_SUCCESS))',
                       '        goto fail;']


def array_length(f, p, first_length, comm):
    """C expression of an array parameter's length. An array of length '*' without a length
    parameter has one entry per process of a group (the v collectives): the communicator's group,
    on an intercommunicator the remote group unless the `local` directive names the array."""
    if p.name in f.len and comm is not None:
        return 'umpi_len_%s(%s_ptr)' % (f.len[p.name], comm.name)
    if p.length != '*':
        return p.length_name
    if first_length:
        return first_length.name
    if comm is None:
        return None
    c = comm.name + '_ptr'
    if p.name in f.local:
        return '(%s->size)' % c
    return '(%s->is_inter ? %s->remote_size : %s->size)' % (c, c, c)


def entry_point(f, large, impl_sig):
    """C text of PMPI_X(_c) and its MPI_ alias."""
    cname = f.name + ('_c' if large else '')
    pname = 'P' + cname
    params = f.params(large)
    byname = {p.name: p for p in params}
    b = Body()
    comm = next((p for p in params if p.kind == 'COMMUNICATOR' and p.dir == 'in'
                 and not p.is_array and p.name not in f.raw), None)
    first_length = next((p for p in params if p.kind in ARRAY_LENGTH), None)
    # the window of a one-sided call: its ranks and displacements are checked by src/rma, and its
    # error handler is called, unless the call also has a communicator (MPI_Win_create)
    win = next((p for p in params if p.kind == 'WINDOW' and p.dir in ('in', 'inout')), None)

    # buffer -> (count, datatype) of the same message; checked once the datatype is decoded
    buf_of_dtype, bytes_buf = {}, {}
    for i, p in enumerate(params):
        if p.kind != 'BUFFER':
            continue
        nxt = params[i + 1:i + 3]
        if len(nxt) == 2 and nxt[0].kind in ELEMENT_COUNT and nxt[1].kind == 'DATATYPE':
            buf_of_dtype[nxt[1].name] = (p, nxt[0])
        elif len(nxt) >= 1 and nxt[0].kind == 'POLYNUM_BYTES_NNI':
            bytes_buf[nxt[0].name] = p

    if f.ret != 'int':
        # MPI_Wtime, MPI_Wtick: nothing to check, no error to report
        args = ', '.join(p.name for p in params)
        return '%s\n{\n    return umpi_impl_%s(%s);\n}\n' % (
            signature(f, large, 'PMPI_'), f.impl, args)

    if comm:
        b.decls.append('umpi_comm_t *%s_ptr;' % comm.name)
        b.check('umpi_check_comm(%s, &%s_ptr, %s)' % (comm.name, comm.name, c_str(comm.name)))

    for p in params:
        n, k, d = p.name, p.kind, p.dir
        arg = c_str(n)
        if p is comm or n in f.raw:
            continue
        if k == 'COMMUNICATOR' and d == 'in' and not p.is_array:
            # a second input communicator (MPI_Comm_compare): decoded and checked like the first;
            # errors still go to the first one's handler
            b.decls.append('umpi_comm_t *%s_ptr;' % n)
            b.check('umpi_check_comm(%s, &%s_ptr, %s)' % (n, n, arg))
            continue
        if d == 'in' and not p.is_array and not p.is_ptr(large):
            if k == 'DATATYPE':
                b.decls.append('umpi_dtype_t *%s_ptr;' % n)
                # only a datatype that describes a buffer must be committed (MPI 4.1 sec. 5.1.9)
                b.check('umpi_check_dtype(%s, &%s_ptr, %d, %s)' % (n, n, n in buf_of_dtype, arg))
                # a buffer with one count per process (v collectives) is checked by the
                # implementation, which knows which entry is this process's
                if n in buf_of_dtype and buf_of_dtype[n][0].name not in f.nullok \
                        and not buf_of_dtype[n][1].is_array:
                    buf, cnt = buf_of_dtype[n]
                    b.check('umpi_check_buffer(%s, %s, %s_ptr, %s)' % (buf.name, cnt.name, n,
                                                                       c_str(buf.name)))
            elif k in ('RANK', 'RANK_NNI'):
                if comm is None and win is not None:
                    continue    # a rank of the window's group, checked by src/rma
                if comm is None and 'COMM_SIZE_PI' not in {q.kind for q in params}:
                    raise GenError('%s: rank %s without a communicator' % (cname, n))
                if comm is None:
                    continue    # MPI_Type_create_darray: a rank of its size argument, checked there
                if n == 'root':
                    b.check('umpi_check_root(%s, %s_ptr, %s)' % (n, comm.name, arg))
                else:
                    b.check('umpi_check_rank(%s, %s_ptr, %d, %s)' % (n, comm.name, n in f.any, arg))
            elif k == 'TAG':
                b.check('umpi_check_tag(%s, %d, %s)' % (n, n in f.any, arg))
            elif k in NNI_COUNT:
                b.check('umpi_check_count(%s, %s)' % (n, arg))
                if n in bytes_buf:
                    buf = bytes_buf[n]
                    b.check('umpi_check_bytes_buffer(%s, %s, %s)' % (buf.name, n, c_str(buf.name)))
            elif k in ARRAY_LENGTH:
                b.check('umpi_check_length(%s, %s)' % (n, arg))
            elif k == 'ERRHANDLER':
                b.check('umpi_check_errhandler(%s, %s)' % (n, arg))
            elif k == 'OPERATION':
                b.check('umpi_check_op(%s, %s)' % (n, arg))
            elif k == 'THREAD_LEVEL':
                b.check('umpi_check_thread_level(%s, %s)' % (n, arg))
            elif k == 'INFO':
                # An info of hints (MPI_Alloc_mem, ...) may be MPI_INFO_NULL; the object an
                # MPI_Info_* function works on may not.
                b.check('umpi_check_info(%s, %d, %s)' % (n, not f.short.startswith('Info_'), arg))
            # KEYVAL, ERROR_CODE, ERROR_CLASS, LOGICAL, FUNCTION, ...: the implementation
            # validates them against its own tables.
            continue
        if p.is_array and n in f.nullok:
            continue      # the implementation checks it: a sentinel, or a length it computes
        if p.is_array:
            length = array_length(f, p, first_length, comm)
            if length is None or (length not in byname and not length.startswith(('(', 'umpi_len_'))):
                raise GenError('%s: array %s has no length parameter' % (cname, n))
            if n not in f.nullok:
                b.check('umpi_check_array(%s, %s, %s)' % (n, length, arg))
            continue
        if k in NO_NULL_CHECK or k == 'FUNCTION' or n in f.nullok:
            continue
        if k == 'STATUS' and d == 'out':
            b.check('umpi_check_ptr(%s, %s)' % (n, arg))     # MPI_STATUS_IGNORE is fine
        elif k == 'STATUS':
            b.check('umpi_check_status(%s, %s)' % (n, arg))  # read: must be a real status
        elif p.is_ptr(large):
            b.check('umpi_check_ptr(%s, %s)' % (n, arg))

    # Arguments of the implementation: decoded handles, widened counts, temporaries for outputs.
    # The implementation has the _c signature: parameters only the _c variant has get 0 / NULL in
    # the classic one; int arrays of the classic one are widened into temporaries (freed after).
    args, frees = [], []
    classic = {p.name: p for p in params}
    for p, idecl in zip(f.impl_params(f.has_large), impl_sig):
        if p.name not in classic:
            args.append('NULL' if idecl.endswith(']') or '*' in idecl else '0')
            continue
        p = classic[p.name]
        if p.kind in ('COMMUNICATOR', 'DATATYPE') and p.dir == 'in' and not p.is_array \
                and p.name not in f.raw:
            args.append('%s_ptr' % p.name)
            continue
        mine = p.c_decl(large)
        if mine == idecl:
            args.append(p.name)
        elif p.kind == 'POLYFUNCTION':
            # the classic function type, cast to the _c one; the `variant` flag says which it is
            if not f.variant:
                raise GenError('%s: POLYFUNCTION %s needs the variant directive' % (cname, p.name))
            args.append('(%s) %s' % (idecl[:-len(p.name)].strip(), p.name))
        elif same_width(mine, idecl):
            # MPI_Aint and MPI_Count are one C type in the MPICH ABI (umpi_check.h asserts it)
            t, suffix = p.c_type(True)
            if suffix == '[]':
                args.append('(%s*) %s' % (t, p.name))
            elif t.endswith('*'):
                args.append('(%s) %s' % (t, p.name))
            else:
                args.append(p.name)
        elif p.is_array:
            if p.dir != 'in' or 'int' not in mine.split():
                raise GenError('%s: array %s differs from the implementation (%s): give the classic '
                               'binding its own impl= function' % (cname, p.name, idecl))
            tmp = '%s_l' % p.name
            wide = 'MPI_Count' if 'MPI_Count' in idecl else 'MPI_Aint'
            b.decls.append('%s *%s = NULL;' % (wide, tmp))
            length = array_length(f, p, first_length, comm)
            src = p.name
            if p.root_only and 'root' in byname and comm is not None:
                # significant at the root only: elsewhere it may be anything, so it is not read
                src = 'umpi_check_at_root(root, %s_ptr) ? %s : NULL' % (comm.name, p.name)
            b.widen.append('umpi_widen_array(%s, %s, &%s, %s)' % (src, length, tmp, c_str(p.name)))
            frees.append(tmp)
            args.append(tmp)
        elif p.is_ptr(large):
            # an int output of the classic binding, MPI_Count/MPI_Aint in the implementation
            tmp = '%s_l' % p.name
            b.decls.append('%s%s;' % (idecl.rsplit(' ', 1)[0].rstrip('*').rstrip() + ' ', tmp))
            if p.dir == 'inout':
                b.widen_plain.append('    %s = *%s;' % (tmp, p.name))
            args.append('&' + tmp)
            b.after.append('    *%s = umpi_count_to_int(%s);' % (p.name, tmp))
        else:
            args.append('(%s) %s' % (idecl.rsplit(' ', 1)[0], p.name))  # widen an input count
    if f.variant:
        args.append('1' if large else '0')
    if f.coll is not None:
        args += [f.coll, 'NULL' if f.coll == 'UMPI_COLL_BLOCKING' else 'request']
    for w in b.widen:
        b.check(w)
    b.lines += b.widen_plain

    out = [signature(f, large, 'PMPI_'), '{', '    int err;']
    out += ['    ' + x for x in b.decls]
    out.append('')
    if not f.anytime:
        out += ['    if (umpi_unlikely(!umpi_is_initialized()))',
                '        umpi_err_uninitialized(%s);' % c_str(cname)]
    out += b.lines
    out += ['    err = umpi_impl_%s(%s);' % (f.impl, ', '.join(args))]
    out += ['    if (umpi_unlikely(err != MPI_SUCCESS))',
            '        goto fail;']
    out += b.after
    out += ['    free(%s);' % t for t in frees]
    out += ['    return MPI_SUCCESS;',
            'fail:']
    out += ['    free(%s);' % t for t in frees]
    if comm is None and win is not None:
        handle = win.name if win.dir == 'in' else '(%s ? *%s : MPI_WIN_NULL)' % (win.name, win.name)
        out += ['    return umpi_rma_err_dispatch(%s, %s, err);' % (c_str(cname), handle), '}']
    else:
        out += ['    return umpi_err_dispatch(%s, %s, err);' % (c_str(cname),
                                                              comm.name if comm else 'MPI_COMM_NULL'),
                '}']
    return '\n'.join(out) + '\n'


# ---- outputs ---------------------------------------------------------------------------------------

GENERATED = 'Generated by maint/gen_bindings.py from apis.json and maint/bindings.def: do not edit.'


def write(path, text):
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


def gen_proto(funcs, version):
    out = ['/* MPI and PMPI prototypes of the functions umpi implements. %s */' % GENERATED,
           '#ifndef MPI_PROTO_H', '#define MPI_PROTO_H', '',
           '/* The version of umpi these prototypes belong to (configure.ac\'s AC_INIT). */',
           '#define UMPI_VERSION_STRING "%s"' % version, '']
    for prefix in ('MPI_', 'PMPI_'):
        for f in funcs:
            for _, large in f.variants():
                out.append(signature(f, large, prefix) + ' UMPI_API;')
        out.append('')
    out.append('#endif')
    return '\n'.join(out) + '\n'


def gen_impl_header(impls):
    out = ['/*',
           ' * The implementation functions behind the MPI entry points.',
           ' * %s' % GENERATED,
           ' *',
           ' * One function per MPI function (functions with a large-count variant: the _c signature;',
           ' * MPI_X and MPI_X_c both call it). Communicator and datatype arguments arrive decoded and',
           ' * validated as umpi_comm_t * / umpi_dtype_t *; every other argument as the user gave it.',
           ' * Each returns MPI_SUCCESS or a code from umpi_err_create*().',
           ' */',
           '#ifndef UMPI_IMPL_H', '#define UMPI_IMPL_H', '',
           '#include "coll/umpi_coll_mode.h"', '#include "core/umpi.h"', '#include "core/umpi_obj.h"', '']
    for name, (ret, sig, users) in impls.items():
        out.append('/* %s */' % ', '.join(users))
        out.append('%s umpi_impl_%s(%s);' % (ret, name, ', '.join(sig) or 'void'))
    out += ['', '#endif']
    return '\n'.join(out) + '\n'


def gen_bindings(funcs, impls):
    out = ['/* MPI entry points: argument checks, handle decoding, error dispatch. %s */' % GENERATED,
           '#include "core/umpi.h"', '#include "core/umpi_err.h"', '#include "core/umpi_obj.h"',
           '#include "core/umpi_check.h"', '#include "mpi/gen/umpi_impl.h"', '#include "rma/umpi_rma_err.h"', '',
           '#include <stdlib.h>', '']
    for f in funcs:
        sig = impls[f.impl][1]
        for cname, large in f.variants():
            out.append('#pragma weak %s = P%s' % (cname, cname))
            out.append('UMPI_EXPORT ' + entry_point(f, large, sig))
    return '\n'.join(out)


def man_escape(s):
    s = re.sub(r'\\\w+\{([^{}]*)\}', r'\1', s)   # the standard's LaTeX: \const{MPI_ANY_TAG}
    s = s.replace('\\', '\\\\').replace('-', '\\-').replace("'", "\\(aq")
    return '\\&' + s if s.startswith('.') else s   # a leading dot would be a roff request


def gen_man(f, text_dir, version):
    summary, description = 'MPI 4.1 procedure', None
    if text_dir:
        path = os.path.join(text_dir, f.name + '.txt')
        if os.path.exists(path):
            with open(path) as t:
                content = t.read().strip('\n')
            first, _, rest = content.partition('\n')
            summary, description = first.strip(), rest.strip('\n') or None
    out = ['.\\" %s' % GENERATED,
           '.TH %s 3 "" "umpi %s" "MPI"' % (f.name, version),
           '.nh',  # no hyphenation: identifiers must stay whole
           '.SH NAME', '%s \\- %s' % (f.name, man_escape(summary)),
           '.SH SYNOPSIS', '.nf', '.B #include <mpi.h>', '']
    for _, large in f.variants():
        out.append(man_escape(signature(f, large, 'MPI_')) + ';')
    out.append('.fi')
    groups = [('INPUT PARAMETERS', 'in'), ('INPUT/OUTPUT PARAMETERS', 'inout'),
              ('OUTPUT PARAMETERS', 'out')]
    for title, d in groups:
        ps = [p for p in f.all_params if p.dir == d]
        if not ps:
            continue
        out.append('.SH %s' % title)
        for p in ps:
            out += ['.TP', '.I %s' % p.name,
                    man_escape(p.desc or p.kind.lower().replace('_', ' ')) +
                    (' (large-count variant only)' if p.large_only else '')]
    if description:
        out += ['.SH DESCRIPTION'] + [man_escape(line) if line.strip() else '.PP'
                                      for line in description.split('\n')]
    if f.ret == 'int':
        on_win = any(p.kind == 'WINDOW' and p.dir in ('in', 'inout') for p in f.all_params) and \
            not any(p.kind == 'COMMUNICATOR' and p.dir == 'in' for p in f.all_params)
        out += ['.SH ERRORS',
                'Returns MPI_SUCCESS, or an error code whose class is one of the following and',
                'whose MPI_Error_string names the argument and its value. The error handler of the',
                ('window (MPI_COMM_SELF\'s when win is not a window)' if on_win else
                 'communicator (MPI_COMM_SELF when the call has none)') + ' is called first.']
        for cls, why in error_classes(f):
            out += ['.TP', '.B %s' % cls, man_escape(why)]
    else:
        out += ['.SH RETURN VALUE', 'The value asked for; this function cannot fail.']
    out += ['.SH SEE ALSO', 'The MPI 4.1 standard.']
    return '\n'.join(out) + '\n'


def error_classes(f):
    """The classes the generated checks can raise, for the ERRORS section."""
    seen = []

    def add(cls, why):
        if cls not in [c for c, _ in seen]:
            seen.append((cls, why))
    for p in f.all_params:
        k, d = p.kind, p.dir
        if k == 'COMMUNICATOR' and d == 'in':
            add('MPI_ERR_COMM', 'Invalid communicator, or MPI_COMM_NULL.')
        elif k == 'DATATYPE' and d == 'in':
            add('MPI_ERR_TYPE', 'Invalid datatype, MPI_DATATYPE_NULL, or a datatype not committed.')
        elif k in ('RANK', 'RANK_NNI') and d == 'in' and p.name not in f.raw:
            if p.name == 'root':
                add('MPI_ERR_ROOT', 'Root not a rank of the communicator.')
            else:
                on_win = any(q.kind == 'WINDOW' for q in f.all_params) and \
                    not any(q.kind == 'COMMUNICATOR' for q in f.all_params)
                add('MPI_ERR_RANK', 'Rank not in the ' + ("window's group" if on_win else 'communicator') +
                    ', nor MPI_PROC_NULL' + (' nor MPI_ANY_SOURCE.' if p.name in f.any else '.'))
        elif k == 'TAG' and d == 'in':
            add('MPI_ERR_TAG', 'Tag negative or above MPI_TAG_UB' +
                (', and not MPI_ANY_TAG.' if p.name in f.any else '.'))
        elif k in NNI_COUNT and d == 'in':
            add('MPI_ERR_COUNT', 'Negative count or size.')
        elif k == 'BUFFER' and any(q.kind in ELEMENT_COUNT | {'POLYNUM_BYTES_NNI'}
                                   for q in f.all_params):
            add('MPI_ERR_BUFFER', 'NULL buffer with a nonzero amount of data.')
        elif k == 'OPERATION' and d == 'in':
            add('MPI_ERR_OP', 'Invalid operation.')
        elif k == 'WINDOW' and d in ('in', 'inout'):
            add('MPI_ERR_WIN', 'Invalid window, or MPI_WIN_NULL.')
        elif k == 'RMA_DISPLACEMENT_NNI' and d == 'in':
            add('MPI_ERR_DISP', 'Negative target displacement.')
        elif k == 'LOCK_TYPE' and d == 'in':
            add('MPI_ERR_LOCKTYPE', 'Neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE.')
        elif k == 'ASSERT' and d == 'in':
            add('MPI_ERR_ASSERT', 'Assertion bits this call does not take.')
        elif k == 'INFO' and d == 'in':
            add('MPI_ERR_INFO', 'Invalid info object' +
                (', or MPI_INFO_NULL.' if f.short.startswith('Info_') else '.'))
    why = []
    for p in f.all_params:
        if p.kind in ARRAY_LENGTH and p.dir == 'in':
            why.append('negative %s' % p.name)
        elif p.kind in ('ERRHANDLER', 'THREAD_LEVEL') and p.dir == 'in':
            why.append('invalid %s' % p.name)
        elif p.kind == 'STATUS' and p.dir != 'out':
            why.append('%s NULL or MPI_STATUS_IGNORE' % p.name)
        elif p.is_array and p.kind != 'BUFFER':
            why.append('%s NULL while not empty' % p.name)
        elif (p.dir != 'in' or p.kind in ('STRING', 'POLYFUNCTION') or p.pointer) and \
                p.kind not in NO_NULL_CHECK | {'FUNCTION'} and p.name not in f.nullok:
            why.append('%s NULL' % p.name)
    if why:
        add('MPI_ERR_ARG', 'Invalid argument: %s.' % ', '.join(why))
    add('MPI_ERR_OTHER', 'Or any class the operation itself reports (see MPI_Error_string).')
    return seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--apis', required=True, help='apis.json of the MPI standard')
    ap.add_argument('--def', dest='defs', required=True, help='maint/bindings.def')
    ap.add_argument('--proto', help='output: mpi_proto.h')
    ap.add_argument('--bindings', help='output: bindings.c')
    ap.add_argument('--impl', help='output: umpi_impl.h')
    ap.add_argument('--man', help='output directory of the man3 pages')
    ap.add_argument('--man-text', help='directory of our texts MPI_X.txt merged into the pages')
    ap.add_argument('--version', required=True)
    a = ap.parse_args()

    with open(a.apis) as f:
        apis = json.load(f)
    funcs = []
    for short, directives in load_directives(a.defs):
        forms = [(short, None)]
        if 'coll' in directives:
            forms = [(name(short), (mode, short.lower())) for name, mode in COLL_MODES]
        for name, coll in forms:
            key = 'mpi_' + name.lower()
            if key not in apis:
                raise GenError('%s: MPI_%s is not in %s' % (a.defs, name, a.apis))
            funcs.append(Func(apis[key], directives, coll))
    if len({f.name for f in funcs}) != len(funcs):
        raise GenError('%s lists a function twice' % a.defs)

    # implementation prototypes; functions sharing one must agree
    impls = {}
    for f in funcs:
        sig = impl_signature(f)
        if f.impl in impls:
            ret, other, users = impls[f.impl]
            if ret != f.ret:
                raise GenError('functions sharing umpi_impl_%s return different types' % f.impl)
            impls[f.impl] = (ret, merge_impl_signatures(f.impl, [other, sig]), users + [f.name])
        else:
            impls[f.impl] = (f.ret, sig, [f.name])

    if a.proto:
        write(a.proto, gen_proto(funcs, a.version))
    if a.impl:
        write(a.impl, gen_impl_header(impls))
    if a.bindings:
        write(a.bindings, gen_bindings(funcs, impls))
    if a.man:
        for f in funcs:
            write(os.path.join(a.man, f.name + '.3'), gen_man(f, a.man_text, a.version))
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except GenError as e:
        sys.stderr.write('gen_bindings.py: error: %s\n' % e)
        sys.exit(1)
