#!/bin/sh
# SPDX-License-Identifier: MIT
# seal_ratchet.sh - forward-secure seals on a real mount (ledgerfs-ledger(5)
# SEALS): K0 handed out once into a 0600 file, the stored key moving at
# each turn with the old bytes gone, verify --key checking the current
# epoch and --seal-key every epoch, a restart mid-epoch and kills at
# random continuing the ratchet, and the host's whole state at epoch k
# failing to forge a row of epoch k-1.  The keys are recomputed by
# seal_ratchet.py from the man page alone.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || lf_skip_all "no python3"
py() { python3 "$top_srcdir/tests/integration/seal_ratchet.py" "$@"; }
ctl() { timeout 30 "$LEDGERCTL" --mount "$mnt" "$@"; }
lf_setup
lf_start
printf '%s' "$LF_POLICY_DEFAULT" >"$work/policy.yaml"

# register C ENVFILE: register with the token open printed
register() {
	_tok=$(sed -n 's/^LEDGERFS_TOKEN=//p' "$2")
	printf '{"case_id":"%s","token":"%s"}\n' "$1" "$_tok" \
		>"$mnt/cases/$1/target/register"
}

ctl open S --policy "$work/policy.yaml" --seal-key-out "$work/S.k0" \
	>"$work/S.env"
rc=$?
led=$(lf_ledger S)
rule_begin open_seal_key_out_writes_k0_in_a_0600_file
rule_eq exit 0 "$rc"
rule_eq mode 600 "$(stat -c %a "$work/S.k0")"
rule_eq size 32 "$(stat -c %s "$work/S.k0")"
rule_has "row 1 names K0" "$(head -n1 "$led")" \
	"\"seal_fingerprint\":\"$(py fp "$work/S.k0")\""
rule_has "row 1 epoch" "$(head -n1 "$led")" '"epoch":0,"epoch_rows":1024,'
rule_end

rule_begin seal_key_in_the_view_is_shown_once
cat "$mnt/cases/S/seal_key" >/dev/null 2>&1 && rule_fail "shown again after open"
mkdir "$mnt/cases/V"
# A copy of the whole case folder does not take it: it is not listed.
cp -r "$mnt/cases/V" "$work/Vcopy" 2>/dev/null
[ -e "$work/Vcopy/seal_key" ] && rule_fail "cp -r copied seal_key"
tar -cf "$work/V.tar" -C "$mnt/cases" V 2>/dev/null
tar -tf "$work/V.tar" | grep -q seal_key && rule_fail "tar took seal_key"
first=$(cat "$mnt/cases/V/seal_key" 2>/dev/null)
rule_eq "first read" 65 "$(printf '%s\n' "$first" | wc -c | tr -d ' ')"
cat "$mnt/cases/V/seal_key" >/dev/null 2>&1 && rule_fail "second read succeeded"
python3 -c 'import sys; open(sys.argv[2], "wb").write(bytes.fromhex(sys.argv[1]))' \
	"$first" "$work/V.k0" 2>/dev/null
rule_has "it is K0" "$(head -n1 "$(lf_ledger V)")" \
	"\"seal_fingerprint\":\"$(py fp "$work/V.k0")\""
rule_end

printf 'keep me\n' >"$work/exists"
out=$(ctl open T --policy "$work/policy.yaml" --seal-key-out "$work/exists" 2>&1)
rc=$?
rule_begin open_seal_key_out_refuses_an_existing_file
[ "$rc" -ne 0 ] || rule_fail "exit 0"
rule_eq kept "keep me" "$(cat "$work/exists")"
rule_has says "$out" "never overwritten"
[ -e "$mnt/cases/T" ] && rule_fail "the case was made"
rule_end

register S "$work/S.env"
lf_call S c1 lookup_a >/dev/null
seal=$led.seal
before=$(py slot "$seal")
cp "$seal" "$work/seal.epoch0"
ctl turn S
after_bytes=$(od -An -v -tx1 "$seal" | tr -d ' \n')
rule_begin stored_key_moves_at_each_turn_and_the_old_bytes_leave_the_file
rule_eq mode 600 "$(stat -c %a "$seal")"
rule_eq "stored epoch and key" "1 $(py derive "$work/S.k0" 1)" "$(py stored "$key" "$seal")"
rule_hasnt "old wrapped key" "$after_bytes" "$before"
rule_hasnt "K0" "$after_bytes" "$(py derive "$work/S.k0" 0)"
cmp -s "$seal" "$work/seal.epoch0" && rule_fail "file unchanged"
rule_end

lf_call S c2 send_mail >/dev/null
ctl turn S
lf_call S c3 lookup_b >/dev/null
lf_call S c4 send_more >/dev/null
out=$(timeout 30 "$LEDGERCTL" verify "$backing/cases/S" --key "$key" 2>&1)
rule_begin verify_key_checks_the_current_epoch
rule_has ok "$out" "MACs of epoch 2 checked"
rule_has says "$out" "earlier epochs: chain only"
rule_end
out=$(timeout 30 "$LEDGERCTL" verify "$led" --seal-key "$work/S.k0" 2>&1)
rule_begin verify_seal_key_checks_every_epoch
rule_has ok "$out" ", MACs checked"
rule_has epochs "$out" "every MAC of 3 epoch(s)"
rule_end
out=$(timeout 30 "$LEDGERCTL" verify "$mnt/cases/S" --seal-key "$work/S.k0" 2>&1)
rule_begin verify_seal_key_checks_a_mounted_case
rule_has ok "$out" ", MACs checked"
rule_has epochs "$out" "every MAC of 3 epoch(s)"
rule_end

# Rows cut from the end of a copy of the backing folder: the seal key
# file is for a later epoch (the daemon's own check at load), and without
# that file the signed checkpoints beside the ledger still tell.
out=$(timeout 30 "$LEDGERCTL" verify "$backing/cases/S" --key "$key" 2>&1)
rule_begin verify_key_checks_the_signed_checkpoints_beside_the_ledger
rule_has says "$out" "signed checkpoint(s) match the ledger"
rule_end
cp -a "$backing/cases/S" "$work/cut"
n=$(grep -n '"phase":"turn"' "$led" | tail -n 1 | cut -d: -f1)
head -n $((n - 1)) "$led" >"$work/cut/ledger.jsonl"
out=$(timeout 30 "$LEDGERCTL" verify "$work/cut" --key "$key" 2>&1)
rc=$?
rule_begin verify_key_finds_rows_cut_from_the_end_by_the_seal_key_epoch
rule_eq exit 1 "$rc"
rule_has says "$out" "bad: the seal key file is for epoch 2 but the ledger's next row is in epoch 1"
rule_end
rm "$work/cut/ledger.jsonl.seal"
out=$(timeout 30 "$LEDGERCTL" verify "$work/cut" --key "$key" 2>&1)
rc=$?
rule_begin verify_key_finds_rows_cut_from_the_end_by_the_signed_checkpoints
rule_eq exit 1 "$rc"
rule_has says "$out" "(truncated)"
rule_end
rm -rf "$work/nock" && cp -a "$backing/cases/S" "$work/nock"
rm -rf "$work/nock/checkpoint" "$work/nock/checkpoints"
out=$(timeout 30 "$LEDGERCTL" verify "$work/nock" --key "$key" 2>&1)
rc=$?
rule_begin verify_key_finds_the_checkpoints_of_turns_removed
rule_eq exit 1 "$rc"
rule_has says "$out" "bad: no signed checkpoint of the turn at row"
rule_end
out=$(timeout 30 "$LEDGERCTL" verify "$work/cut" --seal-key "$work/S.k0" --key "$key" 2>&1)
rc=$?
rule_begin verify_seal_key_with_the_host_key_checks_the_checkpoints_too
rule_eq exit 1 "$rc"
rule_has says "$out" "(truncated)"
rule_end

cp "$led" "$work/bare.jsonl"
out=$(timeout 30 "$LEDGERCTL" verify "$work/bare.jsonl" --key "$key" 2>&1)
rule_begin verify_key_of_a_bare_sealed_ledger_checks_the_chain_only
rule_has ok "$out" "MACs not checked"
rule_has says "$out" "no seal key file beside it"
rule_end

out=$(timeout 30 "$LEDGERCTL" verify "$work/bare.jsonl" --key "$key" --require-mac 2>&1)
rc=$?
rule_begin require_mac_exits_2_when_no_mac_was_checked
rule_eq exit 2 "$rc"
rule_has says "$out" "no MAC checked (--require-mac)"
rule_end
head -c 32 /dev/urandom >"$work/other.key"
chmod 600 "$work/other.key"
out=$(timeout 30 "$LEDGERCTL" verify "$work/bare.jsonl" --key "$work/other.key" 2>&1)
rc=$?
rule_begin a_wrong_host_key_is_wrong_key_where_it_reaches_no_mac
rule_eq exit 2 "$rc"
rule_has says "$out" "wrong key: sealed with key"
rule_end

head -c 32 /dev/urandom >"$work/other.k0"
out=$(timeout 30 "$LEDGERCTL" verify "$led" --seal-key "$work/other.k0" 2>&1)
rc=$?
rule_begin wrong_seal_key_is_told_apart_from_a_forged_mac
rule_eq exit 2 "$rc"
rule_has says "$out" "wrong key: sealed with seal key $(py fp "$work/S.k0"), checked with seal key $(py fp "$work/other.k0")"
rule_end

# A restart in the middle of epoch 2: it goes on where it was.
lf_stop
lf_start
lf_call S c5 lookup_c >/dev/null
ctl turn S
lf_call S c6 lookup_d >/dev/null
rule_begin restart_mid_epoch_continues_the_ratchet
rule_eq state registered "$(lf_state S)"
rule_eq "stored epoch and key" "3 $(py derive "$work/S.k0" 3)" "$(py stored "$key" "$seal")"
rule_has "last row" "$(tail -n1 "$led")" '"epoch":3,'
timeout 30 "$LEDGERCTL" verify "$led" --seal-key "$work/S.k0" >/dev/null 2>&1 ||
	rule_fail "verify --seal-key"
rule_end

# Kills at random moments of calls and turns: every restart loads the case
# and the whole ledger checks under K0.
i=0
bad=
while [ $i -lt 8 ]; do
	i=$((i + 1))
	(
		j=0
		while [ $j -lt 40 ]; do
			j=$((j + 1))
			lf_call S "k$i-$j" lookup_k >/dev/null 2>&1 || exit 0
			[ $((j % 3)) -eq 0 ] && echo turn >"$mnt/cases/S/ctl" 2>/dev/null
		done
	) &
	writer=$!
	sleep "0.$(($(od -An -N1 -tu1 /dev/urandom) % 4 + 1))"
	lf_kill9
	wait "$writer" 2>/dev/null
	lf_start
	st=$(lf_state S)
	[ "$st" = registered ] || bad="$bad; round $i: state $st"
	timeout 30 "$LEDGERCTL" verify "$led" --seal-key "$work/S.k0" >/dev/null 2>&1 ||
		bad="$bad; round $i: $(timeout 30 "$LEDGERCTL" verify "$led" --seal-key "$work/S.k0" 2>&1 | head -n1)"
done
rule_begin kill9_at_random_keeps_the_ratchet_whole
[ -z "$bad" ] || rule_fail "$bad"
rule_has "rows of later epochs" "$(tail -n1 "$led")" '"epoch":'
rule_end

# The host's whole state at epoch k: host key and seal key file.
lf_call S f1 lookup_f >/dev/null
ctl turn S
lf_call S f2 lookup_g >/dev/null
lf_stop
cp "$led" "$work/forged.jsonl"
cp "$seal" "$work/forged.jsonl.seal"
forged_row=$(py forge "$work/forged.jsonl" "$key" "$seal")
out_key=$(timeout 30 "$LEDGERCTL" verify "$work/forged.jsonl" --key "$key" 2>&1)
out_k0=$(timeout 30 "$LEDGERCTL" verify "$work/forged.jsonl" --seal-key "$work/S.k0" 2>&1)
rc=$?
rule_begin state_at_epoch_k_cannot_forge_a_row_of_epoch_k_minus_1
rule_eq "verify --seal-key" 1 "$rc"
rule_has says "$out_k0" "bad: row $forged_row: mac does not match"
# The documented limit: the current epoch's key cannot see it.
rule_has "verify --key passes" "$out_key" "ok: "
rule_end

# At load the daemon checks the current epoch's MACs with the stored key;
# a row of that epoch changed, or a seal key file that does not fit, loads
# the case failed.
cp "$led" "$work/S.good"
sed -i '$ s/"tool":"lookup_g"/"tool":"lookup_h"/' "$led"
lf_start
rule_begin row_of_the_current_epoch_changed_loads_the_case_failed
rule_eq state failed "$(lf_state S)"
rule_has reason "$(lf_status S)" "mac does not match"
rule_end
lf_stop
cp "$work/S.good" "$led"
cp "$work/seal.epoch0" "$seal"
lf_start
rule_begin seal_key_file_of_another_epoch_loads_the_case_failed
rule_eq state failed "$(lf_state S)"
rule_has reason "$(lf_status S)" "is past the seal key's epoch 0"
rule_end

lf_finish
