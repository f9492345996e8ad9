"""The installed wheel, from a fresh virtual environment without cargo on PATH (.ci/run).

Usage: python check_wheel.py WORKDIR   (run by the venv's python; `gen` must be the wheel's)
"""

import doctest
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import needlework

work = Path(sys.argv[1])
scripts = Path(sysconfig.get_path("scripts"))
gen = shutil.which("gen")
assert gen and Path(gen).parent == scripts, f"gen on PATH is {gen}, not the wheel's in {scripts}"
assert shutil.which("cargo") is None, "cargo is on PATH: this check must run without it"
assert Path(needlework.find_gen()).parent == scripts, needlework.find_gen()

# The command line and the API make the same bytes from the same recipe.
subprocess.run([gen, "niah", "--len", "4k", "--depths", "3", "--out", str(work / "cli"), "-q"], check=True)
out = needlework.generate("niah", out=work / "api", len="4k", depths=3, quiet=True)
assert out == work / "api"
cli_m = json.loads((work / "cli" / "manifest.json").read_text())
api_m = json.loads((work / "api" / "manifest.json").read_text())
assert cli_m["dataset_hash"] == api_m["dataset_hash"], (cli_m["dataset_hash"], api_m["dataset_hash"])

# load: the rows, with their columns, as pyarrow reads the shards: a pyarrow Table without
# datasets, a DatasetDict of splits with it (.ci/run runs this script in both environments).
try:
    import datasets
except ImportError:
    datasets = None
import pyarrow as pa
import pyarrow.parquet as pq

direct = [r for f in api_m["files"] for r in pq.read_table(out / f["path"]).to_pylist()]
table = needlework.load(out, "niah_single")
every = needlework.load(out)
assert list(every) == ["niah_single"], list(every)
if datasets is None:
    assert isinstance(table, pa.Table), type(table)
    rows = table.to_pylist()
    via = "pyarrow"
else:
    assert isinstance(table, datasets.DatasetDict) and list(table) == ["test"], table
    assert isinstance(every["niah_single"], datasets.DatasetDict), type(every["niah_single"])
    rows = list(table["test"])
    via = f"datasets {datasets.__version__}"
assert rows == direct, "load() gives other rows than the shards hold"
assert len(rows) == 3 and all(r["length"] <= r["target_length"] for r in rows), rows
assert {r["depth_percent"] for r in rows} == {0.0, 50.0, 100.0}, [r["depth_percent"] for r in rows]

needlework.verify(out)

# score: gold answers score 1.0, through gen score.
preds = work / "preds.jsonl"
preds.write_text("".join(json.dumps({"id": r["id"], "prediction": r["target"]}) + "\n" for r in rows))
scores = needlework.score(out, preds, out=work / "scores")
assert scores["overall"]["rows"] == 3 and scores["overall"]["accuracy"] == 1.0, scores["overall"]
exported = needlework.export(out, "inspect")
assert exported.is_dir() and any(exported.iterdir()), exported

# A bad option: GenError with gen's own one-line message and exit code 2, nothing written.
try:
    needlework.generate("niah", out=work / "bad", len="4q")
except needlework.GenError as e:
    assert e.code == 2 and "'4q'" in e.message and "\n" not in e.message, (e.code, e.message)
    assert not (work / "bad").exists()
else:
    raise AssertionError("len='4q' did not raise GenError")
try:
    needlework.generate("niah", out=work / "bad", dephts=3)
except needlework.GenError as e:
    assert e.code == 2 and "--dephts" in e.message, (e.code, e.message)
else:
    raise AssertionError("dephts=3 did not raise GenError")

# The harness tasks' files came with the wheel (maturin packs python/needlework whole).
from needlework.lm_eval import TASKS_DIR

yamls = sorted(p.name for p in TASKS_DIR.glob("*.yaml"))
assert "needlework_niah.yaml" in yamls and "needlework_ruler.yaml" in yamls and len(yamls) == 13, yamls
from importlib.metadata import entry_points

eps = [e for e in entry_points(group="inspect_ai") if e.name == "needlework"]
assert len(eps) == 1 and eps[0].value == "needlework.inspect_tasks", eps

# The module's doctests (they write to temporary directories).
failed, tried = doctest.testmod(needlework)
assert tried >= 5 and failed == 0, (failed, tried)
print(f"ok wheel: gen at {gen}, 3 rows loaded through {via}, CLI and API hash equal, {tried} doctests passed")
