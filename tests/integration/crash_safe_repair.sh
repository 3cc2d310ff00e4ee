#!/bin/sh
# SPDX-License-Identifier: MIT
# crash_safe_repair.sh - repair and naming survive a crash (ledgerfs(8),
# RESTART; ledgerfs-ledger(5), RECOVERY).  A torn-tail repair killed at any
# step (laid on disk as the step leaves it: journal with the tail still
# there, journal after the cut, half a note, note with the journal not yet
# gone) ends in exactly one `recovered` row naming the original torn
# bytes.  A case creation that fails half way frees its name.  A new case
# folder and a renamed file are made durable by flushing their parent.
. "$(dirname "$0")/lib.sh"
lf_setup
fs=$work/fs
mkdir "$fs"
mount -t tmpfs -o size=1m,mode=0755 lfrepair "$fs" || lf_skip_all "cannot mount a tmpfs"
lf_extra_mounts="$fs"
backing=$fs/backing
lf_start

for c in JT JC JH JN; do
	lf_open_reg $c
	lf_call $c a1 lookup_a >/dev/null
	lf_call $c a2 send_a >/dev/null
done
lf_stop || not_ok daemon_stops_cleanly "had to be killed"

torn='{"case_id":"X","phase":"decision","pr'
sha=$(printf '%s' "$torn" | sha256sum | cut -d' ' -f1)
# journal C: the repair journal as written before the cut
journal() {
	_good=$(stat -c %s "$(lf_ledger "$1")")
	printf '{"cut_bytes":%d,"cut_sha256":"%s","good_bytes":%d}\n' \
		"${#torn}" "$sha" "$_good" >"$(lf_ledger "$1").repair"
}
journal JT && printf '%s' "$torn" >>"$(lf_ledger JT)"     # killed before the cut
journal JC                                               # killed after the cut
journal JH && printf '%s' '{"case_id":"JH","cut_bytes":3' >>"$(lf_ledger JH)" # mid-note
journal JN && printf '%s' "$torn" >>"$(lf_ledger JN)"
cp "$(lf_ledger JN).repair" "$work/JN.repair"
lf_start

# one_note C: exactly one recovered row, naming the original tail
one_note() {
	rule_begin "$1"
	rule_eq "recovered rows" 1 "$(lf_rows "$2" '"phase":"recovered"')"
	rule_has "names the torn bytes" "$(grep '"phase":"recovered"' "$(lf_ledger "$2")")" "\"cut_sha256\":\"$sha\""
	rule_eq journal gone "$([ -e "$(lf_ledger "$2").repair" ] && echo there || echo gone)"
	rule_has verify "$(lf_verify "$2" 2>&1)" ok
	rule_eq state registered "$(lf_state "$2")"
	rule_end
}
one_note repair_killed_before_the_cut_is_finished_once JT
one_note repair_killed_after_the_cut_gets_its_note JC
one_note repair_killed_while_writing_its_note_gets_the_journaled_note JH
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
cp "$work/JN.repair" "$(lf_ledger JN).repair"
lf_start
one_note repair_killed_before_its_journal_went_adds_no_second_note JN

# A creation that fails half way (no room for its files) frees the name.
dd if=/dev/zero of="$fs/filler" bs=4k >/dev/null 2>&1
rule_begin failed_case_creation_frees_its_name
if mkdir "$mnt/cases/NEW" 2>/dev/null; then rule_fail "mkdir on a full disk succeeded"; fi
rule_eq "left in backing" "" "$(ls "$backing/cases" | grep NEW)"
rule_eq "listed" "" "$(ls "$mnt/cases" | grep NEW)"
rm -f "$fs/filler"
lf_open_reg NEW || rule_fail "the name stayed blocked"
rule_eq state registered "$(lf_state NEW)"
rule_end
lf_stop || not_ok daemon_stops_cleanly "had to be killed"

# Parents flushed: mkdir of a case flushes cases/; a rename its folder.
if command -v strace >/dev/null; then
	strace -f -qq -y -e trace=fsync,renameat,renameat2,mkdirat -o "$work/trace" \
		"$LEDGERFS" -f --backing="$backing" --key="$key" "$mnt" \
		>>"$work/daemon.out" 2>>"$work/daemon.err" &
	lf_daemon=$!
	i=0
	until [ -d "$mnt/cases" ] || [ $i -gt 200 ]; do i=$((i + 1)); sleep 0.05; done
	lf_open FSYNC
	lf_stop
	rule_begin new_case_folder_and_renames_flush_their_parent
	rule_has "mkdir" "$(cat "$work/trace")" 'mkdirat('
	rule_has "cases/ flushed" "$(grep 'fsync(' "$work/trace")" "<$backing/cases>) = 0"
	rule_has "rename flushed" "$(grep -A3 'case.json.tmp' "$work/trace" | grep 'fsync(')" "<$backing/cases/FSYNC>) = 0"
	rule_end
else
	echo "# SKIP parent flush rows: no strace"
fi
lf_finish
