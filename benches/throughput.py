"""End-to-end throughput of `gen` (Parquet written): tokens per second and peak memory.

    cargo build --release && python3 benches/throughput.py [--quick] [--task niah|babilong|needlechain|sort|arith|graphwalks]

For each length (4k, 32k, 128k, 1m) and thread count (1 and all cores) it generates about
TOKENS tokens of the task (default `niah`) and reports tokens/s (sum of the rows' measured lengths over wall time),
MB/s of prompt text, and the peak resident memory of the gen process. As a yardstick it also
times `zstd -3` compressing the same prompt text. This is a benchmark, not a test: nothing fails
on speed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "target", "release", "gen")
QUICK = "--quick" in sys.argv
TOKENS = 4_000_000 if QUICK else 16_000_000
LENGTHS = [("4k", 4096), ("32k", 32768), ("128k", 131072), ("1m", 1048576)]
# The command of each task benchmarked at a length target.
TASKS = {
    "niah": ["niah"],
    "babilong": ["babilong", "--task", "qa2"],
    "needlechain": ["needlechain", "--order", "shuffled"],
    "sort": ["sort"],
    "arith": ["arith", "--op", "sum", "--count", "20"],
    "graphwalks": ["graphwalks"],
}
TASK = sys.argv[sys.argv.index("--task") + 1] if "--task" in sys.argv else "niah"


# A tiny launcher process starts gen and reports its peak RSS: a child forked from this (large)
# Python process would count the parent's pages in its peak before exec replaced them.
LAUNCH = """
import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(json.dumps([os.waitstatus_to_exitcode(status), time.perf_counter() - start, usage.ru_maxrss / 1024]))
"""


def run(args):
    """Run gen in a fresh process; return (seconds, peak RSS in MiB)."""
    out = subprocess.run([sys.executable, "-c", LAUNCH, GEN] + args, capture_output=True, text=True, check=True)
    code, elapsed, peak = json.loads(out.stdout)
    if code != 0:
        sys.exit(f"gen {' '.join(args)} failed")
    return elapsed, peak


def prompt_bytes_and_tokens(out):
    import pyarrow.parquet as pq

    text, tokens = bytearray(), 0
    for f in json.load(open(os.path.join(out, "manifest.json")))["files"]:
        t = pq.read_table(os.path.join(out, f["path"]), columns=["input", "length"])
        for s in t.column("input").to_pylist():
            text += s.encode()
        tokens += sum(t.column("length").to_pylist())
    return bytes(text), tokens


def zstd_seconds(data):
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        start = time.perf_counter()
        subprocess.run(["zstd", "-3", "-q", "-c", f.name], stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start


def main():
    if not os.path.exists(GEN):
        sys.exit("build first: cargo build --release")
    cores = os.cpu_count() or 1
    if TASK not in TASKS:
        sys.exit(f"unknown --task {TASK}: expected one of {', '.join(TASKS)}")
    print(f"gen {' '.join(TASKS[TASK])}, o200k, zstd Parquet; {cores} cores; ~{TOKENS/1e6:.0f}M tokens per run")
    print(f"{'length':>6} {'threads':>7} {'rows':>6} {'seconds':>8} {'tokens/s':>12} {'MB/s':>7} {'peak MiB':>9} {'zstd -3 MB/s':>13}")
    for name, length in LENGTHS:
        samples = max(1, TOKENS // length)
        for threads in sorted({1, cores}):
            out = tempfile.mkdtemp(prefix="nw-bench-")
            shutil.rmtree(out)
            args = TASKS[TASK] + ["--len", name, "--samples", str(samples), "--seed", "1", "--threads", str(threads), "-q", "--out", out]
            seconds, peak = run(args)
            data, tokens = prompt_bytes_and_tokens(out)
            z = zstd_seconds(data) if shutil.which("zstd") else float("nan")
            print(f"{name:>6} {threads:>7} {samples:>6} {seconds:>8.2f} {tokens/seconds:>12,.0f} {len(data)/seconds/1e6:>7.1f} {peak:>9.0f} {len(data)/z/1e6:>13.1f}")
            shutil.rmtree(out)
    # Peak memory must not grow with --samples: it plateaus once a parallel batch (at most 512
    # instances or about 256 MiB of prompts) and a row group (about 64 MiB of text, ~3,800
    # rows at 4k) are full, so 8,192 and 16,384 samples peak alike.
    for samples in (8192, 16384):
        out = tempfile.mkdtemp(prefix="nw-bench-")
        shutil.rmtree(out)
        _, peak = run(TASKS[TASK] + ["--len", "4k", "--samples", str(samples), "-q", "--out", out])
        print(f"4k x {samples:>5} samples: peak {peak:.0f} MiB")
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
