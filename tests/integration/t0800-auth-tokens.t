#!/bin/bash
# t0800-auth-tokens.t - `exa auth token create|list|revoke`: create prints
# a 256-bit token once (exa_ + 43 base64url characters) and platform.db
# holds only its SHA-256; list never shows a token; revoke marks it and
# refuses a second revoke or an unknown id; bad users, roles and expiries
# are usage errors (exit 2) that write nothing; every change is an audit
# event naming the OS user, and no audit row holds the token.
. "$(dirname "$0")/lib.sh"
exa_test_env

run_exa auth token create --user alice --role admin --expires 2h
is "$RC" 0 "token create exits 0"
tok=$OUT
like "$tok" '^exa_[A-Za-z0-9_-]{43}$' "the token is exa_ and 43 base64url characters"
like "$ERR" "shown once" "a note on stderr says it is shown once"
hash=$(printf '%s' "$tok" | sha256sum | cut -d' ' -f1)
is "$(sqlite3 "$EXAMLOPS_DB" 'SELECT token_sha256 FROM tokens WHERE id = 1')" "$hash" \
    "platform.db keeps the SHA-256 of the token"
is "$(sqlite3 "$EXAMLOPS_DB" 'SELECT count(*) FROM tokens')" 1 "one row"
ok "the token text is nowhere in platform.db" bash -c "! grep -aqF -- '${tok#exa_}' '$EXAMLOPS_DB'"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT user || ' ' || role || ' ' || (expires_at > created_at) FROM tokens")" \
    "alice admin 1" "user, role and an expiry after creation"

run_exa --json auth token create --user bob --role viewer
is "$RC" 0 "token create --json"
json_ok "--json prints id, user, role and the token" \
    '.id == 2 and .user == "bob" and .role == "viewer" and (.token | test("^exa_"))'

run_exa --json auth token list
is "$RC" 0 "token list --json"
json_ok "list has both tokens and no token text" \
    'length == 2 and (map(has("token") or has("token_sha256")) | any | not)'
ok "list output holds no token" bash -c "! grep -qF -- '${tok#exa_}' <<<'$OUT'"
run_exa auth token list
like "$OUT" "alice +admin" "table lists alice as admin"

run_exa auth token revoke 1
is "$RC" 0 "revoke exits 0"
run_exa auth token revoke 1
is "$RC" 1 "a second revoke exits 1"
like "$ERR" "already revoked" "and says so"
run_exa auth token revoke 99
is "$RC" 1 "an unknown id exits 1"
like "$ERR" "unknown token id 99" "and names it"
run_exa auth token revoke x1
is "$RC" 2 "a non-numeric id is a usage error"

before=$(sqlite3 "$EXAMLOPS_DB" 'SELECT count(*) FROM tokens')
run_exa auth token create --user alice --role root
is "$RC" 2 "an unknown role is a usage error"
like "$ERR" "unknown role 'root'" "naming the role"
run_exa auth token create --user 'a b' --role viewer
is "$RC" 2 "a user name with a space is a usage error"
run_exa auth token create --user alice --role viewer --expires soon
is "$RC" 2 "a bad --expires is a usage error"
run_exa auth token create --role viewer
is "$RC" 2 "--user is required"
is "$(sqlite3 "$EXAMLOPS_DB" 'SELECT count(*) FROM tokens')" "$before" "nothing was written"

run_exa --json hpc audit
json_ok "audit: two token_created and one token_revoked by the OS user" \
    --arg u "$(id -un)" \
    '[.[] | select(.action | startswith("token_"))] | map(.action + ":" + .target + ":" + (.actor == $u | tostring)) == ["token_created:token:1:true","token_created:token:2:true","token_revoked:token:1:true"]'
ok "no audit row holds a token" bash -c "! grep -qF -- '${tok#exa_}' <<<'$OUT'"
run_exa hpc audit --verify
is "$RC" 0 "the audit chain verifies"
done_testing
