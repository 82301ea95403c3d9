/*
 * debug_flux.h - `exa debug parse` adapters for the Flux kinds and
 * nvidia-smi (signature: parse_kind_f of cmd/debug_kinds.h).
 */
#ifndef EXA_DEBUG_FLUX_H
#define EXA_DEBUG_FLUX_H

#include "cmd/debug_kinds.h"

/* `flux jobs` output (any format) -> {"jobs", "stats"}. */
json_t *debug_parse_flux_jobs(const char *buf, size_t len,
                              const struct cmd_spec *spec, exa_error_t *err,
                              char *errkind, size_t errkind_len);
/* `flux job eventlog` / `flux job info ID eventlog` -> events, summary. */
json_t *debug_parse_flux_eventlog(const char *buf, size_t len,
                                  const struct cmd_spec *spec, exa_error_t *err,
                                  char *errkind, size_t errkind_len);
/* `flux resource list` / `status` -> {"groups", "nodes"}. */
json_t *debug_parse_flux_resource(const char *buf, size_t len,
                                  const struct cmd_spec *spec, exa_error_t *err,
                                  char *errkind, size_t errkind_len);
/*
 * `nvidia-smi --query-gpu=... --format=csv...` -> {"gpus"}. Headerless
 * output takes its columns from the command line in $EXA_PARSE_COMMAND
 * (its --query-gpu option) when set, else from the product's query.
 */
json_t *debug_parse_nvidia_smi(const char *buf, size_t len,
                               const struct cmd_spec *spec, exa_error_t *err,
                               char *errkind, size_t errkind_len);

#endif
