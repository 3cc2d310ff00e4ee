#!/bin/sh
# SPDX-License-Identifier: MIT
# checkpoints_signed.sh - ledgerfs-ledger(5) SIGNED CHECKPOINTS as the
# daemon keeps them: the signing key made beside the host key under the
# same rules, a checkpoint at each turn and close (kept in checkpoints/)
# and, while open, at the first row 1000 rows or 10 s after the last; the
# latest shown read-only in the view; each one checked at load: one that
# does not verify, or a ledger cut below one, loads the case failed.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

rule_begin signing_key_is_made_beside_the_host_key_mode_0600
rule_eq "mode" "600 32" "$(stat -c '%a %s' "$key.sign" 2>&1)"
rule_end

lf_open_reg C
lf_call C c1 lookup_a >/dev/null
rule_begin no_checkpoint_before_the_first_turn_or_cadence
rule_eq "view" "" "$(cat "$(lf_cdir C)/checkpoint")"
rule_end

rule_begin turn_writes_a_kept_checkpoint_of_the_rows_so_far
echo turn >"$(lf_cdir C)/ctl"
rows=$(lf_rows C)
kept=$backing/cases/C/checkpoints/$(printf '%012d' "$rows")
rule_eq "kept file" yes "$([ -f "$kept" ] && echo yes)"
rule_eq "size line" "$rows" "$(sed -n 2p "$kept")"
rule_eq "latest = kept" "$(cat "$kept")" "$(cat "$backing/cases/C/checkpoint")"
rule_end

rule_begin view_shows_the_latest_checkpoint_read_only
rule_eq "view = backing" "$(cat "$backing/cases/C/checkpoint")" \
	"$(cat "$(lf_cdir C)/checkpoint")"
rule_eq "mode" "400" "$(stat -c %a "$(lf_cdir C)/checkpoint")"
if (echo x >"$(lf_cdir C)/checkpoint") 2>/dev/null; then
	rule_fail "a write to checkpoint succeeded"
fi
rule_end

rule_begin no_more_than_1000_rows_go_unsigned_while_open
before=$(lf_rows C)
for i in $(seq 1 1010); do
	lf_call C "n$i" lookup_a >/dev/null || break
done
rows=$(lf_rows C)
size=$(sed -n 2p "$backing/cases/C/checkpoint")
rule_eq "rows written" $((before + 1010)) "$rows"
# The 10 s rule may have come first: then it is sooner, never later.
[ "$size" -gt "$before" ] || rule_fail "no checkpoint since the turn ($size)"
[ $((rows - size)) -lt 1000 ] || rule_fail "$((rows - size)) rows unsigned"
rule_end

rule_begin a_checkpoint_at_the_first_row_10_seconds_after_the_last
sleep 10.2
lf_call C late1 lookup_a >/dev/null
rule_eq "covered" "$(lf_rows C)" "$(sed -n 2p "$backing/cases/C/checkpoint")"
rule_end

rule_begin close_writes_a_checkpoint_of_every_row
echo close >"$(lf_cdir C)/ctl"
rows=$(lf_rows C)
rule_eq "latest" "$rows" "$(sed -n 2p "$backing/cases/C/checkpoint")"
rule_eq "kept" yes "$([ -f "$backing/cases/C/checkpoints/$(printf '%012d' "$rows")" ] && echo yes)"
rule_end

# Three more closed cases to damage while the daemon is down.
for c in T F G; do
	lf_open_reg $c
	lf_call $c ${c}1 lookup_a >/dev/null
	echo turn >"$(lf_cdir $c)/ctl"
	lf_call $c ${c}2 lookup_a >/dev/null
	lf_call $c ${c}3 lookup_a >/dev/null
	echo close >"$(lf_cdir $c)/ctl"
done
lf_stop
# T: cut after the turn's checkpoint (a whole-row prefix: the chain holds).
turn_rows=$(basename "$(ls "$backing/cases/T/checkpoints" | head -n1)")
turn_rows=$(expr "$turn_rows" + 0)
head -n $((turn_rows - 1)) "$backing/cases/T/ledger.jsonl" >"$work/t"
cat "$work/t" >"$backing/cases/T/ledger.jsonl"
rm "$backing/cases/T/checkpoint"
# F: one flipped bit in a kept checkpoint's signature: in the signature's
# bytes, not in its base64 text (a flipped character may be no base64 at
# all, and the line malformed rather than not verifying).
f=$(ls "$backing/cases/F/checkpoints/"* | head -n1)
python3 -c '
import base64, sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")
name, sig = lines[-2].rsplit(b" ", 1)
raw = bytearray(base64.b64decode(sig))
raw[-10] ^= 1
lines[-2] = name + b" " + base64.b64encode(bytes(raw))
open(p, "wb").write(b"\n".join(lines))' "$f"
lf_start

rule_begin an_intact_closed_case_loads_closed
rule_eq state closed "$(lf_state C)"
rule_end

rule_begin a_ledger_cut_below_a_checkpoint_loads_failed
rule_eq state failed "$(lf_state T)"
# The seal key file (ledgerfs-ledger(5) SEALS) may tell first: either way.
case $(lf_status T) in
*truncated* | *"the seal key is for epoch"*) ;;
*) rule_fail "reason: $(lf_status T | grep '"reason"')" ;;
esac
rule_end

rule_begin a_checkpoint_that_does_not_verify_loads_the_case_failed
rule_eq state failed "$(lf_state F)"
rule_has reason "$(lf_status F)" "does not verify"
rule_eq "other case" closed "$(lf_state G)"
rule_end

rule_begin daemon_refuses_a_signing_key_others_can_write
lf_stop
chmod 0622 "$key.sign"
out=$(timeout 20 "$LEDGERFS" -f --backing="$backing" --key="$key" "$mnt" 2>&1)
rc=$?
rule_eq "exit" 1 "$rc"
rule_has "reason" "$out" "$key.sign"
chmod 0600 "$key.sign"
rule_end


# The 10 s rule counts from the last checkpoint across a restart: its
# file's age says when it was signed.
lf_mounted || lf_start
lf_open_reg R
lf_call R r1 lookup_a >/dev/null
echo turn >"$(lf_cdir R)/ctl"
before=$(sed -n 2p "$backing/cases/R/checkpoint")
lf_stop
touch -d '-30 seconds' "$backing/cases/R/checkpoint"
lf_start
lf_call R r2 lookup_a >/dev/null
rule_begin the_first_row_after_a_restart_10_s_past_the_last_checkpoint_is_signed
rule_eq "rows signed" "$(lf_rows R)" "$(sed -n 2p "$backing/cases/R/checkpoint")"
rule_eq "later than before" yes "$([ "$(lf_rows R)" -gt "$before" ] && echo yes)"
rule_end

# A case written to while it is read: the checkpoints are read before the
# ledger, so an honest live case verifies and exports every time.
lf_mounted || lf_start
lf_open_reg L
(
	i=0
	while [ $i -lt 800 ]; do
		lf_call L w$i lookup_a >/dev/null 2>&1
		i=$((i + 1))
		[ $((i % 4)) = 0 ] && echo turn >"$(lf_cdir L)/ctl"
	done
) &
wpid=$!
"$LEDGERCTL" pubkey --key "$key" >"$work/vkey"
i=0
until [ -s "$backing/cases/L/checkpoint" ] || [ $i -gt 200 ]; do
	i=$((i + 1))
	sleep 0.05
done
rule_begin a_live_case_verifies_and_exports_while_it_is_written_to
n=0
while kill -0 $wpid 2>/dev/null && [ $n -lt 6 ]; do
	n=$((n + 1))
	"$LEDGERCTL" verify --pubkey="$work/vkey" "$(lf_cdir L)" >"$work/vp" 2>&1 ||
		rule_fail "verify --pubkey of the mounted case: $(grep -v '^ledgerctl' "$work/vp" | head -1)"
	"$LEDGERCTL" verify --pubkey="$work/vkey" "$backing/cases/L" >"$work/vp" 2>&1 ||
		rule_fail "verify --pubkey of the backing folder: $(grep -v '^ledgerctl' "$work/vp" | head -1)"
	"$LEDGERCTL" --mount "$mnt" export L "$work/live.tar" --backing "$backing" \
		--key "$key" >"$work/vp" 2>&1 ||
		rule_fail "export: $(tail -1 "$work/vp")"
	rm -f "$work/live.tar"
done
rule_eq "rounds while written to" yes "$([ $n -ge 1 ] && echo yes)"
wait $wpid
rule_end

lf_finish
