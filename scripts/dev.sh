#!/bin/bash
# SPDX-License-Identifier: MIT
# dev.sh - everything a fresh Debian machine needs, then one job:
#   sudo scripts/dev.sh demo   install, build, run a real case end to end
#   sudo scripts/dev.sh test   install, build, run every test (plain, then
#                              ASan + UBSan), plus a short libFuzzer run
#   sudo scripts/dev.sh bench  install, build, run the benchmark
#                              (tests/bench/run_bench.sh; README, Performance)
# Builds go to build/plain and build/asan; the source tree stays clean.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
job=${1:-}
case $job in demo | test | bench) ;; *) echo "usage: $0 demo|test|bench" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "$0: run as root (it installs packages and mounts FUSE)" >&2; exit 2; }

packages="build-essential autoconf automake libtool pkg-config fuse3 libfuse3-dev
	libjansson-dev libgcrypt20-dev libyaml-dev libcriterion-dev bubblewrap
	acl attr util-linux procps jq clang libclang-rt-14-dev clang-format
	libpcre2-dev libmicrohttpd-dev libsystemd-dev systemd python3-yaml
	python3-cryptography python3-selenium chromium chromium-driver curl strace"
missing=$(dpkg-query -W -f='${Package} ${Status}\n' $packages 2>/dev/null |
	awk '$NF != "installed" {print $1}'; for p in $packages; do
	dpkg-query -W "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
	echo "== installing: $(echo $missing | tr '\n' ' ')"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq $packages >/dev/null
fi
# Node.js (with npm) comes with the machine image; Debian's is the fallback.
command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
[ -e /dev/fuse ] || modprobe fuse

cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] || autoreconf -fi >/dev/null

# The system's own folders, so an installed daemon finds its key in /etc
# and its ledgers in /var (ledgerfs(8) FILES), as README says.
dirs="--sysconfdir=/etc --localstatedir=/var --runstatedir=/run"

build() { # build DIR CONFIGURE-ARGS...
	local dir=$1
	shift
	mkdir -p "$dir"
	(cd "$dir" && { [ -f Makefile ] || "$top/configure" -q "$@"; } && make -s -j"$(nproc)")
}

summary() { # summary LOGFILE LABEL: the plain closing line from automake's
	local pass fail
	pass=$(grep -cE '^(PASS|XFAIL):' "$1" || true)
	fail=$(grep -cE '^(FAIL|XPASS|ERROR):' "$1" || true)
	echo "$2: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

if [ "$job" = demo ]; then
	build build/plain --enable-werror $dirs
	LEDGERFS_BUILD="$top/build/plain" exec "$top/examples/run-case.sh"
fi
if [ "$job" = bench ]; then
	build build/plain --enable-werror $dirs
	exec make -s -C build/plain bench
fi

echo "== style (clang-format, .clang-format)"
clang-format --dry-run --Werror src/*.[ch] fs/*.[ch] ctl/*.[ch] ctl/console/*.[ch] http/*.[ch] target/*.[ch] seal/*.[ch]

rc=0
echo "== plain build: make check"
build build/plain --enable-werror $dirs
(cd build/plain && make -j2 check) 2>&1 | tee build/plain-check.log || rc=1
summary build/plain-check.log "plain" || rc=1
[ -f build/plain/test-suite.log ] && [ $rc -ne 0 ] && tail -n 80 build/plain/test-suite.log

echo "== short soak: kill -9 and power cuts under load (scripts/soak.sh)"
SOAK_TRIALS=2 LEDGERFS_BUILD="$top/build/plain" "$top/scripts/soak.sh" || rc=1
echo "== short soak with --sync=journal: the commit journal written back after power cuts"
SOAK_TRIALS=2 SOAK_DAEMON_OPTS="--sync=journal --journal-size=1M" \
	LEDGERFS_BUILD="$top/build/plain" "$top/scripts/soak.sh" || rc=1

echo "== sanitizer build (ASan + UBSan): make check"
build build/asan --enable-werror --enable-sanitizers $dirs
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build/asan && make -j2 check) 2>&1 | tee build/asan-check.log || rc=1
summary build/asan-check.log "sanitized" || rc=1
[ $rc -ne 0 ] && [ -f build/asan/test-suite.log ] && tail -n 80 build/asan/test-suite.log

echo "== libFuzzer on the request parser (${FUZZ_SECONDS:-30} s)"
(cd build/plain && make -s fuzz-request FUZZ_SECONDS="${FUZZ_SECONDS:-30}") || rc=1
echo "== libFuzzer on patterns and on policy/mocks documents (15 s each)"
(cd build/plain && make -s fuzz-pattern FUZZ_SECONDS=15) || rc=1
(cd build/plain && make -s fuzz-doc FUZZ_SECONDS=15) || rc=1
echo "== libFuzzer on signed checkpoints and verifier keys (15 s)"
(cd build/plain && make -s fuzz-checkpoint FUZZ_SECONDS=15) || rc=1
echo "== libFuzzer on the HTTP Host guard (${FUZZ_SECONDS:-30} s)"
(cd build/plain && make -s fuzz-http-guard FUZZ_SECONDS="${FUZZ_SECONDS:-30}") || rc=1
echo "== libFuzzer on the console's request handler (${FUZZ_SECONDS:-30} s)"
(cd build/plain && make -s fuzz-console FUZZ_SECONDS="${FUZZ_SECONDS:-30}") || rc=1
echo "== libFuzzer on the relay's request handler (${FUZZ_SECONDS:-30} s)"
(cd build/plain && make -s fuzz-relay FUZZ_SECONDS="${FUZZ_SECONDS:-30}") || rc=1
echo "== libFuzzer on ledgerfs-mcp's input side (15 s)"
(cd build/plain && make -s fuzz-mcp FUZZ_SECONDS=15) || rc=1
echo "== libFuzzer on the executor helper's frames (15 s)"
(cd build/plain && make -s fuzz-hostexec FUZZ_SECONDS=15) || rc=1
echo "== libFuzzer on the ledger-to-cassette conversion (15 s)"
(cd build/plain && make -s fuzz-cassette FUZZ_SECONDS=15) || rc=1
echo "== libFuzzer on ledgers read back by verify, one thread and two (15 s)"
(cd build/plain && make -s fuzz-ledger FUZZ_SECONDS=15) || rc=1

total_pass=$(cat build/plain-check.log build/asan-check.log | grep -cE '^(PASS|XFAIL):' || true)
total_fail=$(cat build/plain-check.log build/asan-check.log | grep -cE '^(FAIL|XPASS|ERROR):' || true)
# The failures again, last, with the end of each one's log: a CI report
# that shows only the tail of the output still names what failed.
for log in build/plain-check.log build/asan-check.log; do
	{ grep -E '^(FAIL|XPASS|ERROR):' "$log" || true; } | while read -r _ t; do
		echo "== failed in ${log%-check.log}: $t"
		tail -n 40 "${log%-check.log}/${t%.sh}.log" 2>/dev/null
	done
done
echo "tests: $total_pass passed, $total_fail failed"
exit $rc
