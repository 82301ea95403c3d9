/*
 * registry.h - clusters.yaml, the human-edited connection definitions
 * (doc/design.md §4, doc/reference.md §3 "clusters.yaml").
 *
 * The file names each cluster's connection (scheduler, transport, host,
 * ssh_user, ssh_port, ssh_key) plus site-declared facts placement and the
 * exporters use (node_exporter_port, dcgm_exporter_port, tenant,
 * carbon_intensity, cost_per_gpu_hour). Governance state lives in
 * platform.db, never here (governance.h merges the two).
 *
 * Readers accept the three shapes the reference accepted:
 *   clusters: {NAME: {...}}      a list of {name: NAME, ...}      {NAME: {...}}
 * Writers always produce the first, with keys sorted, through a temp file
 * in the same directory, fsync and rename, so a reader sees the old or the
 * new file and never half of one. Read-modify-write goes through
 * registry_update(), which holds an exclusive flock(2) on the sibling
 * "<path>.lock" for the whole cycle, so concurrent writers lose nothing.
 */
#ifndef EXA_REGISTRY_H
#define EXA_REGISTRY_H

#include <stddef.h>

#include "libutil/error.h"

struct strbuf;

#define REGISTRY_NODE_EXPORTER_PORT 9100
#define REGISTRY_DCGM_EXPORTER_PORT 9400

/* One cluster definition. Strings are owned (malloc'ed) or NULL when the
 * field is absent; ports are 0 when absent; has_* say whether a number was
 * declared. */
struct cluster_def {
    char *name;
    char *scheduler; /* slurm | flux | unmanaged | mock */
    char *transport; /* ssh | local */
    char *host;
    char *ssh_user;
    char *ssh_key; /* a path to the private key, never key material */
    int ssh_port;
    int node_exporter_port;
    int dcgm_exporter_port;
    char *tenant;
    int has_carbon_intensity; /* gCO2e/kWh */
    double carbon_intensity;
    int has_cost_per_gpu_hour; /* USD */
    double cost_per_gpu_hour;
};

struct registry {
    struct cluster_def *defs; /* sorted by name after load/put */
    size_t nr, alloc;
};

#define REGISTRY_INIT                                                          \
    {                                                                          \
        NULL, 0, 0                                                             \
    }

/*
 * Path of clusters.yaml: $EXAMLOPS_HPC_REGISTRY, else
 * $HOME/.config/examlops/clusters.yaml. Caller frees; NULL with err
 * (EXA_ECONFIG) when neither is set.
 */
char *registry_default_path(exa_error_t *err);

/* The grammar of a cluster name, as printed in errors. */
#define CLUSTER_NAME_RULE "[A-Za-z0-9][A-Za-z0-9._-]{0,62}"

/*
 * 0 when name matches CLUSTER_NAME_RULE (1 to 63 characters: a letter or
 * digit, then letters, digits, '.', '_' or '-'), so a name is always a
 * safe file name (the pinned known_hosts), YAML key, label value and
 * argument. Otherwise -1 with err (EXA_EUSAGE), one line:
 *   "invalid cluster name 'NAME' (from SOURCE): expected
 *    [A-Za-z0-9][A-Za-z0-9._-]{0,62}"
 * where NAME is shown with C escapes (\n, \t, \', \", \xHH) and, when
 * longer than 64 characters, cut there with "..." and followed by
 * " (too long)"; source (e.g. "--cluster",
 * "EXAMLOPS_HPC_CLUSTER") may be NULL.
 */
int cluster_name_check(const char *name, const char *source, exa_error_t *err);

/*
 * Parse YAML text (len bytes) into reg (which must be empty). Unknown keys
 * are ignored; a definition field of the wrong type or a port outside
 * 1..65535 is an error. where names the file in messages. Returns 0 or -1
 * with err (EXA_ECONFIG, "clusters.yaml 'PATH': line N: ...").
 */
int registry_parse(const char *text, size_t len, const char *where,
                   struct registry *reg, exa_error_t *err);

/*
 * Load path into reg (empty). A missing file is an empty registry. Returns
 * 0 or -1 with err (EXA_ECONFIG).
 */
int registry_load(const char *path, struct registry *reg, exa_error_t *err);

/*
 * Append the bytes of path (at most REGISTRY_MAX_BYTES) to text, unparsed:
 * what registry_load parses. Returns 1, 0 when the file does not exist
 * (text unchanged), or -1 with err (EXA_ECONFIG; text may hold part of
 * the file).
 */
int registry_read(const char *path, struct strbuf *text, exa_error_t *err);

/*
 * Serialize reg as `clusters: {NAME: {...}}`, keys sorted, absent fields
 * omitted. Returns malloc'ed text (caller frees).
 */
char *registry_format(const struct registry *reg);

/*
 * Write reg to path atomically (temp file in the same directory, fsync,
 * rename, fsync of the directory), mode 0600, creating the directory 0700.
 * The caller should hold the lock (registry_update does). 0 or -1 with err.
 */
int registry_save(const char *path, const struct registry *reg,
                  exa_error_t *err);

/*
 * Take a flock on "<path>.lock" (exclusive when excl, else shared),
 * blocking. Returns the fd to pass to registry_unlock(), or -1 with err.
 */
int registry_lock(const char *path, int excl, exa_error_t *err);
void registry_unlock(int fd);

/*
 * Read-modify-write under the exclusive lock: load path, call fn(reg, arg,
 * err); when fn returns 1 write the result back, 0 leaves the file as it
 * was, -1 aborts with fn's err. Returns fn's 0/1, or -1.
 */
typedef int (*registry_update_f)(struct registry *reg, void *arg,
                                 exa_error_t *err);
int registry_update(const char *path, registry_update_f fn, void *arg,
                    exa_error_t *err);

/* Borrowed pointer to the named definition, or NULL (reg->defs sorted by
 * name, as load and put keep them). */
struct cluster_def *registry_find(const struct registry *reg, const char *name);

/*
 * Insert def (copied) or replace the definition of the same name; keeps
 * reg sorted. Returns the stored copy (borrowed).
 */
struct cluster_def *registry_put(struct registry *reg,
                                 const struct cluster_def *def);

/* Remove the named definition; returns 1 if it existed. */
int registry_remove(struct registry *reg, const char *name);

void registry_release(struct registry *reg);

/* Deep copy of src into dst (dst is overwritten, not released). */
void cluster_def_copy(struct cluster_def *dst, const struct cluster_def *src);
void cluster_def_release(struct cluster_def *def);

/* Effective exporter ports: the declared one, else 9100 / 9400. */
int cluster_def_node_exporter_port(const struct cluster_def *def);
int cluster_def_dcgm_exporter_port(const struct cluster_def *def);

#endif
