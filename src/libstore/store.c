/*
 * store.c - opening platform.db and migrating its schema.
 *
 * Migrations are an append-only array: migration i (1-based) moves the
 * schema from user_version i-1 to i inside one IMMEDIATE transaction, so a
 * crash mid-migration leaves the previous version intact. Never edit a
 * shipped migration; add the next one.
 */
#include "libstore/store.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libstore/nodes.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static const char *const migrations[] = {
    /* 1: the tables of doc/design.md §4 */
    "CREATE TABLE clusters ("
    "  name TEXT PRIMARY KEY,"
    "  scheduler TEXT NOT NULL,"
    "  transport TEXT NOT NULL DEFAULT 'ssh',"
    "  host TEXT, port INTEGER DEFAULT 22, ssh_user TEXT, ssh_key TEXT,"
    "  key_fingerprint TEXT, host_key_fingerprint TEXT,"
    "  state TEXT NOT NULL DEFAULT 'PENDING'"
    "    CHECK (state IN ('PENDING','ACTIVE','REJECTED')),"
    "  capabilities TEXT, requested_by TEXT, approved_by TEXT, reason TEXT,"
    "  created_at TEXT NOT NULL, updated_at TEXT NOT NULL);"
    "CREATE TABLE nodes ("
    "  cluster TEXT NOT NULL, node TEXT NOT NULL, scheduler TEXT,"
    "  cpus INTEGER, mem_mb INTEGER, gpus INTEGER NOT NULL DEFAULT 0,"
    "  gpus_used INTEGER, gpu_model TEXT, state TEXT, raw_state TEXT,"
    "  flags TEXT, partitions TEXT, captured_at TEXT NOT NULL,"
    "  PRIMARY KEY (cluster, node));"
    "CREATE TABLE jobs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  cluster TEXT NOT NULL, scheduler TEXT NOT NULL,"
    "  job_id TEXT NOT NULL, run_uuid TEXT, job_name TEXT,"
    "  kind TEXT NOT NULL DEFAULT 'train',"
    "  model TEXT, dataset TEXT,"
    "  state TEXT NOT NULL DEFAULT 'PENDING', raw_state TEXT, reason TEXT,"
    "  exit_code INTEGER, signal INTEGER,"
    "  submit_time TEXT, start_time TEXT, end_time TEXT,"
    "  queue_seconds REAL, run_seconds REAL, cpu_seconds REAL,"
    "  nodes INTEGER, gpus INTEGER, cpus INTEGER,"
    "  gpu_hours REAL, cpu_hours REAL,"
    "  remote_dir TEXT, model_version INTEGER,"
    "  created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
    "  UNIQUE (cluster, job_id));"
    "CREATE INDEX ix_jobs_model ON jobs(model);"
    "CREATE INDEX ix_jobs_state ON jobs(state);"
    "CREATE INDEX ix_jobs_run_uuid ON jobs(run_uuid);"
    "CREATE TABLE audit_events ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  ts TEXT NOT NULL, source TEXT NOT NULL, actor TEXT,"
    "  action TEXT NOT NULL, target TEXT, details TEXT,"
    "  prev_hash TEXT NOT NULL, hash TEXT NOT NULL);"
    "CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events"
    "  BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;"
    "CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events"
    "  BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;"
    "CREATE TABLE model_versions ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  model TEXT NOT NULL, version INTEGER NOT NULL,"
    "  stage TEXT NOT NULL DEFAULT 'None',"
    "  rmse REAL, mse REAL, mape REAL, metrics TEXT,"
    "  dataset TEXT, dataset_path TEXT,"
    "  train_rows INTEGER, val_rows INTEGER, skipped_rows INTEGER,"
    "  artifact_path TEXT, artifact_sha256 TEXT,"
    "  job_ref INTEGER REFERENCES jobs(id),"
    "  cluster TEXT, scheduler TEXT, job_id TEXT, run_uuid TEXT,"
    "  created_at TEXT NOT NULL,"
    "  UNIQUE (model, version));"
    "CREATE TABLE model_costs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  model TEXT NOT NULL, version INTEGER NOT NULL,"
    "  provider TEXT NOT NULL, cluster TEXT, job_id TEXT, run_uuid TEXT,"
    "  gpu_hours REAL, cpu_hours REAL, cost_usd REAL NOT NULL,"
    "  recorded_at TEXT NOT NULL,"
    "  UNIQUE (model, version, provider));"
    "CREATE TABLE carbon_records ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  ts TEXT NOT NULL, model TEXT NOT NULL, version INTEGER,"
    "  run_id TEXT, provider TEXT NOT NULL,"
    "  gpu_hours REAL, cpu_hours REAL, kwh REAL, co2e_g REAL,"
    "  grid_intensity REAL, pue REAL, gpu_power_w REAL, cpu_power_w REAL,"
    "  signal_type TEXT, signal_method TEXT, inputs TEXT);",
    /* 2: one carbon record per (model, version, provider), as costs are;
     * duplicates recorded before keep their latest row. */
    "DELETE FROM carbon_records WHERE id NOT IN (SELECT max(id)"
    "  FROM carbon_records GROUP BY model, COALESCE(version, -1), provider);"
    "CREATE UNIQUE INDEX ux_carbon_records_key"
    "  ON carbon_records (model, COALESCE(version, -1), provider);",
    /*
     * 3: audit binds state (issue 9 item 6). audit_head keeps the chain's
     * count and last hash, written in the same transaction as each event,
     * so a deleted tail is detected; clusters.audit_hash names the row's
     * latest cluster_* event. Existing databases get both computed from
     * the events they already hold.
     */
    "CREATE TABLE audit_head ("
    "  id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  count INTEGER NOT NULL, last_id INTEGER, last_hash TEXT);"
    "INSERT INTO audit_head (id, count, last_id, last_hash)"
    "  SELECT 1, count(*),"
    "    (SELECT id FROM audit_events ORDER BY id DESC LIMIT 1),"
    "    (SELECT hash FROM audit_events ORDER BY id DESC LIMIT 1)"
    "  FROM audit_events;"
    "CREATE INDEX ix_audit_events_target ON audit_events(target, id);"
    "ALTER TABLE clusters ADD COLUMN audit_hash TEXT;"
    "UPDATE clusters SET audit_hash = (SELECT e.hash FROM audit_events e"
    "  WHERE e.target = clusters.name AND substr(e.action, 1, 8) = 'cluster_'"
    "  ORDER BY e.id DESC LIMIT 1);",
    /* 4: host keys seen not to match the approved one (libfleet/gate.c) */
    "CREATE TABLE IF NOT EXISTS host_key_mismatch ("
    "  cluster TEXT PRIMARY KEY, approved TEXT, seen TEXT NOT NULL,"
    "  seen_at TEXT NOT NULL);",
    /* 5: API tokens of exa serve (libstore/tokens.h): only their SHA-256 */
    "CREATE TABLE tokens ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  token_sha256 TEXT NOT NULL UNIQUE,"
    "  user TEXT NOT NULL,"
    "  role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),"
    "  created_at TEXT NOT NULL, expires_at TEXT, revoked_at TEXT);",
    /*
     * 6: the task engine of shared/WORKERS.md §8 (libtask/engine.c). Times
     * are Unix seconds (REAL, wall clock); spec is the task's JSON. A
     * task's attempt is the number of its latest lease (the fence);
     * task_results.idem ("task:attempt") makes a repeated result a no-op.
     */
    "CREATE TABLE engine_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE tasks ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN"
    "    ('queued','leased','done','failed','cancelled')),"
    "  spec TEXT NOT NULL, labels TEXT NOT NULL DEFAULT '',"
    "  cpus INTEGER NOT NULL DEFAULT 1, gpus INTEGER NOT NULL DEFAULT 0,"
    "  ram_mb INTEGER NOT NULL DEFAULT 0,"
    "  timeout_s REAL NOT NULL DEFAULT 3600,"
    "  attempt INTEGER NOT NULL DEFAULT 0,"
    "  infra_failures INTEGER NOT NULL DEFAULT 0,"
    "  max_infra INTEGER NOT NULL DEFAULT 3,"
    "  created_at REAL NOT NULL, queued_since REAL, ended_at REAL,"
    "  done_attempt INTEGER, exit_code INTEGER, signal INTEGER, reason TEXT);"
    "CREATE INDEX ix_tasks_state ON tasks(state, id);"
    "CREATE TABLE task_attempts ("
    "  task_id INTEGER NOT NULL REFERENCES tasks(id),"
    "  attempt INTEGER NOT NULL, worker_id TEXT NOT NULL,"
    "  leased_at REAL NOT NULL, lease_expires_at REAL NOT NULL,"
    "  ended_at REAL, outcome TEXT CHECK (outcome IS NULL OR outcome IN"
    "    ('ok','failed','lost','released','revoked','late_ok',"
    "     'late_stale')),"
    "  exit_code INTEGER, signal INTEGER, cause TEXT,"
    "  PRIMARY KEY (task_id, attempt));"
    "CREATE INDEX ix_task_attempts_worker ON task_attempts(worker_id);"
    "CREATE TABLE task_results ("
    "  task_id INTEGER NOT NULL, attempt INTEGER NOT NULL,"
    "  idem TEXT NOT NULL UNIQUE, body TEXT NOT NULL,"
    "  received_at REAL NOT NULL, PRIMARY KEY (task_id, attempt));"
    "CREATE TABLE task_artifacts ("
    "  task_id INTEGER NOT NULL, attempt INTEGER NOT NULL,"
    "  name TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,"
    "  path TEXT NOT NULL, created_at REAL NOT NULL,"
    "  PRIMARY KEY (task_id, attempt, name));"
    "CREATE TABLE workers ("
    "  id TEXT PRIMARY KEY, request_id TEXT, cluster TEXT, profile TEXT,"
    "  slurm_job_id TEXT, node TEXT, host TEXT, pid INTEGER,"
    "  session_hash TEXT, incarnation INTEGER NOT NULL DEFAULT 1,"
    "  state TEXT NOT NULL CHECK (state IN"
    "    ('attached','draining','lost','exited')),"
    "  drain_requested INTEGER NOT NULL DEFAULT 0,"
    "  registered_at REAL NOT NULL, last_seen_at REAL,"
    "  walltime_end_at REAL, cpus INTEGER NOT NULL DEFAULT 1,"
    "  gpus INTEGER NOT NULL DEFAULT 0, ram_mb INTEGER NOT NULL DEFAULT 0,"
    "  capacity INTEGER NOT NULL DEFAULT 1,"
    "  labels TEXT NOT NULL DEFAULT '', protocol INTEGER,"
    "  exa_version TEXT, exit_reason TEXT);"
    "CREATE TABLE join_tokens ("
    "  jti TEXT PRIMARY KEY, worker_id TEXT NOT NULL, request_id TEXT,"
    "  cluster TEXT, profile TEXT, created_at REAL NOT NULL,"
    "  exp REAL NOT NULL, used_at REAL, register_nonce TEXT);"
    "CREATE TABLE provision_requests ("
    "  id TEXT PRIMARY KEY, provisioner TEXT, cluster TEXT NOT NULL,"
    "  profile TEXT NOT NULL, worker_id TEXT NOT NULL,"
    "  job_name TEXT NOT NULL UNIQUE, jti TEXT UNIQUE,"
    "  state TEXT NOT NULL CHECK (state IN ('intent','submitted',"
    "    'attached','failed','timeout','cancelled')),"
    "  job_id TEXT, created_at REAL NOT NULL, submitted_at REAL,"
    "  deadline_at REAL, ended_at REAL, reason TEXT, detail TEXT);"
    "CREATE TABLE worker_events ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL,"
    "  kind TEXT NOT NULL, cluster TEXT, profile TEXT, worker_id TEXT,"
    "  task_id INTEGER, attempt INTEGER, detail TEXT);"
    "CREATE INDEX ix_worker_events_kind ON worker_events(kind, id);",
    /*
     * 7: the per-cluster node summary placement reads (libstore/nodes.h
     * store_node_summary_list): node rows grouped by what placement looks
     * at, kept current by triggers on every write to nodes (whoever
     * writes), so a decision over 1,000 clusters reads a few rows per
     * cluster, not every node. Nodes that are not idle or mixed count
     * only by GPUs and snapshot time (state 'other', gpus_used and cpus
     * -1); a NULL becomes -1 (numbers) or '' (captured_at).
     */
    "CREATE TABLE node_summary (cluster TEXT NOT NULL, captured_at TEXT "
    "NOT NULL, state TEXT NOT NULL, gpus INTEGER NOT NULL, gpus_used "
    "INTEGER NOT NULL, cpus INTEGER NOT NULL, n INTEGER NOT NULL, "
    "PRIMARY KEY (cluster, captured_at, state, gpus, gpus_used, cpus)); "
    "CREATE TRIGGER node_summary_ins AFTER INSERT ON nodes BEGIN INSERT "
    "INTO node_summary (cluster, captured_at, state, gpus, gpus_used, "
    "cpus, n) VALUES (NEW.cluster, IFNULL(NEW.captured_at, ''), CASE "
    "WHEN NEW.state IN ('idle','mixed') THEN NEW.state ELSE 'other' "
    "END, IFNULL(NEW.gpus, -1), CASE WHEN NEW.state IN ('idle','mixed') "
    "THEN IFNULL(NEW.gpus_used, -1) ELSE -1 END, CASE WHEN NEW.state IN "
    "('idle','mixed') THEN IFNULL(NEW.cpus, -1) ELSE -1 END, 1) ON "
    "CONFLICT (cluster, captured_at, state, gpus, gpus_used, cpus) DO "
    "UPDATE SET n = n + 1; END; CREATE TRIGGER node_summary_del AFTER "
    "DELETE ON nodes BEGIN UPDATE node_summary SET n = n - 1 WHERE "
    "cluster = OLD.cluster AND captured_at = IFNULL(OLD.captured_at, "
    "'') AND state = CASE WHEN OLD.state IN ('idle','mixed') THEN "
    "OLD.state ELSE 'other' END AND gpus = IFNULL(OLD.gpus, -1) AND "
    "gpus_used = CASE WHEN OLD.state IN ('idle','mixed') THEN "
    "IFNULL(OLD.gpus_used, -1) ELSE -1 END AND cpus = CASE WHEN "
    "OLD.state IN ('idle','mixed') THEN IFNULL(OLD.cpus, -1) ELSE -1 "
    "END; DELETE FROM node_summary WHERE n <= 0 AND cluster = "
    "OLD.cluster AND captured_at = IFNULL(OLD.captured_at, '') AND "
    "state = CASE WHEN OLD.state IN ('idle','mixed') THEN OLD.state "
    "ELSE 'other' END AND gpus = IFNULL(OLD.gpus, -1) AND gpus_used = "
    "CASE WHEN OLD.state IN ('idle','mixed') THEN IFNULL(OLD.gpus_used, "
    "-1) ELSE -1 END AND cpus = CASE WHEN OLD.state IN ('idle','mixed') "
    "THEN IFNULL(OLD.cpus, -1) ELSE -1 END; END; CREATE TRIGGER "
    "node_summary_upd AFTER UPDATE ON nodes BEGIN UPDATE node_summary "
    "SET n = n - 1 WHERE cluster = OLD.cluster AND captured_at = "
    "IFNULL(OLD.captured_at, '') AND state = CASE WHEN OLD.state IN "
    "('idle','mixed') THEN OLD.state ELSE 'other' END AND gpus = "
    "IFNULL(OLD.gpus, -1) AND gpus_used = CASE WHEN OLD.state IN "
    "('idle','mixed') THEN IFNULL(OLD.gpus_used, -1) ELSE -1 END AND "
    "cpus = CASE WHEN OLD.state IN ('idle','mixed') THEN "
    "IFNULL(OLD.cpus, -1) ELSE -1 END; DELETE FROM node_summary WHERE n "
    "<= 0 AND cluster = OLD.cluster AND captured_at = "
    "IFNULL(OLD.captured_at, '') AND state = CASE WHEN OLD.state IN "
    "('idle','mixed') THEN OLD.state ELSE 'other' END AND gpus = "
    "IFNULL(OLD.gpus, -1) AND gpus_used = CASE WHEN OLD.state IN "
    "('idle','mixed') THEN IFNULL(OLD.gpus_used, -1) ELSE -1 END AND "
    "cpus = CASE WHEN OLD.state IN ('idle','mixed') THEN "
    "IFNULL(OLD.cpus, -1) ELSE -1 END; INSERT INTO node_summary "
    "(cluster, captured_at, state, gpus, gpus_used, cpus, n) VALUES "
    "(NEW.cluster, IFNULL(NEW.captured_at, ''), CASE WHEN NEW.state IN "
    "('idle','mixed') THEN NEW.state ELSE 'other' END, IFNULL(NEW.gpus, "
    "-1), CASE WHEN NEW.state IN ('idle','mixed') THEN "
    "IFNULL(NEW.gpus_used, -1) ELSE -1 END, CASE WHEN NEW.state IN "
    "('idle','mixed') THEN IFNULL(NEW.cpus, -1) ELSE -1 END, 1) ON "
    "CONFLICT (cluster, captured_at, state, gpus, gpus_used, cpus) DO "
    "UPDATE SET n = n + 1; END; INSERT INTO node_summary (cluster, "
    "captured_at, state, gpus, gpus_used, cpus, n) SELECT "
    "nodes.cluster, IFNULL(nodes.captured_at, ''), CASE WHEN "
    "nodes.state IN ('idle','mixed') THEN nodes.state ELSE 'other' END, "
    "IFNULL(nodes.gpus, -1), CASE WHEN nodes.state IN ('idle','mixed') "
    "THEN IFNULL(nodes.gpus_used, -1) ELSE -1 END, CASE WHEN "
    "nodes.state IN ('idle','mixed') THEN IFNULL(nodes.cpus, -1) ELSE "
    "-1 END, COUNT(*) FROM nodes GROUP BY 1, 2, 3, 4, 5, 6;",
    /* 8: a node's address (Slurm NodeAddr) for Prometheus file_sd
     * targets (libobserve/file_sd.h); NULL: the node name */
    "ALTER TABLE nodes ADD COLUMN addr TEXT;",
    /*
     * 9: tasks pinned to a cluster and owned by a run (`exa pipeline run
     * --via worker`, doc/pipeline-run.md): a task whose cluster is set is
     * leased only to a worker whose join token named that cluster; run_id
     * finds the run's task again. A version trained by a task names it,
     * its attempt and the worker in its lineage.
     */
    "ALTER TABLE tasks ADD COLUMN cluster TEXT;"
    "ALTER TABLE tasks ADD COLUMN run_id TEXT;"
    "CREATE INDEX ix_tasks_run ON tasks(run_id, id);"
    "ALTER TABLE model_versions ADD COLUMN task_id INTEGER;"
    "ALTER TABLE model_versions ADD COLUMN task_attempt INTEGER;"
    "ALTER TABLE model_versions ADD COLUMN worker_id TEXT;",
    /*
     * 10: black-hole nodes of the provisioner (shared/WORKERS.md §9.4,
     * libstore/provreq.h): a strike is a failed start (a request that
     * ended before attaching, its node from sacct NodeList) or a
     * black-hole drain (§6.3) on a node, for a cluster's profile; two
     * inside the window exclude the node from that profile's sbatch
     * (--exclude) until `until`.
     */
    "CREATE TABLE node_strikes ("
    "  cluster TEXT NOT NULL, profile TEXT NOT NULL, node TEXT NOT NULL,"
    "  kind TEXT NOT NULL CHECK (kind IN ('failed_start','black_hole')),"
    "  at REAL NOT NULL, ref TEXT);"
    "CREATE INDEX ix_node_strikes ON node_strikes(cluster, profile, at);"
    "CREATE TABLE node_exclusions ("
    "  cluster TEXT NOT NULL, profile TEXT NOT NULL, node TEXT NOT NULL,"
    "  reason TEXT NOT NULL, since REAL NOT NULL, until REAL NOT NULL,"
    "  PRIMARY KEY (cluster, profile, node));",
    /*
     * 11: node_summary WITHOUT ROWID, rebuilt from the node rows with
     * migration 7's grouping. Its rows are their primary key (all columns
     * but n), so placement's read in key order is one b-tree scan; as a
     * rowid table every row read went through the key's index and then a
     * seek into the table (the read was a quarter of `exa hpc place` over
     * 1,000 clusters). The triggers of migration 7 name the table, not
     * its layout, and keep it current unchanged.
     */
    "DROP TABLE node_summary; "
    "CREATE TABLE node_summary (cluster TEXT NOT NULL, captured_at TEXT "
    "NOT NULL, state TEXT NOT NULL, gpus INTEGER NOT NULL, gpus_used "
    "INTEGER NOT NULL, cpus INTEGER NOT NULL, n INTEGER NOT NULL, "
    "PRIMARY KEY (cluster, captured_at, state, gpus, gpus_used, cpus)) "
    "WITHOUT ROWID; "
    "INSERT INTO node_summary (cluster, captured_at, state, gpus, "
    "gpus_used, cpus, n) SELECT nodes.cluster, IFNULL(nodes.captured_at, "
    "''), CASE WHEN nodes.state IN ('idle','mixed') THEN nodes.state ELSE "
    "'other' END, IFNULL(nodes.gpus, -1), CASE WHEN nodes.state IN "
    "('idle','mixed') THEN IFNULL(nodes.gpus_used, -1) ELSE -1 END, CASE "
    "WHEN nodes.state IN ('idle','mixed') THEN IFNULL(nodes.cpus, -1) ELSE "
    "-1 END, COUNT(*) FROM nodes GROUP BY 1, 2, 3, 4, 5, 6;",
    /*
     * 12: a cluster's node summary as one row (libstore/nodes.h
     * store_node_summary_list): placement over 1,000 clusters reads 1,000
     * rows of text instead of some 17,000 node_summary rows (the read was
     * a quarter of `exa hpc place`). The text is written when a snapshot
     * is saved (store_cluster_summary_save, in its transaction); any
     * write to node_summary (the node triggers, whoever writes the nodes)
     * sets its cluster's text NULL, and a NULL text is read from
     * node_summary, so the text is never older than the rows. The texts
     * of existing clusters are written right after this migration
     * (migrate()).
     */
    "CREATE TABLE cluster_node_summary (cluster TEXT NOT NULL PRIMARY KEY, "
    "rows TEXT) WITHOUT ROWID; "
    "CREATE TRIGGER cluster_node_summary_ins AFTER INSERT ON node_summary "
    "BEGIN INSERT INTO cluster_node_summary (cluster, rows) VALUES "
    "(NEW.cluster, NULL) ON CONFLICT (cluster) DO UPDATE SET rows = NULL "
    "WHERE rows IS NOT NULL; END; "
    "CREATE TRIGGER cluster_node_summary_upd AFTER UPDATE ON node_summary "
    "BEGIN UPDATE cluster_node_summary SET rows = NULL WHERE cluster = "
    "OLD.cluster AND rows IS NOT NULL; INSERT INTO cluster_node_summary "
    "(cluster, rows) VALUES (NEW.cluster, NULL) ON CONFLICT (cluster) DO "
    "UPDATE SET rows = NULL WHERE rows IS NOT NULL; END; "
    "CREATE TRIGGER cluster_node_summary_del AFTER DELETE ON node_summary "
    "BEGIN UPDATE cluster_node_summary SET rows = NULL WHERE cluster = "
    "OLD.cluster AND rows IS NOT NULL; END; "
    "INSERT INTO cluster_node_summary (cluster, rows) SELECT DISTINCT "
    "cluster, NULL FROM node_summary;",
    /*
     * 13: no node_summary table. Its three triggers on nodes (with their
     * CASE expressions, twice over) were a third of the schema text that
     * every command's first statement makes SQLite parse: about 1 M of
     * the 4.6 M instructions of `exa hpc jobs --limit 0`. The summary of
     * a cluster is now its cluster_node_summary text alone, written by
     * the snapshot save from a GROUP BY over its node rows
     * (store_cluster_summary_save); three small triggers on nodes set the
     * text NULL on any other write (and add the cluster's row), and a NULL
     * text is read with the same GROUP BY over the cluster's node rows
     * (libstore/nodes.h store_node_summary_list), so the summary is still
     * never older than the rows. The rows of a text now carry each group's
     * partitions list too (written from migration 14 on), so that
     * placement narrows a cluster to the partition a job goes to from the
     * summary (libfleet/placement.h place_restrict_partition).
     */
    "DROP TRIGGER node_summary_ins; DROP TRIGGER node_summary_del; "
    "DROP TRIGGER node_summary_upd; DROP TABLE node_summary; "
    "CREATE TRIGGER nodes_summary_ins AFTER INSERT ON nodes BEGIN INSERT "
    "INTO cluster_node_summary (cluster, rows) VALUES (NEW.cluster, NULL) "
    "ON CONFLICT (cluster) DO UPDATE SET rows = NULL WHERE rows IS NOT "
    "NULL; END; "
    "CREATE TRIGGER nodes_summary_upd AFTER UPDATE ON nodes BEGIN UPDATE "
    "cluster_node_summary SET rows = NULL WHERE cluster = OLD.cluster AND "
    "rows IS NOT NULL; INSERT INTO cluster_node_summary (cluster, rows) "
    "VALUES (NEW.cluster, NULL) ON CONFLICT (cluster) DO UPDATE SET rows = "
    "NULL WHERE rows IS NOT NULL; END; "
    "CREATE TRIGGER nodes_summary_del AFTER DELETE ON nodes BEGIN UPDATE "
    "cluster_node_summary SET rows = NULL WHERE cluster = OLD.cluster AND "
    "rows IS NOT NULL; END; "
    "INSERT INTO cluster_node_summary (cluster, rows) SELECT DISTINCT "
    "cluster, NULL FROM nodes WHERE true ON CONFLICT (cluster) DO NOTHING;",
    /*
     * 14: each row of a summary text ends with the nodes' partitions list
     * (libstore/nodes.c node_summary_encode). Builds of migration 13
     * before that wrote texts without it; migrate() writes every text
     * again, and an exa that writes the old form now refuses this
     * database as newer than itself instead of writing texts the other
     * cannot read.
     */
    "UPDATE cluster_node_summary SET rows = NULL;",
};

#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

int store_schema_version(void)
{
    return NMIGRATIONS;
}

/* The default path, ignoring EXAMLOPS_DB; NULL when HOME is unset too. */
static char *xdg_default_path(void)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        return xstrfmt("%s/examlops/platform.db", xdg);
    if (home && *home)
        return xstrfmt("%s/.local/share/examlops/platform.db", home);
    return NULL;
}

char *store_default_path(exa_error_t *err)
{
    const char *e = getenv("EXAMLOPS_DB");
    char *p;
    if (e && *e)
        return xstrdup(e);
    if ((p = xdg_default_path()))
        return p;
    exa_err(err, EXA_ECONFIG,
            "cannot locate platform.db: set EXAMLOPS_DB or HOME");
    return NULL;
}

/* mkdir -p for the parent directory of path, mode 0700 for new ones. */
static int mkdir_parents(const char *path, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = 0;
    strbuf_addstr(&sb, path);
    char *slash = strrchr(sb.buf, '/');
    if (!slash || slash == sb.buf)
        goto out;
    *slash = '\0';
    for (char *p = sb.buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(sb.buf, 0700) && errno != EEXIST) {
            rc = exa_err(err, EXA_ECONFIG, "cannot create directory '%s': %s",
                         sb.buf, strerror(errno));
            goto out;
        }
        *p = '/';
    }
    if (mkdir(sb.buf, 0700) && errno != EEXIST)
        rc = exa_err(err, EXA_ECONFIG, "cannot create directory '%s': %s",
                     sb.buf, strerror(errno));
out:
    strbuf_release(&sb);
    return rc;
}

/* Said after a failed statement on a read-only store. */
static const char *ro_note(const store_t *st)
{
    return st->readonly ? " (opened read-only: this user cannot write it)" : "";
}

int store_err(store_t *st, exa_error_t *err, const char *what)
{
    return exa_err(err, EXA_ECONFIG, "database '%s': %s: %s%s", st->path, what,
                   sqlite3_errmsg(st->db), ro_note(st));
}

int store_exec(store_t *st, const char *sql, exa_error_t *err)
{
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        exa_err(err, EXA_ECONFIG, "database '%s': %s%s", st->path,
                msg ? msg : sqlite3_errmsg(st->db), ro_note(st));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

sqlite3_stmt *store_prepare(store_t *st, const char *sql, exa_error_t *err)
{
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &stmt, NULL) != SQLITE_OK) {
        store_err(st, err, "prepare");
        return NULL;
    }
    return stmt;
}

sqlite3_stmt *store_cached(store_t *st, const char *sql, exa_error_t *err)
{
    sqlite3_stmt *stmt;
    for (size_t i = 0; i < st->ncache; i++)
        if (st->cache[i].sql == sql || !strcmp(st->cache[i].sql, sql)) {
            sqlite3_reset(st->cache[i].stmt);
            sqlite3_clear_bindings(st->cache[i].stmt);
            return st->cache[i].stmt;
        }
    if (!(stmt = store_prepare(st, sql, err)))
        return NULL;
    if (st->ncache < STORE_STMT_CACHE) {
        st->cache[st->ncache].sql = sql;
        st->cache[st->ncache++].stmt = stmt;
    }
    return stmt;
}

void store_done(store_t *st, sqlite3_stmt *stmt)
{
    if (!stmt)
        return;
    for (size_t i = 0; i < st->ncache; i++)
        if (st->cache[i].stmt == stmt) {
            sqlite3_reset(stmt);
            sqlite3_clear_bindings(stmt);
            return;
        }
    sqlite3_finalize(stmt);
}

int store_begin(store_t *st, exa_error_t *err)
{
    return store_exec(st, "BEGIN IMMEDIATE", err);
}

int store_begin_read(store_t *st, exa_error_t *err)
{
    return store_exec(st, "BEGIN DEFERRED", err);
}

int store_commit(store_t *st, exa_error_t *err)
{
    return store_exec(st, "COMMIT", err);
}

int store_in_transaction(store_t *st)
{
    return !sqlite3_get_autocommit(st->db);
}

void store_rollback(store_t *st)
{
    if (!sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_bind_text(sqlite3_stmt *stmt, int idx, const char *s)
{
    if (!s)
        return sqlite3_bind_null(stmt, idx);
    return sqlite3_bind_text(stmt, idx, s, -1, SQLITE_TRANSIENT);
}

void store_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int user_version(store_t *st, int *out, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(st, "PRAGMA user_version", err);
    int rc;
    if (!stmt)
        return -1;
    rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) {
        store_err(st, err, "reading schema version");
        sqlite3_finalize(stmt);
        return -1;
    }
    *out = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    return 0;
}

static int migrate(store_t *st, exa_error_t *err)
{
    int v;
    if (user_version(st, &v, err) < 0)
        return -1;
    if (v > NMIGRATIONS)
        return exa_err(err, EXA_ECONFIG,
                       "database '%s' has schema version %d, newer than this "
                       "exa (%d); upgrade exa",
                       st->path, v, NMIGRATIONS);
    while (v < NMIGRATIONS) {
        char pragma[64];
        if (store_begin(st, err) < 0)
            return -1;
        /* Re-read under the write lock: another process may have won. */
        if (user_version(st, &v, err) < 0)
            goto fail;
        if (v >= NMIGRATIONS) {
            store_rollback(st);
            break;
        }
        if (store_exec(st, migrations[v], err) < 0)
            goto fail;
        /* 12: the summary texts of the clusters there are, in the same
         * transaction (written by C: the text's order is the key order);
         * 14: again, with each row's partitions list */
        if ((v + 1 == 12 || v + 1 == 14) &&
            store_cluster_summaries_rebuild(st, err) < 0)
            goto fail;
        xsnprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
        if (store_exec(st, pragma, err) < 0 || store_commit(st, err) < 0)
            goto fail;
        v++;
    }
    return 0;
fail:
    store_rollback(st);
    exa_err_prefix(err, "migrating schema to version %d", v + 1);
    return -1;
}

/* The directory part of path ("." when none); caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

/* EXAMLOPS_DB names a path other than the default: its directory must
 * exist. 0, or -1 with err. */
static int check_env_dir(const char *p, exa_error_t *err)
{
    const char *env = getenv("EXAMLOPS_DB");
    char *def, *dir;
    struct stat sb;
    int rc = 0;
    if (!env || !*env || strcmp(env, p))
        return 0;
    def = xdg_default_path();
    if (def && !strcmp(def, p)) {
        free(def);
        return 0;
    }
    free(def);
    dir = dir_of(p);
    if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
        rc = exa_err(err, EXA_ECONFIG,
                     "database directory '%s' does not exist "
                     "(EXAMLOPS_DB='%s'): create it, or unset EXAMLOPS_DB "
                     "for the default path",
                     dir, env);
    free(dir);
    return rc;
}

/* "file:" URI of path with query (sqlite.org/uri.html): every byte but
 * unreserved ones and '/' percent-encoded. Caller frees. */
static char *file_uri(const char *path, const char *query)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if (isalnum(*c) || strchr("/._-~", *c))
            strbuf_addch(&sb, *c);
        else
            strbuf_addf(&sb, "%%%02X", *c);
    }
    strbuf_addf(&sb, "?%s", query);
    return strbuf_detach(&sb, NULL);
}

/* Open the existing database at p (taken) read-only; NULL with err. */
static store_t *open_readonly(char *p, exa_error_t *err)
{
    static const char *const modes[] = {"mode=ro", "immutable=1"};
    store_t *st = xcalloc(1, sizeof(*st));
    st->path = p;
    st->readonly = 1;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        char *uri = file_uri(p, modes[i]);
        int v = -1, ok;
        exa_error_t e = EXA_ERROR_INIT;
        ok = sqlite3_open_v2(uri, &st->db,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                             NULL) == SQLITE_OK &&
             user_version(st, &v, &e) == 0;
        free(uri);
        if (!ok) {
            sqlite3_close(st->db);
            st->db = NULL;
            continue;
        }
        sqlite3_busy_timeout(st->db, 10000);
        sqlite3_extended_result_codes(st->db, 1);
        if (v != NMIGRATIONS) {
            exa_err(err, EXA_ECONFIG,
                    "database '%s' is read-only for this user and at schema "
                    "version %d; this exa needs %d (open it once with write "
                    "access to migrate it)",
                    p, v, NMIGRATIONS);
            goto fail;
        }
        return st;
    }
    exa_err(err, EXA_ECONFIG,
            "database '%s' is not writable by this user and cannot be read "
            "either",
            p);
fail:
    store_close(st);
    return NULL;
}

/*
 * PRAGMA journal_mode=WAL, retried while the database is busy, for up to
 * the 10 s of the busy timeout. Turning a new database into WAL mode needs
 * its exclusive lock, and when two connections do it at once (exa serve's
 * collector thread and its worker engine on a fresh platform.db, or two
 * commands started together) SQLite answers SQLITE_BUSY at once instead of
 * calling the busy handler, since waiting could deadlock
 * (https://www.sqlite.org/wal.html#concurrency and sqlite3_busy_handler(3):
 * "the busy handler is not invoked ... if it would deadlock"). The
 * statement has ended when sqlite3_exec returns, so this connection holds
 * no lock while it sleeps and the other one can finish.
 */
static int set_wal(store_t *st, exa_error_t *err)
{
    struct timespec pause = {0, 10 * 1000 * 1000}, start, now; /* 10 ms */
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int rc =
            sqlite3_exec(st->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
            now.tv_sec - start.tv_sec >= 10)
            return store_err(st, err, "setting journal_mode=WAL");
        nanosleep(&pause, NULL);
    }
}

store_t *store_open(const char *path, exa_error_t *err)
{
    store_t *st;
    char *p = path ? xstrdup(path) : store_default_path(err);
    int fd;
    if (!p)
        return NULL;
    if (!path && check_env_dir(p, err) < 0) {
        free(p);
        return NULL;
    }
    if (mkdir_parents(p, err) < 0) {
        free(p);
        return NULL;
    }
    /* Readable but not writable (the file, or the directory SQLite's
     * -wal/-shm files live in): read-only, never an error for reads. */
    if (access(p, R_OK) == 0) {
        char *dir = dir_of(p);
        int ro = access(p, W_OK) < 0 || access(dir, W_OK) < 0;
        free(dir);
        if (ro)
            return open_readonly(p, err);
    }
    /*
     * Create 0600 ourselves (SQLite would use the umask), and only a file
     * that does not exist yet: close() of any descriptor of the database
     * drops every POSIX lock this process holds on it (fcntl(2)), so
     * opening an existing file here while another connection of the same
     * process (exa serve's threads) is open would let a second process
     * believe it is alone, checkpoint and delete the WAL under that
     * connection, and its later commits would be lost.
     */
    fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
        exa_err(err, EXA_ECONFIG, "cannot open database '%s': %s", p,
                strerror(errno));
        free(p);
        return NULL;
    }
    if (fd >= 0)
        close(fd);
    st = xcalloc(1, sizeof(*st));
    st->path = p;
    if (sqlite3_open_v2(p, &st->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        store_err(st, err, "open");
        goto fail;
    }
    sqlite3_busy_timeout(st->db, 10000);
    sqlite3_extended_result_codes(st->db, 1);
    /* A corrupt or foreign file fails here, before anything is written. */
    {
        sqlite3_stmt *stmt = NULL;
        if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM sqlite_master", -1,
                               &stmt, NULL) != SQLITE_OK ||
            sqlite3_step(stmt) != SQLITE_ROW) {
            exa_err(err, EXA_ECONFIG,
                    "database '%s' is not a usable SQLite database (%s); "
                    "it was left untouched",
                    p, sqlite3_errmsg(st->db));
            sqlite3_finalize(stmt);
            goto fail;
        }
        sqlite3_finalize(stmt);
    }
    if (set_wal(st, err) < 0 ||
        store_exec(st, "PRAGMA foreign_keys=ON", err) < 0 ||
        store_exec(st, "PRAGMA synchronous=NORMAL", err) < 0 ||
        /* exa serve's connections never close: a WAL a large
         * transaction grew is cut back to 4 MiB when it restarts
         * (https://www.sqlite.org/pragma.html#pragma_journal_size_limit) */
        store_exec(st, "PRAGMA journal_size_limit=4194304", err) < 0 ||
        /* a row INSERT OR REPLACE replaces fires its DELETE triggers
         * (the node summary's, migration 7) only with this on */
        store_exec(st, "PRAGMA recursive_triggers=ON", err) < 0)
        goto fail;
    if (migrate(st, err) < 0)
        goto fail;
    return st;
fail:
    store_close(st);
    return NULL;
}

void store_close(store_t *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->ncache; i++)
        sqlite3_finalize(st->cache[i].stmt);
    if (st->db)
        sqlite3_close(st->db);
    free(st->path);
    free(st);
}
