#!/bin/sh
# SPDX-License-Identifier: MIT
# journal_sync.sh - --sync=journal (ledgerfs(8) OPTIONS, RESTART): every
# batch of rows is made durable in BACKING/commit.journal, a file of fixed
# size; the ledgers are flushed when it is full.  After a crash the next
# start writes the journal's rows back into any ledger that lacks them,
# whatever --sync it is given, and only where a row follows its ledger.
. "$(dirname "$0")/lib.sh"
lf_setup
J=$backing/commit.journal

# start_journal: a daemon with a small journal, its start line alone in
# daemon.err.
start_journal() {
	: >"$work/daemon.err"
	lf_start --sync=journal --journal-size=256K
}

# calls C FROM TO: calls cFROM..cTO of case C, each acknowledged.
calls() {
	_i=$2
	while [ "$_i" -le "$3" ]; do
		lf_call "$1" "c$_i" lookup_a >/dev/null ||
			rule_fail "$1: call c$_i not acknowledged"
		_i=$((_i + 1))
	done
}

# drop_rows C K: the ledger loses its last K rows, as if their pages never
# reached the disk before a crash.
drop_rows() {
	_l=$(lf_ledger "$1")
	_keep=$(($(wc -l <"$_l") - $2))
	head -n "$_keep" "$_l" >"$work/tmp/keep"
	truncate -s "$(stat -c %s "$work/tmp/keep")" "$_l"
}

# journal_gen: the generation of the journal's first entry.
journal_gen() {
	od -A n -t u8 -j 8 -N 8 "$J" | tr -d ' '
}

# journal_rows C: the row numbers of case C in the journal's generation
# (its entries: "LFJ1", u32 size, u64 gen, u64 offset, u16 name, u16,
# u32 line, name, line, SHA-256; ledgerfs(8) FILES).
journal_rows() {
	python3 - "$J" "$1" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
off, gen = 0, None
while off + 32 <= len(data) and data[off:off + 4] == b"LFJ1":
    size, g, _, name, _, n = struct.unpack_from("<IQQHHI", data, off + 4)
    if gen is None:
        gen = g
    elif g != gen:
        break
    if name and data[off + 32:off + 32 + name].decode() == sys.argv[2]:
        print(json.loads(data[off + 32 + name:off + 32 + name + n])["row"])
    off += size
PY
}

rule_begin journal_mode_makes_rows_durable_in_one_file_of_fixed_size
start_journal
lf_open_reg A
calls A 1 5
rule_eq "journal size" 262144 "$(stat -c %s "$J")"
rule_eq "rows of A in the journal (all but case_opened)" 6 "$(grep -ac '"case_id":"A"' "$J")"
rule_eq "ledger rows (case_opened, registered, 5 calls)" 7 "$(lf_rows A)"
rule_end

rule_begin acknowledged_rows_lost_from_a_ledger_are_written_back_at_start
lf_kill9
drop_rows A 3
rule_eq "rows left" 4 "$(lf_rows A)"
rule_has "verify before the start says why rows may be missing" \
	"$(lf_verify A 2>&1)" "commit.journal is present: rows acknowledged under --sync=journal"
rule_has "so does evidence" \
	"$("$LEDGERCTL" evidence "$backing/cases/A" --key "$key" 2>&1 >/dev/null)" \
	"ledgerctl evidence: $(cd "$backing" && pwd -P)/commit.journal is present"
"$LEDGERCTL" pubkey --key "$key" >"$work/vkey" 2>/dev/null ||
	rule_fail "no verifier key"
rule_has "and public verification" \
	"$("$LEDGERCTL" verify --pubkey="$work/vkey" "$backing/cases/A" 2>&1 >/dev/null)" \
	"ledgerctl verify: $(cd "$backing" && pwd -P)/commit.journal is present"
start_journal
rule_has "start line" "$(cat "$work/daemon.err")" \
	"commit journal: 6 rows of the last run, 3 written back into their ledgers, 0 skipped"
rule_eq "rows" 7 "$(lf_rows A)"
lf_verify A >/dev/null 2>&1 || rule_fail "A does not verify"
rule_has "the next call" "$(lf_call A c6 lookup_a)" '"sequence":6'
rule_end

rule_begin a_full_journal_flushes_the_ledgers_and_starts_a_new_generation
gen0=$(journal_gen)
lf_open_reg B
calls B 1 500
gen1=$(journal_gen)
[ "$gen1" -gt "$gen0" ] || rule_fail "generation $gen0 -> $gen1 after 500 calls"
rule_eq "B's rows" 502 "$(lf_rows B)"
lf_verify B >/dev/null 2>&1 || rule_fail "B does not verify"
rule_end

rule_begin a_row_that_does_not_follow_its_ledger_is_not_written_back
# Rows of the last generation whose predecessor the ledger lost too (it
# was made durable by a checkpoint, then lost: not the journal's to fix).
lf_kill9
first=$(journal_rows B | head -1)
[ -n "$first" ] && [ "$first" -gt 2 ] || rule_fail "no row of B in this generation"
drop_rows B $((504 - first))
start_journal
rule_has "start line" "$(cat "$work/daemon.err")" \
	"the ledger does not end in the row it follows"
rule_eq "B's rows" $((first - 2)) "$(lf_rows B)"
lf_verify B >/dev/null 2>&1 || rule_fail "B does not verify"
rule_end

rule_begin a_torn_journal_entry_ends_the_replay
lf_open_reg T
calls T 1 4
lf_kill9
# Tear the last entry of T: a byte of its line changes (its call id, so
# that it still reads as a row), its sum no longer matches, and it is not
# written back.
off=$(grep -abo '"call_id":"c4","case_id":"T"' "$J" | tail -1 | cut -d: -f1)
[ -n "$off" ] || rule_fail "T's last call not in the journal"
printf '9' | dd of="$J" bs=1 seek=$((off + 12)) conv=notrunc 2>/dev/null
drop_rows T 2
: >"$work/daemon.err"
lf_start
rule_has "start line" "$(cat "$work/daemon.err")" "written back into their ledgers"
rule_eq "T's rows: all but the torn one" 5 "$(lf_rows T)"
lf_verify T >/dev/null 2>&1 || rule_fail "T does not verify"
rule_end

rule_begin a_start_without_sync_journal_writes_back_then_removes_it
[ ! -e "$J" ] || rule_fail "the journal is still there under --sync=group"
rule_has "T goes on" "$(lf_call T c5 lookup_a)" '"sequence":'
rule_end

rule_begin a_clean_stop_leaves_no_rows_to_write_back
lf_stop
start_journal
lf_call T c6 lookup_a >/dev/null || rule_fail "c6 not acknowledged"
lf_stop || rule_fail "daemon had to be killed"
start_journal
rule_hasnt "start line" "$(cat "$work/daemon.err")" "commit journal"
lf_verify T >/dev/null 2>&1 || rule_fail "T does not verify"
rule_end

rule_begin a_journal_read_as_nothing_starts_a_fresh_generation
# A journal whose first entry is torn reads as nothing.  Right behind the
# new marker (64 bytes) lies a whole entry of generation 1, for no case:
# a start that counted from 0 would take it for one of its own.
lf_stop
python3 - "$J" <<'PY'
import hashlib, struct, sys
name, line = b"ghost", b'{"row":1}\n'
head = b"LFJ1" + struct.pack("<IQQHHI", 32 + len(name) + len(line) + 32, 1, 0,
                             len(name), 0, len(line))
entry = head + name + line
entry += hashlib.sha256(entry).digest()
torn = b"LFJ1" + b"\xff" * 60
data = torn + entry
open(sys.argv[1], "wb").write(data + b"\0" * (262144 - len(data)))
PY
start_journal
lf_kill9
start_journal
rule_hasnt "start line" "$(cat "$work/daemon.err")" "commit journal"
lf_verify T >/dev/null 2>&1 || rule_fail "T does not verify"
rule_end

rule_begin a_ledger_that_cannot_be_opened_keeps_the_journal_and_refuses_the_start
# Not a case that is gone (that ledger is skipped) but one the start
# cannot open: its rows stay in the journal until a start can.
lf_open_reg U
calls U 1 3
lf_kill9
drop_rows U 1
l=$(lf_ledger U)
mv "$l" "$l.away" && ln -s ledger.jsonl.away "$l"
out=$(timeout 20 "$LEDGERFS" -f --backing="$backing" --key="$key" \
	--sync=journal --journal-size=256K "$mnt" 2>&1)
rule_eq status 1 $?
rule_has message "$out" \
	"commit journal: cannot open cases/U/ledger.jsonl to write back a row"
lf_mounted && rule_fail "mounted anyway"
rule_eq "U's rows still in the journal" "3 4 5" "$(journal_rows U | tail -3 | tr '\n' ' ' | sed 's/ $//')"
rm "$l" && mv "$l.away" "$l"
start_journal
rule_has "start line" "$(cat "$work/daemon.err")" "1 written back into their ledgers"
rule_eq "U's rows" 5 "$(lf_rows U)"
lf_verify U >/dev/null 2>&1 || rule_fail "U does not verify"
rule_end

rule_begin journal_and_pad_ledger_are_refused_together_as_a_usage_error
lf_stop
out=$(timeout 20 "$LEDGERFS" -f --backing="$backing" --key="$key" \
	--sync=journal --pad-ledger=64K "$mnt" 2>&1)
rule_eq status 2 $?
rule_has message "$out" "--pad-ledger and --sync=journal do not go together"
lf_mounted && rule_fail "mounted anyway"
rule_end
rule_begin journal_mode_is_refused_where_syncfs_is_not_durable
mkdir -m 0755 "$work/ramfs"
if mount -t ramfs -o mode=0755 ramfs "$work/ramfs"; then
	lf_extra_mounts="$work/ramfs"
	mkdir -m 0700 "$work/ramfs/backing"
	out=$(timeout 20 "$LEDGERFS" -f --backing="$work/ramfs/backing" \
		--key="$key" --sync=journal "$mnt" 2>&1)
	rule_eq status 1 $?
	rule_has message "$out" "--sync=journal needs group commit"
	lf_mounted && rule_fail "mounted anyway"
else
	rule_fail "cannot mount a ramfs"
fi
rule_end
lf_finish
