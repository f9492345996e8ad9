"""End to end `gen niah` against OpenAI tiktoken merely counting the same text: the ratio gen/tiktoken.

    cargo build --release && python3 benches/vs_tiktoken.py [--threads 2] [--repeats 3]
        [--tokens 2000000] [--lengths 4k,32k,128k,1m] [--encodings o200k,cl100k] [--baseline PATH]
        [--tasks niah,needlechain,babilong,sort,arith,vt,cwe,fwe] [--task-length 32k]

For each encoding and length, `gen niah` writes about TOKENS tokens of prompts (text generated,
counted exactly, zstd Parquet and manifest written) on THREADS threads; the prompts are read back
from the Parquet and tiktoken's `encode_ordinary_batch(texts, num_threads=THREADS)` counts them.
Runs are interleaved (gen, tiktoken, gen, tiktoken, ...) and the median of REPEATS is reported:
ratio = tiktoken seconds / gen seconds, so above 1.0 means gen produces the data faster than
tiktoken can count it. With `--baseline PATH` another gen binary (say, an older build) is run
interleaved too and reported beside it. Every line carries the 1-minute load average, since a
shared machine's numbers mean little without it. tiktoken's counts are checked against the rows'
`length`. A second table runs each of TASKS (default: every task but posgen, which does not
measure haystack text, and qa, which needs a data file) at TASK-LENGTH with o200k, interleaved
with niah, and reports tokens per second (of the rows' `length`), the share of niah's tokens per
second (medians), the share of niah's rows per second (every row fills the same --len, its
answer budget included: sort's answer is as long as its list, so its prompts are half as long)
and gen/tiktoken. This is a benchmark, not a test: nothing fails on speed.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "target", "release", "gen")
SIZES = {"4k": 4096, "32k": 32768, "128k": 131072, "1m": 1048576}
TIKTOKEN_NAMES = {"o200k": "o200k_base", "cl100k": "cl100k_base"}


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def load():
    return os.getloadavg()[0]


# The command of each task in the per-task table: the shapes throughput.py benchmarks, and
# RULER's synthetic tasks with their defaults.
TASKS = {
    "niah": ["niah"],
    "needlechain": ["needlechain", "--order", "shuffled"],
    "babilong": ["babilong", "--task", "qa2"],
    "sort": ["sort", "--digits", "1..6"],
    "arith": ["arith", "--op", "sum", "--count", "20"],
    "vt": ["vt"],
    "cwe": ["cwe"],
    "fwe": ["fwe"],
    "graphwalks": ["graphwalks"],
}


def gen_seconds(binary, enc, length, samples, threads, out, task=("niah",)):
    args = [binary, *task, "--len", length, "--samples", str(samples), "--tokenizer", enc,
            "--threads", str(threads), "--out", out, "--force", "-q"]
    start = time.perf_counter()
    subprocess.run(args, check=True)
    return time.perf_counter() - start


def prompts(out):
    import pyarrow.parquet as pq

    texts, lengths = [], []
    for f in json.load(open(os.path.join(out, "manifest.json")))["files"]:
        t = pq.read_table(os.path.join(out, f["path"]), columns=["input", "length"])
        texts += t.column("input").to_pylist()
        lengths += t.column("length").to_pylist()
    return texts, lengths


def main():
    threads = int(arg("--threads", "2"))
    repeats = int(arg("--repeats", "3"))
    tokens = int(arg("--tokens", "2000000"))
    lengths = arg("--lengths", "4k,32k,128k,1m").split(",")
    encodings = arg("--encodings", "o200k,cl100k").split(",")
    baseline = arg("--baseline", None)
    if not os.path.exists(GEN):
        sys.exit("build first: cargo build --release")
    work = tempfile.mkdtemp(prefix="needlework-vs-tiktoken-")
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        # tiktoken downloads its encoding files; place them from the crates' sources instead.
        os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(work, "tiktoken")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "python", "check_dataset.py"),
                        "prime-tiktoken"], check=True, stdout=subprocess.DEVNULL)
    import tiktoken

    print(f"niah, {threads} threads, ~{tokens / 1e6:.1f}M tokens per run, median of {repeats} interleaved runs")
    header = "| encoding | length | rows | gen s | tiktoken s | gen/tiktoken | gen Mtok/s |"
    if baseline:
        header += " baseline s | baseline/tiktoken | speed-up |"
    header += " load |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    try:
        for enc in encodings:
            tk = tiktoken.get_encoding(TIKTOKEN_NAMES[enc])
            for length in lengths:
                samples = max(1, round(tokens / SIZES[length]))
                out = os.path.join(work, f"{enc}-{length}")
                gen_t, base_t, tk_t, loads = [], [], [], []
                for _ in range(repeats):
                    loads.append(load())
                    if baseline:
                        base_t.append(gen_seconds(baseline, enc, length, samples, threads, out + "-base"))
                    gen_t.append(gen_seconds(GEN, enc, length, samples, threads, out))
                    texts, want = prompts(out)
                    start = time.perf_counter()
                    got = [len(ids) for ids in tk.encode_ordinary_batch(texts, num_threads=threads)]
                    tk_t.append(time.perf_counter() - start)
                    if got != want:
                        sys.exit(f"{enc} {length}: tiktoken's counts differ from the rows' length")
                    loads.append(load())
                g, t = statistics.median(gen_t), statistics.median(tk_t)
                row = f"| {enc} | {length} | {samples} | {g:.3f} | {t:.3f} | {t / g:.2f} | {sum(want) / g / 1e6:.2f} |"
                if baseline:
                    b = statistics.median(base_t)
                    row += f" {b:.3f} | {t / b:.2f} | {b / g:.2f}× |"
                print(row + f" {min(loads):.1f}–{max(loads):.1f} |", flush=True)
        task_table(work, threads, repeats, tokens)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def task_table(work, threads, repeats, tokens):
    import tiktoken

    tasks = arg("--tasks", ",".join(TASKS)).split(",")
    length = arg("--task-length", "32k")
    samples = max(1, round(tokens / SIZES[length]))
    tk = tiktoken.get_encoding("o200k_base")
    print(f"\nper task at {length}, o200k, {threads} threads, {samples} samples, median of {repeats} interleaved runs")
    print("| task | gen s | gen M tokens/s | share of niah | rows/s share | gen/tiktoken | load |")
    print("|---|---|---|---|---|---|---|")
    times = {t: [] for t in ["niah"] + [t for t in tasks if t != "niah"]}
    tk_times = {t: [] for t in times}
    counted = {}
    loads = []
    for _ in range(repeats):
        for task in times:
            out = os.path.join(work, f"task-{task}")
            loads.append(load())
            times[task].append(gen_seconds(GEN, "o200k", length, samples, threads, out, TASKS[task]))
            texts, want = prompts(out)
            start = time.perf_counter()
            got = [len(ids) for ids in tk.encode_ordinary_batch(texts, num_threads=threads)]
            tk_times[task].append(time.perf_counter() - start)
            if got != want:
                sys.exit(f"{task}: tiktoken's counts differ from the rows' length")
            counted[task] = sum(want)
    rate = {t: counted[t] / statistics.median(times[t]) for t in times}
    for t in times:
        g, k = statistics.median(times[t]), statistics.median(tk_times[t])
        rows_share = statistics.median(times["niah"]) / g
        print(f"| {t} | {g:.3f} | {rate[t] / 1e6:.2f} | {rate[t] / rate['niah']:.0%} | {rows_share:.0%} | {k / g:.2f} | {min(loads):.1f}–{max(loads):.1f} |", flush=True)


if __name__ == "__main__":
    main()
