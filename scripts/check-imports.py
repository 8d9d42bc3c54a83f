#!/usr/bin/python3
"""Each target imports only the modules it declares (Package.swift): a module of this package or a
product of a dependency, imported by a target that does not name it, builds only because SwiftPM
happens to have built it first. And the daemon's D-Bus error names are matched only by its client
(ChimeClient) and the service that answers with them: the others match `SchedulerError`'s cases.
Exits 1 and names each such import or match.

    check-imports.py      (from the package's root; runs `swift package dump-package`)
"""
import json
import os
import re
import subprocess
import sys

package = json.loads(subprocess.run(["swift", "package", "dump-package"], capture_output=True, text=True, check=True).stdout)
modules = {t["name"] for t in package["targets"]}
products = set()
for dependency in package.get("dependencies", []):
    for kind in dependency.values():
        for entry in kind if isinstance(kind, list) else [kind]:
            if isinstance(entry, dict):
                products.add(entry.get("identity", ""))
importable = modules | {"Logging", "ArgumentParser", "TOMLKit", "PropertyBased", "SystemPackage", "Collections"}
pattern = re.compile(r"^\s*(?:@[A-Za-z]+(?:\([^)]*\))? )*(?:(?:internal|package|public|private) )?import (?:(?:struct|enum|class|func|protocol|typealias|var|let) )?([A-Za-z_][A-Za-z0-9_]*)")
problems = []
for target in package["targets"]:
    declared = set()
    for dependency in target.get("dependencies", []):
        for kind, value in dependency.items():
            declared.add(value[0])
    path = target.get("path") or ("Tests/" if target["type"] == "test" else "Sources/") + target["name"]
    for root, _, files in os.walk(path):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            with open(os.path.join(root, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    match = pattern.match(line)
                    if match and match.group(1) in importable and match.group(1) not in declared and match.group(1) != target["name"]:
                        problems.append(f"{os.path.join(root, name)}:{number}: {target['name']} imports {match.group(1)}, which it does not declare")
names = re.compile(r"SchedulerInterface\.(invalidRequest|neverFires|unknownIdentifier|storeFailed|fromAlarmFile|cannotPlay|noAlarmFile)\b")
for root, _, files in os.walk("Sources"):
    if root.startswith("Sources/ChimeClient"):
        continue
    for name in sorted(files):
        path = os.path.join(root, name)
        if not name.endswith(".swift") or path == "Sources/ChimeDaemon/SchedulerService.swift":
            continue
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if names.search(line):
                    problems.append(f"{path}:{number}: matches the daemon's D-Bus error name; match SchedulerError's cases (catch .refused(.unknownIdentifier, let error))")
for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
