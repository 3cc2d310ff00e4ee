#!/bin/sh
# SPDX-License-Identifier: MIT
# host_tools_example.sh - examples/host-tools/demo.sh as its README runs
# it: a sandboxed shell agent calls the host-executed CRM lookup, gets its
# real result with result_authoritative: true, and cannot find the API key
# anywhere it can read; the demo's own checks pass and its ledger verifies.
. "$(dirname "$0")/lib.sh"
command -v bwrap >/dev/null || lf_skip_all "bubblewrap missing"
command -v setpriv >/dev/null || lf_skip_all "setpriv missing"
lf_require
[ -x /usr/bin/python3 ] || lf_skip_all "/usr/bin/python3 missing (the tool's interpreter)"

key=crm-test-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
out=$(CRM_API_KEY=$key LEDGERFS_BUILD=$top_builddir timeout 120 \
	"$top_srcdir/examples/host-tools/demo.sh" 2>&1)
st=$?
printf '%s\n' "$out" | grep -E '^demo:|^== ' | sed 's/^/# /'

rule_begin host_tools_demo_runs_to_the_end
rule_eq status 0 "$st"
rule_has ok "$out" "demo: ok"
rule_end
rule_begin sandboxed_agent_gets_the_real_crm_result_authoritatively
rule_has reply "$out" '"returned":{"customer":"acme","found":true,"open_tickets":2,"owner":"dana","tier":"gold"}'
rule_has authoritative "$out" '"result_authoritative":true'
rule_has source "$out" '"result_source":"host_executed"'
rule_end
rule_begin sandboxed_agent_cannot_find_the_crm_key
rule_has env "$out" "the key's variable in my environment: 0"
rule_has files "$out" "files naming it: none"
rule_hasnt anywhere "$out" "$key"
rule_end
rule_begin host_tools_ledger_records_the_host_execution_and_verifies
rule_has row "$out" '"result_source":"host_executed"'
rule_has verify "$out" "ok: 5 rows, head "
rule_end
echo "$lf_passed passed, $lf_failed failed"
[ "$lf_failed" -eq 0 ]
