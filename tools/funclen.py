#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""funclen.py [MAX] - no function in src/ longer than MAX lines (default 120; issue 15).

A function is a line at column 0 that opens with '{' after a declarator, to its closing '}' at
column 0 (the layout clang-format gives every function here). Data tables (initialised arrays,
'= {') are not functions. Prints each function over the limit; exits 1 when there is one."""
import glob
import re
import sys

limit = int(sys.argv[1]) if len(sys.argv) > 1 else 120
over = []
for path in sorted(glob.glob("src/**/*.c", recursive=True)):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            j = i - 1
            while j > 0 and lines[j][:1] in (" ", "\t"):
                j -= 1
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            m = re.search(r"(\w+)\s*\(", lines[j])
            if m and "=" not in lines[j] and k - j + 1 > limit:
                over.append((k - j + 1, path, m.group(1)))
            i = k
        i += 1
for n, path, name in sorted(over, reverse=True):
    print("funclen: %s:%s is %d lines (at most %d)" % (path, name, n, limit))
if over:
    print("funclen: %d functions over %d lines" % (len(over), limit))
    sys.exit(1)
print("funclen: ok (no function over %d lines)" % limit)
