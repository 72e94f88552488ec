#!/usr/bin/env python3
"""Paired A/B summary of two builds of the page run in alternating page loads.

Usage: summarize.py DIR A B   (DIR holds <browser>-<build>-<load>/<date>-<browser>.json)

For each browser, backend and part of the suite (test 1, tests 2-16, the 16-case total), prints
per build the median over all rounds of the paired ratio to sqlite-memvfs (same round), the
median of the paired difference in ms, and each load's median ratio.
"""
import glob
import json
import os
import statistics as st
import sys

root, builds = sys.argv[1], sys.argv[2:4]
res = {}
for f in sorted(glob.glob(os.path.join(root, "*-*-*", "*.json"))):
    browser, build, load = os.path.basename(os.path.dirname(f)).split("-")
    sql = json.load(open(f))["sql"]
    runs = {b["name"]: {r["round"]: r for r in b["runs"]} for b in sql["backends"]}
    ref = runs["sqlite-memvfs"]
    for name, rounds in runs.items():
        if name == "sqlite-memvfs":
            continue
        for rd, r in rounds.items():
            ours = {c["number"]: c["ms"] for c in r["suite"]["cases"]}
            mem = {c["number"]: c["ms"] for c in ref[rd]["suite"]["cases"]}
            for part, cases in (("test 1", [1]), ("tests 2-16", range(2, 17)),
                                ("total", range(1, 17))):
                a = sum(ours[k] for k in cases)
                m = sum(mem[k] for k in cases)
                res.setdefault((browser, name, part, build), []).append((int(load), a / m, a - m))
for key in sorted({k[:3] for k in res}):
    cells = []
    for build in builds:
        xs = res.get(key + (build,), [])
        if not xs:
            continue
        loads = sorted({l for l, _, _ in xs})
        per = [st.median([r for l, r, _ in xs if l == L]) for L in loads]
        cells.append(f"{build}: {st.median([r for _, r, _ in xs]):.3f} "
                     f"(+{st.median([d for _, _, d in xs]):.2f} ms; loads "
                     + " ".join(f"{p:.3f}" for p in per) + ")")
    print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
