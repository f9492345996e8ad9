"""needlework's six metrics, as `gen score` applies them (generators/src/scoring.rs).

Every row names its metric, so a harness scores it without knowing the task:
  all    every gold item occurs in the output (case-insensitive)
  any    at least one gold item occurs in the output
  exact  output equals target after trimming, dropping a repeated answer prefix and one
         trailing period, collapsing blanks, lowercasing
  one_of output equals one of the gold items, cleaned as for exact (SQuAD's exact match)
  set    the output's items (split at commas and blanks) are the target's, as sets
  label  lowercase, cut at the first period, collect the closed-set labels occurring as whole
         words (ignoring labels the question names unless gold); right when they are the gold

Before any metric, one rule judges the answer rather than the prompt: a prediction longer than
`echo_limit` characters, min(8 x max_new_tokens, len(input) // 2) + 2 x len(target), is an
echo and is wrong, whatever the metric.

Beside that verdict, `ruler_credit` gives RULER's partial credit for `all` and `any` rows: the
fraction of gold items present (RULER's string_match_all; for `any`, 1 if one is present), after
RULER's cleaning of the prediction, with no echo rule; None for the other metrics.
"""

import json as _json
import os as _os

ECHO_CHARS_PER_TOKEN = 8

CHAT_TURNS_FILE = "chat_turns.jsonl"


def load_chat_turns(directory):
    """The rendered chat of each row up to the model's turn, by row id, from the
    `chat_turns.jsonl` that `gen export` writes beside its files when the dataset was made with a
    chat template (`gen` renders it as transformers does); None for a dataset without one."""
    path = _os.path.join(directory, CHAT_TURNS_FILE)
    if not _os.path.exists(path):
        return None
    turns = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = _json.loads(line)
            turns[row["id"]] = row["text"]
    return turns


def turns_text(row, turns):
    """What the model reads before the answer prefix: the row's rendered chat, or its input."""
    return row["input"] if turns is None else turns[row["id"]]


def model_text(row, turns):
    """What the model reads, the text `prompt_tokens` counts: `turns_text` then the answer
    prefix."""
    return turns_text(row, turns) + (row["answer_prefix"] or "")


def echo_limit(target, max_new_tokens, input_chars):
    """The most characters a prediction may have before it is judged an echo."""
    budget = ECHO_CHARS_PER_TOKEN * int(max_new_tokens)
    return min(budget, int(input_chars) // 2) + 2 * len(target or "")


def _occurs_as_word(needle, text):
    if not needle:
        return False
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        if not before.isalnum() and not after.isalnum():
            return True
        start = text.find(needle, start + 1)
    return False


def _clean(s, answer_prefix):
    t = s.strip().lower()
    prefix = (answer_prefix or "").strip().lower()
    if prefix and t.startswith(prefix):
        t = t[len(prefix):].strip()
    if t.endswith("."):
        t = t[:-1]
    return " ".join(t.strip().split())


def _items(s):
    out = set()
    for part in s.lower().replace(",", " ").split():
        part = part.rstrip(".")
        if part:
            out.add(part)
    return out


def is_correct(metric, prediction, target, answers, labels=(), question="", answer_prefix="",
               max_new_tokens=None, input_chars=None):
    """Whether `prediction` is right for a row with these fields: not an echo (checked when the
    row's `max_new_tokens` and input length are given), and accepted by its metric."""
    prediction = prediction or ""
    if max_new_tokens is not None and input_chars is not None:
        if len(prediction) > echo_limit(target, max_new_tokens, input_chars):
            return False
    pred = prediction.lower()
    answers = list(answers or [])
    if metric == "all":
        return bool(answers) and all(a.lower() in pred for a in answers)
    if metric == "any":
        return any(a.lower() in pred for a in answers)
    if metric == "exact":
        return _clean(prediction, answer_prefix) == _clean(target, answer_prefix)
    if metric == "one_of":
        said = _clean(prediction, answer_prefix)
        return any(said == _clean(a, answer_prefix) for a in answers)
    if metric == "set":
        want = _items(target)
        return bool(want) and _items(prediction) == want
    if metric == "label":
        cut = pred.split(".")[0]
        q = (question or "").lower()
        gold = {a.lower() for a in answers}
        found = {
            l.lower()
            for l in (labels or [])
            if (l.lower() in gold or not _occurs_as_word(l.lower(), q)) and _occurs_as_word(l.lower(), cut)
        }
        return bool(gold) and found == gold
    raise ValueError(f"unknown metric {metric!r}")


def ruler_credit(metric, prediction, answers):
    """RULER's partial credit for a row, or None when its metric has none (see above)."""
    answers = list(answers or [])
    if metric not in ("all", "any") or not answers:
        return None
    cleaned = "".join("\n" if ord(c) < 0x20 else c for c in (prediction or "").strip()).strip()
    pred = cleaned.lower()
    found = sum(1 for a in answers if a.lower() in pred)
    if metric == "all":
        return found / len(answers)
    return 1.0 if found else 0.0


def row_ruler_credit(row, prediction):
    """`ruler_credit` for a dataset row (a dict with needlework's columns)."""
    return ruler_credit(row["metric"], prediction, row["answers"])


def score_row(row, prediction):
    """1.0 or 0.0 for a dataset row (a dict with needlework's columns)."""
    ok = is_correct(
        row["metric"],
        prediction,
        row["target"],
        row["answers"],
        row.get("labels") or [],
        row.get("question") or "",
        row.get("answer_prefix") or "",
        row["max_new_tokens"],
        row["input_chars"] if "input_chars" in row else len(row["input"]),
    )
    return 1.0 if ok else 0.0
