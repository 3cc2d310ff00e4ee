#!/bin/sh
# SPDX-License-Identifier: MIT
# cli_option_forms.sh - ledgerctl and ledgercall take every option that
# has a value as --OPTION VALUE and as --OPTION=VALUE (ledgerctl(1),
# ledgercall(1) DESCRIPTION): each form does the same, on a real mount.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

cat >"$work/p.yaml" <<'P'
interactions:
  - match: lookup_*
    mode: pass
  - match: resume_*
    mode: mock
default: block
P
cat >"$work/m.yaml" <<'M'
mocks:
  - tool: resume_*
    response: {ok: true}
M
printf '{"tools":[{"name":"lookup_a","inputSchema":{"type":"object"}}]}\n' >"$work/t.json"

# open_in FORM CASE: ledgerctl open with every option in FORM.
open_in() {
	if [ "$1" = eq ]; then
		"$LEDGERCTL" --mount="$mnt" open "$2" --policy="$work/p.yaml" \
			--mocks="$work/m.yaml" --tools="$work/t.json" \
			--env-file="$work/env" --cassettes="$work" \
			--seal-key-out="$work/k0-$2"
	else
		"$LEDGERCTL" --mount "$mnt" open "$2" --policy "$work/p.yaml" \
			--mocks "$work/m.yaml" --tools "$work/t.json" \
			--env-file "$work/env" --cassettes "$work" \
			--seal-key-out "$work/k0-$2"
	fi
}

for f in space eq; do
	C=O$f
	rule_begin "ledgerctl_open_takes_each_option_in_form_$f"
	rm -f "$work/env"
	open_in $f $C >/dev/null 2>"$work/open-$f.err" ||
		rule_fail "exit $?: $(cat "$work/open-$f.err")"
	tok=$(sed -n 's/^LEDGERFS_TOKEN=//p' "$work/env" 2>/dev/null)
	rule_has "policy" "$(cat "$(lf_cdir $C)/policy" 2>&1)" "resume_*"
	rule_has "mocks" "$(cat "$(lf_cdir $C)/mocks" 2>&1)" "resume_*"
	rule_has "tools" "$(cat "$(lf_tdir $C)/tools" 2>&1)" "lookup_a"
	rule_eq "seal key file" 32 "$(wc -c <"$work/k0-$C" 2>/dev/null | tr -d ' ')"
	rule_eq "environment file" "$(lf_token $C)" "$tok"
	rule_end

	rule_begin "ledgercall_takes_each_option_in_form_$f"
	T=$(lf_tdir $C)
	printf '{"case_id":"%s","token":"%s"}\n' $C "$tok" >"$T/register"
	if [ $f = eq ]; then
		out=$("$LEDGERCALL" --dir="$T" --tool=resume_x --args='{"a":1}' --call-id=m1)
		rc=$?
		"$LEDGERCALL" --dir="$T" --tool=lookup_a --call-id=p1 >/dev/null
		"$LEDGERCALL" --dir="$T" result --call-id=p1 --returned='{"v":2}'
	else
		out=$("$LEDGERCALL" --dir "$T" --tool resume_x --args '{"a":1}' --call-id m1)
		rc=$?
		"$LEDGERCALL" --dir "$T" --tool lookup_a --call-id p1 >/dev/null
		"$LEDGERCALL" --dir "$T" result --call-id p1 --returned '{"v":2}'
	fi
	rule_eq "mock exit" 3 "$rc"
	rule_has "mock reply" "$out" '"call_id":"m1"'
	rule_has "mock args recorded" "$(grep -F '"call_id":"m1"' "$(lf_ledger $C)")" '"a":1'
	rule_has "result recorded" "$(grep -F '"phase":"completion"' "$(lf_ledger $C)")" '"v":2'
	rule_end

	rule_begin "ledgerctl_verify_export_and_pubkey_take_their_options_in_form_$f"
	if [ $f = eq ]; then
		"$LEDGERCTL" verify "$backing/cases/$C" --key="$key" >/dev/null 2>&1
		vrc=$?
		"$LEDGERCTL" --mount="$mnt" export $C "$work/$C.tar" \
			--backing="$backing" --key="$key" >/dev/null 2>&1
		xrc=$?
		"$LEDGERCTL" pubkey --key="$key" >"$work/vk-$f" 2>/dev/null
		prc=$?
	else
		"$LEDGERCTL" verify "$backing/cases/$C" --key "$key" >/dev/null 2>&1
		vrc=$?
		"$LEDGERCTL" --mount "$mnt" export $C "$work/$C.tar" \
			--backing "$backing" --key "$key" >/dev/null 2>&1
		xrc=$?
		"$LEDGERCTL" pubkey --key "$key" >"$work/vk-$f" 2>/dev/null
		prc=$?
	fi
	rule_eq "verify, export, pubkey" "0 0 0" "$vrc $xrc $prc"
	rule_has "verifier key" "$(cat "$work/vk-$f")" "ledgerfs/"
	rule_end

	rule_begin "ledgerctl_wait_and_check_target_take_their_options_in_form_$f"
	"$LEDGERCTL" --mount "$mnt" open W$f --policy "$work/p.yaml" >/dev/null
	if [ $f = eq ]; then
		"$LEDGERCTL" --mount="$mnt" wait W$f --timeout=200ms 2>/dev/null
		wrc=$?
		"$LEDGERCTL" check-target --mount="$mnt" --backing="$backing" \
			--key="$key" $$ >/dev/null 2>&1
		crc=$?
	else
		"$LEDGERCTL" --mount "$mnt" wait W$f --timeout 200ms 2>/dev/null
		wrc=$?
		"$LEDGERCTL" check-target --mount "$mnt" --backing "$backing" \
			--key "$key" $$ >/dev/null 2>&1
		crc=$?
	fi
	echo "$wrc $crc" >"$work/wait-$f"
	[ $f = eq ] && rule_eq "same exits as the space form" \
		"$(cat "$work/wait-space")" "$wrc $crc"
	rule_eq "wait times out (1), check-target runs (not 2)" "1 ok" \
		"$wrc $([ $crc != 2 ] && echo ok)"
	rule_end
done

rule_begin ledgerctl_case_commands_take_mount_after_the_command_too
out=$(LEDGERFS_MOUNT=/nonexistent "$LEDGERCTL" open AFTER --mount "$mnt" --policy "$work/p.yaml" 2>&1)
rule_eq "open exit" 0 "$?"
rule_eq "opened" ready "$(lf_state AFTER)"
out=$(LEDGERFS_MOUNT=/nonexistent "$LEDGERCTL" status AFTER --mount="$mnt" 2>&1)
rule_has "status" "$out" '"state": "ready"'
LEDGERFS_MOUNT=/nonexistent "$LEDGERCTL" close --mount "$mnt" AFTER >/dev/null 2>&1
rule_eq "closed" closed "$(lf_state AFTER)"
out=$("$LEDGERCTL" status AFTER --mount 2>&1)
rule_eq "--mount with no folder: usage" "2 ledgerctl: status: --mount needs a folder" "$? $out"
rule_end

rule_begin ledgerctl_open_env_file_is_mode_0600_even_over_a_file
echo old >"$work/envx"
chmod 0644 "$work/envx"
"$LEDGERCTL" --mount "$mnt" open ENVX --policy "$work/p.yaml" --env-file "$work/envx"
rule_eq "exit" 0 "$?"
rule_eq "mode" 600 "$(stat -c %a "$work/envx")"
rule_has "token written" "$(cat "$work/envx")" "LEDGERFS_TOKEN=$(lf_token ENVX)"
rule_hasnt "old content gone" "$(cat "$work/envx")" old
rule_end

rule_begin ledgerctl_open_with_an_env_file_it_cannot_write_makes_no_case
out=$("$LEDGERCTL" --mount "$mnt" open ENVNO --policy "$work/p.yaml" --env-file "$work/no/such/env" 2>&1)
rule_eq "exit" 1 "$?"
rule_has "says" "$out" "--env-file $work/no/such/env: No such file or directory"
rule_eq "no case" "" "$(ls "$mnt/cases" | grep -x ENVNO)"
rule_end

# A device or a FIFO named as --env-file: refused before anything changes
# (a device's mode is the whole machine's; a FIFO would block the open).
rule_begin ledgerctl_open_env_file_that_is_not_a_regular_file_is_refused_untouched
mknod "$work/nulldev" c 1 3 && chmod 0666 "$work/nulldev" && mkfifo "$work/fifo" ||
	rule_fail "cannot make a device node and a FIFO"
for f in nulldev fifo; do
	out=$(timeout 10 "$LEDGERCTL" --mount "$mnt" open "ENV$f" --policy "$work/p.yaml" \
		--env-file "$work/$f" 2>&1)
	rule_eq "$f: exit" 1 "$?"
	rule_has "$f: says" "$out" "--env-file $work/$f: not a regular file"
	rule_eq "$f: no case" "" "$(ls "$mnt/cases" | grep -x "ENV$f")"
done
rule_eq "the device's mode" 666 "$(stat -c %a "$work/nulldev")"
rule_end

rule_begin ledgerctl_case_commands_refuse_a_name_outside_the_view
mkdir "$work/fake"
: >"$work/fake/ctl"
echo '{"state":"registered"}' >"$work/fake/status"
for c in "fail ../../fake because" "close ../../fake" "turn ../../fake" \
	"status ../../fake" "wait ../../fake" "close .."; do
	out=$("$LEDGERCTL" --mount "$mnt" $c 2>&1)
	rule_eq "$c" "2 bad case name" "$? $(echo "$out" | grep -o 'bad case name')"
done
rule_eq "nothing written outside" "" "$(cat "$work/fake/ctl")"
rule_end

lf_finish
