"""Make a needlework dataset's shards as Ray tasks, one ``gen`` process each, then merge them.

    python docs/schedulers/ray_shards.py --shards 16 --parts /shared/parts --out /shared/ruler \
        -- suite ruler --seed 7 --len 4k,32k

Ray hands out no worker index, so each task is given its shard by number. The parts folder
must be one every node can write (a shared file system); the merge runs on the driver. A task
Ray retries after its shard completed finds the part whole and exits 0 without making it again.
"""

from __future__ import annotations

import argparse
import subprocess

import ray


@ray.remote(num_cpus=1, max_retries=3)
def make_shard(gen: str, recipe: list[str], shards: int, index: int, parts: str) -> str:
    """One shard, made by gen into ``parts/index``; its folder."""
    out = f"{parts}/{index}"
    subprocess.run(
        [gen, *recipe, "--num-shards", str(shards), "--shard-index", str(index), "--out", out, "-q"],
        check=True,
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shards", type=int, required=True)
    ap.add_argument("--parts", required=True, help="a folder every node can write")
    ap.add_argument("--out", required=True, help="the merged dataset")
    ap.add_argument("--gen", default="gen")
    ap.add_argument("--address", default=None, help="a running cluster; a local one when absent")
    ap.add_argument("recipe", nargs=argparse.REMAINDER, help="-- then gen's task and flags")
    a = ap.parse_args()
    recipe = a.recipe[1:] if a.recipe[:1] == ["--"] else a.recipe
    ray.init(address=a.address)
    parts = ray.get([make_shard.remote(a.gen, recipe, a.shards, i, a.parts) for i in range(a.shards)])
    subprocess.run([a.gen, "merge", *parts, "--out", a.out, "-q"], check=True)
    print(f"merged {len(parts)} shards into {a.out}")


if __name__ == "__main__":
    main()
