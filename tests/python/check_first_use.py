"""The package's harness tasks make their data on first use and reuse it after (.ci/run).

Usage: python check_first_use.py WORKDIR FIXTURES   (the venv's python: needlework installed,
with lm-eval and inspect-ai; offline)

  - lm-eval (dummy model): `needlework_niah` with pretrained=<a local model folder> generates
    into NEEDLEWORK_CACHE and says so; the same run again says "using cached ... (verified)"
    and leaves every file and folder of the cache as it was (inode and mtime); what lm-eval
    sent is what gen counted (`gen inspect --prompts`), with and without a chat template; a
    second tokenizer makes a second folder; RULER's group makes its suite once.
  - inspect_ai (mockllm): `inspect eval needlework/niah -T ...` the same way; gold answers
    through the packaged task score 1.0.
  - the cache itself: two first uses of one recipe at once leave one verified folder and no
    temporary one (the loser of the rename drops its copy); a cached folder that fails
    `gen verify` is made again.
"""

from __future__ import annotations

import glob
import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import needlework
from needlework import first_use
from needlework.lm_eval import TASKS_DIR

WORK = Path(sys.argv[1]).resolve()
FIX = Path(sys.argv[2]).resolve()
BIN = Path(sys.executable).parent
GENERATING = "needlework: generating "
CACHED = "needlework: using cached "
UNEVEN = "not scored on the same number of documents"


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(argv: List[str], cache: Path, log: Path) -> str:
    """Run a harness command with NEEDLEWORK_CACHE=cache; its combined output (kept in log)."""
    env = dict(os.environ, NEEDLEWORK_CACHE=str(cache))
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=WORK)
    log.write_text(proc.stdout)
    if proc.returncode != 0:
        print(proc.stdout[-4000:])
        fail(f"{' '.join(argv[:4])} ... exited {proc.returncode} (log {log})")
    return proc.stdout


def lines(text: str, start: str) -> List[str]:
    return [ln[ln.index(start):] for ln in text.splitlines() if start in ln]


def snapshot(cache: Path) -> Dict[str, Tuple[int, int]]:
    """Every path under the cache with its inode and mtime: a regeneration changes them."""
    out = {}
    for p in [cache, *sorted(cache.rglob("*"))]:
        st = p.stat()
        out[str(p.relative_to(cache))] = (st.st_ino, st.st_mtime_ns)
    return out


def folders(cache: Path) -> List[Path]:
    entries = sorted(cache.iterdir())
    hidden = [p.name for p in entries if p.name.startswith(".")]
    if hidden:
        fail(f"{cache} holds temporary folders after the runs: {hidden}")
    return entries


def prompts(folder: Path) -> Dict[str, str]:
    """`gen inspect --prompts` of a recipe folder's dataset: what prompt_tokens counted."""
    out = subprocess.run([needlework.find_gen(), "inspect", str(folder / "dataset"), "--prompts"], check=True,
                         capture_output=True).stdout.decode("utf-8")
    return {r["id"]: r["prompt"] for r in map(json.loads, out.splitlines())}


def first_then_cached(name: str, argv: List[str], cache: Path) -> Tuple[Path, str]:
    """Run argv twice on an empty cache: the first generates, the second generates nothing."""
    if cache.exists() and any(cache.iterdir()):
        fail(f"{cache} is not empty before the first run")
    first = run(argv, cache, WORK / f"{name}-1.log")
    made = lines(first, GENERATING)
    if len(made) != 1 or lines(first, CACHED):
        fail(f"{name}: the first run should generate once, it logged {made + lines(first, CACHED)}")
    (folder,) = folders(cache)
    if not made[0].endswith(f"into {folder}"):
        fail(f"{name}: the log names another folder than {folder}: {made[0]}")
    needlework.verify(folder / "dataset")
    before = snapshot(cache)
    second = run(argv, cache, WORK / f"{name}-2.log")
    if lines(second, GENERATING) or len(lines(second, CACHED)) != 1 or "(verified)" not in lines(second, CACHED)[0]:
        fail(f"{name}: the second run should use the cache, it logged {lines(second, GENERATING) + lines(second, CACHED)}")
    after = snapshot(cache)
    if list(cache.rglob("__pycache__")):
        fail(f"{name}: a harness wrote bytecode into the cache: {list(cache.rglob('__pycache__'))}")
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        fail(f"{name}: the second run changed the cache: {changed[:5]}")
    print(f"ok {name}: first run: {made[0]}")
    print(f"ok {name}: second run: {lines(second, CACHED)[0]}; {len(after)} cache paths unchanged (inode, mtime)")
    return folder, first + second


def lm_eval_results(out: Path, task: str = "") -> Tuple[dict, List[dict]]:
    """The latest run's results under ``out`` and its logged samples of ``task``."""
    found = sorted(glob.glob(str(out / "**" / "results_*.json"), recursive=True))
    if not found:
        fail(f"no lm-eval results file under {out}")
    latest = Path(found[-1])
    results = json.loads(latest.read_text())
    stamp = latest.name[len("results_"):-len(".json")]
    samples = []
    for path in glob.glob(str(latest.parent / f"samples_{task}_{stamp}.jsonl")):
        samples += [json.loads(ln) for ln in open(path, encoding="utf-8")]
    return results, samples


def check_sent(name: str, folder: Path, samples: List[dict]) -> None:
    want = prompts(folder)
    if len(samples) != len(want):
        fail(f"{name}: lm-eval logged {len(samples)} samples, the dataset has {len(want)} rows")
    for s in samples:
        sent = s["arguments"]["gen_args_0"]["arg_0"]
        if sent != want[s["doc"]["id"]]:
            fail(f"{name}: lm-eval sent another text for row {s['doc']['id']}: {sent[:160]!r}")
    print(f"ok {name}: lm-eval sent what gen counted for all {len(want)} rows, byte for byte")


def lm_eval_checks() -> None:
    lm = [str(BIN / "lm_eval"), "--model", "dummy", "--include_path", str(TASKS_DIR)]
    # A local model folder (tokenizer.json and tokenizer_config.json) as pretrained=.
    cache = WORK / "cache-lm"
    meta = {"len": "1k,2k", "depths": 3, "seed": 7}
    argv = lm + ["--model_args", f"pretrained={FIX / 'chat'}", "--tasks", "needlework_niah",
                 "--metadata", json.dumps(meta), "--log_samples", "--output_path", str(WORK / "lm-out")]
    folder, logs = first_then_cached("lm-eval", argv, cache)
    recorded = json.loads((folder / "first_use.json").read_text())
    if recorded["options"]["tokenizer"] != str(FIX / "chat" / "tokenizer.json"):
        fail(f"lm-eval: the recipe's tokenizer is {recorded['options']['tokenizer']}, not the model folder's")
    if UNEVEN in logs:
        fail("lm-eval warned that metrics were scored on different numbers of documents")
    results, samples = lm_eval_results(WORK / "lm-out", "needlework_niah")
    r = results["results"]["needlework_niah"]
    if "score,none" not in r or results["n-samples"]["needlework_niah"]["effective"] != 6:
        fail(f"lm-eval results for needlework_niah: {r}, n-samples {results['n-samples']}")
    check_sent("lm-eval", folder, samples)

    # The same model with its chat template (and a system turn): another recipe, another folder.
    chat = {**meta, "chat_template": True, "system": "Answer briefly."}
    argv = lm + ["--model_args", f"pretrained={FIX / 'chat'}", "--tasks", "needlework_niah",
                 "--metadata", json.dumps(chat), "--log_samples", "--output_path", str(WORK / "lm-chat")]
    text = run(argv, cache, WORK / "lm-chat.log")
    if len(lines(text, GENERATING)) != 1:
        fail(f"lm-eval chat: expected one generation, got {lines(text, GENERATING)}")
    new = [p for p in folders(cache) if p != folder]
    if len(new) != 1 or not (new[0] / "chat_turns.jsonl").is_file():
        fail(f"lm-eval chat: expected one new folder with chat_turns.jsonl, found {new}")
    _, samples = lm_eval_results(WORK / "lm-chat", "needlework_niah")
    check_sent("lm-eval chat template", new[0], samples)



def lm_eval_ruler_checks() -> None:
    """An explicit tokenizer file in --metadata, and RULER's group: one suite for its tasks."""
    lm = [str(BIN / "lm_eval"), "--model", "dummy", "--include_path", str(TASKS_DIR)]
    cache = WORK / "cache-ruler"
    ruler = {"len": "4k", "samples": 2, "tokenizer": str(FIX / "tokenizer-bytelevel.json")}
    argv = lm + ["--tasks", "needlework_ruler", "--metadata", json.dumps(ruler), "--output_path", str(WORK / "lm-ruler")]
    text = run(argv, cache, WORK / "lm-ruler.log")
    (suite,) = folders(cache)
    if len(lines(text, GENERATING)) != 1:
        fail(f"lm-eval ruler: the suite should be generated once, got {lines(text, GENERATING)}")
    results, _ = lm_eval_results(WORK / "lm-ruler")
    tasks = [t for t in results["results"] if t.startswith("needlework_ruler_")]
    if len(tasks) != len(first_use.configs(suite / "dataset")) or "needlework_ruler" not in results["results"]:
        fail(f"lm-eval ruler: tasks {tasks}, the suite has {first_use.configs(suite / 'dataset')}")
    if UNEVEN in text:
        fail("lm-eval ruler warned that metrics were scored on different numbers of documents")
    print(f"ok lm-eval ruler: one suite ({suite.name}) for {len(tasks)} tasks and the group, tokenizer from --metadata")


def inspect_checks() -> None:
    cache = WORK / "cache-inspect"
    tok = FIX / "tokenizer-bytelevel.json"
    argv = [str(BIN / "inspect"), "eval", "needlework/niah", "-T", "len=1k", "-T", "seed=7", "-T", "depths=2",
            "-T", f"tokenizer={tok}", "--model", "mockllm/model", "--display", "plain",
            "--log-dir", str(WORK / "inspect-logs")]
    folder, _ = first_then_cached("inspect", argv, cache)
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import list_eval_logs, read_eval_log
    from inspect_ai.model import ModelOutput, get_model

    logs = list_eval_logs(str(WORK / "inspect-logs"))
    if len(logs) != 2:
        fail(f"inspect: expected two logs, found {len(logs)}")
    for info in logs:
        log = read_eval_log(info)
        if log.status != "success" or log.results is None or log.results.total_samples != 2:
            fail(f"inspect: run {log.status}, {log.results and log.results.total_samples} samples (expected 2)")
    # Gold answers through the packaged task (the cache now holds the data): accuracy 1.0.
    os.environ["NEEDLEWORK_CACHE"] = str(cache)
    rows = needlework.load(folder / "dataset", first_use.configs(folder / "dataset")[0])
    rows = rows["test"] if hasattr(rows, "keys") else rows.to_pylist()
    gold = [", ".join(r["answers"]) if r["metric"] in ("all", "any") else r["target"] for r in rows]
    model = get_model("mockllm/model", custom_outputs=[ModelOutput.from_content(model="mockllm/model", content=g) for g in gold])
    log = inspect_eval("needlework/niah", task_args={"len": "1k", "seed": 7, "depths": 2, "tokenizer": str(tok)},
                       model=model, max_samples=1, display="none", log_dir=str(WORK / "inspect-gold"))[0]
    metrics = {n: m.value for s in log.results.scores for n, m in s.metrics.items()}
    if log.status != "success" or metrics.get("accuracy") != 1.0:
        fail(f"inspect: gold answers scored {metrics} ({log.status})")
    print(f"ok inspect: gold answers through needlework/niah score {metrics.get('accuracy')} on {len(gold)} samples")


def tokenizer_checks() -> None:
    """model_args as lm-eval passes them: a folder, a hub id in the local cache, a file, a name."""
    import shutil

    hub = WORK / "hf-home" / "hub"
    snaps = hub / "models--acme--tiny-chat" / "snapshots"
    for commit in ("1111", "2222"):
        (snaps / commit).mkdir(parents=True, exist_ok=True)
        shutil.copy(FIX / "chat" / "tokenizer.json", snaps / commit / "tokenizer.json")
    (hub / "models--acme--tiny-chat" / "refs").mkdir(exist_ok=True)
    (hub / "models--acme--tiny-chat" / "refs" / "main").write_text("2222")
    saved = {k: os.environ.pop(k, None) for k in ("HF_HUB_CACHE", "HF_HOME")}
    os.environ["HF_HOME"] = str(WORK / "hf-home")
    try:
        tok, model = first_use.resolve_tokenizer(pretrained="acme/tiny-chat")
        assert (tok, model) == (str(snaps / "2222" / "tokenizer.json"), snaps / "2222"), (tok, model)
        tok, _ = first_use.resolve_tokenizer(pretrained="acme/tiny-chat", revision="1111")
        assert tok == str(snaps / "1111" / "tokenizer.json"), tok
        (hub / "models--acme--tiny-chat" / "refs" / "main").unlink()
        try:
            first_use.resolve_tokenizer(pretrained="acme/tiny-chat")
        except ValueError as e:
            assert "2 snapshots" in str(e) and "revision=" in str(e), e
        else:
            fail("two snapshots and no refs/main were not refused")
        try:
            first_use.resolve_tokenizer(pretrained="acme/absent")
        except ValueError as e:
            assert "acme/absent" in str(e) and str(hub) in str(e), e
        else:
            fail("a model in no local cache was not refused")
    finally:
        os.environ.pop("HF_HOME")
        os.environ.update({k: v for k, v in saved.items() if v is not None})
    tok, model = first_use.resolve_tokenizer(pretrained=str(FIX / "chat"))
    assert tok == str(FIX / "chat" / "tokenizer.json") and model == FIX / "chat", (tok, model)
    assert first_use.resolve_tokenizer("o200k", str(FIX / "chat")) == ("o200k", None)
    tok, _ = first_use.resolve_tokenizer(str(FIX / "tokenizer-bytelevel.json"), "acme/ignored")
    assert tok == str(FIX / "tokenizer-bytelevel.json"), tok
    assert first_use.resolve_tokenizer() == ("o200k", None)
    try:
        first_use.resolve_tokenizer(pretrained=str(FIX))
    except ValueError as e:
        assert "has no tokenizer.json" in str(e), e
    else:
        fail("a folder without tokenizer.json was not refused")
    # The recipe: a changed tokenizer file is another key; ignored model arguments are not.
    a = first_use.recipe("niah", {"pretrained": str(FIX / "chat"), "len": "1k", "dtype": "bfloat16"})
    b = first_use.recipe("niah", {"pretrained": str(FIX / "chat"), "len": "1k"})
    c = first_use.recipe("niah", {"tokenizer": str(FIX / "tokenizer-bytelevel.json"), "len": "1k"})
    d = first_use.recipe("niah", {"pretrained": str(FIX / "chat"), "len": "1k", "chat_template": True})
    assert a.key() == b.key() and len({b.key(), c.key(), d.key()}) == 3, (a.key(), b.key(), c.key(), d.key())
    assert d.options["chat_template"].endswith("tokenizer_config.json"), d.options
    copy = WORK / "model-copy"
    shutil.copytree(FIX / "chat", copy, dirs_exist_ok=True)
    e = first_use.recipe("niah", {"pretrained": str(copy), "len": "1k", "chat_template": True})
    assert e.key() == d.key() and e.options != d.options, "a copy of the model folder is another recipe"
    (copy / "tokenizer.json").write_bytes((copy / "tokenizer.json").read_bytes() + b"\n")
    f = first_use.recipe("niah", {"pretrained": str(copy), "len": "1k", "chat_template": True})
    assert f.key() != d.key(), "a changed tokenizer.json kept the recipe's key"
    print("ok tokenizer: a model folder, a hub id in the local cache (refs/main, revision=, two snapshots refused), a file, a built-in name; recipe keys (by the files' bytes, not their paths)")


RECIPE = {"len": "2k", "depths": 4, "seed": 3}


def _slow_first_use(cache: str, entered, go, out) -> None:
    """A first use that finishes only after another one has renamed its folder into place."""
    os.environ["NEEDLEWORK_CACHE"] = cache
    real = first_use._make

    def make(r, part):
        real(r, part)
        entered.set()
        go.wait(120)

    first_use._make = make
    out.put(str(first_use.prepare("niah", RECIPE)))


def _first_use(cache: str, out) -> None:
    os.environ["NEEDLEWORK_CACHE"] = cache
    out.put(str(first_use.prepare("niah", RECIPE)))


def cache_checks() -> None:
    cache = WORK / "cache-race"
    ctx = multiprocessing.get_context("spawn")
    entered, go, out = ctx.Event(), ctx.Event(), ctx.Queue()
    slow = ctx.Process(target=_slow_first_use, args=(str(cache), entered, go, out))
    slow.start()
    if not entered.wait(120):
        fail("the slow first use never finished generating")
    fast = ctx.Process(target=_first_use, args=(str(cache), out))
    fast.start()
    fast.join(120)
    go.set()
    slow.join(120)
    if fast.exitcode != 0 or slow.exitcode != 0:
        fail(f"concurrent first uses exited {fast.exitcode} and {slow.exitcode}")
    got = {out.get(timeout=5), out.get(timeout=5)}
    (folder,) = folders(cache)
    if got != {str(folder / "dataset")}:
        fail(f"concurrent first uses returned {got}, the cache holds {folder}")
    needlework.verify(folder / "dataset")
    print(f"ok cache: two first uses at once, one renamed into place, the other dropped its copy; one verified folder {folder.name}")

    # A cached folder that no longer verifies is made again.
    shard = sorted(folder.rglob("*.parquet"))[0]
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    env = dict(os.environ, NEEDLEWORK_CACHE=str(cache))
    proc = subprocess.run([sys.executable, "-c", "import sys, needlework.first_use as f; f.prepare('niah', "
                           + repr(RECIPE) + ")"], env=env, capture_output=True, text=True)
    if proc.returncode != 0 or "fails gen verify" not in proc.stderr or GENERATING not in proc.stderr:
        fail(f"a damaged cached folder was not made again: {proc.returncode} {proc.stderr}")
    folders(cache)
    needlework.verify(folder / "dataset")
    print("ok cache: a damaged cached folder fails gen verify and is made again")


if __name__ == "__main__":
    WORK.mkdir(parents=True, exist_ok=True)
    only = os.environ.get("CHECK_FIRST_USE_ONLY")  # one part, when working on it
    for part in (tokenizer_checks, cache_checks, lm_eval_checks, lm_eval_ruler_checks, inspect_checks):
        if not only or part.__name__ == only:
            part()
