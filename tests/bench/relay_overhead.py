#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""relay_overhead.py - p50 of one mediated call made directly on the
case's target/request file, of the same call through ledgerfs-relay
(POST /mediate, a new connection each time, as ASSERT's client does) and,
given MCP (the ledgerfs-mcp program), through ledgerfs-mcp (one
tools/call on a running server's stdin, as an MCP client does), against
the direct call followed by its result (what ledgerfs-mcp records for a
passed call with no downstream server: two rows, two flushes).  Given
HOST_DIR in the environment (a case whose lookup_b the host runs), a
call there against the same direct call and its result: the host's run
of the executor is what the difference measures.

usage: relay_overhead.py TARGET_DIR RELAY_URL TOKEN CASE N [MCP]
"""
import http.client
import json
import statistics
import subprocess
import sys
import time
import urllib.parse
import os

tdir, url, token, case, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
mcp_prog = sys.argv[6] if len(sys.argv) > 6 else None
host_dir = os.environ.get("HOST_DIR")
u = urllib.parse.urlparse(url)
mcp = None


def mcp_ask(obj):
    mcp.stdin.write((json.dumps(obj) + "\n").encode())
    mcp.stdin.flush()
    return json.loads(mcp.stdout.readline())


def mcp_start():
    global mcp
    mcp = subprocess.Popen([mcp_prog, f"--dir={tdir}"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    mcp_ask({"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "1"}}})
    mcp.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')


def mcp_call(i):
    t = time.perf_counter()
    a = mcp_ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                 "params": {"name": "lookup_b", "arguments": {"i": i}}})
    dt = time.perf_counter() - t
    assert "result" in a, a
    return dt


def call_on(folder, cid, i):
    """One call on folder's request, its reply read back: (seconds, reply)."""
    line = json.dumps({"call_id": cid, "tool": "lookup_b", "args": {"i": i}}) + "\n"
    t = time.perf_counter()
    with open(f"{folder}/request", "r+b", buffering=0) as f:
        f.write(line.encode())
        reply = f.read(65536)
    return time.perf_counter() - t, reply


def direct(i):
    dt, reply = call_on(tdir, f"d{i}", i)
    assert b'"mode":"pass"' in reply, reply
    return dt


def direct_result(i):
    """The direct call and the result a passed call's client reports: the
    durable work ledgerfs-mcp does for a pass with no downstream server
    (its result row, real_executed false), so the two compare alike."""
    line = json.dumps({"call_id": f"e{i}", "tool": "lookup_b", "args": {"i": i}}) + "\n"
    res = json.dumps({"call_id": f"e{i}", "returned": None, "is_error": False,
                      "real_executed": False}) + "\n"
    t = time.perf_counter()
    with open(f"{tdir}/request", "r+b", buffering=0) as f:
        f.write(line.encode())
        reply = f.read(65536)
    with open(f"{tdir}/result", "wb", buffering=0) as f:
        f.write(res.encode())
    dt = time.perf_counter() - t
    assert b'"mode":"pass"' in reply, reply
    return dt


def hosted(i):
    """A call whose tool the host runs: its reply carries the result."""
    dt, reply = call_on(host_dir, f"h{i}", i)
    assert b'"result_source":"host_executed"' in reply, reply
    return dt


def relayed(i):
    body = json.dumps({"pre_context": {"interception_point": "pre_tool_call",
                                       "session": {"case_id": case},
                                       "tool_call": {"id": f"r{i}", "name": "lookup_b",
                                                     "args": {"i": i}}}})
    t = time.perf_counter()
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("POST", "/mediate", body, {"authorization": f"Bearer {token}",
                                        "content-type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    dt = time.perf_counter() - t
    assert r.status == 200, data
    return dt


def p(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1e6


# Interleaved, so drift on a shared machine hits both alike.
d, r, m, e, h = [], [], [], [], []
if mcp_prog:
    mcp_start()
for i in range(n):
    d.append(direct(i))
    r.append(relayed(i))
    if mcp or host_dir:
        e.append(direct_result(i))
    if mcp:
        m.append(mcp_call(i))
    if host_dir:
        h.append(hosted(i))
out = {
    "calls": n,
    "direct_p50_us": round(p(d, 0.5)), "direct_p99_us": round(p(d, 0.99)),
    "relay_p50_us": round(p(r, 0.5)), "relay_p99_us": round(p(r, 0.99)),
    "relay_overhead_p50_us": round(p(r, 0.5) - p(d, 0.5)),
    "median_of_pairwise_overhead_us": round(statistics.median(b - a for a, b in zip(d, r)) * 1e6),
}
if mcp:
    mcp.stdin.close()
    mcp.wait(timeout=30)
    out.update({"mcp_p50_us": round(p(m, 0.5)), "mcp_p99_us": round(p(m, 0.99)),
                "direct_result_p50_us": round(p(e, 0.5)),
                "mcp_overhead_p50_us": round(p(m, 0.5) - p(e, 0.5))})
if host_dir:
    out.update({"host_p50_us": round(p(h, 0.5)), "host_p99_us": round(p(h, 0.99)),
                "direct_result_p50_us": round(p(e, 0.5)),
                "host_overhead_p50_us": round(p(h, 0.5) - p(e, 0.5))})
print(json.dumps(out))
