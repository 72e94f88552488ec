"""Summarizes `perf script -F comm,tid,ip,sym` output of the benchmark worker (README.md here).

    python3 summarize.py STACKS.txt [PASSES]

A sample counts as timed if a frame is `bench_sql::execute_script`, and as the VFS's if a frame
is ours (`opfs_vfs`) or the VFS trait's (`rsqlite_vfs`, which the memory VFS also runs under).
Of the VFS's samples, those under an OPFS `write_at`/`flush` are the browser's calls (the
kernel's copy into the page cache included); the rest is the VFS's CPU.
"""
import collections
import re
import sys


def load(path):
    samples, cur = [], None
    for line in open(path, errors="replace"):
        if line.startswith("DedicatedWorker"):
            if cur:
                samples.append(cur)
            cur = []
        elif line.strip() and cur is not None:
            parts = line.strip().split(" ", 1)
            cur.append(parts[1] if len(parts) > 1 else "?")
    if cur:
        samples.append(cur)
    return samples


def clean(sym):
    sym = re.sub(r"^JS:", "", sym)
    sym = re.sub(r"::h[0-9a-f]{16}", "", sym)
    sym = re.sub(r"-\d+-(turbofan|liftoff)$", "", sym)
    sym = sym.replace("<impl opfs_vfs::volume::Volume<S>>::", "").replace("opfs_vfs::", "")
    return sym[:70]


def is_vfs(sym):
    return "opfs_vfs" in sym or "rsqlite_vfs" in sym


def is_call(stack):
    return any("write_at" in f or clean(f).endswith("::flush") for f in stack)


def main():
    path = sys.argv[1]
    passes = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    timed = [s for s in load(path) if any("bench_sql::execute_script" in f for f in s)]
    vfs = [s for s in timed if any(is_vfs(f) for f in s)]
    calls = [s for s in vfs if is_call(s)]
    cpu = [s for s in vfs if not is_call(s)]
    per = lambda n: f"{n / passes:.1f}"
    print(f"{path}: samples per pass (0.5 ms each at 1,999 Hz), {passes} passes")
    print(f"  timed {per(len(timed))}, in the VFS {per(len(vfs))} "
          f"({100 * len(vfs) / len(timed):.2f} %): OPFS calls {per(len(calls))} "
          f"({100 * len(calls) / len(timed):.2f} %), CPU {per(len(cpu))} "
          f"({100 * len(cpu) / len(timed):.2f} %)")
    leaf = collections.Counter()
    for s in cpu:
        ours = [clean(f) for f in s if is_vfs(f)]
        leaf[f"{clean(s[0])}  <  {ours[0] if ours else '?'}"] += 1
    print("  the VFS's CPU by leaf < innermost VFS frame:")
    for k, v in leaf.most_common(16):
        print(f"    {v / passes:5.1f}  {k}")


main()
