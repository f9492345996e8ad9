"""needlework's metrics, as `gen score` applies them (generators/src/scoring/).

This file is the `needlework.metrics` module of the Python package and, word for word, the
head of every harness export (`gen export` embeds it), so that an exported task and the
package's own lm-eval and inspect_ai tasks score a row by the same code.

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

At the end, the reference benchmarks' own graded scorers (scores in [0, 1]): `mrcr_score`
(OpenAI MRCR), `mrcr_v2_score` (DeepMind MRCR v2), `graph_f1` and `graph_flexible_f1`
(GraphWalks, parsed as lm-eval parses), `ruler2_soft_match` and `multiple_choice_letter`
(RULER v2, as NeMo-Skills scores it). tests/python/check_metrics.py holds them to restatements
of those rules, and the Rust ports (generators/src/scoring/) to the same values.
"""

import difflib as _difflib
import json as _json
import os as _os
import re as _re

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
    if metric == "letter":
        want = (target or "").strip()
        return len(want) == 1 and multiple_choice_letter(prediction) == want
    if metric in GRADED:
        return score(metric, prediction, target, answers, labels, question, answer_prefix,
                     max_new_tokens, input_chars) == 1.0
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


def row_scores(row, prediction):
    """What a harness reports for one row: `score` (its own metric), and `ruler` (RULER's
    partial credit) when its metric has one."""
    out = {"score": score_row(row, prediction)}
    credit = row_ruler_credit(row, prediction)
    if credit is not None:
        out["ruler"] = credit
    return out


GRADED = ("mrcr", "mrcr_v2", "f1", "flexible_f1", "soft_all", "soft_part", "soft_2steps")


def score(metric, prediction, target, answers, labels=(), question="", answer_prefix="",
          max_new_tokens=None, input_chars=None):
    """A row's score, 0 to 1: 1.0 or 0.0 for the metrics that judge right or wrong
    (`is_correct`), the source's number for the graded ones (MRCR, GraphWalks, RULER v2's
    soft match); 0.0 for an echo whatever the metric."""
    if metric not in GRADED:
        ok = is_correct(metric, prediction, target, answers, labels, question, answer_prefix,
                        max_new_tokens, input_chars)
        return 1.0 if ok else 0.0
    prediction = prediction or ""
    if max_new_tokens is not None and input_chars is not None:
        if len(prediction) > echo_limit(target, max_new_tokens, input_chars):
            return 0.0
    answers = list(answers or [])
    if metric == "mrcr":
        return mrcr_score(prediction, target, target[:MRCR_V2_STRING_CHARS])
    if metric == "mrcr_v2":
        return mrcr_v2_score(prediction, target)
    if metric == "f1":
        return graph_f1(prediction, answers)
    if metric == "flexible_f1":
        return graph_flexible_f1(prediction, answers)
    mode = {"soft_all": "all", "soft_part": "part", "soft_2steps": "2steps"}[metric]
    return ruler2_soft_match(prediction, answers, mode)


def score_row(row, prediction):
    """`score` for a dataset row (a dict with needlework's columns)."""
    return score(
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


# MRCR, GraphWalks and RULER v2: the reference benchmarks' own scoring rules, restated
# (generators/src/scoring/{mrcr,graph_f1,soft_match}.rs say where each comes from). Scores are
# floats in [0, 1]; every rule reads text with Python's own str and re, as its source does.

MRCR_V2_STRING_CHARS = 12


def mrcr_score(response, answer, random_string):
    """OpenAI MRCR's grade: 0 unless `response` starts with `random_string` (untrimmed); else
    difflib's ratio of (response without it, answer without it), in that order, autojunk on."""
    response = response or ""
    if not response.startswith(random_string):
        return 0.0
    if answer.startswith(random_string):
        answer = answer[len(random_string):]
    return _difflib.SequenceMatcher(None, response[len(random_string):], answer).ratio()


def mrcr_v2_score(prediction, target):
    """DeepMind MRCR v2's metric: the random string is the stripped target's first 12
    characters; only what follows its last occurrence in the stripped prediction counts,
    compared as difflib.SequenceMatcher(a=reference, b=that text), both stripped."""
    if not prediction:
        return 0.0
    target = target.strip()
    if len(target) < MRCR_V2_STRING_CHARS:
        return 0.0
    string, reference = target[:MRCR_V2_STRING_CHARS], target[MRCR_V2_STRING_CHARS:].strip()
    prediction = prediction.strip()
    at = prediction.rfind(string)
    if at < 0:
        return 0.0
    rest = prediction[at + len(string):].strip()
    return _difflib.SequenceMatcher(None, reference, rest).ratio()


_FINAL_ANSWER_LIST = _re.compile(r"Final Answer:\s*\[(.*)\]")


def _final_answer_items(line):
    """The ids of a line's `Final Answer: [...]` list, or None when the line has none."""
    found = _FINAL_ANSWER_LIST.search(line)
    if found is None:
        return None
    inner = found.group(1)
    if not inner.strip():
        return []
    return [piece.strip().strip("'\"") for piece in inner.split(",") if piece.strip()]


def graph_answer(prediction, flexible=False):
    """The node ids lm-eval's graphwalks parser reads: from the last line, which must hold
    `Final Answer:` (strict), or from the lowest line with a list (flexible); [] otherwise."""
    lines = (prediction or "").rstrip("\n").split("\n")
    if not flexible:
        last = lines[-1]
        if "Final Answer:" not in last:
            return []
        return _final_answer_items(last) or []
    for line in reversed(lines):
        items = _final_answer_items(line)
        if items is not None:
            return items
    return []


def set_f1(predicted, gold):
    """F1 of two id sets; an empty answer to an empty gold set scores 1 (lm-eval says 0)."""
    predicted, gold = set(predicted), set(gold)
    if not predicted and not gold:
        return 1.0
    overlap = len(predicted & gold)
    recall = overlap / len(gold) if gold else 0.0
    precision = overlap / len(predicted) if predicted else 0.0
    if recall + precision > 0:
        return 2 * (recall * precision) / (recall + precision)
    return 0.0


def graph_f1(prediction, gold):
    """GraphWalks' `f1` for a row: the last line's ids against the gold ids."""
    return set_f1(graph_answer(prediction), gold)


def graph_flexible_f1(prediction, gold):
    """GraphWalks' `flexible_f1`: the lowest `Final Answer: [...]` line's ids against gold."""
    return set_f1(graph_answer(prediction, flexible=True), gold)


_COPIED_DOCUMENT = _re.compile(r"Document \d+:(?:.*\n)+?\n")


def _word_edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i, word in enumerate(a, 1):
        diagonal, row[0] = row[0], i
        for j, other in enumerate(b, 1):
            substitute = diagonal + (word != other)
            diagonal = row[j]
            row[j] = min(substitute, row[j - 1] + 1, diagonal + 1)
    return row[-1]


def _soft_match_one(prediction_lower, reference):
    reference = reference.lower()
    contained = 1.0 if reference in prediction_lower else 0.0
    ref_words = reference.split()
    if not ref_words:
        return contained
    wer = 1.0 * _word_edit_distance(prediction_lower.split(), ref_words) / len(ref_words)
    return max(contained, 1 - wer)


def ruler2_soft_match(prediction, refs, mode):
    """RULER v2's soft match (NeMo-Skills' eval_ruler2) in mode `all`, `part` or `2steps`:
    keep what follows the last `</think>`, then the last `Answer:`; `part` deletes copied
    `Document N:` blocks (through the next blank line), `2steps` keeps the last paragraph; each
    reference scores max(1 if it occurs in the prediction, 1 - WER), lower-cased, WER over
    str.split() words; `all` and `2steps` average the references, `part` takes the best.
    No references score 0."""
    if mode not in ("all", "part", "2steps"):
        raise ValueError(f"unknown soft match mode {mode!r}")
    refs = list(refs or [])
    if not refs:
        return 0.0
    text = (prediction or "").split("</think>")[-1].split("Answer:")[-1]
    if mode == "part":
        text = _COPIED_DOCUMENT.sub("", text)
    elif mode == "2steps":
        text = text.split("\n\n")[-1]
    text = text.lower()
    scores = [_soft_match_one(text, r) for r in refs]
    if mode == "part":
        return max(scores)
    return sum(scores) / len(scores)


def _last_boxed(text):
    start = text.rfind("\\boxed")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                whole = text[start:i + 1]
                return whole[len("\\boxed{"):-1] if whole.startswith("\\boxed{") else None
    return None


_FINAL_ANSWER_PHRASE = _re.compile(r"The final answer is (.+)$")
_STANDALONE_CAPITAL = _re.compile(r"\b[A-Z]\b(?!.*\b[A-Z]\b)", _re.DOTALL)
_ANSWER_COLON_LETTER = _re.compile(r"(?i)[*_]{0,2}Answer[*_]{0,2}\s*:[\s*_]{0,2}\s*([A-Z])(?![a-zA-Z0-9])")


def multiple_choice_letter(prediction):
    """The letter NeMo-Skills' multiple-choice evaluator reads (RULER v2's mk_niah_medium and
    mk_niah_hard), or None: the last \\boxed{...} if not empty, else the text after `The final
    answer is ` on the last line; one character is the answer, a longer text gives its last
    standalone capital; failing that, the letter of the last `Answer: X`, upper-cased."""
    prediction = prediction or ""
    extracted = _last_boxed(prediction)
    if not extracted:
        found = _FINAL_ANSWER_PHRASE.findall(prediction)
        extracted = found[-1] if found else None
    if extracted is not None:
        if len(extracted) == 1:
            return extracted
        capitals = _STANDALONE_CAPITAL.findall(extracted)
        if capitals:
            return capitals[-1]
    letters = _ANSWER_COLON_LETTER.findall(prediction)
    return letters[-1].upper() if letters else None
