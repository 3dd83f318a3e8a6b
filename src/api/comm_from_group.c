/*
 * Communicators without a parent: MPI_Comm_create_from_group and
 * MPI_Intercomm_create_from_groups (MPI 4.1 sec. 7.4.2, 7.6.2).
 *
 * umpi has no MPI_Session yet: the groups come from the World model (MPI_Comm_group and group
 * operations), which the standard allows. Only the members call, so they meet on a channel that
 * exists before any communicator of theirs: MPI_COMM_WORLD's collective context with the internal
 * bit, the members' world ranks as source ids, and a tag made from the stringtag:
 *
 *      22   21                       2  1  0
 *    +----+----------------------------+-----+
 *    | 1  |  hash of stringtag (20)    | op  |     op: UMPI_COLL_TAG_BCAST / ALLREDUCE / EXCHANGE
 *    +----+----------------------------+-----+
 *
 * Bit 22 (UMPI_COLL_TAG_LOCAL, unused on an intracommunicator) keeps these apart from world's own
 * internal collectives (MPI_Comm_dup, MPI_Comm_create_group: tags 1-3) and from MPI_Intercomm_create
 * over MPI_COMM_WORLD with a user tag below 2^22. Creations with different stringtags on
 * overlapping groups then use different tags and cannot take each other's messages, unless their
 * stringtags hash alike (one chance in about a million per pair). The members therefore first
 * compare the full stringtag (a broadcast from member 0, and for intercommunicators between the
 * leaders): messages of two colliding creations that meet give an error, never a communicator
 * built from the wrong data. Two creations that hash alike and run at the same time on
 * overlapping groups may fail that way; renaming one stringtag avoids it.
 *
 * The context pair is then agreed among the members as for MPI_Comm_create_group, keyed by the
 * hash (above every parent context id, so that the fallback rounds of umpi_context.h order these
 * agreements the same way at every process).
 */
#include "api/umpi_comm.h"

#include <stdlib.h>
#include <string.h>

#define UMPI__TAG_HASH_SHIFT 2
#define UMPI__TAG_HASH_BITS 20
#define UMPI__MASK_INTS ((int) (sizeof(umpi_context_mask_t) / sizeof(int)))

_Static_assert(UMPI_COLL_TAG_BCAST < (1 << UMPI__TAG_HASH_SHIFT) && UMPI_COLL_TAG_ALLREDUCE < (1 << UMPI__TAG_HASH_SHIFT) &&
               UMPI_COLL_TAG_EXCHANGE < (1 << UMPI__TAG_HASH_SHIFT), "the op tags must fit below the hash");
_Static_assert(UMPI_COLL_TAG_LOCAL == 1 << (UMPI__TAG_HASH_SHIFT + UMPI__TAG_HASH_BITS),
               "the hash must fit between the op tags and the LOCAL bit");

/* A stringtag as it travels: zero-padded to a fixed size, so that equal tags compare equal. */
typedef struct {
    char s[MPI_MAX_STRINGTAG_LEN + 1];
} umpi__stringtag_t;

/* 1 .. 2^20 - 1 (FNV-1a folded): never 0, so the tag differs from every tag without a hash. */
static uint32_t umpi__hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char) *s) * 16777619u;
    return h % ((1u << UMPI__TAG_HASH_BITS) - 1) + 1;
}

static int umpi__check_stringtag(const char *stringtag, umpi__stringtag_t *st, uint32_t *hash)
{
    size_t n = strlen(stringtag);
    if (n > MPI_MAX_STRINGTAG_LEN)
        return umpi_err_create(MPI_ERR_ARG, "stringtag of %zu characters in argument 'stringtag' (at most "
                               "MPI_MAX_STRINGTAG_LEN = %d)", n, MPI_MAX_STRINGTAG_LEN);
    memset(st, 0, sizeof(*st));
    memcpy(st->s, stringtag, n);
    *hash = umpi__hash(stringtag);
    return MPI_SUCCESS;
}

static int umpi__check_member(const umpi_group_t *g, const char *arg)
{
    if (g->rank == MPI_UNDEFINED)
        return umpi_err_create(MPI_ERR_GROUP, "group 0x%x in argument '%s' does not contain the calling process "
                               "(world rank %d)", (unsigned) g->handle, arg, umpi_global.rank);
    return MPI_SUCCESS;
}

/* The members of g on world's collective context, tagged by hash. */
static void umpi__grp(umpi_coll_grp_t *cg, const umpi_group_t *g, uint32_t hash)
{
    cg->context = UMPI_CONTEXT_WORLD + 1;
    cg->tag_flags = UMPI_COLL_TAG_LOCAL | (int) (hash << UMPI__TAG_HASH_SHIFT);
    cg->rank = g->rank;
    cg->size = g->size;
    cg->world = g->world;
    cg->src = g->world;
}

/* Member 0's stringtag against mine, agreed by all members: MPI_ERR_ARG everywhere on a mismatch. */
static int umpi__same_stringtag(const umpi_coll_grp_t *cg, const umpi__stringtag_t *mine)
{
    umpi__stringtag_t first = *mine;
    umpi_status_t st = umpi_coll_bcast(cg, &first, sizeof(first), 0);
    int ok = st == UMPI_OK && memcmp(&first, mine, sizeof(first)) == 0;
    if (st == UMPI_OK)
        st = umpi_coll_allreduce_int(cg, &ok, 1, UMPI_COLL_BAND);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "comparing the stringtags of the members");
    if (!ok)
        return umpi_err_create(MPI_ERR_ARG, "the members passed different stringtags (this process: \"%s\"), or "
                               "a concurrent creation whose stringtag hashes alike crossed this one", mine->s);
    return MPI_SUCCESS;
}

/* The new communicator gets errhandler (not the World's) and the hints of info (as
 * MPI_Comm_dup_with_info: info's hints only). Called without the big lock. */
static int umpi__finish(MPI_Comm h, MPI_Errhandler errhandler, MPI_Info info)
{
    umpi_lock();
    umpi_comm_t *c = umpi_comm_get(h);
    umpi_errhandler_t *old = umpi_errhandler_get(c->errhandler), *eh = umpi_errhandler_get(errhandler);
    umpi_errhandler_retain(eh);
    if (old != NULL)
        umpi_errhandler_release(old);
    c->errhandler = errhandler;
    umpi_unlock();
    int err = umpi_impl_comm_set_info(c, info);
    if (err != MPI_SUCCESS) {
        umpi_lock();
        umpi_comm_release(c);
        umpi_unlock();
    }
    return err;
}

int umpi_impl_comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                     MPI_Comm *newcomm)
{
    umpi_group_t *g;
    umpi__stringtag_t tag;
    uint32_t hash, context;
    umpi_coll_grp_t cg;
    int err = umpi_group_check(group, &g, "group");
    if (err == MPI_SUCCESS)
        err = umpi__check_stringtag(stringtag, &tag, &hash);
    if (err != MPI_SUCCESS)
        return err;
    *newcomm = MPI_COMM_NULL;
    if (g->size == 0) /* MPI 4.1 sec. 7.4.2: a local operation giving MPI_COMM_NULL */
        return MPI_SUCCESS;
    err = umpi__check_member(g, "group");
    if (err != MPI_SUCCESS)
        return err;
    umpi__grp(&cg, g, hash);
    umpi_lock();
    err = umpi__same_stringtag(&cg, &tag);
    if (err == MPI_SUCCESS)
        err = umpi_comm_context_agree_key(NULL, &cg, 2 * UMPI_CONTEXT_PAIRS + hash, &context);
    if (err == MPI_SUCCESS)
        err = umpi_comm_new(&umpi_comm_world, g, NULL, context, newcomm);
    umpi_unlock();
    if (err == MPI_SUCCESS)
        err = umpi__finish(*newcomm, errhandler, info);
    if (err != MPI_SUCCESS)
        *newcomm = MPI_COMM_NULL;
    return err;
}

/* ---- intercommunicators ------------------------------------------------------------------------ */

/* What one leader sends the other: the stringtag, its group, its view of the other group, and its
 * group's combined proposal, after a header with the two sizes. */
typedef struct {
    umpi__stringtag_t tag;
    umpi_context_mask_t mask;
    int world[]; /* local group, then the remote group as this side sees it */
} umpi__leader_msg_t;

static size_t umpi__msg_size(int nl, int nr)
{
    return sizeof(umpi__leader_msg_t) + ((size_t) nl + nr) * sizeof(int);
}

/* hdr[1] values other than a context id */
enum { UMPI__FAILED = -1, UMPI__RETRY = -2, UMPI__MISMATCH = -3 };

/*
 * The local leader's part of one round: checks the remote group, swaps messages with the remote
 * leader, and returns the pair both groups can use (or a UMPI__* value, the same at both leaders:
 * each checks both directions of the exchange).
 */
static int umpi__leader_round(const umpi_group_t *local, const umpi_group_t *remote, int remote_leader, uint32_t hash,
                              const umpi__stringtag_t *tag, const umpi_context_mask_t *mask, int *result)
{
    int peer = remote->world[remote_leader], me = umpi_global.rank;
    int tagv = UMPI_COLL_TAG_LOCAL | (int) (hash << UMPI__TAG_HASH_SHIFT) | UMPI_COLL_TAG_EXCHANGE;
    int sizes[2] = {local->size, remote->size}, theirs[2] = {0, 0};
    umpi_status_t st = umpi_coll_exchange(UMPI_CONTEXT_WORLD + 1, tagv, me, peer, sizes, sizeof(sizes), peer, theirs,
                                          sizeof(theirs));
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "exchange between the leaders");
    if (theirs[0] < 0 || theirs[1] < 0 || theirs[0] > umpi_global.size || theirs[1] > umpi_global.size)
        return umpi_err_create(MPI_ERR_OTHER, "the remote leader (world rank %d) sent group sizes %d and %d", peer,
                               theirs[0], theirs[1]);
    umpi__leader_msg_t *out = malloc(umpi__msg_size(local->size, remote->size));
    umpi__leader_msg_t *in = malloc(umpi__msg_size(theirs[0], theirs[1]));
    int err = MPI_SUCCESS;
    if (out == NULL || in == NULL) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
        goto out;
    }
    out->tag = *tag;
    out->mask = *mask;
    memcpy(out->world, local->world, (size_t) local->size * sizeof(int));
    memcpy(out->world + local->size, remote->world, (size_t) remote->size * sizeof(int));
    st = umpi_coll_exchange(UMPI_CONTEXT_WORLD + 1, tagv, me, peer, out, umpi__msg_size(local->size, remote->size), peer,
                            in, umpi__msg_size(theirs[0], theirs[1]));
    if (st != UMPI_OK) {
        err = umpi_err_from_status(st, "exchange between the leaders");
        goto out;
    }
    /* Their local group must be my remote group and the reverse, and the stringtags equal. */
    if (memcmp(&in->tag, tag, sizeof(*tag)) != 0 || theirs[0] != remote->size || theirs[1] != local->size ||
        memcmp(in->world, remote->world, (size_t) remote->size * sizeof(int)) != 0 ||
        memcmp(in->world + theirs[0], local->world, (size_t) local->size * sizeof(int)) != 0) {
        *result = UMPI__MISMATCH;
        goto out;
    }
    umpi_context_and(&in->mask, mask);
    int id = umpi_context_lowest(&in->mask);
    if (id >= 0) {
        *result = id;
    } else if (in->mask.owner) { /* every proposal was complete: exhausted */
        *result = UMPI__FAILED;
        err = umpi_err_create(MPI_ERR_OTHER, "no context id is free at every member of both groups");
    } else {
        *result = UMPI__RETRY; /* some member proposed an empty mask (another agreement owned its bitmap) */
    }
out:
    free(out);
    free(in);
    return err;
}

/* The local leader's checks of the arguments only it uses. */
static int umpi__leader_args(const umpi_group_t *local, MPI_Group remote_group, int remote_leader, umpi_group_t **rg)
{
    int err = umpi_group_check(remote_group, rg, "remote_group");
    if (err != MPI_SUCCESS)
        return err;
    if (remote_leader < 0 || remote_leader >= (*rg)->size)
        return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'remote_leader' (remote_group size %d)",
                               remote_leader, (*rg)->size);
    for (int i = 0; i < local->size; i++)
        if (umpi_group_rank_of(*rg, local->world[i]) != MPI_UNDEFINED)
            return umpi_err_create(MPI_ERR_GROUP, "remote_group 0x%x and local_group 0x%x share world rank %d (they "
                                   "must be disjoint)", (unsigned) remote_group, (unsigned) local->handle,
                                   local->world[i]);
    return MPI_SUCCESS;
}

int umpi_impl_intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                           int remote_leader, const char *stringtag, MPI_Info info,
                                           MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    umpi_group_t *lg, *rg = NULL, *remote = NULL;
    umpi__stringtag_t tag;
    uint32_t hash;
    umpi_coll_grp_t cg;
    umpi_context_mask_t mask;
    umpi_context_round_t round;
    int err = umpi_group_check(local_group, &lg, "local_group");
    if (err == MPI_SUCCESS)
        err = umpi__check_member(lg, "local_group");
    if (err == MPI_SUCCESS && (local_leader < 0 || local_leader >= lg->size))
        err = umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'local_leader' (local_group size %d)",
                              local_leader, lg->size);
    if (err == MPI_SUCCESS)
        err = umpi__check_stringtag(stringtag, &tag, &hash);
    if (err != MPI_SUCCESS)
        return err;
    umpi__grp(&cg, lg, hash);
    *newintercomm = MPI_COMM_NULL;
    /* hdr: remote size, and a context id or a UMPI__* value; broadcast by the local leader */
    int hdr[2] = {0, UMPI__FAILED}, *remote_world = NULL;
    umpi_status_t st = UMPI_OK;
    int leader_err = MPI_SUCCESS;

    umpi_lock();
    err = umpi__same_stringtag(&cg, &tag);
    if (err != MPI_SUCCESS) {
        umpi_unlock();
        return err;
    }
    if (lg->rank == local_leader)
        leader_err = umpi__leader_args(lg, remote_group, remote_leader, &rg);
    /* Rounds as in MPI_Intercomm_create: both leaders see the same combined mask. */
    umpi_context_round_begin(&round, 2 * UMPI_CONTEXT_PAIRS + hash);
    do {
        hdr[0] = 0;
        hdr[1] = UMPI__FAILED;
        umpi_context_round_propose(&round, &mask);
        st = umpi_coll_allreduce_int(&cg, (int *) &mask, UMPI__MASK_INTS, UMPI_COLL_BAND);
        if (st != UMPI_OK)
            break;
        if (lg->rank == local_leader && leader_err == MPI_SUCCESS) {
            leader_err = umpi__leader_round(lg, rg, remote_leader, hash, &tag, &mask, &hdr[1]);
            hdr[0] = rg->size;
        }
        /* The leader always broadcasts, so that a failure there does not leave its group waiting. */
        st = umpi_coll_bcast(&cg, hdr, sizeof(hdr), local_leader);
        if (st == UMPI_OK && hdr[1] == UMPI__RETRY)
            umpi_context_round_retry(&round);
    } while (st == UMPI_OK && hdr[1] == UMPI__RETRY);
    if (st != UMPI_OK) {
        err = umpi_err_from_status(st, "agreeing on a context id");
        goto out;
    }
    if (hdr[1] == UMPI__MISMATCH) {
        err = umpi_err_create(MPI_ERR_ARG, "the two groups disagree on the stringtag (\"%s\" here) or on their "
                              "members, or a concurrent creation whose stringtag hashes alike crossed this one", tag.s);
        goto out;
    }
    if (hdr[1] < 0) {
        err = lg->rank == local_leader && leader_err != MPI_SUCCESS
                  ? leader_err
                  : umpi_err_create(MPI_ERR_OTHER, "the local leader (rank %d of local_group) failed to set up the "
                                    "intercommunicator", local_leader);
        goto out;
    }
    remote_world = malloc(((size_t) hdr[0] + 1) * sizeof(int));
    if (remote_world == NULL)
        umpi_die(1, "out of memory in MPI_Intercomm_create_from_groups"); /* the group is mid-broadcast */
    if (lg->rank == local_leader)
        memcpy(remote_world, rg->world, (size_t) hdr[0] * sizeof(int));
    st = umpi_coll_bcast(&cg, remote_world, (size_t) hdr[0] * sizeof(int), local_leader);
    if (st != UMPI_OK) {
        err = umpi_err_from_status(st, "broadcasting the remote group");
        goto out;
    }
    remote = umpi_group_new(hdr[0], remote_world);
    if (remote == NULL) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
        goto out;
    }
    err = umpi_comm_new(&umpi_comm_world, lg, remote, (uint32_t) hdr[1], newintercomm);
    umpi_group_release(remote);
out:
    umpi_context_round_end(&round);
    umpi_unlock();
    free(remote_world);
    if (err == MPI_SUCCESS)
        err = umpi__finish(*newintercomm, errhandler, info);
    if (err != MPI_SUCCESS)
        *newintercomm = MPI_COMM_NULL;
    return err;
}
