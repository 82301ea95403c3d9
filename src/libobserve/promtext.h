/*
 * promtext.h - a Prometheus text exposition writer (format 0.0.4).
 *
 * Format: https://prometheus.io/docs/instrumenting/exposition_formats/
 * ("Text-based format"). A set collects families (name, type, help) and
 * their samples (label pairs, value); prom_render() writes each family
 * once with its # HELP and # TYPE lines, families sorted by name and the
 * samples of a family sorted by their rendered label set, so the same
 * content always renders to the same bytes. A sample added twice with the
 * same labels is one series whose value is the sum (counting by account or
 * partition is then one call per job).
 *
 * Escaping: HELP text escapes `\` and newline; label values escape `\`,
 * `"` and newline; bytes that are not valid UTF-8 in a label value are
 * replaced by U+FFFD, since Prometheus rejects the whole scrape otherwise.
 * Values: integers with |v| < 2^53 print exactly ("42", "-3"); other
 * finite values print the shortest form that reads back equal (%.15g, else
 * %.17g); infinities print "+Inf"/"-Inf" and NaN "NaN", which the format
 * allows for any sample value.
 */
#ifndef EXA_PROMTEXT_H
#define EXA_PROMTEXT_H

#include <stddef.h>

#include "libutil/error.h"
#include "libutil/strbuf.h"

enum prom_type { PROM_GAUGE = 0, PROM_COUNTER, PROM_UNTYPED };

struct prom_set;
struct prom_family;

/* A new empty set; free with prom_set_free(). */
struct prom_set *prom_set_new(void);
/* Free the set, its families and samples. NULL is accepted. */
void prom_set_free(struct prom_set *set);
/*
 * Move every family and sample of src into dst and free src (NULL is
 * accepted). A family that dst does not have moves whole; one that it has
 * (the same name, which must have the same type: else BUG) gets src's
 * samples, summed with its own where the label sets are equal. The label
 * strings stay where they are (src's memory becomes dst's), so this costs
 * nothing per sample for moved families. For building one exposition on
 * several threads, each with a set of its own.
 */
void prom_set_adopt(struct prom_set *dst, struct prom_set *src);

/*
 * Declare (or find) the family `name`. name must match
 * [a-zA-Z_:][a-zA-Z0-9_:]*; help is any text (may be NULL: no HELP line).
 * Declaring an existing name again returns the same family when the type
 * matches. Returns the family (owned by set) or NULL with err (EXA_EFAIL)
 * for an invalid name or a type conflict.
 */
struct prom_family *prom_family(struct prom_set *set, const char *name,
                                enum prom_type type, const char *help,
                                exa_error_t *err);

/*
 * Add a sample to fam. labels is a NULL-terminated list of alternating
 * names and values ("cluster", "a", "node", "n1", NULL), or NULL for no
 * labels; a pair whose value is NULL is left out. Label names must match
 * [a-zA-Z_][a-zA-Z0-9_]* and not start with "__". The series with these
 * labels (in this order) gets value added to it (created at 0). Returns 0,
 * or -1 with err (EXA_EFAIL) for an invalid label name; nothing is added.
 */
int prom_add(struct prom_family *fam, const char *const *labels, double value,
             exa_error_t *err);

/*
 * A label set rendered once for several families (a node's labels on its
 * CPU, memory, GPU and status series): s is the label string exactly as
 * prom_add() builds it ("" or '{k="v",...}', len bytes), held by the set
 * that made it until prom_set_free().
 */
struct prom_labels {
    const char *s;
    size_t len;
};

/*
 * Render labels (as for prom_add()) into *out, in set's memory. Returns
 * 0, or -1 with err (EXA_EFAIL) for an invalid label name; *out is then
 * unchanged.
 */
int prom_labels_make(struct prom_set *set, const char *const *labels,
                     struct prom_labels *out, exa_error_t *err);

/*
 * prom_add() with a label set made by prom_labels_make() on fam's own
 * set (no copy: the series refers to l->s); l from another set is a bug.
 */
void prom_add_labels(struct prom_family *fam, const struct prom_labels *l,
                     double value);

/*
 * Hint that fam's samples are distinct (one per job, say): prom_add()
 * then keeps no index to find an existing series (no hashing, no index
 * memory). The output is the same: equal label sets are still summed,
 * when the family is sorted for rendering.
 */
void prom_family_unique(struct prom_family *fam);
/* Number of distinct series in the set (after merging duplicates). */
size_t prom_set_series(struct prom_set *set);

/* Append the exposition of the whole set to out. */
void prom_render(struct prom_set *set, struct strbuf *out);
/*
 * Write the exposition of the set through write(ctx, bytes, n) in pieces
 * of about 60 KiB (the same bytes prom_render() would append), so the
 * whole text is never in memory. write returns 0, or -1 to stop.
 * Returns 0, or -1 when write failed (the output is then cut short).
 */
typedef int (*prom_write_f)(void *ctx, const char *bytes, size_t n);
int prom_render_stream(struct prom_set *set, prom_write_f write, void *ctx);

/* Append v formatted as a sample value (rules above) to out. */
void prom_format_value(struct strbuf *out, double v);

/* Append s escaped as a label value (without quotes) to out. */
void prom_escape_label(struct strbuf *out, const char *s);

/* Content-Type of the exposition, for HTTP responses. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
