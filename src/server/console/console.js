// console.js - the exa Facility console (served from the binary, no build
// step, no third-party code). It talks to exa serve's REST API on the same
// origin (doc/console.md):
//   GET  /api/v1/auth/whoami            -> {user, role, csrf} or 401
//   POST /api/v1/auth/login {token}     -> {user, role, csrf} + session cookie
//   POST /api/v1/auth/logout
//   GET  /api/v1/facility/fleet         -> {clusters: [...], count}
//   GET  /api/v1/jobs?limit=N           -> {jobs: [...]} (or a bare array)
//   GET  /api/v1/audit?limit=N          -> {events: [...]} (admin)
//   POST /api/v1/facility/fleet/NAME/approve|reject {reason}
// Cookie-authenticated POSTs carry X-CSRF-Token. Every string from the
// server reaches the page through textContent or an attribute, never as
// markup. The page refreshes its panels every 10 s with fetch.
'use strict';

(function () {
  const REFRESH_MS = 10000;
  const JOBS_LIMIT = 25;
  const AUDIT_LIMIT = 25;

  let session = null; // {user, role, csrf}
  let timer = null;
  let inFlight = null; // the running refresh (a promise)
  let again = false;
  const fleetRows = new Map(); // cluster name -> row record

  const $ = (id) => document.getElementById(id);

  // ---- small helpers ----

  // el('td', {class: 'num', 'data-label': 'x'}, 'text' | Node, ...)
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'text') e.textContent = String(v);
        else e.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const k of kids) {
      if (k === undefined || k === null) continue;
      e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return e;
  }

  // first defined, non-null field of o among names (exa's snake_case
  // fields first, then the reference's camelCase ones)
  function field(o, ...names) {
    for (const n of names) {
      if (o && o[n] !== undefined && o[n] !== null) return o[n];
    }
    return null;
  }

  function str(v) {
    return v === null || v === undefined ? '' : String(v);
  }

  function isNum(v) {
    return typeof v === 'number' && Number.isFinite(v);
  }

  function fmtNum(v, digits) {
    if (!isNum(v)) return '—';
    return v.toLocaleString('en-US', {
      minimumFractionDigits: digits, maximumFractionDigits: digits,
    });
  }

  // GPU-hours: two decimals, and two significant digits below 0.01 (a
  // short test job is a few ten-thousandths), "0" for none
  function fmtHours(v) {
    if (!isNum(v)) return '—';
    if (v === 0) return '0';
    if (Math.abs(v) < 0.01) return String(Number(v.toPrecision(2)));
    return fmtNum(v, 2);
  }

  // seconds -> "42 s", "5 min", "3.2 h", "2.1 d"
  function fmtAge(s) {
    if (!isNum(s)) return null;
    if (s < 0) s = 0;
    if (s < 90) return Math.round(s) + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    if (s < 172800) return (s / 3600).toFixed(1) + ' h';
    return (s / 86400).toFixed(1) + ' d';
  }

  // "2026-12-02T01:02:03Z" -> "2026-12-02 01:02 UTC" (other text unchanged)
  function fmtTime(t) {
    const s = str(t);
    const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(\.\d+)?)?(Z|[+-]00:?00)?$/.exec(s);
    return m ? m[1] + ' ' + m[2] + ' UTC' : s;
  }

  function timeEl(t) {
    const s = str(t);
    if (!s) return null;
    return el('time', { datetime: s, title: s, text: fmtTime(s) });
  }

  function listOf(data, ...keys) {
    if (Array.isArray(data)) return data;
    for (const k of keys) {
      if (data && Array.isArray(data[k])) return data[k];
    }
    return [];
  }

  function say(msg) {
    $('status').textContent = msg;
  }

  function showError(msg) {
    $('error').textContent = msg || '';
  }

  // ---- the API ----

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  async function api(method, path, body) {
    const opt = {
      method,
      credentials: 'same-origin',
      cache: 'no-store',
      headers: { Accept: 'application/json' },
    };
    if (method !== 'GET') {
      opt.headers['Content-Type'] = 'application/json';
      if (session && session.csrf) opt.headers['X-CSRF-Token'] = session.csrf;
      opt.body = JSON.stringify(body || {});
    }
    let r;
    try {
      r = await fetch(path, opt);
    } catch (e) {
      throw new ApiError(0, 'the server cannot be reached');
    }
    const text = await r.text();
    let data = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (e) {
        data = null;
      }
    }
    if (!r.ok) {
      const m = data && data.error && data.error.message;
      throw new ApiError(r.status, m ? String(m) : 'HTTP ' + r.status + ' ' + r.statusText);
    }
    return data;
  }

  function isAdmin() {
    return !!session && session.role === 'admin';
  }

  // ---- session ----

  function showLogin(message) {
    stopRefresh();
    if (session) hint(false); // a session that ended (sign-out, 401)
    session = null;
    $('app').hidden = true;
    $('who').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = message || '';
    $('token').value = '';
    $('token').focus();
  }

  function showApp(who) {
    session = {
      user: str(who && who.user),
      role: str(who && who.role),
      csrf: str(who && who.csrf),
    };
    $('login').hidden = true;
    $('app').hidden = false;
    const wt = $('who-text');
    wt.textContent = 'Signed in as ' + session.user;
    wt.append(el('span', { class: 'role', text: session.role }));
    $('who').hidden = false;
    $('fleet-actions-h').hidden = !isAdmin();
    $('audit').hidden = !isAdmin();
    // a new session may have another role: rebuild the action cells
    for (const row of fleetRows.values()) row.actionsKey = null;
    startRefresh();
  }

  async function onLogin(ev) {
    ev.preventDefault();
    const input = $('token');
    const token = input.value.trim();
    const btn = $('login-submit');
    if (!token) {
      $('login-error').textContent = 'Enter an API token.';
      input.focus();
      return;
    }
    btn.disabled = true;
    $('login-error').textContent = '';
    try {
      const who = await api('POST', '/api/v1/auth/login', { token });
      input.value = '';
      hint(true);
      showApp(who);
      $('main').focus();
    } catch (e) {
      input.value = '';
      $('login-error').textContent =
        e.status === 401 ? 'That token was not accepted (unknown, expired or revoked).'
          : 'Sign-in failed: ' + e.message;
      input.focus();
    } finally {
      btn.disabled = false;
    }
  }

  async function onLogout() {
    try {
      await api('POST', '/api/v1/auth/logout', {});
    } catch (e) {
      // the session ends on this side either way
    }
    fleetRows.clear();
    $('fleet-body').replaceChildren();
    $('jobs-body').replaceChildren();
    $('audit-body').replaceChildren();
    showLogin('Signed out.');
  }

  // ---- refresh ----

  function startRefresh() {
    stopRefresh();
    refresh();
    timer = setInterval(refresh, REFRESH_MS);
  }

  function stopRefresh() {
    if (timer) clearInterval(timer);
    timer = null;
  }

  async function refresh() {
    if (!session) return;
    if (inFlight) {
      // one already runs: run once more after it, so that what it
      // fetched before a decision does not stand
      again = true;
      return inFlight;
    }
    inFlight = refreshOnce();
    try {
      await inFlight;
    } finally {
      inFlight = null;
    }
    if (again) {
      again = false;
      await refresh();
    }
  }

  async function refreshOnce() {
    const tasks = [
      api('GET', '/api/v1/facility/fleet').then(renderFleet),
      api('GET', '/api/v1/jobs?limit=' + JOBS_LIMIT).then(renderJobs),
    ];
    if (isAdmin()) tasks.push(api('GET', '/api/v1/audit?limit=' + AUDIT_LIMIT).then(renderAudit));
    const res = await Promise.allSettled(tasks);
    if (!session) return;
    const failed = res.filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (failed.some((e) => e && e.status === 401)) {
      showLogin('Your session has ended; sign in again.');
      return;
    }
    if (failed.length) {
      showError('Refresh failed: ' + failed.map((e) => (e && e.message) || String(e)).join('; '));
    } else {
      showError('');
    }
    const now = new Date();
    $('updated').textContent = 'Updated ' + now.toISOString().slice(11, 19) + ' UTC';
  }

  // ---- the Fleet panel ----

  const FLEET_COLS = [
    ['state', 'State'], ['scheduler', 'Scheduler'], ['host', 'Host'],
    ['gpus', 'GPUs idle / total'], ['util', 'Utilization'], ['gpuh', 'GPU-hours used'],
    ['age', 'Snapshot age'], ['approved', 'Approved by'],
  ];
  const NUM_COLS = new Set(['gpus', 'util', 'gpuh']);

  function newFleetRow(name) {
    const tr = el('tr', { 'data-cluster': name });
    const cells = {};
    const th = el('th', { scope: 'row', 'data-label': 'Cluster' });
    cells.name = el('div', { class: 'v', text: name });
    th.append(cells.name);
    tr.append(th);
    for (const [k, label] of FLEET_COLS) {
      const td = el('td', { 'data-label': label, 'data-col': k, class: NUM_COLS.has(k) ? 'num' : null });
      cells[k] = el('div', { class: 'v' });
      td.append(cells[k]);
      tr.append(td);
    }
    const ta = el('td', { 'data-label': 'Actions', 'data-col': 'actions' });
    cells.actions = el('div', { class: 'v actions' });
    ta.append(cells.actions);
    tr.append(ta);
    return { name, tr, cells, actionsTd: ta, actionsKey: null, sig: {} };
  }

  // replace the children of a cell only when what it shows changed, so a
  // refresh does not disturb a reader, a selection or the focus
  function setCell(row, key, sig, build) {
    if (row.sig[key] === sig) return;
    row.sig[key] = sig;
    const c = row.cells[key];
    c.replaceChildren();
    const out = build();
    for (const n of [].concat(out)) {
      if (n !== null && n !== undefined) c.append(n instanceof Node ? n : document.createTextNode(String(n)));
    }
  }

  function renderFleet(data) {
    const list = listOf(data, 'clusters');
    const body = $('fleet-body');
    const seen = new Set();
    list.forEach((c, i) => {
      const name = str(field(c, 'name'));
      if (!name || seen.has(name)) return;
      seen.add(name);
      let row = fleetRows.get(name);
      if (!row) {
        row = newFleetRow(name);
        fleetRows.set(name, row);
      }
      if (body.children[i] !== row.tr) body.insertBefore(row.tr, body.children[i] || null);
      fillFleetRow(row, c);
    });
    for (const [name, row] of fleetRows) {
      if (!seen.has(name)) {
        row.tr.remove();
        fleetRows.delete(name);
      }
    }
    $('fleet-empty').hidden = seen.size > 0;
    $('fleet-table').hidden = seen.size === 0;
    $('fleet-count').textContent = seen.size === 1 ? '1 cluster' : seen.size + ' clusters';
  }

  function fillFleetRow(row, c) {
    row.last = c;
    const state = str(field(c, 'state')).toUpperCase() || 'UNKNOWN';
    const reason = str(field(c, 'reason'));
    row.tr.setAttribute('data-state', state);
    setCell(row, 'state', state + '\u0000' + reason, () => [
      el('span', { class: 'state state-' + state.replace(/[^A-Z_]/g, ''), text: state }),
      reason ? el('span', { class: 'reason', 'data-reason': '', text: 'Reason: ' + reason }) : null,
    ]);
    const sched = str(field(c, 'scheduler'));
    const transport = str(field(c, 'transport'));
    setCell(row, 'scheduler', sched + '\u0000' + transport, () => [
      sched || '—', transport ? el('span', { class: 'when', text: 'via ' + transport }) : null,
    ]);
    // the pinned host key an admin approves, as `exa hpc approve` shows it
    const host = str(field(c, 'host'));
    const fp = str(field(c, 'host_key_fingerprint'));
    setCell(row, 'host', host + '\u0000' + fp, () => [
      host || 'local',
      fp ? el('span', { class: 'when fp', title: 'host key ' + fp, text: 'key ' + (fp.length > 16 ? fp.slice(0, 14) + '…' : fp) }) : null,
    ]);

    const idle = field(c, 'gpus_idle', 'idleGpus');
    const total = field(c, 'gpus_total', 'totalGpus');
    const gtxt = (isNum(idle) ? String(idle) : '—') + ' / ' + (isNum(total) ? String(total) : '—');
    setCell(row, 'gpus', gtxt, () => gtxt);
    const util = field(c, 'utilization_pct', 'utilizationPct');
    const utxt = isNum(util) ? fmtNum(util, util % 1 ? 1 : 0) + ' %' : '—';
    setCell(row, 'util', utxt, () => utxt);
    const gpuh = field(c, 'gpu_hours_used', 'gpuHoursUsed');
    const htxt = fmtHours(gpuh);
    setCell(row, 'gpuh', htxt, () => htxt);
    const age = fmtAge(field(c, 'snapshot_age_s'));
    setCell(row, 'age', str(age), () => (age ? age : el('span', { class: 'muted', text: 'no snapshot' })));

    const by = str(field(c, 'approved_by', 'approvedBy'));
    const at = str(field(c, 'approved_at'));
    setCell(row, 'approved', by + '\u0000' + at + '\u0000' + state, () => {
      if (!by) return el('span', { class: 'muted', text: '—' });
      const when = timeEl(at);
      return [by, when ? el('span', { class: 'when' }, when) : null];
    });

    row.actionsTd.hidden = !isAdmin();
    const key = (isAdmin() ? 'admin' : 'ro') + ':' + state;
    if (row.actionsKey !== key) {
      const hadFocus = row.cells.actions.contains(document.activeElement);
      row.actionsKey = key;
      row.cells.actions.replaceChildren(...(isAdmin() ? actionControls(row, state) : []));
      if (hadFocus) {
        const next = row.cells.actions.querySelector('button, input');
        if (next) next.focus();
        else row.cells.name.parentElement.focus();
      }
    }
  }

  // Approve for a PENDING cluster; Reject (with its reason field) for a
  // PENDING or ACTIVE one, as the state machine allows (libfleet
  // gov_transition); a REJECTED cluster returns only through connect.
  function actionControls(row, state) {
    const name = row.name;
    const out = [];
    row.cells.name.parentElement.setAttribute('tabindex', '-1');
    if (state === 'PENDING') {
      const b = el('button', { type: 'button', class: 'approve', 'aria-label': 'Approve ' + name, text: 'Approve' });
      b.addEventListener('click', () => decide(row, 'approve', b, null));
      out.push(b);
    }
    if (state === 'PENDING' || state === 'ACTIVE') {
      const id = 'reason-' + name.replace(/[^A-Za-z0-9_-]/g, '_');
      const form = el('form', { class: 'reject', novalidate: true });
      const label = el('label', { for: id, class: 'sr-only', text: 'Reason for rejecting ' + name });
      const input = el('input', {
        id, type: 'text', name: 'reason', placeholder: 'reason', maxlength: '500', autocomplete: 'off',
      });
      const b = el('button', { type: 'submit', class: 'danger reject-btn', 'aria-label': 'Reject ' + name, text: 'Reject' });
      form.append(label, input, b);
      form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        const reason = input.value.trim();
        if (!reason) {
          showError('Give a reason for rejecting ' + name + '.');
          input.focus();
          return;
        }
        decide(row, 'reject', b, reason);
      });
      out.push(form);
    }
    if (!out.length) out.push(el('span', { class: 'muted', text: 'none' }));
    return out;
  }

  // While a decision is sent the row's controls are marked busy
  // (aria-disabled) rather than disabled, so that the focus stays where
  // the keyboard user left it.
  function setBusy(row, busy) {
    row.busy = busy;
    row.cells.actions.querySelectorAll('button, input').forEach((c) => {
      if (busy) c.setAttribute('aria-disabled', 'true');
      else c.removeAttribute('aria-disabled');
      if (c.tagName === 'INPUT') c.readOnly = busy;
    });
    if (busy) row.tr.setAttribute('aria-busy', 'true');
    else row.tr.removeAttribute('aria-busy');
  }

  async function decide(row, what, btn, reason) {
    const name = row.name;
    if (row.busy) return;
    setBusy(row, true);
    showError('');
    say((what === 'approve' ? 'Approving ' : 'Rejecting ') + name + '…');
    try {
      const body = reason !== null ? { reason } : {};
      const res = await api('POST', '/api/v1/facility/fleet/' + encodeURIComponent(name) + '/' + what, body);
      const st = str(field(res, 'state')) || (what === 'approve' ? 'ACTIVE' : 'REJECTED');
      say(name + ' is now ' + st + '.');
      // show the new state at once, then the full row from the server
      fillFleetRow(row, Object.assign({}, lastKnown(row), res || {}, { name, state: st }));
      await refresh();
    } catch (e) {
      if (e.status === 401) {
        showLogin('Your session has ended; sign in again.');
        return;
      }
      showError('Could not ' + what + ' ' + name + ': ' + e.message);
      say('');
      if (btn.isConnected) btn.focus();
    } finally {
      setBusy(row, false);
    }
  }

  // what the row shows now, as a fleet entry (kept until the refresh)
  function lastKnown(row) {
    return row.last || {};
  }

  // ---- the Jobs panel ----

  function renderJobs(data) {
    const list = listOf(data, 'jobs', 'items');
    const body = $('jobs-body');
    const rows = list.map((j) => {
      const id = str(field(j, 'job_id', 'id'));
      const name = str(field(j, 'job_name'));
      const state = str(field(j, 'state')).toUpperCase();
      const wait = fmtAge(field(j, 'queue_seconds', 'waitSec', 'queueSeconds'));
      return el('tr', { 'data-job': id },
        el('th', { scope: 'row', 'data-label': 'Job' },
          el('div', { class: 'v' }, id || '—', name ? el('span', { class: 'when', text: name }) : null)),
        el('td', { 'data-label': 'State' },
          el('div', { class: 'v' }, el('span', { class: 'state state-' + state.replace(/[^A-Z_]/g, ''), text: state || '—' }))),
        el('td', { 'data-label': 'Cluster' }, el('div', { class: 'v', text: str(field(j, 'cluster')) || '—' })),
        el('td', { 'data-label': 'Model' }, el('div', { class: 'v', text: str(field(j, 'model')) || '—' })),
        el('td', { 'data-label': 'GPU-hours', class: 'num' },
          el('div', { class: 'v', text: fmtHours(field(j, 'gpu_hours', 'gpuHours')) })),
        el('td', { 'data-label': 'Queue wait', class: 'num' }, el('div', { class: 'v', text: wait || '—' })),
        el('td', { 'data-label': 'Submitted' },
          el('div', { class: 'v' }, timeEl(field(j, 'submit_time', 'submitTime')) || '—')));
    });
    body.replaceChildren(...rows);
    $('jobs-empty').hidden = rows.length > 0;
    $('jobs-table').hidden = rows.length === 0;
    $('jobs-count').textContent = rows.length ? 'latest ' + rows.length : '';
  }

  // ---- the audit trail (admins) ----

  function detailsText(d) {
    if (d === null || d === undefined) return '';
    if (typeof d === 'string') return d;
    try {
      return JSON.stringify(d);
    } catch (e) {
      return '';
    }
  }

  function renderAudit(data) {
    // the API lists events in id order; the newest is shown first
    const list = listOf(data, 'events', 'audit', 'items').slice()
      .sort((a, b) => (Number(field(b, 'id')) || 0) - (Number(field(a, 'id')) || 0));
    const rows = list.map((ev) => el('tr', { 'data-audit': str(field(ev, 'id')) },
      el('td', { 'data-label': 'Time' }, el('div', { class: 'v' }, timeEl(field(ev, 'ts', 'time')) || '—')),
      el('td', { 'data-label': 'Actor' }, el('div', { class: 'v', text: str(field(ev, 'actor')) || '—' })),
      el('td', { 'data-label': 'Action' }, el('div', { class: 'v', text: str(field(ev, 'action')) })),
      el('td', { 'data-label': 'Target' }, el('div', { class: 'v', text: str(field(ev, 'target')) })),
      el('td', { 'data-label': 'Details' }, el('div', { class: 'v details', text: detailsText(field(ev, 'details')) }))));
    $('audit-body').replaceChildren(...rows);
    $('audit-empty').hidden = rows.length > 0;
    $('audit-table').hidden = rows.length === 0;
    $('audit-count').textContent = rows.length ? 'latest ' + rows.length : '';
  }

  // ---- start ----

  // Whether this browser signed in before and may still hold a session
  // cookie (which script cannot see: it is HttpOnly). Only this flag is
  // kept, never the token or the CSRF value; without it the page shows
  // the form at once instead of asking whoami, so that a visitor who never
  // signed in leaves no refused request in the audit log.
  const HINT = 'exa-console-signed-in';
  function hint(on) {
    try {
      if (on) localStorage.setItem(HINT, '1');
      else localStorage.removeItem(HINT);
    } catch (e) {
      // storage may be off; the page then always asks whoami
    }
  }
  function hinted() {
    try {
      return localStorage.getItem(HINT) === '1';
    } catch (e) {
      return true;
    }
  }

  async function start() {
    $('login-form').addEventListener('submit', onLogin);
    $('logout').addEventListener('click', onLogout);
    if (!hinted()) {
      showLogin('');
      return;
    }
    try {
      showApp(await api('GET', '/api/v1/auth/whoami'));
    } catch (e) {
      if (e.status === 401 || e.status === 403) hint(false);
      showLogin(e.status === 401 || e.status === 403 ? '' : 'The server did not answer: ' + e.message);
    }
  }

  document.addEventListener('DOMContentLoaded', start);
})();
