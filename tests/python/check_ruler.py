"""Check `gen export ruler` and `gen score`'s RULER partial credit against RULER's own rules,
restated here (RULER's evaluation needs NeMo and cannot run offline in CI).

  check_ruler.py GEN DIR WORK

DIR must hold a dataset exported with `gen export ruler DIR`. The check

  1. reads DIR/ruler/<task>/validation.jsonl as RULER's prediction script reads a task file:
     every field RULER writes, `index` unique (the script resumes by it), `others.id` naming a
     dataset row, `input`, `outputs` and the token counts taken from that row;
  2. writes prediction files as RULER's prediction script does (`index`, `pred`, `input`,
     `outputs`, `others`, `truncation`, `length`), with partial answers (each row gives some of
     its gold items, in another case, some in a sentence), the last task split in two chunks
     (`<task>-0.jsonl`, `<task>-1.jsonl`, as a chunked run writes them);
  3. merges the chunks as RULER's evaluation does before scoring, and checks that doing so in
     the prediction folder, in DIR/ruler and in every DIR/ruler/<task> touches no file of the
     export;
  4. scores every task with RULER's rule (string_match_all: per row, the fraction of
     references found case-insensitively in the cleaned prediction; per task, the mean x 100,
     rounded to 2 places), identifying rows by `others.id` as RULER's evaluation does;
  5. runs `gen score DIR --predictions <prediction folder>` and requires the same credit for
     every row (rows.json) and the same score for every task (scores.json).

RULER's rules restated (from NVIDIA/RULER scripts/eval/evaluate.py and
scripts/eval/synthetic/constants.py):
  - a prediction is cleaned by trimming it, turning every character below U+0020 into a
    newline, and trimming again;
  - references are the row's `outputs`, the row's id is `others.id`, else `index`;
  - before scoring, every `*.jsonl` whose name matches `.*[^_]+-\\d+\\.jsonl` is a chunk: chunks
    are grouped by the name up to their last `-`, concatenated in name order into
    `<group>.jsonl`, and deleted.
"""
import json
import os
import re
import subprocess
import sys

RULER_CHUNK = re.compile(r".*[^_]+-\d+\.jsonl")
RULER_TASKS = {
    "niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
    "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe", "qa_1", "qa_2",
}
FIELDS = ["index", "input", "outputs", "length", "length_w_model_temp", "answer_prefix",
          "token_position_answer", "others"]


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def ruler_clean(prediction):
    text = prediction.strip()
    text = "".join("\n" if ord(c) < 0x20 else c for c in text)
    return text.strip()


def ruler_row_credit(prediction, references):
    """The per-row term of RULER's string_match_all."""
    pred = prediction.lower()
    return sum(1.0 if r.lower() in pred else 0.0 for r in references) / len(references)


def ruler_merge_chunks(folder):
    """RULER's chunk merging, restated; returns the files it deleted."""
    names = [n for n in os.listdir(folder) if n.endswith(".jsonl")]
    chunks = sorted(n for n in names if RULER_CHUNK.match(n))
    groups = {}
    for n in chunks:
        groups.setdefault("-".join(n.split("-")[:-1]), []).append(n)
    for group, files in groups.items():
        lines = []
        for n in sorted(files):
            lines += read_jsonl(os.path.join(folder, n))
            os.remove(os.path.join(folder, n))
        write_jsonl(os.path.join(folder, f"{group}.jsonl"), lines)
    return chunks


def dataset_rows(directory):
    import pyarrow.parquet as pq

    manifest = json.load(open(os.path.join(directory, "manifest.json")))
    out = {}
    for f in manifest["files"]:
        for row in pq.read_table(os.path.join(directory, f["path"])).to_pylist():
            out[row["id"]] = (f["config"], f["split"], row)
    return out


def partial(i, outputs):
    """Row i's prediction: some of its gold items (from none to all), worded several ways."""
    k = i % (len(outputs) + 1)
    given = outputs[:k]
    if i % 3 == 0:
        return "The codes are " + ", ".join(g.upper() for g in given) + "."
    if i % 3 == 1:
        return "\n  " + "\t".join(given) + "\n"
    # A control character inside the last given item hides it from RULER's matching.
    text = " and ".join(given)
    if given and len(given[-1]) > 2:
        cut = len(text) - 1
        text = text[:cut] + "\x07" + text[cut:]
    return text


def main(gen, directory, work):
    rows = dataset_rows(directory)
    ruler_dir = os.path.join(directory, "ruler")
    tasks = sorted(os.listdir(ruler_dir))
    if not tasks:
        fail(f"{ruler_dir} is empty")
    pred_dir = os.path.join(work, "pred")
    os.makedirs(pred_dir, exist_ok=True)
    seen = set()
    expect_rows = {}
    multi = False
    for t, task in enumerate(tasks):
        path = os.path.join(ruler_dir, task, "validation.jsonl")
        lines = read_jsonl(path)
        if [l["index"] for l in lines] != list(range(len(lines))):
            fail(f"{task}: index is not 0..{len(lines) - 1}")
        preds = []
        for i, line in enumerate(lines):
            if list(line) != FIELDS:
                fail(f"{task} line {i}: fields {list(line)}, expected {FIELDS}")
            rid = line["others"]["id"]
            if rid not in rows or rid in seen:
                fail(f"{task} line {i}: others.id {rid!r} is not a dataset row, or repeats")
            seen.add(rid)
            _, _, row = rows[rid]
            want_outputs = (row["answers"] if row["metric"] in ("all", "any") and row["answers"]
                            else [row["target"]])
            want_w = row.get("prompt_tokens", row["length"])
            offsets = row["needle_offsets"] or [None]
            if (line["input"], line["outputs"], line["length"], line["length_w_model_temp"],
                line["answer_prefix"], line["token_position_answer"]) != (
                    row["input"], want_outputs, row["length"], want_w, row["answer_prefix"],
                    offsets[0]):
                fail(f"{task} line {i}: does not carry row {rid}'s fields")
            pred = partial(i + t, line["outputs"])
            preds.append({"index": line["index"], "pred": pred, "input": line["input"],
                          "outputs": line["outputs"], "others": line["others"],
                          "truncation": -1, "length": line["length"]})
            if row["metric"] in ("all", "any"):
                expect_rows[rid] = ruler_row_credit(ruler_clean(pred), line["outputs"])
                multi |= len(line["outputs"]) > 1
        if t == len(tasks) - 1 and len(preds) > 1:
            half = len(preds) // 2
            write_jsonl(os.path.join(pred_dir, f"{task}-0.jsonl"), preds[:half])
            write_jsonl(os.path.join(pred_dir, f"{task}-1.jsonl"), preds[half:])
        else:
            write_jsonl(os.path.join(pred_dir, f"{task}.jsonl"), preds)
    # Every row of the evaluated split is in the layout, once.
    splits = {s for _, s, _ in rows.values()}
    split = "test" if "test" in splits else sorted(splits)[0]
    want = {rid for rid, (_, s, _) in rows.items() if s == split}
    if seen != want:
        fail(f"the layout holds {len(seen)} rows, the dataset's {split} split {len(want)}")

    # RULER merges chunk files before scoring; nothing of the export is one.
    for folder in [ruler_dir] + [os.path.join(ruler_dir, t) for t in tasks]:
        touched = ruler_merge_chunks(folder)
        if touched:
            fail(f"RULER's chunk merging would delete {touched} in {folder}")
    merged = ruler_merge_chunks(pred_dir)
    if len(tasks) > 1 and not merged:
        fail("the chunked prediction files were not merged")
    if sorted(os.listdir(pred_dir)) != sorted(f"{t}.jsonl" for t in tasks):
        fail(f"after merging, the prediction folder holds {sorted(os.listdir(pred_dir))}")

    # RULER's scores per task, and per row.
    ruler_task_scores = {}
    for task in tasks:
        lines = read_jsonl(os.path.join(pred_dir, f"{task}.jsonl"))
        ids = [l["others"].get("id", l["index"]) for l in lines]
        credits = [ruler_row_credit(ruler_clean(l["pred"]), l["outputs"]) for l in lines]
        config = rows[ids[0]][0]
        if rows[ids[0]][2]["metric"] in ("all", "any"):
            ruler_task_scores[config] = (task, round(sum(credits) / len(credits) * 100, 2),
                                         sum(credits) / len(credits))

    out = os.path.join(work, "scores")
    subprocess.run([gen, "score", directory, "--predictions", pred_dir, "--out", out, "-q"],
                   check=True, stdout=subprocess.DEVNULL)
    scores = json.load(open(os.path.join(out, "scores.json")))
    verdicts = {r["id"]: r for r in json.load(open(os.path.join(out, "rows.json")))}
    for rid, credit in expect_rows.items():
        got = verdicts[rid]["ruler"]
        if got is None or abs(got - credit) > 1e-12:
            fail(f"row {rid}: RULER's rule gives {credit}, gen score {got}")
    partials = sum(1 for c in expect_rows.values() if 0 < c < 1)
    if multi and partials == 0:
        fail("no multi-answer row had a partial answer: the check proves nothing")
    for config, (task, rounded, exact) in ruler_task_scores.items():
        r = scores["configs"][config]["overall"].get("ruler")
        if r is None or abs(r["score"] - exact) > 1e-9 or round(r["score"] * 100, 2) != rounded:
            fail(f"{task}: RULER's score {rounded}, gen score {r}")
        named = "RULER's task" if task in RULER_TASKS else "our name"
        print(f"ok: {task} ({named}, config {config}): RULER's rule and gen score agree:"
              f" {rounded} over {r['rows']} rows")
    if expect_rows:
        print(f"ok: RULER's rule and gen score agree on all {len(expect_rows)} rows"
              f" ({partials} with partial answers); RULER's chunk merging leaves the export alone")
    else:
        print(f"ok: RULER's layout holds the {len(seen)} rows of {tasks} (no RULER task, no partial"
              " credit); RULER's chunk merging leaves the export alone")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    main(*sys.argv[1:])
