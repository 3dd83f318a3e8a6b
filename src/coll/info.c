/*
 * The algorithm tables as umpi_info shows them (umpi_coll.h: umpi_coll_algo_describe). umpi_info
 * links libmpi and reads the tables select.c selects from, so its listing cannot drift from them.
 */
#include "coll/umpi_coll.h"

const char *umpi_coll_algo_describe(int kind, int inter, int i, const char **kind_name, const char **name)
{
    int n;

    *kind_name = NULL;
    *name = NULL;
    if (kind < 0 || kind >= UMPI_COLL_NKINDS)
        return NULL;
    *kind_name = umpi_coll_kind_name((umpi_coll_kind_t) kind);
    const umpi_coll_algo_t *t = umpi_coll_algos((umpi_coll_kind_t) kind, inter, &n);
    if (i < 0 || i >= n)
        return NULL;
    *name = t[i].name;
    return t[i].doc;
}
