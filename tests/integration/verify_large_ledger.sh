#!/bin/sh
# SPDX-License-Identifier: MIT
# verify_large_ledger.sh - `ledgerctl verify` of a ledger larger than its
# read buffer, on helper threads (ledgerctl(1) verify): the same verdicts
# as for a small one, row for row, with lines across buffer boundaries.
# The ledger is made by the real append path (tests/bench/bench_genledger,
# 20 MiB); its head is checked against sha256sum of its last line; then a
# torn tail, padding, a torn row in padding and a changed row deep inside.
. "$(dirname "$0")/lib.sh"
GEN=$top_builddir/tests/bench/bench_genledger
[ -x "$GEN" ] || lf_skip_all "bench_genledger is not built"
lf_setup
mkdir -m 0700 "$work/gen"
timeout 120 "$GEN" "$work/gen" ledger.jsonl big "$work/gen/host.key" 20 >/dev/null ||
	lf_skip_all "bench_genledger failed"
led=$work/gen/ledger.jsonl
k=$work/gen/host.key
rows=$(wc -l <"$led" | tr -d ' ')
verify() { timeout 60 "$LEDGERCTL" verify "$1" --key "$k" 2>/dev/null; }

rule_begin large_ledger_verifies_with_every_row_and_its_head
[ "$(stat -c %s "$led")" -ge 16777216 ] || rule_fail "ledger under 16 MiB"
head=$(tail -n 1 "$led" | tr -d '\n' | sha256sum | cut -d' ' -f1)
rule_eq verify "ok: $rows rows, head $head, MACs checked" "$(verify "$led")"
rule_end

rule_begin large_ledger_torn_tail_is_the_next_row
cp "$led" "$work/torn"
printf '{"args":' >>"$work/torn"
out=$(verify "$work/torn")
rule_eq "exit" 1 "$?"
rule_eq verify "bad: row $((rows + 1)): torn (no newline at end)" "$out"
rule_end

rule_begin large_ledger_padding_after_the_rows_is_no_fault
cp "$led" "$work/padded"
head -c 1048576 /dev/zero >>"$work/padded"
rule_has verify "$(verify "$work/padded")" "ok: $rows rows, head $head"
rule_end

rule_begin large_ledger_torn_row_in_padding_is_a_torn_tail
cp "$work/torn" "$work/torn-padded"
head -c 65536 /dev/zero >>"$work/torn-padded"
out=$(verify "$work/torn-padded")
rule_eq "exit" 1 "$?"
rule_eq verify "bad: row $((rows + 1)): torn (bytes after the rows)" "$out"
rule_end

rule_begin large_ledger_changed_row_deep_inside_is_named
python3 - "$led" "$work/changed" <<'PY'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
lines[19999] = lines[19999].replace(b'"line"', b'"linE"', 1)
open(sys.argv[2], "wb").write(b"\n".join(lines))
PY
out=$(verify "$work/changed")
rule_eq "exit" 1 "$?"
rule_eq verify "bad: row 20000: mac does not match" "$out"
rule_end

lf_finish
