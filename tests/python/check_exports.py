"""Check the harness files `gen export` writes, offline.

  check_exports.py predictions DIR OUT_PREFIX
      Write prediction files for every row of DIR: gold (the target; for `all`/`any` rows,
      the answers joined), empty, half (gold for every other row), lead (gold inside a short
      sentence), echo (the whole input) and partial (gold for the first third of the rows
      only): OUT_PREFIX-gold.jsonl, -empty, -half, -lead, -echo, -partial.
  check_exports.py same-scores DIR PREDICTIONS SCORES_JSON
      The exported lm-eval utils.py (Python) must score PREDICTIONS exactly as `gen score`
      did (Rust), row for row: same totals and coverage per config and overall (rows without
      a prediction count as wrong unless `gen score --only-present` was used).
  check_exports.py inspect-gold DIR CONFIG
      Run the exported inspect_ai task with mockllm answering each sample's gold target, then
      with empty answers: accuracy must be 1.0, then 0.0.
  check_exports.py lm-eval-results OUTPUT_PATH TASK ROWS
      lm-evaluation-harness finished TASK on ROWS rows and reported `score` and per-length
      metrics.
  check_exports.py opencompass DIR
      Import the exported OpenCompass configs with stand-ins for OpenCompass's base classes
      (OpenCompass itself needs torch), load every config and score gold and empty answers.
"""
import glob
import importlib.util
import json
import os
import sys
import types


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
    kinds = ("gold", "empty", "half", "lead", "echo", "partial")
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
        }
        if i < max(1, len(all_rows) // 3):
            texts["partial"] = gold
        for kind, text in texts.items():
            outs[kind].write(json.dumps({"id": row["id"], "prediction": text}) + "\n")
    for f in outs.values():
        f.close()
    print(f"ok: wrote {', '.join(kinds)} predictions for {len(all_rows)} rows")


def same_scores(directory, predictions, scores_json):
    utils = load_module(os.path.join(directory, "lm_eval", "utils.py"), "needlework_lm_eval_utils")
    preds = {}
    for line in open(predictions):
        v = json.loads(line)
        preds[v["id"]] = v["prediction"]
    scores = json.load(open(scores_json))
    only_present = scores.get("only_present", False)
    totals = {}
    coverage = {}
    for config, row in rows(directory):
        present = row["id"] in preds
        c = coverage.setdefault(config, [0, 0])
        c[0] += int(present)
        c[1] += 1
        if not present and only_present:
            continue
        t = totals.setdefault(config, [0, 0.0])
        t[0] += 1
        if present:
            value = utils.process_results(row, [preds[row["id"]]])
            if value[str(row["target_length"])] != value["score"]:
                fail(f"{row['id']}: the per-length metric differs from score")
            t[1] += value["score"]
    for config, (n, correct) in totals.items():
        rust = scores["configs"][config]["overall"]
        if rust["rows"] != n or rust["correct"] != int(correct):
            fail(f"{config}: Python scores {int(correct)}/{n}, gen score {rust['correct']}/{rust['rows']}")
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
        acc = log.results.scores[0].metrics["accuracy"].value
        if abs(acc - want) > 1e-9:
            fail(f"inspect: accuracy {acc}, expected {want}")
    print(f"ok: inspect_ai ran {config}: gold answers score 1.0, empty answers 0.0 ({limit} samples)")


def lm_eval_results(output_path, task, n):
    found = glob.glob(os.path.join(output_path, "**", "results_*.json"), recursive=True)
    if not found:
        fail(f"lm-eval wrote no results under {output_path}")
    results = json.load(open(sorted(found)[-1]))
    r = results["results"].get(task)
    if r is None:
        fail(f"lm-eval results have no {task}: {list(results['results'])}")
    if "score,none" not in r or not any(k.split(",")[0].isdigit() for k in r):
        fail(f"lm-eval results for {task} lack score or per-length metrics: {r}")
    samples = results.get("n-samples", {}).get(task, {}).get("effective")
    if samples != n:
        fail(f"lm-eval scored {samples} samples of {task}, expected {n}")
    print(f"ok: lm-evaluation-harness ran {task} on {n} rows: {r}")


def opencompass(directory):
    # Stand-ins for the OpenCompass names the exported file imports.
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m

    class BaseDataset:
        pass

    class BaseEvaluator:
        pass

    module("opencompass")
    module("opencompass.datasets")
    module("opencompass.datasets.base", BaseDataset=BaseDataset)
    module("opencompass.openicl")
    module("opencompass.openicl.icl_evaluator", BaseEvaluator=BaseEvaluator)
    module("opencompass.openicl.icl_inferencer", GenInferencer=object)
    module("opencompass.openicl.icl_prompt_template", PromptTemplate=object)
    module("opencompass.openicl.icl_retriever", ZeroRetriever=object)
    cfg = load_module(os.path.join(directory, "opencompass", "needlework_datasets.py"), "needlework_oc")
    for d in cfg.needlework_datasets:
        if not os.path.isabs(d["path"]):
            fail(f"opencompass: {d['abbr']} path is not absolute: {d['path']}")
        ds = d["type"].load(d["path"])
        rows_ = ds.to_list()
        refs = [r[d["reader_cfg"]["output_column"]] for r in rows_]
        if not all(isinstance(r, list) for r in refs):
            fail("opencompass: answers is not list-valued")
        ev = d["eval_cfg"]["evaluator"]["type"]()
        gold = ev.score([gold_text(r) for r in rows_], refs, test_set=ds)["accuracy"]
        empty = ev.score([""] * len(rows_), refs, test_set=ds)["accuracy"]
        if gold != 100.0 or empty != 0.0:
            fail(f"opencompass: {d['abbr']} scores {gold} for gold, {empty} for empty")
        print(f"ok: opencompass config {d['abbr']} loads {len(rows_)} rows from {d['path']}; gold 100, empty 0")


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "predictions":
        write_predictions(a[1], a[2])
    elif len(a) == 4 and a[0] == "same-scores":
        same_scores(a[1], a[2], a[3])
    elif len(a) == 3 and a[0] == "inspect-gold":
        inspect_gold(a[1], a[2])
    elif len(a) == 4 and a[0] == "lm-eval-results":
        lm_eval_results(a[1], a[2], int(a[3]))
    elif len(a) == 2 and a[0] == "opencompass":
        opencompass(a[1])
    else:
        print(__doc__)
        sys.exit(2)
