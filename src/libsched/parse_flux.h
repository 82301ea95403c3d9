/*
 * parse_flux.h - exa's own parsers for Flux command output: `flux jobs`
 * (text tables, custom -o formats, --json, --recursive sections), job ids
 * (F58 and decimal), job state tokens, wait statuses, Flux Standard
 * Duration, `flux job eventlog` (four formats) with its job state summary,
 * and job accounting from an eventlog plus the job's R.
 *
 * Formats: flux-jobs(1), flux-job(1), flux-resource(1) of flux-core;
 * RFC 19 (F58 ids), RFC 18 (eventlog), RFC 20 (R), RFC 23 (FSD),
 * doc/formats.md for the normalized JSON shapes.
 *
 * All functions are pure: bytes in, values or new JSON references out.
 */
#ifndef EXA_PARSE_FLUX_H
#define EXA_PARSE_FLUX_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "libutil/cmdspec.h"
#include "libutil/error.h"
#include "libutil/strvec.h"

/*
 * Decode a Flux job id: F58 with prefix 'ƒ' (UTF-8 C6 92), 'f' or the
 * mojibake '_' (RFC 19 alphabet
 * 123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz), or a plain
 * decimal number. The prefix may also arrive as the copy/paste artefacts
 * of flux-core#3124: the literal text "\\306\\222", or "Æ’" (C6 92 read
 * as cp1252 and re-encoded). s is NUL-terminated and must hold nothing else.
 * Returns 0 and sets *id, or -1 when s is not a job id (or overflows).
 */
int flux_jobid_parse(const char *s, uint64_t *id);

/*
 * Copy len bytes of buf into out without ANSI SGR/CSI escape sequences
 * (ESC '[' ... final byte), as printed by `--color=always` / `-L`.
 */
struct strbuf;
void flux_strip_ansi(const char *buf, size_t len, struct strbuf *out);

/* Encode id as F58 with the UTF-8 'ƒ' prefix into buf (>= 16 bytes). */
void flux_jobid_f58(uint64_t id, char *buf, size_t len);

/*
 * Normalize a Flux state/status/result token (`R`, `RUN`, `CD`,
 * `CANCELED`, `S`, `SCHED`, ...) to exa's job state set (doc/formats.md):
 * PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT or UNKNOWN
 * (static string; never NULL).
 */
const char *flux_state_normalize(const char *tok);

/*
 * Decode a POSIX wait status (waitpid(2)): 256 -> exit 1; 15 -> signal 15.
 * *exit_code / *signal are set to -1 when absent.
 */
void flux_waitstatus_decode(long long status, int *exit_code, int *signal);

/*
 * Parse a Flux Standard Duration (RFC 23): a non-negative number with an
 * optional unit s, m, h or d ("0.057s", "1.765m", "1d", "45").
 * Also takes the "H:MM:SS" / "D days, H:MM:SS" text that flux-jobs prints
 * for the !H conversion ({runtime!H}; Python str(timedelta)).
 * Returns 0 and *secs, or -1 when s is not a finite FSD ("-", "inf").
 * Wraps fsd_parse() of libutil/duration.h.
 */
int flux_fsd_parse(const char *s, double *secs);

/*
 * Expand a Slurm-style hostlist as Flux prints it in NODELIST
 * ("fluke[1-3,5]", "quartz[4-5],login1", "fluke[108,108]") appending each
 * host to out in order (duplicates kept). Returns 0, or -1 on a
 * malformed expression (nothing is appended then).
 * Wraps hostlist_expand() of libhostlist/hostlist.h (Slurm semantics).
 */
int flux_hostlist_expand(const char *s, struct strvec *out);

/*
 * Expand an RFC 22 idset ("0-3,7", "[2-3]") into ascending integers
 * appended to *ids (xrealloc'ed, *n updated). Returns 0 or -1.
 */
int flux_idset_expand(const char *s, long long **ids, size_t *n);

/*
 * A text table as Flux's Python formatters print it: a header line and
 * rows whose cells line up under (right- or left-aligned) header words.
 * Cells are found by display position (UTF-8 code points), never by
 * counting whitespace tokens, so empty cells and values holding a space
 * ("Mar29 17:28") land in the right column; a value that overflows its
 * column (flux-core#4269) still goes to the nearest column to its right.
 */
struct flux_table_hdr {
    size_t ncols;
    char **names;  /* column names as printed */
    size_t *start; /* code point span of each header word */
    size_t *end;
    int aligned;  /* header padded (leading or doubled spaces) */
    int by_token; /* synthesized header: cells are tokens in order,
                     the last column takes the rest of the row */
};

/* Split the header line hdr (len bytes) into columns. Release with
 * flux_table_hdr_release(). Returns the number of columns. */
size_t flux_table_hdr_init(struct flux_table_hdr *h, const char *hdr,
                           size_t len);
void flux_table_hdr_release(struct flux_table_hdr *h);

/*
 * Fill cells[0..h->ncols-1] with the malloc'ed text of each cell of row
 * (len bytes), or NULL for an empty cell. Caller frees each cell.
 * A header printed without padding comes from a format without widths
 * ("{id} {returncode}"): its rows do not line up, so a row with as many
 * tokens as columns is then read token by token.
 */
void flux_table_row(const struct flux_table_hdr *h, const char *row, size_t len,
                    char **cells);

/*
 * Parse `flux jobs` output of any of its forms into
 * {"jobs": [...], "stats": [...]} (doc/formats.md "Jobs"): the default and
 * custom (-o) tables, with or without --stats and --recursive sections,
 * `--json` (one object, {"jobs": [...]}, or JSON lines), the bare job
 * ids `flux batch`/`flux submit` print, and rows holding 0x1F, read as
 * exa's own status query (flux_jobs_parse_format() with format NULL).
 * Returns a new reference, or NULL with err set and *errkind pointing at
 * a static doc/formats.md error kind: "unknown_job" for Flux's unknown-id
 * text, "flux_error" for another diagnostic with no job listed.
 */
json_t *flux_jobs_parse(const char *buf, size_t len, const char **errkind,
                        exa_error_t *err);

/*
 * exa's own `flux jobs --no-header -o FORMAT` queries: fields flux-core
 * 0.88 has (flux-jobs(1) "OUTPUT FORMAT"), joined by 0x1F so an empty
 * cell (no t_run, no queue) keeps its place. STATUS: libsched/flux.c's
 * status query; OBSERVE: libobserve/collect.c's job listing (flux jobs
 * has no GPU field: GPUs come from R).
 */
#define FLUX_JOBS_STATUS_FORMAT                                                \
    "{id.f58}\x1f{state}\x1f{result}\x1f{t_submit}\x1f{t_run}\x1f"             \
    "{t_inactive}\x1f{waitstatus}\x1f{runtime}"
#define FLUX_JOBS_OBSERVE_FORMAT                                               \
    "{id.f58}\x1f{username}\x1f{queue}\x1f{status_abbrev}\x1f{ncores}"         \
    "\x1f{nodelist}"

/*
 * The columns of a flux-jobs(1) -o FORMAT: each "{field[:spec][!conv]}"
 * gives the header flux prints for it ("{id.f58}" -> JOBID, "{t_run}" ->
 * T_RUN, "{username}" -> USER; a field without a known header gives its
 * own name in upper case), appended to fields. *sep is the one byte
 * between fields (0 for a single field). Returns 0, or -1 when the format
 * has no field, text other than one repeated byte between fields, or
 * text around them.
 */
int flux_jobs_format_fields(const char *format, struct strvec *fields,
                            char *sep);

/*
 * Parse the output of `flux jobs --no-header -o FORMAT` for a FORMAT
 * whose fields are joined by one byte other than a blank (exa's 0x1F
 * queries above): rows are cut at that byte, so empty cells stay empty,
 * and each row is a job of flux_jobs_parse()'s shape ({"jobs": [...]};
 * a time of 0.0 is "not yet", i.e. absent). Lines without the separator
 * are Flux's diagnostics ("JobID f1 unknown"). format NULL: output
 * holding 0x1F is read as FLUX_JOBS_STATUS_FORMAT (what `exa debug parse
 * flux-jobs` sees of exa's own status query). Any other format or output
 * goes to flux_jobs_parse(). Returns a new reference, or NULL with err
 * and *errkind as flux_jobs_parse().
 */
json_t *flux_jobs_parse_format(const char *buf, size_t len, const char *format,
                               const char **errkind, exa_error_t *err);

/*
 * The job ids `flux batch` / `flux submit` print (flux-batch(1): one id
 * a line on stdout): every line that is exactly one valid job id
 * (flux_jobid_parse()) is appended to ids, in order; any other line
 * (warnings, however long) is skipped. Returns the number of ids in ids.
 */
int flux_submit_ids(const char *buf, size_t len, struct strvec *ids);

/*
 * Parse a job eventlog (`flux job eventlog` default text, `-T iso`, `-H`
 * human, or the JSON lines of `flux job info ID eventlog`) into
 * {"events": [...], "summary": {...}} (doc/formats.md "flux-eventlog").
 * Returns a new reference, or NULL with err set when no event could be
 * read: err->code is EXA_ENOTFOUND when the text is Flux's "unknown
 * job" / "No such file or directory" message, EXA_EPARSE otherwise.
 */
json_t *flux_eventlog_parse(const char *buf, size_t len, exa_error_t *err);

/*
 * Compute the summary (flux_state, state, result, exit_code, signal,
 * exception, submit, start, end) of an events array as built by
 * flux_eventlog_parse(). New reference.
 */
json_t *flux_eventlog_summary(const json_t *events);

/* Accounting of one Flux job: -1 / negative where unknown. */
struct flux_job_acct {
    long long nodes;      /* ranks in R_lite */
    long long cores;      /* cores over all ranks */
    long long gpus;       /* gpus over all ranks */
    double queue_seconds; /* submit -> alloc (start when no alloc) */
    double run_seconds;   /* start -> finish (R expiration bounds none) */
    double cpu_hours;     /* cores * run_seconds / 3600 */
    double gpu_hours;     /* gpus * run_seconds / 3600 */
};

/*
 * Fill acct from an eventlog result (flux_eventlog_parse(), borrowed) and
 * the job's R (`flux job info ID R`, RFC 20, borrowed; may be NULL).
 * run_seconds: start..finish events; when the eventlog lacks them,
 * R execution.starttime..expiration is not used (it is a limit, not a
 * runtime) and run_seconds stays -1. Returns 0, or -1 with err set when
 * R is present but malformed.
 */
int flux_job_accounting(const json_t *eventlog, const json_t *R,
                        struct flux_job_acct *acct, exa_error_t *err);

/*
 * flux_jobs_parse with the command line that printed buf (cmdspec.h,
 * parse_flux_cmd.c): `flux jobs -n -o FORMAT` printed no header, so the
 * format's fields name the columns when every row has one blank-separated
 * token per field (else rows are read by shape). A spec of another tool,
 * one with a
 * header printed, or one without fields: exactly flux_jobs_parse.
 */
json_t *flux_jobs_parse_cmd(const char *buf, size_t len,
                            const struct cmd_spec *spec, const char **errkind,
                            exa_error_t *err);

#endif
