// mcp-fixture.mjs - a scratch exa world for the MCP tests: its own HOME,
// platform.db and clusters.yaml, with the Slurm testbed's clusters testa
// (approved through `exa hpc approve`) and testb (left PENDING) registered
// over ssh, their node snapshots saved, and recorded jobs, model versions
// and a carbon record seeded the way tests/integration/t0060 does.
//
// Needs EXA (the binary) and the testbed's environment
// (/tmp/exa-testbed/env.sh: TESTBED_SSH_HOST, _USER, _KEY, _PORT_TESTA/B).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const EXA = process.env.EXA;
export const TB = {
  host: process.env.TESTBED_SSH_HOST,
  user: process.env.TESTBED_SSH_USER,
  key: process.env.TESTBED_SSH_KEY,
  portA: process.env.TESTBED_SSH_PORT_TESTA,
  portB: process.env.TESTBED_SSH_PORT_TESTB,
};
export const haveTestbed = !!(process.env.TESTBED_ROOT && TB.key && EXA);

// the secrets no tool result may contain: the key path, "user@",
// a remote run directory under the user's home
export const SECRET_JOB_REASON = `ssh ${TB.user}@${TB.host} refused key ${TB.key}`;
export const SECRET_REMOTE_DIR = `/home/${TB.user}/exa-runs/r1`;

export function exa(env, args, opts = {}) {
  return execFileSync(EXA, args, { env, encoding: 'utf8', timeout: 60000,
                                   stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

function sqlite(env, sql) {
  return execFileSync('sqlite3', [env.EXAMLOPS_DB, sql],
                      { encoding: 'utf8', timeout: 10000 });
}

// auditCount(env, action, target): events of action on target
export function audit(env, action, target) {
  const out = sqlite(env, `SELECT actor FROM audit_events WHERE action='${action}' AND target='${target}' ORDER BY id`);
  return out.split('\n').filter(Boolean);
}

// Servers started by startServer, stopped when this process exits even
// if a test failed before its after() hook could.
const servers = new Set();
process.on('exit', () => { for (const p of servers) p.kill('SIGKILL'); });

export function makeWorld() {
  const dir = mkdtempSync(join(tmpdir(), 'exa-mcp-'));
  try {
    return fill(dir);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

function fill(dir) {
  const env = {
    PATH: process.env.PATH,
    HOME: join(dir, 'home'),
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    EXAMLOPS_DB: join(dir, 'platform.db'),
    EXAMLOPS_HPC_REGISTRY: join(dir, 'config', 'examlops', 'clusters.yaml'),
    EXAMLOPS_HPC_REMOTE_EXA: EXA,
  };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS'])
    if (process.env[k]) env[k] = process.env[k];
  mkdirSync(env.HOME, { recursive: true });
  mkdirSync(join(dir, 'config', 'examlops'), { recursive: true });
  const c = (name, port) => exa(env, ['--json', 'hpc', 'connect', TB.host, '--name', name,
                                      '-u', TB.user, '-k', TB.key, '-p', port]);
  c('testa', TB.portA);
  c('testb', TB.portB);
  exa(env, ['-y', 'hpc', 'approve', 'testa']);
  exa(env, ['hpc', 'nodes', '--save', '--cluster', 'testa']);
  sqlite(env, `
INSERT INTO jobs (id, cluster, scheduler, job_id, model, state, gpus, reason,
  remote_dir, run_seconds, gpu_hours, cpu_hours, created_at, updated_at)
VALUES
 (1, 'testa', 'slurm', '41', 'JPCP', 'COMPLETED', 1, NULL, '${SECRET_REMOTE_DIR}',
  12600, 3.5, 10, '2026-12-01T10:00:00Z', '2026-12-01T10:00:00Z'),
 (2, 'testa', 'slurm', '42', 'JPCP', 'FAILED', 1, '${SECRET_JOB_REASON}', NULL,
  60, 0.1, 0.2, '2026-12-01T11:00:00Z', '2026-12-01T11:00:00Z'),
 (3, 'testb', 'slurm', '7', 'other', 'COMPLETED', 2, NULL, NULL,
  3600, 2, 2, '2026-12-01T12:00:00Z', '2026-12-01T12:00:00Z');
INSERT INTO model_versions (model, version, job_ref, cluster, scheduler,
  job_id, run_uuid, created_at)
VALUES ('JPCP', 1, 1, 'testa', 'slurm', '41', 'aaaaaaaa-1111', '2026-12-01T10:30:00Z');`);
  exa(env, ['finops', 'carbon', 'record', 'JPCP', '--gpu-hours', '12']);
  return { dir, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// Start `exa ARGS` and resolve with { proc, port } once its stderr (or
// stdout) says "listening on HOST:PORT" / "on port N".
export function startServer(env, args) {
  return new Promise((ok, bad) => {
    const proc = spawn(EXA, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    servers.add(proc);
    proc.on('exit', () => servers.delete(proc));
    let log = '';
    const look = d => {
      log += d;
      const m = /listening on [\d.]+:(\d+)/.exec(log) || /on port (\d+)/.exec(log);
      if (m) ok({ proc, port: +m[1], log: () => log });
    };
    proc.stderr.on('data', look);
    proc.stdout.on('data', look);
    proc.on('exit', code => bad(new Error(`exa ${args.join(' ')} exited ${code}: ${log}`)));
    setTimeout(() => bad(new Error('server did not start: ' + log)), 15000).unref();
  });
}

// Every string in doc, and every key, for the redaction checks.
export function walk(doc, fn, path = '') {
  if (Array.isArray(doc)) doc.forEach((v, i) => walk(v, fn, `${path}[${i}]`));
  else if (doc && typeof doc === 'object')
    for (const [k, v] of Object.entries(doc)) { fn(k, v, `${path}.${k}`); walk(v, fn, `${path}.${k}`); }
}

// Assert nothing in text/doc carries the testbed's ssh user or key.
export function assertRedacted(assert, label, result) {
  const text = JSON.stringify(result);
  assert.ok(!text.includes(TB.key), `${label}: the key path appears`);
  assert.ok(!text.includes('id_ed25519'), `${label}: the key file name appears`);
  assert.ok(!text.includes(`${TB.user}@`), `${label}: "${TB.user}@" appears`);
  assert.ok(!text.includes(SECRET_REMOTE_DIR), `${label}: the remote run directory appears`);
  assert.ok(!text.includes('PRIVATE KEY'), `${label}: key material appears`);
  walk(result, (k, v, p) => {
    assert.ok(!['ssh_user', 'ssh_key', 'remote_dir'].includes(k), `${label}: member ${p}`);
    if (k === 'user' && typeof v === 'string')
      assert.notEqual(v, TB.user, `${label}: ${p} is the ssh user`);
  });
}
