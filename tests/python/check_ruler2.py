"""Check `gen suite ruler2` datasets (RULER v2's twelve tasks) from their rows alone.

  check_ruler2.py rows DIR --mmlu MMLU_DIR --qa HOTPOT.json [--min-rows N]
      Every ruler2 row is read back from its `input` alone and recomputed: the basic variants'
      `The hidden number of K is V.` lines (mk: every key once; mv: every key at most per_id
      times, the asked one exactly per_id times) and the asked key's values in context order;
      the MMLU variants' `Question <7 digits>: ...` items (mk: ids distinct; mv: each id
      labels 1..per_id items, the asked one exactly per_id test questions), the asked id's
      positions, the k-th of them (its rank among same-id items in context order), every item
      of the id for mv_niah_easy, and the A-D answer of mk_niah_medium/hard equal to the MMLU
      file's answer for that question (found by its text), its worked examples items of the
      context answered as the file answers them; the qa variants' `Document <7 digits>:`
      blocks, each a paragraph of the HotpotQA file, the gold ones the question's supporting
      paragraphs, qa_basic's shown text the document whose id is the answer, qa_medium/hard's
      answers the file's answer. Then the fit: prompt_tokens + max_new_tokens <= target_length,
      short of it by less than the next unit; `raw_question_tokens` = tiktoken's count of
      `input` (RULER v2's own count); `needle_offsets` the token offsets of needle units.
      Finally every check is run on mutated copies of rows and must fail on each.
  check_ruler2.py predictions DIR PREFIX
      Write PREFIX-{gold,partial,copied,think,malformed,empty}.jsonl: predictions for every row
      (gold as RULER v2 reads it: letters as `Answer: X`; partial: half the gold's words; copied:
      the needle lines, items or documents copied, then `Answer: <gold>`; think: a `<think>`
      block naming a wrong answer, then gold; malformed: bare or lowercase letters, garbage, an
      answer before `</think>`, an unclosed document block, ...).
  check_ruler2.py same-scores DIR PRED.jsonl ROWS.json [PRED.jsonl ROWS.json ...]
      Every row's `score` in gen score's rows.json must equal RULER v2's scorer restated in
      check_metrics.py (NeMo-Skills' eval_ruler2 soft match; its multiple-choice letter
      extraction) with needlework's echo rule on top, the package's metrics.py (`score_row`)
      and, when DIR has an lm-eval export, that export's process_results. Gold must score 1 and
      empty 0 on every row; gold, copied and think full marks by RULER v2's rule.
  check_ruler2.py inspect-gold DIR CONFIG
      The exported inspect_ai task with mockllm: gold answers accuracy 1.0, empty 0.0.
"""
import argparse
import json
import os
import re
import sys
from collections import Counter
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from check_dataset import fail, rows, tiktoken_encoding  # noqa: E402
from check_metrics import load_exports, ref_mc_letter, ref_soft_match  # noqa: E402

VARIANTS = [f"{k}_{d}" for k in ("mk_niah", "mv_niah") for d in ("basic", "easy", "medium", "hard")] + \
    [f"qa_{d}" for d in ("basic", "easy", "medium", "hard")]
METRICS = {
    "mk_niah_basic": "soft_all", "mv_niah_basic": "soft_all",
    "mk_niah_easy": "soft_all", "mk_niah_medium": "letter", "mk_niah_hard": "letter",
    "mv_niah_easy": "soft_all", "mv_niah_medium": "soft_2steps", "mv_niah_hard": "soft_all",
    "qa_basic": "soft_part", "qa_easy": "soft_part", "qa_medium": "soft_part", "qa_hard": "soft_part",
}
HIDDEN = re.compile(r"^The hidden number of (.+) is (\d{10})\.$")
ITEM = re.compile(r"^Question (\d{7}): (.+)$")
DOC = re.compile(r"Document (\d{7}):\n")
LETTERS = "ABCD"


class Bad(Exception):
    """A row that does not say what it claims; raised so mutated rows can be shown to fail."""


def need(ok: bool, why: str) -> None:
    if not ok:
        raise Bad(why)


# ---------------------------------------------------------------- the reference data

def collapse(s: str) -> str:
    """RULER v2 makes an item one line: every whitespace run becomes one space."""
    return " ".join(s.split())


def item_text(q: Dict[str, Any]) -> str:
    c = [collapse(x) for x in q["choices"]]
    return f"{collapse(q['question'])} A. {c[0]} B. {c[1]} C. {c[2]} D. {c[3]}"


class Mmlu:
    """The user's MMLU copy as gen reads it: files of a split sorted by name, rows in order."""

    def __init__(self, directory: str) -> None:
        self.splits: Dict[str, List[Dict[str, Any]]] = {}
        for split in ("test", "auxiliary_train"):
            out: List[Dict[str, Any]] = []
            for name in sorted(os.listdir(directory)):
                if not name.startswith(split):
                    continue
                path = os.path.join(directory, name)
                if name.endswith(".parquet"):
                    import pyarrow.parquet as pq

                    out += pq.read_table(path).to_pylist()
                elif name.endswith(".jsonl"):
                    out += [json.loads(x) for x in open(path, encoding="utf-8") if x.strip()]
            if not out:
                fail(f"no {split} rows in {directory}")
            self.splits[split] = out
        self.test = self.splits["test"]
        self.by_text: Dict[str, List[int]] = {}
        for i, q in enumerate(self.test):
            self.by_text.setdefault(item_text(q), []).append(i)
        self.aux_letters: Dict[str, set] = {}
        for q in self.splits["auxiliary_train"]:
            self.aux_letters.setdefault(item_text(q), set()).add(LETTERS[q["answer"]])


def body(text: str) -> str:
    """A paragraph as gen shows it: trimmed, blank lines dropped."""
    return "\n".join(x.rstrip("\r") for x in text.strip().split("\n") if x.strip())


class Hotpot:
    """The HotpotQA file: each paragraph's text as gen shows it (title, newline, sentences)."""

    def __init__(self, path: str) -> None:
        items = json.load(open(path, encoding="utf-8"))
        self.paragraphs = set()
        self.questions: Dict[str, Dict[str, Any]] = {}
        for it in items:
            texts = {t: body(f"{t}\n{''.join(s)}") for t, s in it["context"]}
            self.paragraphs.update(texts.values())
            support = {t for t, _ in it.get("supporting_facts") or []}
            self.questions[it["_id"]] = {
                "question": it["question"].strip(),
                "answer": (it.get("answer") or "").strip(),
                "gold": {texts[t] for t in support if t in texts} or set(texts.values()),
                "own": set(texts.values()),
            }


# ---------------------------------------------------------------- reading a row

def longest_run(lines: Sequence[str], pattern: "re.Pattern[str]") -> Tuple[int, int]:
    """(start, end) of the longest run of consecutive lines matching `pattern`: the context."""
    best, start = (0, 0), None
    for i, line in enumerate(list(lines) + [None]):
        hit = line is not None and pattern.match(line)
        if hit and start is None:
            start = i
        elif not hit and start is not None:
            if i - start > best[1] - best[0]:
                best = (start, i)
            start = None
    return best


def line_starts(lines: Sequence[str]) -> List[int]:
    out, at = [], 0
    for line in lines:
        out.append(at)
        at += len(line) + 1
    return out


def ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def check_basic(row: Dict[str, Any], p: Dict[str, Any], v: str) -> List[int]:
    """The needle-shaped lines: the asked key's values in context order. Returns needle chars."""
    lines = row["input"].split("\n")
    a, b = longest_run(lines, HIDDEN)
    context = [HIDDEN.match(x).groups() for x in lines[a:b]]
    keys = Counter(k for k, _ in context)
    need(p["key"] in keys, f"the asked key {p['key']!r} is not in the context")
    need(p["key"] in row["question"], "the question does not name the asked key")
    where = [i + 1 for i, (k, _) in enumerate(context) if k == p["key"]]
    # `units` counts every line of the context, the needle lines too.
    need(len(context) == p["units"],
         f"{len(context)} hidden-number lines, params say {p['units']} units")
    need(p["needle_lines"] == where, f"needle_lines {p['needle_lines']}, the key is on lines {where}")
    values = [val for k, val in context if k == p["key"]]
    if v.startswith("mk"):
        need(max(keys.values()) == 1, "a key repeats in mk_niah_basic")
    else:
        need(keys[p["key"]] == p["per_id"], f"the asked key has {keys[p['key']]} lines, per_id {p['per_id']}")
        need(max(keys.values()) <= p["per_id"], f"a key has {max(keys.values())} lines, per_id {p['per_id']}")
        short = [k for k, c in keys.items() if c < p["per_id"]]
        need(len(short) <= 1, f"{len(short)} keys have fewer than per_id lines (only the last one drawn may be cut)")
        for key in keys:
            vals = [val for k, val in context if k == key]
            need(len(set(vals)) == len(vals), f"key {key!r} repeats a value")
    need(row["answers"] == values, f"answers {row['answers']}, the asked key's values are {values}")
    starts = line_starts(lines)
    return [starts[a + i - 1] for i in where]


def check_mmlu(row: Dict[str, Any], p: Dict[str, Any], v: str, mmlu: Mmlu) -> List[int]:
    """The labelled MMLU items: ids, needle positions, ordinal, letter and worked examples."""
    text = row["input"]
    lines = text.split("\n")
    a, b = longest_run(lines, ITEM)
    items = [ITEM.match(x).groups() for x in lines[a:b]]
    ids = Counter(i for i, _ in items)
    qid = p["id"]
    need(isinstance(qid, str) and re.fullmatch(r"\d{7}", qid) is not None, f"id {qid!r} is not 7 digits")
    where = [n + 1 for n, (i, _) in enumerate(items) if i == qid]
    need(len(items) == p["units"],
         f"{len(items)} items in the context, params say {p['units']} units")
    need(p["needle_items"] == where, f"needle_items {p['needle_items']}, id {qid} labels items {where}")
    need(qid in row["question"], "the question does not name the asked id")
    needles = [items[n - 1][1] for n in where]
    # Every needle is the test question recorded for it; every other item an auxiliary one.
    need(len(p["test_questions"]) == len(where), "test_questions do not pair with the needle items")
    for t, idx in zip(needles, p["test_questions"]):
        need(idx in mmlu.by_text.get(t, []), f"needle {t[:60]!r} is not test question {idx} of the MMLU file")
    need(len(set(p["test_questions"])) == len(where), "a test question is used twice")
    for n, (_, t) in enumerate(items):
        if n + 1 not in where:
            need(t in mmlu.aux_letters, f"item {n + 1} {t[:60]!r} is not an auxiliary_train question")
    if v.startswith("mk"):
        need(max(ids.values()) == 1, "an id labels two items in an mk variant")
    else:
        need(ids[qid] == p["per_id"], f"id {qid} labels {ids[qid]} items, per_id {p['per_id']}")
        need(max(ids.values()) <= p["per_id"], f"an id labels {max(ids.values())} items, per_id {p['per_id']}")
        short = [i for i, c in ids.items() if c < p["per_id"]]
        need(len(short) <= 1, f"{len(short)} ids label fewer than per_id items (only the last one drawn may be cut)")
    if v == "mk_niah_easy" or v == "mv_niah_easy":
        need(row["answers"] == needles, f"answers {str(row['answers'])[:120]} are not the id's items in context order")
    elif v in ("mv_niah_medium", "mv_niah_hard"):
        k = p["ordinal"]
        need(1 <= k <= p["per_id"], f"ordinal {k} outside 1..{p['per_id']}")
        need(row["answers"] == [needles[k - 1]], f"answers are not the {ordinal(k)} item labelled {qid}")
        need(f"{ordinal(k)} (1 indexed)" in row["question"], f"the question does not ask the {ordinal(k)} (1 indexed)")
    else:  # mk medium and hard: the letter of the needle question, from the MMLU file
        idx = p["test_questions"][0]
        letters = {LETTERS[mmlu.test[i]["answer"]] for i in mmlu.by_text[needles[0]]}
        need(len(letters) == 1, f"the MMLU file answers the needle question {sorted(letters)}")
        want = LETTERS[mmlu.test[idx]["answer"]]
        need(row["target"] == want and p["answer_letter"] == want and row["answers"] == [want],
             f"target {row['target']!r}, answer_letter {p['answer_letter']!r}, the MMLU file says {want}")
        check_shots(row, p, items, (a, b), lines, mmlu, where[0])
    starts = line_starts(lines)
    return [starts[a + n - 1] for n in where]


def check_shots(row: Dict[str, Any], p: Dict[str, Any], items: List[Tuple[str, str]],
                span: Tuple[int, int], lines: List[str], mmlu: Mmlu, needle: int) -> None:
    """Worked examples are context items, shown outside the context with the file's letter."""
    shots = p["shot_items"]
    need(len(shots) == p["shots"], f"{len(shots)} shot items, shots {p['shots']}")
    need(len(set(shots)) == len(shots) and needle not in shots, f"shot items {shots} repeat or hold the needle")
    outside = "\n".join(lines[:span[0]] + lines[span[1]:])
    for n in shots:
        need(1 <= n <= len(items), f"shot item {n} outside the context")
        t = items[n - 1][1]
        at = outside.find(t)
        need(at >= 0, f"worked example {n} ({t[:50]!r}) is not shown outside the context")
        after = outside[at + len(t):at + len(t) + 80]
        m = re.search(r"Answer:\s*([A-D])\b", after)
        need(m is not None and m.group(1) in mmlu.aux_letters[t],
             f"worked example {n} is answered {m.group(1) if m else None}, the file says {sorted(mmlu.aux_letters[t])}")


def documents(text: str) -> List[Tuple[str, str, int]]:
    """(id, paragraph, char start) of every `Document N:` block of the context."""
    found = list(DOC.finditer(text))
    out = []
    for j, m in enumerate(found):
        if j + 1 < len(found) and text[found[j + 1].start() - 2:found[j + 1].start()] == "\n\n":
            body = text[m.end():found[j + 1].start() - 2]
        else:
            end = text.find("\n\n", m.end())
            body = text[m.end():] if end < 0 else text[m.end():end]
        out.append((m.group(1), body, m.start()))
    return out


def check_qa(row: Dict[str, Any], p: Dict[str, Any], v: str, hotpot: Hotpot) -> List[int]:
    """The documents: ids distinct, paragraphs of the file, gold the supporting ones."""
    docs = documents(row["input"])
    need(len(docs) == p["units"] == p["documents"],
         f"{len(docs)} documents, params say {p['units']} units, {p['documents']} documents")
    ids = [d[0] for d in docs]
    need(len(set(ids)) == len(ids), "two documents share an id")
    for i, body, _ in docs:
        need(body in hotpot.paragraphs, f"document {i} is no paragraph of the HotpotQA file: {body[:60]!r}")
    q = hotpot.questions.get(p["question_id"])
    need(q is not None, f"question_id {p['question_id']!r} is not in the HotpotQA file")
    gold = p["gold_documents"]
    need(p["gold_ids"] == [ids[n - 1] for n in gold], f"gold_ids {p['gold_ids']} are not the ids at {gold}")
    need({docs[n - 1][1] for n in gold} == q["gold"], "the gold documents are not the question's supporting paragraphs")
    need(all(body not in q["gold"] for n, (_, body, _) in enumerate(docs) if n + 1 not in gold),
         "a supporting paragraph is outside gold_documents")
    if v == "qa_basic":
        n = p["shown_document"]
        body = docs[n - 1][1]
        need(row["input"].count(body) >= 2 or body in row["question"], "qa_basic does not show the document's text")
        need(row["answers"] == [ids[n - 1]], f"answers {row['answers']}, the shown document's id is {ids[n - 1]}")
    else:
        need(q["question"] in row["question"], "the question is not the HotpotQA question")
        if v == "qa_easy":
            need(row["answers"] == p["gold_ids"], f"answers {row['answers']} are not the gold ids")
        else:
            need(row["answers"] == [q["answer"]], f"answers {row['answers']}, the file answers {q['answer']!r}")
    return [docs[n - 1][2] for n in gold]


def check_row(row: Dict[str, Any], mmlu: Mmlu, hotpot: Hotpot, encoders: Dict[str, Any]) -> str:
    """Every check of one row; raises Bad. Returns the variant."""
    p = json.loads(row["params"])
    v = p["variant"]
    need(v in VARIANTS and row["variant"] == v, f"variant {row['variant']!r} / params {v!r}")
    need(row["task"] == "ruler2", f"task {row['task']}")
    if v in METRICS:
        need(row["metric"] == METRICS[v], f"metric {row['metric']}, RULER v2 scores {v} by {METRICS[v]}")
    need(p["placement"] in ("random", "depth"), f"placement {p['placement']!r}")
    if v.endswith("basic") and not v.startswith("qa"):
        starts = check_basic(row, p, v)
    elif v.startswith("qa"):
        starts = check_qa(row, p, v, hotpot)
    else:
        starts = check_mmlu(row, p, v, mmlu)
    # The fit, under our rules and RULER v2's.
    need(row["prompt_tokens"] + row["max_new_tokens"] <= row["target_length"],
         f"prompt_tokens {row['prompt_tokens']} + max_new_tokens {row['max_new_tokens']} > {row['target_length']}")
    # Short of the budget by about the unit that did not fit (its tokens with its separator,
    # give or take a merge at the seam), or, with the pool used up, by gen's tolerance.
    budget = row["target_length"] - row["max_new_tokens"]
    short = budget - row["prompt_tokens"]
    nxt = p["next_unit_tokens"]
    # Below what the next unit adds (its own count, or what gen measured it to add), or, with
    # the pool used up, within gen's tolerance.
    allowed = nxt - 1 if nxt else max(16, budget // 500)
    need(short <= allowed, f"{short} tokens short of the budget, the next unit took {nxt} (allowed {allowed})")
    tok = row["tokenizer"]
    if tok.startswith("hf:"):
        return v
    if tok not in encoders:
        encoders[tok] = tiktoken_encoding(tok)
    enc = encoders[tok]
    count = len(enc.encode_ordinary(row["input"]))
    need(p["raw_question_tokens"] == count, f"raw_question_tokens {p['raw_question_tokens']}, tiktoken counts {count}")
    offsets = {len(enc.encode_ordinary(row["input"][:c])) for c in starts}
    need(bool(row["needle_offsets"]) and set(row["needle_offsets"]) <= offsets,
         f"needle_offsets {row['needle_offsets']} are not token offsets of needle units {sorted(offsets)}")
    return v


# ---------------------------------------------------------------- mutations that must fail

def swap_two(xs: List[Any]) -> List[Any]:
    return xs[1:2] + xs[:1] + xs[2:] if len(xs) > 1 else xs + xs


def mutations(row: Dict[str, Any]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """Copies of a good row, each wrong in one way a generator could get wrong."""
    p = json.loads(row["params"])
    v = p["variant"]

    def with_params(**kw: Any) -> Dict[str, Any]:
        q = dict(p, **kw)
        return dict(row, params=json.dumps(q))

    yield "raw_question_tokens off by one", with_params(raw_question_tokens=p["raw_question_tokens"] + 1)
    yield "one token over the target", dict(row, prompt_tokens=row["target_length"] - row["max_new_tokens"] + 1)
    if v in ("mv_niah_basic", "mv_niah_easy") and len(row["answers"]) > 1:
        yield "answers out of context order", dict(row, answers=swap_two(row["answers"]))
    if v in ("mv_niah_medium", "mv_niah_hard"):
        k = p["ordinal"]
        yield "the ordinal off by one", with_params(ordinal=k % p["per_id"] + 1)
    if v in ("mk_niah_medium", "mk_niah_hard"):
        wrong = LETTERS[(LETTERS.index(row["target"]) + 1) % 4]
        yield "another letter", dict(row, target=wrong, answers=[wrong], params=json.dumps(dict(p, answer_letter=wrong)))
        yield "a shot that is the needle", with_params(shot_items=p["needle_items"] + p["shot_items"][1:])
    if "needle_items" in p:
        yield "needle items shifted", with_params(needle_items=[n + 1 for n in p["needle_items"]])
    if "needle_lines" in p:
        yield "needle lines shifted", with_params(needle_lines=[n + 1 for n in p["needle_lines"]])
    if "gold_documents" in p:
        yield "gold positions shifted", with_params(gold_documents=[n % p["units"] + 1 for n in p["gold_documents"]])
    if v in ("qa_medium", "qa_hard"):
        yield "another answer", dict(row, answers=[row["answers"][0] + " perhaps"])
    # A unit dropped from the context (its count no longer the one recorded).
    lines = row["input"].split("\n")
    pattern = HIDDEN if "needle_lines" in p else ITEM if "needle_items" in p else None
    if pattern is not None:
        a, b = longest_run(lines, pattern)
        yield "a unit dropped", dict(row, input="\n".join(lines[:a] + lines[a + 1:]))


def check_rows(dirs: List[str], mmlu_dir: str, qa_file: str, min_rows: int) -> None:
    mmlu, hotpot = Mmlu(mmlu_dir), Hotpot(qa_file)
    encoders: Dict[str, Any] = {}
    seen: Counter = Counter()
    tried: Counter = Counter()
    shorts: Dict[str, List[int]] = {}
    for directory in dirs:
        for _, row in rows(directory):
            if row["task"] != "ruler2":
                continue
            try:
                v = check_row(row, mmlu, hotpot, encoders)
            except Bad as e:
                fail(f"{row['id']} ({row['variant']}, {row['target_length']}): {e}")
            except (KeyError, TypeError, IndexError, AttributeError) as e:
                fail(f"{row['id']} ({row['variant']}): params or text not as the interface says: {e!r}")
            seen[v] += 1
            shorts.setdefault(v, []).append(row["target_length"] - row["prompt_tokens"] - row["max_new_tokens"])
            if seen[v] <= 2:  # the checks must catch each way a row can be wrong
                for what, bad in mutations(row):
                    try:
                        check_row(bad, mmlu, hotpot, encoders)
                    except (Bad, KeyError, IndexError, AttributeError):
                        tried[v] += 1
                        continue
                    fail(f"{row['id']} ({v}): the check accepts a row with {what}")
    total = sum(seen.values())
    if total < min_rows:
        fail(f"only {total} ruler2 rows checked (want {min_rows})")
    missing = [v for v in VARIANTS if not seen[v]]
    if missing and min_rows >= len(VARIANTS):
        fail(f"no rows of {missing}")
    print(f"ok: {total} ruler2 rows recomputed from their text (context units, needle positions, ordinals, "
          f"letters vs the MMLU file, documents vs the HotpotQA file, fit, raw_question_tokens): {dict(sorted(seen.items()))}")
    print(f"ok: {sum(tried.values())} mutated rows, every one refused")
    print("short of target (tokens, max per variant): " + ", ".join(f"{v} {max(s)}" for v, s in sorted(shorts.items())))


# ---------------------------------------------------------------- predictions and scores

def context_units(row: Dict[str, Any]) -> Tuple[str, List[str]]:
    """(kind, copied text of each needle unit) for copy-then-answer predictions."""
    p = json.loads(row["params"])
    lines = row["input"].split("\n")
    if "needle_lines" in p:
        a, _ = longest_run(lines, HIDDEN)
        return "lines", [lines[a + n - 1] for n in p["needle_lines"]]
    if "needle_items" in p:
        a, _ = longest_run(lines, ITEM)
        return "items", [lines[a + n - 1] for n in p["needle_items"]]
    docs = documents(row["input"])
    return "docs", [f"Document {docs[n - 1][0]}:\n{docs[n - 1][1]}\n\n" for n in p["gold_documents"]]


def gold_text(row: Dict[str, Any]) -> str:
    """What a model that is right says: RULER v2 reads a bare letter as no answer (its letter
    comes from \\boxed{}, "The final answer is" or `Answer: X`), so letters come with `Answer:`."""
    if row["metric"] == "letter":
        return "Answer: " + row["target"]
    return "\n".join(row["answers"])


def predictions_for(row: Dict[str, Any], n: int) -> Dict[str, str]:
    gold = gold_text(row)
    letter = row["target"] if row["metric"] == "letter" else ""
    words = gold.split()
    kind, copied = context_units(row)
    if kind == "docs":
        copy = "".join(copied)
    else:
        copy = "\n".join(copied) + "\n\n"
    if letter:
        wrong = LETTERS[(LETTERS.index(letter) + 1) % 4] if letter in LETTERS else "A"
        malformed = ["", "zq1 nothing here at all", letter, f"Answer: {letter.lower()}",
                     f"\\boxed{{{letter.lower()}}}", f"The final answer is ({letter})", "Answer: E",
                     f"\\boxed{{{letter}}} Answer: {wrong}", f"Answer: {letter}</think>Answer: {wrong}"]
    else:
        malformed = ["", "zq1 nothing here at all", gold[: max(1, len(gold) // 3)], "Answer:",
                     f"{gold}</think>", "Document 1234567:\n" + gold, gold.upper().replace(" ", "\t"),
                     "Answer: wrong\n\n" + gold, gold + "\n\nAnswer: wrong"]
    return {
        "gold": gold,
        "partial": " ".join(words[: len(words) // 2]),
        "copied": copy + "Answer: " + gold,
        "think": "<think>Let me look. " + copy + "It might be " + ("A" if gold != "A" else "B") + ".</think>" + gold,
        "malformed": malformed[n % len(malformed)],
        "empty": "",
    }


KINDS = ("gold", "partial", "copied", "think", "malformed", "empty")


def write_predictions(directory: str, prefix: str) -> None:
    outs = {k: open(f"{prefix}-{k}.jsonl", "w", encoding="utf-8") for k in KINDS}
    n = 0
    for _, row in rows(directory):
        for k, text in predictions_for(row, n).items():
            outs[k].write(json.dumps({"id": row["id"], "prediction": text}) + "\n")
        n += 1
    for f in outs.values():
        f.close()
    print(f"ok: wrote {', '.join(KINDS)} predictions for {n} rows of {directory}")


MODES = {"soft_all": "all", "soft_part": "part", "soft_2steps": "2steps"}


def reference_score(row: Dict[str, Any], prediction: str, twin: Any) -> Tuple[float, float]:
    """(RULER v2's score as NeMo-Skills gives it, the same under needlework's echo rule)."""
    if row["metric"] == "letter":
        ref = 1.0 if ref_mc_letter(prediction) == row["target"] else 0.0
    else:
        ref = ref_soft_match(prediction, row["answers"], MODES[row["metric"]])
    limit = twin.echo_limit(row["target"], row["max_new_tokens"], len(row["input"]))
    return ref, 0.0 if len(prediction) > limit else ref


def lm_eval_hooks(directory: str) -> Optional[Callable[..., Dict[str, Any]]]:
    import glob
    import importlib.util

    found = glob.glob(os.path.join(directory, "lm_eval", "needlework_*_utils.py"))
    if len(found) != 1:
        return None
    spec = importlib.util.spec_from_file_location("ruler2_lm_hooks", found[0])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.process_results


def same_scores(directory: str, pairs: List[Tuple[str, str]]) -> None:
    twin = load_exports()
    hooks = lm_eval_hooks(directory)
    data = {row["id"]: row for _, row in rows(directory)}
    total, echoes = 0, 0
    shapes: Dict[str, Counter] = {}
    full: Dict[str, Counter] = {}
    for predictions, rows_json in pairs:
        kind = os.path.basename(predictions).rsplit("-", 1)[-1].split(".")[0]
        preds = {v["id"]: v["prediction"] for v in map(json.loads, open(predictions, encoding="utf-8"))}
        verdicts = {v["id"]: v for v in json.load(open(rows_json, encoding="utf-8"))}
        for rid, row in data.items():
            pred = preds.get(rid, "")
            ref, want = reference_score(row, pred, twin)
            echoes += ref != want
            got = verdicts[rid]["score"]
            if abs(got - want) > 1e-12:
                fail(f"{rid} ({row['variant']}, {kind}): gen score {got}, RULER v2's scorer {ref} (with the echo rule {want}) on {pred[:160]!r}")
            py = twin.score_row(row, pred)
            if abs(py - got) > 1e-12:
                fail(f"{rid} ({row['variant']}, {kind}): metrics.py scores {py}, gen score {got}")
            if hooks is not None:
                lm = hooks(row, [pred])["score"]
                if abs(lm - got) > 1e-12:
                    fail(f"{rid} ({row['variant']}, {kind}): the lm-eval export's process_results {lm}, gen score {got}")
            shape = "1" if got == 1 else "0" if got == 0 else "between"
            shapes.setdefault(kind, Counter())[shape] += 1
            full.setdefault(kind, Counter())[ref == 1.0] += 1
            if ref != want:
                shapes[kind]["echo"] += 1
            total += 1
    for kind in ("gold", "copied", "think"):
        if kind in full and set(full[kind]) != {True}:
            fail(f"{kind} predictions: RULER v2's scorer gave {dict(full[kind])} (full marks True), expected full marks on every row")
    for kind, want in (("gold", "1"), ("empty", "0")):
        if kind in shapes and set(shapes[kind]) != {want}:
            fail(f"{kind} predictions: gen score gave {dict(shapes[kind])}, expected {want} on every row")
    if "partial" in shapes and "between" not in shapes["partial"]:
        fail(f"no partial prediction earned partial credit: {dict(shapes['partial'])}")
    print(f"ok: gen score equals RULER v2's scorer restated (and metrics.py{', the lm-eval export' if hooks else ''}) on "
          f"{total} predictions ({echoes} judged echoes by needlework's rule): "
          + "; ".join(f"{k} {dict(sorted(c.items()))}" for k, c in shapes.items()))


def inspect_gold(directory: str, config: str) -> None:
    """The exported inspect_ai task, run with mockllm saying each row's gold answer (as RULER v2
    reads it), scores accuracy 1.0; saying nothing, 0.0."""
    import importlib.util

    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    path = os.path.join(directory, "inspect", "needlework_tasks.py")
    spec = importlib.util.spec_from_file_location("ruler2_inspect", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    golds = [gold_text(row) for _, row in rows(directory) if row["variant"] == config]
    limit = min(6, len(golds))
    if limit == 0:
        fail(f"no rows of {config} in {directory}")
    for outputs, want in ((golds[:limit], 1.0), ([""] * limit, 0.0)):
        model = get_model("mockllm/model", custom_outputs=[
            ModelOutput.from_content(model="mockllm/model", content=t) for t in outputs])
        log = inspect_eval(getattr(module, config)(), model=model, limit=limit, max_samples=1, display="none",
                           log_dir=os.environ.get("INSPECT_LOG_DIR", "inspect-logs"))[0]
        if log.status != "success":
            fail(f"inspect: run status {log.status}: {log.error}")
        got = {name: m.value for sc in log.results.scores for name, m in sc.metrics.items()}
        if abs(got.get("accuracy", -1) - want) > 1e-9:
            fail(f"inspect {config}: accuracy {got.get('accuracy')}, expected {want} ({got})")
    print(f"ok: inspect_ai ran {config}: gold answers score 1.0, empty answers 0.0 ({limit} samples)")


def main() -> None:
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "rows":
        ap = argparse.ArgumentParser(prog="check_ruler2.py rows")
        ap.add_argument("dirs", nargs="+")
        ap.add_argument("--mmlu", required=True)
        ap.add_argument("--qa", required=True)
        ap.add_argument("--min-rows", type=int, default=12)
        a = ap.parse_args(rest)
        check_rows(a.dirs, a.mmlu, a.qa, a.min_rows)
    elif cmd == "predictions" and len(rest) == 2:
        write_predictions(rest[0], rest[1])
    elif cmd == "inspect-gold" and len(rest) == 2:
        inspect_gold(rest[0], rest[1])
    elif cmd == "same-scores" and len(rest) >= 3 and len(rest) % 2 == 1:
        same_scores(rest[0], list(zip(rest[1::2], rest[2::2])))
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
