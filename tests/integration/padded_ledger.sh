#!/bin/sh
# SPDX-License-Identifier: MIT
# padded_ledger.sh - --pad-ledger (ledgerfs(8); ledgerfs-ledger(5)
# PADDING, RECOVERY): the backing ledger grows into zeros written ahead,
# and every reader sees the rows alone; a kill -9 leaves the rows' end
# found at the next load; a torn row in the padding is cut with the whole
# tail and recorded; durability is unchanged (durability.sh, run with the
# option below too).
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start --pad-ledger=64K
lf_open_reg P
i=1
while [ $i -le 20 ]; do
	lf_call P "c$i" lookup_a '{"n":1}' >/dev/null
	i=$((i + 1))
done
led=$(lf_ledger P)
view=$(lf_cdir P)/ledger
rows_bytes() { wc -c <"$view" | tr -d ' '; }

rule_begin padding_is_zeros_after_the_rows_in_the_backing_file_alone
n=$(rows_bytes)
phys=$(stat -c %s "$led")
# The first row's append wrote 64 KiB of zeros past it.
[ "$phys" -gt "$n" ] && [ "$phys" -ge 65536 ] ||
	rule_fail "backing file $phys bytes, rows $n: no padding"
rule_eq "view size" "$n" "$(stat -c %s "$view")"
cmp -s -n "$n" "$led" "$view" || rule_fail "the view's bytes are not the backing file's first $n"
rule_eq "bytes after the rows that are not 0x00" 0 \
	"$(tail -c +$((n + 1)) "$led" | tr -d '\000' | wc -c | tr -d ' ')"
rule_eq "0x00 in the view" 0 "$(tr -cd '\000' <"$view" | wc -c | tr -d ' ')"
rule_end

rule_begin ledgerctl_verify_reads_a_padded_backing_ledger
rows=$(wc -l <"$view" | tr -d ' ')
out=$(timeout 30 "$LEDGERCTL" verify "$backing/cases/P" --key "$key" 2>/dev/null)
rule_has verify "$out" "ok: $rows rows"
rule_has "mounted verify" "$(timeout 30 "$LEDGERCTL" verify "$(lf_cdir P)" 2>/dev/null)" "ok: $rows rows"
rule_end

rule_begin kill_9_then_load_finds_the_end_of_the_rows
before=$(rows_bytes)
rows=$(lf_count P rows)
lf_kill9
lf_start --pad-ledger=64K
rule_eq "rows after the restart" "$rows" "$(lf_count P rows)"
rule_eq "view size" "$before" "$(rows_bytes)"
rule_has "a call after it" "$(lf_call P c21 lookup_a '{"n":1}')" '"mode":"pass"'
rule_eq "its row" $((rows + 1)) "$(lf_count P rows)"
rule_hasnt "no recovered row" "$(cat "$view")" '"phase":"recovered"'
rule_has verify "$(timeout 30 "$LEDGERCTL" verify "$backing/cases/P" --key "$key" 2>/dev/null)" "ok: $((rows + 1)) rows"
rule_end

rule_begin a_torn_row_in_the_padding_is_cut_with_the_whole_tail_and_recorded
lf_stop
n=$(tr -d '\000' <"$led" | wc -c | tr -d ' ')
printf '{"case_id":"P","row":99,"ph' | dd of="$led" bs=1 seek="$n" conv=notrunc 2>/dev/null
phys=$(stat -c %s "$led")
sha=$(tail -c +$((n + 1)) "$led" | sha256sum | cut -d' ' -f1)
rule_has "offline verify says torn" \
	"$(timeout 30 "$LEDGERCTL" verify "$backing/cases/P" --key "$key" 2>/dev/null)" "torn"
lf_start --pad-ledger=64K
last=$(tail -n1 "$view")
rule_has "recovered row" "$last" '"phase":"recovered"'
rule_has "cut bytes: the whole tail" "$last" "\"cut_bytes\":$((phys - n))"
rule_has "their hash" "$last" "\"cut_sha256\":\"$sha\""
rule_has verify "$(timeout 30 "$LEDGERCTL" verify "$backing/cases/P" --key "$key" 2>/dev/null)" "ok: "
rule_end

rule_begin a_daemon_without_the_option_appends_after_the_rows_of_a_padded_ledger
lf_stop
rows=$(tr -d '\000' <"$led" | wc -l | tr -d ' ')
lf_start --pad-ledger=64K
lf_call P c22 lookup_a '{"n":1}' >/dev/null
lf_stop
lf_start
lf_call P c23 lookup_a '{"n":1}' >/dev/null
rule_eq rows $((rows + 2)) "$(lf_count P rows)"
rule_has verify "$(timeout 30 "$LEDGERCTL" verify "$backing/cases/P" --key "$key" 2>/dev/null)" "ok: $((rows + 2)) rows"
rule_end
lf_stop
lf_finish
