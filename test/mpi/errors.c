/*
 * Error classes and strings, user-added classes/codes/strings, and communicator error handlers:
 * create, set, get, free, call, and a user handler invoked by a failing call.
 */
#include "mtest.h"

#define CLASS(c) { c, #c }
static const struct { int cls; const char *name; } classes[] = {
    CLASS(MPI_SUCCESS), CLASS(MPI_ERR_BUFFER), CLASS(MPI_ERR_COUNT), CLASS(MPI_ERR_TYPE),
    CLASS(MPI_ERR_TAG), CLASS(MPI_ERR_COMM), CLASS(MPI_ERR_RANK), CLASS(MPI_ERR_REQUEST),
    CLASS(MPI_ERR_ROOT), CLASS(MPI_ERR_GROUP), CLASS(MPI_ERR_OP), CLASS(MPI_ERR_TOPOLOGY),
    CLASS(MPI_ERR_DIMS), CLASS(MPI_ERR_ARG), CLASS(MPI_ERR_UNKNOWN), CLASS(MPI_ERR_TRUNCATE),
    CLASS(MPI_ERR_OTHER), CLASS(MPI_ERR_INTERN), CLASS(MPI_ERR_PENDING), CLASS(MPI_ERR_IN_STATUS),
    CLASS(MPI_ERR_ACCESS), CLASS(MPI_ERR_AMODE), CLASS(MPI_ERR_ASSERT), CLASS(MPI_ERR_BAD_FILE),
    CLASS(MPI_ERR_BASE), CLASS(MPI_ERR_CONVERSION), CLASS(MPI_ERR_DISP), CLASS(MPI_ERR_DUP_DATAREP),
    CLASS(MPI_ERR_FILE_EXISTS), CLASS(MPI_ERR_FILE_IN_USE), CLASS(MPI_ERR_FILE), CLASS(MPI_ERR_INFO_KEY),
    CLASS(MPI_ERR_INFO_NOKEY), CLASS(MPI_ERR_INFO_VALUE), CLASS(MPI_ERR_INFO), CLASS(MPI_ERR_IO),
    CLASS(MPI_ERR_KEYVAL), CLASS(MPI_ERR_LOCKTYPE), CLASS(MPI_ERR_NAME), CLASS(MPI_ERR_NO_MEM),
    CLASS(MPI_ERR_NOT_SAME), CLASS(MPI_ERR_NO_SPACE), CLASS(MPI_ERR_NO_SUCH_FILE), CLASS(MPI_ERR_PORT),
    CLASS(MPI_ERR_QUOTA), CLASS(MPI_ERR_READ_ONLY), CLASS(MPI_ERR_RMA_ATTACH), CLASS(MPI_ERR_RMA_CONFLICT),
    CLASS(MPI_ERR_RMA_RANGE), CLASS(MPI_ERR_RMA_SHARED), CLASS(MPI_ERR_RMA_SYNC), CLASS(MPI_ERR_RMA_FLAVOR),
    CLASS(MPI_ERR_SERVICE), CLASS(MPI_ERR_SIZE), CLASS(MPI_ERR_SPAWN), CLASS(MPI_ERR_UNSUPPORTED_DATAREP),
    CLASS(MPI_ERR_UNSUPPORTED_OPERATION), CLASS(MPI_ERR_WIN),
    /* MPI 4.0 and 4.1 classes, where the header has them. */
#ifdef MPI_ERR_SESSION
    CLASS(MPI_ERR_SESSION),
#endif
#ifdef MPI_ERR_PROC_ABORTED
    CLASS(MPI_ERR_PROC_ABORTED),
#endif
#ifdef MPI_ERR_VALUE_TOO_LARGE
    CLASS(MPI_ERR_VALUE_TOO_LARGE),
#endif
#ifdef MPI_ERR_ERRHANDLER
    CLASS(MPI_ERR_ERRHANDLER),
#endif
};

static int handler_calls, handler_code;
static MPI_Comm handler_comm = MPI_COMM_NULL;

static void record(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_comm = *comm;
    handler_code = *code;
}

static void check_classes(void)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len, cls, lastused, *attr, flag;

    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        int c = classes[i].cls;
        MT_CHECK(c >= 0 && c <= MPI_ERR_LASTCODE, "%s = %d", classes[i].name, c);
        MT_CHECK(MPI_Error_class(c, &cls) == MPI_SUCCESS && cls == c, "MPI_Error_class(%s) = %d",
                 classes[i].name, cls);
        len = -1;
        msg[0] = '\0';
        MT_CHECK(MPI_Error_string(c, msg, &len) == MPI_SUCCESS && len > 0 && len < MPI_MAX_ERROR_STRING &&
                     (int)strlen(msg) == len, "MPI_Error_string(%s) len %d", classes[i].name, len);
        for (size_t j = 1; j < i; j++)
            MT_CHECK(classes[j].cls != c, "%s and %s are both %d", classes[j].name, classes[i].name, c);
    }
    MT_CHECK(MPI_ERR_LASTCODE > MPI_ERR_WIN, "MPI_ERR_LASTCODE %d", MPI_ERR_LASTCODE);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &attr, &flag);
    MT_CHECK(flag && *attr >= MPI_ERR_WIN, "MPI_LASTUSEDCODE flag %d", flag);
    lastused = flag ? *attr : 0;

    /* A new class, two codes in it, and strings for all three. */
    int newclass = -1, code1 = -1, code2 = -1;
    MT_CHECK(MPI_Add_error_class(&newclass) == MPI_SUCCESS, "MPI_Add_error_class");
    MT_CHECK(newclass > MPI_ERR_WIN, "new class %d", newclass);
    MT_CHECK(MPI_Add_error_code(newclass, &code1) == MPI_SUCCESS, "MPI_Add_error_code");
    MT_CHECK(MPI_Add_error_code(newclass, &code2) == MPI_SUCCESS, "MPI_Add_error_code");
    MT_CHECK(code1 != code2 && code1 != newclass, "codes %d %d class %d", code1, code2, newclass);
    MT_CHECK(mt_class(code1) == newclass && mt_class(code2) == newclass, "classes of new codes %d %d",
             mt_class(code1), mt_class(code2));
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &attr, &flag);
    /* "the current maximum error class" (MPI 4.1, 9.5): codes may lie above it. */
    MT_CHECK(flag && *attr >= newclass && *attr > lastused,
             "MPI_LASTUSEDCODE %d after adding %d %d %d", flag ? *attr : -1, newclass, code1, code2);

    MPI_Add_error_string(newclass, "umpi test class");
    MPI_Add_error_string(code1, "umpi test code one");
    MPI_Add_error_string(code2, "first text");
    MPI_Add_error_string(code2, "umpi test code two"); /* replaces */
    MPI_Error_string(newclass, msg, &len);
    MT_CHECK(strcmp(msg, "umpi test class") == 0 && len == (int)strlen(msg), "class string `%s`", msg);
    MPI_Error_string(code1, msg, &len);
    MT_CHECK(strcmp(msg, "umpi test code one") == 0, "code string `%s`", msg);
    MPI_Error_string(code2, msg, &len);
    MT_CHECK(strcmp(msg, "umpi test code two") == 0, "replaced code string `%s`", msg);

}

static void check_handlers(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    int rc, buf = 0;

    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    MT_CHECK(got == MPI_ERRORS_ARE_FATAL, "default handler of WORLD is not MPI_ERRORS_ARE_FATAL");
    MPI_Errhandler_free(&got);
    MT_CHECK(got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not null the handle");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    MT_CHECK(got == MPI_ERRORS_RETURN, "handler after set is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&got);

    MT_CHECK(MPI_Comm_create_errhandler(record, &eh) == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL,
             "MPI_Comm_create_errhandler");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &got);
    MT_CHECK(got == eh, "MPI_Comm_get_errhandler does not return the handler set");
    MPI_Errhandler_free(&got);

    /* MPI_Comm_call_errhandler calls it with the communicator and the code. */
    handler_calls = 0;
    rc = MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER);
    MT_CHECK(rc == MPI_SUCCESS, "MPI_Comm_call_errhandler rc %d", rc);
    MT_CHECK(handler_calls == 1 && handler_comm == MPI_COMM_SELF && handler_code == MPI_ERR_OTHER,
             "after MPI_Comm_call_errhandler: %d calls, code %d", handler_calls, handler_code);

    /* The handler stays in use after the user frees the handle. */
    MPI_Errhandler_free(&eh);
    MT_CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not null the handle");

    /* An erroneous call invokes it, and returns the code when it returns. */
    handler_calls = 0;
    rc = MPI_Send(&buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF); /* rank 1 does not exist in SELF */
    MT_CHECK(handler_calls == 1 && handler_comm == MPI_COMM_SELF, "handler calls %d after a bad MPI_Send",
             handler_calls);
    MT_CHECK(rc != MPI_SUCCESS && mt_class(rc) == MPI_ERR_RANK && handler_code == rc,
             "bad MPI_Send returned %d (class %d), handler saw %d", rc, mt_class(rc), handler_code);

    /* Calls that succeed do not. */
    handler_calls = 0;
    MPI_Send(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF);
    MT_CHECK(handler_calls == 0, "handler called by a correct call");

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    check_classes();
    check_handlers();
    return mt_finish();
}
