// mcp-stdio.test.mjs - `exa mcp serve` over stdio with the official SDK
// client (@modelcontextprotocol/sdk, pinned in package.json): initialize,
// tools/list without and with writes, every tool against a platform.db
// with the testbed's clusters (the SDK checks each structuredContent
// against the tool's outputSchema; so does Ajv here), wrong arguments
// give InvalidParams, an approve changes the state and writes exactly one
// audit event naming the client, and no result carries the ssh user or
// key. Run: EXA=... node --test --test-reporter=tap mcp-stdio.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import Ajv from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, ErrorCode, EmptyResultSchema, LATEST_PROTOCOL_VERSION }
  from '@modelcontextprotocol/sdk/types.js';
import { spawnSync } from 'node:child_process';
import { EXA, TB, haveTestbed, makeWorld, exa, audit, assertRedacted } from './mcp-fixture.mjs';

const READ_TOOLS = ['finops_carbon_report', 'hpc_capacity', 'hpc_clusters', 'hpc_jobs',
                    'hpc_nodes', 'hpc_place', 'hpc_queue', 'models_list', 'models_show'];
const skip = haveTestbed ? false : 'needs the Slurm testbed (TESTBED_ROOT) and EXA';
let world;
before(() => { if (haveTestbed) world = makeWorld(); });
after(() => world && world.cleanup());

async function connect(extraEnv = {}, args = [], name = 'e2e-stdio') {
  const transport = new StdioClientTransport({
    command: EXA, args: ['mcp', 'serve', ...args], stderr: 'pipe',
    env: { ...world.env, ...extraEnv },
  });
  let log = '';
  transport.stderr.on('data', d => { log += d; });
  const client = new Client({ name, version: '0.0.1' });
  await client.connect(transport, { timeout: 10000 });
  return { client, log: () => log };
}

const ajv = new Ajv({ strict: false, allErrors: true });
function checkSchema(tool, structured) {
  const ok = ajv.validate(tool.outputSchema, structured);
  assert.ok(ok, `${tool.name}: ${ajv.errorsText()}`);
}

const call = (client, name, args = {}) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: 30000 });

test('initialize, tools/list without writes, every read tool', { skip }, async () => {
  const { client } = await connect();
  try {
    assert.equal(client.getServerVersion().name, 'exa');
    assert.equal(typeof client.getServerVersion().version, 'string');
    assert.deepEqual(client.getServerCapabilities().tools, { listChanged: false });
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map(t => t.name).sort(), READ_TOOLS);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.outputSchema.type, 'object', t.name);
      assert.ok(t.description.length > 40, t.name);
      assert.equal(t.annotations.readOnlyHint, true, t.name);
    }
    const byName = Object.fromEntries(tools.map(t => [t.name, t]));
    const results = {};
    const run = async (name, args) => {
      const r = await call(client, name, args);
      assert.equal(r.isError, undefined, `${name}: ${JSON.stringify(r.content)}`);
      assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, name);
      assert.doesNotMatch(r.content[0].text, /NaN|Infinity/, name);
      checkSchema(byName[name], r.structuredContent);
      assertRedacted(assert, name, r);
      results[name] = r.structuredContent;
      return r.structuredContent;
    };

    const cl = await run('hpc_clusters');
    assert.equal(cl.count, 2);
    assert.deepEqual(cl.clusters.map(c => [c.name, c.state]), [['testa', 'ACTIVE'], ['testb', 'PENDING']]);
    assert.equal(cl.clusters[0].host, TB.host);
    assert.equal(cl.clusters[0].ssh_port, +TB.portA);
    assert.match(cl.clusters[0].host_key_fingerprint, /^SHA256:/);
    assert.match(cl.clusters[0].key_fingerprint, /^SHA256:/);

    const nodes = await run('hpc_nodes', { cluster: 'testa' });
    assert.ok(nodes.count >= 1);
    assert.ok(nodes.nodes.every(n => n.cluster === 'testa' && typeof n.node === 'string'));
    const all = await run('hpc_nodes', {});
    assert.ok(all.count >= nodes.count);

    const place = await run('hpc_place', { gpus: 1, nodes: 1 });
    assert.equal(place.cluster, 'testa', place.reason);      // testb is PENDING
    assert.match(place.reason, /testa/);
    assert.ok(place.explain.candidates.some(c => c.cluster === 'testa' && c.rank === 1));
    const none = await run('hpc_place', { gpus: 100000 });
    assert.equal(none.cluster, null);
    const debug = await run('hpc_place', { gpus: 1, partition: 'debug' });
    assert.equal(debug.cluster, 'testa', debug.reason);     // testa's one partition
    assert.match(debug.reason, /in partition 'debug'/);
    const nope = await run('hpc_place', { gpus: 1, partition: 'nope' });
    assert.equal(nope.cluster, null);
    assert.match(nope.candidates[0].why, /no node in partition 'nope'/);

    const jobs = await run('hpc_jobs', { model: 'JPCP' });
    assert.equal(jobs.count, 2);
    assert.deepEqual(jobs.jobs.map(j => j.job_id).sort(), ['41', '42']);
    const lim = await run('hpc_jobs', { limit: 1 });
    assert.equal(lim.count, 1);
    const st = await run('hpc_jobs', { state: 'FAILED', cluster: 'testa' });
    assert.deepEqual(st.jobs.map(j => j.job_id), ['42']);

    const cap = await run('hpc_capacity');
    assert.deepEqual(cap.clusters.map(c => c.name), ['testa']);
    assert.ok(cap.clusters[0].total_gpus >= 1);

    const q = await run('hpc_queue', { cluster: 'testa' });
    assert.equal(q.cluster, 'testa');
    assert.equal(q.count, q.jobs.length);

    const models = await run('models_list');
    assert.deepEqual(models.models.map(m => m.model), ['JPCP']);
    const m = await run('models_show', { model: 'JPCP' });
    assert.equal(m.model, 'JPCP');
    assert.equal(m.versions.length, 1);
    const carbon = await run('finops_carbon_report', { model: 'JPCP' });
    assert.equal(carbon.n, 1);
    assert.ok(carbon.operational_co2e_g > 0);
    assert.equal(carbon.scope, 'operational');

    // the approve tool is not there, and cannot be called
    await assert.rejects(call(client, 'hpc_approve_cluster', { name: 'testb', reason: 'x' }),
      e => e instanceof McpError && e.code === ErrorCode.InvalidParams);
    assert.deepEqual(audit(world.env, 'cluster_approved', 'testb'), []);
  } finally {
    await client.close();
  }
});

test('wrong arguments are InvalidParams; ping; unknown method', { skip }, async () => {
  const { client } = await connect();
  try {
    const bad = [
      ['hpc_place', { gpus: 'x' }, /'gpus' must be an integer/],
      ['hpc_place', { gpus: -1 }, /'gpus' must be an integer >= 0/],
      ['hpc_place', { nodes: 0 }, /'nodes' must be an integer >= 1/],
      ['hpc_place', { provider: 'cheapest' }, /'provider' must be one of/],
      ['hpc_queue', {}, /'cluster' is required/],
      ['hpc_nodes', { cluster: 'nosuch' }, /nosuch/],
      ['hpc_jobs', { limit: 0 }, /'limit'/],
      ['hpc_clusters', { verbose: true }, /'verbose' is not an argument/],
      ['models_show', { model: 'NOPE' }, /NOPE/],
      ['no_such_tool', {}, /unknown tool/],
    ];
    for (const [name, args, re] of bad)
      await assert.rejects(call(client, name, args),
        e => e instanceof McpError && e.code === ErrorCode.InvalidParams && re.test(e.message),
        `${name} ${JSON.stringify(args)}`);
    assert.deepEqual(await client.ping(), {});
    await assert.rejects(client.request({ method: 'no/such' }, EmptyResultSchema),
      e => e instanceof McpError && e.code === ErrorCode.MethodNotFound);
    // a PENDING cluster's queue is refused as a tool error the model can read
    const r = await call(client, 'hpc_queue', { cluster: 'testb' });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /PENDING/);
  } finally {
    await client.close();
  }
});

test('writes: approve is listed, goes through governance, audited once, names the client', { skip }, async () => {
  const os = exa(world.env, ['--json', 'hpc', 'clusters']);
  assert.equal(JSON.parse(os).find(c => c.name === 'testb').state, 'PENDING');
  const { client } = await connect({ EXAMLOPS_MCP_ALLOW_WRITES: 'yes' }, [], 'e2e-writer');
  try {
    assert.equal(client.getServerVersion().name, 'exa');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map(t => t.name).sort(), [...READ_TOOLS, 'hpc_approve_cluster'].sort());
    const ap = tools.find(t => t.name === 'hpc_approve_cluster');
    assert.equal(ap.annotations.readOnlyHint, false);
    assert.deepEqual(ap.inputSchema.required, ['name', 'reason']);

    await assert.rejects(call(client, 'hpc_approve_cluster', { name: 'testb' }),
      e => e instanceof McpError && e.code === ErrorCode.InvalidParams);
    await assert.rejects(call(client, 'hpc_approve_cluster', { name: 'nosuch', reason: 'r' }),
      e => e instanceof McpError && e.code === ErrorCode.InvalidParams);

    // bound to what was reviewed: a fingerprint that is not the pinned one
    // changes nothing and audits nothing
    const wrong = await call(client, 'hpc_approve_cluster',
      { name: 'testb', reason: 'r', host_key_fingerprint: 'SHA256:not-this-one' });
    assert.equal(wrong.isError, true);
    assert.match(wrong.content[0].text, /pins host key SHA256:.* not the SHA256:not-this-one given; nothing changed/);
    assert.deepEqual(audit(world.env, 'cluster_approved', 'testb'), []);
    const seen = (await call(client, 'hpc_clusters')).structuredContent.clusters.find(c => c.name === 'testb');
    const r = await call(client, 'hpc_approve_cluster',
      { name: 'testb', reason: 'capacity for e2e', host_key_fingerprint: seen.host_key_fingerprint });
    assert.equal(r.isError, undefined, JSON.stringify(r.content));
    checkSchema(ap, r.structuredContent);
    assertRedacted(assert, 'approve', r);
    const s = r.structuredContent;
    assert.equal(s.cluster, 'testb');
    assert.equal(s.state, 'ACTIVE');
    assert.equal(s.previous_state, 'PENDING');
    const osUser = userInfo().username;
    // the answer is redacted, but only in free text: approved_by is an
    // actor (the OS user of the stdio server), shown as the audit event
    // keeps it even when it equals the ssh user (redteam-s3 6)
    assert.equal(s.approved_by, `mcp:e2e-writer (${osUser})`);
    assert.ok(Number.isInteger(s.audit_event_id));

    // the state changed for the CLI too, and exactly one event names the client
    const after = JSON.parse(exa(world.env, ['--json', 'hpc', 'clusters']));
    assert.equal(after.find(c => c.name === 'testb').state, 'ACTIVE');
    assert.deepEqual(audit(world.env, 'cluster_approved', 'testb'), [`mcp:e2e-writer (${osUser})`]);
    const ev = exa(world.env, ['hpc', 'audit', '--verify']);
    assert.match(ev, /ok|intact|verified/i);

    // approving again is refused by the state machine, and audits nothing
    const again = await call(client, 'hpc_approve_cluster', { name: 'testb', reason: 'again' });
    assert.equal(again.isError, true);
    assert.equal(audit(world.env, 'cluster_approved', 'testb').length, 1);
  } finally {
    await client.close();
  }
  // --allow-writes does the same as the environment variable
  const { client: c2 } = await connect({}, ['--allow-writes']);
  assert.ok((await c2.listTools()).tools.some(t => t.name === 'hpc_approve_cluster'));
  await c2.close();
  // and EXAMLOPS_MCP_ALLOW_WRITES=0 registers no write
  const { client: c3 } = await connect({ EXAMLOPS_MCP_ALLOW_WRITES: '0' });
  assert.ok(!(await c3.listTools()).tools.some(t => t.name === 'hpc_approve_cluster'));
  await c3.close();
});

test('protocol: the SDK offers its newest revision and gets it', { skip }, async () => {
  const { client, log } = await connect();
  await client.close();
  assert.equal(LATEST_PROTOCOL_VERSION, '2025-11-25');
  assert.match(log(), /serving 9 tools on stdio/);
});

test('bad configuration: exit 3 for EXAMLOPS_MCP_ALLOW_WRITES, 2 for options, loopback only', { skip }, () => {
  const run = (args, env = {}) => spawnSync(EXA, args, { env: { ...world.env, ...env },
                                                         input: '', encoding: 'utf8', timeout: 10000 });
  let r = run(['mcp', 'serve'], { EXAMLOPS_MCP_ALLOW_WRITES: 'maybe' });
  assert.equal(r.status, 3);
  assert.match(r.stderr, /EXAMLOPS_MCP_ALLOW_WRITES is 'maybe': expected 1, true, yes, on/);
  assert.equal(r.stdout, '');
  r = run(['mcp', 'serve', '--transport', 'carrier-pigeon']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--transport must be 'stdio' or 'http'/);
  r = run(['mcp', 'serve', '--listen', '127.0.0.1:0']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--listen needs --transport http/);
  r = run(['mcp', 'serve', '--transport', 'http', '--listen', '0.0.0.0:0']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /listens on loopback only/);
  // end of input at once: a clean exit, nothing on stdout
  r = run(['mcp', 'serve']);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '');
});
