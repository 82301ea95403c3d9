/* target.c - see target.h. */
#include "libutil/target.h"

#include <string.h>

int target_is_local(const char *kind, const char *host)
{
    if ((kind && !strcmp(kind, "local")) || !host || !*host ||
        !strcmp(host, "local"))
        return 1;
    return !strcmp(host, "localhost") && !(kind && *kind);
}
