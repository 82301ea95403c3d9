/*
 * migrations.c - the schema of platform.db as its append-only list of
 * migrations (migrations.h), kept apart from store.c, which opens the
 * database and runs them. Migration i (1-based) moves user_version i-1
 * to i. Never edit a shipped migration; add the next one.
 */
#include "libstore/migrations.h"

const char *const store_migrations[] = {
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

const size_t store_nmigrations =
    sizeof(store_migrations) / sizeof(store_migrations[0]);
