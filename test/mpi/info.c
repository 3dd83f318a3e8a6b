/*
 * MPI_Info: every function and every error class (MPI 4.1 chapter 10), MPI_INFO_ENV and
 * MPI_Info_create_env (sec. 11.2.1), the info functions before MPI_Init (sec. 11.4.1), and the
 * mpi_minimum_memory_alignment hint of MPI_Alloc_mem.
 * Errors are returned through MPI_COMM_SELF's handler: info errors belong to no communicator.
 */
#include "mtest.h"

#include <stdint.h>

static int err_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* rc has class cls and, on umpi, a message that names the argument. */
#define CHECK_ERR(rc, cls, arg) CHECK_ERR2(rc, cls, cls, arg)
/* Invalid info handles: MPI_ERR_INFO; MPICH 4.0 says MPI_ERR_ARG. */
#define CHECK_BAD_INFO(rc, arg) CHECK_ERR2(rc, MPI_ERR_INFO, IS_UMPI ? MPI_ERR_INFO : MPI_ERR_ARG, arg)
#define CHECK_ERR2(rc, cls, alt, arg)                                                             \
    do {                                                                                          \
        int rc_ = (rc), c_ = err_class(rc_);                                                      \
        MT_CHECK(c_ == (cls) || c_ == (alt), "%s: class %d, expected %s", #rc, c_, #cls);         \
        if (IS_UMPI && rc_ != MPI_SUCCESS) {                                                         \
            char msg_[MPI_MAX_ERROR_STRING];                                                      \
            int len_;                                                                             \
            MPI_Error_string(rc_, msg_, &len_);                                                   \
            MT_CHECK(strstr(msg_, arg) != NULL, "%s: message \"%s\" does not name %s", #rc, msg_, \
                     arg);                                                                        \
        }                                                                                         \
    } while (0)

#ifdef UMPI_VERSION_STRING
#define IS_UMPI 1
#else
#define IS_UMPI 0
#endif

static void check_keys(MPI_Info info, int n, const char *const *keys, const char *what)
{
    int nkeys = -1;
    MPI_Info_get_nkeys(info, &nkeys);
    MT_CHECK(nkeys == n, "%s: %d keys, expected %d", what, nkeys, n);
    for (int i = 0; i < n && i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1] = "";
        MPI_Info_get_nthkey(info, i, key);
        MT_CHECK(strcmp(key, keys[i]) == 0, "%s: key %d is \"%s\", expected \"%s\"", what, i, key,
                 keys[i]);
    }
}

static void test_basics(void)
{
    MPI_Info info, dup;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag, len;

    MPI_Info_create(&info);
    MT_CHECK(info != MPI_INFO_NULL, "Info_create gave MPI_INFO_NULL");
    check_keys(info, 0, NULL, "new info");

    MPI_Info_set(info, "alpha", "1");
    MPI_Info_set(info, "beta", "two");
    MPI_Info_set(info, "gamma", "");
    MPI_Info_set(info, "alpha", "uno"); /* replaced in place: order unchanged */
    check_keys(info, 3, (const char *const[]){ "alpha", "beta", "gamma" }, "after set");

    /* MPI_Info_get: valuelen excludes the NUL, the value is cut to it */
    flag = 0;
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, value, &flag);
    MT_CHECK(flag && strcmp(value, "uno") == 0, "get alpha: flag %d value \"%s\"", flag, value);
    if (IS_UMPI) { /* MPI 4.1 truncates; MPICH 4.0 reports an error instead */
        strcpy(value, "XXXX");
        MPI_Info_get(info, "alpha", 2, value, &flag);
        MT_CHECK(flag && strcmp(value, "un") == 0, "get alpha cut to 2: \"%s\"", value);
    }
    strcpy(value, "same");
    MPI_Info_get(info, "delta", MPI_MAX_INFO_VAL, value, &flag);
    MT_CHECK(!flag && strcmp(value, "same") == 0, "get of an absent key: flag %d value \"%s\"",
             flag, value);
    MPI_Info_get(info, "gamma", MPI_MAX_INFO_VAL, value, &flag);
    MT_CHECK(flag && value[0] == '\0', "empty value: flag %d value \"%s\"", flag, value);

    /* MPI_Info_get_valuelen: without the NUL */
    MPI_Info_get_valuelen(info, "beta", &len, &flag);
    MT_CHECK(flag && len == 3, "valuelen of beta: flag %d len %d", flag, len);
    len = 77;
    MPI_Info_get_valuelen(info, "delta", &len, &flag);
    MT_CHECK(!flag && len == 77, "valuelen of an absent key: flag %d len %d", flag, len);

    /* MPI_Info_get_string: buflen counts the NUL both ways */
    int buflen = 0;
    strcpy(value, "same");
    MPI_Info_get_string(info, "beta", &buflen, value, &flag);
    MT_CHECK(flag && buflen == 4 && strcmp(value, "same") == 0,
             "get_string size query: flag %d buflen %d value \"%s\"", flag, buflen, value);
    if (IS_UMPI) { /* umpi also takes NULL for value then; MPICH 4.0 does not */
        buflen = 0;
        MPI_Info_get_string(info, "beta", &buflen, NULL, &flag);
        MT_CHECK(flag && buflen == 4, "get_string query with NULL: flag %d buflen %d", flag, buflen);
    }
    buflen = 4;
    strcpy(value, "XXXXXX");
    MPI_Info_get_string(info, "beta", &buflen, value, &flag);
    MT_CHECK(flag && buflen == 4 && strcmp(value, "two") == 0, "get_string exact: %d \"%s\"",
             buflen, value);
    buflen = 3;
    strcpy(value, "XXXXXX");
    MPI_Info_get_string(info, "beta", &buflen, value, &flag);
    MT_CHECK(flag && buflen == 4 && strcmp(value, "tw") == 0, "get_string cut: %d \"%s\"", buflen,
             value);
    buflen = 1;
    MPI_Info_get_string(info, "gamma", &buflen, value, &flag);
    MT_CHECK(flag && buflen == 1 && value[0] == '\0', "get_string empty value: %d", buflen);
    buflen = 10;
    strcpy(value, "same");
    MPI_Info_get_string(info, "delta", &buflen, value, &flag);
    MT_CHECK(!flag && strcmp(value, "same") == 0, "get_string absent key: flag %d \"%s\"", flag,
             value);

    /* a key and a value of the largest size */
    char longkey[MPI_MAX_INFO_KEY + 1], longval[MPI_MAX_INFO_VAL + 1];
    /* MPICH 4.0 cuts a key of MPI_MAX_INFO_KEY characters by one: only umpi tries the full size */
    int keymax = IS_UMPI ? MPI_MAX_INFO_KEY : MPI_MAX_INFO_KEY - 1;
    memset(longkey, 'k', (size_t) keymax);
    longkey[keymax] = '\0';
    memset(longval, 'v', MPI_MAX_INFO_VAL);
    longval[MPI_MAX_INFO_VAL] = '\0';
    MT_CHECK(MPI_Info_set(info, longkey, longval) == MPI_SUCCESS, "longest key and value");
    MPI_Info_get_valuelen(info, longkey, &len, &flag);
    MT_CHECK(flag && len == MPI_MAX_INFO_VAL, "longest value: len %d", len);
    char key[MPI_MAX_INFO_KEY + 1];
    MPI_Info_get_nthkey(info, 3, key);
    MT_CHECK(strcmp(key, longkey) == 0, "longest key back from nthkey");

    /* dup: same content, then independent */
    MPI_Info_dup(info, &dup);
    MT_CHECK(dup != info && dup != MPI_INFO_NULL, "Info_dup handle");
    check_keys(dup, 4, (const char *const[]){ "alpha", "beta", "gamma", longkey }, "dup");
    MPI_Info_delete(info, "beta");
    MPI_Info_set(dup, "alpha", "changed");
    MPI_Info_set(dup, "epsilon", "5");
    check_keys(info, 3, (const char *const[]){ "alpha", "gamma", longkey }, "original after delete");
    check_keys(dup, 5, (const char *const[]){ "alpha", "beta", "gamma", longkey, "epsilon" },
               "dup after changes");
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, value, &flag);
    MT_CHECK(flag && strcmp(value, "uno") == 0, "original unchanged by the dup: \"%s\"", value);

    /* deleting the first key moves the others up */
    MPI_Info_delete(info, "alpha");
    check_keys(info, 2, (const char *const[]){ "gamma", longkey }, "after deleting the first key");
    MPI_Info_set(info, "alpha", "back");
    check_keys(info, 3, (const char *const[]){ "gamma", longkey, "alpha" }, "re-set goes last");

    MPI_Info_free(&info);
    MT_CHECK(info == MPI_INFO_NULL, "Info_free sets MPI_INFO_NULL");
    MPI_Info_free(&dup);
    MT_CHECK(dup == MPI_INFO_NULL, "Info_free sets MPI_INFO_NULL (dup)");

    /* many objects and keys: handles are reused, nothing leaks */
    for (int round = 0; round < 3; round++) {
        MPI_Info many[50];
        for (int i = 0; i < 50; i++) {
            MPI_Info_create(&many[i]);
            for (int k = 0; k < 20; k++) {
                char kb[16], vb[16];
                snprintf(kb, sizeof(kb), "k%d", k);
                snprintf(vb, sizeof(vb), "%d", i * k);
                MPI_Info_set(many[i], kb, vb);
            }
        }
        for (int i = 0; i < 50; i++) {
            MPI_Info_get(many[i], "k7", MPI_MAX_INFO_VAL, value, &flag);
            MT_CHECK(flag && atoi(value) == i * 7, "many[%d] k7 = %s", i, value);
            MPI_Info_free(&many[i]);
        }
    }
}

static void test_env(int argc, char **argv)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag, nkeys;

    /* MPI_INFO_ENV: which keys exist is up to the implementation; those umpi gives are checked */
    MT_CHECK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys) == MPI_SUCCESS, "nkeys of MPI_INFO_ENV");
    MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, value, &flag);
    if (IS_UMPI || flag)
        MT_CHECK(flag && strstr(value, "info") != NULL, "MPI_INFO_ENV command: flag %d \"%s\"",
                 flag, value);
    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, value, &flag);
    if (IS_UMPI || flag)
        MT_CHECK(flag && atoi(value) == mt_size, "MPI_INFO_ENV maxprocs: flag %d \"%s\"", flag,
                 value);
    if (IS_UMPI) {
        MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, value, &flag);
        MT_CHECK(flag && strcmp(value, "MPI_THREAD_SINGLE") == 0, "thread_level \"%s\"", value);
        MPI_Info_get(MPI_INFO_ENV, "wdir", MPI_MAX_INFO_VAL, value, &flag);
        MT_CHECK(flag && value[0] == '/', "wdir \"%s\"", value);
        MPI_Info_get(MPI_INFO_ENV, "argv", MPI_MAX_INFO_VAL, value, &flag);
        MT_CHECK(flag && strcmp(value, "a1 a2") == 0, "MPI_INFO_ENV argv \"%s\"", value);
        MT_CHECK(nkeys >= 6, "MPI_INFO_ENV has %d keys", nkeys);
    }

    /* MPI_Info_create_env: a new, modifiable object */
    MPI_Info env;
    MT_CHECK(MPI_Info_create_env(argc, argv, &env) == MPI_SUCCESS, "Info_create_env");
    MT_CHECK(env != MPI_INFO_NULL && env != MPI_INFO_ENV, "Info_create_env handle");
    if (IS_UMPI) {
        MPI_Info_get(env, "argv", MPI_MAX_INFO_VAL, value, &flag);
        MT_CHECK(flag && strcmp(value, "a1 a2") == 0, "create_env argv \"%s\"", value);
        MPI_Info_get(env, "command", MPI_MAX_INFO_VAL, value, &flag);
        MT_CHECK(flag && strcmp(value, argv[0]) == 0, "create_env command \"%s\"", value);
    }
    MT_CHECK(MPI_Info_set(env, "mine", "yes") == MPI_SUCCESS, "set on create_env's info");
    MPI_Info_free(&env);
    MT_CHECK(MPI_Info_create_env(0, NULL, &env) == MPI_SUCCESS, "Info_create_env(0, NULL)");
    MPI_Info_free(&env);

    /* a copy of MPI_INFO_ENV is the user's */
    MPI_Info copy;
    MPI_Info_dup(MPI_INFO_ENV, &copy);
    int n2;
    MPI_Info_get_nkeys(copy, &n2);
    MT_CHECK(n2 == nkeys, "dup of MPI_INFO_ENV: %d keys, expected %d", n2, nkeys);
    MPI_Info_set(copy, "extra", "1");
    MPI_Info_get_nkeys(MPI_INFO_ENV, &n2);
    MT_CHECK(n2 == nkeys, "MPI_INFO_ENV changed by its copy");
    MPI_Info_free(&copy);
}

static void test_alloc_mem(void)
{
    MPI_Info info;
    void *p = NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096");
    MT_CHECK(MPI_Alloc_mem(10000, info, &p) == MPI_SUCCESS && p != NULL, "Alloc_mem with a hint");
    if (IS_UMPI) /* a hint: MPIs before 4.1 may ignore it */
        MT_CHECK(((uintptr_t) p & 4095) == 0, "alignment hint not honoured: %p", p);
    memset(p, 1, 10000);
    MPI_Free_mem(p);
    if (IS_UMPI) { /* a bad value is ignored (MPICH 4.0 divides by zero) */
        MPI_Info_set(info, "mpi_minimum_memory_alignment", "garbage");
        MT_CHECK(MPI_Alloc_mem(100, info, &p) == MPI_SUCCESS && p != NULL, "Alloc_mem, bad hint");
        MPI_Free_mem(p);
    }
    MPI_Info_free(&info);
}

static void test_errors(void)
{
    MPI_Info info, bad;
    char value[MPI_MAX_INFO_VAL + 2], key[MPI_MAX_INFO_KEY + 2];
    int flag, n;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info_create(&info);
    MPI_Info_set(info, "a", "1");

    /* MPI_ERR_INFO_KEY: empty or too long keys */
    CHECK_ERR(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY, "key");
    memset(key, 'k', MPI_MAX_INFO_KEY + 1);
    key[MPI_MAX_INFO_KEY + 1] = '\0';
    CHECK_ERR(MPI_Info_set(info, key, "x"), MPI_ERR_INFO_KEY, "key");
    CHECK_ERR(MPI_Info_get(info, key, 10, value, &flag), MPI_ERR_INFO_KEY, "key");
    CHECK_ERR(MPI_Info_get_valuelen(info, key, &n, &flag), MPI_ERR_INFO_KEY, "key");
    CHECK_ERR(MPI_Info_delete(info, ""), MPI_ERR_INFO_KEY, "key");
    n = 10;
    CHECK_ERR(MPI_Info_get_string(info, key, &n, value, &flag), MPI_ERR_INFO_KEY, "key");

    /* MPI_ERR_INFO_VALUE: too long a value */
    memset(value, 'v', MPI_MAX_INFO_VAL + 1);
    value[MPI_MAX_INFO_VAL + 1] = '\0';
    CHECK_ERR(MPI_Info_set(info, "b", value), MPI_ERR_INFO_VALUE, "value");

    /* MPI_ERR_INFO_NOKEY: deleting a key that is not there */
    CHECK_ERR(MPI_Info_delete(info, "nothere"), MPI_ERR_INFO_NOKEY, "nothere");

    /* MPI_ERR_ARG: bad n, negative lengths */
    CHECK_ERR(MPI_Info_get_nthkey(info, 1, key), MPI_ERR_ARG, "'n'");
    CHECK_ERR(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG, "'n'");
    CHECK_ERR(MPI_Info_get(info, "a", -1, value, &flag), MPI_ERR_ARG, "valuelen");
    n = -1;
    CHECK_ERR(MPI_Info_get_string(info, "a", &n, value, &flag), MPI_ERR_ARG, "buflen");

    /* MPI_ERR_INFO: MPI_INFO_NULL, freed and made-up handles */
    MPI_Info_dup(info, &bad);
    MPI_Info_free(&bad);
    MPI_Info freed = bad; /* MPI_INFO_NULL now */
    CHECK_BAD_INFO(MPI_Info_set(MPI_INFO_NULL, "a", "1"), "info");
    CHECK_BAD_INFO(MPI_Info_get_nkeys(freed, &n), "info");
    CHECK_BAD_INFO(MPI_Info_dup(MPI_INFO_NULL, &bad), "info");
    CHECK_BAD_INFO(MPI_Info_free(&freed), "info");
    CHECK_BAD_INFO(MPI_Info_get(MPI_INFO_NULL, "a", 10, value, &flag), "info");
    CHECK_BAD_INFO(MPI_Info_get_valuelen(MPI_INFO_NULL, "a", &n, &flag), "info");
    CHECK_BAD_INFO(MPI_Info_get_nthkey(MPI_INFO_NULL, 0, key), "info");
    CHECK_BAD_INFO(MPI_Info_delete(MPI_INFO_NULL, "a"), "info");
    n = 10;
    CHECK_BAD_INFO(MPI_Info_get_string(MPI_INFO_NULL, "a", &n, value, &flag), "info");
    if (IS_UMPI) {
        /* made-up handles, and MPI_INFO_ENV, which umpi keeps read-only */
        CHECK_BAD_INFO(MPI_Info_get_nkeys((MPI_Info) 0x9c0fffff, &n), "info");
        CHECK_BAD_INFO(MPI_Alloc_mem(10, (MPI_Info) 0x9c0fffff, value), "info");
        CHECK_BAD_INFO(MPI_Info_set(MPI_INFO_ENV, "a", "1"), "MPI_INFO_ENV");
        CHECK_BAD_INFO(MPI_Info_delete(MPI_INFO_ENV, "command"), "MPI_INFO_ENV");
        MPI_Info env = MPI_INFO_ENV;
        CHECK_BAD_INFO(MPI_Info_free(&env), "MPI_INFO_ENV");
    }
    /* the object is intact after all that */
    check_keys(info, 1, (const char *const[]){ "a" }, "after the errors");
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    /* MPI 4: info objects may be made before MPI_Init */
    MPI_Info early;
    MT_CHECK(MPI_Info_create(&early) == MPI_SUCCESS, "Info_create before MPI_Init");
    MPI_Info_set(early, "early", "bird");

    mt_init(&argc, &argv);
    int flag;
    char value[16];
    MPI_Info_get(early, "early", sizeof(value) - 1, value, &flag);
    MT_CHECK(flag && strcmp(value, "bird") == 0, "info from before MPI_Init");
    MPI_Info_free(&early);

    test_basics();
    test_env(argc, argv);
    test_alloc_mem();
    test_errors();

    /* every rank sees the same sizes: exchange the key count of MPI_INFO_ENV with rank 0 */
    int nkeys, other;
    MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys);
    if (mt_rank == 0) {
        for (int r = 1; r < mt_size; r++) {
            MPI_Recv(&other, 1, MPI_INT, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MT_CHECK(other == nkeys, "rank %d has %d keys in MPI_INFO_ENV, rank 0 %d", r, other,
                     nkeys);
        }
    } else {
        MPI_Send(&nkeys, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    return mt_finish();
}
