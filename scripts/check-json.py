#!/usr/bin/python3
"""Checks one JSON document against one of chime's schemas (docs/json/NAME.schema.json).

Usage: check-json.py SCHEMA-FILE [DOCUMENT-FILE]   (the document on standard input without one)
Exits 0 when the document is valid; else prints each error as one line and exits 1.
"""
import json
import sys

import jsonschema

with open(sys.argv[1], encoding="utf-8") as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
if len(sys.argv) > 2:
    with open(sys.argv[2], encoding="utf-8") as f:
        document = json.load(f)
else:
    document = json.load(sys.stdin)
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document), key=lambda e: list(e.absolute_path))
for error in errors:
    where = "/".join(str(part) for part in error.absolute_path) or "(the document)"
    print(f"{where}: {error.message}")
sys.exit(1 if errors else 0)
