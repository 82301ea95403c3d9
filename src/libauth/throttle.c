/*
 * throttle.c - the failed-authentication slow-down (see throttle.h).
 */
#include "libauth/throttle.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libutil/xalloc.h"

struct entry {
    char addr[64];
    int fails;
    time_t last_fail;
    time_t blocked_until;
};

struct auth_throttle {
    int limit, window_s, first_delay_s, max_delay_s;
    pthread_mutex_t mu;
    struct entry *v;
    size_t nr;
};

struct auth_throttle *auth_throttle_new(int limit, int window_s,
                                        int first_delay_s, int max_delay_s)
{
    struct auth_throttle *t = xcalloc(1, sizeof(*t));
    t->limit = limit ? limit : AUTH_FAIL_LIMIT;
    t->window_s = window_s > 0 ? window_s : AUTH_FAIL_WINDOW_S;
    t->first_delay_s =
        first_delay_s > 0 ? first_delay_s : AUTH_FAIL_FIRST_DELAY_S;
    t->max_delay_s = max_delay_s > 0 ? max_delay_s : AUTH_FAIL_MAX_DELAY_S;
    if (t->max_delay_s < t->first_delay_s)
        t->max_delay_s = t->first_delay_s;
    pthread_mutex_init(&t->mu, NULL);
    if (t->limit > 0)
        t->v = xcalloc(AUTH_THROTTLE_MAX, sizeof(*t->v));
    return t;
}

void auth_throttle_free(struct auth_throttle *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->v);
    free(t);
}

/* Under the lock: addr's entry, made when new. */
static struct entry *entry_of(struct auth_throttle *t, const char *addr)
{
    struct entry *e;
    for (size_t i = 0; i < t->nr; i++)
        if (!strncmp(t->v[i].addr, addr, sizeof(t->v[i].addr) - 1))
            return &t->v[i];
    if (t->nr >= AUTH_THROTTLE_MAX) { /* forget the stalest */
        size_t old = 0;
        for (size_t i = 1; i < t->nr; i++)
            if (t->v[i].last_fail < t->v[old].last_fail)
                old = i;
        t->v[old] = t->v[--t->nr];
    }
    e = &t->v[t->nr++];
    memset(e, 0, sizeof(*e));
    snprintf(e->addr, sizeof(e->addr), "%s", addr);
    return e;
}

long auth_throttle_failed(struct auth_throttle *t, const char *addr)
{
    time_t now = time(NULL);
    struct entry *e;
    long wait = 0;
    if (!t || t->limit < 0)
        return 0;
    pthread_mutex_lock(&t->mu);
    e = entry_of(t, addr ? addr : "");
    if (e->blocked_until > now)
        wait = (long)(e->blocked_until - now);
    if (now - e->last_fail > t->window_s)
        e->fails = 0;
    if (e->fails < 1000000)
        e->fails++;
    e->last_fail = now;
    if (!wait && e->fails >= t->limit) {
        int over = e->fails - t->limit;
        long d = over >= 30 ? t->max_delay_s : (long)t->first_delay_s << over;
        e->blocked_until = now + (d > t->max_delay_s ? t->max_delay_s : d);
    }
    pthread_mutex_unlock(&t->mu);
    return wait;
}
