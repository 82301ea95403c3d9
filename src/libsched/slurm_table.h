/*
 * slurm_table.h - split Slurm command output (sinfo, squeue, sacct) into a
 * header and rows of fields, whatever the separator: '|' (-P, -o '%a|%b'),
 * 0x1E-led records of 0x1F fields (delimiter-safe formats), ',' (-o '%A,%T'),
 * or blanks, including fixed-width -O columns that overflow into each other
 * and sacct's dashed column rulers.
 */
#ifndef EXA_SLURM_TABLE_H
#define EXA_SLURM_TABLE_H

#include <stddef.h>

#include "libutil/arena.h"
#include "libutil/cmdspec.h"
#include "libutil/error.h"

struct slurm_row {
    char **f; /* fields, trimmed; the strings belong to the table */
    size_t nf;
    size_t ntokens;     /* blank-separated tokens before any column slicing */
    int sliced;         /* 1 when fields came from header column offsets */
    size_t *off;        /* blank-separated rows: [start, end) byte offsets of
                         * each token in the line (2 * nf entries); else NULL */
    unsigned char *cut; /* rows cut by a command's widths: cut[k] = 1 when
                         * cell k filled its width (the value may have
                         * been truncated); else NULL */
    int kept;           /* 1 when the strings of f live in the table's text
                         * arena (see struct slurm_table), else 0 */
    const char *text;   /* kept rows: the copy of the line the cells were
                         * cut from, text_len bytes, then its NUL and
                         * SLURM_ROW_PAD zero bytes; else NULL */
    size_t text_len;
};

/* The zero bytes after a kept row's copy (slurm_row.text): a string in
 * it may be read 16 bytes at a time up to 15 bytes past its NUL. */
#define SLURM_ROW_PAD 16

/* Rows a split takes at most; more is an error ("more than N rows"). */
#define SLURM_TABLE_MAX_ROWS 10000000

struct slurm_table {
    char **hdr; /* header names as printed (trimmed), or NULL */
    size_t nhdr;
    struct slurm_row *rows;
    size_t nrows, alloc;
    char sep;             /* '|', 0x1F, ',' or ' ' */
    int trailing_sep;     /* header ended with sep (sacct -p): dropped */
    int not_all_trailing; /* some row does not end with an empty field */
    struct arena arena;   /* storage of the fields and arrays (private) */
    char *error_line;     /* first Slurm client error line skipped, or NULL */
    int hdr_printed;      /* hdr is a printed line (else none, or the
                           * command's names from a cmd_spec) */
    struct arena *text;   /* set by the caller before the split, or NULL: an
                           * arena of the caller's (it outlives the table)
                           * where rows split on a separator keep their
                           * cells' text, so a caller that keeps the
                           * strings need not copy them (slurm_row.kept);
                           * other rows' cells are the table's */
    const char *head;     /* set by the caller before the split, or NULL:
                           * head_len bytes of whole records (a header
                           * line) split ahead of buf's, as if buf followed
                           * them in one buffer, without that copy */
    size_t head_len;
    size_t rows_hint; /* set by the caller before the split, or 0: the rows
                       * it expects, room made for at once (a guess, never
                       * a limit) */
};

/*
 * Is the line (l bytes at p) a Slurm client's error text rather than
 * data: "slurm_load_partitions: Unable to contact slurm controller
 * (connect failure)", "sacct: error: ...", "error: ..."? Such lines are
 * skipped by slurm_table_split and the first is kept in error_line.
 */
int slurm_error_line(const char *p, size_t l);

/*
 * Drop the last field of every row (all of them end with an empty one):
 * headerless `sacct -p` output, told apart from -P only by trying.
 */
void slurm_table_drop_trailing(struct slurm_table *t);

/*
 * Known header name test: returns non-zero when the upper-cased name (no
 * "%N" width suffix) is a column name of the tool being parsed.
 */
typedef int (*slurm_hdr_known_f)(const char *upper_name);

/*
 * Split len bytes at buf into t (zeroed by the caller, t->text then set
 * or not). A first line
 * whose first field and at least half of its fields are known names is
 * taken as the header. Blank lines and dashed ruler lines are skipped.
 * free_text_last: when non-zero and a blank-separated row has more tokens
 * than the header, the extra tokens are joined into the last column when
 * its name is free text (REASON, NODELIST(REASON), COMMENT, NAME);
 * otherwise the row is sliced at the header's column offsets.
 * Returns 0; -1 only on a hard limit (more than 10 million rows).
 */
int slurm_table_split(const char *buf, size_t len, slurm_hdr_known_f known,
                      struct slurm_table *t, exa_error_t *err);

/*
 * slurm_table_split with the command line's column spec (cmdspec.h):
 * when the command sets a separator (sacct -P/--delimiter, squeue -o
 * '%i|%T', -O 'JobID:|') rows are split on it; when it fixes every width
 * (-O's 20-character default, '%.10T', sacct '%25') and printed no header
 * (-h/-n), rows are cut at those widths and row->cut marks full cells;
 * otherwise the usual split runs and, where no header was printed, the
 * command's column names become the header. In every case t->hdr is the
 * command's names when the output printed none (a printed header line is
 * recognised and skipped). spec NULL or without columns: exactly
 * slurm_table_split. Same return convention.
 */
int slurm_table_split_spec(const char *buf, size_t len, slurm_hdr_known_f known,
                           const struct cmd_spec *spec, struct slurm_table *t,
                           exa_error_t *err);

/* Free everything t owns; t is zeroed. */
void slurm_table_free(struct slurm_table *t);

/* Index of the first header column named name (case-insensitive), or -1. */
long slurm_table_col(const struct slurm_table *t, const char *name);

#endif
