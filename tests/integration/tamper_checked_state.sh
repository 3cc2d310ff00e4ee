#!/bin/sh
# SPDX-License-Identifier: MIT
# tamper_checked_state.sh - case.json edited while the daemon is down
# (ledgerfs(8), RESTART): at load its policy and mocks are hashed and
# compared with the hashes the `registered` row bound them to; a mismatch
# loads the case failed with the reason, and the edited policy is never
# used.  Before registration the documents are the host's to change.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

# edit_doc CASE KEY TEXT|null: rewrite one document of case.json offline.
edit_doc() {
	python3 - "$backing/cases/$1/case.json" "$2" "$3" <<'PY'
import json, sys
path, key, text = sys.argv[1:]
with open(path) as f:
    meta = json.load(f)
if text == "null":
    meta.pop(key, None)
else:
    meta[key] = text
with open(path, "w") as f:
    json.dump(meta, f, sort_keys=True, separators=(",", ":"))
PY
}

PERMISSIVE='default: {mode: pass}
'
lf_open_reg POL
lf_call POL p1 delete_all >/dev/null
lf_open_reg MOCKS
lf_open_reg ADDED "$LF_POLICY_DEFAULT" ''
lf_open_reg DROPPED
lf_open_reg SAME
lf_open EARLY
lf_open_reg EMPTIED
lf_call EMPTIED e1 lookup_a >/dev/null
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
: >"$(lf_ledger EMPTIED)"

edit_doc POL policy "$PERMISSIVE"
edit_doc MOCKS mocks 'version: 1
mocks:
  - tool: resume_line
    responses:
      - {response: {step: 99}}
'
edit_doc ADDED mocks 'version: 1
mocks: []
'
edit_doc DROPPED mocks null
edit_doc EARLY policy "$PERMISSIVE"
lf_start

rule_begin policy_edited_after_registration_fails_the_case
rule_eq state failed "$(lf_state POL)"
rule_has reason "$(lf_status POL)" "policy does not match the policy_sha256 of the registered row"
rule_has "ledgerctl status" "$("$LEDGERCTL" --mount "$mnt" status POL 2>&1)" failed
rule_has "edited policy unused" "$(lf_write POL request '{"call_id":"p2","tool":"delete_all","args":{}}\n')" "write=EPIPE"
rule_end
rule_begin a_case_failed_at_load_is_said_on_standard_error
rule_has daemon.err "$(cat "$work/daemon.err")" "case POL not served: at load: case.json's policy does not match"
rule_hasnt "an untouched case" "$(cat "$work/daemon.err")" "case SAME not served"
rule_end
rule_begin a_ledger_emptied_while_the_daemon_was_down_loads_the_case_failed
rule_eq state failed "$(lf_state EMPTIED)"
rule_has reason "$(lf_status EMPTIED)" "the ledger has no rows"
rule_has "refused" "$(lf_write EMPTIED register "{\"case_id\":\"EMPTIED\",\"token\":\"$(lf_token EMPTIED)\"}\n")" "write=EPIPE"
rule_end
rule_begin mocks_edited_after_registration_fail_the_case
rule_eq state failed "$(lf_state MOCKS)"
rule_has reason "$(lf_status MOCKS)" "mocks does not match the mocks_sha256"
rule_end
rule_begin mocks_added_after_registration_fail_the_case
rule_eq state failed "$(lf_state ADDED)"
rule_has reason "$(lf_status ADDED)" "mocks does not match"
rule_end
rule_begin mocks_removed_after_registration_fail_the_case
rule_eq state failed "$(lf_state DROPPED)"
rule_has reason "$(lf_status DROPPED)" "mocks does not match"
rule_end
assert_eq untouched_case_stays_registered registered "$(lf_state SAME)"
assert_eq policy_changed_before_registration_is_the_hosts_to_change ready "$(lf_state EARLY)"
lf_finish
