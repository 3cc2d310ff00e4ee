#!/bin/sh
# SPDX-License-Identifier: MIT
# verify_keys.sh - `ledgerctl verify` names the key it checked with
# (ledgerfs-ledger(5) LEDGERCTL VERIFY): its fingerprint, the one the
# ledger's case_opened row records, a wrong key told apart from a forged
# MAC, --json, and --require-mac without a key.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || lf_skip_all "no python3"
lf_setup
lf_start
lf_open_reg V
lf_call V c1 lookup_a >/dev/null
lf_stop
ctl() { timeout 30 "$LEDGERCTL" "$@"; }
fp() { # the fingerprint of a key file, by its definition
	python3 -c 'import hashlib,sys
k=open(sys.argv[1],"rb").read()
print(hashlib.sha256(b"ledgerfs-key-fingerprint\n"+k).hexdigest()[:16])' "$1"
}
want=$(fp "$key")
led=$(lf_ledger V)

rule_begin case_opened_row_records_the_host_key_fingerprint
rule_has row1 "$(head -n1 "$led")" "\"key_fingerprint\":\"$want\""
rule_end

out=$(ctl verify "$led" --key "$key" 2>&1)
rule_begin verify_prints_the_fingerprint_of_the_key_it_used
rule_has ok "$out" "ok: "
rule_has key "$out" "key $want ($key, given); sealed with key $want"
rule_end

head -c 32 /dev/urandom >"$work/other.key"
chmod 0600 "$work/other.key"
other=$(fp "$work/other.key")
out=$(ctl verify "$led" --key "$work/other.key" 2>&1)
rc=$?
rule_begin wrong_key_is_told_apart_from_a_forged_mac
rule_eq exit 2 "$rc"
rule_has says "$out" "sealed with key $want, checked with key $other"
rule_hasnt "not called forged" "$out" "forged"
rule_end

cp "$led" "$work/forged.jsonl"
# The seal key file goes along: FILE.seal checks the current epoch's MACs.
cp "$led.seal" "$work/forged.jsonl.seal"
python3 - "$work/forged.jsonl" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
i = lines[1].index('"mac":"') + 7
c = lines[1][i]
lines[1] = lines[1][:i] + ("b" if c == "a" else "a") + lines[1][i + 1:]
open(p, "w").write("\n".join(lines))
PY
out=$(ctl verify "$work/forged.jsonl" --key "$key" 2>&1)
rc=$?
rule_begin forged_mac_under_the_sealing_key_is_bad
rule_eq exit 1 "$rc"
rule_has says "$out" "bad: row 2: mac does not match"
rule_has why "$out" "the row was forged or altered"
rule_end

rule_begin verify_json_reports_verdict_key_and_seal
ctl verify "$led" --key "$key" --json >"$work/v.json" 2>/dev/null
rule_eq fields "ok $want $want True given" "$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(d["verdict"], d["key_fingerprint"], d["sealed_with"], d["macs_checked"], d["key_source"])' "$work/v.json")"
ctl verify "$led" --key "$work/other.key" --json >"$work/w.json" 2>/dev/null
rule_eq "wrong key" "wrong_key" "$(python3 -c 'import json,sys
print(json.load(open(sys.argv[1]))["verdict"])' "$work/w.json")"
rule_end

: >"$work/empty.jsonl"
out=$(ctl verify "$work/empty.jsonl" --key "$key" 2>&1)
rc=$?
rule_begin a_ledger_without_rows_is_bad
rule_eq exit 1 "$rc"
rule_has says "$out" "bad: the ledger has no rows"
rule_end

rule_begin verify_json_error_object_gives_the_reason
for what in /nonexistent "$work/nonexistent.tar"; do
	out=$(ctl verify "$what" --key "$key" --json 2>/dev/null)
	rule_eq "exit of $what" 2 "$?"
	rule_has "reason of $what" "$out" "\"reason\": \"cannot open $what: No such file or directory\""
done
rule_end

if [ -e /etc/ledgerfs/host.key ] || [ -e /usr/local/etc/ledgerfs/host.key ]; then
	echo "# a default host key exists here: the no-key rows are skipped"
else
	out=$(ctl verify "$led" --require-mac 2>&1)
	rc=$?
	rule_begin require_mac_without_a_key_fails
	rule_eq exit 2 "$rc"
	rule_has says "$out" "--require-mac"
	rule_end
	rule_begin verify_json_prints_one_error_object_when_it_cannot_verify
	for what in "$led --require-mac" /nonexistent; do
		out=$(ctl verify $what --json 2>/dev/null)
		rule_eq "exit of $what" 2 "$?"
		rule_has "object of $what" "$out" '"verdict": "error"'
	done
	rule_end
	out=$(ctl verify "$led" 2>&1)
	rule_begin no_key_says_macs_not_checked
	rule_has says "$out" "MACs not checked (no key)"
	rule_end
fi
# ledgerfs-ledger(5) SEALS: an open case's backing folder keeps its seal
# key file; without it the current epoch's MACs go unchecked, and a row
# rewritten past the latest checkpoint (chain rebuilt) would pass.
cp -a "$backing/cases/V" "$work/noseal"
rm "$work/noseal/ledger.jsonl.seal"
rule_begin an_open_case_folder_without_its_seal_key_file_is_refused
out=$(ctl verify "$work/noseal" --key "$key" 2>/dev/null)
rule_eq "verify exit" 1 "$?"
rule_has verify "$out" "bad: ledger.jsonl.seal is missing: an open case's seal key file"
out=$(ctl evidence "$work/noseal" --key "$key" 2>&1 >/dev/null)
rule_eq "evidence exit" 3 "$?"
rule_has evidence "$out" "ledger.jsonl.seal is missing"
# A ledger file alone (a copy) is not a case folder: said, not refused.
cp "$led" "$work/alone.jsonl"
ctl verify "$work/alone.jsonl" --key "$key" >/dev/null 2>&1 ||
	rule_fail "a ledger file copied alone"
rule_end

# A closed case's seal key file holds no key for its rows: not needed.
lf_start
lf_open_reg W
lf_call W w1 lookup_a >/dev/null
echo close >"$(lf_cdir W)/ctl"
lf_stop
cp -a "$backing/cases/W" "$work/closed-noseal"
rm "$work/closed-noseal/ledger.jsonl.seal"
rule_begin a_closed_case_folder_needs_no_seal_key_file
out=$(ctl verify "$work/closed-noseal" --key "$key" 2>/dev/null)
rule_eq "verify exit" 0 "$?"
rule_has verify "$out" "ok: "
rule_end

lf_finish
