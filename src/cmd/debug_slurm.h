/*
 * debug_slurm.h - `exa debug parse` adapters for the Slurm kinds and
 * hostlist (signature: parse_kind_f in debug_kinds.h).
 */
#ifndef EXA_DEBUG_SLURM_H
#define EXA_DEBUG_SLURM_H

#include "cmd/debug_kinds.h"

json_t *debug_parse_sinfo(const char *buf, size_t len,
                          const struct cmd_spec *spec, exa_error_t *err,
                          char *errkind, size_t errkind_len);
/* debug_parse_sinfo written as it goes (parse_stream_f). */
int debug_stream_sinfo(const char *buf, size_t len, const struct cmd_spec *spec,
                       FILE *out, exa_error_t *err, char *errkind,
                       size_t errkind_len);
/* debug_parse_squeue / debug_parse_sacct written as they go. */
int debug_stream_squeue(const char *buf, size_t len,
                        const struct cmd_spec *spec, FILE *out,
                        exa_error_t *err, char *errkind, size_t errkind_len);
int debug_stream_sacct(const char *buf, size_t len, const struct cmd_spec *spec,
                       FILE *out, exa_error_t *err, char *errkind,
                       size_t errkind_len);
json_t *debug_parse_squeue(const char *buf, size_t len,
                           const struct cmd_spec *spec, exa_error_t *err,
                           char *errkind, size_t errkind_len);
json_t *debug_parse_sacct(const char *buf, size_t len,
                          const struct cmd_spec *spec, exa_error_t *err,
                          char *errkind, size_t errkind_len);
json_t *debug_parse_sbatch(const char *buf, size_t len,
                           const struct cmd_spec *spec, exa_error_t *err,
                           char *errkind, size_t errkind_len);
json_t *debug_parse_hostlist(const char *buf, size_t len,
                             const struct cmd_spec *spec, exa_error_t *err,
                             char *errkind, size_t errkind_len);

#endif
