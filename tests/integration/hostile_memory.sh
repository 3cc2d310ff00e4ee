#!/bin/sh
# SPDX-License-Identifier: MIT
# hostile_memory.sh - ledgerfs(8) LIMITS: a target holding many
# descriptors, each with a large unterminated line, cannot grow the
# daemon past --max-pending (nor past its case's share of it).  Lines
# past the bound are refused with ENOBUFS, a bounded refused row and the
# reason in error; another case keeps calling, even with lines that span
# writes; closing the descriptors gives the memory back.  Replies held for
# descriptors that never read them, and copies of target files held
# open, are bounded the same way.
. "$(dirname "$0")/lib.sh"
lf_setup
LFHOLD=$top_builddir/tests/integration/lfhold
[ -x "$LFHOLD" ] || lf_skip_all "$LFHOLD not built"

# rss_kb: the daemon's resident memory now
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$lf_daemon/status"; }
# A sanitizer build keeps freed memory in quarantine: skip RSS figures.
sanitized=
if grep -q __asan_init "$LEDGERFS" 2>/dev/null; then sanitized=1; fi

# 1 MiB for the daemon, a quarter of it (256 KiB) for one case; a held
# line of 60 KiB takes a 64 KiB buffer, so one case holds 4 of them.
lf_start --max-line=65536 --max-pending=1M --max-refused=8
lf_open_reg A
lf_open_reg B
rss0=$(rss_kb)

mkfifo "$work/hold.in"
"$LFHOLD" "$(lf_tdir A)/request" 64 61440 <"$work/hold.in" >"$work/hold.out" 2>&1 &
hold=$!
lf_bg_pids=$hold
exec 3>"$work/hold.in"
i=0
until grep -q '^ready' "$work/hold.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] || break
	sleep 0.05
done
summary=$(head -n1 "$work/hold.out")
rule_begin lines_past_a_cases_share_of_max_pending_are_refused_with_ENOBUFS
rule_has summary "$summary" "held=4 refused=60 first_error=ENOBUFS"
rule_eq "refused rows (bounded by --max-refused)" 8 "$(lf_rows A '"refusal":"LF_PENDING_FULL"')"
rule_has "error file" "$(cat "$(lf_tdir A)/error")" \
	"ENOBUFS request: partial lines past the limit of 1048576 bytes for the daemon (--max-pending), 262144 for one case"
rule_end

# another case, while A holds its share: whole lines, and a line that
# spans many writes (the view holds it between them)
hd='{"call_id":"b-split","tool":"lookup_a","args":{"s":"'
rule_begin another_case_calls_while_a_target_holds_partial_lines
for n in 1 2 3; do
	rule_has "call b$n" "$(lf_call B "b$n" lookup_a)" '"mode":"pass"'
done
out=$(lf_write B request "$hd" --repeat-byte x 30000 --repeat-byte x 30000 '"}}\n')
rule_hasnt "split line" "$out" "write=E"
rule_has "split line close" "$out" "close=OK"
rule_eq "split line decided" 1 "$(lf_rows B '"call_id":"b-split"')"
rule_end

# the daemon-wide bound: three more cases take their shares (1 MiB in
# all), and a fifth case's holder finds nothing left
holders=$hold
for c in C F G; do
	lf_open_reg "$c"
	# (not holding the fifo's write end itself: 3>&-)
	"$LFHOLD" "$(lf_tdir "$c")/request" 8 61440 <"$work/hold.in" >"$work/hold$c.out" 2>&1 3>&- &
	holders="$holders $!"
	lf_bg_pids=$holders
	i=0
	until grep -q '^ready' "$work/hold$c.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 600 ] || break
		sleep 0.05
	done
done
lf_open_reg H
"$LFHOLD" "$(lf_tdir H)/request" 2 61440 </dev/null >"$work/holdH.out" 2>&1
rule_begin lines_past_the_daemon_wide_max_pending_are_refused_with_ENOBUFS
rule_has "C, F, G: a share each" "$(head -qn1 "$work/holdC.out" "$work/holdF.out" "$work/holdG.out" | sort -u)" "held=4 refused=4 first_error=ENOBUFS"
rule_has "H: nothing left" "$(head -n1 "$work/holdH.out")" "held=0 refused=2 first_error=ENOBUFS"
rule_has "H's error file" "$(cat "$(lf_tdir H)/error")" "ENOBUFS request: partial lines past the limit"
rule_has "H calls with whole lines" "$(lf_call H h1 lookup_a)" '"mode":"pass"'
rule_end
if [ -z "$sanitized" ]; then
	rss1=$(rss_kb)
	echo "# RSS: ${rss0} kB before, ${rss1} kB while 16 x 60 KiB lines are held"
fi

# close the holder: every byte goes back, so a case can hold again
exec 3>&-
for p in $holders; do wait "$p" 2>/dev/null; done
lf_bg_pids=
"$LFHOLD" "$(lf_tdir A)/request" 4 61440 </dev/null >"$work/hold2.out" 2>&1
rule_begin closing_descriptors_gives_their_partial_lines_back
rule_has "closed" "$(cat "$work/hold.out")" "closed"
rule_has "A holds again" "$(head -n1 "$work/hold2.out")" "held=4 refused=0"
rule_end

# Scaled up: 400 descriptors with 1 MiB lines under the default line
# limit and a 16 MiB bound.  The daemon's resident memory stays near the
# bound and comes back down after the close (glibc returns the buffers).
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
lf_start --max-pending=16M --max-refused=8
lf_open_reg D
lf_open_reg E
rss0=$(rss_kb)
mkfifo "$work/hold3.in"
"$LFHOLD" "$(lf_tdir D)/request" 400 1048000 <"$work/hold3.in" >"$work/hold3.out" 2>&1 &
hold=$!
lf_bg_pids=$hold
exec 4>"$work/hold3.in"
i=0
until grep -q '^ready' "$work/hold3.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 1200 ] || break
	sleep 0.05
done
rss1=$(rss_kb)
rule_begin four_hundred_descriptors_of_1MiB_lines_stay_within_max_pending
rule_has summary "$(head -n1 "$work/hold3.out")" "held=4 refused=396 first_error=ENOBUFS"
rule_has "E calls meanwhile" "$(lf_call E e1 lookup_a)" '"mode":"pass"'
if [ -z "$sanitized" ]; then
	grow=$(((rss1 - rss0) / 1024))
	echo "# RSS: ${rss0} kB before, ${rss1} kB during (+${grow} MiB)"
	[ "$grow" -le 64 ] || rule_fail "RSS grew by $grow MiB (bound 16 MiB + libfuse's buffers)"
fi
rule_end
exec 4>&-
wait "$hold" 2>/dev/null
lf_bg_pids=
if [ -z "$sanitized" ]; then
	sleep 0.5
	rss2=$(rss_kb)
	echo "# RSS: ${rss2} kB after the close"
	rule_begin memory_of_closed_descriptors_goes_back_to_the_system
	[ $(((rss2 - rss0) / 1024)) -le 32 ] ||
		rule_fail "RSS still $(((rss2 - rss0) / 1024)) MiB above the start"
	rule_end
fi
# What a target's reads make the daemon hold: replies kept for read-write
# descriptors that never read them, and copies of its files held open.
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
lf_start --max-pending=4M --max-calls=1 --max-refused=8
lf_open_reg R
mkdir "$mnt/cases/T"
printf '%s' "$LF_POLICY_DEFAULT" >"$mnt/cases/T/policy"
python3 -c 'import json,sys
json.dump({"tools": [{"name": "t%04d" % i, "description": "x" * 900} for i in range(900)]}, sys.stdout)' \
	>"$mnt/cases/T/tools"
lf_register T
lf_open_reg U
held=$(python3 - "$(lf_tdir R)/request" <<'PY'
import os, sys
# Eight read-write descriptors, 3000 calls each (past --max-calls, so
# no flush), never read until the end: then what each still holds.
fds = [os.open(sys.argv[1], os.O_RDWR) for _ in range(8)]
for k, fd in enumerate(fds):
    lines = "".join('{"call_id":"r%d-%d","tool":"lookup_a","args":{}}\n' % (k, i)
                    for i in range(3000)).encode()
    while lines:
        lines = lines[os.write(fd, lines):]
total = 0
for fd in fds:
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            break
        total += len(b)
print(total)
PY
)
rule_begin replies_never_read_are_kept_within_max_pending_for_all_descriptors
[ -n "$held" ] && [ "$held" -le $((4 * 1024 * 1024 + 8 * 4096)) ] ||
	rule_fail "held $held bytes of replies, past 4 MiB"
[ -n "$held" ] && [ "$held" -gt $((2 * 1024 * 1024)) ] ||
	rule_fail "held only $held bytes"
rule_end
out=$(python3 - "$(lf_tdir T)/tools" "$(lf_tdir U)/tools" <<'PY'
import errno, os, sys
fds, err = [], "none"
for _ in range(40):
    try:
        fds.append(os.open(sys.argv[1], os.O_RDONLY))
    except OSError as e:
        err = errno.errorcode[e.errno]
        break
other = len(open(sys.argv[2]).read())
print(len(fds), err, other)
PY
)
rule_begin copies_of_target_files_held_open_are_bounded_per_case
set -- $out
rule_eq "opens of T's 0.8 MiB tools before the bound" 1 "$1"
rule_eq "then" ENOBUFS "$2"
[ "${3:-0}" -gt 0 ] || rule_fail "U cannot read its own tools meanwhile"
rule_end

# Folder handles held open on a long replies/ listing: each holds one
# read buffer, not a copy of the listing (ledgerfs(8) LIMITS).  3,000
# calls with 200-byte ids make a 0.6 MiB listing; 300 handles on it held
# 180 MiB before.
lf_stop
lf_start --max-pending=4M
lf_open_reg L "interactions:
  - match: '*'
    mode: mock
    mock: {ok: 1}
" ""
python3 - "$(lf_tdir L)" <<'PY'
import os, sys
fd = os.open(sys.argv[1] + "/request", os.O_RDWR)
for i in range(3000):
    os.write(fd, ('{"call_id":"c%05d-%s","tool":"t","args":{}}\n' % (i, "x" * 200)).encode())
    os.read(fd, 65536)
PY
rss0=$(rss_kb)
python3 - "$(lf_tdir L)/replies" "$work/dirs-held" <<'PY' &
import os, sys, time
its = []
for i in range(300):
    it = os.scandir(sys.argv[1]); next(it); its.append(it)
open(sys.argv[2], "w").write("%d" % len(its))
time.sleep(30)
PY
hpid=$!
lf_bg_pids="$lf_bg_pids $hpid"
i=0
until [ -s "$work/dirs-held" ] || [ $i -gt 600 ]; do i=$((i + 1)); sleep 0.05; done
rss1=$(rss_kb)
kill "$hpid" 2>/dev/null
wait "$hpid" 2>/dev/null
echo "# RSS: ${rss0} kB before, ${rss1} kB with 300 handles on a 3,000-entry replies/"
rule_begin folder_handles_held_open_hold_a_buffer_not_the_listing
rule_eq "handles" 300 "$(cat "$work/dirs-held" 2>/dev/null)"
rule_eq "grew under 48 MiB" yes "$([ $(((rss1 - rss0) / 1024)) -lt 48 ] && echo yes || echo "no: +$(((rss1 - rss0) / 1024)) MiB")"
rule_eq "listed whole" "3000 3000" "$(ls "$(lf_tdir L)/replies" | wc -l) $(ls "$(lf_tdir L)/replies" | sort -u | wc -l)"
rule_end

# ledgerfs(8) LIMITS: a target's open files and folders are counted per
# case; the one past the bound gets EMFILE, other cases and the host
# still open theirs, and closing them gives the room back.
lf_open_reg H
rule_begin a_targets_open_files_and_folders_are_bounded_per_case
out=$(timeout 120 python3 - "$(lf_tdir H)" "$(lf_tdir L)" "$mnt/cases/H" <<'PY'
import errno, os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
tdir, other, host = sys.argv[1:]
# 512 folders (16 each) and files up to 16384 in all.
held, err = [], None
while len(held) < 19000:
    try:
        held.append(os.open(tdir + ("/replies" if len(held) < 512 else "/error"),
                            os.O_RDONLY))
    except OSError as e:
        err = errno.errorcode[e.errno]
        break
print("held", len(held), err)
for p in (other + "/replies", host + "/status"):
    try:
        os.close(os.open(p, os.O_RDONLY))
        print("opened", p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1])
    except OSError as e:
        print("refused", p, errno.errorcode[e.errno])
for fd in held:
    os.close(fd)
os.close(os.open(tdir + "/replies", os.O_RDONLY))
print("after closing: opened")
PY
)
rule_has "bounded" "$out" "held $((512 + 16384 - 512 * 16)) EMFILE"
rule_has "another case" "$out" "opened target/replies"
rule_has "the host" "$out" "opened H/status"
rule_has "given back" "$out" "after closing: opened"
rule_end

# A case closed while its target holds partial lines: they hold nothing
# any more (ledgerfs(8) LIFECYCLE), so other cases get the room back.
lf_stop
lf_start --max-line=65536 --max-pending=1M --max-refused=8
for c in P1 P2 P3 P4; do
	lf_open_reg "$c"
	(sleep 60.7 | "$LFHOLD" "$(lf_tdir "$c")/request" 4 61440 >"$work/hold$c.out" 2>&1) &
	lf_bg_pids="$lf_bg_pids $!"
	i=0
	until grep -q '^ready' "$work/hold$c.out" 2>/dev/null || [ $i -gt 600 ]; do
		i=$((i + 1))
		sleep 0.05
	done
done
lf_open_reg P5
"$LFHOLD" "$(lf_tdir P5)/request" 2 61440 </dev/null >"$work/holdP5a.out" 2>&1
for c in P1 P2 P3 P4; do echo close >"$(lf_cdir "$c")/ctl"; done
"$LFHOLD" "$(lf_tdir P5)/request" 2 61440 </dev/null >"$work/holdP5b.out" 2>&1
rule_begin closing_a_case_gives_back_the_partial_lines_its_target_holds
rule_has "before the close" "$(head -n1 "$work/holdP5a.out")" "held=0 refused=2 first_error=ENOBUFS"
rule_has "after it" "$(head -n1 "$work/holdP5b.out")" "held=2 refused=0"
rule_end
pkill -f "sleep 60.7" 2>/dev/null

rule_begin ledgers_verify_after_the_memory_attack
for c in D E; do
	v=$(lf_verify "$c" 2>&1) || rule_fail "$c: $v"
done
rule_end
lf_finish
