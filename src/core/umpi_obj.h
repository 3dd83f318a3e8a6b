/*
 * Handles and the objects behind them.
 *
 * Handles are MPICH's `int` encoding (shared/DESIGN.md, "ABI"), so that MPICH-built binaries run:
 *
 *    31 30 29    26 25                                  0
 *   +-----+--------+-------------------------------------+
 *   |kind | object |               index                 |
 *   +-----+--------+-------------------------------------+
 *   kind:   0 null/invalid, 1 builtin (predefined), 2 direct (made at run time by umpi), 3 unused
 *   object: UMPI_OBJ_* below (MPICH's numbering)
 *   builtin datatypes: index bits 15..8 hold the size in bytes, 7..0 a unique number
 *
 * Run-time objects live in a two-level table (chunks of pointers that never move), so a lookup is
 * two loads and a compare, and it is safe against concurrent growth under MPI_THREAD_MULTIPLE.
 * This file is the one place that decodes handles (the future MPI-5 ABI translates here).
 */
#ifndef UMPI_OBJ_H
#define UMPI_OBJ_H

#include "core/umpi.h"

enum {
    UMPI_KIND_INVALID = 0,
    UMPI_KIND_BUILTIN = 1,
    UMPI_KIND_DIRECT = 2,
};

enum {
    UMPI_OBJ_COMM = 0x1,
    UMPI_OBJ_GROUP = 0x2,
    UMPI_OBJ_DATATYPE = 0x3,
    UMPI_OBJ_FILE = 0x4,
    UMPI_OBJ_ERRHANDLER = 0x5,
    UMPI_OBJ_OP = 0x6,
    UMPI_OBJ_INFO = 0x7,
    UMPI_OBJ_WIN = 0x8,
    UMPI_OBJ_KEYVAL = 0x9,
    UMPI_OBJ_ATTR = 0xa,
    UMPI_OBJ_REQUEST = 0xb,
    UMPI_OBJ_MESSAGE = 0xc,
    UMPI_OBJ_SESSION = 0xe,
};

#define UMPI_HANDLE_KIND(h)   (((uint32_t)(h) >> 30) & 0x3)
#define UMPI_HANDLE_OBJ(h)    (((uint32_t)(h) >> 26) & 0xf)
#define UMPI_HANDLE_INDEX(h)  ((uint32_t)(h) & 0x03ffffffu)
#define UMPI_HANDLE_MAKE(kind, obj, idx) \
    ((int)(((uint32_t)(kind) << 30) | ((uint32_t)(obj) << 26) | ((uint32_t)(idx) & 0x03ffffffu)))

/* ---- generic handle table -------------------------------------------------------------------- */

#define UMPI_HT_CHUNK_BITS 10
#define UMPI_HT_CHUNK      (1u << UMPI_HT_CHUNK_BITS)
#define UMPI_HT_MAX_CHUNKS 4096

struct umpi_handle_table {
    void **chunks[UMPI_HT_MAX_CHUNKS];
    uint32_t limit;           /* indices below this have a chunk */
    uint32_t first_dynamic;   /* indices below are reserved for builtin objects */
    uint32_t next;            /* never-used index */
    uint32_t *free_list;      /* freed indices, reused LIFO */
    uint32_t nfree, free_cap;
    pthread_mutex_t lock;
};

/* Stores obj and returns its index, or -1 when out of memory. */
int umpi_ht_insert(struct umpi_handle_table *t, void *obj);
/* Stores obj at a reserved builtin index. */
void umpi_ht_set(struct umpi_handle_table *t, uint32_t idx, void *obj);
void umpi_ht_remove(struct umpi_handle_table *t, uint32_t idx);

static inline void *umpi_ht_get(const struct umpi_handle_table *t, uint32_t idx)
{
    /* Lock-free against a concurrent insert: acquire pairs with the release stores in handle.c
     * (on x86 these are plain loads). */
    if (umpi_unlikely(idx >= __atomic_load_n(&t->limit, __ATOMIC_ACQUIRE)))
        return NULL;
    void **chunk = __atomic_load_n(&t->chunks[idx >> UMPI_HT_CHUNK_BITS], __ATOMIC_ACQUIRE);
    return __atomic_load_n(&chunk[idx & (UMPI_HT_CHUNK - 1)], __ATOMIC_ACQUIRE);
}

/* ---- error handlers -------------------------------------------------------------------------- */

typedef enum {
    UMPI_EH_FATAL,  /* MPI_ERRORS_ARE_FATAL */
    UMPI_EH_ABORT,  /* MPI_ERRORS_ABORT: abort the processes of the communicator (we end the job) */
    UMPI_EH_RETURN, /* MPI_ERRORS_RETURN */
    UMPI_EH_USER,   /* MPI_Comm_create_errhandler */
} umpi_eh_kind_t;

typedef struct umpi_errhandler {
    MPI_Errhandler handle;
    umpi_eh_kind_t kind;
    MPI_Comm_errhandler_function *comm_fn;
    int refcount; /* objects using it + user references; builtin ones are never freed */
} umpi_errhandler_t;

extern struct umpi_handle_table umpi_errhandler_table;
static inline umpi_errhandler_t *umpi_errhandler_get(MPI_Errhandler h)
{
    uint32_t k = UMPI_HANDLE_KIND(h);
    if (umpi_unlikely(UMPI_HANDLE_OBJ(h) != UMPI_OBJ_ERRHANDLER ||
                      (k != UMPI_KIND_BUILTIN && k != UMPI_KIND_DIRECT)))
        return NULL;
    return (umpi_errhandler_t *) umpi_ht_get(&umpi_errhandler_table, UMPI_HANDLE_INDEX(h));
}
void umpi_errhandler_retain(umpi_errhandler_t *eh);
void umpi_errhandler_release(umpi_errhandler_t *eh);

/* ---- groups (group.c) ------------------------------------------------------------------------ */

/*
 * A group: an ordered set of processes, stored as their MPI_COMM_WORLD ranks (one int each).
 * Immutable once made; shared by reference count between the user's handles and the
 * communicators built on it. MPI_GROUP_EMPTY is a builtin one of size 0.
 */
typedef struct umpi_group {
    MPI_Group handle;
    int refcount;     /* user references + communicators using it; the builtin one is never freed */
    int size;
    int rank;         /* my rank in the group, or MPI_UNDEFINED */
    int world[];      /* group rank -> MPI_COMM_WORLD rank */
} umpi_group_t;

extern struct umpi_handle_table umpi_group_table;
static inline umpi_group_t *umpi_group_get(MPI_Group h)
{
    uint32_t k = UMPI_HANDLE_KIND(h);
    if (umpi_unlikely(UMPI_HANDLE_OBJ(h) != UMPI_OBJ_GROUP ||
                      (k != UMPI_KIND_BUILTIN && k != UMPI_KIND_DIRECT)))
        return NULL;
    return (umpi_group_t *) umpi_ht_get(&umpi_group_table, UMPI_HANDLE_INDEX(h));
}
extern umpi_group_t umpi_group_empty;

/* A new group of n processes given by world ranks (copied), with a fresh handle and refcount 1;
 * NULL when out of memory. */
umpi_group_t *umpi_group_new(int n, const int *world);
void umpi_group_retain(umpi_group_t *g);
void umpi_group_release(umpi_group_t *g);
/* Rank in g of a world rank, or MPI_UNDEFINED. */
int umpi_group_rank_of(const umpi_group_t *g, int world_rank);
/* Validates a group argument: MPI_ERR_GROUP naming arg unless h is a group (MPI_GROUP_NULL is not). */
int umpi_group_check(MPI_Group h, umpi_group_t **g, const char *arg);

/* ---- communicators --------------------------------------------------------------------------- */

/*
 * A communicator. Point-to-point needs only my rank, the peers' world ranks and the context id:
 * for an intercommunicator the peers are the remote group, so world_rank maps remote ranks and
 * remote_size bounds them, and the source of a message (the sender's rank in its own, local,
 * group) is a remote rank at the receiver, as MPI wants.
 */
typedef struct umpi_comm {
    MPI_Comm handle;
    int rank;                 /* my rank in the (local) group */
    int size;                 /* size of the (local) group */
    int remote_size;          /* ranks a peer argument may name: size, or the remote group's size */
    uint32_t context_id;      /* point-to-point context; context_id + 1 is the collective context */
    const int *world_rank;    /* peer rank -> MPI_COMM_WORLD rank; NULL means identity (world) */
    MPI_Errhandler errhandler;
    int refcount;             /* the user's handle + pending requests (umpi_request_alloc) */
    int is_inter;
    umpi_group_t *group;        /* local group */
    umpi_group_t *remote_group; /* intercommunicators only */
    char name[MPI_MAX_OBJECT_NAME];
    struct umpi_attr *attrs;  /* cached attributes (attr_list.c), in the order they were set */
    struct umpi_topo *topo;   /* process topology (umpi_topo.h); NULL: none */
    unsigned hints;           /* info hints in force, bits of UMPI_COMM_HINT_* (comm_info.c) */
    unsigned idup_seq;        /* MPI_Comm_idup calls on this communicator so far (its internal tags) */
    uint32_t coll_seq;        /* collectives called so far: the tag of the next one (coll/umpi_sched.h) */
    struct umpi_coll_comm *coll; /* collective state made on first use (coll/umpi_coll.h); NULL until then */
} umpi_comm_t;

extern struct umpi_handle_table umpi_comm_table;
static inline umpi_comm_t *umpi_comm_get(MPI_Comm h)
{
    uint32_t k = UMPI_HANDLE_KIND(h);
    if (umpi_unlikely(UMPI_HANDLE_OBJ(h) != UMPI_OBJ_COMM ||
                      (k != UMPI_KIND_BUILTIN && k != UMPI_KIND_DIRECT)))
        return NULL;
    return (umpi_comm_t *) umpi_ht_get(&umpi_comm_table, UMPI_HANDLE_INDEX(h));
}
extern umpi_comm_t umpi_comm_world, umpi_comm_self;
/* Once the job is known (MPI_Init): world is every rank, self maps its rank 0 to our world rank. */
void umpi_comm_builtin_setup(int rank, int size);

static inline int umpi_comm_to_world(const umpi_comm_t *c, int rank)
{
    return c->world_rank ? c->world_rank[rank] : rank;
}

/* A new communicator over group (and remote group: an intercommunicator) on the context pair
 * agreed, inheriting parent's error handler; takes its own references to the groups and marks
 * the context used. Called with the big lock held (the constructors: src/api/comm*.c). */
int umpi_comm_new(const umpi_comm_t *parent, umpi_group_t *group, umpi_group_t *remote, uint32_t context,
                  MPI_Comm *newcomm);

/* What the layers above hang on a communicator (collective state, topology), freed with it: set
 * once at MPI_Init (src/api/init.c). Core calls nothing above it; this pointer is the one way it
 * reaches them when a communicator goes. */
extern void (*umpi_comm_free_above)(umpi_comm_t *c);

/* Drops a reference (a freed handle, a completed request); the last one destroys the object and
 * returns its context id. Called with the big lock held. */
void umpi_comm_release_slow(umpi_comm_t *c);
static inline void umpi_comm_release(umpi_comm_t *c)
{
    if (umpi_unlikely(--c->refcount == 0))
        umpi_comm_release_slow(c);
}

/* ---- datatypes ------------------------------------------------------------------------------- */

/*
 * A datatype. Predefined ones are static (datatype.c); derived ones (datatype_type.c) come from a
 * handle table and carry what MPI_Type_get_envelope/contents report, a reference count, and after
 * MPI_Type_commit the compiled form that the pack engine (datatype_engine.c) runs.
 *
 * Compiled form: the bytes of one element, in type-map order, as a list of strided runs
 * ("ops"): op k is `count` blocks of `len` bytes at disp, disp + stride, ... Adjacent runs are
 * merged and repeated runs become one op, so a vector is one op whatever its count, and packing
 * it is one tight loop (see umpi_dtype_pack_range). A repetition of several ops (a vector of
 * structs) stays a loop around them (loop_count, loop_stride) instead of copies of the list.
 */
typedef struct umpi_dt_op {
    MPI_Aint disp;           /* from the start of the element (the buffer address) */
    MPI_Aint len;            /* bytes of one block, > 0 */
    MPI_Count count;         /* blocks, > 0 */
    MPI_Aint stride;         /* bytes between the starts of two blocks (count > 1) */
} umpi_dt_op_t;

/* Constituents in type-map order, for counting basic elements (MPI_Get_elements). */
typedef struct umpi_dt_kid {
    struct umpi_dtype *type;
    MPI_Count reps;
} umpi_dt_kid_t;

typedef struct umpi_dtype {
    MPI_Datatype handle;
    const char *name;
    MPI_Count size;          /* bytes of data in one element */
    MPI_Aint lb, extent;
    MPI_Aint true_lb, true_extent;
    int contig;              /* the data of count elements is count*size bytes from buf + true_lb */
    MPI_Count n_basic;       /* basic elements in one element (MPI_Get_elements) */
    int nblocks;             /* for non-contiguous predefined (pair) types: the blocks of one element */
    struct { MPI_Aint disp; MPI_Aint len; } blocks[2];
    int builtin;             /* predefined (basic or pair): static, never freed */
    int committed;
    int align;               /* alignment of the most aligned basic type (struct padding) */

    /* derived types only */
    int refcount;            /* the handle (until MPI_Type_free) + types built on it + pending operations */
    int combiner;            /* MPI_COMBINER_* */
    MPI_Count n_ints, n_addrs, n_counts, n_types;    /* the envelope */
    int *ints;               /* the contents, as the constructor got them */
    MPI_Aint *addrs;
    MPI_Count *counts;
    struct umpi_dtype **types;
    int large;               /* made by an MPI_X_c constructor (or with counts beyond int): contents
                              * in the large-count layout, for MPI_Type_get_envelope_c/contents_c */
    struct umpi_dtype *shadow; /* MPI_Type_create_darray: the same data as a tree of hindexed types */
    int nkids;
    umpi_dt_kid_t *kids;
    umpi_dt_op_t *ops;       /* compiled form (NULL until committed) */
    MPI_Count nops;
    MPI_Count loop_count;    /* one element is loop_count repetitions of the ops, loop_stride */
    MPI_Aint loop_stride;    /* bytes apart (an outer loop instead of copies of the op list) */
    MPI_Count *op_off;       /* packed bytes before op k, nops + 1 entries */
    char user_name[MPI_MAX_OBJECT_NAME];
    struct umpi_attr *attrs; /* cached attributes (attr_list.c), builtin types included */
    void *cuda_desc;         /* the ops uploaded for the GPU pack kernel: src/cuda/kern_pack.c owns its type */
} umpi_dtype_t;

/* Set by src/cuda once it has uploaded a type for its pack kernel: called when a type with a
 * cuda_desc is destroyed, to free the GPU's copy. */
extern void (*umpi_dtype_cuda_forget)(umpi_dtype_t *dt);

/* Builtin datatypes by the low byte of their handle (datatype.c). */
extern umpi_dtype_t umpi_dtype_builtin[256];
umpi_dtype_t *umpi_dtype_get_slow(MPI_Datatype h);

/* NULL when h is not a valid datatype handle (MPI_DATATYPE_NULL included). Builtin types are one
 * load and a compare (an empty slot, or a handle with a wrong size field, does not match). */
static inline umpi_dtype_t *umpi_dtype_get(MPI_Datatype h)
{
    if (umpi_likely(((uint32_t) h >> 26) == ((UMPI_KIND_BUILTIN << 4) | UMPI_OBJ_DATATYPE))) {
        umpi_dtype_t *dt = &umpi_dtype_builtin[(uint32_t) h & 0xff];
        return umpi_likely(dt->handle == h) ? dt : NULL;
    }
    return umpi_dtype_get_slow(h);
}

/* Size of one element, fast for builtin basic types (size encoded in the handle). */
static inline MPI_Count umpi_dtype_size_fast(MPI_Datatype h, const umpi_dtype_t *dt)
{
    return dt->size;
}

/* References held by pending operations and by types built on a type (builtins: no-ops). */
void umpi_dtype_release_slow(umpi_dtype_t *dt);
static inline void umpi_dtype_retain(umpi_dtype_t *dt)
{
    if (umpi_unlikely(!dt->builtin))
        __atomic_add_fetch(&dt->refcount, 1, __ATOMIC_RELAXED);
}
static inline void umpi_dtype_release(umpi_dtype_t *dt)
{
    if (umpi_unlikely(!dt->builtin))
        umpi_dtype_release_slow(dt);
}

/* ---- the pack engine (datatype_engine.c) ---- */

/* Compiles dt (and the types it is built from) into ops; UMPI_ERR_NOMEM on failure. */
umpi_status_t umpi_dtype_compile(umpi_dtype_t *dt);
/* Packs bytes [offset, offset + len) of the packed stream of count elements at buf into dst
 * (len must not run past the end): any offset, so long messages can be packed in pieces. */
void umpi_dtype_pack_range(const umpi_dtype_t *dt, const void *buf, MPI_Count count, MPI_Count offset,
                           void *dst, MPI_Count len);
/* The inverse: bytes [offset, offset + len) of the packed stream from src into the elements at buf. */
void umpi_dtype_unpack_range(const umpi_dtype_t *dt, void *buf, MPI_Count count, MPI_Count offset,
                             const void *src, MPI_Count len);
/* Packs count elements of a committed type into dst (size*count bytes), and back (bytes need not
 * be a whole number of elements). */
void umpi_dtype_pack(const umpi_dtype_t *dt, const void *src, MPI_Count count, void *dst);
void umpi_dtype_unpack(const umpi_dtype_t *dt, const void *src, MPI_Count bytes, void *dst);
/* Basic elements in the first `bytes` bytes of a packed stream of dt; -1 when bytes ends inside
 * a basic element. And the bytes that `elements` basic elements take (-1: not possible). */
MPI_Count umpi_dtype_elements(const umpi_dtype_t *dt, MPI_Count bytes);
MPI_Count umpi_dtype_elements_bytes(const umpi_dtype_t *dt, MPI_Count elements);

/* ---- derived types (datatype_type.c) ---- */

/* A new derived type with a handle (refcount 1, not committed) from its constructor's arguments in
 * the large-count layout (datatype_type.c), holding a reference on each of types[]. */
int umpi_dtype_create(int combiner, const MPI_Count *counts, MPI_Count n_counts, const int *ints,
                      int n_ints, umpi_dtype_t *const *types, int n_types, umpi_dtype_t **out);
/* The same for MPI_COMBINER_DARRAY, whose data is that of shadow (the new type takes the reference). */
int umpi_dtype_create_shadowed(int combiner, const MPI_Count *counts, MPI_Count n_counts, const int *ints,
                               int n_ints, umpi_dtype_t *const *types, int n_types, umpi_dtype_t *shadow,
                               umpi_dtype_t **out);
/* Whether counts[i] of a type made by combiner is an address (MPI_Aint) in the classic layout. */
int umpi_dtype_is_address(int combiner, const MPI_Count *counts, MPI_Count i);

/* ---- info objects (info.c) ------------------------------------------------------------------- */

/*
 * An info object: (key, value) strings in insertion order, which is the order
 * MPI_Info_get_nthkey reports. Info objects hold a handful of hints, so a plain array searched
 * linearly beats any index. MPI_INFO_ENV is a builtin, read-only object filled at MPI_Init.
 */
struct umpi_info_entry {
    char *key;
    char *value;
};

typedef struct umpi_info {
    MPI_Info handle;
    int readonly;                   /* MPI_INFO_ENV: no set, delete or free */
    int n, cap;
    struct umpi_info_entry *entries;
    pthread_mutex_t lock;           /* MPI_THREAD_MULTIPLE readers of a shared hint set */
} umpi_info_t;

extern struct umpi_handle_table umpi_info_table;
/* NULL when h is not a live info object (MPI_INFO_NULL included). */
static inline umpi_info_t *umpi_info_get(MPI_Info h)
{
    uint32_t k = UMPI_HANDLE_KIND(h);
    if (umpi_unlikely(UMPI_HANDLE_OBJ(h) != UMPI_OBJ_INFO ||
                      (k != UMPI_KIND_BUILTIN && k != UMPI_KIND_DIRECT)))
        return NULL;
    return (umpi_info_t *) umpi_ht_get(&umpi_info_table, UMPI_HANDLE_INDEX(h));
}

/* The list operations, for other layers reading hints and for the unit test. Keys and values
 * are assumed valid (the MPI functions check them). Each returns an umpi_status_t. */
umpi_status_t umpi_info_list_set(umpi_info_t *info, const char *key, const char *value);
/* The entry of key, or NULL; the pointer is valid until the object changes. */
const struct umpi_info_entry *umpi_info_list_find(const umpi_info_t *info, const char *key);
/* UMPI_ERR_NOT_FOUND when key is absent. */
umpi_status_t umpi_info_list_delete(umpi_info_t *info, const char *key);
umpi_status_t umpi_info_list_copy(const umpi_info_t *src, umpi_info_t *dst);
void umpi_info_list_clear(umpi_info_t *info);

/* Copies the value of key into buf (at most size bytes with the NUL) under the object's lock;
 * returns 1 if the key is set, 0 if not, or when info is MPI_INFO_NULL or invalid. For hints. */
int umpi_info_hint(MPI_Info info, const char *key, char *buf, size_t size);

/* Fills MPI_INFO_ENV; called once MPI_Init knows the job (init.c). */
void umpi_info_env_setup(void);

/* Ops: src/core/umpi_op.h (umpi_op_get, umpi_op_check, umpi_op_apply). */

/* ---- life cycle ------------------------------------------------------------------------------ */

int umpi_objects_init(void);      /* builtin comms, errhandlers, datatypes */
void umpi_objects_finalize(void);

#endif
