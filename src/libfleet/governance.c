/*
 * governance.c - the approval state machine, bound to the connection
 * identity. Every mutating path takes the same order: the registry lock
 * (when clusters.yaml is written), then BEGIN IMMEDIATE, then a re-read of
 * the row, so the decision is made on what is committed and no concurrent
 * connect or approve can slip between the read and the write (the
 * reference's lost-update and TOCTOU bugs, doc/reference.md §6.25).
 */
#include "libfleet/governance.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libstore/audit.h"
#include "libutil/dl_crypto_int.h"
#include "libutil/json.h"
#include "libutil/sha256.h"
#include "libutil/shquote.h"
#include "libutil/strbuf.h"
#include "libutil/target.h"
#include "libutil/xalloc.h"

#define GOV_SOURCE "exa-hpc"

const char *cluster_state_name(enum cluster_state s)
{
    switch (s) {
    case CLUSTER_PENDING:
        return "PENDING";
    case CLUSTER_ACTIVE:
        return "ACTIVE";
    case CLUSTER_REJECTED:
        return "REJECTED";
    default:
        return "NONE";
    }
}

enum cluster_state cluster_state_parse(const char *s)
{
    if (!s)
        return CLUSTER_NONE;
    if (!strcmp(s, "PENDING"))
        return CLUSTER_PENDING;
    if (!strcmp(s, "ACTIVE"))
        return CLUSTER_ACTIVE;
    if (!strcmp(s, "REJECTED"))
        return CLUSTER_REJECTED;
    return CLUSTER_NONE;
}

int gov_transition(const char *name, enum cluster_state from, enum gov_event ev,
                   enum cluster_state *to, exa_error_t *err)
{
    switch (ev) {
    case GOV_CONNECT:
        *to = from == CLUSTER_ACTIVE ? CLUSTER_ACTIVE : CLUSTER_PENDING;
        return 0;
    case GOV_IDENTITY_CHANGE:
        if (from == CLUSTER_NONE)
            return exa_err(err, EXA_ENOTFOUND, "unknown cluster: '%s'", name);
        *to = from == CLUSTER_REJECTED ? CLUSTER_REJECTED : CLUSTER_PENDING;
        return 0;
    case GOV_APPROVE:
        if (from == CLUSTER_PENDING) {
            *to = CLUSTER_ACTIVE;
            return 0;
        }
        if (from == CLUSTER_ACTIVE)
            return exa_err(err, EXA_EFAIL, "cluster '%s' is already ACTIVE",
                           name);
        if (from == CLUSTER_REJECTED)
            return exa_err(err, EXA_EFAIL,
                           "cluster '%s' is REJECTED; only a new 'exa hpc "
                           "connect' returns it to PENDING",
                           name);
        return exa_err(err, EXA_ENOTFOUND, "unknown cluster: '%s'", name);
    case GOV_REJECT:
        if (from == CLUSTER_PENDING || from == CLUSTER_ACTIVE) {
            *to = CLUSTER_REJECTED;
            return 0;
        }
        if (from == CLUSTER_REJECTED)
            return exa_err(err, EXA_EFAIL, "cluster '%s' is already REJECTED",
                           name);
        return exa_err(err, EXA_ENOTFOUND, "unknown cluster: '%s'", name);
    }
    return exa_err(err, EXA_EFAIL, "unknown governance event");
}

/* ---- key fingerprints ---- */

char *fleet_pubkey_fingerprint(const char *line, exa_error_t *err)
{
    const char *p = line, *b64 = NULL;
    size_t b64len = 0;
    unsigned char *blob = NULL, md[EXA_SHA256_LEN];
    unsigned char out[64];
    int n, pad = 0;
    char *res = NULL;

    /* Find the first field that looks like a key type, take the next. */
    while (*p) {
        const char *f;
        size_t flen;
        while (*p == ' ' || *p == '\t')
            p++;
        f = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            p++;
        flen = (size_t)(p - f);
        if (!flen)
            break;
        if ((flen > 4 && !strncmp(f, "ssh-", 4)) ||
            (flen > 6 && !strncmp(f, "ecdsa-", 6)) ||
            (flen > 3 && !strncmp(f, "sk-", 3))) {
            while (*p == ' ' || *p == '\t')
                p++;
            b64 = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                p++;
            b64len = (size_t)(p - b64);
            break;
        }
    }
    if (!b64 || b64len < 4 || b64len % 4) {
        exa_err(err, EXA_EPARSE, "no OpenSSH public key found");
        return NULL;
    }
    for (size_t i = 0; i < b64len; i++) {
        char c = b64[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=')) {
            exa_err(err, EXA_EPARSE, "public key is not valid base64");
            return NULL;
        }
    }
    if (b64[b64len - 1] == '=')
        pad++;
    if (b64[b64len - 2] == '=')
        pad++;
    blob = xmalloc(b64len);
    n = dl_crypto()->EVP_DecodeBlock(blob, (const unsigned char *)b64,
                                     (int)b64len);
    if (n < 0 || n - pad <= 0) {
        exa_err(err, EXA_EPARSE, "public key is not valid base64");
        goto out;
    }
    exa_sha256(blob, (size_t)(n - pad), md);
    n = dl_crypto()->EVP_EncodeBlock(out, md, EXA_SHA256_LEN);
    while (n > 0 && out[n - 1] == '=')
        n--;
    out[n] = '\0';
    res = xstrfmt("SHA256:%s", (char *)out);
out:
    free(blob);
    return res;
}

char *fleet_pubkey_file_fingerprint(const char *path, exa_error_t *err)
{
    FILE *fp = fopen(path, "re");
    char line[16384];
    if (!fp) {
        exa_err(err, EXA_ECONFIG, "cannot read public key '%s': %s", path,
                strerror(errno));
        return NULL;
    }
    while (fgets(line, sizeof(line), fp)) {
        char *fpr;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        fpr = fleet_pubkey_fingerprint(line, NULL);
        if (fpr) {
            fclose(fp);
            return fpr;
        }
    }
    fclose(fp);
    exa_err(err, EXA_EPARSE, "no public key in '%s'", path);
    return NULL;
}

char *fleet_host_key_fingerprint(const char *text, exa_error_t *err)
{
    const char *p = text, *first = NULL, *pick = NULL;
    char *line, *fpr;
    const char *eol;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len && *p != '#') {
            if (!first)
                first = p;
            if (!pick && memmem(p, len, " ssh-ed25519 ", 13))
                pick = p;
        }
        p += len + (e ? 1 : 0);
    }
    if (!pick)
        pick = first;
    if (!pick) {
        exa_err(err, EXA_EPARSE, "no host key found");
        return NULL;
    }
    eol = strchr(pick, '\n');
    line = eol ? xstrndup(pick, (size_t)(eol - pick)) : xstrdup(pick);
    fpr = fleet_pubkey_fingerprint(line, err);
    free(line);
    return fpr;
}

/* ---- identity ---- */

static int streq(const char *a, const char *b)
{
    if (!a || !*a)
        return !b || !*b;
    return b && !strcmp(a, b);
}

static int port_of(int p)
{
    return p > 0 ? p : 22;
}

/* Add {field: {old, new}} to changes when they differ. */
static void diff_str(json_t *changes, const char *field, const char *old,
                     const char *new_)
{
    if (streq(old, new_))
        return;
    json_t *o = json_object();
    jx_set(o, "old", jx_str(old));
    jx_set(o, "new", jx_str(new_));
    jx_set(changes, field, o);
}

static void diff_port(json_t *changes, int old, int new_)
{
    if (port_of(old) == port_of(new_))
        return;
    json_t *o = json_object();
    jx_set(o, "old", json_integer(port_of(old)));
    jx_set(o, "new", json_integer(port_of(new_)));
    jx_set(changes, "ssh_port", o);
}

/* NULL for NULL or "", so a digest does not depend on which one the
 * table happens to hold. */
static json_t *jx_str_nz(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

/*
 * The canonical document gov_row_digest hashes, written directly (keys in
 * jansson's sorted order) when every field is ASCII; -1 otherwise (then
 * jansson decides what a non-UTF-8 field becomes).
 */
static int row_canon_ascii(const struct cluster_row *r, struct strbuf *sb)
{
    const struct {
        const char *key, *v;
    } f[] = {{"approved_by", r->approved_by},
             {"host", r->host},
             {"host_key_fingerprint", r->host_key_fingerprint},
             {"key_fingerprint", r->key_fingerprint},
             {"name", r->name},
             {"scheduler", r->scheduler},
             {"ssh_key", r->ssh_key},
             {"ssh_port", NULL},
             {"ssh_user", r->ssh_user},
             {"state", r->state},
             {"transport", r->transport}};
    char port[16];
    xsnprintf(port, sizeof(port), "%d", port_of(r->port));
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        /* no strbuf_addf: a format per member was most of the digest */
        strbuf_addch(sb, i ? ',' : '{');
        strbuf_addch(sb, '"');
        strbuf_addstr(sb, f[i].key);
        strbuf_addstr(sb, "\":");
        if (!strcmp(f[i].key, "ssh_port"))
            strbuf_addstr(sb, port);
        else if (jx_quote_ascii(sb, f[i].v && *f[i].v ? f[i].v : NULL) < 0)
            return -1;
    }
    strbuf_addch(sb, '}');
    return 0;
}

void gov_row_digest(const struct cluster_row *r, char hex[65])
{
    struct strbuf sb = STRBUF_INIT;
    json_t *o;
    char *canon;
    if (row_canon_ascii(r, &sb) == 0) {
        exa_sha256_hex(sb.buf, sb.len, hex);
        strbuf_release(&sb);
        return;
    }
    strbuf_release(&sb);
    o = json_object();
    jx_set(o, "name", jx_str_nz(r->name));
    jx_set(o, "state", jx_str_nz(r->state));
    jx_set(o, "scheduler", jx_str_nz(r->scheduler));
    jx_set(o, "transport", jx_str_nz(r->transport));
    jx_set(o, "host", jx_str_nz(r->host));
    jx_set(o, "ssh_port", json_integer(port_of(r->port)));
    jx_set(o, "ssh_user", jx_str_nz(r->ssh_user));
    jx_set(o, "ssh_key", jx_str_nz(r->ssh_key));
    jx_set(o, "key_fingerprint", jx_str_nz(r->key_fingerprint));
    jx_set(o, "host_key_fingerprint", jx_str_nz(r->host_key_fingerprint));
    jx_set(o, "approved_by", jx_str_nz(r->approved_by));
    canon = jx_dumps_canonical(o);
    exa_sha256_hex(canon, strlen(canon), hex);
    free(canon);
    json_decref(o);
}

/*
 * The one way a cluster row change is recorded: re-read the row as
 * stored (the store fills defaults), put its state and digest into the
 * event's details, append the event and bind the row to it, all in the
 * caller's transaction. details is consumed.
 */
static int write_audit(store_t *st, const char *actor, const char *action,
                       const char *target, json_t *details, exa_error_t *err)
{
    struct cluster_row row = {0};
    char digest[65], hash[65];
    int rc = -1, found = store_cluster_get(st, target, &row, err);
    if (found <= 0) {
        if (found == 0)
            exa_err(err, EXA_ENOTFOUND, "unknown cluster: '%s'", target);
        goto out;
    }
    gov_row_digest(&row, digest);
    jx_set(details, "state", jx_str(row.state));
    jx_set(details, "row_sha256", jx_str(digest));
    if (audit_record(st, GOV_SOURCE, actor, action, target, details, hash,
                     err) < 0 ||
        store_cluster_bind_event(st, target, hash, err) < 0)
        goto out;
    rc = 0;
out:
    cluster_row_release(&row);
    json_decref(details);
    return rc;
}

/*
 * The string members "state", "to_state" and "row_sha256" of an event's
 * details, as jx_get_str() reads them from the parsed document (NULL:
 * absent or not a string). Every event exa writes for a cluster is a
 * flat canonical object (audit.h), whose strings without escapes are
 * their own bytes: those are copied out of the text without building a
 * json_t (a third of the verification); anything else is parsed.
 */
struct event_fields {
    const char *state, *to_state, *row_sha256;
    char buf[3][80];
    json_t *doc; /* when parsed */
};

static int flat_field(const char *text, const char *key, char *buf, size_t n,
                      const char **out)
{
    const char *v;
    size_t len;
    int rc = jx_flat_str(text, key, &v, &len);
    *out = NULL;
    if (rc <= 0)
        return rc;
    if (len >= n || memchr(v, '\0', len))
        return -1;
    memcpy(buf, v, len);
    buf[len] = '\0';
    *out = buf;
    return 1;
}

static void event_fields_read(const char *details, struct event_fields *f)
{
    memset(f, 0, sizeof(*f));
    if (details && jx_is_canonical_flat(details) &&
        flat_field(details, "state", f->buf[0], sizeof(f->buf[0]), &f->state) >=
            0 &&
        flat_field(details, "to_state", f->buf[1], sizeof(f->buf[1]),
                   &f->to_state) >= 0 &&
        flat_field(details, "row_sha256", f->buf[2], sizeof(f->buf[2]),
                   &f->row_sha256) >= 0)
        return;
    f->doc = details ? json_loads(details, 0, NULL) : NULL;
    f->state = jx_get_str(f->doc, "state", NULL);
    f->to_state = jx_get_str(f->doc, "to_state", NULL);
    f->row_sha256 = jx_get_str(f->doc, "row_sha256", NULL);
}

/* The state an event left its cluster in: its "state" (written since the
 * chain binds rows) or "to_state", else what the action implies. */
static enum cluster_state event_state(const struct audit_event *ev,
                                      const struct event_fields *f)
{
    const char *s = f->state;
    if (!s)
        s = f->to_state;
    if (s)
        return cluster_state_parse(s);
    if (!strcmp(ev->action, "cluster_approved"))
        return CLUSTER_ACTIVE;
    if (!strcmp(ev->action, "cluster_rejected"))
        return CLUSTER_REJECTED;
    if (!strcmp(ev->action, "cluster_defined"))
        return CLUSTER_PENDING;
    return CLUSTER_NONE;
}

static int mismatch(exa_error_t *err, const char *name, const char *why)
{
    return exa_err(err, EXA_ENOTAPPROVED,
                   "cluster '%s' does not match its audit chain: %s; it is "
                   "treated as PENDING ('exa hpc audit --verify')",
                   name, why);
}

/*
 * governance_verify_cluster against ev, the cluster's newest "cluster_"
 * event (NULL: it has none): 0, or -1 with err (EXA_ENOTAPPROVED).
 */
static int verify_against(const struct cluster_row *row,
                          const struct audit_event *ev, exa_error_t *err)
{
    struct strbuf why = STRBUF_INIT;
    struct event_fields details = {0};
    char digest[65];
    const char *recorded;
    enum cluster_state want, have = cluster_state_parse(row->state);
    int rc = -1;

    if (!ev) {
        rc = mismatch(err, row->name, "no audit event records it");
        goto out;
    }
    if (!row->audit_hash || strcmp(row->audit_hash, ev->hash)) {
        strbuf_addf(&why,
                    "the row is not bound to its latest audit event (%lld, "
                    "%s)",
                    ev->id, ev->action);
        rc = mismatch(err, row->name, why.buf);
        goto out;
    }
    if (!audit_event_intact(ev)) {
        strbuf_addf(&why, "its latest audit event (%lld) was altered", ev->id);
        rc = mismatch(err, row->name, why.buf);
        goto out;
    }
    event_fields_read(ev->details, &details);
    want = event_state(ev, &details);
    if (want != have) {
        strbuf_addf(&why,
                    "the row says %s but its latest audit event (%lld, %s) "
                    "left it %s",
                    row->state ? row->state : "nothing", ev->id, ev->action,
                    cluster_state_name(want));
        rc = mismatch(err, row->name, why.buf);
        goto out;
    }
    recorded = details.row_sha256;
    gov_row_digest(row, digest);
    if (recorded && strcmp(recorded, digest)) {
        strbuf_addf(&why,
                    "the row's identity differs from what its latest audit "
                    "event (%lld, %s) recorded",
                    ev->id, ev->action);
        rc = mismatch(err, row->name, why.buf);
        goto out;
    }
    rc = 0;
out:
    json_decref(details.doc);
    strbuf_release(&why);
    return rc;
}

int governance_verify_cluster(store_t *st, const struct cluster_row *row,
                              exa_error_t *err)
{
    struct audit_event ev = {0};
    int found = audit_latest(st, row->name, "cluster_", &ev, err), rc;
    if (found < 0)
        return -1;
    rc = verify_against(row, found ? &ev : NULL, err);
    audit_event_release(&ev);
    return rc;
}

static char *dn(const char *s)
{
    return s && *s ? xstrdup(s) : NULL;
}

static void set(char **field, const char *v)
{
    free(*field);
    *field = dn(v);
}

/*
 * The state a transition starts from: the row's own, or PENDING when the
 * row does not agree with its audit chain (a row changed behind exa's
 * back); then *why gets the reason (caller frees) and row->state is set
 * to PENDING. 0, or -1 with err on a database error.
 */
static int trusted_state(store_t *st, struct cluster_row *row, char **why,
                         exa_error_t *err)
{
    exa_error_t verr = EXA_ERROR_INIT;
    *why = NULL;
    if (governance_verify_cluster(st, row, &verr) == 0)
        return 0;
    if (verr.code != EXA_ENOTAPPROVED) {
        if (err)
            *err = verr;
        return -1;
    }
    *why = xstrdup(verr.text);
    set(&row->state, cluster_state_name(CLUSTER_PENDING));
    return 0;
}

/*
 * Apply an identity change to row (already read inside the transaction):
 * new identity values, GOV_IDENTITY_CHANGE, audit. changes is consumed.
 */
static int apply_identity_change(store_t *st, struct cluster_row *row,
                                 json_t *changes, const char *via,
                                 const char *actor, exa_error_t *err)
{
    enum cluster_state from = cluster_state_parse(row->state), to = from;
    json_t *d;
    struct strbuf why = STRBUF_INIT;
    const char *k;
    json_t *v;
    if (gov_transition(row->name, from, GOV_IDENTITY_CHANGE, &to, err) < 0) {
        json_decref(changes);
        return -1;
    }
    strbuf_addf(&why, "connection identity changed (%s):", via);
    json_object_foreach(changes, k, v) strbuf_addf(&why, " %s", k);
    set(&row->state, cluster_state_name(to));
    if (from == CLUSTER_ACTIVE) {
        set(&row->approved_by, NULL);
    }
    set(&row->reason, why.buf);
    strbuf_release(&why);
    if (store_cluster_put(st, row, err) < 0) {
        json_decref(changes);
        return -1;
    }
    d = json_object();
    jx_set(d, "via", jx_str(via));
    jx_set(d, "from_state", jx_str(cluster_state_name(from)));
    jx_set(d, "to_state", jx_str(cluster_state_name(to)));
    jx_set(d, "changes", changes);
    return write_audit(st, actor, "cluster_identity_changed", row->name, d,
                       err);
}

/* The key fingerprint of def's key ("<key>.pub"), or NULL if unreadable. */
static char *def_key_fingerprint(const char *key)
{
    char *pub, *fpr;
    if (!key || !*key)
        return NULL;
    pub = xstrfmt("%s.pub", key);
    fpr = fleet_pubkey_file_fingerprint(pub, NULL);
    free(pub);
    return fpr;
}

/* Identity differences between a YAML def and a DB row (new object). */
static json_t *def_row_changes(const struct cluster_def *d,
                               const struct cluster_row *r, const char *key_fpr)
{
    json_t *c = json_object();
    if (d->host)
        diff_str(c, "host", r->host, d->host);
    if (d->ssh_port)
        diff_port(c, r->port, d->ssh_port);
    if (d->ssh_user)
        diff_str(c, "ssh_user", r->ssh_user, d->ssh_user);
    if (d->ssh_key)
        diff_str(c, "ssh_key", r->ssh_key, d->ssh_key);
    if (d->transport)
        diff_str(c, "transport", r->transport, d->transport);
    /* the scheduler is approved too: mock runs the payload on the host */
    if (d->scheduler)
        diff_str(c, "scheduler", r->scheduler, d->scheduler);
    if (key_fpr && r->key_fingerprint)
        diff_str(c, "key_fingerprint", r->key_fingerprint, key_fpr);
    return c;
}

/*
 * Record definition d in the store. known is d's row as read before (the
 * one list of the reconcile), NULL when there was none: a row that
 * differs from nothing in d is left alone without a transaction (most
 * calls change nothing); anything else is read again and changed inside
 * one.
 */
static int reconcile_one(store_t *st, const struct cluster_def *d,
                         const struct cluster_row *known, const char *actor,
                         int *changed, exa_error_t *err)
{
    struct cluster_row row = {0};
    char *fpr = def_key_fingerprint(d->ssh_key);
    json_t *c = NULL;
    int found, rc = -1;

    if (known) {
        c = def_row_changes(d, known, fpr);
        if (!json_object_size(c)) {
            rc = 0;
            goto out;
        }
        json_decref(c);
        c = NULL;
    }
    if (store_begin(st, err) < 0)
        goto out;
    found = store_cluster_get(st, d->name, &row, err);
    if (found < 0)
        goto fail;
    if (!found) {
        json_t *det = json_object();
        row.name = xstrdup(d->name);
        row.scheduler = dn(d->scheduler ? d->scheduler : "unknown");
        row.transport = dn(d->transport ? d->transport : "ssh");
        row.host = dn(d->host);
        row.port = port_of(d->ssh_port);
        row.ssh_user = dn(d->ssh_user);
        row.ssh_key = dn(d->ssh_key);
        row.key_fingerprint = dn(fpr);
        row.state = xstrdup("PENDING");
        row.requested_by = xstrdup("clusters.yaml");
        if (store_cluster_put(st, &row, err) < 0) {
            json_decref(det);
            goto fail;
        }
        jx_set(det, "host", jx_str(d->host));
        jx_set(det, "scheduler", jx_str(row.scheduler));
        jx_set(det, "via", jx_str("clusters.yaml"));
        if (write_audit(st, actor, "cluster_defined", d->name, det, err) < 0)
            goto fail;
    } else {
        c = def_row_changes(d, &row, fpr);
        if (json_object_size(c)) {
            char *why = NULL;
            if (trusted_state(st, &row, &why, err) < 0)
                goto fail;
            if (why)
                jx_set(c, "audit_mismatch", jx_str(why));
            free(why);
            if (d->host)
                set(&row.host, d->host);
            if (d->ssh_port)
                row.port = d->ssh_port;
            if (d->ssh_user)
                set(&row.ssh_user, d->ssh_user);
            if (d->ssh_key) {
                set(&row.ssh_key, d->ssh_key);
                set(&row.key_fingerprint, fpr);
            }
            if (d->transport)
                set(&row.transport, d->transport);
            if (d->scheduler)
                set(&row.scheduler, d->scheduler);
            rc =
                apply_identity_change(st, &row, c, "clusters.yaml", actor, err);
            c = NULL;
            if (rc < 0)
                goto fail;
        }
    }
    if (store_commit(st, err) < 0)
        goto fail;
    if (changed)
        (*changed)++;
    rc = 0;
    goto out;
fail:
    rc = -1;
    store_rollback(st);
out:
    json_decref(c);
    cluster_row_release(&row);
    free(fpr);
    return rc;
}

static void rows_free(struct cluster_row *rows, size_t n)
{
    for (size_t k = 0; k < n; k++)
        cluster_row_release(&rows[k]);
    free(rows);
}

/*
 * gov_reconcile, keeping for fleet_load what it read: *text the bytes of
 * clusters.yaml under the lock (*exists 0 when there is no file) and *reg
 * their definitions; *rows / *nrows the cluster rows listed before the
 * reconcile when it wrote nothing (then they are what the store holds),
 * else NULL / 0. Each definition is compared with its row from one
 * ordered list (both sorted by name), not one lookup per definition.
 */
static int reconcile(store_t *st, const char *regpath, const char *actor,
                     int *changed, struct strbuf *text, int *exists,
                     struct registry *reg, struct cluster_row **rows,
                     size_t *nrows, exa_error_t *err)
{
    struct cluster_row *v = NULL;
    size_t n = 0, j = 0;
    int fd = registry_lock(regpath, 0, err), rc = 0, wrote = 0;
    *rows = NULL;
    *nrows = 0;
    if (fd < 0)
        return -1;
    *exists = registry_read(regpath, text, err);
    if (*exists < 0 || (*exists && registry_parse(text->buf, text->len, regpath,
                                                  reg, err) < 0))
        rc = -1;
    if (rc == 0 && reg->nr && store_cluster_list(st, &v, &n, err) < 0)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < reg->nr; i++) {
        const struct cluster_def *d = &reg->defs[i];
        while (j < n && strcmp(v[j].name, d->name) < 0)
            j++;
        rc = reconcile_one(st, d,
                           j < n && !strcmp(v[j].name, d->name) ? &v[j] : NULL,
                           actor, &wrote, err);
    }
    registry_unlock(fd);
    if (changed)
        *changed += wrote;
    if (rc == 0 && !wrote && reg->nr) {
        *rows = v;
        *nrows = n;
    } else {
        rows_free(v, n);
    }
    return rc;
}

int gov_reconcile(store_t *st, const char *regpath, const char *actor,
                  int *changed, exa_error_t *err)
{
    struct registry reg = REGISTRY_INIT;
    struct strbuf text = STRBUF_INIT;
    struct cluster_row *rows;
    size_t nrows;
    int exists, rc = reconcile(st, regpath, actor, changed, &text, &exists,
                               &reg, &rows, &nrows, err);
    rows_free(rows, nrows);
    registry_release(&reg);
    strbuf_release(&text);
    return rc;
}

/* ---- merged view ---- */

static void merge_def(struct fleet_cluster *fc, const struct cluster_def *y,
                      const struct cluster_row *r)
{
    struct cluster_def *d = &fc->def;
    if (y)
        cluster_def_copy(d, y);
    else
        d->name = xstrdup(r->name);
    if (r) {
        cluster_row_copy(&fc->row, r);
        if (!d->scheduler)
            d->scheduler = dn(r->scheduler);
        if (!d->transport)
            d->transport = dn(r->transport);
        if (!d->host)
            d->host = dn(r->host);
        if (!d->ssh_user)
            d->ssh_user = dn(r->ssh_user);
        if (!d->ssh_key)
            d->ssh_key = dn(r->ssh_key);
        if (!d->ssh_port)
            d->ssh_port = r->port;
        fc->state = cluster_state_parse(r->state);
        fc->in_db = 1;
        if (fc->audit_mismatch)
            fc->state = CLUSTER_PENDING;
    } else {
        fc->state = CLUSTER_PENDING;
    }
    if (!d->ssh_port)
        d->ssh_port = 22;
    if (!d->scheduler)
        d->scheduler = xstrdup("unknown");
    if (!d->transport)
        d->transport =
            xstrdup(target_is_local(NULL, d->host) ? "local" : "ssh");
    fc->in_yaml = y != NULL;
}

int fleet_load(store_t *st, const char *regpath, struct fleet *out,
               exa_error_t *err)
{
    struct registry reg = REGISTRY_INIT;
    struct strbuf text = STRBUF_INIT, again = STRBUF_INIT;
    struct cluster_row *rows = NULL;
    struct audit_event *evs = NULL;
    size_t nrows = 0, nevs = 0, i = 0, j = 0, k = 0, alloc = 0;
    char *actor = audit_actor();
    struct fleet f = {NULL, 0};
    int rc = -1, fd, exists, now, own_read = 0;

    if (reconcile(st, regpath, actor, NULL, &text, &exists, &reg, &rows, &nrows,
                  err) < 0)
        goto out;
    /* clusters.yaml is read again: an edit after the reconcile must show
     * as a difference below. The same bytes parse to the same
     * definitions, so only different bytes are parsed again. */
    fd = registry_lock(regpath, 0, err);
    if (fd < 0)
        goto out;
    now = registry_read(regpath, &again, err);
    registry_unlock(fd);
    if (now < 0)
        goto out;
    if (now != exists || again.len != text.len ||
        memcmp(again.buf, text.buf, text.len)) {
        registry_release(&reg);
        if (now && registry_parse(again.buf, again.len, regpath, &reg, err) < 0)
            goto out;
    }
    /* the rows the reconcile compared when it wrote nothing, else read
     * again */
    if (!rows && store_cluster_list(st, &rows, &nrows, err) < 0)
        goto out;
    /* The verification below in one read transaction (unless the caller
     * holds one): every cluster is checked against the same snapshot of
     * the chain, and each lookup does not take and drop the file locks of
     * a transaction of its own (2,000 fcntl(2) calls over 1,000
     * clusters). It writes nothing. */
    own_read = !store_in_transaction(st);
    if (own_read && store_begin_read(st, err) < 0)
        goto out;
    /* the newest event of every cluster, in name order as the rows */
    if (nrows && audit_latest_of_clusters(st, "cluster_", &evs, &nevs, err) < 0)
        goto out;
    /* Both lists are sorted by name (strcmp; SQLite's BINARY collation). */
    while (i < reg.nr || j < nrows) {
        const struct cluster_def *y = NULL;
        const struct cluster_row *r = NULL;
        int c;
        if (i == reg.nr)
            c = 1;
        else if (j == nrows)
            c = -1;
        else
            c = strcmp(reg.defs[i].name, rows[j].name);
        if (c <= 0)
            y = &reg.defs[i++];
        if (c >= 0)
            r = &rows[j++];
        ALLOC_GROW(f.v, f.nr + 1, alloc);
        memset(&f.v[f.nr], 0, sizeof(f.v[f.nr]));
        if (r) {
            exa_error_t verr = EXA_ERROR_INIT;
            while (k < nevs && strcmp(evs[k].target, r->name) < 0)
                k++;
            if (verify_against(r,
                               k < nevs && !strcmp(evs[k].target, r->name)
                                   ? &evs[k]
                                   : NULL,
                               &verr) < 0) {
                if (verr.code != EXA_ENOTAPPROVED) {
                    if (err)
                        *err = verr;
                    fleet_release(&f);
                    goto out;
                }
                f.v[f.nr].audit_mismatch = xstrdup(verr.text);
            }
        }
        if (r && y && !f.v[f.nr].audit_mismatch) {
            /* clusters.yaml edited after the reconcile above (another
             * process, or an editor that takes no lock): the merged view
             * would connect with settings nobody approved, so the
             * cluster is PENDING until the next reconcile records it */
            json_t *chg = def_row_changes(y, r, NULL);
            if (json_object_size(chg)) {
                char *keys = json_dumps(chg, JSON_COMPACT | JSON_SORT_KEYS);
                f.v[f.nr].audit_mismatch = xstrfmt(
                    "cluster '%s': clusters.yaml differs from its approved "
                    "identity (%s); it is treated as PENDING",
                    r->name, keys ? keys : "?");
                free(keys);
            }
            json_decref(chg);
        }
        merge_def(&f.v[f.nr], y, r);
        f.nr++;
    }
    if (own_read) {
        own_read = 0;
        if (store_commit(st, err) < 0) {
            fleet_release(&f);
            goto out;
        }
    }
    *out = f;
    rc = 0;
out:
    if (own_read)
        store_rollback(st);
    rows_free(rows, nrows);
    audit_events_free(evs, nevs);
    registry_release(&reg);
    strbuf_release(&text);
    strbuf_release(&again);
    free(actor);
    return rc;
}

void fleet_release(struct fleet *f)
{
    for (size_t i = 0; i < f->nr; i++) {
        cluster_def_release(&f->v[i].def);
        cluster_row_release(&f->v[i].row);
        free(f->v[i].audit_mismatch);
    }
    free(f->v);
    f->v = NULL;
    f->nr = 0;
}

struct fleet_cluster *fleet_find(const struct fleet *f, const char *name)
{
    for (size_t i = 0; i < f->nr; i++)
        if (!strcmp(f->v[i].def.name, name))
            return &f->v[i];
    return NULL;
}

int fleet_require_active(const struct fleet *f, const char *name,
                         exa_error_t *err)
{
    const struct fleet_cluster *c = fleet_find(f, name);
    if (cluster_name_check(name, NULL, err) < 0)
        return -1;
    if (!c)
        return exa_err(err, EXA_ENOTFOUND,
                       "unknown cluster: '%s' (run 'exa hpc connect' first)",
                       name);
    if (c->audit_mismatch)
        return exa_err(err, EXA_ENOTAPPROVED, "%s", c->audit_mismatch);
    if (c->state == CLUSTER_REJECTED) {
        char *cmd = fleet_connect_command(&c->def);
        exa_err(err, EXA_ENOTAPPROVED,
                "cluster '%s' is REJECTED — scheduling stays blocked until it "
                "is connected again ('%s' makes it PENDING) and approved "
                "('exa hpc approve %s')",
                name, cmd, name);
        free(cmd);
        return -1;
    }
    if (c->state != CLUSTER_ACTIVE)
        return exa_err(err, EXA_ENOTAPPROVED,
                       "cluster '%s' is %s — a sysadmin must approve it ('exa "
                       "hpc approve %s') before jobs can be scheduled on it",
                       name, cluster_state_name(c->state), name);
    return 0;
}

char *fleet_connect_command(const struct cluster_def *d)
{
    struct strbuf sb = STRBUF_INIT;
    const char *s = d->scheduler;
    strbuf_addstr(&sb, "exa hpc connect ");
    shquote_append(&sb, d->host && *d->host ? d->host : "local");
    strbuf_addstr(&sb, " --name ");
    shquote_append(&sb, d->name);
    if (d->ssh_user && *d->ssh_user) {
        strbuf_addstr(&sb, " --user ");
        shquote_append(&sb, d->ssh_user);
    }
    if (d->ssh_key && *d->ssh_key) {
        strbuf_addstr(&sb, " --key ");
        shquote_append(&sb, d->ssh_key);
    }
    if (d->ssh_port && d->ssh_port != 22)
        strbuf_addf(&sb, " --port %d", d->ssh_port);
    if (s && (!strcmp(s, "slurm") || !strcmp(s, "flux") || !strcmp(s, "mock")))
        strbuf_addf(&sb, " --scheduler %s", s);
    return strbuf_detach(&sb, NULL);
}

char *fleet_next_step(const struct fleet_cluster *c)
{
    const char *name = c->def.name;
    if (c->audit_mismatch)
        return xstrdup("exa hpc audit --verify");
    if (c->state == CLUSTER_REJECTED) {
        char *cmd = fleet_connect_command(&c->def);
        char *s = xstrfmt("connect it again (it becomes PENDING): %s, then "
                          "exa hpc approve %s",
                          cmd, name);
        free(cmd);
        return s;
    }
    if (c->state == CLUSTER_ACTIVE)
        return NULL;
    return xstrfmt("a sysadmin approves it: exa hpc approve %s", name);
}

/* ---- connect ---- */

static int connect_db(store_t *st, const struct gov_connect_req *q,
                      const char *actor, struct gov_result *res,
                      exa_error_t *err)
{
    struct cluster_row row = {0};
    enum cluster_state from = CLUSTER_NONE, to = CLUSTER_PENDING;
    int found = store_cluster_get(st, q->name, &row, err), rc = -1;
    char *mismatch_why = NULL;
    json_t *d;
    if (found < 0)
        return -1;
    res->identity_changed = 0;
    if (found) {
        json_t *c = json_object();
        if (trusted_state(st, &row, &mismatch_why, err) < 0) {
            json_decref(c);
            goto out;
        }
        from = cluster_state_parse(row.state);
        diff_str(c, "host", row.host, q->host);
        diff_port(c, row.port, q->ssh_port);
        diff_str(c, "ssh_user", row.ssh_user, q->ssh_user);
        diff_str(c, "ssh_key", row.ssh_key, q->ssh_key);
        diff_str(c, "transport", row.transport, q->transport);
        if (q->scheduler && strcmp(q->scheduler, "unknown"))
            diff_str(c, "scheduler", row.scheduler, q->scheduler);
        diff_str(c, "key_fingerprint", row.key_fingerprint, q->key_fingerprint);
        diff_str(c, "host_key_fingerprint", row.host_key_fingerprint,
                 q->host_key_fingerprint);
        set(&row.host, q->host);
        row.port = port_of(q->ssh_port);
        set(&row.ssh_user, q->ssh_user);
        set(&row.ssh_key, q->ssh_key);
        set(&row.transport, q->transport ? q->transport : "ssh");
        set(&row.key_fingerprint, q->key_fingerprint);
        set(&row.host_key_fingerprint, q->host_key_fingerprint);
        if (json_object_size(c)) {
            res->identity_changed = 1;
            if (apply_identity_change(st, &row, c, "connect", actor, err) < 0)
                goto out;
        } else {
            json_decref(c);
        }
    } else {
        row.name = xstrdup(q->name);
        row.host = dn(q->host);
        row.port = port_of(q->ssh_port);
        row.ssh_user = dn(q->ssh_user);
        row.ssh_key = dn(q->ssh_key);
        row.transport = dn(q->transport ? q->transport : "ssh");
        row.key_fingerprint = dn(q->key_fingerprint);
        row.host_key_fingerprint = dn(q->host_key_fingerprint);
    }
    /* The identity change (if any) already moved the state. */
    if (gov_transition(q->name, cluster_state_parse(row.state), GOV_CONNECT,
                       &to, err) < 0)
        goto out;
    if (!found)
        to = CLUSTER_PENDING;
    set(&row.state, cluster_state_name(to));
    set(&row.scheduler, q->scheduler ? q->scheduler : "unknown");
    if (q->capabilities)
        set(&row.capabilities, q->capabilities);
    if (to == CLUSTER_PENDING) {
        set(&row.requested_by, actor);
        if (from == CLUSTER_REJECTED)
            set(&row.approved_by, NULL);
    }
    if (store_cluster_put(st, &row, err) < 0)
        goto out;
    d = json_object();
    jx_set(d, "host", jx_str(q->host));
    jx_set(d, "scheduler", jx_str(row.scheduler));
    jx_set(d, "fingerprint", jx_str(q->key_fingerprint));
    jx_set(d, "host_key_fingerprint", jx_str(q->host_key_fingerprint));
    jx_set(d, "from_state", jx_str(cluster_state_name(from)));
    jx_set(d, "to_state", jx_str(cluster_state_name(to)));
    if (mismatch_why)
        jx_set(d, "audit_mismatch", jx_str(mismatch_why));
    if (write_audit(st, actor, "cluster_connect_requested", q->name, d, err) <
        0)
        goto out;
    res->from = from;
    res->to = to;
    rc = 0;
out:
    free(mismatch_why);
    cluster_row_release(&row);
    return rc;
}

int gov_connect(store_t *st, const char *regpath,
                const struct gov_connect_req *q, const char *actor,
                struct gov_result *res, exa_error_t *err)
{
    struct registry reg = REGISTRY_INIT;
    struct cluster_def def = {0}, *old;
    struct gov_result tmp;
    int fd, rc = -1;

    if (!q->name || !*q->name)
        return exa_err(err, EXA_EUSAGE, "a cluster needs a name");
    if (cluster_name_check(q->name, NULL, err) < 0)
        return -1;
    if (!res)
        res = &tmp;
    fd = registry_lock(regpath, 1, err);
    if (fd < 0)
        return -1;
    if (registry_load(regpath, &reg, err) < 0)
        goto out;
    old = registry_find(&reg, q->name);
    if (old)
        cluster_def_copy(&def, old);
    else
        def.name = xstrdup(q->name);
    set(&def.scheduler, q->scheduler ? q->scheduler : "unknown");
    set(&def.transport, q->transport ? q->transport : "ssh");
    set(&def.host, q->host);
    set(&def.ssh_user, q->ssh_user);
    set(&def.ssh_key, q->ssh_key);
    def.ssh_port = port_of(q->ssh_port);
    registry_put(&reg, &def);
    if (store_begin(st, err) < 0)
        goto out;
    if (connect_db(st, q, actor, res, err) < 0 ||
        registry_save(regpath, &reg, err) < 0 || store_commit(st, err) < 0) {
        store_rollback(st);
        goto out;
    }
    rc = 0;
out:
    cluster_def_release(&def);
    registry_release(&reg);
    registry_unlock(fd);
    return rc;
}

/* ---- approve / reject ---- */

static int same_identity(const struct cluster_row *a,
                         const struct cluster_row *b)
{
    return streq(a->host, b->host) && port_of(a->port) == port_of(b->port) &&
           streq(a->ssh_user, b->ssh_user) && streq(a->ssh_key, b->ssh_key) &&
           streq(a->key_fingerprint, b->key_fingerprint) &&
           streq(a->host_key_fingerprint, b->host_key_fingerprint) &&
           streq(a->transport, b->transport) &&
           streq(a->scheduler, b->scheduler);
}

static int decide(store_t *st, const char *regpath, const char *name,
                  enum gov_event ev, const char *reason,
                  const struct cluster_row *seen, const char *actor,
                  struct gov_result *res, exa_error_t *err)
{
    struct cluster_row row = {0};
    enum cluster_state from, to = CLUSTER_NONE;
    char *mismatch_why = NULL;
    int found, rc = -1;
    json_t *d;

    /* A YAML edit made since the caller looked must be applied first. */
    if (regpath && gov_reconcile(st, regpath, actor, NULL, err) < 0)
        return -1;
    if (store_begin(st, err) < 0)
        return -1;
    found = store_cluster_get(st, name, &row, err);
    if (found < 0)
        goto out;
    if (!found) {
        exa_err(err, EXA_ENOTFOUND, "Unknown cluster: %s", name);
        goto out;
    }
    if (seen && !same_identity(seen, &row)) {
        exa_err(err, EXA_EFAIL,
                "cluster '%s' changed its connection identity since it was "
                "shown; review it again ('exa hpc clusters')",
                name);
        goto out;
    }
    if (trusted_state(st, &row, &mismatch_why, err) < 0)
        goto out;
    from = cluster_state_parse(row.state);
    if (gov_transition(name, from, ev, &to, err) < 0)
        goto out;
    set(&row.state, cluster_state_name(to));
    set(&row.approved_by, actor);
    if (ev == GOV_REJECT)
        set(&row.reason, reason);
    else
        set(&row.reason, NULL);
    if (store_cluster_put(st, &row, err) < 0)
        goto out;
    d = json_object();
    if (ev == GOV_APPROVE) {
        jx_set(d, "host", jx_str(row.host));
        jx_set(d, "key_fingerprint", jx_str(row.key_fingerprint));
        jx_set(d, "host_key_fingerprint", jx_str(row.host_key_fingerprint));
        if (reason)
            jx_set(d, "reason", jx_str(reason));
    } else {
        jx_set(d, "reason", jx_str(reason));
    }
    jx_set(d, "from_state", jx_str(cluster_state_name(from)));
    if (mismatch_why)
        jx_set(d, "audit_mismatch", jx_str(mismatch_why));
    if (write_audit(st, actor,
                    ev == GOV_APPROVE ? "cluster_approved" : "cluster_rejected",
                    name, d, err) < 0)
        goto out;
    if (store_commit(st, err) < 0)
        goto out;
    if (res) {
        res->from = from;
        res->to = to;
        res->identity_changed = 0;
    }
    rc = 0;
out:
    if (rc < 0)
        store_rollback(st);
    free(mismatch_why);
    cluster_row_release(&row);
    return rc;
}

int gov_approve(store_t *st, const char *regpath, const char *name,
                const struct cluster_row *seen, const char *actor,
                struct gov_result *res, exa_error_t *err)
{
    return decide(st, regpath, name, GOV_APPROVE, NULL, seen, actor, res, err);
}

int gov_approve_reason(store_t *st, const char *regpath, const char *name,
                       const char *reason, const struct cluster_row *seen,
                       const char *actor, struct gov_result *res,
                       exa_error_t *err)
{
    return decide(st, regpath, name, GOV_APPROVE, reason, seen, actor, res,
                  err);
}

int gov_reject(store_t *st, const char *regpath, const char *name,
               const char *reason, const struct cluster_row *seen,
               const char *actor, struct gov_result *res, exa_error_t *err)
{
    return decide(st, regpath, name, GOV_REJECT, reason, seen, actor, res, err);
}

/* ---- audit --verify ---- */

static void add_problem(struct gov_audit_report *rep, size_t *alloc,
                        const char *cluster, long long event_id,
                        const char *message)
{
    ALLOC_GROW(rep->v, rep->nr + 1, *alloc);
    rep->v[rep->nr].cluster = cluster ? xstrdup(cluster) : NULL;
    rep->v[rep->nr].event_id = event_id;
    rep->v[rep->nr].message = xstrdup(message);
    rep->nr++;
}

int gov_audit_verify(store_t *st, struct gov_audit_report *rep,
                     exa_error_t *err)
{
    struct gov_audit_report r = {0, 0, NULL, 0};
    struct cluster_row *rows = NULL;
    exa_error_t verr = EXA_ERROR_INIT;
    size_t nrows = 0, alloc = 0;
    long long count = 0, bad = 0;

    if (audit_verify(st, &count, &bad, &verr) < 0) {
        if (verr.code != EXA_EFAIL) {
            if (err)
                *err = verr;
            return -1;
        }
        add_problem(&r, &alloc, NULL, bad, verr.text);
    } else {
        r.events = count;
    }
    if (store_cluster_list(st, &rows, &nrows, err) < 0) {
        gov_audit_report_release(&r);
        return -1;
    }
    for (size_t i = 0; i < nrows; i++) {
        verr = (exa_error_t)EXA_ERROR_INIT;
        if (governance_verify_cluster(st, &rows[i], &verr) < 0) {
            if (verr.code != EXA_ENOTAPPROVED) {
                if (err)
                    *err = verr;
                for (size_t k = 0; k < nrows; k++)
                    cluster_row_release(&rows[k]);
                free(rows);
                gov_audit_report_release(&r);
                return -1;
            }
            add_problem(&r, &alloc, rows[i].name, 0, verr.text);
        }
        r.clusters_checked++;
    }
    for (size_t k = 0; k < nrows; k++)
        cluster_row_release(&rows[k]);
    free(rows);
    *rep = r;
    return 0;
}

void gov_audit_report_release(struct gov_audit_report *rep)
{
    if (!rep)
        return;
    for (size_t i = 0; i < rep->nr; i++) {
        free(rep->v[i].cluster);
        free(rep->v[i].message);
    }
    free(rep->v);
    memset(rep, 0, sizeof(*rep));
}
