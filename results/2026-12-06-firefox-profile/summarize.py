#!/usr/bin/env python3
"""Summarizes the benchmark worker's samples in Gecko profiles written at Firefox's shutdown
(MOZ_PROFILER_SHUTDOWN; see README.md): for each profile, the samples inside the timed SQL
scripts (bench_sql's execute_script), those of them in the VFS (ours: opfs_vfs / rsqlite_vfs;
the memory VFS: rsqlite_vfs), split into OPFS calls (FileSystemSyncAccessHandle.*) and the
rest (CPU), the CPU samples' leaf functions, and for each OPFS call the engine function that
made it. A sample is 0.5 ms of the worker's time (MOZ_PROFILER_STARTUP_INTERVAL).

usage: summarize.py PROFILE.json [PROFILE.json ...]
"""
import collections
import json
import sys


def worker_thread(profile):
    """The busiest 'DOM Worker' thread of a content ('tab') process: the benchmark worker."""
    best = None
    todo = [profile]
    while todo:
        p = todo.pop()
        for t in p.get("threads", []):
            if t.get("name") == "DOM Worker" and t.get("processType") == "tab":
                if best is None or len(t["samples"]["data"]) > len(best["samples"]["data"]):
                    best = t
        todo.extend(p.get("processes", []))
    return best


def stacks(t):
    """Each sample's stack, leaf first, as function names."""
    strings = t["stringTable"]
    stack_of = t["samples"]["schema"]["stack"]
    ks, kd = t["stackTable"]["schema"], t["stackTable"]["data"]
    fd, loc = t["frameTable"]["data"], t["frameTable"]["schema"]["location"]
    for s in t["samples"]["data"]:
        k = s[stack_of]
        chain = []
        while k is not None:
            name = strings[fd[kd[k][ks["frame"]]][loc]]
            chain.append(name.split(" (http")[0].replace("web.wasm.", ""))
            k = kd[k][ks["prefix"]]
        if chain:
            yield chain


def short(f):
    return f.split("::h")[0][-72:]


def summarize(path):
    t = worker_thread(json.load(open(path)))
    c = collections.Counter()
    leaves = collections.Counter()
    callers = collections.Counter()
    for chain in stacks(t):
        text = " ".join(chain)
        if "execute_script" not in text:
            c["outside the timed scripts"] += 1
            continue
        c["in the timed scripts"] += 1
        if not any(k in text for k in ("opfs_vfs", "rsqlite_vfs")):
            continue
        c["  in the VFS"] += 1
        calls = [f for f in chain if f.startswith("FileSystemSyncAccessHandle.")]
        if calls:
            c["    OPFS " + calls[0]] += 1
            ours = [short(f) for f in chain if "opfs_vfs::volume" in f][:2]
            callers[calls[0] + " < " + " < ".join(ours)] += 1
        else:
            c["    CPU"] += 1
            leaves[short(chain[0])] += 1
    print(f"== {path}: {sum(1 for _ in stacks(t))} samples of the worker")
    for k, v in c.items():
        print(f"  {v:6d}  {k}")
    print("  CPU in the VFS, by leaf function:")
    for k, v in leaves.most_common(12):
        print(f"  {v:6d}    {k}")
    if callers:
        print("  OPFS calls in the timed scripts, by the engine functions that made them:")
        for k, v in callers.most_common(6):
            print(f"  {v:6d}    {k}")


for p in sys.argv[1:]:
    summarize(p)
