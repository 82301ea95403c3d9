/*
 * token.c - join and session tokens (token.h). HMAC, SHA-256 and the
 * CSPRNG come from libcrypto, which exa already links for host-key
 * fingerprints (WORKERS.md suggested GnuTLS; libcrypto avoids a second
 * crypto dependency in the core library, which does not link
 * libmicrohttpd).
 */
#include "libtask/token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libutil/dl_crypto_int.h"
#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static const char b64u[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void b64url_add(struct strbuf *sb, const unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        strbuf_addch(sb, b64u[v >> 18 & 63]);
        strbuf_addch(sb, b64u[v >> 12 & 63]);
        strbuf_addch(sb, b64u[v >> 6 & 63]);
        strbuf_addch(sb, b64u[v & 63]);
    }
    if (n - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        strbuf_addch(sb, b64u[v >> 18 & 63]);
        strbuf_addch(sb, b64u[v >> 12 & 63]);
    } else if (n - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        strbuf_addch(sb, b64u[v >> 18 & 63]);
        strbuf_addch(sb, b64u[v >> 12 & 63]);
        strbuf_addch(sb, b64u[v >> 6 & 63]);
    }
}

static int b64val(char c)
{
    const char *p = c ? strchr(b64u, c) : NULL;
    return p ? (int)(p - b64u) : -1;
}

/* Decode unpadded base64url s[0..n) into sb; -1 on a bad character or a
 * length of 1 mod 4. */
static int b64url_decode(const char *s, size_t n, struct strbuf *sb)
{
    size_t i;
    if (n % 4 == 1)
        return -1;
    for (i = 0; i < n; i += 4) {
        int v[4] = {0, 0, 0, 0};
        size_t k, m = n - i < 4 ? n - i : 4;
        unsigned x;
        for (k = 0; k < m; k++)
            if ((v[k] = b64val(s[i + k])) < 0)
                return -1;
        x = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 |
            (unsigned)v[3];
        strbuf_addch(sb, (char)(x >> 16 & 255));
        if (m > 2)
            strbuf_addch(sb, (char)(x >> 8 & 255));
        if (m > 3)
            strbuf_addch(sb, (char)(x & 255));
    }
    return 0;
}

void token_random(unsigned char *buf, size_t n)
{
    if (dl_crypto()->RAND_bytes(buf, (int)n) != 1)
        abort();
}

void token_random_hex(char *out, size_t n)
{
    unsigned char b[64];
    if (n > sizeof(b))
        abort();
    token_random(b, n);
    for (size_t i = 0; i < n; i++)
        xsnprintf(out + 2 * i, 3, "%02x", b[i]);
}

char *token_session_new(void)
{
    unsigned char b[32];
    struct strbuf sb = STRBUF_INIT;
    token_random(b, sizeof(b));
    strbuf_addstr(&sb, "exs_");
    b64url_add(&sb, b, sizeof(b));
    dl_crypto()->OPENSSL_cleanse(b, sizeof(b));
    return strbuf_detach(&sb, NULL);
}

void token_sha256_hex(const char *s, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    dl_crypto()->EVP_Digest(s, len, md, &mdlen, dl_crypto()->EVP_sha256(),
                            NULL);
    for (unsigned i = 0; i < 32; i++)
        xsnprintf(out + 2 * i, 3, "%02x", md[i]);
}

int token_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb)
        return 0;
    return dl_crypto()->CRYPTO_memcmp(a, b, la) == 0;
}

char *token_key_path(const char *dbpath)
{
    const char *slash = strrchr(dbpath, '/');
    if (!slash)
        return xstrdup("worker-hmac.key");
    return xstrfmt("%.*s/worker-hmac.key", (int)(slash - dbpath), dbpath);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static int parse_keys(const char *path, const char *text, struct token_keys *k,
                      exa_error_t *err)
{
    const char *p = text;
    int line = 0;
    k->n = 0;
    while (*p) {
        const char *nl = strchr(p, '\n'), *sp;
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        line++;
        sp = memchr(p, ' ', len);
        if (len == 0) {
            p += nl ? 1 : 0;
            if (!nl)
                break;
            continue;
        }
        if (!sp || sp == p || (size_t)(sp - p) > 16 ||
            len - (size_t)(sp - p) - 1 != 64 || k->n >= TOKEN_KEY_MAX)
            return exa_err(err, EXA_ECONFIG,
                           "worker key file '%s' line %d: expected "
                           "'<kid> <64 hex digits>'",
                           path, line);
        memcpy(k->k[k->n].kid, p, (size_t)(sp - p));
        k->k[k->n].kid[sp - p] = '\0';
        for (int i = 0; i < 32; i++) {
            int hi = hexval(sp[1 + 2 * i]), lo = hexval(sp[2 + 2 * i]);
            if (hi < 0 || lo < 0)
                return exa_err(err, EXA_ECONFIG,
                               "worker key file '%s' line %d: expected "
                               "'<kid> <64 hex digits>'",
                               path, line);
            k->k[k->n].key[i] = (unsigned char)(hi << 4 | lo);
        }
        k->n++;
        if (!nl)
            break;
        p = nl + 1;
    }
    if (!k->n)
        return exa_err(err, EXA_ECONFIG, "worker key file '%s' has no key",
                       path);
    return 0;
}

static int append_key(const char *path, const char *kid, exa_error_t *err)
{
    char hex[65];
    char *line;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ssize_t w;
    if (fd < 0)
        return exa_err(err, EXA_ECONFIG,
                       "cannot write worker key file '%s': %s", path,
                       strerror(errno));
    token_random_hex(hex, 32);
    line = xstrfmt("%s %s\n", kid, hex);
    w = write(fd, line, strlen(line));
    dl_crypto()->OPENSSL_cleanse(hex, sizeof(hex));
    dl_crypto()->OPENSSL_cleanse(line, strlen(line));
    free(line);
    if (w < 0 || fsync(fd) < 0) {
        close(fd);
        return exa_err(err, EXA_ECONFIG,
                       "cannot write worker key file '%s': %s", path,
                       strerror(errno));
    }
    close(fd);
    return 0;
}

int token_keys_load(const char *path, struct token_keys *out, exa_error_t *err)
{
    struct stat sb;
    struct strbuf text = STRBUF_INIT;
    char buf[4096];
    int fd, rc;
    ssize_t n;
    if (stat(path, &sb) < 0) {
        if (errno != ENOENT)
            return exa_err(err, EXA_ECONFIG,
                           "cannot read worker key file '%s': %s", path,
                           strerror(errno));
        if (append_key(path, "k1", err) < 0)
            return -1;
    } else if (sb.st_mode & 077) {
        return exa_err(err, EXA_ECONFIG,
                       "worker key file '%s' is readable by others (mode "
                       "%04o); chmod 600 it",
                       path, (unsigned)(sb.st_mode & 07777));
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return exa_err(err, EXA_ECONFIG, "cannot read worker key file '%s': %s",
                       path, strerror(errno));
    while ((n = read(fd, buf, sizeof(buf))) > 0 && text.len < 65536)
        strbuf_add(&text, buf, (size_t)n);
    close(fd);
    rc = parse_keys(path, text.buf, out, err);
    dl_crypto()->OPENSSL_cleanse(text.buf, text.len);
    strbuf_release(&text);
    return rc;
}

int token_keys_rotate(const char *path, struct token_keys *keys,
                      exa_error_t *err)
{
    char kid[17];
    if (keys->n >= TOKEN_KEY_MAX)
        return exa_err(err, EXA_ECONFIG,
                       "worker key file '%s' already holds %d keys", path,
                       TOKEN_KEY_MAX);
    xsnprintf(kid, sizeof(kid), "k%zu", keys->n + 1);
    if (append_key(path, kid, err) < 0)
        return -1;
    return token_keys_load(path, keys, err);
}

static void mac_of(const unsigned char key[32], const char *payload, size_t len,
                   unsigned char out[32])
{
    struct strbuf m = STRBUF_INIT;
    unsigned outlen = 32;
    strbuf_addstr(&m, "exa-join-v1.");
    strbuf_add(&m, payload, len);
    dl_crypto()->HMAC(dl_crypto()->EVP_sha256(), key, 32,
                      (const unsigned char *)m.buf, m.len, out, &outlen);
    strbuf_release(&m);
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

char *token_join_mint(const struct token_keys *keys,
                      const struct join_claims *c)
{
    struct strbuf payload = STRBUF_INIT, tok = STRBUF_INIT;
    unsigned char mac[32];
    const size_t cur = keys->n - 1;
    strbuf_addf(&payload, "w=%s&r=%s&c=%s&p=%s&e=%s&nbf=%lld&exp=%lld&j=%s",
                or_dash(c->worker_id), or_dash(c->request_id),
                or_dash(c->cluster), or_dash(c->profile), or_dash(c->engine_id),
                c->nbf, c->exp, c->jti);
    mac_of(keys->k[cur].key, payload.buf, payload.len, mac);
    strbuf_addf(&tok, "exa1.%s.", keys->k[cur].kid);
    b64url_add(&tok, (const unsigned char *)payload.buf, payload.len);
    strbuf_addch(&tok, '.');
    b64url_add(&tok, mac, sizeof(mac));
    strbuf_release(&payload);
    return strbuf_detach(&tok, NULL);
}

const char *token_refusal_name(enum token_refusal r)
{
    switch (r) {
    case TOKEN_OK:
        return "ok";
    case TOKEN_UNKNOWN_KID:
        return "unknown_kid";
    case TOKEN_EXPIRED:
        return "expired";
    case TOKEN_MALFORMED:
    case TOKEN_BAD_SIGNATURE:
        break;
    }
    return "bad_signature";
}

/* Copy field key=value from the fixed-order payload cursor *p. */
static int take(const char **p, const char *key, char *out, size_t n)
{
    const char *v;
    size_t len;
    const char *amp;
    if (!skip_prefix(*p, key, &v) || *v != '=')
        return -1;
    v++;
    amp = strchr(v, '&');
    len = amp ? (size_t)(amp - v) : strlen(v);
    if (len == 0 || len >= n)
        return -1;
    memcpy(out, v, len);
    out[len] = '\0';
    *p = amp ? amp + 1 : v + len;
    return 0;
}

static int take_int(const char **p, const char *key, long long *out)
{
    char buf[24];
    int64_t v;
    if (take(p, key, buf, sizeof(buf)) < 0 || parse_i64_str(buf, &v) < 0)
        return -1;
    *out = v;
    return 0;
}

enum token_refusal token_join_verify(const struct token_keys *keys,
                                     const char *tok, double now, double skew_s,
                                     struct join_claims *out)
{
    const char *p, *d1, *d2;
    char kid[17];
    struct strbuf payload = STRBUF_INIT, mac = STRBUF_INIT;
    unsigned char want[32];
    const unsigned char *key = NULL;
    struct join_claims c;
    enum token_refusal rc = TOKEN_MALFORMED;
    size_t tl = tok ? strnlen(tok, 2049) : 2049;
    if (tl > 2048 || !skip_prefix(tok, "exa1.", &p))
        return TOKEN_MALFORMED;
    d1 = strchr(p, '.');
    if (!d1 || d1 == p || (size_t)(d1 - p) >= sizeof(kid))
        return TOKEN_MALFORMED;
    memcpy(kid, p, (size_t)(d1 - p));
    kid[d1 - p] = '\0';
    d2 = strchr(d1 + 1, '.');
    if (!d2 || strchr(d2 + 1, '.'))
        return TOKEN_MALFORMED;
    for (size_t i = 0; i < keys->n; i++)
        if (!strcmp(keys->k[i].kid, kid))
            key = keys->k[i].key;
    if (!key)
        return TOKEN_UNKNOWN_KID;
    if (b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), &payload) < 0 ||
        b64url_decode(d2 + 1, strlen(d2 + 1), &mac) < 0 || mac.len != 32)
        goto out;
    mac_of(key, payload.buf, payload.len, want);
    if (dl_crypto()->CRYPTO_memcmp(want, mac.buf, 32) != 0) {
        rc = TOKEN_BAD_SIGNATURE;
        goto out;
    }
    memset(&c, 0, sizeof(c));
    p = payload.buf;
    if (strlen(payload.buf) != payload.len ||
        take(&p, "w", c.worker_id, sizeof(c.worker_id)) < 0 ||
        take(&p, "r", c.request_id, sizeof(c.request_id)) < 0 ||
        take(&p, "c", c.cluster, sizeof(c.cluster)) < 0 ||
        take(&p, "p", c.profile, sizeof(c.profile)) < 0 ||
        take(&p, "e", c.engine_id, sizeof(c.engine_id)) < 0 ||
        take_int(&p, "nbf", &c.nbf) < 0 || take_int(&p, "exp", &c.exp) < 0 ||
        take(&p, "j", c.jti, sizeof(c.jti)) < 0 || *p)
        goto out; /* signed by us but not ours: treated as malformed */
    *out = c;
    rc = (now > (double)c.exp + skew_s || now < (double)c.nbf - skew_s)
             ? TOKEN_EXPIRED
             : TOKEN_OK;
out:
    strbuf_release(&payload);
    strbuf_release(&mac);
    return rc;
}
