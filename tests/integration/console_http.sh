#!/bin/sh
# SPDX-License-Identifier: MIT
# console_http.sh - `ledgerctl console` over a real mount, through raw
# HTTP (console_http.py): the Host guard for every loopback form of
# --listen, the launch token and its cookie, 403/405, the security
# headers, paging, events; the one printed line, refusals of bad
# --listen values, a clean exit at SIGINT and SIGTERM, and that the
# console changed nothing in the mount or the backing folder.
set -u
. "$(dirname "$0")/lib.sh"
lf_setup
command -v python3 >/dev/null || lf_skip_all "python3 missing"
lf_start
PY=$top_srcdir/tests/integration/console_http.py
cpid=

stop_console() { # SIGNAL: stop it, print its exit status
	[ -n "$cpid" ] || return 0
	kill -"$1" "$cpid" 2>/dev/null
	_rc=0
	wait "$cpid" || _rc=$?
	cpid=
	echo "$_rc"
}

# start_console ARGS...: start one; $url is its printed URL ("" if none).
start_console() {
	: >"$work/console.out"
	"$LEDGERCTL" console "$@" >"$work/console.out" 2>>"$work/console.err" &
	cpid=$!
	lf_bg_pids="$lf_bg_pids $cpid"
	_i=0
	url=
	while [ $_i -lt 100 ] && kill -0 "$cpid" 2>/dev/null; do
		url=$(sed -n 's/^console: //p' "$work/console.out")
		[ -n "$url" ] && break
		_i=$((_i + 1))
		sleep 0.05
	done
}

# py RULESET ARGS...: run the checks, fold their lines into the counts.
py() {
	timeout 120 python3 "$PY" "$@" >"$work/py.out" 2>&1
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) _d=${line#not ok - }; not_ok "${_d%%: *}" "${_d#*: }" ;;
		*) echo "# $line" ;;
		esac
	done <"$work/py.out"
}

lf_open_reg C
for i in 1 2 3; do
	lf_call C "p$i" lookup_x '{"i":1}' >/dev/null
	lf_call C "m$i" send_x >/dev/null
done
lf_call C b1 delete_x >/dev/null
echo turn >"$mnt/cases/C/ctl"
lf_open D

snap() { # what the console must not change
	find "$backing" -printf '%p %s %T@ %m\n' | sort
	cat "$backing"/cases/*/ledger.jsonl | sha256sum
}
snap >"$work/before"

# One line on stdout, the URL with a 256-bit token, and nothing else.
start_console --key="$key" "$mnt"
sleep 0.3
rule_begin console_prints_exactly_one_url_line
rule_eq lines 1 "$(wc -l <"$work/console.out" | tr -d ' ')"
case $url in
http://127.0.0.1:[0-9]*/\?token=*) ;;
*) rule_fail "url [$url]" ;;
esac
tok=${url##*token=}
rule_eq "token hex digits" 64 "$(printf '%s' "$tok" | tr -cd 0-9a-f | wc -c | tr -d ' ')"
rule_end
py rules "$url" C
rule_begin only_the_console_loads_libmicrohttpd
# Every other command starts without the library and its TLS stack.
ldd "$LEDGERCTL" >"$work/ldd" 2>&1 || rule_fail "ldd: $(cat "$work/ldd")"
rule_hasnt "ledgerctl's libraries" "$(cat "$work/ldd")" libmicrohttpd
rule_has "the running console's" "$(cat "/proc/$cpid/maps")" libmicrohttpd
rule_end
stop_console TERM >"$work/rc"
assert_eq console_exits_0_at_sigterm 0 "$(cat "$work/rc")"

# Every loopback form of --listen against the Host table.
for form in 127.0.0.1 127.0.0.2 127.1 '[::1]' '[::ffff:127.0.0.1]' localhost; do
	start_console --listen="$form" "$mnt"
	if [ -z "$url" ]; then
		not_ok "console_listens_on_$form" "$(tail -n 3 "$work/console.err")"
		stop_console KILL >/dev/null
		continue
	fi
	py guard "$form" "$url"
	stop_console INT >"$work/rc"
	assert_eq "console_exits_0_at_sigint_$form" 0 "$(cat "$work/rc")"
done

# A browser still following a case does not hold the exit up.
start_console "$mnt"
curl -s -N -H "Authorization: Bearer ${url##*token=}" \
	"${url%%/\?*}/api/events?case=C" >"$work/events" 2>/dev/null &
lf_bg_pids="$lf_bg_pids $!"
sleep 1
s0=$(date +%s%N)
stop_console TERM >"$work/rc"
rule_begin console_exits_0_at_sigterm_with_an_open_event_stream
rule_eq status 0 "$(cat "$work/rc")"
rule_eq "within a second" 1 "$([ $((($(date +%s%N) - s0) / 1000000)) -lt 1000 ] && echo 1)"
rule_has "stream" "$(cat "$work/events")" "event: case"
rule_end

# ledgerctl(1): --mount may come after the command, as for the others;
# the event stream of a case that does not exist is 404, as its page is.
start_console --mount="$mnt"
rule_begin console_takes_mount_after_the_command_and_404s_the_events_of_no_case
rule_has "started" "$url" "/?token="
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${url##*token=}" \
	"${url%%/\?*}/api/events?case=NOPE")
rule_eq "events of no such case" 404 "$code"
rule_end
stop_console TERM >/dev/null

# Two consoles never share a token.
start_console "$mnt"
first=${url##*token=}
stop_console TERM >/dev/null
start_console "$mnt"
assert_eq token_is_fresh_each_run 1 "$([ "$first" != "${url##*token=}" ] && echo 1)"
stop_console TERM >/dev/null

refused() { # NAME ARGS...: exit 2, nothing on stdout
	_o=$(timeout 10 "$LEDGERCTL" console "$@" 2>"$work/refused.err")
	_rc=$?
	rule_begin "$1"
	rule_eq status 2 "$_rc"
	rule_eq stdout "" "$_o"
	rule_end
}
refused non_loopback_listen_needs_allow_remote --listen=0.0.0.0:0 "$mnt"
refused listen_outside_the_grammar_is_refused --listen=localhost.evil.test:80 "$mnt"
refused listen_with_bad_port_is_refused --listen=127.0.0.1:99999 "$mnt"
refused console_needs_a_mount --listen=127.0.0.1:0 "$work"

# --allow-remote keeps both guards: a wrong Host is still refused.
start_console --listen=0.0.0.0:0 --allow-remote "$mnt"
port=$(printf '%s' "$url" | sed 's|.*:\([0-9]*\)/.*|\1|')
tok=${url##*token=}
rule_begin allow_remote_keeps_host_guard_and_token
rule_eq "literal host" 200 "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/api/cases")"
rule_eq "rebinding name" 403 "$(curl -s -o /dev/null -w '%{http_code}' -H "Host: attacker.test:$port" -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/api/cases")"
rule_eq "no token" 403 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/cases")"
rule_end
# The printed URL names the wildcard as given: it opens.
rule_begin allow_remote_on_a_wildcard_the_printed_url_opens
rule_eq "printed host" "http://0.0.0.0:$port/" "${url%%\?*}"
rule_eq "the printed url" 303 "$(curl -s -o /dev/null -w '%{http_code}' "$url")"
rule_end
stop_console TERM >/dev/null

# unix:PATH: the printed PATH is percent-encoded, all but the unreserved.
start_console --listen="unix:$work/a b%c.sock" "$mnt"
rule_begin unix_listener_path_is_percent_encoded_in_the_printed_line
rule_has line "$url" "$(printf '%s' "$work" | sed 's|/|%2F|g')%2Fa%20b%25c.sock/?token="
rule_end
stop_console TERM >/dev/null

# unix:PATH: owner-only socket, the token still needed, removed at exit.
start_console --listen="unix:$work/console.sock" "$mnt"
tok=${url##*token=}
rule_begin unix_listener_is_owner_only_and_needs_the_token
rule_eq mode srwx------ "$(stat -c %A "$work/console.sock")"
rule_eq "with token" 200 "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$work/console.sock" -H "Authorization: Bearer $tok" http://localhost/api/cases)"
rule_eq "without" 403 "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$work/console.sock" http://localhost/api/cases)"
stop_console TERM >/dev/null
rule_eq "removed at exit" no "$([ -e "$work/console.sock" ] && echo yes || echo no)"
rule_end

snap >"$work/after"
assert_eq console_changes_nothing_in_the_backing_folder \
	"$(cat "$work/before")" "$(cat "$work/after")"
assert_eq console_adds_no_row 13 "$(lf_rows C)"

# A row changed behind the daemon's back (in the backing file, same
# length): with the key its MAC fails, without it the next row's prev.
verify_of() { # ARGS...: the verify object of case C from a fresh console
	start_console "$@" "$mnt"
	curl -s -H "Authorization: Bearer ${url##*token=}" \
		"${url%%/\?*}/api/cases/C?limit=0" | tr ',' '\n' | grep -E '"(status|reason)"' | tr '\n' ' '
	stop_console TERM >/dev/null
}
assert_contains verify_is_ok_before_tampering "$(verify_of --key="$key")" '"status":"ok"'
# In place (the daemon reads through its own descriptor): one byte of row 4.
off=$(head -n 3 "$(lf_ledger C)" | wc -c)
off=$((off + $(sed -n 4p "$(lf_ledger C)" | grep -bo '"tool":"send_x"' | cut -d: -f1) + 13))
printf y | dd of="$(lf_ledger C)" bs=1 seek="$off" conv=notrunc 2>/dev/null
# The case is sealed (ledgerfs-ledger(5) SEALS): its MAC keys are not the
# host key's, so the console finds the change by the chain, key or not.
assert_contains verify_with_key_of_a_sealed_case_names_the_row_after \
	"$(verify_of --key="$key")" \
	'"reason":"row 5: prev does not match the row before"'
assert_contains verify_without_key_names_the_row_after \
	"$(verify_of)" \
	'"reason":"row 5: prev does not match the row before"'

if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work/console.err"; then
	not_ok console_has_no_sanitizer_report "$(grep -m3 -E 'ERROR|runtime error' "$work/console.err")"
else
	ok console_has_no_sanitizer_report
fi
lf_finish
