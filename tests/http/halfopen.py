#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""halfopen.py PORT [N] - N connections (default 2,000) that each send half a request and hold
it, as a slow or hostile client does (issue 16). While they are open a normal request must be
answered within 10 s, and after they close within 1 s. Prints "ok ..." / "FAIL ..." lines."""
import socket
import sys
import time
import urllib.request

port = int(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
socks = []
for i in range(n):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.send(b"GET /api/v1/gpus HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)
        socks.append(s)
    except OSError:
        break


def probe(deadline):
    t = time.time()
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=deadline).read()
        return time.time() - t
    except OSError:
        return None


during = probe(10)
time.sleep(2)
for s in socks:
    s.close()
time.sleep(0.2)
after = probe(1)
tag = "%d half-open connections" % len(socks)
if len(socks) < n:
    print("FAIL http %s: only %d of %d opened (ulimit -n?)" % (tag, len(socks), n))
elif during is None:
    print("FAIL http %s: a normal request got no answer within 10 s" % tag)
else:
    print("ok   http %s: a normal request answered in %.2f s meanwhile" % (tag, during))
if after is None:
    print("FAIL http %s: no answer within 1 s after they closed" % tag)
else:
    print("ok   http   ...and in %.2f s after they closed" % after)
