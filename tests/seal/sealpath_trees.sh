#!/bin/sh
# SPDX-License-Identifier: MIT
# sealpath_trees.sh - the sealpath command as users meet it: exact output
# and exit status per rule over image trees (--root), --json, errors, and
# the host's PATH and a bubblewrap sandbox checked against namei/getfacl.
#
# Run by `make check` (top_builddir set), or by hand: SEALPATH=./sealpath sh
# sealpath_trees.sh.  `sealpath_trees.sh --expect PATHLIST` only prints the
# verdict the independent check expects (used inside the sandbox).
set -u

DEFAULT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Debian's awk is a link through /etc/alternatives, which a sandbox made
# of /usr alone does not have: use a real awk binary.
AWK=$(command -v mawk || command -v gawk || command -v awk)

# --- the independent check: namei walks each path and shows every
# component and link it goes through; getfacl shows ACL entries.  It
# prints "sealed" or "unsealed".

# Mode lines of `namei -l`: "MODE OWNER GROUP NAME".  Links' own modes
# are 0777 and not judged; anything else must not be group/other writable.
namei_bad() {
	"$AWK" '$1 ~ /^[-dlcbpsD][-rwxsStT]+[+.]?$/ && NF >= 4 &&
	    (length($1) == 10 || length($1) == 11) {
		if ($2 != "root") bad = 1
		if (substr($1, 1, 1) != "l" &&
		    (substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w")) bad = 1
	} END { exit bad ? 0 : 1 }'
}

# ACL blocks of `getfacl -n -p --skip-base`: a named entry, or the owning
# group, with write that the mask does not take away.
acl_bad() {
	"$AWK" -F: 'function judge() {
		if (!file) return
		m = (mask == "" || mask ~ /w/)
		if (m && (uw || gw)) bad = 1
		if (mask != "" && m && objw) bad = 1
	}
	/^# file:/ { judge(); file = 1; mask = ""; uw = gw = objw = 0; next }
	$1 == "user" && $2 != "" && $2 != "0" && $3 ~ /w/ { uw = 1 }
	$1 == "group" && $2 != "" && $3 ~ /w/ { gw = 1 }
	$1 == "group" && $2 == "" && $3 ~ /w/ { objw = 1 }
	$1 == "mask" { mask = $3 }
	END { judge(); exit bad ? 0 : 1 }'
}

expect_verdict() {
	list=$1
	verdict=sealed
	case "$list" in
	'' | :* | *: | *::*) verdict=unsealed ;;
	esac
	old_ifs=$IFS
	IFS=:
	set -f
	for d in $list; do
		IFS=$old_ifs
		case "$d" in
		/*) ;;
		*) verdict=unsealed; continue ;;
		esac
		out=$(namei -l "$d" 2>&1)
		# A name that exists but does not resolve: dangling or a loop.
		if [ -L "$d" ] && [ ! -e "$d" ]; then verdict=unsealed; fi
		case "$out" in
		*"exceeded limit of symlinks"*) verdict=unsealed ;;
		esac
		printf '%s\n' "$out" | namei_bad && verdict=unsealed
		[ -d "$d" ] || continue
		getfacl -n -p --skip-base "$d" 2>/dev/null | acl_bad &&
			verdict=unsealed
		if ! out=$(find "$d/" -mindepth 1 -maxdepth 1 -print0 |
			xargs -0 -r namei -l 2>&1); then
			verdict=unsealed # an entry that does not resolve
		fi
		printf '%s\n' "$out" | namei_bad && verdict=unsealed
		find "$d/" -mindepth 1 -maxdepth 1 ! -type l -print0 |
			xargs -0 -r getfacl -n -p --skip-base 2>/dev/null |
			acl_bad && verdict=unsealed
	done
	IFS=$old_ifs
	set +f
	echo "$verdict"
}

if [ "${1:-}" = --expect ]; then
	expect_verdict "$2"
	exit 0
fi

# --- the suite
SEALPATH=${SEALPATH:-${top_builddir:-.}/sealpath}
SCRIPT=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
[ -x "$SEALPATH" ] || { echo "no sealpath at $SEALPATH" >&2; exit 99; }
SEALPATH=$(cd "$(dirname "$SEALPATH")" && pwd)/$(basename "$SEALPATH")
[ "$(id -u)" = 0 ] || { echo "needs root (chown, setfacl)" >&2; exit 77; }

tmp=$(mktemp -d /tmp/sealtrees.XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
chmod 0755 "$tmp" # an image root is judged as "/"

fails=0
count=0
ok() { count=$((count + 1)); echo "ok $count - $1"; }
not_ok() {
	count=$((count + 1))
	fails=$((fails + 1))
	echo "not ok $count - $1"
}

# A sealed merged-/usr image, then the row's change inside it.
new_image() {
	img=$(mktemp -d "$tmp/img.XXXXXX") && chmod 0755 "$img" &&
		(cd "$img" && umask 022 &&
			mkdir -p usr/bin usr/sbin usr/lib usr/local/bin \
				usr/local/sbin etc/alternatives &&
			ln -s usr/bin bin && ln -s usr/sbin sbin &&
			printf '#!/bin/sh\n' >usr/bin/tool &&
			chmod 0755 usr/bin/tool &&
			cp usr/bin/tool usr/bin/mawk &&
			ln -s /etc/alternatives/awk usr/bin/awk &&
			ln -s /usr/bin/mawk etc/alternatives/awk)
}

# row RULE SETUP PATH STATUS OUTPUT: run sealpath --root on a fresh image
# (PATH "-" is the default) and compare stdout and status exactly.
row() {
	name=$1 setup=$2 path=$3 want_rc=$4 want=$5
	if ! new_image || ! (cd "$img" && eval "$setup") >"$tmp/setup" 2>&1
	then
		not_ok "$name (setup failed: $(cat "$tmp/setup"))"
		return
	fi
	if [ "$path" = - ]; then
		got=$(timeout 30 "$SEALPATH" --root "$img" 2>"$tmp/err")
	else
		got=$(timeout 30 "$SEALPATH" --root "$img" --path "$path" \
			2>"$tmp/err")
	fi
	rc=$?
	want=$(printf "$want")
	if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ]; then
		ok "$name"
	else
		not_ok "$name: status $rc (want $want_rc)"
		printf '#   got:  %s\n' "$got" "$(cat "$tmp/err")"
		printf '#   want: %s\n' "$want"
	fi
}

chain() { # n links usr/bin/l1 -> l2 -> ... -> ln -> tool
	i=1
	while [ "$i" -lt "$1" ]; do
		ln -s "l$((i + 1))" "usr/bin/l$i" || return 1
		i=$((i + 1))
	done
	ln -s tool "usr/bin/l$1"
}

row clean_merged_usr_tree_is_sealed ':' - 0 'sealed'
row other_writable_path_folder_fails 'chmod 0777 usr/local/bin' - 1 \
	'/usr/local/bin: writable by group\n/usr/local/bin: writable by others'
row sticky_bit_does_not_excuse_other_write 'chmod 1757 usr/local/bin' - 1 \
	'/usr/local/bin: writable by others'
row group_writable_folder_above_fails 'chmod 0775 usr' - 1 \
	'/usr: writable by group'
row image_root_owned_by_user_fails 'chown 1000 .' - 1 '/: owned by uid 1000'
row entry_owned_by_user_fails 'chown 1000 usr/bin/tool' - 1 \
	'/usr/bin/tool: owned by uid 1000'
row group_writable_entry_fails 'chmod 0775 usr/bin/tool' - 1 \
	'/usr/bin/tool: writable by group'
row sealed_link_chain_passes ':' /usr/bin 0 'sealed'
row link_chain_through_group_writable_folder_fails \
	'chmod 0775 etc/alternatives' /usr/bin 1 \
	'/etc/alternatives: writable by group'
row link_into_user_owned_folder_fails \
	'mkdir -p home/user/bin && touch home/user/bin/prog &&
	 chown 1000 home/user/bin && ln -s /home/user/bin/prog usr/bin/prog' \
	/usr/bin 1 '/home/user/bin: owned by uid 1000'
row link_owned_by_user_fails \
	'ln -s tool usr/bin/alias && chown -h 1000 usr/bin/alias' /usr/bin 1 \
	'/usr/bin/alias: owned by uid 1000'
row relative_link_is_followed_from_its_folder \
	'touch usr/lib/x && chown 1000 usr/lib/x && ln -s ../lib/x usr/bin/x' \
	/usr/bin 1 '/usr/lib/x: owned by uid 1000'
row dangling_link_fails 'ln -s ../lib/nothing usr/bin/gone' /usr/bin 1 \
	'/usr/bin/gone: dangling symbolic link'
row link_loop_fails 'ln -s /usr/bin/me usr/bin/me' /usr/bin 1 \
	'/usr/bin/me: symbolic link loop'
row more_than_40_links_fail 'chain 41' /usr/bin/l1 1 \
	'/usr/bin/l1: more than 40 symbolic links'
row forty_links_pass 'chain 40' /usr/bin 0 'sealed'
row missing_folder_under_sealed_parent_passes 'rmdir usr/local/sbin' - 0 \
	'sealed'
row missing_folder_under_writable_parent_fails \
	'rmdir usr/local/sbin && chmod 0757 usr/local' /usr/local/sbin 1 \
	'/usr/local: writable by others'
row acl_user_write_fails 'setfacl -m u:1000:rwx usr/bin' - 1 \
	'/usr/bin: ACL grants write to uid 1000'
row acl_read_only_passes 'setfacl -m u:1000:rx usr/bin' - 0 'sealed'
row empty_path_entry_fails ':' '/usr/bin::/bin' 1 ': empty entry in PATH'
row trailing_empty_path_entry_fails ':' '/usr/bin:' 1 ': empty entry in PATH'
row dot_path_entry_fails ':' '.' 1 '.: relative entry in PATH'
row relative_path_entry_fails ':' 'bin' 1 'bin: relative entry in PATH'
row absolute_link_to_slash_stays_inside_root \
	'rmdir usr/local/bin && ln -s / usr/local/bin && touch evil &&
	 chown 1000 evil' /usr/local/bin 1 '/evil: owned by uid 1000'
row dotdot_link_stays_inside_root \
	'rmdir usr/local/bin && ln -s ../../../../.. usr/local/bin &&
	 touch evil && chown 1000 evil' /usr/local/bin 1 \
	'/evil: owned by uid 1000'
row names_cannot_forge_lines \
	'touch "usr/bin/za\"b\\c
d" && chown 1000 usr/bin/za*' /usr/bin 1 \
	'/usr/bin/za"b\\\\c\\x0ad: owned by uid 1000'

# --- --json: the same verdicts as one document.
json_row() { # name setup path status document
	name=$1 setup=$2 path=$3 want_rc=$4 want=$5
	new_image && (cd "$img" && eval "$setup") || {
		not_ok "$name (setup)"
		return
	}
	got=$(timeout 30 "$SEALPATH" --json --root "$img" --path "$path" \
		2>/dev/null)
	rc=$?
	want=$(printf '%s' "$want" | sed "s|@IMG@|$img|g")
	if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ]; then
		ok "$name"
	else
		not_ok "$name: status $rc (want $want_rc)"
		printf '#   got:  %s\n#   want: %s\n' "$got" "$want"
	fi
}
json_row json_sealed ':' /usr/bin 0 \
	'{"verdict":"sealed","path":"/usr/bin","root":"@IMG@","findings":[],"error":null}'
json_row json_unsealed_escapes_names \
	'touch "usr/bin/q\"b\\s
n" && chown 1000 usr/bin/q*' '/usr/bin:x' 1 \
	'{"verdict":"unsealed","path":"/usr/bin:x","root":"@IMG@","findings":[{"path":"/usr/bin/q\"b\\s\u000an","problem":"owned by uid 1000"},{"path":"x","problem":"relative entry in PATH"}],"error":null}'
json_row json_invalid_utf8_is_replaced \
	"touch \"usr/bin/\$(printf 'u\\377v')\" && chown 1000 usr/bin/u*" \
	/usr/bin 1 \
	'{"verdict":"unsealed","path":"/usr/bin","root":"@IMG@","findings":[{"path":"/usr/bin/u\ufffdv","problem":"owned by uid 1000"}],"error":null}'
json_row json_utf8_passes_through "touch usr/bin/caf\$(printf '\\303\\251') &&
	chown 1000 usr/bin/caf*" /usr/bin 1 \
	"{\"verdict\":\"unsealed\",\"path\":\"/usr/bin\",\"root\":\"@IMG@\",\"findings\":[{\"path\":\"/usr/bin/caf$(printf '\303\251')\",\"problem\":\"owned by uid 1000\"}],\"error\":null}"

# --- errors: exit 2 with the reason on stderr.
err_case() { # name status stderr-pattern args...
	name=$1 want_rc=$2 pat=$3
	shift 3
	timeout 30 "$SEALPATH" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = "$want_rc" ] && grep -q -- "$pat" "$tmp/err"; then
		ok "$name"
	else
		not_ok "$name: status $rc (want $want_rc)"
		sed 's/^/#   /' "$tmp/out" "$tmp/err"
	fi
}
touch "$tmp/file"
err_case root_that_is_not_a_folder_is_an_error 2 \
	"^sealpath: $tmp/file: not a folder\$" --root "$tmp/file"
err_case missing_root_is_an_error 2 'No such file or directory' \
	--root "$tmp/none"
err_case unknown_option_is_an_error 2 usage --frobnicate
err_case stray_argument_is_an_error 2 'unexpected argument' /usr/bin
# 256 folders below the root are walked; one more is an error whose
# reason survives the long path in front of it.
deep=$(i=0; while [ $i -lt 256 ]; do printf /a; i=$((i + 1)); done)
row folders_256_deep_are_walked "mkdir -p .$deep" "$deep" 0 'sealed'
row folders_257_deep_are_an_error "mkdir -p .$deep/a" "$deep/a" 2 ''
err_case the_reason_of_an_error_on_a_long_path_is_printed 2 \
	'more than 256 folders deep$' --root "$img" --path "$deep/a"
# sealpath(8): a PATH entry too long keeps its first 160 bytes, "...",
# then its end and the reason.
long=/usr$(i=0; while [ $i -lt 20 ]; do printf '/%0250d' 0; i=$((i + 1)); done)END
err_case a_path_entry_too_long_keeps_its_start_and_its_end 2 \
	"^sealpath: $(printf %.160s "$long")\\.\\.\\..*0END: PATH entry too long\$" \
	--path "$long"
# With --json a usage error prints the error document too.
json_usage() { # name error args...
	name=$1 want_err=$2
	shift 2
	got=$(timeout 30 "$SEALPATH" "$@" 2>/dev/null)
	rc=$?
	want="{\"verdict\":\"error\",\"path\":\"$DEFAULT_PATH\",\"root\":\"/\",\"findings\":[],\"error\":\"$want_err\"}"
	if [ "$rc" = 2 ] && [ "$got" = "$want" ]; then
		ok "$name"
	else
		not_ok "$name: status $rc: $got"
	fi
}
json_usage json_unknown_option_prints_the_error_document \
	"unknown option '--bogus'" --json --bogus
json_usage json_option_without_value_prints_the_error_document \
	"option '--path' needs a value" --json --path
json_usage json_stray_argument_prints_the_error_document \
	"unexpected argument 'x'" x --json
got=$(timeout 30 "$SEALPATH" --json --root "$tmp/file" 2>/dev/null)
rc=$?
want="{\"verdict\":\"error\",\"path\":\"$DEFAULT_PATH\",\"root\":\"$tmp/file\",\"findings\":[],\"error\":\"$tmp/file: not a folder\"}"
if [ "$rc" = 2 ] && [ "$got" = "$want" ]; then
	ok json_error_document
else
	not_ok "json_error_document: status $rc: $got"
fi

# --- the host's own PATH: sealpath must agree with namei/getfacl.
host_case() { # name pathlist
	want=$(expect_verdict "$2")
	out=$(timeout 120 "$SEALPATH" --path "$2" 2>&1)
	rc=$?
	case "$rc" in 0) got=sealed ;; 1) got=unsealed ;; *) got="error $rc" ;; esac
	if [ "$got" = "$want" ]; then
		ok "$1 ($got)"
	else
		not_ok "$1: sealpath says $got, namei/getfacl say $want"
		printf '%s\n' "$out" | head -20 | sed 's/^/#   /'
	fi
}
host_case host_default_path_agrees_with_namei "$DEFAULT_PATH"
host_case host_own_path_agrees_with_namei "${PATH:-}"
# The comparison must be able to disagree: a folder under the sticky /tmp.
mkdir -p "$tmp/w"
host_case host_folder_under_tmp_agrees_with_namei "$tmp/w:/usr/bin"

# --- a bubblewrap sandbox made from the host's /usr: the same agreement
# checked from inside it.  A sandbox that cannot start fails the test.
if ! command -v bwrap >/dev/null 2>&1; then
	not_ok "sandbox_default_path_agrees_with_namei: bwrap not installed"
else
	set -- bwrap --ro-bind /usr /usr --symlink usr/bin /bin \
		--symlink usr/sbin /sbin --symlink usr/lib /lib \
		--symlink usr/lib64 /lib64 --proc /proc --dev /dev \
		--unshare-all --die-with-parent \
		--ro-bind "$SEALPATH" /sealpath --ro-bind "$SCRIPT" /check.sh
	if ! timeout 60 "$@" /bin/true 2>"$tmp/bwrap"; then
		not_ok "sandbox_default_path_agrees_with_namei: the sandbox does not start: $(cat "$tmp/bwrap")"
	else
		want=$(timeout 120 "$@" /bin/sh /check.sh --expect "$DEFAULT_PATH")
		out=$(timeout 60 "$@" /sealpath 2>&1)
		rc=$?
		case "$rc" in 0) got=sealed ;; 1) got=unsealed ;; *) got="error $rc" ;; esac
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			ok "sandbox_default_path_agrees_with_namei ($got)"
		else
			not_ok "sandbox_default_path_agrees_with_namei: sealpath says $got, namei/getfacl say '$want'"
			printf '%s\n' "$out" | head -20 | sed 's/^/#   /'
		fi
		# Without /etc, Debian's /etc/alternatives links dangle; with
		# it bound in, the verdict must still agree.
		want=$(timeout 120 "$@" --ro-bind /etc /etc /bin/sh /check.sh \
			--expect "$DEFAULT_PATH")
		out=$(timeout 60 "$@" --ro-bind /etc /etc /sealpath 2>&1)
		rc=$?
		case "$rc" in 0) got=sealed ;; 1) got=unsealed ;; *) got="error $rc" ;; esac
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			ok "sandbox_with_etc_agrees_with_namei ($got)"
		else
			not_ok "sandbox_with_etc_agrees_with_namei: sealpath says $got, namei/getfacl say '$want'"
			printf '%s\n' "$out" | head -20 | sed 's/^/#   /'
		fi
		# A writable folder put on the sandbox's PATH must be caught.
		out=$(timeout 60 "$@" --tmpfs /scratch --chmod 0777 /scratch \
			/sealpath --path /scratch 2>&1)
		rc=$?
		if [ "$rc" = 1 ] && [ "$out" = "/scratch: writable by group
/scratch: writable by others" ]; then
			ok sandbox_writable_folder_is_caught
		else
			not_ok "sandbox_writable_folder_is_caught: status $rc: $out"
		fi
	fi
fi

echo "1..$count"
[ "$fails" = 0 ]
