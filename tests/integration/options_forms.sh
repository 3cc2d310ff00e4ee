#!/bin/sh
# SPDX-License-Identifier: MIT
# options_forms.sh - every daemon option in its three forms (--opt=VALUE,
# --opt VALUE, -o opt=VALUE: ledgerfs(8) OPTIONS) takes effect; a bad
# value in any form, an unknown option and an unknown libfuse option are
# refused with exit 2 before a backing folder or key is created.
. "$(dirname "$0")/lib.sh"
lf_setup
n=0

# start_plain ARGS...: the daemon on $mnt with exactly these options.
start_plain() {
	"$LEDGERFS" -f "$@" "$mnt" >>"$work/daemon.out" 2>>"$work/daemon.err" &
	lf_daemon=$!
	_i=0
	until [ -d "$mnt/cases" ]; do
		_i=$((_i + 1))
		if [ $_i -gt 200 ] || ! kill -0 "$lf_daemon" 2>/dev/null; then
			wait "$lf_daemon" 2>/dev/null
			lf_daemon=
			return 1
		fi
		sleep 0.05
	done
}

# form F NAME VALUE: the option's words in form F
form() {
	case $1 in
	eq) printf '%s\n' "--$2=$3" ;;
	space) printf '%s\n%s\n' "--$2" "$3" ;;
	dasho) printf '%s\n%s\n' -o "$2=$3" ;;
	esac
}

# with_option F NAME VALUE CHECK: start with the option in form F and
# fresh paths (the option replaces its default one), run CHECK, stop.
with_option() {
	n=$((n + 1))
	backing=$work/b$n
	key=$work/keys/k$n
	_f=$1 _name=$2 _val=$3 _check=$4
	set --
	[ "$_name" = backing ] || set -- "$@" --backing="$backing"
	[ "$_name" = key ] || set -- "$@" --key="$key"
	_old_ifs=$IFS
	IFS='
'
	# shellcheck disable=SC2046
	set -- "$@" $(form "$_f" "$_name" "$_val")
	IFS=$_old_ifs
	rule_begin "${_name}_takes_effect_in_form_${_f}"
	if start_plain "$@"; then
		$_check
		lf_stop || rule_fail "daemon did not stop"
	else
		rule_fail "did not start: $(tail -n2 "$work/daemon.err")"
	fi
	rule_end
}

check_backing() {
	mkdir "$mnt/cases/B" || rule_fail "mkdir"
	[ -d "$work/elsewhere$n/cases/B" ] || rule_fail "case not in the given backing folder"
}
check_key() {
	[ -s "$work/keys/given$n.key" ] || rule_fail "key not created at the given path"
}
check_max_line() {
	lf_open_reg M || rule_fail open
	out=$(lf_write M request --repeat-byte a 200 -a '\n')
	rule_has "200-byte line" "$out" "write=EFBIG"
}
check_max_calls() {
	lf_open_reg M || rule_fail open
	lf_call M c1 lookup_a >/dev/null
	rule_has "second call" "$(lf_call M c2 lookup_a 2>&1)" '"matched":"<limit>"'
}
check_max_refused() {
	lf_open_reg M || rule_fail open
	for i in 1 2 3; do lf_write M request 'junk\n' >/dev/null; done
	rule_eq "refused rows" 1 "$(lf_rows M '"phase":"refused"')"
}
# --sync=file shares no flush: the stop report of shared flushes, which
# a group-committing daemon prints after any row, is absent.
check_sync() {
	_from=$(wc -l <"$work/daemon.err")
	lf_open_reg M || rule_fail open
	lf_call M c1 lookup_a >/dev/null
	lf_stop
	rule_hasnt "stop report" "$(tail -n +$((_from + 1)) "$work/daemon.err")" "made durable by"
}

for f in eq space dasho; do
	: >"$work/daemon.err"
	with_option $f backing "$work/elsewhere$((n + 1))" check_backing
	with_option $f key "$work/keys/given$((n + 1)).key" check_key
	with_option $f max-line 100 check_max_line
	with_option $f max-calls 1 check_max_calls
	with_option $f max-refused 1 check_max_refused
	with_option $f sync file check_sync
done

# refused NAME ARGS...: exit 2, a one-line reason, nothing created.
refused() {
	_name=$1
	shift
	rm -rf "$work/nb" "$work/nk"
	_out=$(timeout 10 "$LEDGERFS" -f --backing="$work/nb" --key="$work/nk/host.key" "$@" "$mnt" 2>&1)
	_rc=$?
	rule_begin "$_name"
	rule_eq "exit" 2 "$_rc"
	[ -e "$work/nb" ] && rule_fail "backing folder created"
	[ -e "$work/nk" ] && rule_fail "key folder created"
	lf_mounted && { rule_fail mounted; umount -l "$mnt"; }
	[ -n "$_out" ] || rule_fail "no reason given"
	rule_eq "lines" 1 "$(printf '%s\n' "$_out" | wc -l | tr -d ' ')"
	rule_end
}
refused unknown_option_is_refused_before_anything_is_created --max-cals=5
refused unknown_dash_o_option_is_refused_before_anything_is_created -o max_cals=5
refused option_without_value_is_refused -o max-calls
refused an_option_libfuse_does_not_know_is_one_line_naming_it -o nosuchopt
refused a_short_option_libfuse_does_not_know_is_one_line_naming_it -x
for o in max-line max-calls max-refused max-pending max-ledger journal-size; do
	refused "a_given_${o}_of_0_is_refused_not_taken_for_the_default" --$o=0
done
refused journal_size_below_256k_is_refused_before_anything_is_created --sync=journal --journal-size=1K
refused journal_size_over_1g_is_refused_before_anything_is_created --journal-size=2G
refused pad_ledger_over_64m_is_refused_before_anything_is_created --pad-ledger=1G
refused max_ledger_over_4g_is_refused_before_anything_is_created --max-ledger=5G
refused pad_ledger_with_sync_journal_is_refused_before_anything_is_created --sync=journal --pad-ledger=1M

rule_begin a_key_others_may_read_is_refused_before_the_backing_folder_is_made
rm -rf "$work/nb" "$work/nk"
mkdir -m 0700 "$work/nk"
head -c 32 /dev/urandom >"$work/nk/host.key"
chmod 0644 "$work/nk/host.key"
_out=$(timeout 10 "$LEDGERFS" -f --backing="$work/nb" --key="$work/nk/host.key" "$mnt" 2>&1)
rule_eq exit 1 $?
[ -e "$work/nb" ] && rule_fail "backing folder created"
rule_has reason "$_out" "has mode 0644"
lf_mounted && { rule_fail mounted; umount -l "$mnt"; }
rule_end

for f in eq space dasho; do
	# shellcheck disable=SC2046
	refused "bad_count_is_refused_in_form_$f" $(form $f max-calls 5x)
	# shellcheck disable=SC2046
	refused "bad_size_is_refused_in_form_$f" $(form $f max-line 2x)
	# shellcheck disable=SC2046
	refused "bad_sync_is_refused_in_form_$f" $(form $f sync fast)
done

# SOURCE and --backing naming one folder agree, whatever their slashes.
rule_begin a_source_naming_the_backing_folder_with_a_trailing_slash_agrees
rm -rf "$work/sb"
"$LEDGERFS" -f --backing="$work/sb" --key="$work/sk/host.key" "$work/sb/" "$mnt" \
	>>"$work/daemon.out" 2>"$work/sb.err" &
lf_daemon=$!
i=0
until [ -d "$mnt/cases" ] || [ $i -gt 100 ] || ! kill -0 $lf_daemon 2>/dev/null; do
	i=$((i + 1))
	sleep 0.05
done
rule_eq mounted yes "$(lf_mounted && echo yes || cat "$work/sb.err")"
lf_mounted && lf_stop
lf_daemon=
_out=$("$LEDGERFS" -f --backing="$work/sb" --key="$work/sk/host.key" "$work/other" "$mnt" 2>&1)
rule_eq "another folder" 2 $?
rule_has reason "$_out" "disagree"
rule_end

rule_begin help_and_version_exit_zero
rule_has help "$("$LEDGERFS" -h)" "--max-calls=N"
rule_has version "$("$LEDGERFS" -V)" "ledgerfs "
rule_has "--help" "$("$LEDGERFS" --help)" "-o OPTION"
rule_end

lf_finish
