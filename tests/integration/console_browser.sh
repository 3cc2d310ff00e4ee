#!/bin/sh
# SPDX-License-Identifier: MIT
# console_browser.sh - `ledgerctl console` in headless Chromium over a
# real mount while a shell target keeps calling (console_browser.py has
# the rules).  The screenshot stays in the build folder as
# console-browser.png.  Plain build only: `make check` runs it once.
set -u
. "$(dirname "$0")/lib.sh"
lf_setup
PY=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import selenium' 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || lf_skip_all "python3-selenium missing"
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] ||
	lf_skip_all "chromium and chromium-driver missing"
lf_start

# A case with a turn behind it (a result marked missing), then a target
# that calls every 0.2 s until the browser is done.
lf_open_reg live
lf_call live lookup-1 lookup_customer '{"id":1}' >/dev/null
lf_call live send-1 send_message '{"to":"ada"}' >/dev/null
lf_call live delete-1 delete_account '{"id":1}' >/dev/null
echo turn >"$mnt/cases/live/ctl"
lf_open_reg idle
lf_call idle resume-1 resume_line >/dev/null
(
	i=0
	while [ ! -e "$work/stop" ] && [ $i -lt 400 ]; do
		i=$((i + 1))
		case $((i % 4)) in
		0) lf_call live "lookup-$i" lookup_order "{\"n\":$i}" ;;
		1) lf_call live "send-$i" send_message "{\"n\":$i}" ;;
		2) lf_call live "resume-$i" resume_line ;;
		3) lf_call live "delete-$i" delete_file "{\"n\":$i}" ;;
		esac >/dev/null 2>&1
		sleep 0.2
	done
) &
lf_bg_pids="$lf_bg_pids $!"

"$LEDGERCTL" console --key="$key" "$mnt" >"$work/console.out" 2>"$work/console.err" &
cpid=$!
lf_bg_pids="$lf_bg_pids $cpid"
url=
for _ in $(seq 100); do
	url=$(sed -n 's/^console: //p' "$work/console.out")
	[ -n "$url" ] && break
	sleep 0.05
done
[ -n "$url" ] || { not_ok console_starts "$(cat "$work/console.err")"; lf_finish; exit 1; }

mkdir "$work/profile"
timeout 180 "$PY" "$top_srcdir/tests/integration/console_browser.py" "$url" live \
	"$top_builddir/console-browser.png" "$work/profile" >"$work/browser.out" 2>&1
brc=$?
touch "$work/stop"
[ $brc -eq 77 ] && lf_skip_all "$(grep -m1 SKIP "$work/browser.out")"
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) _d=${line#not ok - }; not_ok "${_d%%: *}" "${_d#*: }" ;;
	*) echo "# $line" ;;
	esac
done <"$work/browser.out"
[ $brc -eq 0 ] || [ "$lf_failed" -gt 0 ] || not_ok browser_script "exit $brc"
check screenshot_is_kept test -s "$top_builddir/console-browser.png"
kill -TERM "$cpid"
_rc=0
wait "$cpid" || _rc=$?
assert_eq console_exits_0_at_sigterm 0 "$_rc"
lf_finish
