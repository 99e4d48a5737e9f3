#!/usr/bin/env bash
# Measures FaultFS against the plain filesystem under it, same run, interleaved: 4 KiB
# writes each followed by fdatasync, 1 MiB sequential writes, random reads through a shared
# mmap. Prints medians of five rounds and the native/FaultFS ratio, then a durable Fief
# commit on FaultFS against one on the native filesystem (`fief bench`'s small-txns.full and
# small-txns.faultfs, same run, eleven repetitions each), and the issue's targets as met or missed. Needs root (or FUSE
# rights), python3, and a built fief (release by default).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${FIEF_BIN:-$(swift build -c release --show-bin-path)/fief}"
work="$(mktemp -d /tmp/fief-faultfs-overhead-XXXXXX)"
mkdir -p "$work/native" "$work/backing" "$work/mnt"
trap '"$bin" faultfs unmount "$work/mnt" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$bin" faultfs mount "$work/backing" "$work/mnt" --seed 1 >/dev/null
python3 - "$work/native" "$work/mnt" <<'PY'
import mmap, os, random, statistics, sys, time

def small_synced(d, n=1500):
    fd = os.open(d + "/s.dat", os.O_CREAT | os.O_RDWR | os.O_TRUNC)
    buf = b"x" * 4096
    t = time.perf_counter()
    for i in range(n):
        os.pwrite(fd, buf, (i % 64) * 4096)
        os.fdatasync(fd)
    dt = time.perf_counter() - t
    os.close(fd)
    return n / dt

def sequential(d, mb=64):
    fd = os.open(d + "/q.dat", os.O_CREAT | os.O_RDWR | os.O_TRUNC)
    buf = b"y" * (1 << 20)
    t = time.perf_counter()
    for _ in range(mb):
        os.write(fd, buf)
    os.fsync(fd)
    dt = time.perf_counter() - t
    os.close(fd)
    return mb / dt

def mmap_reads(d, n=200000):
    fd = os.open(d + "/q.dat", os.O_RDONLY)
    size = os.fstat(fd).st_size
    m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    r = random.Random(1)
    t = time.perf_counter()
    s = 0
    for _ in range(n):
        s += m[r.randrange(size)]
    dt = time.perf_counter() - t
    m.close()
    os.close(fd)
    return n / dt

work = [("4 KiB write + fdatasync /s", small_synced), ("sequential write MB/s", sequential), ("random mmap reads /s", mmap_reads)]
results = {}
for _ in range(5):
    for where, d in (("native", sys.argv[1]), ("faultfs", sys.argv[2])):
        for name, f in work:
            results.setdefault((name, where), []).append(f(d))
print(f"{'workload':28s} {'native':>12s} {'faultfs':>12s} {'native/faultfs':>15s}")
ratios = {}
for name, _ in work:
    a = statistics.median(results[(name, "native")])
    b = statistics.median(results[(name, "faultfs")])
    ratios[name] = a / b
    print(f"{name:28s} {a:12.1f} {b:12.1f} {a / b:14.2f}x")
with open(sys.argv[1] + "/../ratios.txt", "w") as f:
    f.write(f"{ratios['4 KiB write + fdatasync /s']}\n")
PY
"$bin" bench run --quick --repetitions 11 --suite engine --workloads small-txns --systems fief --seed 1 --out "$work/bench" >/dev/null
python3 - "$work/bench/results.json" "$work/ratios.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
median = {b["id"]: b["systems"][0]["value"]["median"] for b in r["benchmarks"] if b["id"] in ("small-txns.full", "small-txns.faultfs")}
commit = median["small-txns.full"] / median["small-txns.faultfs"]
print(f"{'durable Fief commit /s':28s} {median['small-txns.full']:12.1f} {median['small-txns.faultfs']:12.1f} {commit:14.2f}x")
sync = float(open(sys.argv[2]).read())
print()
for what, ratio, bound in (("4 KiB write + fdatasync", sync, 1.5), ("durable Fief commit", commit, 1.3)):
    print(f"target: {what} on FaultFS <= {bound}x native: {ratio:.2f}x  {'met' if ratio <= bound else 'MISSED'}")
PY
