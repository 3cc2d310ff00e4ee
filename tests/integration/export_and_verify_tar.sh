#!/bin/sh
# SPDX-License-Identifier: MIT
# export_and_verify_tar.sh - `ledgerctl export CASE FILE.tar` hands a case
# on as a ustar archive (ledgerctl(1) EXPORT): ledger, case.json, status,
# policy, mocks, evidence, the verify report and SHA256SUMS; tar(1) and
# sha256sum(1) read it, `ledgerctl verify FILE.tar` checks it, and a
# changed member, a changed ledger or a foreign member is found.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || lf_skip_all "no python3"
lf_setup
lf_start
lf_open_reg E
# The case's first seal key, shown once: every MAC of an export checks.
cat "$mnt/cases/E/seal_key" >"$work/E.k0"
lf_call E c1 lookup_a >/dev/null
lf_call E c2 send_mail >/dev/null
ctl() { timeout 60 "$LEDGERCTL" --mount "$mnt" "$@"; }
tarf=$work/E.tar

out=$(ctl export E "$tarf" --backing "$backing" --key "$key" 2>&1)
rc=$?
rule_begin export_writes_every_member
rule_eq exit 0 "$rc"
names=$(tar -tf "$tarf" | sort | tr '\n' ' ')
rule_eq members "E/SHA256SUMS E/case.json E/evidence.json E/ledger.jsonl E/mocks.json E/policy.json E/status.json E/verify.json " "$names"
rule_end

mkdir "$work/x"
tar -xf "$tarf" -C "$work/x"
rule_begin export_matches_the_backing_ledger_and_sha256sum
cmp -s "$work/x/E/ledger.jsonl" "$(lf_ledger E)" || rule_fail "ledger differs"
(cd "$work/x/E" && sha256sum -c --quiet SHA256SUMS) >/dev/null 2>&1 || rule_fail "sha256sum -c"
rule_has evidence "$(cat "$work/x/E/evidence.json")" '"call_id": "c2"'
rule_has report "$(cat "$work/x/E/verify.json")" '"verdict": "ok"'
rule_end

# ledgerctl(1) export: evidence.json as `evidence` prints it, byte for byte.
rule_begin export_evidence_is_what_evidence_prints
ctl evidence "$mnt/cases/E" >"$work/E.evidence" 2>"$work/E.evidence.err" ||
	rule_fail "evidence: $(cat "$work/E.evidence.err")"
cmp -s "$work/x/E/evidence.json" "$work/E.evidence" ||
	rule_fail "differs: $(diff "$work/x/E/evidence.json" "$work/E.evidence" | head -5 | tr '\n' ' ')"
rule_end

out=$(ctl verify "$tarf" --key "$key" --seal-key "$work/E.k0" 2>&1)
rc=$?
rule_begin verify_tar_accepts_the_export
rule_eq exit 0 "$rc"
rule_has says "$out" "ok: $tarf: case E, 7 files match SHA256SUMS"
rule_has macs "$out" "MACs checked"
rule_end

# An auditor holding K0 alone checks every MAC of the export.
if [ ! -e /etc/ledgerfs/host.key ] && [ ! -e /usr/local/etc/ledgerfs/host.key ]; then
	out=$(ctl verify "$tarf" --seal-key "$work/E.k0" --require-mac 2>&1)
	rc=$?
	rule_begin verify_tar_with_k0_alone_and_require_mac_checks_every_mac
	rule_eq exit 0 "$rc"
	rule_has macs "$out" "MACs checked"
	rule_end
fi

out=$(ctl evidence "$tarf" --key "$key" 2>&1)
rc=$?
rule_begin evidence_of_an_export_points_to_its_member_and_to_verify
rule_eq exit 2 "$rc"
rule_has says "$out" "is an export: its evidence is the member evidence.json"
rule_end

rule_begin verify_tar_json
ctl verify "$tarf" --key "$key" --json >"$work/t.json" 2>/dev/null
rule_eq fields "ok ok ok" "$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(d["verdict"], d["ledger"]["verdict"], d["files"]["ledger.jsonl"])' "$work/t.json")"
rule_end

# repack DIR OUT: the extracted folder back into a ustar archive
repack() { (cd "$1" && tar --format=ustar -cf "$2" E/*); }
# resum DIR: SHA256SUMS made again for the members DIR/E holds now
resum() { (cd "$1/E" && for f in *; do [ "$f" = SHA256SUMS ] || sha256sum "$f"; done >SHA256SUMS); }

cp -r "$work/x" "$work/y"
printf '{"tampered":true}\n' >"$work/y/E/policy.json"
repack "$work/y" "$work/policy.tar"
out=$(ctl verify "$work/policy.tar" --key "$key" 2>&1)
rc=$?
rule_begin verify_tar_finds_a_changed_member
rule_eq exit 1 "$rc"
rule_has says "$out" "bad: policy.json: mismatch"
rule_has says "$out" "bad: $work/policy.tar: case E, 1 of 7 files do not match SHA256SUMS"
rule_hasnt says "$out" "files match SHA256SUMS"
rule_end

rm -rf "$work/y" && cp -r "$work/x" "$work/y"
sed -i '$d' "$work/y/E/ledger.jsonl"
(cd "$work/y/E" && sha256sum ledger.jsonl case.json status.json policy.json \
	mocks.json evidence.json verify.json >SHA256SUMS)
repack "$work/y" "$work/cut.tar"
out=$(ctl verify "$work/cut.tar" --key "$key" 2>&1)
rc=$?
rule_begin verify_tar_finds_a_ledger_its_report_does_not_describe
rule_eq exit 1 "$rc"
rule_has says "$out" "verify.json does not describe ledger.jsonl"
rule_end

rm -rf "$work/y" && cp -r "$work/x" "$work/y"
echo extra >"$work/y/E/notes.txt"
repack "$work/y" "$work/extra.tar"
out=$(ctl verify "$work/extra.tar" --key "$key" 2>&1)
rc=$?
rule_begin verify_tar_finds_an_unlisted_member
rule_eq exit 1 "$rc"
rule_has says "$out" "bad: notes.txt: unlisted"
rule_has says "$out" "bad: $work/extra.tar: case E, 1 of 8 files do not match SHA256SUMS"
rule_hasnt says "$out" "files match SHA256SUMS"
rule_end

# The evidence of a large case grows with its ledger, past the bound of
# the other members (64 MiB): the same evidence followed by 65 MiB of
# white space (the same JSON document), SHA256SUMS made again.
rm -rf "$work/y" && cp -r "$work/x" "$work/y"
head -c $((65 << 20)) /dev/zero | tr '\0' ' ' >>"$work/y/E/evidence.json"
resum "$work/y"
repack "$work/y" "$work/big.tar"
rm -rf "$work/y"
out=$(ctl verify "$work/big.tar" --key "$key" 2>&1)
rc=$?
rm -f "$work/big.tar"
rule_begin verify_tar_reads_evidence_as_large_as_a_ledger
rule_eq exit 0 "$rc"
rule_has says "$out" "ok: $work/big.tar: case E, 7 files match SHA256SUMS"
rule_end

rm -rf "$work/y" && mkdir -p "$work/y/E/sub"
cp "$work/x/E/"* "$work/y/E/"
repack "$work/y" "$work/dir.tar"
out=$(ctl verify "$work/dir.tar" --key "$key" 2>&1)
rc=$?
rule_begin verify_tar_refuses_what_is_not_an_export
rule_eq exit 2 "$rc"
rule_has says "$out" "not a plain file of one case folder"
rule_end

# A closed case: --key reaches no MAC (its last epoch is empty), so a row
# changed with every later prev recomputed, and SHA256SUMS and verify.json
# made to match, is found by the signed checkpoints the export carries.
echo close >"$mnt/cases/E/ctl"
ctl export E "$work/closed.tar" --backing "$backing" --key "$key" >/dev/null 2>&1
out=$(ctl verify "$work/closed.tar" --key "$key" 2>&1)
rc=$?
rule_begin verify_tar_key_checks_the_signed_checkpoints_it_carries
rule_eq exit 0 "$rc"
rule_has says "$out" "signed checkpoint(s) match the ledger"
rule_has "the report inside counts them" \
	"$(tar -xOf "$work/closed.tar" E/verify.json)" '"checkpoints": 2'
rule_end
out=$(ctl verify "$work/closed.tar" --key "$key" --require-mac 2>&1)
rc=$?
rule_begin verify_tar_require_mac_exits_2_when_the_key_reaches_no_mac
rule_eq exit 2 "$rc"
rule_has says "$out" "no MAC checked (--require-mac)"
rule_end
rm -rf "$work/y" && mkdir "$work/y" && tar -xf "$work/closed.tar" -C "$work/y"
python3 - "$work/y/E" <<'FORGE'
import hashlib, json, os, sys
d = sys.argv[1]
lines = open(os.path.join(d, "ledger.jsonl"), "rb").read().split(b"\n")[:-1]
k = next(i for i, l in enumerate(lines) if b'"tool":"lookup_a"' in l)
lines[k] = lines[k].replace(b'"tool":"lookup_a"', b'"tool":"lookup_z"')
for i in range(k + 1, len(lines)):
    prev = hashlib.sha256(lines[i - 1]).hexdigest().encode()
    j = lines[i].index(b'"prev":"') + 8
    lines[i] = lines[i][:j] + prev + lines[i][j + 64:]
open(os.path.join(d, "ledger.jsonl"), "wb").write(b"\n".join(lines) + b"\n")
v = json.load(open(os.path.join(d, "verify.json")))
v["head"] = hashlib.sha256(lines[-1]).hexdigest()
json.dump(v, open(os.path.join(d, "verify.json"), "w"))
FORGE
resum "$work/y"
repack "$work/y" "$work/forged.tar"
out=$(ctl verify "$work/forged.tar" --key "$key" 2>&1)
rc=$?
rule_begin verify_tar_key_finds_a_forged_row_of_a_closed_epoch_by_its_checkpoints
rule_eq exit 1 "$rc"
rule_has says "$out" "do not have the tree root signed in"
rule_end

# The same closed export with its checkpoint members dropped (and
# SHA256SUMS made again): the close's checkpoint is missing.
rm -rf "$work/y" && mkdir "$work/y" && tar -xf "$work/closed.tar" -C "$work/y"
rm -f "$work/y/E/checkpoint" "$work/y/E/checkpoints"
resum "$work/y"
repack "$work/y" "$work/nockpt.tar"
out=$(ctl verify "$work/nockpt.tar" --key "$key" 2>&1)
rc=$?
rule_begin verify_tar_key_finds_the_checkpoints_dropped
rule_eq exit 1 "$rc"
rule_has says "$out" "no signed checkpoint of the"
rule_end

out=$(ctl export NOPE "$work/n.tar" --backing "$backing" --key "$key" 2>&1)
rc=$?
rule_begin export_of_an_unknown_case_fails
rule_eq exit 2 "$rc"
[ -e "$work/n.tar" ] && rule_fail "archive written"
rule_has "names the view's folder" "$out" "$mnt/cases/NOPE: No such file or directory"
rule_end

rule_begin export_with_the_wrong_backing_folder_names_it
out=$(ctl export E "$work/w.tar" --backing "$work/tmp" --key "$key" 2>&1)
rule_eq exit 2 "$?"
rule_has reason "$out" "$work/tmp/cases/E: No such file or directory (--backing"
rule_end

rule_begin export_with_another_key_says_wrong_key_and_exits_2
head -c 32 /dev/urandom >"$work/other.key"
chmod 600 "$work/other.key"
out=$(ctl export E "$work/w.tar" --backing "$backing" --key "$work/other.key" 2>&1)
rule_eq exit 2 "$?"
rule_has reason "$out" "ledgerctl export: E: wrong key: sealed with key "
[ -e "$work/w.tar" ] && rule_fail "archive written"
rule_end
lf_finish
