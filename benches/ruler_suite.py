"""RULER's whole suite (`gen suite ruler`, all 13 configs, 4k-128k) timed end to end, with the
peak memory of the gen process, and projected to RULER's 500 samples: the suite is run at two
sample counts, and the wall time fitted as a fixed cost (reading inputs, preparing haystacks)
plus a cost per sample (every instance is made alone, so generation is linear in samples).

QA needs SQuAD and HotpotQA files large enough to fill 128k; nothing is downloaded, so the
benchmark writes invented ones in their layouts (tests/fixtures/qa/make_fixtures.py, scaled up).

    cargo build --release
    python3 benches/ruler_suite.py --samples 4,16 --threads 2
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "qa"))
import make_fixtures  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", default=os.path.join(ROOT, "target", "release", "gen"))
    ap.add_argument("--samples", default="4,16", help="two sample counts, comma-separated")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--len", default="4k,8k,16k,32k,64k,128k")
    ap.add_argument("--tokenizer", default="o200k")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "data")
        os.makedirs(data)
        # About 2 M tokens of SQuAD-like paragraphs and 1.3 M of HotpotQA-like ones.
        make_fixtures.write(data, squad_towns=5000, hotpot_towns=4000, hotpot_items=2000)
        runs = [run(a, data, work, int(n)) for n in a.samples.split(",")]
        (s1, w1, t1, _), (s2, w2, t2, _) = runs[0], runs[-1]
        per_sample = (w2 - w1) / (s2 - s1)
        fixed = w1 - per_sample * s1
        tokens_500 = t2 / s2 * 500
        wall_500 = fixed + per_sample * 500
        print(json.dumps({
            "runs": [{"samples": s, "wall_s": round(w, 1), "tokens": t, "peak_mib": round(p)}
                     for s, w, t, p in runs],
            "threads": a.threads,
            "fixed_s": round(fixed, 1),
            "per_sample_s": round(per_sample, 2),
            "projected_500_samples_h": round(wall_500 / 3600, 2),
            "projected_500_samples_tokens": round(tokens_500),
            "projected_tokens_per_s": round(tokens_500 / wall_500),
        }))


def run(a, data, work, samples):
    """One suite run: (samples, wall seconds, tokens of all rows, peak MiB of this run)."""
    out = os.path.join(work, f"ruler-{samples}")
    cmd = [a.gen, "suite", "ruler", "--len", a.len, "--samples", str(samples),
           "--tokenizer", a.tokenizer, "--threads", str(a.threads), "--out", out, "-q",
           "--qa-data", os.path.join(data, "squad.json"),
           "--qa2-data", os.path.join(data, "hotpotqa.json")]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"gen failed: {cmd}")
    import pyarrow.parquet as pq
    m = json.load(open(os.path.join(out, "manifest.json")))
    tokens = 0
    for config in m["configs"]:
        for f in sorted(os.listdir(os.path.join(out, config))):
            if f.endswith(".parquet"):
                t = pq.read_table(os.path.join(out, config, f), columns=["length"])
                tokens += sum(t.column("length").to_pylist())
    return samples, wall, tokens, usage.ru_maxrss / 1024


if __name__ == "__main__":
    main()
