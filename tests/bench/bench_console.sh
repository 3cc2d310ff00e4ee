#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_console.sh - how `ledgerctl console` copes with many cases and a
# long one (ledgerctl(1) CONSOLE): a real mount with IDLE (default 1000)
# registered cases and one case of CALLS (default 100000) calls, then the
# time of the console's JSON requests, cold (first look: the ledger is
# read and checked once) and warm, and the console's memory.
# Not part of `make check`; run as root from the build folder:
#   sh ../../tests/bench/bench_console.sh
# The backing folder is on /dev/shm, so filling it costs no flushes.
set -u
B=${top_builddir:-$(pwd)}
S=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
IDLE=${IDLE:-1000}
CALLS=${CALLS:-100000}
WORK=$(mktemp -d /dev/shm/lfconsole.XXXXXX) || exit 2
chmod 0755 "$WORK"
mkdir -m 0700 "$WORK/backing" "$WORK/keys"
mkdir "$WORK/mnt"
DPID= CPID=
cleanup() {
	[ -n "$CPID" ] && kill "$CPID" 2>/dev/null
	fusermount3 -u "$WORK/mnt" 2>/dev/null || umount -l "$WORK/mnt" 2>/dev/null
	[ -n "$DPID" ] && { kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$B/ledgerfs" -f --backing="$WORK/backing" --key="$WORK/keys/host.key" \
	"$WORK/mnt" >"$WORK/daemon.log" 2>&1 &
DPID=$!
until [ -d "$WORK/mnt/cases" ]; do sleep 0.1; done
P=$S/tests/bench/bench.policy.json M=$S/tests/bench/bench.mocks.json
t0=$(date +%s.%N)
"$B/tests/bench/bench_client" open --target "$WORK/mnt" --cases "$IDLE" \
	--prefix idle- --procs 4 --policy "$P" --mocks "$M" | grep OPENED
"$B/tests/bench/bench_client" run --mode fuse --target "$WORK/mnt" \
	--clients 1 --calls "$CALLS" --prefix big- --policy "$P" --mocks "$M" |
	grep -o 'RESULT.*calls=[0-9]*'
t1=$(date +%s.%N)
echo "filled in $(echo "$t1 - $t0" | bc) s: big-0 has $(grep -c '' "$WORK/mnt/cases/big-0/ledger") rows, $(du -h "$WORK/backing/cases/big-0/ledger.jsonl" | cut -f1)"

"$B/ledgerctl" console --key="$WORK/keys/host.key" "$WORK/mnt" >"$WORK/url" 2>"$WORK/console.err" &
CPID=$!
until grep -q console: "$WORK/url" 2>/dev/null; do sleep 0.05; done
URL=$(sed -n 's/^console: //p' "$WORK/url")
TOK=${URL##*token=}
BASE=${URL%%/\?*}
get() { # LABEL PATH: time one request
	curl -s -o "$WORK/body" -w "%{http_code} %{time_total}" \
		-H "Authorization: Bearer $TOK" "$BASE$2" >"$WORK/t"
	printf '%-44s %s s, %s bytes\n' "$1" "$(cut -d' ' -f2 "$WORK/t")" \
		"$(wc -c <"$WORK/body" | tr -d ' ')"
}
get "big case alone, cold (one refresh)" "/api/cases/big-0?limit=0"
get "case list, first page (cold)" "/api/cases?limit=100"
get "case list, first page (warm)" "/api/cases?limit=100"
n=2
while ! curl -s -H "Authorization: Bearer $TOK" "$BASE/api/cases/big-0?limit=0" | grep -q '"status":"ok"'; do
	n=$((n + 1))
done
echo "big case fully read and checked after $n requests"
get "case list, first page (warm, all read)" "/api/cases?limit=100"
s=$(date +%s.%N)
o=0
while [ $o -lt $((IDLE + 1)) ]; do
	get "  page offset=$o (cold)" "/api/cases?offset=$o&limit=100" >/dev/null
	o=$((o + 100))
done
echo "case list, every page once (cold):            $(echo "$(date +%s.%N) - $s" | bc) s"
get "big case, status + 100 rows (cold)" "/api/cases/big-0?limit=100"
get "big case, status + 100 rows (warm)" "/api/cases/big-0?limit=100"
get "big case, last 100 rows" "/api/cases/big-0?offset=$((2 * CALLS))&limit=100"
get "big case, calls page at the end" "/api/cases/big-0/calls?offset=$((CALLS - 100))&limit=100"
get "big case, series" "/api/cases/big-0/series"
head -c 300 "$WORK/body"; echo
grep -o '"verify":{[^}]*}' "$WORK/body" 2>/dev/null
get "big case verify" "/api/cases/big-0?limit=0"
grep -o '"verify":{[^}]*}' "$WORK/body"
echo "console resident memory: $(ps -o rss= -p "$CPID" | tr -d ' ') KiB"
