#!/bin/sh
# SPDX-License-Identifier: MIT
# agent.sh - the demo's agent: a shell inside the sandbox that calls the
# host-executed crm_lookup through its target folder, prints the reply,
# and then looks for the CRM key everywhere it can read (its environment,
# every file outside /proc, /sys and /dev, its target folder).
set -u
dir=${LEDGERFS_DIR:-/mediator}
printf '{"case_id":"%s","token":"%s"}\n' "$LEDGERFS_CASE" "$LEDGERFS_TOKEN" \
	>"$dir/register"
printf '%s\n' '{"call_id":"lookup-1","tool":"crm_lookup","args":{"customer":"acme"}}' \
	>"$dir/request"
echo "agent: reply: $(cat "$dir/replies/lookup-1")"
echo "agent: environment:"
env | sed 's/^/agent:   /'
# The key's name, spelled so that this file does not hold it.
pat="CRM_API""_KEY"
n_env=$(env | grep -c "$pat")
files=$(grep -rl -D skip "$pat" / --exclude-dir=proc --exclude-dir=sys \
	--exclude-dir=dev --exclude-dir=usr 2>/dev/null | tr '\n' ' ')
echo "agent: the key's variable in my environment: $n_env"
echo "agent: files naming it: ${files:-none}"
