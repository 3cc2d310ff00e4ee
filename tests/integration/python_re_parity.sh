#!/bin/sh
# SPDX-License-Identifier: MIT
# python_re_parity.sh - the pattern module against CPython's re: a table of
# patterns (Python syntax where PCRE2 reads differently, flags, classes,
# escapes, groups) crossed with subjects; every re.search answer must be
# the same, and every pattern Python refuses must be refused.  The
# differences ledgerfs-policy(5) PATTERNS lists are left out (\z, which
# Python 3.14 takes and 3.11 refuses; \s on U+001C-U+001F; ...).
: "${top_builddir:=$(pwd)}"
probe=$top_builddir/tests/unit/pattern_probe
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
[ -x "$probe" ] || { echo "SKIP: $probe not built"; exit 77; }
work=$(mktemp -d /tmp/reparity.XXXXXX) || exit 99
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP

timeout 60 python3 - "$work" <<'PY' || exit 99
import json, re, sys, warnings
warnings.simplefilter("ignore")
work = sys.argv[1]
patterns = r"""
abc
^abc$
a$
a\Z
(?m)a$
(?s)a.b
a.b
^\d+$
^\w+$
^\s+$
\bfoo\b
(?i)FOO
(?i:F)oo
(?a)^\w+$
(?a)^\d$
^.$
^..$
[[:alpha:]]
[]a]
[^]a]
[a-]
[\d\s]
[^\W\d]
\v
\t\n
\x41
\u00e9
\U0001F600
\101
\0
(a)\1
(a)(b)\2
(?P<x>a)(?P=x)
(?P<x>a)?(?(x)b|c)
(a)?(?(1)b|c)
a{2}
a{,2}
a{2,}
a{,}
a{}
a{x}
a*{x}
a{1,3}?
a*+
a++b
(?>a+)b
(?=a)a
(?!b)a
(?<=a)b
(?<!a)b
(?x) a b c
(?x)a[ ]b
(?x)a\ b
(?x)a # c [
a(?#c)b
x|y|z
(a|ab)(c|bcd)(d*)
.*@example\.com
^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[a-z]{2,}$
\.
\-
\$
\\
a**
a{2}{3}
x(?i)y
\p{L}
(?<n>a)
(*ACCEPT)
(?R)
\8
(a)\2
\400
[a
(a
a)
*a
\b*
^*
\K
\Q
\G
\h
[\b]
(?x)[#]a
(?x)a{1, 2}
(?i)\u00e9
[\101-\103]
\d\D\w\W\s\S
(?-i)a
(?L)a
\x4
\g<1>
(?'n'a)
(?|a)
(?C1)a
(?i)(?m)a$
"""
subjects = ["", "a", "abc", "ABC", "a\n", "a\nb", "foo bar", "aab", "ba",
            "ab", "xabcx", "123", "\u0663", "\u00e9", "\u00c9t\u00e9",
            "\u2003", "\U0001F600", "A", "\x0b", "\t\n", "]", "-", "b",
            "aaa", "a b", "a{x}", "aa{x}", "a{}", "$", "\\", ".",
            "bob@example.com", "x.y@example.org", ":]", "abcd", "c"]
cases = []
for p in patterns.strip("\n").split("\n"):
    for s in subjects:
        cases.append([p, s])
with open(work + "/in", "w") as f, open(work + "/want", "w") as g:
    for p, s in cases:
        try:
            r = "1" if re.search(p, s) else "0"
        except re.error:
            r = "E"
        except Exception:
            r = "E"
        f.write(json.dumps([p, s]) + "\n")
        g.write(r + "\n")
PY
timeout 120 "$probe" <"$work/in" >"$work/got" || { echo "not ok - probe failed"; exit 1; }
n=$(wc -l <"$work/in" | tr -d ' ')
paste -d '\t' "$work/in" "$work/want" "$work/got" |
	awk -F '\t' '$2 != $3 { print "  " $1 ": python " $2 ", ledgerfs " $3 }' >"$work/diff"
if [ -s "$work/diff" ]; then
	echo "not ok - pattern_search_answers_as_python_re_search ($(wc -l <"$work/diff" | tr -d ' ') of $n differ)"
	head -n 40 "$work/diff"
	exit 1
fi
echo "ok - pattern_search_answers_as_python_re_search ($n cases)"
