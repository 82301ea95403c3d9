/*
 * nodestate.c - Slurm node state normalization.
 *
 * One table of base words (short %t and long %T spellings) and two small
 * rule sets: the single suffix character of the short/long forms, and the
 * '+'-joined flags of StateComplete. Kept separate from the sinfo parser
 * so that scontrol and the adapter map states the same way.
 */
#include "libdiscovery/nodestate.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "libutil/strbuf.h"

static const struct {
    const char *word;
    const char *state;
} base_map[] = {
    {"idle", "idle"},
    {"alloc", "allocated"},
    {"allocated", "allocated"},
    {"mix", "mixed"},
    {"mixed", "mixed"},
    {"comp", "allocated"},
    {"completing", "allocated"},
    {"drain", "drain"},
    {"drained", "drain"},
    {"drng", "drain"},
    {"draining", "drain"},
    {"down", "down"},
    {"fail", "drain"},
    {"failg", "drain"},
    {"failing", "drain"},
    {"inval", "down"},
    {"invalid", "down"},
    {"maint", "drain"},
    {"resv", "idle"},
    {"reserved", "idle"},
    {"plnd", "idle"},
    {"planned", "idle"},
    {"block", "idle"},
    {"blocked", "idle"},
    {"boot", "down"},
    {"reboot", "down"},
    {"reboot_issued", "down"},
    {"reboot_requested", "down"},
    {"perfctrs", "unknown"},
    {"external", "unknown"},
    {"futr", "unknown"},
    {"future", "unknown"},
    {"unk", "unknown"},
    {"unknown", "unknown"},
    {"npc", "unknown"},
    {"resm", "unknown"},
    {"cloud", "unknown"},
    {"ext", "unknown"},
};

static const char *map_base(const char *w)
{
    for (size_t i = 0; i < sizeof(base_map) / sizeof(base_map[0]); i++)
        if (!strcmp(base_map[i].word, w))
            return base_map[i].state;
    return NULL;
}

/* Lower-cased, trimmed copy of token into buf; length or 0. */
static size_t lower_copy(const char *token, char *buf, size_t n)
{
    size_t len = 0;
    while (*token == ' ' || *token == '\t')
        token++;
    while (*token && len + 1 < n)
        buf[len++] = (char)tolower((unsigned char)*token++);
    while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t' ||
                   buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        len--;
    buf[len] = '\0';
    return len;
}

static int is_compound(const char *s)
{
    const char *p = strchr(s, '+');
    return p && isalpha((unsigned char)p[1]);
}

static const char *resolve_compound(char *s)
{
    char *save = s, *plus;
    const char *base;
    int drain = 0, notresp = 0, maint = 0, completing = 0, invalid = 0;
    plus = strchr(s, '+');
    *plus = '\0';
    base = map_base(save);
    s = plus + 1;
    while (s && *s) {
        char *next = strchr(s, '+');
        if (next)
            *next++ = '\0';
        if (!strcmp(s, "drain") || !strcmp(s, "fail") ||
            !strcmp(s, "draining") || !strcmp(s, "drained"))
            drain = 1;
        else if (!strcmp(s, "not_responding"))
            notresp = 1;
        else if (!strcmp(s, "maintenance") || !strcmp(s, "maint"))
            maint = 1;
        else if (!strcmp(s, "completing"))
            completing = 1;
        else if (!strcmp(s, "invalid_reg") || !strcmp(s, "invalid"))
            invalid = 1;
        s = next;
    }
    if (!base)
        base = "unknown";
    if (!strcmp(base, "down") || invalid)
        return "down";
    if (drain)
        return "drain";
    if (notresp && (!strcmp(base, "idle") || !strcmp(base, "mixed") ||
                    !strcmp(base, "allocated")))
        return "down";
    if (maint && !strcmp(base, "idle"))
        return "drain";
    if (completing && !strcmp(base, "idle"))
        return "allocated";
    return base;
}

const char *slurm_node_state_normalize(const char *token)
{
    char buf[128];
    size_t len;
    const char *base;
    char flag = 0;

    if (!token)
        return NULL;
    len = lower_copy(token, buf, sizeof(buf));
    if (!len)
        return NULL;
    if (is_compound(buf))
        return resolve_compound(buf);
    if (len > 1 && strchr("*~#!%$@^-+", buf[len - 1])) {
        flag = buf[len - 1];
        buf[--len] = '\0';
    }
    base = map_base(buf);
    if (!base)
        return "unknown";
    if (flag == '*' && (!strcmp(base, "idle") || !strcmp(base, "mixed") ||
                        !strcmp(base, "allocated")))
        return "down";
    return base;
}

int slurm_node_state_known(const char *token)
{
    char buf[128];
    size_t len;
    char *plus;
    if (!token)
        return 0;
    len = lower_copy(token, buf, sizeof(buf));
    if (!len)
        return 0;
    if (is_compound(buf)) {
        plus = strchr(buf, '+');
        *plus = '\0';
        return map_base(buf) != NULL;
    }
    if (len > 1 && strchr("*~#!%$@^-+", buf[len - 1]))
        buf[--len] = '\0';
    return map_base(buf) != NULL;
}
