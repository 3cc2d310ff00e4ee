#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""console_http.py - raw-HTTP checks of `ledgerctl console` (ledgerctl(1)
CONSOLE), one rule a check, against a console already serving a real
mount.  Called by console_http.sh:

  console_http.py guard LISTEN_FORM URL      the Host table for one form
  console_http.py rules URL CASE             token, cookie, 403/405, headers

Prints `ok - NAME` or `not ok - NAME: detail`; exits 1 when one failed.
"""
import json
import socket
import sys
import urllib.parse

failed = 0


def report(name, good, detail=""):
    global failed
    if good:
        print("ok - " + name)
    else:
        failed += 1
        print("not ok - %s: %s" % (name, detail))


def raw(addr, port, request):
    """Send request bytes, return (status, headers{lower: [values]}, body)."""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect((addr, port))
        s.sendall(request)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0] else 0
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers.setdefault(k.strip().lower(), []).append(v.strip())
    return status, headers, body


def request(addr, port, method="GET", path="/", hosts=None, extra=(),
            version="HTTP/1.1"):
    lines = ["%s %s %s" % (method, path, version)]
    for h in hosts or []:
        lines.append("Host: " + h)
    lines.extend(extra)
    lines.append("Connection: close")
    return raw(addr, port, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def parse(url):
    u = urllib.parse.urlsplit(url)
    addr = u.hostname
    token = urllib.parse.parse_qs(u.query)["token"][0]
    return addr, u.port, token


# Host values and, per --listen form, which of them name the console.
# "P" stands for the bound port, "Q" for another one.
HOSTS = [
    "127.0.0.1:P", "127.0.0.2:P", "127.1:P", "[::1]:P", "[::ffff:7f00:1]:P",
    "localhost:P", "localhost.evil.test:P", "127.0.0.1.nip.io:P",
    "localhost:Q", "127.0.0.1:Q", "evil.test:P", "localhost",
]
ACCEPT = {
    "127.0.0.1": {"127.0.0.1:P", "[::ffff:7f00:1]:P", "localhost:P"},
    "127.0.0.2": {"127.0.0.2:P", "localhost:P"},
    "127.1": {"127.0.0.1:P", "127.1:P", "[::ffff:7f00:1]:P", "localhost:P"},
    "[::1]": {"[::1]:P", "localhost:P"},
    "[::ffff:127.0.0.1]": {"127.0.0.1:P", "[::ffff:7f00:1]:P", "localhost:P"},
    "localhost": {"127.0.0.1:P", "[::ffff:7f00:1]:P", "localhost:P"},
}


def guard(form, url):
    addr, port, token = parse(url)
    other = port + 1 if port < 65535 else port - 1
    bearer = ["Authorization: Bearer " + token]
    for h in HOSTS:
        value = h.replace(":P", ":%d" % port).replace(":Q", ":%d" % other)
        want = 200 if h in ACCEPT[form] else 403
        st, _, _ = request(addr, port, path="/api/cases", hosts=[value],
                           extra=bearer)
        report("host_guard_%s_host_%s" % (form, value), st == want,
               "status %d, want %d" % (st, want))
    good = "%s:%d" % ("localhost", port)
    # The guard comes first: even with the token these are refused.
    st, _, _ = request(addr, port, path="/api/cases", hosts=[good, good],
                       extra=bearer)
    report("host_guard_%s_two_host_headers" % form, st == 403, st)
    st, _, _ = request(addr, port, path="/api/cases", hosts=[""],
                       extra=bearer)
    report("host_guard_%s_empty_host" % form, st in (400, 403), st)
    st, _, _ = request(addr, port, path="/api/cases", hosts=[],
                       extra=bearer, version="HTTP/1.0")
    report("host_guard_%s_missing_host" % form, st == 403, st)
    st, _, _ = request(addr, port, path="/?token=" + token,
                       hosts=["localhost.evil.test:%d" % port])
    report("host_guard_%s_before_token" % form, st == 403, st)


SECURITY = {
    "content-security-policy": "default-src 'self'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def security_headers_ok(headers):
    for k, v in SECURITY.items():
        if not any(v in got for got in headers.get(k, [])):
            return "%s: %s" % (k, headers.get(k))
    return ""


def rules(url, case):
    addr, port, token = parse(url)
    host = ["%s:%d" % ("[%s]" % addr if ":" in addr else addr, port)]
    bearer = ["Authorization: Bearer " + token]

    st, h, _ = request(addr, port, path="/?token=" + token, hosts=host)
    cookie = (h.get("set-cookie") or [""])[0]
    parts = [p.strip() for p in cookie.split(";")]
    report("token_url_redirects_303_to_root",
           st == 303 and h.get("location") == ["/"], "%d %s" % (st, h.get("location")))
    report("token_url_sets_httponly_samesite_strict_cookie",
           "HttpOnly" in parts and "SameSite=Strict" in parts and "Path=/" in parts
           and parts[0].split("=", 1)[1] == token, cookie)
    jar = ["Cookie: " + parts[0]]

    wrong = token[:-1] + ("1" if token[-1] == "0" else "0")
    st, _, _ = request(addr, port, path="/?token=" + wrong, hosts=host)
    st2, _, _ = request(addr, port, path="/?token=", hosts=host)
    report("wrong_token_is_403", st == 403 and st2 == 403, "%d %d" % (st, st2))

    for path in ("/", "/api/cases", "/api/cases/" + case, "/app.js", "/api/events"):
        st, _, _ = request(addr, port, path=path, hosts=host)
        report("no_cookie_is_403 %s" % path, st == 403, st)
    st, _, _ = request(addr, port, path="/api/cases", hosts=host,
                       extra=["Cookie: ledgerfs_console=" + "0" * 64])
    report("wrong_cookie_is_403", st == 403, st)
    st, _, _ = request(addr, port, path="/api/cases", hosts=host,
                       extra=["Authorization: Bearer " + "0" * 64])
    report("wrong_bearer_is_403", st == 403, st)

    st, h, body = request(addr, port, path="/", hosts=host, extra=jar)
    report("cookie_opens_the_page", st == 200 and b"app.js" in body, st)
    st, h, body = request(addr, port, path="/api/cases", hosts=host, extra=bearer)
    ok = st == 200
    if ok:
        d = json.loads(body)
        ok = d["total"] >= 1 and any(c["name"] == case for c in d["cases"])
    report("bearer_opens_the_api", ok, "%d %r" % (st, body[:200]))

    st, h, body = request(addr, port, path="/api/cases/%s?offset=2&limit=3" % case,
                          hosts=host, extra=bearer)
    d = json.loads(body) if st == 200 else {}
    rows = d.get("rows", [])
    report("case_rows_are_paged",
           st == 200 and len(rows) == 3 and rows[0]["row"] == 3 and d["rows_total"] >= 5,
           "%d %r" % (st, body[:300]))
    st, h, body = request(addr, port, path="/api/cases/%s/calls?limit=2" % case,
                          hosts=host, extra=bearer)
    d = json.loads(body) if st == 200 else {}
    calls = d.get("calls", [])
    report("calls_are_in_attempt_order_paged",
           st == 200 and [c["sequence"] for c in calls] == [1, 2] and d["total"] >= 3,
           body[:300])
    st, _, _ = request(addr, port, path="/api/cases/nosuchcase", hosts=host, extra=bearer)
    st2, _, _ = request(addr, port, path="/api/cases/..", hosts=host, extra=bearer)
    report("unknown_case_is_404", st == 404 and st2 == 404, "%d %d" % (st, st2))
    st, _, _ = request(addr, port, path="/api/cases?limit=x", hosts=host, extra=bearer)
    report("malformed_paging_is_400", st == 400, st)

    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        st, h, _ = request(addr, port, method=method, path="/api/cases",
                           hosts=host, extra=bearer + ["Content-Length: 0"])
        report("only_get_head_%s_is_405" % method,
               st == 405 and h.get("allow") == ["GET, HEAD"], "%d %s" % (st, h.get("allow")))
    st, h, body = request(addr, port, method="HEAD", path="/api/cases",
                          hosts=host, extra=bearer)
    report("head_is_served_without_body", st == 200 and body == b"", st)

    for name, path, extra, want in (
            ("page", "/", jar, 200), ("api", "/api/cases", bearer, 200),
            ("forbidden", "/api/cases", [], 403), ("missing", "/nope", jar, 404),
            ("script", "/app.js", jar, 200)):
        st, h, _ = request(addr, port, path=path, hosts=host, extra=extra)
        bad = security_headers_ok(h)
        report("security_headers_on_%s" % name, st == want and not bad,
               "%d %s" % (st, bad))
    st, h, body = request(addr, port, path="/app.js", hosts=host, extra=jar)
    report("script_served_as_javascript",
           (h.get("content-type") or [""])[0].startswith("text/javascript")
           and b"innerHTML" not in body, h.get("content-type"))
    st, h, body = request(addr, port, path="/", hosts=host, extra=jar)
    report("page_has_no_inline_script_or_outside_asset",
           b"<script>" not in body and b"http" not in body.replace(b"http-equiv", b""),
           body[:200])

    # The event stream: headers, then the first event, then we hang up.
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect((addr, port))
        s.sendall(("GET /api/events?case=%s HTTP/1.1\r\nHost: %s\r\n"
                   "Authorization: Bearer %s\r\n\r\n" % (case, host[0], token)).encode())
        data = b""
        while b"event: case" not in data or b"\n\n" not in data.split(b"event: case", 1)[1]:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    report("events_stream_sends_case_events",
           b"text/event-stream" in data and b"event: case\ndata: {" in data, data[:300])


def main():
    if sys.argv[1] == "guard":
        guard(sys.argv[2], sys.argv[3])
    else:
        rules(sys.argv[2], sys.argv[3])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
