#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""silent_hub.py PORTFILE - a hub that accepts connections and never answers (issue 16): writes
its port to PORTFILE and holds every connection until it is killed."""
import socket
import sys

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(64)
with open(sys.argv[1], "w") as f:
    f.write(str(srv.getsockname()[1]))
held = []
while True:
    c, _ = srv.accept()
    held.append(c)
