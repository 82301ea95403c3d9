// console.test.mjs - the Facility console in a real headless Chromium
// (Debian's /usr/bin/chromium, driven by playwright-core; shared
// E2E-TESTING.md part B), against a running `exa serve`.
//
// Run by tests/integration/t0881-console-browser.t, which registers the
// testbed clusters in a scratch platform.db, creates the tokens, starts
// `exa serve` on a free port and sets:
//   CONSOLE_URL           http://127.0.0.1:PORT
//   CONSOLE_VIEWER_TOKEN  CONSOLE_OPERATOR_TOKEN  CONSOLE_ADMIN_TOKEN
//   CONSOLE_ADMIN_USER
//   CONSOLE_EXPECT_GPUS   "testa=4 testb=2": clusters the viewer must see,
//                         with their total GPUs (from `exa hpc detect`)
//   CONSOLE_APPROVE       a PENDING cluster the admin approves by mouse
//   CONSOLE_KEY_APPROVE   a PENDING cluster the admin approves by keyboard
//   CONSOLE_REJECT        a PENDING cluster the admin rejects with a reason
//   CONSOLE_CLI_APPROVE   a PENDING cluster `exa hpc approve` approves while
//                         the page is open (the 10 s refresh must show it)
//   CONSOLE_JOB           CLUSTER/JOB_ID of a job exa ran on the testbed
//   EXA (+ the EXAMLOPS_* of the scratch store) to read platform.db back
// Screenshots go to tests/e2e/test-results/console/ (kept as artifacts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set (run through tests/integration/t0881-console-browser.t)`);
  return v;
};
const BASE = env('CONSOLE_URL');
const VIEWER = env('CONSOLE_VIEWER_TOKEN');
const OPERATOR = env('CONSOLE_OPERATOR_TOKEN');
const ADMIN = env('CONSOLE_ADMIN_TOKEN');
const ADMIN_USER = env('CONSOLE_ADMIN_USER');
const EXPECT = Object.fromEntries(env('CONSOLE_EXPECT_GPUS').split(/\s+/).map((kv) => kv.split('=')));
const APPROVE = env('CONSOLE_APPROVE');
const KEY_APPROVE = env('CONSOLE_KEY_APPROVE');
const REJECT = env('CONSOLE_REJECT');
const CLI_APPROVE = env('CONSOLE_CLI_APPROVE');
const [JOB_CLUSTER, JOB_ID] = env('CONSOLE_JOB').split('/');
const EXA = env('EXA');

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SHOTS = path.join(HERE, 'test-results', 'console');
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: FLAGS, timeout: 30000 });
});
after(async () => { await browser?.close(); });

// the cluster as platform.db has it, through exa's own CLI
function dbCluster(name) {
  const out = execFileSync(EXA, ['--json', 'hpc', 'clusters'], { encoding: 'utf8', timeout: 20000 });
  return JSON.parse(out).find((c) => c.name === name);
}

function assertPng(file, width) {
  const png = readFileSync(file);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${file} is a PNG`);
  assert.equal(png.readUInt32BE(16), width, `${file} is ${width} px wide`);
}

async function shot(page, name, width) {
  const file = path.join(SHOTS, name);
  await page.screenshot({ path: file, fullPage: true });
  assertPng(file, width);
}

// A fresh context (own cookies) and page that records page errors, console
// errors (a CSP violation is one), every request and every navigation.
async function open(viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const rec = { errors: [], requests: [], navigations: 0 };
  page.on('pageerror', (e) => rec.errors.push('pageerror: ' + e.message));
  // (the page's first whoami is 401 before sign-in, which chromium logs)
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (/status of 401/.test(m.text()) && m.location().url.endsWith('/api/v1/auth/whoami')) return;
    rec.errors.push('console: ' + m.text());
  });
  page.on('request', (r) => rec.requests.push(r.method() + ' ' + new URL(r.url()).pathname));
  // a server error names its request and what the server said
  page.on('response', async (r) => {
    if (r.status() < 500) return;
    let body = '';
    try { body = (await r.text()).slice(0, 300); } catch (e) { /* gone */ }
    rec.errors.push(`HTTP ${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}: ${body}`);
  });
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) rec.navigations++; });
  await page.goto(BASE + '/');
  await page.locator('#login-form').waitFor({ state: 'visible' });
  return { context, page, rec };
}

async function login(page, token, { keyboard = false } = {}) {
  const done = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/login'));
  if (keyboard) {
    await page.keyboard.type(token); // the token field has the focus
    await page.keyboard.press('Enter');
  } else {
    await page.fill('#token', token);
    await page.click('#login-submit');
  }
  const r = await done;
  assert.equal(r.status(), 200, 'login answers 200');
  await page.locator('#app').waitFor({ state: 'visible' });
  await page.locator('#fleet-body tr').first().waitFor();
}

const row = (page, name) => page.locator(`#fleet-body tr[data-cluster="${name}"]`);
const cell = (page, name, col) => row(page, name).locator(`td[data-col="${col}"]`);

test('a viewer signs in and sees both testbed clusters with their GPU counts and no buttons', async () => {
  const { context, page, rec } = await open();
  try {
    await login(page, VIEWER);
    await assert.doesNotReject(page.locator('#who-text').filter({ hasText: 'viewer' }).waitFor());
    for (const [name, total] of Object.entries(EXPECT)) {
      await row(page, name).waitFor();
      const gpus = (await cell(page, name, 'gpus').innerText()).trim();
      assert.match(gpus, new RegExp(`^\\d+ / ${total}$`), `${name} shows idle / ${total} GPUs`);
      const idle = Number(gpus.split(' / ')[0]);
      assert.ok(idle <= Number(total), `${name}: idle ${idle} <= total ${total}`);
      for (const col of ['state', 'scheduler', 'host', 'util', 'gpuh', 'age', 'approved'])
        assert.notEqual((await cell(page, name, col).innerText()).trim(), '', `${name}: ${col} is shown`);
      assert.equal((await cell(page, name, 'scheduler').innerText()).split('\n')[0].trim(), 'slurm');
    }
    assert.equal(await page.locator('#fleet button, #fleet input').count(), 0, 'a viewer sees no buttons or fields in the Fleet panel');
    assert.equal(await page.locator('#fleet-actions-h').isVisible(), false, 'no Actions column');
    assert.equal(await page.locator('#audit').isVisible(), false, 'no audit trail for a viewer');
    assert.equal(await page.locator('#jobs').isVisible(), true, 'the Jobs panel is shown');
    // the job exa ran: state, cluster, GPU-hours and queue wait as recorded
    const job = JSON.parse(execFileSync(EXA, ['--json', 'hpc', 'jobs', '--cluster', JOB_CLUSTER],
      { encoding: 'utf8', timeout: 20000 })).find((j) => j.job_id === JOB_ID);
    assert.ok(job, `exa recorded job ${JOB_CLUSTER}/${JOB_ID}`);
    const jr = page.locator(`#jobs-body tr[data-job="${JOB_ID}"]`).filter({ hasText: JOB_CLUSTER });
    await jr.waitFor();
    const jt = (col) => jr.locator(`td[data-label="${col}"]`).innerText().then((x) => x.trim());
    assert.equal(await jt('State'), job.state, 'job state');
    assert.equal(await jt('Cluster'), JOB_CLUSTER, 'job cluster');
    const gh = await jt('GPU-hours');
    assert.ok(job.gpu_hours > 0, 'the job has GPU-hours');
    assert.ok(Math.abs(Number(gh.replace(/,/g, '')) - job.gpu_hours) <= Math.max(0.005, job.gpu_hours * 0.05),
      `GPU-hours shown ${gh} ~ recorded ${job.gpu_hours}`);
    assert.match(await jt('Queue wait'), /^\d+ (s|min)$/, 'queue wait shown');
    assert.ok(!rec.requests.some((r) => r.includes('/api/v1/audit')), 'the viewer page never asks for the audit log');

    // the session is an HttpOnly, SameSite=Strict cookie; the token is kept nowhere
    const cookies = await context.cookies();
    const sc = cookies.find((c) => c.name === 'exa_session');
    assert.ok(sc, 'exa_session cookie set');
    assert.equal(sc.httpOnly, true, 'session cookie is HttpOnly');
    assert.equal(sc.sameSite, 'Strict', 'session cookie is SameSite=Strict');
    const kept = await page.evaluate(() => [document.cookie, JSON.stringify(localStorage),
      JSON.stringify(sessionStorage), document.documentElement.outerHTML].join('\n'));
    assert.ok(!kept.includes('exa_session'), 'the cookie is not readable by script');
    assert.ok(!kept.includes(VIEWER), 'the token is not kept in the page, storage or cookies');
    assert.equal(await page.inputValue('#token'), '', 'the token field is emptied');

    await shot(page, 'viewer-1280x800.png', 1280);
    assert.deepEqual(rec.errors, [], 'no page or console errors (CSP violations are console errors)');
  } finally {
    await context.close();
  }
});

test('an operator sees the fleet and jobs but no buttons and no audit trail', async () => {
  const { context, page, rec } = await open();
  try {
    await login(page, OPERATOR);
    await page.locator('#who-text').filter({ hasText: 'operator' }).waitFor();
    for (const name of Object.keys(EXPECT)) await row(page, name).waitFor();
    assert.equal(await page.locator('#fleet button, #fleet input').count(), 0, 'no Approve/Reject for an operator');
    assert.equal(await page.locator('#audit').isVisible(), false, 'no audit trail for an operator');
    assert.ok(!rec.requests.some((r) => r.includes('/api/v1/audit')), 'the audit log is never asked for');
    // and the server refuses the operator's session a decision anyway
    const st = await page.evaluate(async (n) => {
      const who = await (await fetch('/api/v1/auth/whoami')).json();
      const r = await fetch(`/api/v1/facility/fleet/${n}/approve`, { method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': who.csrf }, body: '{}' });
      return r.status;
    }, KEY_APPROVE);
    assert.equal(st, 403, 'approve with an operator session is 403');
    assert.equal(dbCluster(KEY_APPROVE).state, 'PENDING', 'and changes nothing');
    assert.deepEqual(rec.errors.filter((e) => !/status of 403/.test(e)), []);
  } finally {
    await context.close();
  }
});

test('a wrong token is refused on the login form', async () => {
  const { context, page, rec } = await open();
  try {
    const done = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/login'));
    await page.fill('#token', 'exa_not-a-real-token');
    await page.click('#login-submit');
    assert.equal((await done).status(), 401);
    await page.locator('#login-error').filter({ hasText: 'not accepted' }).waitFor();
    assert.equal(await page.locator('#app').isVisible(), false);
    // the 401 itself is logged by chromium as a failed resource load
    assert.deepEqual(rec.errors.filter((e) => !/status of 401/.test(e)), []);
  } finally {
    await context.close();
  }
});

test('an admin approves a PENDING cluster and the page shows ACTIVE without a reload', async () => {
  const { context, page, rec } = await open();
  try {
    await login(page, ADMIN);
    await page.locator('#audit').waitFor({ state: 'visible' });
    const r = row(page, APPROVE);
    await r.waitFor();
    assert.equal(await r.getAttribute('data-state'), 'PENDING');
    await page.evaluate(() => { window.__sameDocument = 1; });
    const navs = rec.navigations;
    // at 1280x800 every panel fits its width: nothing to scroll sideways
    await page.locator('#updated').filter({ hasText: 'Updated' }).waitFor();
    const wide = await page.evaluate(() => [document.documentElement.scrollWidth,
      ...[...document.querySelectorAll('.scroll')].map((e) => e.scrollWidth - e.clientWidth)]);
    assert.ok(wide[0] <= 1280, `the page is no wider than 1280 (${wide[0]})`);
    assert.deepEqual(wide.slice(1).filter((d) => d > 0), [], 'no panel overflows at 1280 px (Actions column shown)');
    await shot(page, 'admin-before-approve-1280x800.png', 1280);

    // a cookie-authenticated POST without the CSRF header is refused
    const noCsrf = await page.evaluate(async (n) => (await fetch(`/api/v1/facility/fleet/${n}/approve`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status, APPROVE);
    assert.equal(noCsrf, 403, 'approve without X-CSRF-Token is 403');
    assert.equal(dbCluster(APPROVE).state, 'PENDING', 'and changes nothing');
    rec.errors = rec.errors.filter((e) => !/status of 403/.test(e));

    const resp = page.waitForResponse((x) => x.url().endsWith(`/api/v1/facility/fleet/${APPROVE}/approve`));
    await r.getByRole('button', { name: `Approve ${APPROVE}` }).click();
    const res = await resp;
    assert.equal(res.status(), 200, 'approve answers 200');
    assert.equal(res.request().headers()['x-csrf-token']?.length > 0, true, 'the POST carries X-CSRF-Token');
    await page.waitForFunction((n) =>
      document.querySelector(`#fleet-body tr[data-cluster="${n}"]`)?.getAttribute('data-state') === 'ACTIVE', APPROVE);
    assert.equal((await cell(page, APPROVE, 'state').innerText()).trim(), 'ACTIVE');
    await cell(page, APPROVE, 'approved').filter({ hasText: ADMIN_USER }).waitFor();
    assert.equal(await r.getByRole('button', { name: `Approve ${APPROVE}` }).count(), 0, 'no Approve button on an ACTIVE cluster');
    assert.equal(await r.getByRole('button', { name: `Reject ${APPROVE}` }).count(), 1, 'an ACTIVE cluster can still be rejected');
    assert.equal(await page.evaluate(() => window.__sameDocument), 1, 'same document: no reload');
    assert.equal(rec.navigations, navs, 'no navigation');
    await page.locator('#status').filter({ hasText: `${APPROVE} is now ACTIVE` }).waitFor();

    const db = dbCluster(APPROVE);
    assert.equal(db.state, 'ACTIVE', 'platform.db has it ACTIVE');
    assert.equal(db.approved_by, ADMIN_USER, "the approver is the token's user, never a role");
    // the audit trail names the admin
    await page.locator('#audit-body tr', { hasText: 'cluster_approved' }).filter({ hasText: APPROVE })
      .filter({ hasText: ADMIN_USER }).first().waitFor({ timeout: 15000 });
    await shot(page, 'admin-after-approve-1280x800.png', 1280);
    assert.deepEqual(rec.errors, []);
  } finally {
    await context.close();
  }
});

test('a reject with a reason shows the reason (as text, never markup)', async () => {
  const { context, page, rec } = await open();
  try {
    await login(page, ADMIN);
    const r = row(page, REJECT);
    await r.waitFor();
    const reason = 'rack retired <img src=x onerror="window.__xss=1"> & <b>gone</b>';
    // an empty reason is refused in the page, nothing is sent
    await r.getByRole('button', { name: `Reject ${REJECT}` }).click();
    await page.locator('#error').filter({ hasText: `Give a reason for rejecting ${REJECT}` }).waitFor();
    assert.ok(!rec.requests.some((x) => x.endsWith(`/${REJECT}/reject`)), 'no request without a reason');

    await r.getByLabel(`Reason for rejecting ${REJECT}`).fill(reason);
    const resp = page.waitForResponse((x) => x.url().endsWith(`/api/v1/facility/fleet/${REJECT}/reject`));
    await r.getByRole('button', { name: `Reject ${REJECT}` }).click();
    assert.equal((await resp).status(), 200, 'reject answers 200');
    await page.waitForFunction((n) =>
      document.querySelector(`#fleet-body tr[data-cluster="${n}"]`)?.getAttribute('data-state') === 'REJECTED', REJECT);
    const shown = (await r.locator('[data-reason]').innerText()).trim();
    assert.equal(shown, 'Reason: ' + reason, 'the reason is shown literally');
    assert.equal(await r.locator('img, b').count(), 0, 'no element made from the reason');
    assert.equal(await page.evaluate(() => window.__xss), undefined, 'no script ran from the reason');
    assert.equal(await r.locator('button').count(), 0, 'a REJECTED cluster has no actions');
    const db = dbCluster(REJECT);
    assert.equal(db.state, 'REJECTED');
    assert.equal(db.reason, reason, 'platform.db keeps the reason as typed');
    await shot(page, 'admin-after-reject-1280x800.png', 1280);
    assert.deepEqual(rec.errors, []);
  } finally {
    await context.close();
  }
});

test('keyboard only: sign in, Tab to Approve, Enter', async () => {
  const { context, page, rec } = await open();
  try {
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'token', 'the token field has the focus on load');
    await login(page, ADMIN, { keyboard: true });
    const target = `Approve ${KEY_APPROVE}`;
    let found = false;
    for (let i = 0; i < 120 && !found; i++) {
      await page.keyboard.press('Tab');
      found = await page.evaluate((t) => document.activeElement?.getAttribute('aria-label') === t, target);
    }
    assert.ok(found, `Tab reaches "${target}"`);
    const ring = await page.evaluate(() => {
      const s = getComputedStyle(document.activeElement);
      return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
    });
    assert.notEqual(ring.style, 'none', 'the focused button shows a focus ring');
    assert.ok(ring.width >= 2, 'the focus ring is at least 2px');
    await shot(page, 'keyboard-focus-1280x800.png', 1280);
    const resp = page.waitForResponse((x) => x.url().endsWith(`/api/v1/facility/fleet/${KEY_APPROVE}/approve`));
    await page.keyboard.press('Enter');
    assert.equal((await resp).status(), 200);
    await page.waitForFunction((n) =>
      document.querySelector(`#fleet-body tr[data-cluster="${n}"]`)?.getAttribute('data-state') === 'ACTIVE', KEY_APPROVE);
    const inRow = await page.evaluate((n) =>
      !!document.activeElement?.closest(`tr[data-cluster="${n}"]`), KEY_APPROVE);
    assert.ok(inRow, 'the focus stays in the row after its Approve button is gone');
    assert.equal(dbCluster(KEY_APPROVE).state, 'ACTIVE');
    // updates are announced: a polite live region holds the outcome
    assert.equal(await page.getAttribute('#status', 'aria-live'), 'polite');
    await page.locator('#status').filter({ hasText: `${KEY_APPROVE} is now ACTIVE` }).waitFor();
    assert.deepEqual(rec.errors, []);
  } finally {
    await context.close();
  }
});

test('phone width: the panels become cards, nothing scrolls sideways', async () => {
  const W = 390;
  const { context, page, rec } = await open({ width: W, height: 844 });
  try {
    await login(page, ADMIN);
    await page.locator('#audit').waitFor({ state: 'visible' });
    await page.locator('#audit-body tr').first().waitFor();
    await page.locator('#updated').filter({ hasText: 'Updated' }).waitFor();
    const m = await page.evaluate(() => {
      const first = document.querySelector('#fleet-body tr');
      const td = first.querySelector('td[data-col="gpus"]');
      const head = document.querySelector('#fleet-table thead').getBoundingClientRect();
      const btns = [...document.querySelectorAll('#fleet button')].map((b) => b.getBoundingClientRect());
      return {
        scrollW: document.documentElement.scrollWidth,
        rowDisplay: getComputedStyle(first).display,
        label: getComputedStyle(td, '::before').content,
        headW: head.width,
        rowW: first.getBoundingClientRect().width,
        minBtnH: Math.min(...btns.map((b) => b.height)),
        maxRight: Math.max(...[...document.querySelectorAll('#fleet-body tr, #jobs-body tr, #audit-body tr')]
          .map((e) => e.getBoundingClientRect().right)),
      };
    });
    assert.ok(m.scrollW <= W, `no horizontal scroll (scrollWidth ${m.scrollW} <= ${W})`);
    assert.equal(m.rowDisplay, 'block', 'a fleet row is a card');
    assert.equal(m.label, '"GPUs idle / total"', 'each value carries its label');
    assert.ok(m.headW <= 1, 'the table header is visually hidden');
    assert.ok(m.maxRight <= W, `no card overflows (right edge ${m.maxRight})`);
    assert.ok(m.minBtnH >= 40, `buttons are touch-sized (${m.minBtnH}px)`);
    await shot(page, 'admin-phone-390x844.png', W);
    assert.deepEqual(rec.errors, []);
  } finally {
    await context.close();
  }
});

test('the page follows a change made elsewhere within its 10 s refresh, without a reload', async () => {
  const { context, page, rec } = await open();
  try {
    await login(page, VIEWER);
    await row(page, CLI_APPROVE).waitFor();
    assert.equal(await row(page, CLI_APPROVE).getAttribute('data-state'), 'PENDING');
    await page.evaluate(() => { window.__sameDocument = 1; });
    const t0 = Date.now();
    execFileSync(EXA, ['-y', 'hpc', 'approve', CLI_APPROVE], { encoding: 'utf8', timeout: 20000 });
    await page.waitForFunction((n) =>
      document.querySelector(`#fleet-body tr[data-cluster="${n}"]`)?.getAttribute('data-state') === 'ACTIVE',
    CLI_APPROVE, { timeout: 16000 });
    const waited = Date.now() - t0;
    // one 10 s period plus the refresh's own requests on a loaded machine
    assert.ok(waited < 14000, `shown within one refresh period (${waited} ms)`);
    assert.equal(await page.evaluate(() => window.__sameDocument), 1, 'no reload');
    assert.ok(rec.requests.filter((x) => x === 'GET /api/v1/facility/fleet').length >= 2, 'the fleet was fetched again');
    assert.equal(rec.requests.filter((x) => x === 'GET /').length, 1, 'the page was loaded once');
    assert.deepEqual(rec.errors, []);
  } finally {
    await context.close();
  }
});

test('a reload keeps the session; sign-out ends it; a new visitor asks the API nothing', async () => {
  const { context, page, rec } = await open();
  try {
    assert.deepEqual(rec.requests.filter((r) => r.includes('/api/')), [],
      'a first visit shows the form without asking whoami (no refused request to audit)');
    await login(page, VIEWER);
    const who = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/whoami'));
    await page.reload();
    assert.equal((await who).status(), 200, 'after a reload whoami answers from the session cookie');
    await page.locator('#app').waitFor({ state: 'visible' });
    await page.locator('#who-text').filter({ hasText: 'vera' }).waitFor();
    await page.locator('#fleet-body tr').first().waitFor();

    const done = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/logout'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    assert.equal((await done).status() < 300, true, 'logout answers 2xx');
    await page.locator('#login').waitFor({ state: 'visible' });
    // the old cookie no longer works
    const st = await page.evaluate(async () => (await fetch('/api/v1/auth/whoami')).status);
    assert.equal(st, 401, 'whoami is 401 after sign-out');
    const before = rec.requests.length;
    await page.reload();
    await page.locator('#login-form').waitFor({ state: 'visible' });
    assert.deepEqual(rec.requests.slice(before).filter((r) => r.includes('/api/')), [],
      'after sign-out a reload asks nothing');
  } finally {
    await context.close();
  }
});
