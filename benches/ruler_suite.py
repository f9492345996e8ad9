"""RULER's whole suite (`gen suite ruler`, all 13 configs, 4k-128k) timed end to end, with the
peak memory of the gen process, and projected to RULER's 500 samples (generation is linear in
samples: every instance is made alone).

QA needs SQuAD and HotpotQA files large enough to fill 128k; nothing is downloaded, so the
benchmark writes invented ones in their layouts (tests/fixtures/qa/make_fixtures.py, scaled up).

    cargo build --release
    python3 benches/ruler_suite.py --samples 4 --threads 2
"""

import argparse
import json
import os
import resource
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
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--len", default="4k,8k,16k,32k,64k,128k")
    ap.add_argument("--tokenizer", default="o200k")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "data")
        os.makedirs(data)
        # About 2 M tokens of SQuAD-like paragraphs and 1.3 M of HotpotQA-like ones.
        make_fixtures.write(data, squad_towns=5000, hotpot_towns=4000, hotpot_items=2000)
        out = os.path.join(work, "ruler")
        cmd = [a.gen, "suite", "ruler", "--len", a.len, "--samples", str(a.samples),
               "--tokenizer", a.tokenizer, "--threads", str(a.threads), "--out", out, "-q",
               "--qa-data", os.path.join(data, "squad.json"),
               "--qa2-data", os.path.join(data, "hotpotqa.json")]
        start = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        m = json.load(open(os.path.join(out, "manifest.json")))
        tokens = 0
        rows = 0
        import pyarrow.parquet as pq
        for config in m["configs"]:
            for f in sorted(os.listdir(os.path.join(out, config))):
                if f.endswith(".parquet"):
                    t = pq.read_table(os.path.join(out, config, f), columns=["length"])
                    tokens += sum(t.column("length").to_pylist())
                    rows += t.num_rows
        scale = 500 / a.samples
        print(json.dumps({
            "configs": len(m["configs"]),
            "samples": a.samples,
            "lengths": a.len,
            "threads": a.threads,
            "rows": rows,
            "tokens": tokens,
            "wall_s": round(wall, 1),
            "tokens_per_s": round(tokens / wall),
            "peak_mib": round(peak),
            "projected_500_samples_h": round(wall * scale / 3600, 2),
            "projected_500_samples_tokens": round(tokens * scale),
        }))


if __name__ == "__main__":
    main()
