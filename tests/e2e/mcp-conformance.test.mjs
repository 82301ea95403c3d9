// mcp-conformance.test.mjs - the @modelcontextprotocol/conformance server
// scenarios that apply to any server (0.1.13, the newest that runs on Node
// 20; shared/E2E-TESTING.md A2) against `exa mcp serve --transport http`.
// The suite cannot send an Authorization header, so it talks to exa
// through a loopback proxy that adds a viewer token and forwards every
// request unchanged otherwise (method, path, Host, Origin, body), so the
// DNS-rebinding scenario still reaches exa's own Host/Origin check.
// completion-complete does not apply: exa declares no completions (it has
// no prompts or resources to complete). The everything-server scenarios
// need tools exa does not have.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { haveTestbed, makeWorld, exa, startServer } from './mcp-fixture.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CONF = join(HERE, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'logging-set-level',
                   'server-sse-multiple-streams', 'dns-rebinding-protection', 'server-sse-polling'];
const skip = haveTestbed ? false : 'needs the Slurm testbed (TESTBED_ROOT) and EXA';
let world, srv, proxy, proxyPort;

before(async () => {
  if (!haveTestbed) return;
  world = makeWorld();
  const token = JSON.parse(exa(world.env, ['--json', 'auth', 'token', 'create',
                                           '--user', 'conformance', '--role', 'viewer'])).token;
  srv = await startServer(world.env, ['mcp', 'serve', '--transport', 'http', '--listen', '127.0.0.1:0']);
  proxy = http.createServer((req, res) => {
    const up = http.request({ host: '127.0.0.1', port: srv.port, path: req.url, method: req.method,
                              headers: { ...req.headers, authorization: `Bearer ${token}` } }, r => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', e => { res.writeHead(502); res.end(String(e)); });
    req.pipe(up);
  });
  await new Promise(ok => proxy.listen(0, '127.0.0.1', ok));
  proxyPort = proxy.address().port;
});
after(() => {
  if (proxy) proxy.close();
  if (srv) srv.proc.kill('SIGTERM');
  if (world) world.cleanup();
});

function conformance(scenario) {
  return new Promise(ok => {
    const p = spawn(process.execPath, [CONF, 'server', '--url', `http://127.0.0.1:${proxyPort}/mcp`,
                                       '--scenario', scenario], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', d => { out += d; });
    p.stderr.on('data', d => { out += d; });
    const t = setTimeout(() => p.kill('SIGKILL'), 60000);
    p.on('exit', code => { clearTimeout(t); ok({ code, out }); });
  });
}

for (const s of SCENARIOS) {
  test(`conformance ${s}`, { skip }, async () => {
    const { code, out } = await conformance(s);
    assert.equal(code, 0, out);
    // eslint-disable-next-line no-control-regex
    const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
    const m = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(plain);
    assert.ok(m, plain);
    assert.equal(+m[3], 0, plain);
    assert.equal(+m[4], 0, plain);
    assert.equal(m[1], m[2], plain);
    if (s !== 'server-sse-polling')   // JSON-only servers: not applicable, 0 checks
      assert.ok(+m[1] >= 1, plain);
    console.log(`${s}: ${m[1]}/${m[2]} checks passed`);
  });
}
