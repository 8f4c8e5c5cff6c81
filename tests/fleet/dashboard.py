#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# dashboard.py DASHBOARD METRICS [PROMETHEUS_URL] - every query of a Grafana dashboard (panel
# targets and template variables) names metrics the exporter serves: METRICS is a /metrics
# body, whose "# TYPE name" lines are what it serves. Every vramfit_* name in a query must be
# one of them, and a query must name at least one. With PROMETHEUS_URL each panel query also
# runs there (Grafana's $variables given plain values) and must answer a non-empty result.
# A made-up query is checked too, so a check that lets anything through fails. Prints
# "ok ..." / "FAIL ..." lines; exits 1 on a failure.
import json
import re
import sys
import urllib.parse
import urllib.request

dash = json.load(open(sys.argv[1]))
served = set(re.findall(r"^# TYPE (\S+) ", open(sys.argv[2]).read(), re.M))
prom = sys.argv[3] if len(sys.argv) > 3 else None
GRAFANA_VARS = {"$__rate_interval": "1m", "$__range": "5m", "$__interval": "15s",
                "$Hostname": ".*"}


def queries(d):
    for p in d.get("panels", []):
        for t in p.get("targets", []):
            yield f"panel '{p['title']}'", t["expr"], True
    for v in d.get("templating", {}).get("list", []):
        q = v.get("query")
        yield f"variable ${v['name']}", q["query"] if isinstance(q, dict) else q, False


def names_ok(expr):
    names = set(re.findall(r"\b(vramfit_[a-z0-9_]+)", expr))
    missing = names - served
    if not names:
        return "names no vramfit metric"
    if missing:
        return "names what the exporter does not serve: " + ", ".join(sorted(missing))
    return None


def run(expr):
    for k, v in GRAFANA_VARS.items():
        expr = expr.replace(k, v)
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        return f"Prometheus says {body.get('error')}"
    if not body["data"]["result"]:
        return "Prometheus answers an empty result"
    return None


bad = 0
n = 0
for where, expr, runnable in queries(dash):
    n += 1
    why = names_ok(expr) or (run(expr) if prom and runnable else None)
    if why:
        print(f"FAIL dashboard {where}: {expr!r} {why}")
        bad += 1
if n < 5:
    print(f"FAIL dashboard: only {n} queries found")
    bad += 1
# the check itself: a misspelt name and a query of another exporter are caught
for expr in ("vramfit_gpu_memory_usedbytes", "DCGM_FI_DEV_FB_USED"):
    if not names_ok(expr):
        print(f"FAIL dashboard: the check lets {expr!r} through")
        bad += 1
if not bad:
    print(f"ok   dashboard: its {n} queries name only metrics the exporter serves"
          + (" and each answers in Prometheus" if prom else ""))
sys.exit(1 if bad else 0)
