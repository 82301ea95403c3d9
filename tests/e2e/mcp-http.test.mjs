// mcp-http.test.mjs - `exa mcp serve --transport http` (and /mcp on
// `exa serve`) with the official SDK client's streamable HTTP transport
// and with raw requests: bearer tokens from `exa auth token create`
// (viewer reads, only admin approves), Mcp-Session-Id sessions (DELETE
// ends one, then 404), MCP-Protocol-Version, GET 405, 202 for
// notifications, Host/Origin checks against DNS rebinding (403), every
// tool's structuredContent against its output schema, InvalidParams for
// a wrong argument, an approve audited once under the token's user and
// the client's name, and no ssh user or key in any answer.
// Run: EXA=... node --test --test-reporter=tap mcp-http.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { haveTestbed, makeWorld, exa, audit, startServer, assertRedacted } from './mcp-fixture.mjs';

const skip = haveTestbed ? false : 'needs the Slurm testbed (TESTBED_ROOT) and EXA';
let world, srv, serve, tok = {};
before(async () => {
  if (!haveTestbed) return;
  world = makeWorld();
  for (const [user, role] of [['alice', 'admin'], ['bob', 'viewer'], ['olga', 'operator']])
    tok[user] = JSON.parse(exa(world.env, ['--json', 'auth', 'token', 'create',
                                           '--user', user, '--role', role])).token;
  srv = await startServer(world.env, ['mcp', 'serve', '--transport', 'http',
                                      '--listen', '127.0.0.1:0', '--allow-writes']);
});
after(() => {
  for (const s of [srv, serve]) if (s) s.proc.kill('SIGTERM');
  if (world) world.cleanup();
});

async function connect(port, token, name = 'e2e-http') {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
  const client = new Client({ name, version: '0.0.1' });
  await client.connect(transport, { timeout: 10000 });
  return { client, transport };
}

// A raw request: resolves { status, headers, body }.
function raw(port, method, headers = {}, body = '') {
  return new Promise((ok, bad) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method,
                               headers: { 'content-type': 'application/json', ...headers } }, res => {
      let b = '';
      res.on('data', d => { b += d; });
      res.on('end', () => ok({ status: res.statusCode, headers: res.headers, body: b }));
    });
    req.on('error', bad);
    req.end(body);
  });
}
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

test('no or a bad token: 401 and nothing else', { skip }, async () => {
  await assert.rejects(connect(srv.port, null), e => e.code === 401 && /unauthorized/.test(e.message));
  await assert.rejects(connect(srv.port, 'exa_' + 'A'.repeat(43)), e => e.code === 401);
  const r = await raw(srv.port, 'POST', {}, INIT);
  assert.equal(r.status, 401);
  assert.equal(r.headers['www-authenticate'], 'Bearer');
  assert.equal(JSON.parse(r.body).error.code, -32000);
  // the refused token is an audit event under the path (a missing one is
  // not: nothing was presented); the event never holds the token
  assert.deepEqual(audit(world.env, 'api_denied', '/mcp'), ['anonymous']);
  assert.ok(!exa(world.env, ['--json', 'hpc', 'audit']).includes('A'.repeat(43)));
});

test('viewer: every read tool over HTTP, schemas, redaction; approve refused', { skip }, async () => {
  const { client, transport } = await connect(srv.port, tok.bob);
  try {
    assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
    assert.equal(transport.protocolVersion, '2025-11-25');
    assert.equal(client.getServerVersion().name, 'exa');
    const { tools } = await client.listTools();
    assert.equal(tools.length, 10);           // --allow-writes: approve listed
    const calls = [['hpc_clusters', {}], ['hpc_nodes', { cluster: 'testa' }],
                   ['hpc_jobs', { model: 'JPCP', limit: 10 }], ['hpc_capacity', {}],
                   ['hpc_queue', { cluster: 'testa' }], ['models_list', {}],
                   ['models_show', { model: 'JPCP' }], ['finops_carbon_report', {}]];
    for (const [name, args] of calls) {
      // the SDK validates structuredContent against the listed outputSchema
      const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 30000 });
      assert.equal(r.isError, undefined, `${name}: ${JSON.stringify(r.content)}`);
      assert.equal(typeof r.structuredContent, 'object', name);
      assertRedacted(assert, name, r);
    }
    const cl = await client.callTool({ name: 'hpc_clusters', arguments: {} });
    assert.deepEqual(cl.structuredContent.clusters.map(c => c.state), ['ACTIVE', 'PENDING']);
    await assert.rejects(client.callTool({ name: 'hpc_jobs', arguments: { limit: 'ten' } }),
      e => e instanceof McpError && e.code === ErrorCode.InvalidParams);
    // the viewer role may not place (operator) nor approve (admin)
    const p = await client.callTool({ name: 'hpc_place', arguments: { gpus: 1 } });
    assert.equal(p.isError, true);
    assert.match(p.content[0].text, /needs the operator role/);
    const a = await client.callTool({ name: 'hpc_approve_cluster', arguments: { name: 'testb', reason: 'r' } });
    assert.equal(a.isError, true);
    assert.match(a.content[0].text, /needs the admin role; the token of 'bob' has viewer/);
    assert.deepEqual(audit(world.env, 'cluster_approved', 'testb'), []);
  } finally {
    await client.close();
  }
  const { client: op } = await connect(srv.port, tok.olga);
  const p = await op.callTool({ name: 'hpc_place', arguments: { gpus: 1 } }, undefined, { timeout: 30000 });
  assert.equal(p.structuredContent.cluster, 'testa');
  await op.close();
});

test('admin: approve changes the state, one audit event names the client and the user', { skip }, async () => {
  const { client } = await connect(srv.port, tok.alice, 'agent-007');
  try {
    const r = await client.callTool({ name: 'hpc_approve_cluster',
                                      arguments: { name: 'testb', reason: 'e2e over http' } });
    assert.equal(r.isError, undefined, JSON.stringify(r.content));
    assert.equal(r.structuredContent.state, 'ACTIVE');
    assert.equal(r.structuredContent.previous_state, 'PENDING');
    assert.equal(r.structuredContent.approved_by, 'mcp:agent-007 (alice)');
    assertRedacted(assert, 'approve', r);
  } finally {
    await client.close();
  }
  assert.deepEqual(audit(world.env, 'cluster_approved', 'testb'), ['mcp:agent-007 (alice)']);
  const cl = JSON.parse(exa(world.env, ['--json', 'hpc', 'clusters']));
  assert.equal(cl.find(c => c.name === 'testb').state, 'ACTIVE');
  assert.match(exa(world.env, ['hpc', 'audit', '--verify']), /intact/);
});

test('HTTP rules: sessions, versions, 202, 405, DNS rebinding', { skip }, async () => {
  const A = { authorization: `Bearer ${tok.bob}` };
  const init = await raw(srv.port, 'POST', A, INIT);
  assert.equal(init.status, 200);
  assert.match(init.headers['content-type'], /^application\/json/);
  const sid = init.headers['mcp-session-id'];
  assert.match(sid, /^[0-9a-f]{32}$/);
  assert.equal(JSON.parse(init.body).result.protocolVersion, '2025-06-18');
  const S = { ...A, 'mcp-session-id': sid };
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  let r = await raw(srv.port, 'POST', S, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  assert.equal(r.status, 202);
  assert.equal(r.body, '');
  r = await raw(srv.port, 'POST', S, ping);        // no MCP-Protocol-Version: 2025-03-26 assumed
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.body), { jsonrpc: '2.0', id: 1, result: {} });
  r = await raw(srv.port, 'POST', { ...S, 'mcp-protocol-version': '2025-06-18' }, ping);
  assert.equal(r.status, 200);
  r = await raw(srv.port, 'POST', { ...S, 'mcp-protocol-version': '2099-01-01' }, ping);
  assert.equal(r.status, 400);
  r = await raw(srv.port, 'POST', A, ping);          // no session
  assert.equal(r.status, 400);
  r = await raw(srv.port, 'POST', S, '{"jsonrpc":');  // unparsable
  assert.equal(r.status, 400);
  assert.equal(JSON.parse(r.body).error.code, -32700);
  r = await raw(srv.port, 'POST', S, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'nope' }));
  assert.equal(r.status, 200);
  assert.equal(JSON.parse(r.body).error.code, -32601);
  r = await raw(srv.port, 'GET', { ...S, accept: 'text/event-stream' });
  assert.equal(r.status, 405);
  assert.equal(r.headers.allow, 'POST, DELETE');
  // a session answers only to its own user's tokens
  r = await raw(srv.port, 'POST', { authorization: `Bearer ${tok.alice}`, 'mcp-session-id': sid }, ping);
  assert.equal(r.status, 403);
  // DNS rebinding: another Host or Origin is refused before anything else
  r = await raw(srv.port, 'POST', { ...S, host: 'evil.example.com' }, ping);
  assert.equal(r.status, 403);
  r = await raw(srv.port, 'POST', { host: 'evil.example.com' }, INIT);   // not even a 401
  assert.equal(r.status, 403);
  r = await raw(srv.port, 'POST', { ...S, origin: 'http://evil.example.com' }, ping);
  assert.equal(r.status, 403);
  r = await raw(srv.port, 'POST', { ...S, host: `localhost:${srv.port}`, origin: `http://localhost:${srv.port}` }, ping);
  assert.equal(r.status, 200);
  // DELETE ends the session; its id is unknown afterwards
  r = await raw(srv.port, 'DELETE', S);
  assert.equal(r.status, 200);
  r = await raw(srv.port, 'POST', S, ping);
  assert.equal(r.status, 404);
  r = await raw(srv.port, 'DELETE', S);
  assert.equal(r.status, 404);
});

test('exa serve mounts the same endpoint at /mcp', { skip }, async () => {
  serve = await startServer({ ...world.env, EXAMLOPS_MCP_ALLOW_WRITES: 'off' },
                            ['serve', '--listen', '127.0.0.1:0', '--interval', '600']);
  const { client } = await connect(serve.port, tok.bob);
  const { tools } = await client.listTools();
  assert.equal(tools.length, 9);       // writes off: no approve
  const r = await client.callTool({ name: 'hpc_clusters', arguments: {} });
  assert.equal(r.structuredContent.count, 2);
  assertRedacted(assert, 'serve hpc_clusters', r);
  await client.close();
  const bad = await raw(serve.port, 'POST', {}, INIT);
  assert.equal(bad.status, 401);
});
