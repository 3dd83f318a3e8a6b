/*
 * MPI error codes, classes and strings; the error-handler call (umpi_err.h).
 *
 * A failing call makes a code whose message lives in a ring of recent errors (the code's id names
 * the slot; the slot remembers the id, so a code whose slot was reused since falls back to its
 * class text). Classes and codes added with MPI_Add_error_class/code live in growable arrays.
 * One mutex guards both: errors are the slow path, and MPI_THREAD_MULTIPLE callers share them.
 *
 * MPI_Error_string of a ring code reads "MPI_Send: invalid rank 7 in argument 'dest' (communicator
 * size 4) [MPI_ERR_RANK]": the call (added by umpi_err_dispatch), the argument and value (the
 * detail), and the class. A bare class reads "MPI_ERR_RANK: invalid rank".
 */
#include "core/umpi_err.h"
#include "core/umpi_obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if __has_include("mpi/gen/umpi_impl.h")
#include "mpi/gen/umpi_impl.h"
#endif

#define UMPI__ERR_ID_BITS 19
#define UMPI__ERR_ID_MAX  ((1u << UMPI__ERR_ID_BITS) - 1)
#define UMPI__ERR_MAX_CLASS UMPI_ERR_CLASS_MASK
/* Recent errors kept with their message: enough for every request of a large MPI_Waitall to
 * keep its own story, small enough to be a fixed static array. */
#define UMPI__ERR_RING 256

_Static_assert(UMPI_ERR_USER_BIT == 1 << (UMPI_ERR_CLASS_BITS + UMPI__ERR_ID_BITS),
               "code layout: class bits + id bits must end below the U bit");
_Static_assert(UMPI_ERR_USER_BIT * 2 - 1 <= MPI_ERR_LASTCODE, "codes must stay below MPI_ERR_LASTCODE");
_Static_assert((UMPI__ERR_ID_MAX + 1) % UMPI__ERR_RING == 0, "ring slots must tile the id space");

struct umpi__err_slot {
    uint32_t id;       /* 0: never used */
    int err_class;
    MPI_Comm comm;     /* whose handler to call, or MPI_COMM_NULL */
    const char *fname; /* the MPI call, set by umpi_err_dispatch (string literal of the binding) */
    char detail[MPI_MAX_ERROR_STRING];
};

struct umpi__user_code {
    int err_class;
    char *string; /* NULL until MPI_Add_error_string */
};

static pthread_mutex_t umpi__err_lock = PTHREAD_MUTEX_INITIALIZER;
static struct umpi__err_slot umpi__ring[UMPI__ERR_RING];
static uint32_t umpi__next_id = 1;

/* User classes: class UMPI_ERR_FIRST_USER_CLASS + i has string umpi__user_class_str[i]. */
static char **umpi__user_class_str;
static int umpi__n_user_classes, umpi__cap_user_classes;
/* User codes: id i (>= 1) is umpi__user_codes[i - 1]. */
static struct umpi__user_code *umpi__user_codes;
static int umpi__n_user_codes, umpi__cap_user_codes;
static int umpi__last_used_code;

/* ---- predefined classes ------------------------------------------------------------------------- */

struct umpi__class_info {
    const char *name;
    const char *text;
};

#define UMPI__CLASS(c, t) [c] = { #c, t }
static const struct umpi__class_info umpi__classes[UMPI_ERR_FIRST_USER_CLASS] = {
    UMPI__CLASS(MPI_SUCCESS, "no error"),
    UMPI__CLASS(MPI_ERR_BUFFER, "invalid buffer pointer"),
    UMPI__CLASS(MPI_ERR_COUNT, "invalid count"),
    UMPI__CLASS(MPI_ERR_TYPE, "invalid datatype"),
    UMPI__CLASS(MPI_ERR_TAG, "invalid tag"),
    UMPI__CLASS(MPI_ERR_COMM, "invalid communicator"),
    UMPI__CLASS(MPI_ERR_RANK, "invalid rank"),
    UMPI__CLASS(MPI_ERR_ROOT, "invalid root"),
    UMPI__CLASS(MPI_ERR_GROUP, "invalid group"),
    UMPI__CLASS(MPI_ERR_OP, "invalid reduction operation"),
    UMPI__CLASS(MPI_ERR_TOPOLOGY, "invalid topology"),
    UMPI__CLASS(MPI_ERR_DIMS, "invalid dimensions"),
    UMPI__CLASS(MPI_ERR_ARG, "invalid argument"),
    UMPI__CLASS(MPI_ERR_UNKNOWN, "unknown error"),
    UMPI__CLASS(MPI_ERR_TRUNCATE, "message truncated: longer than the receive buffer"),
    UMPI__CLASS(MPI_ERR_OTHER, "other error"),
    UMPI__CLASS(MPI_ERR_INTERN, "internal error in the MPI library"),
    UMPI__CLASS(MPI_ERR_IN_STATUS, "error code is in the status"),
    UMPI__CLASS(MPI_ERR_PENDING, "operation still pending"),
    UMPI__CLASS(MPI_ERR_REQUEST, "invalid request"),
    UMPI__CLASS(MPI_ERR_ACCESS, "permission denied"),
    UMPI__CLASS(MPI_ERR_AMODE, "invalid file access mode"),
    UMPI__CLASS(MPI_ERR_BAD_FILE, "invalid file name"),
    UMPI__CLASS(MPI_ERR_CONVERSION, "data conversion failed"),
    UMPI__CLASS(MPI_ERR_DUP_DATAREP, "data representation already registered"),
    UMPI__CLASS(MPI_ERR_FILE_EXISTS, "file exists"),
    UMPI__CLASS(MPI_ERR_FILE_IN_USE, "file in use by another process"),
    UMPI__CLASS(MPI_ERR_FILE, "invalid file handle"),
    UMPI__CLASS(MPI_ERR_INFO, "invalid info object"),
    UMPI__CLASS(MPI_ERR_INFO_KEY, "info key too long"),
    UMPI__CLASS(MPI_ERR_INFO_VALUE, "info value too long"),
    UMPI__CLASS(MPI_ERR_INFO_NOKEY, "no such info key"),
    UMPI__CLASS(MPI_ERR_IO, "I/O error"),
    UMPI__CLASS(MPI_ERR_NAME, "service name not published"),
    UMPI__CLASS(MPI_ERR_NO_MEM, "out of memory"),
    UMPI__CLASS(MPI_ERR_NOT_SAME, "arguments differ between processes of a collective call"),
    UMPI__CLASS(MPI_ERR_NO_SPACE, "no space left on device"),
    UMPI__CLASS(MPI_ERR_NO_SUCH_FILE, "no such file"),
    UMPI__CLASS(MPI_ERR_PORT, "invalid port name"),
    UMPI__CLASS(MPI_ERR_QUOTA, "quota exceeded"),
    UMPI__CLASS(MPI_ERR_READ_ONLY, "file is read-only"),
    UMPI__CLASS(MPI_ERR_SERVICE, "service not published"),
    UMPI__CLASS(MPI_ERR_SPAWN, "cannot spawn processes"),
    UMPI__CLASS(MPI_ERR_UNSUPPORTED_DATAREP, "unsupported data representation"),
    UMPI__CLASS(MPI_ERR_UNSUPPORTED_OPERATION, "unsupported operation"),
    UMPI__CLASS(MPI_ERR_WIN, "invalid window"),
    UMPI__CLASS(MPI_ERR_BASE, "invalid base address"),
    UMPI__CLASS(MPI_ERR_LOCKTYPE, "invalid lock type"),
    UMPI__CLASS(MPI_ERR_KEYVAL, "invalid attribute key"),
    UMPI__CLASS(MPI_ERR_RMA_CONFLICT, "conflicting accesses to a window"),
    UMPI__CLASS(MPI_ERR_RMA_SYNC, "wrong synchronization of RMA calls"),
    UMPI__CLASS(MPI_ERR_SIZE, "invalid size"),
    UMPI__CLASS(MPI_ERR_DISP, "invalid displacement"),
    UMPI__CLASS(MPI_ERR_ASSERT, "invalid assert"),
    UMPI__CLASS(MPI_ERR_RMA_RANGE, "target memory outside the window"),
    UMPI__CLASS(MPI_ERR_RMA_ATTACH, "memory cannot be attached to the window"),
    UMPI__CLASS(MPI_ERR_RMA_SHARED, "memory cannot be shared"),
    UMPI__CLASS(MPI_ERR_RMA_FLAVOR, "wrong window flavor"),
    UMPI__CLASS(MPI_T_ERR_MEMORY, "tool interface: out of memory"),
    UMPI__CLASS(MPI_T_ERR_NOT_INITIALIZED, "tool interface not initialized"),
    UMPI__CLASS(MPI_T_ERR_CANNOT_INIT, "tool interface cannot be initialized now"),
    UMPI__CLASS(MPI_T_ERR_INVALID_INDEX, "tool interface: invalid index"),
    UMPI__CLASS(MPI_T_ERR_INVALID_ITEM, "tool interface: invalid item"),
    UMPI__CLASS(MPI_T_ERR_INVALID_HANDLE, "tool interface: invalid handle"),
    UMPI__CLASS(MPI_T_ERR_OUT_OF_HANDLES, "tool interface: out of handles"),
    UMPI__CLASS(MPI_T_ERR_OUT_OF_SESSIONS, "tool interface: out of sessions"),
    UMPI__CLASS(MPI_T_ERR_INVALID_SESSION, "tool interface: invalid session"),
    UMPI__CLASS(MPI_T_ERR_CVAR_SET_NOT_NOW, "tool interface: variable cannot be set now"),
    UMPI__CLASS(MPI_T_ERR_CVAR_SET_NEVER, "tool interface: variable can never be set"),
    UMPI__CLASS(MPI_T_ERR_PVAR_NO_STARTSTOP, "tool interface: variable cannot be started or stopped"),
    UMPI__CLASS(MPI_T_ERR_PVAR_NO_WRITE, "tool interface: variable cannot be written or reset"),
    UMPI__CLASS(MPI_T_ERR_PVAR_NO_ATOMIC, "tool interface: variable cannot be read and written atomically"),
    UMPI__CLASS(MPI_T_ERR_INVALID_NAME, "tool interface: no such name"),
    UMPI__CLASS(MPI_T_ERR_INVALID, "tool interface: invalid use"),
    UMPI__CLASS(MPI_ERR_SESSION, "invalid session"),
    UMPI__CLASS(MPI_ERR_PROC_ABORTED, "peer process has aborted"),
    UMPI__CLASS(MPI_ERR_VALUE_TOO_LARGE, "value too large for the output argument"),
#ifdef MPI_T_ERR_NOT_SUPPORTED
    UMPI__CLASS(MPI_T_ERR_NOT_SUPPORTED, "tool interface: not supported"),
#endif
#ifdef MPI_ERR_ERRHANDLER
    UMPI__CLASS(MPI_ERR_ERRHANDLER, "invalid error handler"),
#endif
#ifdef MPIX_ERR_PROC_FAILED
    UMPI__CLASS(MPIX_ERR_PROC_FAILED, "a process has failed"),
    UMPI__CLASS(MPIX_ERR_PROC_FAILED_PENDING, "a process failure left this request pending"),
    UMPI__CLASS(MPIX_ERR_REVOKED, "communicator revoked"),
    UMPI__CLASS(MPIX_ERR_EAGAIN, "operation could not be issued now, try again"),
    UMPI__CLASS(MPIX_ERR_NOREQ, "cannot allocate a request"),
#endif
};

static int umpi__predefined_class(int c)
{
    return c >= 0 && c < UMPI_ERR_FIRST_USER_CLASS && umpi__classes[c].name != NULL;
}

/* With the lock held. */
static int umpi__class_exists(int c)
{
    return umpi__predefined_class(c) ||
           (c >= UMPI_ERR_FIRST_USER_CLASS && c < UMPI_ERR_FIRST_USER_CLASS + umpi__n_user_classes);
}

static uint32_t umpi__code_id(int code)
{
    return ((uint32_t) code >> UMPI_ERR_CLASS_BITS) & UMPI__ERR_ID_MAX;
}

/* With the lock held: the ring slot still holding code's message, or NULL. */
static struct umpi__err_slot *umpi__ring_slot(int code)
{
    if (code <= 0 || (code & UMPI_ERR_USER_BIT))
        return NULL;
    uint32_t id = umpi__code_id(code);
    if (id == 0)
        return NULL;
    struct umpi__err_slot *s = &umpi__ring[id % UMPI__ERR_RING];
    return s->id == id && s->err_class == (code & UMPI_ERR_CLASS_MASK) ? s : NULL;
}

/* With the lock held: is code one that MPI could have handed out? */
static int umpi__code_valid(int code)
{
    if (code < 0 || code > MPI_ERR_LASTCODE)
        return 0;
    int c = code & UMPI_ERR_CLASS_MASK;
    if (code & UMPI_ERR_USER_BIT) {
        uint32_t id = umpi__code_id(code);
        return id >= 1 && id <= (uint32_t) umpi__n_user_codes &&
               umpi__user_codes[id - 1].err_class == c;
    }
    /* A ring code stays valid after its slot is reused: its class still answers. */
    return umpi__class_exists(c);
}

/* "MPI_ERR_RANK: invalid rank", or a user class's string. With the lock held. */
static void umpi__class_text(int c, char *buf, size_t len)
{
    if (umpi__predefined_class(c)) {
        snprintf(buf, len, "%s: %s", umpi__classes[c].name, umpi__classes[c].text);
    } else if (c >= UMPI_ERR_FIRST_USER_CLASS &&
               c < UMPI_ERR_FIRST_USER_CLASS + umpi__n_user_classes) {
        const char *s = umpi__user_class_str[c - UMPI_ERR_FIRST_USER_CLASS];
        snprintf(buf, len, "%s", s ? s : "");
    } else {
        snprintf(buf, len, "unknown error class %d", c);
    }
}

/* ---- making codes ------------------------------------------------------------------------------- */

static int umpi__err_vcreate(MPI_Comm comm, int err_class, const char *fmt, va_list ap)
{
    if (err_class == MPI_SUCCESS)
        return MPI_SUCCESS;
    if ((unsigned) err_class > UMPI__ERR_MAX_CLASS)
        err_class = MPI_ERR_INTERN; /* a caller bug; still produce a usable code */

    pthread_mutex_lock(&umpi__err_lock);
    uint32_t id = umpi__next_id;
    umpi__next_id = id == UMPI__ERR_ID_MAX ? 1 : id + 1;
    struct umpi__err_slot *s = &umpi__ring[id % UMPI__ERR_RING];
    s->id = id;
    s->err_class = err_class;
    s->comm = comm;
    s->fname = NULL;
    /* Formatting under the lock keeps the slot consistent; messages are short. */
    vsnprintf(s->detail, sizeof(s->detail), fmt, ap);
    pthread_mutex_unlock(&umpi__err_lock);

    return (int) ((id << UMPI_ERR_CLASS_BITS) | (uint32_t) err_class);
}

int umpi_err_create(int err_class, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = umpi__err_vcreate(MPI_COMM_NULL, err_class, fmt, ap);
    va_end(ap);
    return code;
}

int umpi_err_create_comm(MPI_Comm comm, int err_class, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = umpi__err_vcreate(comm, err_class, fmt, ap);
    va_end(ap);
    return code;
}

int umpi_err_from_status(umpi_status_t st, const char *what)
{
    int c;
    switch (st) {
    case UMPI_OK: return MPI_SUCCESS;
    case UMPI_ERR_NOMEM: c = MPI_ERR_NO_MEM; break;
    case UMPI_ERR_TRUNCATE: c = MPI_ERR_TRUNCATE; break;
    case UMPI_ERR_INTERN: c = MPI_ERR_INTERN; break;
    /* Not the caller's arguments (MPI_ERR_ARG, MPI_ERR_RANK): a key the layers below miss is the
     * process manager's or the library's (a user's missing info key or attribute gets its own
     * class where it is looked up), and a peer without an address is not known to have died
     * (MPI_ERR_PROC_ABORTED would send fault-tolerant programs into their recovery). */
    case UMPI_ERR_NOT_FOUND:
    case UMPI_ERR_UNREACHABLE:
    case UMPI_ERR_TRANSPORT:
    case UMPI_ERR_PMI:
    case UMPI_ERR_CANCELED:
    case UMPI_ERR_OTHER:
    default: c = MPI_ERR_OTHER; break;
    }
    const char *cause = umpi_status_last_msg();
    if (cause[0] != '\0')
        return umpi_err_create(c, "%s: %s: %s", what, umpi_status_string(st), cause);
    return umpi_err_create(c, "%s: %s", what, umpi_status_string(st));
}

int umpi_err_class(int code)
{
    /* Every code carries its class in the low bits, user-added codes included. */
    return code & UMPI_ERR_CLASS_MASK;
}

/* ---- strings ------------------------------------------------------------------------------------ */

/* snprintf whose truncation is intended: messages are cut to MPI_MAX_ERROR_STRING, not lost. */
static void umpi__fmt(char *buf, size_t len, const char *fmt, ...) UMPI_PRINTF(3, 4);
static void umpi__fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Writes code's text into buf (MPI_MAX_ERROR_STRING); fname_if_bare names the call for codes that
 * do not carry one. Returns 0, or -1 for an invalid code. With the lock held. */
static int umpi__err_text(int code, const char *fname_if_bare, char *buf)
{
    const size_t len = MPI_MAX_ERROR_STRING;
    char cls[MPI_MAX_ERROR_STRING];

    if (!umpi__code_valid(code)) {
        umpi__fmt(buf, len, "invalid error code %d", code);
        return -1;
    }
    int c = code & UMPI_ERR_CLASS_MASK;
    const char *prefix = fname_if_bare ? fname_if_bare : "";
    const char *sep = fname_if_bare ? ": " : "";

    if (code & UMPI_ERR_USER_BIT) {
        const char *s = umpi__user_codes[umpi__code_id(code) - 1].string;
        if (s == NULL && fname_if_bare != NULL) /* a fatal message must say something */
            umpi__fmt(buf, len, "%s: error code %d of class %d", fname_if_bare, code, c);
        else
            umpi__fmt(buf, len, "%s%s%s", prefix, sep, s ? s : "");
        return 0;
    }
    umpi__class_text(c, cls, sizeof(cls));
    struct umpi__err_slot *s = umpi__ring_slot(code);
    if (s == NULL) {
        umpi__fmt(buf, len, "%s%s%s", prefix, sep, cls);
        return 0;
    }
    if (s->fname) {
        prefix = s->fname;
        sep = ": ";
    }
    /* With a detail, the class's name is enough: "... [MPI_ERR_RANK]". */
    if (s->detail[0] == '\0')
        umpi__fmt(buf, len, "%s%s%s", prefix, sep, cls);
    else if (umpi__predefined_class(c))
        umpi__fmt(buf, len, "%s%s%s [%s]", prefix, sep, s->detail, umpi__classes[c].name);
    else if (cls[0] == '\0')
        umpi__fmt(buf, len, "%s%s%s", prefix, sep, s->detail);
    else
        umpi__fmt(buf, len, "%s%s%s [%s]", prefix, sep, s->detail, cls);
    return 0;
}

int umpi_err_string(int code, char *buf, int *len)
{
    pthread_mutex_lock(&umpi__err_lock);
    int rc = umpi__err_text(code, NULL, buf);
    pthread_mutex_unlock(&umpi__err_lock);
    *len = (int) strlen(buf);
    return rc == 0 ? MPI_SUCCESS : MPI_ERR_ARG;
}

/* ---- error handlers ----------------------------------------------------------------------------- */

/* Calls handler eh of communicator comm for code. fname names the call for the fatal message. */
static int umpi__invoke(umpi_errhandler_t *eh, MPI_Comm comm, int code, const char *fname)
{
    if (eh != NULL && eh->kind == UMPI_EH_RETURN)
        return code;
    if (eh != NULL && eh->kind == UMPI_EH_USER) {
        MPI_Comm h = comm;
        int c = code;
        eh->comm_fn(&h, &c);
        return code;
    }
    /* MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT, or no handler at all (during MPI_Init): exit code
     * 1 as other MPI libraries do; the message tells what went wrong. */
    char text[MPI_MAX_ERROR_STRING];
    pthread_mutex_lock(&umpi__err_lock);
    struct umpi__err_slot *s = umpi__ring_slot(code);
    umpi__err_text(code, s && s->fname ? NULL : fname, text);
    pthread_mutex_unlock(&umpi__err_lock);
    umpi_die(1, "%s", text);
}

static umpi_errhandler_t *umpi__comm_errhandler(MPI_Comm comm)
{
    umpi_comm_t *c = umpi_comm_get(comm);
    if (c == NULL)
        return NULL;
    return umpi_errhandler_get(__atomic_load_n(&c->errhandler, __ATOMIC_ACQUIRE));
}

int umpi_err_dispatch(const char *fname, MPI_Comm comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;

    MPI_Comm target = comm;
    pthread_mutex_lock(&umpi__err_lock);
    struct umpi__err_slot *s = umpi__ring_slot(code);
    if (s != NULL) {
        /* The innermost MPI call names the error: a code passing back up through an outer
         * call keeps the name of the call that found the problem. */
        if (s->fname == NULL)
            s->fname = fname;
        if (s->comm != MPI_COMM_NULL)
            target = s->comm;
    }
    pthread_mutex_unlock(&umpi__err_lock);
    if (target == MPI_COMM_NULL || umpi_comm_get(target) == NULL) /* no object: an invalid handle */
        target = MPI_COMM_SELF;

    /* Not reference-counted: a handler replaced and freed by another thread during this very
     * error is a race the MPI standard leaves to the program. */
    return umpi__invoke(umpi__comm_errhandler(target), target, code, fname);
}

int umpi_err_dispatch_handler(const char *fname, MPI_Errhandler errhandler, int object, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    pthread_mutex_lock(&umpi__err_lock);
    struct umpi__err_slot *s = umpi__ring_slot(code);
    if (s != NULL && s->fname == NULL)
        s->fname = fname;
    pthread_mutex_unlock(&umpi__err_lock);
    return umpi__invoke(umpi_errhandler_get(errhandler), object, code, fname);
}

int umpi_err_uninitialized(const char *fname)
{
    char line[256];
    int n = snprintf(line, sizeof(line), "umpi: %s called %s\n", fname,
                     umpi_global.state == UMPI_STATE_FINALIZED ? "after MPI_Finalize"
                                                               : "before MPI_Init");
    fflush(stdout);
    if (write(STDERR_FILENO, line, (size_t) n) < 0) {
        /* nothing left to report it to */
    }
    /* No MPI state to abort through: end this process; the launcher ends the job. */
    _exit(1);
}

int umpi_impl_comm_call_errhandler(umpi_comm_t *comm_ptr, int errorcode)
{
    umpi_errhandler_t *eh = umpi_errhandler_get(__atomic_load_n(&comm_ptr->errhandler,
                                                                __ATOMIC_ACQUIRE));
    umpi__invoke(eh, comm_ptr->handle, errorcode, "MPI_Comm_call_errhandler");
    /* The handler was called: that is success for this call, whatever the code says. */
    return MPI_SUCCESS;
}

/* ---- MPI_Error_class / MPI_Error_string --------------------------------------------------------- */

int umpi_impl_error_class(int errorcode, int *errorclass)
{
    pthread_mutex_lock(&umpi__err_lock);
    int ok = umpi__code_valid(errorcode);
    pthread_mutex_unlock(&umpi__err_lock);
    if (!ok)
        return umpi_err_create(MPI_ERR_ARG, "errorcode=%d is not an MPI error code", errorcode);
    *errorclass = umpi_err_class(errorcode);
    return MPI_SUCCESS;
}

int umpi_impl_error_string(int errorcode, char *string, int *resultlen)
{
    if (umpi_err_string(errorcode, string, resultlen) != MPI_SUCCESS)
        return umpi_err_create(MPI_ERR_ARG, "errorcode=%d is not an MPI error code", errorcode);
    return MPI_SUCCESS;
}

/* ---- MPI_Add_error_class / code / string -------------------------------------------------------- */

/* Grows an array of `size`-byte elements to hold n+1; 0 or -1. */
static int umpi__grow(void **arr, int *cap, int n, size_t size)
{
    if (n < *cap)
        return 0;
    int ncap = *cap ? 2 * *cap : 16;
    void *p = realloc(*arr, (size_t) ncap * size);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

static void umpi__note_used(int code)
{
    if (code > umpi__last_used_code)
        umpi__last_used_code = code;
}

int umpi_err_last_used_code(void)
{
    pthread_mutex_lock(&umpi__err_lock);
    if (umpi__last_used_code == 0)
        for (int c = 0; c < UMPI_ERR_FIRST_USER_CLASS; c++)
            if (umpi__classes[c].name != NULL)
                umpi__last_used_code = c;
    int v = umpi__last_used_code;
    pthread_mutex_unlock(&umpi__err_lock);
    return v;
}

/* Failures of MPI_Add_error_class/code, reported once the lock is released (making the error
 * code takes the lock again). */
enum { UMPI__ADD_OK, UMPI__ADD_NOMEM, UMPI__ADD_FULL, UMPI__ADD_BAD_CLASS };

int umpi_impl_add_error_class(int *errorclass)
{
    int st = UMPI__ADD_OK;
    umpi_err_last_used_code(); /* sets the predefined floor before the first user class */
    pthread_mutex_lock(&umpi__err_lock);
    int c = UMPI_ERR_FIRST_USER_CLASS + umpi__n_user_classes;
    if (c > UMPI__ERR_MAX_CLASS) {
        st = UMPI__ADD_FULL;
        goto fail;
    }
    if (umpi__grow((void **) &umpi__user_class_str, &umpi__cap_user_classes,
                   umpi__n_user_classes, sizeof(char *)) != 0) {
        st = UMPI__ADD_NOMEM;
        goto fail;
    }
    umpi__user_class_str[umpi__n_user_classes++] = NULL;
    umpi__note_used(c);
    *errorclass = c;
fail:
    pthread_mutex_unlock(&umpi__err_lock);
    if (st == UMPI__ADD_FULL)
        return umpi_err_create(MPI_ERR_OTHER, "no more error classes: all %d user classes in use",
                               UMPI__ERR_MAX_CLASS - UMPI_ERR_FIRST_USER_CLASS + 1);
    if (st == UMPI__ADD_NOMEM)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot add an error class");
    return MPI_SUCCESS;
}

int umpi_impl_add_error_code(int errorclass, int *errorcode)
{
    int st = UMPI__ADD_OK;
    umpi_err_last_used_code();
    pthread_mutex_lock(&umpi__err_lock);
    if (!umpi__class_exists(errorclass) || errorclass == MPI_SUCCESS) {
        st = UMPI__ADD_BAD_CLASS;
        goto fail;
    }
    if ((uint32_t) umpi__n_user_codes >= UMPI__ERR_ID_MAX) {
        st = UMPI__ADD_FULL;
        goto fail;
    }
    if (umpi__grow((void **) &umpi__user_codes, &umpi__cap_user_codes, umpi__n_user_codes,
                   sizeof(*umpi__user_codes)) != 0) {
        st = UMPI__ADD_NOMEM;
        goto fail;
    }
    umpi__user_codes[umpi__n_user_codes] = (struct umpi__user_code) { errorclass, NULL };
    uint32_t id = (uint32_t) ++umpi__n_user_codes;
    int code = (int) (UMPI_ERR_USER_BIT | (id << UMPI_ERR_CLASS_BITS) | (uint32_t) errorclass);
    umpi__note_used(code);
    *errorcode = code;
fail:
    pthread_mutex_unlock(&umpi__err_lock);
    switch (st) {
    case UMPI__ADD_BAD_CLASS:
        return umpi_err_create(MPI_ERR_ARG, "errorclass=%d is not an error class", errorclass);
    case UMPI__ADD_FULL:
        return umpi_err_create(MPI_ERR_OTHER, "no more error codes: all %u user codes in use",
                               UMPI__ERR_ID_MAX);
    case UMPI__ADD_NOMEM:
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot add an error code");
    default:
        return MPI_SUCCESS;
    }
}

int umpi_impl_add_error_string(int errorcode, const char *string)
{
    char **slot = NULL;
    size_t len = strlen(string);
    if (len >= MPI_MAX_ERROR_STRING)
        return umpi_err_create(MPI_ERR_ARG, "string of %zu characters is longer than "
                               "MPI_MAX_ERROR_STRING-1 = %d", len, MPI_MAX_ERROR_STRING - 1);
    char *copy = strdup(string);
    if (copy == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot copy an error string of %zu bytes", len);

    pthread_mutex_lock(&umpi__err_lock);
    if (umpi__code_valid(errorcode) && (errorcode & UMPI_ERR_USER_BIT)) {
        slot = &umpi__user_codes[umpi__code_id(errorcode) - 1].string;
    } else if (errorcode >= UMPI_ERR_FIRST_USER_CLASS &&
               errorcode < UMPI_ERR_FIRST_USER_CLASS + umpi__n_user_classes) {
        slot = &umpi__user_class_str[errorcode - UMPI_ERR_FIRST_USER_CLASS];
    }
    if (slot != NULL) {
        free(*slot);
        *slot = copy;
    }
    pthread_mutex_unlock(&umpi__err_lock);
    if (slot == NULL) {
        free(copy);
        return umpi_err_create(MPI_ERR_ARG, "errorcode=%d is not a code or class added with "
                               "MPI_Add_error_code/class (predefined strings cannot change)",
                               errorcode);
    }
    return MPI_SUCCESS;
}
