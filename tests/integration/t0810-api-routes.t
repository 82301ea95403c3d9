#!/bin/bash
# t0810-api-routes.t - the REST API of `exa serve` route by route and role
# by role, on clusters defined in clusters.yaml with an ssh user and key
# path: every /api route refuses no token (401, audited as anonymous);
# a viewer may read but not approve (403, audited under the viewer's
# name), an operator may place, only an admin approves, rejects and reads
# the audit log; admin approve answers 200 and the cluster is ACTIVE in
# platform.db with the admin's user as approved_by and as the audit actor;
# REJECTED -> ACTIVE is refused (409) and stays REJECTED; an unknown
# cluster or job is 404; expired and revoked tokens are 401 under their
# user; bad query values and bodies are 400; unknown routes 404, wrong
# methods 405, big bodies 413, all as {"error": {"code", "message"}}; the
# reference's /facility routes answer their shapes; openapi.json lists
# every route. No answer holds a key path or an ssh user (every body is
# grepped), and no token appears in any answer, serve's output, the
# audit log, /metrics or platform.db.
. "$(dirname "$0")/lib.sh"
exa_test_env
. "$(dirname "$0")/lib-api.sh"
command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq needed"

KEY=$T/keys/id_secret_alpha
USR=sekret-user-alpha
mkdir -p "$T/keys" "$(dirname "$EXAMLOPS_HPC_REGISTRY")"
cat >"$EXAMLOPS_HPC_REGISTRY" <<YAML
clusters:
  alpha: {scheduler: slurm, transport: ssh, host: 127.0.0.1, ssh_port: 1, ssh_user: $USR, ssh_key: $KEY}
  beta: {scheduler: slurm, transport: ssh, host: 127.0.0.1, ssh_port: 1, ssh_user: $USR, ssh_key: $KEY}
  gamma: {scheduler: slurm, transport: ssh, host: 127.0.0.1, ssh_port: 1, ssh_user: $USR-g, ssh_key: $KEY-g}
YAML
"$EXA" -q hpc clusters >/dev/null # reconcile: three PENDING rows
now=$(date -u +%FT%TZ)
sqlite3 "$EXAMLOPS_DB" "INSERT INTO nodes(cluster,node,scheduler,gpus,gpus_used,state,cpus,captured_at) VALUES
  ('alpha','a1','slurm',4,1,'mixed',32,'$now'),('alpha','a2','slurm',4,0,'idle',32,'$now');
  INSERT INTO jobs(cluster,scheduler,job_id,model,dataset,state,submit_time,nodes,gpus,cpus,remote_dir,created_at,updated_at)
  VALUES ('alpha','slurm','101','JPCP','PM100','RUNNING','$now',1,2,8,'/home/$USR/exa-runs/x','$now','$now'),
         ('alpha','slurm','102','JPCP','PM100','PENDING','$now',1,1,4,'/home/$USR/exa-runs/y','$now','$now');"

ADMIN=$(mk_token alice admin)
OPER=$(mk_token olga operator)
VIEW=$(mk_token victor viewer)
REV=$(mk_token rita viewer)
EXP=$(mk_token ed viewer 1h)
"$EXA" -q auth token revoke 4 >/dev/null
sqlite3 "$EXAMLOPS_DB" "UPDATE tokens SET expires_at = '2001-01-01T00:00:00Z' WHERE user = 'ed'"
like "$ADMIN$OPER$VIEW" '^(exa_[A-Za-z0-9_-]{43}){3}$' "three tokens made"

# every route is tried without a token: more failures than the slow-down
# lets through by default (t0811 tests it)
EXAMLOPS_SERVE_AUTH_FAIL_LIMIT=1000 api_serve
like "$API_URL" ':[0-9]+$' "exa serve listens on a free loopback port"

# route, the role it needs, a method
routes="GET /api/v1/clusters viewer
GET /api/v1/clusters/alpha viewer
GET /api/v1/clusters/alpha/nodes viewer
GET /api/v1/clusters/alpha/queue viewer
POST /api/v1/clusters/alpha/preflight operator
GET /api/v1/jobs viewer
GET /api/v1/jobs/101 viewer
GET /api/v1/place?gpus=1 operator
GET /api/v1/capacity viewer
GET /api/v1/models viewer
GET /api/v1/models/JPCP viewer
GET /api/v1/costs viewer
GET /api/v1/carbon viewer
GET /api/v1/audit admin
GET /api/v1/facility/overview viewer
GET /api/v1/facility/queue viewer
GET /api/v1/facility/fleet viewer
GET /api/v1/facility/job/101 viewer
POST /api/v1/facility/fleet/gamma/approve admin
POST /api/v1/facility/fleet/gamma/reject admin
GET /api/v1/auth/whoami viewer
GET /api/v1/openapi.json viewer
POST /api/v1/auth/logout viewer"

rank() { case $1 in viewer) echo 0 ;; operator) echo 1 ;; admin) echo 2 ;; esac; }
while read -r m p need; do
    api "$m" "$p" ""
    is "$CODE/$(jq -r .error.code <<<"$BODY")" "401/unauthorized" "$m $p without a token: 401"
    like "$HDRS" 'WWW-Authenticate: Bearer' "$m $p: 401 names the Bearer scheme"
    for who in viewer operator admin; do
        case $who in viewer) tok=$VIEW ;; operator) tok=$OPER ;; admin) tok=$ADMIN ;; esac
        # leave the state-changing admin routes to their own tests below
        if [ "$who" = admin ] && [[ $p == */gamma/* ]]; then continue; fi
        api "$m" "$p" "$tok"
        if [ "$(rank $who)" -lt "$(rank $need)" ]; then
            is "$CODE/$(jq -r .error.code <<<"$BODY")" "403/forbidden" "$m $p as $who: 403"
        else
            ok "$m $p as $who: neither 401 nor 403 (got $CODE)" test "$CODE" != 401 -a "$CODE" != 403
        fi
    done
done <<<"$routes"

# the denials are audited under the caller's name
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action='api_denied' AND actor='anonymous' AND json_extract(details,'\$.status')=401")" \
    "$(wc -l <<<"$routes")" "every 401 without a token is audited as anonymous"
ok "a viewer's 403 on approve is audited under 'victor'" test "$(sqlite3 "$EXAMLOPS_DB" \
    "SELECT count(*) FROM audit_events WHERE action='api_denied' AND actor='victor' AND target='/api/v1/facility/fleet/gamma/approve' AND json_extract(details,'\$.status')=403")" -ge 1
ok "an operator's 403 on the audit log is audited under 'olga'" test "$(sqlite3 "$EXAMLOPS_DB" \
    "SELECT count(*) FROM audit_events WHERE action='api_denied' AND actor='olga' AND target='/api/v1/audit'")" -ge 1
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE actor IN ('viewer','operator','admin')")" 0 \
    "no audit row names a role as its actor"

# expired and revoked tokens: 401 under their user
api GET /api/v1/clusters "$REV"
is "$CODE" 401 "a revoked token: 401"
like "$BODY" "revoked" "says revoked"
api GET /api/v1/clusters "$EXP"
is "$CODE" 401 "an expired token: 401"
like "$BODY" "expired" "says expired"
api GET /api/v1/clusters "exa_${ADMIN:4:10}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
is "$CODE" 401 "a made-up token: 401"
api GET /api/v1/clusters "" "" -H "Authorization: Basic dXNlcjpwYXNz"
is "$CODE" 401 "a Basic Authorization header is no token: 401"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT group_concat(actor) FROM (SELECT actor FROM audit_events WHERE action='api_denied' AND json_extract(details,'\$.reason') LIKE '%revoked%' OR json_extract(details,'\$.reason') LIKE '%expired%' ORDER BY id)")" \
    "rita,ed" "revoked and expired refusals are audited as rita and ed"
api GET /api/v1/clusters "$VIEW"
is "$CODE" 200 "a good token after failures still works (no slow-down yet)"

# approve / reject: the CLI's state machine, the token's user as actor
api POST /api/v1/facility/fleet/alpha/approve "$ADMIN" '{"reason": "capacity for the spring runs"}'
is "$CODE" 200 "admin approves alpha: 200"
is "$(jq -r .reason <<<"$BODY")/$(sqlite3 "$EXAMLOPS_DB" "SELECT json_extract(details,'\$.reason') FROM audit_events WHERE action='cluster_approved' AND target='alpha'")" \
    "capacity for the spring runs/capacity for the spring runs" "the approve's reason is answered and in its audit event (redteam-s3 15)"
jq_ok "the answer is {name, state: ACTIVE}" '.name == "alpha" and .state == "ACTIVE"'
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT state || ' ' || approved_by FROM clusters WHERE name='alpha'")" "ACTIVE alice" \
    "alpha is ACTIVE in platform.db, approved by alice"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT actor || ' ' || source FROM audit_events WHERE action='cluster_approved' AND target='alpha'")" \
    "alice exa-hpc" "the cluster_approved event names alice (through governance, as the CLI)"
api POST /api/v1/facility/fleet/alpha/approve "$ADMIN"
is "$CODE" 409 "approving an ACTIVE cluster again: 409"
api POST /api/v1/facility/fleet/beta/reject "$ADMIN" '{"reason": "not our site"}'
is "$CODE" 200 "admin rejects beta with a reason: 200"
jq_ok "reject answers {name, state: REJECTED, reason}" '.name == "beta" and .state == "REJECTED" and .reason == "not our site"'
api POST /api/v1/facility/fleet/beta/approve "$ADMIN"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "409/conflict" "REJECTED -> ACTIVE is refused: 409"
like "$(jq -r .error.message <<<"$BODY")" "REJECTED" "and the message says why"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT state || ' ' || reason FROM clusters WHERE name='beta'")" "REJECTED not our site" \
    "beta stays REJECTED with its reason"
api POST /api/v1/facility/fleet/nosuch/approve "$ADMIN"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "404/not_found" "approving an unknown cluster: 404"
api POST /api/v1/facility/fleet/nosuch/reject "$ADMIN" '{"reason": "x"}'
is "$CODE" 404 "rejecting an unknown cluster: 404"
api POST /api/v1/facility/fleet/gamma/reject "$ADMIN" '{"reason": 42}'
is "$CODE" 400 "a reason that is not a string: 400"
api POST /api/v1/facility/fleet/gamma/reject "$ADMIN" '{"reason": "x"'
is "$CODE" 400 "a body that is not JSON: 400"
api POST /api/v1/facility/fleet/gamma/reject "$ADMIN" '[1]'
is "$CODE" 400 "a body that is not an object: 400"
api POST /api/v1/facility/fleet/gamma/reject "$ADMIN" '{"reason": "a", "reason": "b"}'
is "$CODE" 400 "duplicate keys: 400"
api POST /api/v1/facility/fleet/bad%2Fname/approve "$ADMIN"
is "$CODE" 400 "an escaped slash in a cluster name: 400"
api POST /api/v1/facility/fleet/gamma/approve "$ADMIN" '{"host_key_fingerprint": "SHA256:not-the-one-shown"}'
is "$CODE/$(jq -r .error.code <<<"$BODY")" "409/conflict" "approve bound to a host key the cluster does not have: 409"
like "$(jq -r .error.message <<<"$BODY")" "changed its connection identity since it was shown" "says the identity changed"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT state FROM clusters WHERE name='gamma'")" PENDING "gamma untouched by bad requests"
"$EXA" hpc audit --verify >/dev/null
is "$?" 0 "the audit chain verifies after the API's decisions"

# reads and their shapes
api GET /api/v1/clusters "$VIEW"
jq_ok "clusters: three, with states, no ssh_user or ssh_key members" \
    'length == 3 and (map(.name) == ["alpha","beta","gamma"]) and (map(has("ssh_user") or has("ssh_key")) | any | not) and .[0].state == "ACTIVE"'
api GET /api/v1/clusters/alpha "$VIEW"
jq_ok "one cluster: its nodes, GPUs and snapshot age" \
    '.name == "alpha" and (.nodes | length) == 2 and .gpus_total == 8 and .gpus_idle == 7 and (.snapshot_age_s | type) == "number"'
api GET /api/v1/clusters/nosuch "$VIEW"
is "$CODE" 404 "an unknown cluster: 404"
api GET /api/v1/clusters/nosuch/nodes "$VIEW"
is "$CODE" 404 "nodes of an unknown cluster: 404"
api GET /api/v1/clusters/beta/queue "$VIEW"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "409/not_approved" "the queue of a REJECTED cluster: 409"
api GET /api/v1/clusters/nosuch/queue "$VIEW"
is "$CODE" 404 "the queue of an unknown cluster: 404"
api POST /api/v1/clusters/gamma/preflight "$OPER" '{"gpus": 1}'
is "$CODE" 409 "preflight of a PENDING cluster: 409"
api POST /api/v1/clusters/alpha/preflight "$OPER" '{"gpus": -1}'
is "$CODE" 400 "preflight with gpus -1: 400"
api GET /api/v1/jobs "$VIEW"
jq_ok "jobs: two, newest first, no remote_dir" 'length == 2 and .[0].job_id == "102" and (map(has("remote_dir")) | any | not)'
api GET "/api/v1/jobs?cluster=alpha&state=RUNNING" "$VIEW"
jq_ok "jobs filtered by cluster and state" 'length == 1 and .[0].job_id == "101"'
api GET "/api/v1/jobs?limit=1&offset=1" "$VIEW"
jq_ok "jobs paged with limit and offset" 'length == 1 and .[0].job_id == "101"'
api GET "/api/v1/jobs?since=2h" "$VIEW"
jq_ok "jobs since 2h ago" 'length == 2'
api GET "/api/v1/jobs?since=2999-01-01" "$VIEW"
jq_ok "jobs since a future day: none" 'length == 0'
api GET "/api/v1/jobs?limit=0" "$VIEW"
is "$CODE" 400 "limit=0: 400"
api GET "/api/v1/jobs?since=yesterday" "$VIEW"
is "$CODE" 400 "since=yesterday: 400"
api GET "/api/v1/jobs?state=%zz" "$VIEW"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "400/bad_request" "a bad percent escape in the query: 400"
api GET /api/v1/jobs/101 "$VIEW"
jq_ok "one job" '.job_id == "101" and .cluster == "alpha" and .gpus == 2'
api GET /api/v1/jobs/999 "$VIEW"
is "$CODE" 404 "an unknown job: 404"
api GET "/api/v1/place?gpus=2&nodes=1" "$OPER"
jq_ok "place chooses alpha with an explanation" '.cluster == "alpha" and .status == "chosen" and (.explain | type) == "object"'
api GET "/api/v1/place?gpus=999" "$OPER"
jq_ok "place with too many GPUs: nothing fits" '.cluster == null and .status == "no_fit"'
api GET "/api/v1/place?provider=nonsense" "$OPER"
is "$CODE" 400 "an unknown placement provider: 400"
api GET "/api/v1/place?gpus=1&partition=nope" "$OPER"
jq_ok "place in a partition no node is in: nothing fits, and why" '.cluster == null and .status == "no_fit" and .explain.ask.partition == "nope" and (.candidates[0].why | startswith("does not fit: no node in partition"))'
api GET "/api/v1/place?partition=a%20b" "$OPER"
is "$CODE" 400 "a partition that is no name: 400"
api GET /api/v1/capacity "$VIEW"
jq_ok "capacity lists alpha (the one ACTIVE cluster)" 'length == 1 and .[0].name == "alpha" and .[0].total_gpus == 8'
api GET /api/v1/models "$VIEW"
jq_ok "models: none yet" 'length == 0'
api GET /api/v1/models/JPCP "$VIEW"
is "$CODE" 404 "an unregistered model: 404"
api GET /api/v1/costs "$VIEW"
jq_ok "costs: a list" 'type == "array"'
api GET /api/v1/carbon "$VIEW"
jq_ok "carbon: totals" '.n == 0 and .scope == "operational"'
api GET "/api/v1/audit?limit=5" "$ADMIN"
jq_ok "audit: the newest 5 events" 'length == 5 and (.[-1].id > .[0].id)'

# the reference's facility shapes (doc/reference.md §4.15)
api GET /api/v1/facility/overview "$VIEW"
jq_ok "overview shape" '.facility | (.jobsRunning == 1 and .queueDepth == 1 and .gpusAllocated == 2 and .nodesAllocated == 1 and (.clusters | index("alpha")) != null and (.partitions | type) == "array")'
api GET /api/v1/facility/overview?cluster=nosuch "$VIEW"
is "$CODE" 404 "overview of an unknown cluster: 404"
api GET /api/v1/facility/queue "$VIEW"
jq_ok "queue shape" '.queue.count == 1 and .queue.jobs[0].id == "102" and .queue.jobs[0].cluster == "alpha" and (.queue.jobs[0] | has("waitSec") and has("submitTime"))'
api GET "/api/v1/facility/queue?cluster=nosuch" "$VIEW"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "404/not_found" "the facility queue of an unknown cluster: 404, as the overview (redteam-s3 15)"
api GET /api/v1/facility/fleet "$VIEW"
jq_ok "fleet shape: reference fields and exa's" \
    '.count == 3 and (.clusters[0] | .name == "alpha" and .state == "ACTIVE" and .totalGpus == 8 and .idleGpus == 7 and .gpus_total == 8 and .gpus_idle == 7 and .approvedBy == "alice" and .approved_by == "alice" and (.approved_at | type) == "string" and .utilizationPct == 12.5 and has("snapshot_age_s") and has("gpuHoursUsed") and has("updatedAt"))'
jq_ok "fleet: beta REJECTED with its reason" '.clusters[1].state == "REJECTED" and .clusters[1].reason == "not our site"'
api GET /api/v1/facility/job/101 "$VIEW"
jq_ok "job shape" '.job.id == "101" and .job.cluster == "alpha" and .job.resources.gpus == 2 and (.job.timing | has("queueSeconds") and has("runSeconds")) and has("job")'
api GET /api/v1/facility/job/555 "$VIEW"
is "$CODE" 404 "an unknown job on the facility route: 404"

# router errors
api GET /api/v1/nothing-here "$VIEW"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "404/not_found" "an unknown route: JSON 404"
api GET "/api/v1/clusters?$(seq -s '&' -f 'p%g=1' 1 40)" "$VIEW"
is "$CODE/$(jq -r .error.message <<<"$BODY")" "400/too many query parameters: at most 32" "40 query parameters: 400 saying so, not 'malformed'"
api DELETE /api/v1/clusters "$VIEW"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "405/method_not_allowed" "a wrong method: JSON 405"
like "$(grep -i '^Allow:' <<<"$HDRS" | tr -d '\r')" '^Allow: GET, HEAD$' "the 405 lists the path's methods (RFC 9110 15.5.6)"
like "$HDRS" 'X-Content-Type-Options: nosniff' "router errors say nosniff"
like "$HDRS" 'Cache-Control: no-store' "and no-store"
hl=$(curl -s -m 5 -I -H "Authorization: Bearer $VIEW" "$API_URL/api/v1/clusters" | tr -d '\r' | grep -i '^Content-Length:' | tr -dc 0-9)
gl=$(curl -s -m 5 -H "Authorization: Bearer $VIEW" "$API_URL/api/v1/clusters" | wc -c)
is "$hl" "$gl" "HEAD gives GET's Content-Length (RFC 9110 9.3.2)"
head -c 70000 /dev/zero | tr '\0' 'a' >"$T/big"
api POST /api/v1/facility/fleet/gamma/reject "$ADMIN" "" --data-binary @"$T/big"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "413/too_large" "a 70 kB body: 413"
api GET /api/v1/clusters "$VIEW" "" -H "X-Big: $(head -c 40000 /dev/zero | tr '\0' b)"
is "$CODE" 431 "a 40 kB header: refused by the header limit (431)"
api GET /api/v1/openapi.json "$VIEW"
jq_ok "openapi.json is OpenAPI 3.1 with 24 paths" '.openapi == "3.1.0" and (.paths | length) == 24'
while read -r m p need; do
    pp=$(sed -e 's/?.*//' -e 's|/clusters/alpha|/clusters/{name}|; s|/fleet/gamma|/fleet/{name}|; s|/jobs/101|/jobs/{id}|; s|/job/101|/job/{id}|; s|/models/JPCP|/models/{name}|' <<<"$p")
    mm=$(tr A-Z a-z <<<"$m")
    jq -e --arg p "$pp" --arg m "$mm" '.paths[$p][$m] != null' <<<"$BODY" >/dev/null
    ok "openapi.json documents $m $pp" test $? -eq 0
done <<<"$routes"
curl -s -m 5 "$API_URL/healthz" >/dev/null
ok "/healthz stays open" test "$(curl -s -o /dev/null -w '%{http_code}' "$API_URL/healthz")" = 200
curl -s -m 5 "$API_URL/metrics" >"$T/metrics"
ok "/metrics stays open by default" test -s "$T/metrics"
api_stop

# nothing leaks: key paths, ssh users, tokens
ok "no answer holds a key path" bash -c "! grep -F -e '$KEY' -e '/keys/id_secret' '$T/responses.all'"
ok "no answer holds an ssh user" bash -c "! grep -F -e '$USR' '$T/responses.all'"
ok "the answers were many" test "$(wc -l <"$T/responses.all")" -gt 150
for tok in "$ADMIN" "$OPER" "$VIEW" "$REV" "$EXP"; do
    s=${tok#exa_}
    ok "token ${tok:0:8}... is in no answer, serve output or metrics" \
        bash -c "! grep -qF -- '$s' '$T/responses.all' '$T/serve.out' '$T/serve.err' '$T/metrics'"
    ok "token ${tok:0:8}... is not in platform.db (audit details included)" \
        bash -c "! sqlite3 '$EXAMLOPS_DB' .dump | grep -qF -- '$s'"
done
done_testing
