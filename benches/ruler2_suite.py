"""RULER v2's suite (`gen suite ruler2`, all 12 configs) timed per length, 4k to 128k, with the
peak memory of the gen process, and projected to RULER v2's 100 samples per config.

At each length the suite runs at two sample counts; wall time is fitted as a fixed cost
(reading the MMLU and HotpotQA files, preparing pools) plus a cost per sample (every instance
is made alone, so generation is linear in samples), and extrapolated to 100.

The committed fixtures are small (about 82k tokens of auxiliary_train items, 22k of HotpotQA
paragraphs), so lengths they cannot fill are refused by gen. `--data fixtures` runs on them and
reports what each length does; `--data invented` (the default) first writes larger invented
files in the same layouts into a temporary folder (tests/fixtures/mmlu/make_fixtures.py's
word problems and tests/fixtures/qa/make_fixtures.py's towns, scaled up; nothing committed,
nothing downloaded). `--reach` only prints the token sizes of the pools.

    cargo build --release
    /work/venv-firstuse/bin/python benches/ruler2_suite.py --samples 1,3
    /work/venv-firstuse/bin/python benches/ruler2_suite.py --data fixtures --len 4k,16k,32k,64k
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures")
SAMPLES_PER_CONFIG = 100  # RULER v2's default


def load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def invented(directory: str, aux: int, test: int, hotpot_towns: int, hotpot_items: int) -> Tuple[str, str]:
    """Larger invented MMLU (Parquet) and HotpotQA files, written by the fixtures' own makers."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    mm = load(os.path.join(FIX, "mmlu", "make_fixtures.py"), "mmlu_fixtures")
    mmlu = os.path.join(directory, "mmlu")
    os.makedirs(mmlu)
    for split, seed, n in (("test", 31, test), ("auxiliary_train", 131, aux)):
        rows = mm.items(seed, n)
        pq.write_table(pa.table({
            "question": [q for q, _, _, _ in rows], "subject": [s for _, s, _, _ in rows],
            "choices": pa.array([c for _, _, c, _ in rows], pa.list_(pa.string())),
            "answer": pa.array([a for _, _, _, a in rows], pa.int64()),
        }), os.path.join(mmlu, f"{split}-00000-of-00001.parquet"))
    sys.path.insert(0, os.path.join(FIX, "qa"))
    import make_fixtures as qa  # the QA fixtures' maker

    qa.write(directory, squad_towns=5, hotpot_towns=hotpot_towns, hotpot_items=hotpot_items)
    return mmlu, os.path.join(directory, "hotpotqa.json")


def reach(mmlu: str, hotpot: str) -> Dict[str, int]:
    """Tokens (o200k) of every distinct auxiliary item and HotpotQA paragraph as a context
    shows them: the most one instance could hold without repeating a unit."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    from check_dataset import tiktoken_encoding
    from check_ruler2 import Hotpot, Mmlu

    enc = tiktoken_encoding("o200k_base")
    m, h = Mmlu(mmlu), Hotpot(hotpot)
    items = sum(len(enc.encode_ordinary(f"Question 1234567: {t}\n")) for t in m.aux_letters)
    docs = sum(len(enc.encode_ordinary(f"Document 1234567:\n{p}\n\n")) for p in h.paragraphs)
    return {"aux_items": len(m.aux_letters), "aux_tokens": items, "test_items": len(m.test),
            "hotpot_paragraphs": len(h.paragraphs), "hotpot_tokens": docs, "hotpot_questions": len(h.questions)}


def run(a: argparse.Namespace, mmlu: str, hotpot: str, work: str, length: str, samples: int) -> Optional[Dict[str, Any]]:
    """One suite run at one length: wall seconds, rows, tokens, peak MiB; None when refused."""
    out = os.path.join(work, f"r2-{length}-{samples}")
    cmd = [a.gen, "suite", "ruler2", "--len", length, "--samples", str(samples), "--tokenizer", a.tokenizer,
           "--threads", str(a.threads), "--out", out, "-q", "--mmlu-data", mmlu, "--qa-data", hotpot]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    if status != 0:
        print(f"  {length} x {samples}: gen refused: {err.splitlines()[0] if err else status}", file=sys.stderr)
        return None
    import pyarrow.parquet as pq

    m = json.load(open(os.path.join(out, "manifest.json")))
    tokens = rows = 0
    for f in m["files"]:
        t = pq.read_table(os.path.join(out, f["path"]), columns=["length"])
        tokens += sum(t.column("length").to_pylist())
        rows += t.num_rows
    subprocess.run(["rm", "-rf", out], check=True)
    return {"samples": samples, "configs": len(m["configs"]), "rows": rows, "wall_s": wall, "tokens": tokens,
            "peak_mib": usage.ru_maxrss / 1024, "skipped": [line for line in err.splitlines() if "skip" in line.lower()]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", default=os.path.join(ROOT, "target", "release", "gen"))
    ap.add_argument("--samples", default="1,3", help="two sample counts per config, comma-separated")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--len", default="4k,8k,16k,32k,64k,128k")
    ap.add_argument("--tokenizer", default="o200k")
    ap.add_argument("--data", choices=("invented", "fixtures"), default="invented")
    ap.add_argument("--aux", type=int, default=8000, help="invented auxiliary_train items")
    ap.add_argument("--reach", action="store_true", help="only print the pools' token sizes")
    a = ap.parse_args()
    counts = [int(n) for n in a.samples.split(",")]
    if len(counts) != 2 or counts[0] >= counts[1]:
        sys.exit(f"--samples {a.samples}: expected two increasing counts, like 1,3")
    with tempfile.TemporaryDirectory() as work:
        if a.data == "fixtures":
            mmlu, hotpot = os.path.join(FIX, "mmlu", "parquet"), os.path.join(FIX, "qa", "hotpotqa.json")
        else:
            mmlu, hotpot = invented(work, a.aux, 400, 4000, 2000)
        print(json.dumps({"data": a.data, "pools": reach(mmlu, hotpot)}))
        if a.reach:
            return
        if not os.path.exists(a.gen):
            sys.exit("build first: cargo build --release")
        total_h = 0.0
        for length in a.len.split(","):
            runs = [run(a, mmlu, hotpot, work, length, n) for n in counts]
            if any(r is None for r in runs):
                print(json.dumps({"len": length, "refused": True}))
                continue
            lo, hi = runs
            per_sample = (hi["wall_s"] - lo["wall_s"]) / (hi["samples"] - lo["samples"])
            fixed = max(0.0, lo["wall_s"] - per_sample * lo["samples"])
            wall_100 = fixed + per_sample * SAMPLES_PER_CONFIG
            tokens_100 = hi["tokens"] / hi["samples"] * SAMPLES_PER_CONFIG
            total_h += wall_100 / 3600
            print(json.dumps({
                "len": length, "configs": hi["configs"], "threads": a.threads,
                "runs": [{k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items() if k != "skipped"}
                         for r in runs],
                "skipped": hi["skipped"],
                "fixed_s": round(fixed, 2), "per_sample_s": round(per_sample, 3),
                "projected_100_samples_s": round(wall_100, 1),
                "projected_100_samples_rows": hi["rows"] // hi["samples"] * SAMPLES_PER_CONFIG,
                "projected_tokens_per_s": round(tokens_100 / wall_100) if wall_100 > 0 else None,
            }))
        print(json.dumps({"projected_100_samples_all_lengths_h": round(total_h, 3)}))


if __name__ == "__main__":
    main()
