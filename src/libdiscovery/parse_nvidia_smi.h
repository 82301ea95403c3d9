/*
 * parse_nvidia_smi.h - exa's reader of
 * `nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]`
 * (nvidia-smi(1), "--help-query-gpu"), giving the GPU records of
 * doc/formats.md "nvidia-smi".
 */
#ifndef EXA_PARSE_NVIDIA_SMI_H
#define EXA_PARSE_NVIDIA_SMI_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/error.h"
#include "libutil/strvec.h"

/* The product's own query, in column order (7 fields). */
#define NVSMI_PRODUCT_QUERY                                                    \
    "index,uuid,name,memory.total,memory.used,utilization.gpu,power.draw"

/*
 * The JSON key for a query field (doc/formats.md table): memory.total ->
 * mem_total_mb, power.draw -> power_w, gpu_name -> name, ... An unknown
 * field gives NULL (callers then use the field with '.' as '_').
 */
const char *nvsmi_field_key(const char *field);

/*
 * Append to out the fields of the `--query-gpu=a,b,c` (or
 * `--query-gpu a,b,c`) option found in the command line cmd.
 * Returns the number appended (0 when cmd holds no such option).
 */
size_t nvsmi_fields_from_command(const char *cmd, struct strvec *out);

/*
 * Parse len bytes of nvidia-smi CSV output into {"gpus": [...]}.
 * With a header line, columns are mapped by header name (the " [MiB]"
 * unit annotation dropped). Without one, fields (nfields names, the
 * query's order) give the columns; fields may be NULL, in which case
 * rows of exactly 7 columns are read as NVSMI_PRODUCT_QUERY.
 * Value units (MiB, %, W, MHz) are stripped; bracketed markers ([N/A],
 * [Not Supported], [Unknown Error], ...) give null.
 * Errors (NULL, err set, *errkind static): "no_devices" for
 * `No devices were found`, "invalid_field" for `Field "x" is not a valid
 * field to query.`, "nvidia_smi_failed" for driver failures,
 * "unknown_columns" for headerless rows whose columns are not known,
 * "parse_error" when no row could be read.
 */
json_t *nvsmi_parse(const char *buf, size_t len, const char *const *fields,
                    size_t nfields, const char **errkind, exa_error_t *err);

#endif
