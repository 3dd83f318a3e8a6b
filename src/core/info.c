/*
 * Info objects (MPI 4.1 chapter 10): ordered (key, value) lists, MPI_INFO_ENV, and the MPI_Info_*
 * functions.
 *
 * Handles: MPI_INFO_NULL is 0x1c000000 (kind 0, object 7); MPI_INFO_ENV is the builtin at index 1
 * (0x5c000001), kept in a statically built first chunk so that it exists before MPI_Init, when
 * the MPI_Info functions may already be called (MPI 4.1 sec. 11.4.1). User objects are direct
 * handles from index 2.
 *
 * Keys are 1..MPI_MAX_INFO_KEY characters and values 0..MPI_MAX_INFO_VAL characters (both without
 * the NUL, as MPICH counts them): a key buffer for MPI_Info_get_nthkey needs MPI_MAX_INFO_KEY + 1
 * bytes.
 */
#include "core/umpi_err.h"
#include "core/umpi_obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if __has_include("mpi/gen/umpi_impl.h")
#include "mpi/gen/umpi_impl.h"
#endif

#define UMPI__INFO_ENV_INDEX     1
#define UMPI__INFO_FIRST_DYNAMIC 2
_Static_assert(MPI_INFO_ENV == UMPI_HANDLE_MAKE(UMPI_KIND_BUILTIN, UMPI_OBJ_INFO, UMPI__INFO_ENV_INDEX),
               "MPI_INFO_ENV: table slot follows the handle value");
_Static_assert(UMPI_HANDLE_KIND(MPI_INFO_NULL) == UMPI_KIND_INVALID &&
               UMPI_HANDLE_OBJ(MPI_INFO_NULL) == UMPI_OBJ_INFO, "MPI_INFO_NULL never resolves");

static umpi_info_t umpi__info_env = {
    .handle = MPI_INFO_ENV,
    .readonly = 1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

static void *umpi__info_chunk0[UMPI_HT_CHUNK] = { [UMPI__INFO_ENV_INDEX] = &umpi__info_env };

struct umpi_handle_table umpi_info_table = {
    .chunks = { umpi__info_chunk0 },
    .limit = UMPI_HT_CHUNK,
    .first_dynamic = UMPI__INFO_FIRST_DYNAMIC,
    .next = UMPI__INFO_FIRST_DYNAMIC,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- the list ------------------------------------------------------------------------------ */

static int umpi__info_index(const umpi_info_t *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->entries[i].key, key) == 0)
            return i;
    return -1;
}

const struct umpi_info_entry *umpi_info_list_find(const umpi_info_t *info, const char *key)
{
    int i = umpi__info_index(info, key);
    return i < 0 ? NULL : &info->entries[i];
}

umpi_status_t umpi_info_list_set(umpi_info_t *info, const char *key, const char *value)
{
    char *v = strdup(value);
    if (v == NULL)
        return UMPI_ERR_NOMEM;
    int i = umpi__info_index(info, key);
    if (i >= 0) {
        /* An existing key keeps its place in the order: only its value changes. */
        free(info->entries[i].value);
        info->entries[i].value = v;
        return UMPI_OK;
    }
    if (info->n == info->cap) {
        int cap = info->cap ? 2 * info->cap : 8;
        struct umpi_info_entry *e = realloc(info->entries, (size_t) cap * sizeof(*e));
        if (e == NULL)
            goto nomem;
        info->entries = e;
        info->cap = cap;
    }
    char *k = strdup(key);
    if (k == NULL)
        goto nomem;
    info->entries[info->n].key = k;
    info->entries[info->n].value = v;
    info->n++;
    return UMPI_OK;
nomem:
    free(v);
    return UMPI_ERR_NOMEM;
}

umpi_status_t umpi_info_list_delete(umpi_info_t *info, const char *key)
{
    int i = umpi__info_index(info, key);
    if (i < 0)
        return UMPI_ERR_NOT_FOUND;
    free(info->entries[i].key);
    free(info->entries[i].value);
    memmove(&info->entries[i], &info->entries[i + 1],
            (size_t) (info->n - i - 1) * sizeof(info->entries[0]));
    info->n--;
    return UMPI_OK;
}

void umpi_info_list_clear(umpi_info_t *info)
{
    for (int i = 0; i < info->n; i++) {
        free(info->entries[i].key);
        free(info->entries[i].value);
    }
    free(info->entries);
    info->entries = NULL;
    info->n = info->cap = 0;
}

/* dst must be empty; on failure it is left empty. */
umpi_status_t umpi_info_list_copy(const umpi_info_t *src, umpi_info_t *dst)
{
    for (int i = 0; i < src->n; i++) {
        if (umpi_info_list_set(dst, src->entries[i].key, src->entries[i].value) != UMPI_OK) {
            umpi_info_list_clear(dst);
            return UMPI_ERR_NOMEM;
        }
    }
    return UMPI_OK;
}

int umpi_info_hint(MPI_Info h, const char *key, char *buf, size_t size)
{
    umpi_info_t *info = umpi_info_get(h);
    int found = 0;
    if (info == NULL)
        return 0;
    pthread_mutex_lock(&info->lock);
    const struct umpi_info_entry *e = umpi_info_list_find(info, key);
    if (e != NULL) {
        umpi_strlcpy(buf, e->value, size);
        found = 1;
    }
    pthread_mutex_unlock(&info->lock);
    return found;
}

/* ---- objects ------------------------------------------------------------------------------- */

static int umpi__info_new(umpi_info_t **out)
{
    umpi_info_t *info = calloc(1, sizeof(*info));
    if (info == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot allocate an info object");
    pthread_mutex_init(&info->lock, NULL);
    int idx = umpi_ht_insert(&umpi_info_table, info);
    if (idx < 0) {
        pthread_mutex_destroy(&info->lock);
        free(info);
        return umpi_err_from_status(UMPI_ERR_NOMEM, "cannot register an info object");
    }
    info->handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_INFO, idx);
    *out = info;
    return MPI_SUCCESS;
}

static void umpi__info_destroy(umpi_info_t *info)
{
    umpi_ht_remove(&umpi_info_table, UMPI_HANDLE_INDEX(info->handle));
    umpi_info_list_clear(info);
    pthread_mutex_destroy(&info->lock);
    free(info);
}

/* The binding has checked the handle (umpi_check_info); a handle freed since cannot be told
 * from a bad one, and both are MPI_ERR_INFO. */
static int umpi__info_lookup(MPI_Info h, umpi_info_t **out)
{
    *out = umpi_info_get(h);
    if (umpi_likely(*out != NULL))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_INFO, "invalid info 0x%x in argument 'info'", (unsigned) h);
}

static int umpi__check_key(const char *key, const char *arg)
{
    size_t len = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (umpi_unlikely(len == 0))
        return umpi_err_create(MPI_ERR_INFO_KEY, "empty key in argument '%s'", arg);
    if (umpi_unlikely(len > MPI_MAX_INFO_KEY))
        return umpi_err_create(MPI_ERR_INFO_KEY, "key \"%.40s...\" in argument '%s' is longer than "
                               "MPI_MAX_INFO_KEY (%d characters)", key, arg, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

static int umpi__check_writable(const umpi_info_t *info, const char *what)
{
    if (umpi_likely(!info->readonly))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_INFO, "MPI_INFO_ENV in argument 'info' is predefined and "
                           "read-only: cannot %s", what);
}

int umpi_impl_info_create(MPI_Info *info)
{
    umpi_info_t *obj;
    int err = umpi__info_new(&obj);
    if (err == MPI_SUCCESS)
        *info = obj->handle;
    return err;
}

int umpi_impl_info_dup(MPI_Info info, MPI_Info *newinfo)
{
    umpi_info_t *src, *dst;
    int err = umpi__info_lookup(info, &src);
    if (err != MPI_SUCCESS)
        return err;
    err = umpi__info_new(&dst);
    if (err != MPI_SUCCESS)
        return err;
    pthread_mutex_lock(&src->lock);
    umpi_status_t st = umpi_info_list_copy(src, dst);
    pthread_mutex_unlock(&src->lock);
    if (st != UMPI_OK) {
        umpi__info_destroy(dst);
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot copy the %d entries of info 0x%x",
                               src->n, (unsigned) info);
    }
    *newinfo = dst->handle;
    return MPI_SUCCESS;
}

int umpi_impl_info_free(MPI_Info *info)
{
    umpi_info_t *obj = umpi_info_get(*info);
    if (obj == NULL)
        return umpi_err_create(MPI_ERR_INFO, "%s in argument 'info'", *info == MPI_INFO_NULL
                               ? "MPI_INFO_NULL" : "invalid info handle");
    int err = umpi__check_writable(obj, "free it");
    if (err != MPI_SUCCESS)
        return err;
    umpi__info_destroy(obj);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

int umpi_impl_info_set(MPI_Info info, const char *key, const char *value)
{
    umpi_info_t *obj;
    int err = umpi__info_lookup(info, &obj);
    if (err == MPI_SUCCESS)
        err = umpi__check_writable(obj, "set a key");
    if (err == MPI_SUCCESS)
        err = umpi__check_key(key, "key");
    if (err != MPI_SUCCESS)
        return err;
    size_t vlen = strnlen(value, MPI_MAX_INFO_VAL + 1);
    if (vlen > MPI_MAX_INFO_VAL)
        return umpi_err_create(MPI_ERR_INFO_VALUE, "value of key \"%s\" in argument 'value' is "
                               "longer than MPI_MAX_INFO_VAL (%d characters)", key, MPI_MAX_INFO_VAL);
    pthread_mutex_lock(&obj->lock);
    umpi_status_t st = umpi_info_list_set(obj, key, value);
    pthread_mutex_unlock(&obj->lock);
    if (st != UMPI_OK)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot store key \"%s\"", key);
    return MPI_SUCCESS;
}

int umpi_impl_info_delete(MPI_Info info, const char *key)
{
    umpi_info_t *obj;
    int err = umpi__info_lookup(info, &obj);
    if (err == MPI_SUCCESS)
        err = umpi__check_writable(obj, "delete a key");
    if (err == MPI_SUCCESS)
        err = umpi__check_key(key, "key");
    if (err != MPI_SUCCESS)
        return err;
    pthread_mutex_lock(&obj->lock);
    umpi_status_t st = umpi_info_list_delete(obj, key);
    pthread_mutex_unlock(&obj->lock);
    if (st == UMPI_ERR_NOT_FOUND)
        return umpi_err_create(MPI_ERR_INFO_NOKEY, "key \"%s\" in argument 'key' is not set in "
                               "info 0x%x", key, (unsigned) info);
    return MPI_SUCCESS;
}

/* Common part of the getters: the object, locked, and the entry of key (NULL if absent). */
static int umpi__info_find_locked(MPI_Info info, const char *key, umpi_info_t **obj,
                                  const struct umpi_info_entry **e)
{
    int err = umpi__info_lookup(info, obj);
    if (err == MPI_SUCCESS)
        err = umpi__check_key(key, "key");
    if (err != MPI_SUCCESS)
        return err;
    pthread_mutex_lock(&(*obj)->lock);
    *e = umpi_info_list_find(*obj, key);
    return MPI_SUCCESS;
}

int umpi_impl_info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    umpi_info_t *obj;
    const struct umpi_info_entry *e;
    if (valuelen < 0)
        return umpi_err_create(MPI_ERR_ARG, "negative length %d in argument 'valuelen'", valuelen);
    int err = umpi__info_find_locked(info, key, &obj, &e);
    if (err != MPI_SUCCESS)
        return err;
    *flag = e != NULL;
    if (e != NULL)
        umpi_strlcpy(value, e->value, (size_t) valuelen + 1); /* C: valuelen excludes the NUL */
    pthread_mutex_unlock(&obj->lock);
    return MPI_SUCCESS;
}

int umpi_impl_info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    umpi_info_t *obj;
    const struct umpi_info_entry *e;
    if (*buflen < 0)
        return umpi_err_create(MPI_ERR_ARG, "negative length %d in argument 'buflen'", *buflen);
    if (*buflen > 0 && value == NULL)
        return umpi_err_create(MPI_ERR_ARG, "argument 'value' is NULL with buflen %d", *buflen);
    int err = umpi__info_find_locked(info, key, &obj, &e);
    if (err != MPI_SUCCESS)
        return err;
    *flag = e != NULL;
    if (e != NULL) {
        /* MPI 4.1: buflen counts the NUL, both ways; the value is cut to fit and always
         * terminated; buflen 0 asks for the size only. An absent key leaves both alone. */
        if (*buflen > 0)
            umpi_strlcpy(value, e->value, (size_t) *buflen);
        *buflen = (int) strlen(e->value) + 1;
    }
    pthread_mutex_unlock(&obj->lock);
    return MPI_SUCCESS;
}

int umpi_impl_info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    umpi_info_t *obj;
    const struct umpi_info_entry *e;
    int err = umpi__info_find_locked(info, key, &obj, &e);
    if (err != MPI_SUCCESS)
        return err;
    *flag = e != NULL;
    if (e != NULL)
        *valuelen = (int) strlen(e->value);
    pthread_mutex_unlock(&obj->lock);
    return MPI_SUCCESS;
}

int umpi_impl_info_get_nkeys(MPI_Info info, int *nkeys)
{
    umpi_info_t *obj;
    int err = umpi__info_lookup(info, &obj);
    if (err != MPI_SUCCESS)
        return err;
    pthread_mutex_lock(&obj->lock);
    *nkeys = obj->n;
    pthread_mutex_unlock(&obj->lock);
    return MPI_SUCCESS;
}

int umpi_impl_info_get_nthkey(MPI_Info info, int n, char *key)
{
    umpi_info_t *obj;
    int err = umpi__info_lookup(info, &obj);
    if (err != MPI_SUCCESS)
        return err;
    pthread_mutex_lock(&obj->lock);
    int nkeys = obj->n;
    if (n >= 0 && n < nkeys)
        strcpy(key, obj->entries[n].key); /* at most MPI_MAX_INFO_KEY + 1 bytes */
    pthread_mutex_unlock(&obj->lock);
    if (n < 0 || n >= nkeys)
        return umpi_err_create(MPI_ERR_ARG, "invalid key index %d in argument 'n' (info 0x%x has "
                               "%d keys)", n, (unsigned) info, nkeys);
    return MPI_SUCCESS;
}

/* ---- MPI_INFO_ENV and MPI_Info_create_env ---------------------------------------------------- */

/*
 * The keys umpi knows (MPI 4.1 sec. 11.2.1): command, argv (the arguments after the command,
 * separated by blanks), maxprocs (the size of MPI_COMM_WORLD), host, arch (uname's machine),
 * wdir (the working directory at start-up) and thread_level (the level MPI was initialised with).
 * soft and file are not given: mpirun has no soft process counts and no launch file.
 * Before MPI_Init only the first ones are known; maxprocs and thread_level are left out.
 */

static const char *umpi__thread_level_name(int level)
{
    static const char *const names[] = { "MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE" };
    return level >= 0 && level < (int) UMPI_ARRAY_SIZE(names) ? names[level] : NULL;
}

/* argv from /proc when the caller has none (MPI_INFO_ENV, or MPI_Info_create_env(0, NULL)). */
static char *umpi__read_cmdline(size_t *len)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    if (f == NULL)
        return NULL;
    for (;;) {
        if (*len == cap) {
            char *b = realloc(buf, cap + 4096);
            if (b == NULL)
                break;
            buf = b;
            cap += 4096;
        }
        size_t got = fread(buf + *len, 1, cap - *len, f);
        if (got == 0)
            break;
        *len += got;
    }
    fclose(f);
    return buf;
}

/* Appends word to the blank-separated list in buf (MPI_MAX_INFO_VAL + 1 bytes), cutting at the end. */
static void umpi__append_word(char *buf, const char *word)
{
    size_t used = strlen(buf);
    if (used > 0 && used < MPI_MAX_INFO_VAL)
        buf[used++] = ' ';
    umpi_strlcpy(buf + used, word, MPI_MAX_INFO_VAL + 1 - used);
}

static umpi_status_t umpi__info_env_fill(umpi_info_t *info, int argc, char **argv)
{
    char val[MPI_MAX_INFO_VAL + 1];
    umpi_status_t st = UMPI_OK;
    size_t cmdlen = 0;
    char *cmdline = NULL;

#define UMPI__SET(k, v) do { if (st == UMPI_OK) st = umpi_info_list_set(info, k, v); } while (0)
    if (argv == NULL || argc <= 0) {
        cmdline = umpi__read_cmdline(&cmdlen);
        if (cmdline != NULL && cmdlen > 0) {
            cmdline[cmdlen - 1] = '\0';
            umpi_strlcpy(val, cmdline, sizeof(val));
            UMPI__SET("command", val);
            val[0] = '\0';
            for (size_t off = strlen(cmdline) + 1; off < cmdlen; off += strlen(cmdline + off) + 1)
                umpi__append_word(val, cmdline + off);
            UMPI__SET("argv", val);
        }
        free(cmdline);
    } else {
        if (argv[0] != NULL) {
            umpi_strlcpy(val, argv[0], sizeof(val));
            UMPI__SET("command", val);
        }
        val[0] = '\0';
        for (int i = 1; i < argc && argv[i] != NULL; i++)
            umpi__append_word(val, argv[i]);
        UMPI__SET("argv", val);
    }
    if (umpi_is_initialized()) {
        snprintf(val, sizeof(val), "%d", umpi_global.size);
        UMPI__SET("maxprocs", val);
    }
    if (gethostname(val, sizeof(val)) == 0) {
        val[sizeof(val) - 1] = '\0';
        UMPI__SET("host", val);
    }
    struct utsname u;
    if (uname(&u) == 0)
        UMPI__SET("arch", u.machine);
    if (getcwd(val, sizeof(val)) != NULL)
        UMPI__SET("wdir", val);
    if (umpi_is_initialized() && umpi__thread_level_name(umpi_global.thread_level) != NULL)
        UMPI__SET("thread_level", umpi__thread_level_name(umpi_global.thread_level));
#undef UMPI__SET
    return st;
}

void umpi_info_env_setup(void)
{
    pthread_mutex_lock(&umpi__info_env.lock);
    umpi_info_list_clear(&umpi__info_env);
    /* Without memory MPI_INFO_ENV keeps what fitted: its keys are all optional. */
    if (umpi__info_env_fill(&umpi__info_env, 0, NULL) != UMPI_OK)
        umpi_debug(1, "MPI_INFO_ENV incomplete: out of memory");
    pthread_mutex_unlock(&umpi__info_env.lock);
}

int umpi_impl_info_create_env(int argc, char *argv[], MPI_Info *info)
{
    umpi_info_t *obj;
    int err = umpi__info_new(&obj);
    if (err != MPI_SUCCESS)
        return err;
    if (umpi__info_env_fill(obj, argc, argv) != UMPI_OK) {
        umpi__info_destroy(obj);
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot fill a new info object");
    }
    *info = obj->handle;
    return MPI_SUCCESS;
}
