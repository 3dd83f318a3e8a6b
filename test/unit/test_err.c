/*
 * Unit test of MPI error codes and error handlers (src/core/err.c, errhandler.c, attr.c):
 * code layout, classes, strings, the message ring and its wrap-around, user classes/codes/strings,
 * MPI_LASTUSEDCODE, handler dispatch (RETURN, user, fatal in a child process) and refcounting.
 */
#include "core/umpi_err.h"
#include "core/umpi_obj.h"
#include "mpi/gen/umpi_impl.h"
#include "unit.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int user_calls, user_last_code;
static MPI_Comm user_last_comm;

static void user_handler(MPI_Comm *comm, int *code, ...)
{
    user_calls++;
    user_last_code = *code;
    user_last_comm = *comm;
}

static const char *errstr(int code)
{
    static char buf[MPI_MAX_ERROR_STRING];
    int len = -1;
    int rc = umpi_impl_error_string(code, buf, &len);
    if (rc != MPI_SUCCESS)
        return "(error_string failed)";
    if (len != (int) strlen(buf))
        return "(resultlen wrong)";
    return buf;
}

/* Runs fn in a child; returns its exit status and what it wrote to stderr. */
static int in_child(void (*fn)(void), char *out, size_t outlen)
{
    int pfd[2];
    if (pipe(pfd) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        fn();
        _exit(99); /* fn was expected not to return */
    }
    close(pfd[1]);
    size_t n = 0;
    ssize_t r;
    while (n < outlen - 1 && (r = read(pfd[0], out + n, outlen - 1 - n)) > 0)
        n += (size_t) r;
    out[n] = '\0';
    close(pfd[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void fatal_send(void)
{
    int code = umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument '%s'", 7, "dest");
    umpi_err_dispatch("MPI_Send", MPI_COMM_WORLD, code); /* world has ERRORS_ARE_FATAL */
}

static void fatal_call_errhandler(void)
{
    umpi_impl_comm_call_errhandler(&umpi_comm_world, MPI_ERR_TAG);
}

int main(void)
{
    char out[4096];
    int cls, len;

    SECTION("predefined classes") {
        CHECK(umpi_impl_error_class(MPI_ERR_TRUNCATE, &cls) == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE,
              "class of a class is itself");
        CHECK(umpi_impl_error_class(MPI_SUCCESS, &cls) == MPI_SUCCESS && cls == MPI_SUCCESS, "success");
        CHECK(strcmp(errstr(MPI_ERR_RANK), "MPI_ERR_RANK: invalid rank") == 0, "got '%s'", errstr(MPI_ERR_RANK));
        CHECK(strstr(errstr(MPI_SUCCESS), "MPI_SUCCESS") != NULL, "got '%s'", errstr(MPI_SUCCESS));
        int ok = 1;
        for (int c = 0; c <= MPI_ERR_VALUE_TOO_LARGE; c++)
            ok &= c == 54 /* unassigned in MPICH's numbering */ ||
                  (umpi_impl_error_class(c, &cls) == MPI_SUCCESS && cls == c &&
                   strncmp(errstr(c), "MPI_", 4) == 0);
        CHECK(ok, "every class 0..MPI_ERR_VALUE_TOO_LARGE has a class and a string");
        CHECK(umpi_err_class(umpi_impl_error_class(54, &cls)) == MPI_ERR_ARG, "54 is no class");
    }

    SECTION("code layout and ring messages") {
        int code = umpi_err_create(MPI_ERR_COUNT, "negative count %d in argument '%s'", -3, "count");
        CHECK(code > MPI_ERR_LASTCODE / 2 || code > UMPI_ERR_CLASS_MASK, "code 0x%x is not a bare class", code);
        CHECK(code <= MPI_ERR_LASTCODE && code > 0, "code 0x%x in range", code);
        CHECK((code & UMPI_ERR_USER_BIT) == 0, "not a user code");
        CHECK(umpi_err_class(code) == MPI_ERR_COUNT, "class %d", umpi_err_class(code));
        CHECK(umpi_impl_error_class(code, &cls) == MPI_SUCCESS && cls == MPI_ERR_COUNT, "Error_class");
        CHECK(strcmp(errstr(code), "negative count -3 in argument 'count' [MPI_ERR_COUNT]") == 0,
              "before dispatch: '%s'", errstr(code));
        umpi_comm_world.errhandler = MPI_ERRORS_RETURN;
        CHECK(umpi_err_dispatch("MPI_Recv", MPI_COMM_WORLD, code) == code, "RETURN gives the code back");
        CHECK(strcmp(errstr(code), "MPI_Recv: negative count -3 in argument 'count' [MPI_ERR_COUNT]") == 0,
              "after dispatch: '%s'", errstr(code));
        /* the innermost call keeps the name */
        umpi_err_dispatch("MPI_Outer", MPI_COMM_WORLD, code);
        CHECK(strncmp(errstr(code), "MPI_Recv:", 9) == 0, "'%s'", errstr(code));
        CHECK(umpi_err_create(MPI_SUCCESS, "nothing") == MPI_SUCCESS, "creating success is success");
        int empty = umpi_err_create(MPI_ERR_TAG, "%s", "");
        CHECK(strcmp(errstr(empty), "MPI_ERR_TAG: invalid tag") == 0, "no detail: '%s'", errstr(empty));
    }

    SECTION("ring wrap-around") {
        int old = umpi_err_create(MPI_ERR_BUFFER, "the oldest message");
        CHECK(strstr(errstr(old), "the oldest message") != NULL, "fresh: '%s'", errstr(old));
        int last = 0;
        for (int i = 0; i < 300; i++)
            last = umpi_err_create(MPI_ERR_OTHER, "filler %d", i);
        CHECK(strcmp(errstr(old), "MPI_ERR_BUFFER: invalid buffer pointer") == 0,
              "overwritten code falls back to its class: '%s'", errstr(old));
        CHECK(umpi_impl_error_class(old, &cls) == MPI_SUCCESS && cls == MPI_ERR_BUFFER,
              "overwritten code keeps its class");
        CHECK(strstr(errstr(last), "filler 299") != NULL, "'%s'", errstr(last));
        /* wrap of the id space itself: ids stay unique and nonzero */
        int prev = last, distinct = 1;
        for (int i = 0; i < (1 << 19) + 10; i++) {
            int c = umpi_err_create(MPI_ERR_ARG, "x");
            distinct &= c != prev && (c >> UMPI_ERR_CLASS_BITS) != 0;
            prev = c;
        }
        CHECK(distinct, "ids wrap without producing a bare class");
        CHECK(strcmp(errstr(prev), "x [MPI_ERR_ARG]") == 0, "'%s'", errstr(prev));
    }

    SECTION("internal statuses: the class and the cause") {
        umpi_status_msg("no address for world rank 3: rank 3 published no key 'k'");
        int code = umpi_err_from_status(UMPI_ERR_UNREACHABLE, "send to rank 3 (world rank 3) failed");
        CHECK(umpi_err_class(code) == MPI_ERR_OTHER, "unreachable peer: class %d", umpi_err_class(code));
        CHECK(strcmp(errstr(code), "send to rank 3 (world rank 3) failed: peer unreachable: no address for world "
                                   "rank 3: rank 3 published no key 'k' [MPI_ERR_OTHER]") == 0, "'%s'", errstr(code));
        umpi_status_msg("rank 0 published no key 'k'");
        code = umpi_err_from_status(UMPI_ERR_NOT_FOUND, "agreeing");
        CHECK(umpi_err_class(code) == MPI_ERR_OTHER, "a key the process manager lacks is not the caller's argument: "
              "class %d", umpi_err_class(code));
        umpi_status_msg("x");
        CHECK(umpi_err_class(umpi_err_from_status(UMPI_ERR_TRUNCATE, "recv")) == MPI_ERR_TRUNCATE, "truncation");
    }

    SECTION("long messages are cut, not lost") {
        char big[2000];
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        int code = umpi_err_create(MPI_ERR_ARG, "%s", big);
        CHECK(strlen(errstr(code)) == MPI_MAX_ERROR_STRING - 1, "len %zu", strlen(errstr(code)));
    }

    SECTION("invalid codes") {
        CHECK(umpi_err_class(umpi_impl_error_class(-5, &cls)) == MPI_ERR_ARG, "negative code");
        CHECK(umpi_err_class(umpi_impl_error_class(UMPI_ERR_FIRST_USER_CLASS + 500, &cls)) == MPI_ERR_ARG,
              "unknown user class");
        CHECK(umpi_err_class(umpi_impl_error_class(UMPI_ERR_USER_BIT | (77 << 10) | 5, &cls)) == MPI_ERR_ARG,
              "unknown user code");
        CHECK(umpi_err_string(99, out, &len) == MPI_ERR_ARG, "class 99 is not defined");
    }

    SECTION("user classes, codes, strings") {
        int last0 = 0, flag = 0, *pv = NULL;
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_LASTUSEDCODE, &pv, &flag) == MPI_SUCCESS && flag,
              "LASTUSEDCODE present");
        last0 = *pv;
        CHECK(last0 >= MPI_ERR_VALUE_TOO_LARGE, "initial LASTUSEDCODE %d covers predefined classes", last0);
        int uc, uc2, code, code2;
        CHECK(umpi_impl_add_error_class(&uc) == MPI_SUCCESS && uc == UMPI_ERR_FIRST_USER_CLASS, "class %d", uc);
        CHECK(umpi_impl_add_error_class(&uc2) == MPI_SUCCESS && uc2 == uc + 1, "class %d", uc2);
        CHECK(strcmp(errstr(uc), "") == 0, "class without string: '%s'", errstr(uc));
        CHECK(umpi_impl_add_error_string(uc, "my class") == MPI_SUCCESS, "string of a user class");
        CHECK(strcmp(errstr(uc), "my class") == 0, "'%s'", errstr(uc));
        CHECK(umpi_impl_add_error_code(uc, &code) == MPI_SUCCESS, "code of a user class");
        CHECK(umpi_impl_error_class(code, &cls) == MPI_SUCCESS && cls == uc, "its class %d", cls);
        CHECK(strcmp(errstr(code), "") == 0, "code without string");
        CHECK(umpi_impl_add_error_string(code, "my code") == MPI_SUCCESS, "string of a user code");
        CHECK(umpi_impl_add_error_string(code, "my code, changed") == MPI_SUCCESS, "changed");
        CHECK(strcmp(errstr(code), "my code, changed") == 0, "'%s'", errstr(code));
        CHECK(umpi_impl_add_error_code(MPI_ERR_ARG, &code2) == MPI_SUCCESS, "code of a predefined class");
        CHECK(code2 != code && umpi_err_class(code2) == MPI_ERR_ARG, "distinct code");
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_LASTUSEDCODE, &pv, &flag) == MPI_SUCCESS && flag &&
              *pv >= code && *pv >= code2 && *pv >= uc2, "LASTUSEDCODE %d >= codes %d %d", *pv, code, code2);
        CHECK(umpi_err_class(umpi_impl_add_error_string(MPI_ERR_ARG, "no")) == MPI_ERR_ARG,
              "predefined class string cannot change");
        CHECK(strcmp(errstr(MPI_ERR_ARG), "MPI_ERR_ARG: invalid argument") == 0, "unchanged");
        CHECK(umpi_err_class(umpi_impl_add_error_code(UMPI_ERR_FIRST_USER_CLASS + 300, &code2)) == MPI_ERR_ARG,
              "code of an unknown class");
        char longs[MPI_MAX_ERROR_STRING + 1];
        memset(longs, 'b', sizeof(longs) - 1);
        longs[sizeof(longs) - 1] = '\0';
        CHECK(umpi_err_class(umpi_impl_add_error_string(code, longs)) == MPI_ERR_ARG, "too long a string");
        /* a ring code of a user class names the class string */
        int rc = umpi_err_create(uc, "detail");
        CHECK(strcmp(errstr(rc), "detail [my class]") == 0, "'%s'", errstr(rc));
    }

    SECTION("user error handler") {
        MPI_Errhandler eh, got;
        CHECK(umpi_impl_comm_create_errhandler(user_handler, &eh) == MPI_SUCCESS, "create");
        CHECK(UMPI_HANDLE_KIND(eh) == UMPI_KIND_DIRECT && UMPI_HANDLE_OBJ(eh) == UMPI_OBJ_ERRHANDLER, "0x%x", eh);
        umpi_errhandler_t *ehp = umpi_errhandler_get(eh);
        CHECK(ehp != NULL && ehp->refcount == 1, "one reference");
        CHECK(umpi_impl_comm_set_errhandler(&umpi_comm_self, eh) == MPI_SUCCESS && ehp->refcount == 2, "set");
        int code = umpi_err_create(MPI_ERR_TAG, "bad tag");
        /* no communicator argument: MPI_COMM_SELF's handler */
        CHECK(umpi_err_dispatch("MPI_Wait", MPI_COMM_NULL, code) == code, "dispatch returns the code");
        CHECK(user_calls == 1 && user_last_code == code && user_last_comm == MPI_COMM_SELF, "handler called");
        /* a code that names its communicator goes to that one's handler */
        umpi_comm_world.errhandler = MPI_ERRORS_RETURN;
        int code2 = umpi_err_create_comm(MPI_COMM_SELF, MPI_ERR_TRUNCATE, "truncated");
        umpi_err_dispatch("MPI_Wait", MPI_COMM_WORLD, code2);
        CHECK(user_calls == 2 && user_last_code == code2, "create_comm routes to its comm");
        CHECK(umpi_impl_comm_call_errhandler(&umpi_comm_self, 12345) == MPI_SUCCESS, "call_errhandler");
        CHECK(user_calls == 3 && user_last_code == 12345, "call_errhandler invoked it");
        CHECK(umpi_impl_comm_get_errhandler(&umpi_comm_self, &got) == MPI_SUCCESS && got == eh &&
              ehp->refcount == 3, "get gives a new reference");
        CHECK(umpi_impl_errhandler_free(&got) == MPI_SUCCESS && got == MPI_ERRHANDLER_NULL, "free");
        CHECK(umpi_impl_errhandler_free(&eh) == MPI_SUCCESS && ehp->refcount == 1, "user's reference gone");
        CHECK(umpi_errhandler_get(UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_ERRHANDLER,
                                                   UMPI_HANDLE_INDEX(ehp->handle))) == ehp,
              "still alive while the comm uses it");
        MPI_Errhandler h = ehp->handle;
        CHECK(umpi_impl_comm_set_errhandler(&umpi_comm_self, MPI_ERRORS_RETURN) == MPI_SUCCESS, "reset");
        CHECK(umpi_errhandler_get(h) == NULL, "freed with its last user");
        MPI_Errhandler b = MPI_ERRORS_RETURN;
        CHECK(umpi_impl_errhandler_free(&b) == MPI_SUCCESS && b == MPI_ERRHANDLER_NULL, "freeing a builtin");
        CHECK(umpi_errhandler_get(MPI_ERRORS_RETURN) != NULL, "builtin survives");
        CHECK(umpi_errhandler_get(MPI_ERRHANDLER_NULL) == NULL, "null handle");
        CHECK(umpi_impl_comm_call_errhandler(&umpi_comm_self, MPI_ERR_TAG) == MPI_SUCCESS, "RETURN handler");
        MPI_Errhandler eh2;
        umpi_impl_comm_create_errhandler(user_handler, &eh2);
        CHECK(UMPI_HANDLE_INDEX(eh2) == UMPI_HANDLE_INDEX(h), "slot reused");
        umpi_impl_errhandler_free(&eh2);
    }

    SECTION("fatal handler") {
        umpi_comm_world.errhandler = MPI_ERRORS_ARE_FATAL;
        int st = in_child(fatal_send, out, sizeof(out));
        CHECK(st == 1, "exit status %d", st);
        CHECK(strstr(out, "umpi: rank 0: MPI_Send: invalid rank 7 in argument 'dest' [MPI_ERR_RANK]") != NULL,
              "message: '%s'", out);
        st = in_child(fatal_call_errhandler, out, sizeof(out));
        CHECK(st == 1 && strstr(out, "MPI_Comm_call_errhandler: MPI_ERR_TAG: invalid tag") != NULL,
              "status %d, message '%s'", st, out);
        umpi_comm_world.errhandler = MPI_ERRORS_ABORT;
        st = in_child(fatal_send, out, sizeof(out));
        CHECK(st == 1 && strstr(out, "MPI_Send:") != NULL, "ERRORS_ABORT: status %d '%s'", st, out);
    }

    SECTION("status translation") {
        umpi_status_msg("ucp_tag_send_nbx: %s", "Destination is unreachable");
        int code = umpi_err_from_status(UMPI_ERR_TRANSPORT, "sending to rank 3");
        CHECK(umpi_err_class(code) == MPI_ERR_OTHER, "class");
        CHECK(strstr(errstr(code), "sending to rank 3: transport (UCX) error: ucp_tag_send_nbx: "
                     "Destination is unreachable") != NULL, "'%s'", errstr(code));
        CHECK(umpi_err_from_status(UMPI_OK, "x") == MPI_SUCCESS, "OK");
        CHECK(umpi_err_class(umpi_err_from_status(UMPI_ERR_TRUNCATE, "x")) == MPI_ERR_TRUNCATE, "truncate");
    }

    SECTION("predefined attributes") {
        int flag = -1, *v = NULL;
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_TAG_UB, &v, &flag) == MPI_SUCCESS && flag &&
              *v == (1 << 23) - 1 && *v >= 32767, "TAG_UB");
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_HOST, &v, &flag) == MPI_SUCCESS && flag &&
              *v == MPI_PROC_NULL, "HOST");
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_IO, &v, &flag) == MPI_SUCCESS && flag &&
              *v == MPI_ANY_SOURCE, "IO");
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_WTIME_IS_GLOBAL, &v, &flag) == MPI_SUCCESS &&
              flag && *v == 0, "WTIME_IS_GLOBAL");
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_UNIVERSE_SIZE, &v, &flag) == MPI_SUCCESS &&
              flag && *v == 4, "UNIVERSE_SIZE");
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_APPNUM, &v, &flag) == MPI_SUCCESS && flag &&
              *v == 0, "APPNUM");
        umpi_global.universe_size = -1;
        umpi_global.appnum = -1;
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_UNIVERSE_SIZE, &v, &flag) == MPI_SUCCESS &&
              !flag, "UNIVERSE_SIZE unknown");
        CHECK(umpi_impl_comm_get_attr(&umpi_comm_world, MPI_APPNUM, &v, &flag) == MPI_SUCCESS && !flag,
              "APPNUM unknown");
        int code = umpi_impl_comm_get_attr(&umpi_comm_world, 0x12345, &v, &flag);
        CHECK(umpi_err_class(code) == MPI_ERR_KEYVAL && strstr(errstr(code), "0x12345"), "'%s'", errstr(code));
    }
    return unit_done("test_err");
}
