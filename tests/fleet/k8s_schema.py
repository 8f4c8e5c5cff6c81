#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# k8s_schema.py SCHEMA MANIFEST - validates a Kubernetes manifest (YAML, python3-yaml) against a
# JSON schema (python3-jsonschema, draft 7), then checks that the schema refuses three broken
# copies of it (no spec.template, a port given as text, a misspelt field), so a schema that
# accepts anything fails here. Prints "ok ..." / "FAIL ..." lines; exits 1 on a failure.
import copy
import sys

import jsonschema
import yaml

schema = __import__("json").load(open(sys.argv[1]))
docs = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
validator = jsonschema.Draft7Validator(schema)
jsonschema.Draft7Validator.check_schema(schema)
bad = 0
if len(docs) != 1:
    print(f"FAIL k8s: {sys.argv[2]} holds {len(docs)} documents, expected one DaemonSet")
    sys.exit(1)
doc = docs[0]
errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print(f"FAIL k8s: {sys.argv[2]}: {'/'.join(map(str, e.path))}: {e.message}")
    bad += 1
if not errors:
    print(f"ok   k8s: {sys.argv[2]} is a valid apps/v1 DaemonSet")


def broken(name, change):
    global bad
    d = copy.deepcopy(doc)
    change(d)
    if validator.is_valid(d):
        print(f"FAIL k8s: the schema accepts a DaemonSet with {name}")
        bad += 1
    else:
        print(f"ok   k8s: the schema refuses a DaemonSet with {name}")


broken("no spec.template", lambda d: d["spec"].pop("template"))
broken("containerPort \"9477\" (text)",
       lambda d: d["spec"]["template"]["spec"]["containers"][0]["ports"][0].update(containerPort="9477"))
broken("nodeSelecter (misspelt)",
       lambda d: d["spec"]["template"]["spec"].update(nodeSelecter={"a": "b"}))
sys.exit(1 if bad else 0)
