#!/bin/sh
# SPDX-License-Identifier: MIT
# host_credentials.sh - an executor's env_file stays on the host
# (ledgerfs-policy(5) HOST EXECUTORS): a canary secret in it reaches the
# executor, and nothing else: not the view, the ledger, case.json, any
# file of the backing folder, the daemon's output, an error reason, nor a
# sandboxed (bubblewrap) target's files or environment.
. "$(dirname "$0")/lib.sh"
command -v bwrap >/dev/null || lf_skip_all "bubblewrap missing"
command -v setpriv >/dev/null || lf_skip_all "setpriv missing"
lf_setup
lf_start

canary=canary-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
tools=$work/tools
creds=$work/creds
mkdir "$tools" "$creds"
chmod 0755 "$tools"
chmod 0700 "$creds"
printf '# the CRM key\nexport CRM_API_KEY="%s"\nCRM_URL=https://crm.invalid\n' \
	"$canary" >"$creds/crm.env"
chmod 0600 "$creds/crm.env"
# The tool proves it holds the key without printing it, and says it on
# stderr (which goes nowhere).
cat >"$tools/crm" <<'SH'
#!/bin/sh
args=$(cat)
echo "debug: key is $CRM_API_KEY" >&2
printf '{"customer":%s,"authorized":%s,"key_bytes":%s}\n' \
	"$(printf '%s' "$args" | sed 's/.*"customer":\("[^"]*"\).*/\1/')" \
	"$([ -n "$CRM_API_KEY" ] && echo true || echo false)" \
	"${#CRM_API_KEY}"
SH
chmod 0755 "$tools/crm"
# An env file whose bad line holds the secret: the reason gives the line.
printf 'CRM_API_KEY=%s\nthis line holds %s and no equals sign\n' \
	"$canary" "$canary" | tr '=' '=' >"$creds/bad.env"
sed -i '2s/=//g' "$creds/bad.env"
chmod 0600 "$creds/bad.env"

POLICY="interactions:
  - match: crm_lookup
    mode: pass
    exec: {argv: [$tools/crm], env_file: $creds/crm.env}
  - match: crm_broken
    mode: pass
    exec: {argv: [$tools/crm], env_file: $creds/bad.env}
default: {mode: block}
"
lf_open C "$POLICY" ""

# The target: a shell as uid 65534 in bubblewrap, seeing only its folder.
target_script='
exec 2>&1
printf "{\"case_id\":\"%s\",\"token\":\"%s\"}\n" "$LEDGERFS_CASE" "$LEDGERFS_TOKEN" >/mediator/register
printf "%s\n" "{\"call_id\":\"t1\",\"tool\":\"crm_lookup\",\"args\":{\"customer\":\"acme\"}}" >/mediator/request
echo "reply=$(cat /mediator/reply)"
printf "%s\n" "{\"call_id\":\"t2\",\"tool\":\"crm_broken\",\"args\":{}}" >/mediator/request
echo "reply2=$(cat /mediator/reply)"
env | sed "s/^/env=/"
cat /proc/$$/environ | tr "\0" "\n" | sed "s/^/environ=/"
# Everything but the kernel'"'"'s trees and /usr, the host'"'"'s read-only system
# files (the canary is made afresh for this run and written nowhere there).
grep -rl -D skip "$1" / --exclude-dir=proc --exclude-dir=sys \
	--exclude-dir=dev --exclude-dir=usr --exclude-dir=mediator \
	2>/dev/null | sed "s/^/found=/"
for f in /mediator/* /mediator/replies/*; do
	[ -f "$f" ] && [ -r "$f" ] || continue
	echo "read=$f"
	timeout 5 grep -l "$1" "$f" 2>/dev/null | sed "s/^/found=/"
done
for f in /proc/self/environ /proc/1/environ /proc/*/cmdline; do
	grep -l "$1" "$f" 2>/dev/null | sed "s/^/proc=/"
done
echo end=1
'
out=$(timeout 60 bwrap --ro-bind /usr /usr --symlink usr/bin /bin \
	--symlink usr/lib /lib --symlink usr/lib64 /lib64 \
	--proc /proc --dev /dev --tmpfs /tmp \
	--unshare-ipc --unshare-pid --unshare-net --unshare-uts \
	--die-with-parent --new-session --clearenv \
	--bind "$mnt/cases/C/target" /mediator \
	--setenv LEDGERFS_CASE C --setenv LEDGERFS_TOKEN "$(lf_token C)" \
	--setenv PATH /usr/bin:/bin \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	sh -c "$target_script" sh "$canary")

reply=$(echo "$out" | sed -n 's/^reply=//p')
rule_begin sandboxed_target_gets_the_host_result_of_a_credentialed_tool
rule_has ran "$out" "end=1"
rule_has customer "$reply" '"customer":"acme"'
rule_has authorized "$reply" '"authorized":true'
rule_has key_bytes "$reply" "\"key_bytes\":${#canary}"
rule_has authoritative "$reply" '"result_authoritative":true'
rule_has source "$reply" '"result_source":"host_executed"'
rule_end

rule_begin canary_credential_never_reaches_the_target
rule_hasnt "target output" "$out" "$canary"
rule_has "it looked" "$out" "environ=PATH="
rule_has "it read the reply" "$out" "read=/mediator/reply"
rule_end

reply2=$(echo "$out" | sed -n 's/^reply2=//p')
rule_begin env_file_error_names_the_line_never_its_text
rule_has kind "$reply2" '"error":"env_file"'
rule_has line "$reply2" "bad.env line 2: not KEY=VALUE"
rule_hasnt secret "$reply2" "$canary"
rule_end

# The host side: only the env files hold it, anywhere under $work (the
# view is mounted there, the backing folder, the daemon's output).
found=$(grep -rl -- "$canary" "$work" 2>/dev/null | sort | tr '\n' ' ')
rule_begin canary_credential_is_only_in_its_env_file
rule_eq files "$creds/bad.env $creds/crm.env " "$found"
rule_hasnt ledger "$(cat "$(lf_ledger C)")" "$canary"
rule_hasnt case.json "$(cat "$backing/cases/C/case.json")" "$canary"
rule_hasnt view "$(cat "$mnt/cases/C/ledger" "$mnt/cases/C/status" "$mnt/cases/C/policy" 2>&1)" "$canary"
rule_end

lf_stop
rule_begin canary_credential_is_not_in_the_daemon_output_or_a_verified_export
rule_hasnt stderr "$(cat "$work/daemon.err" "$work/daemon.out")" "$canary"
rule_end
lf_finish
