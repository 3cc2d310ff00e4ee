#!/bin/sh
# SPDX-License-Identifier: MIT
# pattern_heap_shared.sh - the matches of every case running at once
# share one heap budget (ledgerfs-policy(5) PATTERNS, Bounds at match):
# 32 cases each match a 1 MB argument against a pattern that would take
# its own 64 MiB, all at once.  The daemon's peak memory stays near the
# shared 256 MiB, not 32 times 64; a match that would pass the budget is
# refused with ENOBUFS and a refused row, its call id not used up, and the
# same call sent again on its own is decided as any other (here blocked:
# its own match passes the 64 MiB a match may take).
. "$(dirname "$0")/lib.sh"
lf_require python3
lf_setup
lf_start

POLICY='interactions:
  - match: heavy
    mode: mock
default: {mode: block}
'
MOCKS='version: 1
mocks:
  - tool: heavy
    when: {text: {regex: '"'"'^(a|b)*$'"'"'}}
    response: {hit: heavy}
'
N=32
i=1
while [ $i -le $N ]; do
	lf_open_reg "H$i" "$POLICY" "$MOCKS" || not_ok open_case "could not open H$i"
	i=$((i + 1))
done

# calls.py MNT N ROUND: case Hi calls heavy with call id hROUNDi and 1 MB
# of a, all at once; prints "Hi ok" or "Hi ERRNO" for each.
cat >"$work/calls.py" <<'PY'
import errno, os, sys, threading
mnt, n, rnd = sys.argv[1], int(sys.argv[2]), sys.argv[3]
line = ('{"call_id":"h%s%%d","tool":"heavy","args":{"text":"%s"}}\n'
        % (rnd, "a" * 1000000))
go = threading.Barrier(n)
out = {}
def call(i):
    path = "%s/cases/H%d/target/request" % (mnt, i)
    fd = os.open(path, os.O_WRONLY)
    go.wait()
    try:
        os.write(fd, (line % i).encode())
        os.close(fd)
        out[i] = "ok"
    except OSError as e:
        out[i] = errno.errorcode[e.errno]
        try:
            os.close(fd)
        except OSError:
            pass
ts = [threading.Thread(target=call, args=(i,)) for i in range(1, n + 1)]
for t in ts: t.start()
for t in ts: t.join()
for i in range(1, n + 1):
    print("H%d %s" % (i, out.get(i, "none")))
PY

timeout 120 python3 "$work/calls.py" "$mnt" $N 1 >"$work/round1" 2>&1
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$lf_daemon/status")
refused=$(grep -c ' ENOBUFS$' "$work/round1")
decided=$(grep -c ' ok$' "$work/round1")

rule_begin matches_of_all_cases_share_one_heap_budget
# 256 MiB shared, plus each case's 1 MB line and its parsed copies.  A
# sanitizer build keeps freed memory in quarantine: no peak there.
if ! grep -q __asan_init "$LEDGERFS" 2>/dev/null; then
	[ "$hwm" -lt $((512 * 1024)) ] ||
		rule_fail "daemon peak $hwm KiB for $N matches at once (over 512 MiB)"
fi
rule_eq "every call decided or refused" $N $((refused + decided))
[ "$refused" -ge 1 ] || rule_fail "no call refused ENOBUFS"
rule_end
echo "# peak $hwm KiB; $decided decided, $refused refused ENOBUFS"

c=$(grep ' ENOBUFS$' "$work/round1" | head -n1 | cut -d' ' -f1)
n=${c#H}
rule_begin a_match_past_the_shared_heap_is_refused_enobufs_and_recorded
rule_has "target/error" "$(cat "$(lf_tdir "$c")/error")" "ENOBUFS"
rule_has "target/error" "$(cat "$(lf_tdir "$c")/error")" "matching needs more heap than the 256 MiB all calls share"
rule_has "refused row" "$(tail -n1 "$(lf_ledger "$c")")" '"phase":"refused"'
rule_has "refused row" "$(tail -n1 "$(lf_ledger "$c")")" '"refusal":"LF_MATCH_HEAP_FULL"'
rule_has "refused row" "$(tail -n1 "$(lf_ledger "$c")")" '"call_id":"h1'"$n"'"'
rule_end

# The same call, alone: its id was not used up, and it is decided.
reply=$(printf '{"call_id":"h1%s","tool":"heavy","args":{"text":"%s"}}\n' "$n" \
	"$(head -c 1000000 /dev/zero | tr '\0' a)" >"$(lf_tdir "$c")/request" &&
	cat "$(lf_tdir "$c")/reply")
rule_begin a_call_refused_for_heap_is_decided_when_sent_again
rule_has reply "$reply" '"call_id":"h1'"$n"'"'
rule_has reply "$reply" '"mode":"block"'
# (its heap limit, or on a slow sanitizer build the call's CPU budget)
rule_has reply "$reply" '"reason":"pattern_limit: mocks[0].when.text.regex: '
rule_end

lf_finish
