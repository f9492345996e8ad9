"""Runs the scheduler recipes in docs/schedulers/ as the schedulers would, on this machine.

Each recipe is run with the variables its scheduler sets (Slurm's array variables, a
Kubernetes Indexed Job's JOB_COMPLETION_INDEX, AWS Batch's, Google Cloud Batch's and Cloud
Run's), once per worker; a retried worker must find its shard complete and leave it untouched;
the parts, merged, must equal one machine's run byte for byte. Ray's recipe runs on a local
``ray.init()`` when ``--ray-python`` names an interpreter with Ray installed.

    python tests/python/check_schedulers.py --gen target/release/gen --work DIR [--ray-python PY]
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import yaml

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "docs" / "schedulers"
# 12 instances: small enough for CI, enough for 6 shards of 2.
RECIPE = "niah --len 1k,2k --depths 3 --samples 2"
SCHEDULER_VARS = [
    "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT", "JOB_COMPLETION_INDEX",
    "AWS_BATCH_JOB_ARRAY_INDEX", "AWS_BATCH_JOB_ARRAY_SIZE", "BATCH_TASK_INDEX",
    "BATCH_TASK_COUNT", "CLOUD_RUN_TASK_INDEX", "CLOUD_RUN_TASK_COUNT",
]


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def tree(d: Path) -> Dict[str, bytes]:
    """Every file under ``d``: relative path -> bytes."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def stamps(d: Path) -> Dict[str, int]:
    return {str(p.relative_to(d)): p.stat().st_mtime_ns for p in d.rglob("*") if p.is_file()}


def run(argv: List[str], env: Dict[str, str], what: str) -> str:
    """Run with only the scheduler variables of ``env`` set; its stderr, or fail."""
    full = {k: v for k, v in os.environ.items() if k not in SCHEDULER_VARS}
    full.update(env)
    p = subprocess.run(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail(f"{what}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stderr


def merged_equals_whole(gen: str, parts: List[Path], out: Path, whole: Path, what: str) -> None:
    run([gen, "merge", *map(str, parts), "--out", str(out), "-q"], {}, f"{what}: merge")
    if tree(out) != tree(whole):
        fail(f"{what}: the merged parts differ from one machine's run")


def retried_worker_keeps(argv: List[str], env: Dict[str, str], part: Path, what: str) -> None:
    before, times = tree(part), stamps(part)
    err = run(argv, env, f"{what}: retried worker")
    if "is already complete" not in err:
        fail(f"{what}: a retried worker did not say its shard was complete: {err!r}")
    if tree(part) != before or stamps(part) != times:
        fail(f"{what}: a retried worker rewrote its complete shard")


def slurm(gen: str, work: Path, whole: Path) -> None:
    script = RECIPES / "slurm-array.sh"
    # --array=1-4: task ids 1..4, shards 0..3.
    parts = work / "slurm-parts"
    base = {"GEN": gen, "PARTS": str(parts), "RECIPE": RECIPE}
    def task_env(t: int, lo: int, hi: int, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        env = dict(base, SLURM_ARRAY_TASK_ID=str(t), SLURM_ARRAY_TASK_MIN=str(lo),
                   SLURM_ARRAY_TASK_MAX=str(hi), SLURM_ARRAY_TASK_STEP="1",
                   SLURM_ARRAY_TASK_COUNT=str(hi - lo + 1))
        env.update(extra or {})
        return env
    for t in range(1, 5):
        run(["bash", str(script)], task_env(t, 1, 4), f"slurm task {t}")
    retried_worker_keeps(["bash", str(script)], task_env(2, 1, 4), parts / "2", "slurm (requeued task 2)")
    # `sbatch --array=3` to rerun task 3: a one-task array, refused rather than made shard 0 of 1.
    p = subprocess.run(["bash", str(script)], env=dict(os.environ, **task_env(3, 3, 3)),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 2 or "scontrol requeue" not in p.stderr:
        fail(f"slurm: a one-task array resubmission was not refused: exit {p.returncode}: {p.stderr!r}")
    merged_equals_whole(gen, sorted(parts.iterdir()), work / "slurm-merged", whole, "slurm")
    print("ok slurm: --array=1-4 made shards 0..3 by --shard-index env; a requeued task kept its shard; merged == one machine")
    # More shards than array tasks: 2 tasks of 3 shards each.
    parts3 = work / "slurm-per-task"
    for t in range(2):
        run(["bash", str(script)], task_env(t, 0, 1, {"PARTS": str(parts3), "SHARDS_PER_TASK": "3"}), f"slurm K=3 task {t}")
    made = sorted(parts3.iterdir())
    if len(made) != 6:
        fail(f"slurm SHARDS_PER_TASK=3 over 2 tasks made {len(made)} parts, not 6")
    merged_equals_whole(gen, made, work / "slurm-per-task-merged", whole, "slurm SHARDS_PER_TASK=3")
    print("ok slurm: SHARDS_PER_TASK=3 over --array=0-1 made 6 shards; merged == one machine")


def kubernetes(gen: str, work: Path, whole: Path) -> None:
    doc = yaml.safe_load((RECIPES / "indexed-job.yaml").read_text())
    spec = doc["spec"]
    if spec.get("completionMode") != "Indexed":
        fail("indexed-job.yaml: completionMode is not Indexed")
    container = spec["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    if int(env["SHARDS"]) != spec["completions"]:
        fail(f"indexed-job.yaml: SHARDS {env['SHARDS']} is not completions {spec['completions']}")
    mount = container["volumeMounts"][0]["mountPath"]
    command = container["command"] + [a.replace(mount, str(work / "k8s-volume")) for a in container["args"]]
    shards = 3
    env.update(RECIPE=RECIPE, SHARDS=str(shards), PATH=f"{Path(gen).resolve().parent}:{os.environ['PATH']}")
    volume = work / "k8s-volume" / "ruler-parts"
    volume.mkdir(parents=True)
    # Pod 2's first attempt was killed: it left its lock naming PID 1 (a container's PID, which
    # the retry has too) and its staging folder. The retry must take both over.
    (volume / ".2.lock").write_text("1\n")
    (volume / ".2.tmp-1").mkdir()
    for i in range(shards):
        run(command, dict(env, JOB_COMPLETION_INDEX=str(i)), f"kubernetes pod {i}")
    parts = sorted(p for p in volume.iterdir() if not p.name.startswith("."))
    if len(parts) != shards or any(p.name.startswith(".") for p in volume.iterdir()):
        fail(f"kubernetes: the volume holds {sorted(p.name for p in volume.iterdir())}, not the {shards} parts alone")
    retried_worker_keeps(command, dict(env, JOB_COMPLETION_INDEX="1"), parts[1], "kubernetes (retried pod 1)")
    merged_equals_whole(gen, parts, work / "k8s-merged", whole, "kubernetes")
    print(f"ok kubernetes: the Indexed Job's command ran as {shards} pods (JOB_COMPLETION_INDEX), one retried after a kill (its lock named PID 1); a retried pod kept its shard; merged == one machine")


def array_jobs(gen: str, work: Path, whole: Path) -> None:
    """AWS Batch, Google Cloud Batch and Cloud Run: index and count both from the scheduler."""
    for name, index, count in [("aws-batch", "AWS_BATCH_JOB_ARRAY_INDEX", "AWS_BATCH_JOB_ARRAY_SIZE"),
                               ("gcp-batch", "BATCH_TASK_INDEX", "BATCH_TASK_COUNT"),
                               ("cloud-run", "CLOUD_RUN_TASK_INDEX", "CLOUD_RUN_TASK_COUNT")]:
        parts = work / f"{name}-parts"
        argv = [gen, *shlex.split(RECIPE), "--num-shards", "env", "--shard-index", "env", "-q"]
        for i in range(4):
            run(argv + ["--out", str(parts / str(i))], {index: str(i), count: "4"}, f"{name} worker {i}")
        merged_equals_whole(gen, sorted(parts.iterdir()), work / f"{name}-merged", whole, name)
        print(f"ok {name}: 4 workers by {index}/{count}; merged == one machine")


def ray(gen: str, work: Path, whole: Path, python: str) -> None:
    out = work / "ray-merged"
    argv = [python, str(RECIPES / "ray_shards.py"), "--shards", "3", "--parts", str(work / "ray-parts"),
            "--out", str(out), "--gen", gen, "--", *shlex.split(RECIPE)]
    run(argv, {"RAY_DISABLE_USAGE_STATS": "1", "RAY_USAGE_STATS_ENABLED": "0"}, "ray")
    if tree(out) != tree(whole):
        fail("ray: the merged parts differ from one machine's run")
    print("ok ray: 3 remote tasks on a local ray.init(); merged == one machine")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ray-python")
    a = ap.parse_args()
    gen, work = str(Path(a.gen).resolve()), Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    whole = work / "whole"
    run([gen, *shlex.split(RECIPE), "--out", str(whole), "-q"], {}, "one machine")
    slurm(gen, work, whole)
    kubernetes(gen, work, whole)
    array_jobs(gen, work, whole)
    if a.ray_python:
        ray(gen, work, whole, a.ray_python)


if __name__ == "__main__":
    main()
