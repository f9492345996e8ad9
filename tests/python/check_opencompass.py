"""Load `gen export opencompass` configs through OpenCompass's own machinery (CI, in a virtual
environment with OpenCompass 0.5.4; see requirements-opencompass.txt).

  check_opencompass.py WORKDIR DATASET_DIR...

Each dataset must have been exported (`gen export opencompass DIR`), and every
DIR/opencompass must be on PYTHONPATH, as a user runs OpenCompass. The check works as a user
combining several exports does: it links each dataset config into WORKDIR beside a run config
that reads them all with `read_base`, then

  1. loads the run config with mmengine's Config (lazy import, as `opencompass` does), and
     requires every dataset of every export, with distinct abbreviations;
  2. dumps it and loads the dump again (what `opencompass` does before it runs anything, and
     what each of its task processes reads);
  3. builds each dataset and its evaluator from the reloaded config through OpenCompass's
     registries (the types are dotted paths, imported from the module beside each config);
  4. renders each row's prompt with OpenCompass's prompt template and retriever and its
     template parser for a plain model: it must be `input` immediately followed by
     `answer_prefix`;
  5. evaluates gold answers (100 % accuracy, 100 % RULER credit where the config has it) and
     empty answers (0 %) with OpenCompass's evaluate(), which must report accuracy per length;
  6. runs the `opencompass` command itself on the run config in eval mode, over prediction
     files holding some of the gold items (the model is a stand-in that is never built): its
     evaluation task, a process of its own, imports the code from PYTHONPATH, and the results
     must hold accuracy per length, and RULER's credit where the rows have it, equal to what
     the exported metrics give.
"""
import glob
import json
import os
import subprocess
import sys


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


MODEL = "stand_in"


def gold_text(row):
    if row["metric"] in ("all", "any"):
        return " ".join(row["answers"])
    return row["target"]


def main(workdir, dataset_dirs):
    from mmengine.config import Config

    workdir = os.path.abspath(workdir)
    os.makedirs(workdir, exist_ok=True)
    variables = []
    for d in dataset_dirs:
        configs = [p for p in glob.glob(os.path.join(d, "opencompass", "needlework_*.py"))
                   if not p.endswith("_oc.py")]
        if len(configs) != 1:
            fail(f"{d}/opencompass: expected one dataset config, found {configs}")
        name = os.path.basename(configs[0])[: -len(".py")]
        # Linked, as the README suggests (a copy works the same).
        os.symlink(os.path.abspath(configs[0]), os.path.join(workdir, f"{name}.py"))
        variables.append((name, f"{name}_datasets"))
    run = os.path.join(workdir, "eval_needlework.py")
    with open(run, "w") as f:
        f.write("from mmengine.config import read_base\n\nwith read_base():\n")
        for module, variable in variables:
            f.write(f"    from .{module} import {variable}\n")
        f.write("\ndatasets = [" + ", ".join(f"*{v}" for _, v in variables) + "]\n")
        # Named for the eval run; never built (predictions come from files).
        f.write(f"models = [dict(type='opencompass.models.HuggingFaceBaseModel', abbr={MODEL!r},"
                " path='none', max_out_len=16, batch_size=1, run_cfg=dict(num_gpus=0))]\n")
        # Every dataset in one evaluation task: one process to start, not one per dataset.
        f.write("eval = dict(partitioner=dict(type='opencompass.partitioners.NaivePartitioner', n=64),"
                " runner=dict(type='opencompass.runners.LocalRunner', max_num_workers=1,"
                " task=dict(type='opencompass.tasks.OpenICLEvalTask')))\n")

    # 1. Loaded as `opencompass` loads a config.
    cfg = Config.fromfile(run, format_python_code=False)
    abbrs = [d["abbr"] for d in cfg["datasets"]]
    if len(set(abbrs)) != len(abbrs):
        fail(f"two datasets share an abbreviation: {abbrs}")
    want = sum(len(json.load(open(os.path.join(d, "manifest.json")))["configs"]) for d in dataset_dirs)
    if len(abbrs) != want:
        fail(f"the run config holds {len(abbrs)} datasets, the exports {want}")

    # 2. Dumped and reloaded.
    dumped = os.path.join(workdir, "dumped.py")
    cfg.dump(dumped)
    cfg = Config.fromfile(dumped, format_python_code=False)

    # 3-5. Built and run from the reloaded config.
    from opencompass.models.base import LMTemplateParser
    from opencompass.registry import ICL_EVALUATORS, ICL_PROMPT_TEMPLATES, ICL_RETRIEVERS
    from opencompass.utils.build import build_dataset_from_cfg

    expected = {}
    for dcfg in cfg["datasets"]:
        abbr = dcfg["abbr"]
        for what, t in (("dataset", dcfg["type"]), ("evaluator", dcfg["eval_cfg"]["evaluator"]["type"])):
            if not isinstance(t, str):
                fail(f"{abbr}: the {what} type did not survive the dump as a dotted path: {t!r}")
        dataset = build_dataset_from_cfg(dcfg)
        test = dataset.test
        rows = test.to_list()
        if not rows:
            fail(f"{abbr}: no rows")

        template = ICL_PROMPT_TEMPLATES.build(dcfg["infer_cfg"]["prompt_template"])
        retriever = ICL_RETRIEVERS.build(dict(dcfg["infer_cfg"]["retriever"], dataset=dataset))
        parser = LMTemplateParser()
        for idx, ice_idx in enumerate(retriever.retrieve()):
            ice = retriever.generate_ice(ice_idx, ice_template=None)
            prompt = retriever.generate_prompt_for_generate_task(
                idx, ice, gen_field_replace_token="", ice_template=None, prompt_template=template)
            text = parser.parse_template(prompt, mode="gen")
            row = rows[idx]
            if text != row["prompt"] or not text.endswith(row["answer_prefix"]):
                fail(f"{abbr} row {idx}: OpenCompass sends {text[-80:]!r}, expected the input "
                     f"immediately followed by {row['answer_prefix']!r}")

        evaluator = ICL_EVALUATORS.build(dcfg["eval_cfg"]["evaluator"])
        references = test[dcfg["reader_cfg"]["output_column"]]
        if not all(isinstance(r, list) for r in references):
            fail(f"{abbr}: the output column is not list-valued")
        lengths = sorted({r["target_length"] for r in rows})
        has_ruler = any(r["metric"] in ("all", "any") for r in rows)
        for kind, predictions, expect in (("gold", [gold_text(r) for r in rows], 100.0),
                                          ("empty", [""] * len(rows), 0.0)):
            result = evaluator.evaluate(1, 1, test, predictions=predictions,
                                        references=references, test_set=test)
            keys = ["accuracy"] + [f"accuracy_{n}" for n in lengths]
            if has_ruler:
                keys += ["ruler"] + [f"ruler_{n}" for n in lengths]
            for key in keys:
                if key not in result:
                    fail(f"{abbr}: {kind} answers: no {key} in {sorted(result)}")
                if abs(result[key] - expect) > 1e-9:
                    fail(f"{abbr}: {kind} answers: {key} = {result[key]}, expected {expect}")
        print(f"ok: OpenCompass loaded {abbr} through read_base, dump and reload; {len(rows)} rows,"
              f" prompts = input + answer prefix; gold 100, empty 0 per length {lengths}"
              + ("; RULER credit reported" if has_ruler else ""))
        expected[abbr] = write_predictions(workdir, abbr, rows, evaluator, test, references)

    run_opencompass_eval(workdir, run, expected)


def some_of(i, row):
    """Row i's prediction for the eval run: some of its gold items (all/any rows), or the
    target every other row."""
    if row["metric"] in ("all", "any"):
        return " ".join(row["answers"][: i % (len(row["answers"]) + 1)])
    return row["target"] if i % 2 == 0 else ""


def write_predictions(workdir, abbr, rows, evaluator, test, references):
    """OpenCompass's prediction file for `abbr`; returns what the exported evaluator makes of it."""
    predictions = [some_of(i, r) for i, r in enumerate(rows)]
    folder = os.path.join(workdir, "out", "ci", "predictions", MODEL)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{abbr}.json"), "w") as f:
        json.dump({str(i): {"origin_prompt": "", "prediction": p, "gold": r["answers"]}
                   for i, (p, r) in enumerate(zip(predictions, rows))}, f)
    result = evaluator.evaluate(1, 1, test, predictions=predictions, references=references,
                                test_set=test)
    return {k: v for k, v in result.items() if k.startswith(("accuracy", "ruler"))}


def run_opencompass_eval(workdir, run, expected):
    command = [os.path.join(os.path.dirname(sys.executable), "opencompass"), run,
               "-m", "eval", "-r", "ci", "-w", os.path.join(workdir, "out")]
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"opencompass -m eval failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    for abbr, want in expected.items():
        path = os.path.join(workdir, "out", "ci", "results", MODEL, f"{abbr}.json")
        if not os.path.exists(path):
            fail(f"opencompass wrote no results for {abbr}:\n{done.stdout[-3000:]}")
        got = json.load(open(path))
        for key, value in want.items():
            if key not in got or abs(got[key] - value) > 1e-9:
                fail(f"opencompass -m eval: {abbr} {key} = {got.get(key)}, expected {value}")
        shown = ", ".join(f"{k} {v:.2f}" for k, v in sorted(want.items()))
        print(f"ok: opencompass -m eval (its own task process) scored {abbr}: {shown}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2:])
