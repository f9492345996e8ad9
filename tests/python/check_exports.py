"""Check the harness files `gen export` writes, offline.

  check_exports.py predictions DIR OUT_PREFIX
      Write prediction files for every row of DIR: gold (the target; for `all`/`any` rows,
      the answers joined), empty, half (gold for every other row), lead (gold inside a short
      sentence), echo (the whole input), partial (gold for the first third of the rows only)
      and some (for `all`/`any` rows, only some of the gold items: RULER's partial credit):
      OUT_PREFIX-gold.jsonl, -empty, -half, -lead, -echo, -partial, -some.
  check_exports.py same-scores DIR PREDICTIONS SCORES_JSON [PREDICTIONS SCORES_JSON ...]
      The exported lm-eval hooks (Python) must score PREDICTIONS exactly as `gen score` did
      (Rust), row for row: same totals, same RULER partial credit and coverage per config and
      overall (rows without a prediction count as wrong unless `gen score --only-present` was
      used).
  check_exports.py inspect-gold DIR CONFIG
      Run the exported inspect_ai task with mockllm answering each sample's gold target, then
      with empty answers: accuracy (and RULER's partial credit, where the config has it) must
      be 1.0, then 0.0.
  check_exports.py lm-eval-results OUTPUT_PATH TASK ROWS [TASK ROWS ...]
      lm-evaluation-harness finished each TASK on ROWS rows, in one results file, and reported
      `score`, per-length metrics for whole-config tasks, and `ruler` where the rows have it.

  check_exports.py sent-prompts GEN DIR LM_SAMPLES_GLOB
      What lm-eval logged as sent (the samples files matching the glob), RULER's input +
      answer_prefix and the OpenCompass module's prompt equal `GEN inspect DIR --prompts`, the
      text `prompt_tokens` counts (inside the chat template, for a chat dataset), byte for byte.

The OpenCompass export is checked by check_opencompass.py (OpenCompass's own machinery, in a
virtual environment of its own) and the RULER export by check_ruler.py.
"""
import glob
import importlib.util
import json
import os
import subprocess
import sys


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(directory):
    import pyarrow.parquet as pq

    manifest = json.load(open(os.path.join(directory, "manifest.json")))
    for f in manifest["files"]:
        for row in pq.read_table(os.path.join(directory, f["path"])).to_pylist():
            yield f["config"], row


def gold_text(row):
    if row["metric"] in ("all", "any"):
        return " ".join(row["answers"])
    return row["target"]


def write_predictions(directory, prefix):
    kinds = ("gold", "empty", "half", "lead", "echo", "partial", "some")
    outs = {k: open(f"{prefix}-{k}.jsonl", "w") for k in kinds}
    all_rows = list(rows(directory))
    for i, (_, row) in enumerate(all_rows):
        gold = gold_text(row)
        texts = {
            "gold": gold,
            "empty": "",
            "half": gold if i % 2 == 0 else "",
            "lead": f"The answer is {gold}.",
            "echo": row["input"],
            "some": (" ".join(row["answers"][: i % (len(row["answers"]) + 1)])
                     if row["metric"] in ("all", "any") else gold),
        }
        if i < max(1, len(all_rows) // 3):
            texts["partial"] = gold
        for kind, text in texts.items():
            outs[kind].write(json.dumps({"id": row["id"], "prediction": text}) + "\n")
    for f in outs.values():
        f.close()
    print(f"ok: wrote {', '.join(kinds)} predictions for {len(all_rows)} rows")


def lm_eval_hooks(directory):
    found = glob.glob(os.path.join(directory, "lm_eval", "needlework_*_utils.py"))
    if len(found) != 1:
        fail(f"expected one lm-eval hook module in {directory}/lm_eval, found {found}")
    return load_module(found[0], os.path.basename(found[0])[:-3])


def same_scores(directory, pairs):
    utils = lm_eval_hooks(directory)
    dataset = list(rows(directory))
    for predictions, scores_json in pairs:
        same_scores_one(utils, dataset, predictions, scores_json)


def same_scores_one(utils, dataset, predictions, scores_json):
    preds = {}
    for line in open(predictions):
        v = json.loads(line)
        preds[v["id"]] = v["prediction"]
    scores = json.load(open(scores_json))
    only_present = scores.get("only_present", False)
    totals = {}
    coverage = {}
    for config, row in dataset:
        present = row["id"] in preds
        c = coverage.setdefault(config, [0, 0])
        c[0] += int(present)
        c[1] += 1
        if not present and only_present:
            continue
        t = totals.setdefault(config, [0, 0.0, 0, 0.0])
        t[0] += 1
        # A row without a prediction scores as an empty answer: wrong, and no credit.
        value = utils.process_results(row, [preds.get(row["id"], "")])
        length = str(row["target_length"])
        if value[length] != value["score"] or value.get("ruler") != value.get("ruler_" + length):
            fail(f"{row['id']}: the per-length metrics differ from score and ruler")
        if present:
            t[1] += value["score"]
        if "ruler" in value:
            t[2] += 1
            t[3] += value["ruler"]
    for config, (n, correct, ruler_rows, credit) in totals.items():
        rust = scores["configs"][config]["overall"]
        if rust["rows"] != n or rust["correct"] != int(correct):
            fail(f"{config}: Python scores {int(correct)}/{n}, gen score {rust['correct']}/{rust['rows']}")
        r = rust.get("ruler")
        if ruler_rows == 0 and r is not None or ruler_rows and (
                r is None or r["rows"] != ruler_rows or abs(r["credit"] - credit) > 1e-9):
            fail(f"{config}: Python's RULER credit {credit} over {ruler_rows} rows, gen score {r}")
    for config, (predicted, n) in coverage.items():
        rust = scores["configs"][config]["coverage"]
        if (rust["predicted"], rust["rows"]) != (predicted, n):
            fail(f"{config}: {predicted} of {n} rows predicted, gen score says {rust}")
    want = {"predicted": sum(c[0] for c in coverage.values()), "rows": sum(c[1] for c in coverage.values())}
    if scores["coverage"] != want:
        fail(f"coverage {want}, gen score says {scores['coverage']}")
    print(f"ok: lm-eval utils and gen score agree on {sum(t[0] for t in totals.values())} rows"
          f" ({want['predicted']} of {want['rows']} predicted)")


def inspect_gold(directory, config):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    module = load_module(os.path.join(directory, "inspect", "needlework_tasks.py"), "needlework_inspect")
    targets = [row["target"] if row["metric"] not in ("all", "any") else gold_text(row)
               for c, row in rows(directory) if c == config]
    has_ruler = any(row["metric"] in ("all", "any") for c, row in rows(directory) if c == config)
    limit = min(6, len(targets))
    for outputs, want in ((targets[:limit], 1.0), ([""] * limit, 0.0)):
        model = get_model(
            "mockllm/model",
            custom_outputs=[ModelOutput.from_content(model="mockllm/model", content=t) for t in outputs],
        )
        log = inspect_eval(getattr(module, config)(), model=model, limit=limit, max_samples=1,
                           display="none", log_dir=os.environ.get("INSPECT_LOG_DIR", "inspect-logs"))[0]
        if log.status != "success":
            fail(f"inspect: run status {log.status}: {log.error}")
        metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
        want_metrics = {"accuracy": want}
        if has_ruler:
            want_metrics["ruler_mean"] = want
        for name, value in want_metrics.items():
            if name not in metrics or abs(metrics[name] - value) > 1e-9:
                fail(f"inspect: {name} {metrics.get(name)}, expected {value} ({metrics})")
    print(f"ok: inspect_ai ran {config}: gold answers score 1.0, empty answers 0.0 ({limit} samples)"
          + ("; RULER credit too" if has_ruler else ""))


def lm_eval_results(output_path, expected):
    found = glob.glob(os.path.join(output_path, "**", "results_*.json"), recursive=True)
    if len(found) != 1:
        fail(f"expected one lm-eval results file under {output_path}, found {found}")
    results = json.load(open(found[0]))
    for task, n in expected:
        r = results["results"].get(task)
        if r is None:
            fail(f"lm-eval results have no {task}: {list(results['results'])}")
        per_length = "_len" not in task
        if "score,none" not in r or per_length != any(k.split(",")[0].isdigit() for k in r):
            fail(f"lm-eval results for {task} lack score or per-length metrics: {r}")
        samples = results.get("n-samples", {}).get(task, {}).get("effective")
        if samples != n:
            fail(f"lm-eval scored {samples} samples of {task}, expected {n}")
        shown = {k.split(",")[0]: v for k, v in r.items() if k.endswith(",none") and "stderr" not in k}
        print(f"ok: lm-evaluation-harness ran {task} on {n} rows: {shown}")


def sent_prompts(gen, directory, lm_samples):
    """What the harnesses send is what `prompt_tokens` counted: lm-eval's logged context (the
    files matching the glob `lm_samples`, from a run of the dataset's lm-eval export), RULER's `input` + `answer_prefix` and
    the OpenCompass module's `prompt` equal `gen inspect --prompts`, row by row, byte for byte."""
    out = subprocess.run([gen, "inspect", directory, "--prompts"], check=True,
                         capture_output=True).stdout.decode("utf-8")
    want = {r["id"]: r["prompt"] for r in map(json.loads, out.splitlines())}
    if not want:
        fail(f"gen inspect --prompts printed nothing for {directory}")
    seen = 0
    for path in glob.glob(lm_samples, recursive=True):
        for line in open(path, encoding="utf-8"):
            sample = json.loads(line)
            sent = sample["arguments"]["gen_args_0"]["arg_0"]
            if sent != want.get(sample["doc"]["id"]):
                fail(f"lm-eval sent another text for row {sample['doc']['id']}: {sent[:120]!r}")
            seen += 1
    if not 0 < seen <= len(want):
        fail(f"lm-eval logged {seen} samples for {lm_samples}, the dataset has {len(want)} rows")
    ruler = 0
    for path in glob.glob(os.path.join(directory, "ruler", "*", "validation.jsonl")):
        for line in open(path, encoding="utf-8"):
            row = json.loads(line)
            if row["input"] + row["answer_prefix"] != want[row["others"]["id"]]:
                fail(f"RULER's input + answer_prefix is another text for row {row['others']['id']}")
            ruler += 1
    if ruler != len(want):
        fail(f"the RULER export has {ruler} rows, the dataset has {len(want)}")
    # The OpenCompass module's prompt, built without OpenCompass (its imports stubbed out).
    import types
    stubs = {"opencompass": None, "opencompass.datasets": None, "opencompass.datasets.base": "BaseDataset",
             "opencompass.openicl": None, "opencompass.openicl.icl_evaluator": "BaseEvaluator"}
    for name, cls in stubs.items():
        module = sys.modules.setdefault(name, types.ModuleType(name))
        if cls:
            setattr(module, cls, type(cls, (), {}))
    module_path = glob.glob(os.path.join(directory, "opencompass", "needlework_*_oc.py"))
    if len(module_path) != 1:
        fail(f"expected one OpenCompass module in {directory}/opencompass, found {module_path}")
    oc = load_module(module_path[0], "needlework_oc_check")
    compass = 0
    for config, row in rows(directory):
        if oc._prepare(row)["prompt"] != want[row["id"]]:
            fail(f"the OpenCompass module's prompt is another text for row {row['id']}")
        compass += 1
    print(f"ok: lm-eval ({seen} rows), RULER ({ruler}) and OpenCompass ({compass}) send what gen counted, byte for byte")


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "predictions":
        write_predictions(a[1], a[2])
    elif len(a) >= 4 and len(a) % 2 == 0 and a[0] == "same-scores":
        same_scores(a[1], [(a[i], a[i + 1]) for i in range(2, len(a), 2)])
    elif len(a) == 4 and a[0] == "sent-prompts":
        sent_prompts(a[1], a[2], a[3])
    elif len(a) == 3 and a[0] == "inspect-gold":
        inspect_gold(a[1], a[2])
    elif len(a) >= 4 and len(a) % 2 == 0 and a[0] == "lm-eval-results":
        lm_eval_results(a[1], [(a[i], int(a[i + 1])) for i in range(2, len(a), 2)])
    else:
        print(__doc__)
        sys.exit(2)
