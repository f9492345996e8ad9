"""Reference cases for the MRCR, GraphWalks and RULER v2 metrics, checked twice.

Every case gets its expected value from a restatement, written here, of the benchmark's own
scoring rule, with Python's difflib and re doing what they do in the original:

  difflib      difflib.SequenceMatcher(None, a, b).ratio() and .get_matching_blocks()
  mrcr         OpenAI MRCR's grade (the `openai/mrcr` dataset card)
  mrcr_v2      DeepMind MRCR v2's mrcr_v2_metric (eval_hub/mrcr_v2/run_evaluation.py)
  graph        lm-eval's graphwalks parsing (lm_eval/tasks/graphwalks/utils.py), strict and
               flexible, with an empty answer to an empty gold set scoring 1
  soft_match   NeMo-Skills' eval_ruler2 (evaluation/evaluator/ruler.py, branch chsieh/ruler2)
  mc_letter    NeMo-Skills' eval_mcq letter extraction (evaluator/mcq.py, relaxed defaults)

The script asserts that python/needlework/metrics.py (the harness twin) gives the same value
for every case, then writes them all as JSON Lines for the Rust reference test
(generators/tests/metrics_reference.rs), with the Unicode tables the Rust side relies on.

    python3 tests/python/check_metrics.py --cases 12000 --out /tmp/metric-cases.jsonl

Stdlib only. The committed fixture generators/tests/fixtures/metric_cases.jsonl was written by
    python3 tests/python/check_metrics.py --cases 150 --per-rule 30 --seed 7 \
        --out generators/tests/fixtures/metric_cases.jsonl
"""

import argparse
import difflib
import hashlib
import importlib.util
import json
import os
import random
import re
import struct
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOLERANCE = 1e-12


# ---------------------------------------------------------------- the rules, restated

def ref_mrcr(response, answer, random_string):
    # The response must open with the string; one copy comes off each side that has it.
    if not response.startswith(random_string):
        return 0.0
    response_rest = response[len(random_string):]
    answer_rest = answer[len(random_string):] if answer.startswith(random_string) else answer
    return float(difflib.SequenceMatcher(None, response_rest, answer_rest).ratio())


def ref_mrcr_v2(prediction, target):
    # The string is read off the target; the prediction's text after its last occurrence is
    # compared as b against the target's rest as a.
    if not isinstance(prediction, str) or prediction == "":
        return 0.0
    target = target.strip()
    if len(target) < 12:
        return 0.0
    needle = target[:12]
    reference = target[12:].strip()
    prediction = prediction.strip()
    where = prediction.rfind(needle)
    if where == -1:
        return 0.0
    after = prediction[where + 12:].strip()
    return difflib.SequenceMatcher(a=reference, b=after).ratio()


GRAPH_LIST = re.compile(r"Final Answer:\s*\[(.*)\]")


def ref_graph_parse_line(line):
    m = GRAPH_LIST.search(line)
    if not m:
        return None
    body = m.group(1)
    if body.strip() == "":
        return []
    out = []
    for piece in body.split(","):
        if piece.strip():
            out.append(piece.strip().strip("'\""))
    return out


def ref_graph_strict(prediction):
    last = prediction.rstrip("\n").split("\n")[-1]
    if "Final Answer:" not in last:
        return []
    got = ref_graph_parse_line(last)
    return [] if got is None else got


def ref_graph_flexible(prediction):
    lines = prediction.rstrip("\n").split("\n")
    for line in lines[::-1]:
        got = ref_graph_parse_line(line)
        if got is not None:
            return got
    return []


def ref_f1(pred_items, gold_items):
    pred, gold = set(pred_items), set(gold_items)
    if len(pred) == 0 and len(gold) == 0:
        return 1.0  # the rule; lm-eval itself gives 0 here
    hit = len(pred & gold)
    r = hit / len(gold) if len(gold) > 0 else 0.0
    p = hit / len(pred) if len(pred) > 0 else 0.0
    return 2 * (r * p) / (r + p) if (r + p) > 0 else 0.0


def ref_levenshtein(xs, ys):
    # Plain dynamic programme over whole words (editdistance.eval on lists).
    table = [[0] * (len(ys) + 1) for _ in range(len(xs) + 1)]
    for i in range(len(xs) + 1):
        table[i][0] = i
    for j in range(len(ys) + 1):
        table[0][j] = j
    for i in range(1, len(xs) + 1):
        for j in range(1, len(ys) + 1):
            table[i][j] = min(
                table[i - 1][j] + 1,
                table[i][j - 1] + 1,
                table[i - 1][j - 1] + (0 if xs[i - 1] == ys[j - 1] else 1),
            )
    return table[len(xs)][len(ys)]


def ref_wer(hyp, ref):
    h, r = hyp.split(), ref.split()
    if len(r) == 0:
        return float("inf")
    return 1.0 * ref_levenshtein(h, r) / len(r)


def ref_soft(pred, ref):
    return max(1.0 if ref.lower() in pred.lower() else 0.0, 1 - ref_wer(pred.lower(), ref.lower()))


def ref_soft_match(prediction, refs, mode):
    if not refs:
        return 0.0  # NeMo Gym's rule; NeMo-Skills would divide by zero
    if "</think>" in prediction:
        prediction = prediction.split("</think>")[-1]
    if "Answer:" in prediction:
        prediction = prediction.split("Answer:")[-1]
    if mode == "all":
        return sum(ref_soft(prediction, r) for r in refs) / len(refs)
    if mode == "2steps":
        last = prediction.split("\n\n")[-1]
        return sum(ref_soft(last, r) for r in refs) / len(refs)
    assert mode == "part"
    cleaned = re.sub(r"Document \d+:(?:.*\n)+?\n", "", prediction)
    return max(ref_soft(cleaned, r) for r in refs)


def ref_boxed(s):
    if "\\boxed" not in s:
        return None
    i = s.rfind("\\boxed")
    depth, close = 0, None
    for k in range(i, len(s)):
        if s[k] == "{":
            depth += 1
        if s[k] == "}":
            depth -= 1
            if depth == 0:
                close = k
                break
    if close is None:
        return None
    chunk = s[i:close + 1]
    if chunk[:7] != "\\boxed{" or chunk[-1] != "}":
        return None
    return chunk[7:-1]


def ref_mc_letter(text):
    extracted = ref_boxed(text)
    if not extracted:
        found = re.findall(r"The final answer is (.+)$", text)
        extracted = found[-1] if found else None
    letter = None
    if extracted is not None:
        if len(extracted) == 1:
            letter = extracted
        elif len(extracted) > 1:
            tail = re.findall(r"\b[A-Z]\b(?!.*\b[A-Z]\b)", extracted, re.DOTALL)
            if tail:
                letter = tail[-1].strip()
    if letter is None:
        found = re.findall(r"(?i)[\*\_]{0,2}Answer[\*\_]{0,2}\s*:[\s\*\_]{0,2}\s*([A-Z])(?![a-zA-Z0-9])", text)
        if found:
            letter = found[-1].strip().upper()
    return letter


# ---------------------------------------------------------------- text to test them on

WORDS = (
    "the of and a to in is was that for on with as by at from his her it an were are which this "
    "river lantern copper meadow harbour quiet seven orchard signal winter tower ledger marble "
    "falcon garden thread velvet beacon cinder hollow summit ember willow compass anchor prism "
    "quartz saffron tundra zephyr nimbus juniper kelp obsidian pylon quill rune sable talon"
).split()
ODD = [
    "é", "e\u0301", "ß", "ẞ", "Σ", "σ", "ς", "İ", "ı", "ſ", "\u212a", "Å", "中", "文", "字", "🙂", "👍🏽",
    "👨\u200d👩\u200d👧", "\u200d", "\u0301", "\u0345", "\u093f", "क", "ا", "ب", "\u3000", "\xa0",
    "\x1c", "\x1f", "\x85", "\u2028", "\r\n", "\t", "٣", "０", "Ⅻ", "²", "_", "\\", "{", "}", "[", "]",
]
PUNCT = [".", ",", ";", ":", "!", "?", " -", "'", '"']
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def prose(rng, chars, odd=0.0):
    out, n = [], 0
    while n < chars:
        w = rng.choice(WORDS)
        if rng.random() < 0.08:
            w = w.capitalize()
        if odd and rng.random() < odd:
            w = w + rng.choice(ODD) if rng.random() < 0.5 else rng.choice(ODD) + w
        if rng.random() < 0.12:
            w += rng.choice(PUNCT)
        if rng.random() < 0.03:
            w += "\n"
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:chars]


def random_text(rng, alphabet, lo, hi):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def mutate(rng, s, edits, alphabet="abcdefghij .,\n"):
    chars = list(s)
    for _ in range(edits):
        op = rng.random()
        at = rng.randint(0, len(chars))
        if op < 0.4 or not chars:
            chars.insert(at, rng.choice(alphabet))
        elif op < 0.7:
            del chars[min(at, len(chars) - 1)]
        else:
            chars[min(at, len(chars) - 1)] = rng.choice(alphabet)
    return "".join(chars)


def random_string(rng):
    r = rng.random()
    if r < 0.85:
        return "".join(rng.choice(ALNUM) for _ in range(12))
    if r < 0.93:
        return "".join(rng.choice(ALNUM) for _ in range(rng.randint(1, 20)))
    return "".join(rng.choice(ALNUM + "é🙂 .*[") for _ in range(12))


# ---------------------------------------------------------------- case makers

def difflib_pair(rng, i, large):
    kind = i % 13
    if large:
        base = prose(rng, rng.randint(10000, 40000), odd=0.01)
        return base, mutate(rng, base, rng.randint(0, 60))
    if kind == 0:
        alpha = rng.choice(["ab", "abc", "ab ", "aab", "abcd"])
        return random_text(rng, alpha, 0, 30), random_text(rng, alpha, 0, 30)
    if kind == 1:
        alpha = ODD + list("abc ")
        return random_text(rng, alpha, 0, 40), random_text(rng, alpha, 0, 40)
    if kind == 2:
        base = prose(rng, rng.randint(200, 3000))
        return mutate(rng, base, rng.randint(1, 20)), base
    if kind == 3:
        return prose(rng, rng.randint(150, 2500)), prose(rng, rng.randint(150, 2500))
    if kind == 4:
        b = prose(rng, rng.randint(200, 2500))
        start = rng.randint(0, len(b) // 2)
        return b[start:start + rng.randint(0, 300)], b
    if kind == 5:
        a = prose(rng, rng.randint(200, 2500))
        return a, prose(rng, rng.randint(0, 199))
    if kind == 6:
        unit = rng.choice(["a", "ab", "aab", "a ", "xyz"])
        a = unit * rng.randint(50, 260)
        b = mutate(rng, unit * rng.randint(50, 260), rng.randint(0, 6), alphabet="abxyz ")
        return a, b
    if kind == 7:
        # b right at the autojunk size, characters right at the popularity limit.
        n = rng.choice([199, 200, 201, 299, 300, 301])
        limit = n // 100 + 1
        rare = "".join(rng.choice("pqrstuvw") for _ in range(rng.randint(3, 8)))
        body = "".join(ch * (limit + rng.choice([0, 1])) for ch in rare)
        b = (body + random_text(rng, "abcdefghijklmno", n, n))[:n]
        b = "".join(rng.sample(b, len(b)))
        return mutate(rng, b, rng.randint(0, 30), alphabet="pqrstuvwabc"), b
    if kind == 8:
        other = rng.choice(["", "x", prose(rng, rng.randint(1, 400))])
        return ("", other) if rng.random() < 0.5 else (other, "")
    if kind == 9:
        base = prose(rng, rng.randint(200, 2000), odd=0.15)
        return base, mutate(rng, base, rng.randint(0, 15), alphabet=ODD)
    if kind == 10:
        base = prose(rng, rng.randint(100, 1500))
        return base.replace("\n", "\r\n") + rng.choice([" ", "\n", "  \n", ""]), base
    if kind == 11:
        base = prose(rng, rng.randint(0, 2500), odd=0.05)
        return base, base
    base = prose(rng, rng.randint(300, 1500))
    sentences = base.split(". ")
    rng.shuffle(sentences)
    return ". ".join(sentences), base


def reply(rng):
    r = rng.random()
    if r < 0.15:
        return prose(rng, rng.randint(0, 199))
    if r < 0.3:
        return prose(rng, rng.randint(200, 3000), odd=0.05)
    return prose(rng, rng.randint(200, 3000))


def mrcr_case(rng, i):
    s = random_string(rng)
    body = reply(rng)
    answer = s + body if rng.random() < 0.95 else body
    kind = i % 14
    other = reply(rng)
    response = [
        lambda: s + body,
        lambda: s + body + rng.choice(["\n", " ", "\n\n", "\r\n"]),
        lambda: rng.choice([" ", "\n", "Sure! "]) + s + body,
        lambda: s + mutate(rng, body, rng.randint(1, 30)),
        lambda: s + other,
        lambda: s,
        lambda: "",
        lambda: s.lower() + body,
        lambda: s + s + body,
        lambda: body + s,
        lambda: s + body.replace("\n", "\r\n"),
        lambda: s + (body + " ") * rng.randint(2, 6),
        lambda: s + body[: rng.randint(0, len(body))],
        lambda: s + prose(rng, rng.randint(0, 60)),
    ][kind]()
    return {"kind": "mrcr", "response": response, "answer": answer, "random_string": s}


def mrcr_v2_case(rng, i):
    s = random_string(rng)
    body = reply(rng)
    pad = lambda: rng.choice(["", " ", "\n", "\t ", "\x1c", "\u3000", "\xa0\n", "\x85"])
    target = pad() + s + pad() + body + pad()
    if i % 29 == 0:
        target = pad() + s[: rng.randint(0, 13)] + pad()
    other = reply(rng)
    kind = i % 12
    prediction = [
        lambda: s + body,
        lambda: pad() + s + pad() + body + pad(),
        lambda: s + other + "\n\n" + s + body,
        lambda: s + body + "\n\n" + s + other,
        lambda: body,
        lambda: "",
        lambda: pad() + pad(),
        lambda: "Here it is: " + s + body,
        lambda: s + mutate(rng, body, rng.randint(1, 30)),
        lambda: s,
        lambda: s + (body + " ") * rng.randint(2, 5),
        lambda: pad() + s.lower() + body,
    ][kind]()
    return {"kind": "mrcr_v2", "prediction": prediction, "target": target}


def node_id(rng):
    return hashlib.md5(str(rng.randint(0, 10**6)).encode()).hexdigest()[:10]


def graph_case(rng, i):
    gold = [node_id(rng) for _ in range(rng.choice([0, 0, 1, 2, 3, 5, 8]))]
    pool = gold + [node_id(rng) for _ in range(4)]
    pick = lambda: rng.sample(pool, rng.randint(0, len(pool)))
    items = gold[:]
    rng.shuffle(items)
    kind = i % 16
    if kind == 1:
        items = pick()
    elif kind == 2:
        items = items + items[: rng.randint(0, len(items))]
    elif kind == 3:
        items = [rng.choice(["'", '"', ""]) + x + rng.choice(["'", '"', ""]) for x in items]
    elif kind == 4:
        items = [rng.choice([" ", "\t", "\u3000", "\xa0", "\x1f", ""]) + x + rng.choice([" ", "", "\u2028"]) for x in items]
    sep = rng.choice([", ", ",", " , ", ",\t"])
    listed = "[" + sep.join(items) + rng.choice(["", ",", ", "]) + "]"
    lead = rng.choice(["", "Let me work through the graph.\n", "Step 1.\nStep 2.\n\n", "Final Answer: [x]\n"])
    line = rng.choice(["Final Answer: ", "Final Answer:", "Final Answer:  ", "Final Answer:\u3000"]) + listed
    tail = rng.choice(["", "\n", "\n\n", "\r\n", "\r\n\r\n", " ", "\nDone."])
    if kind == 5:
        line = "Final Answer: " + sep.join(items)
    elif kind == 6:
        line = "final answer: " + listed
    elif kind == 7:
        line = rng.choice(["Final Answer: []", "Final Answer: [ ]", "Final Answer: [,]", "Final Answer: ['']", "Final Answer: [\"\", '']"])
    elif kind == 8:
        line = "Final Answer: [" + listed + "]"
    elif kind == 9:
        line = "Final Answer: x " + line + " and [y]"
    elif kind == 10:
        line = line + "\nFinal Answer: [" + ", ".join(pick()) + "]"
    elif kind == 11:
        line = rng.choice(["", "I could not find them.", "[a, b]", "Final Answer:", "Final Answer: [a"])
    elif kind == 12:
        line = line + "\nI hope this helps."
    elif kind == 13:
        line = line.replace("\n", "\r\n") + "\r\n"
    return {"kind": "graph", "prediction": lead + line + tail, "gold": gold}


def ten_digits(rng):
    return str(rng.randint(10**9, 10**10 - 1))


def references(rng):
    kind = rng.random()
    if kind < 0.35:
        return [ten_digits(rng) for _ in range(rng.choice([1, 1, 2, 4]))]
    if kind < 0.6:
        return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
    if kind < 0.85:
        return [prose(rng, rng.randint(30, 200)).replace("\n", " ") for _ in range(rng.randint(1, 4))]
    if kind < 0.95:
        return [rng.choice(["", "  ", "ΣΟΦΟΣ", "Straße", "İstanbul", "naïve café", "x"]) for _ in range(rng.randint(1, 2))]
    return []


def documents(rng, refs, crlf=False):
    out = []
    for _ in range(rng.randint(1, 3)):
        label = str(rng.randint(10**6, 10**7 - 1))
        if rng.random() < 0.1:
            label = "".join(chr(0x660 + int(d)) for d in label)
        body = rng.choice(refs + [prose(rng, 40)]) if refs else prose(rng, 40)
        block = f"Document {label}:\n{rng.choice(WORDS).title()}\n{body}\n\n"
        if rng.random() < 0.15:
            block = block.rstrip("\n")
        out.append(block.replace("\n", "\r\n") if crlf else block)
    return "".join(out)


def soft_match_case(rng, i):
    refs = references(rng)
    mode = ["all", "part", "2steps"][i % 3]
    said = rng.sample(refs, rng.randint(0, len(refs))) if refs else []
    joined = rng.choice([", ", "\n", " and ", " "]).join(said)
    variant = (i // 3) % 12
    if variant == 0:
        p = joined
    elif variant == 1:
        p = "The answer is " + mutate(rng, joined, rng.randint(0, 5))
    elif variant == 2:
        p = documents(rng, refs) + "Answer: " + joined
    elif variant == 3:
        p = documents(rng, refs, crlf=rng.random() < 0.5) + joined
    elif variant == 4:
        p = "<think>" + ", ".join(refs) + "</think>" + rng.choice(["", "Answer: "]) + joined
    elif variant == 5:
        p = "<think>nothing</think><think>" + joined + "</think>"
    elif variant == 6:
        p = "Copying first.\n\n" + "\n\n".join(refs) + "\n\n" + joined
    elif variant == 7:
        p = "Answer: wrong Answer: " + joined.upper()
    elif variant == 8:
        p = rng.choice(["", " ", "</think>", "Answer:", "\n\n", "Document 12:\n\n"])
    elif variant == 9:
        p = prose(rng, rng.randint(0, 300), odd=0.1)
    elif variant == 10:
        p = joined + " " + prose(rng, rng.randint(0, 200))
    else:
        p = (joined + ".").replace(" ", rng.choice([" ", "\u3000", "\x1c", "\t"]))
    return {"kind": "soft_match", "prediction": p, "refs": refs, "mode": mode}


MC_PARTS = [
    "\\boxed{B}", "\\boxed{c}", "\\boxed{(D)}", "\\boxed{\\text{A}}", "\\boxed{}", "\\boxed {A}",
    "\\boxed{A or B}", "\\boxed{AB}", "\\boxed{B\u0301}", "\\boxed{ }", "\\boxed{unclosed", "\\boxed}{C}",
    "The final answer is C", "The final answer is (B) because A", "The final answer is d",
    "The final answer is  ", "Answer: D", "**Answer:** b", "answer: a", "Answer: Apple", "Answer: A1",
    "Answer: \u0131", "An\u017fwer: C", "Answer:*_ B", "Answer: _* B", "Answer :C", "__Answer__: A",
    "***Answer: D", "Answer: Answer: B", "Answer: \u212a", "Answer: \u0130", "Answer:\u3000C",
    "I think it is A.", "Options A, B, C and D.", "E", "x", "", "A_", "\u00c9", "B\u093f",
]


def mc_letter_case(rng, i):
    parts = [rng.choice(MC_PARTS) for _ in range(rng.randint(1, 3))]
    if i % 7 == 0:
        parts.insert(rng.randint(0, len(parts)), prose(rng, rng.randint(0, 200)))
    text = rng.choice(["\n", " ", "\n\n", ". "]).join(parts) + rng.choice(["", "\n", "\n\n", " ", "\r\n"])
    return {"kind": "mc_letter", "prediction": text}


# ---------------------------------------------------------------- running

def load_exports():
    path = os.path.join(ROOT, "python", "needlework", "metrics.py")
    spec = importlib.util.spec_from_file_location("needlework_metrics", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ranges(test):
    out, start = [], None
    for cp in range(0x110001):
        hit = cp < 0x110000 and test(chr(cp))
        if hit and start is None:
            start = cp
        elif not hit and start is not None:
            out.append([start, cp - 1])
            start = None
    return out


def unicode_record():
    return {
        "kind": "pychar",
        "python": sys.version.split()[0],
        "unicode": unicodedata.unidata_version,
        "isalnum": ranges(str.isalnum),
        "isdecimal": ranges(str.isdecimal),
        "isspace": ranges(str.isspace),
        "assigned": ranges(lambda c: unicodedata.category(c) != "Cn"),
        "lower": [[cp, chr(cp).lower()] for cp in range(0x110000)
                  if unicodedata.category(chr(cp)) != "Cn" and chr(cp).lower() != chr(cp)],
    }


def same(x, y):
    if isinstance(x, float) or isinstance(y, float):
        return abs(x - y) <= TOLERANCE
    return x == y


def fill(case, m):
    """Adds `expected` (the restated rule) and `ours` (the exports twin) to `case`."""
    k = case["kind"]
    if k == "difflib":
        sm = difflib.SequenceMatcher(None, case["a"], case["b"])
        case["expected"] = sm.ratio()
        case["blocks"] = [list(b) for b in sm.get_matching_blocks()]
        return with_bits(case)  # no twin: the exports call difflib itself
    elif k == "mrcr":
        case["expected"] = ref_mrcr(case["response"], case["answer"], case["random_string"])
        case["ours"] = m.mrcr_score(case["response"], case["answer"], case["random_string"])
    elif k == "mrcr_v2":
        case["expected"] = ref_mrcr_v2(case["prediction"], case["target"])
        case["ours"] = m.mrcr_v2_score(case["prediction"], case["target"])
    elif k == "graph":
        case["expected"] = ref_f1(ref_graph_strict(case["prediction"]), case["gold"])
        case["expected_flexible"] = ref_f1(ref_graph_flexible(case["prediction"]), case["gold"])
        case["ours"] = m.graph_f1(case["prediction"], case["gold"])
        case["ours_flexible"] = m.graph_flexible_f1(case["prediction"], case["gold"])
        assert same(case["expected_flexible"], case["ours_flexible"]), case
    elif k == "soft_match":
        case["expected"] = ref_soft_match(case["prediction"], case["refs"], case["mode"])
        case["ours"] = m.ruler2_soft_match(case["prediction"], case["refs"], case["mode"])
    elif k == "mc_letter":
        case["expected"] = ref_mc_letter(case["prediction"])
        case["ours"] = m.multiple_choice_letter(case["prediction"])
    assert same(case["expected"], case["ours"]), f"exports disagree with the reference: {case}"
    return with_bits(case)


def with_bits(case):
    """Each float also as its IEEE-754 bits, so the Rust side reads the exact value back."""
    for key in [k for k, v in case.items() if isinstance(v, float)]:
        case[key + "_bits"] = struct.unpack("<Q", struct.pack("<d", case[key]))[0]
    return case


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=12000, help="difflib pairs (each in both orders)")
    ap.add_argument("--per-rule", type=int, default=None,
                    help="cases for each other rule (default max(1000, cases / 10))")
    ap.add_argument("--seed", type=int, default=20260601)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    per_rule = args.per_rule if args.per_rule is not None else max(1000, args.cases // 10)
    rng = random.Random(args.seed)
    m = load_exports()
    counts, shapes = {}, {}

    def emit(f, case):
        fill(case, m)
        kind = case["kind"]
        counts[kind] = counts.get(kind, 0) + 1
        values = [case["expected"]] + ([case["expected_flexible"]] if kind == "graph" else [])
        for v in values:
            if v is None or isinstance(v, str):
                shape = "none" if v is None else "letter"
            else:
                shape = "0" if v == 0 else "1" if v == 1 else "between"
            shapes.setdefault(kind, {}).setdefault(shape, 0)
            shapes[kind][shape] += 1
        f.write(json.dumps(case, ensure_ascii=False) + "\n")

    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(unicode_record(), ensure_ascii=False) + "\n")
        i = 0
        while counts.get("difflib", 0) < args.cases:
            large = i >= 1000 and i % 1000 == 999
            a, b = difflib_pair(rng, i, large)
            emit(f, {"kind": "difflib", "a": a, "b": b})
            if counts["difflib"] < args.cases:
                emit(f, {"kind": "difflib", "a": b, "b": a})
            i += 1
        for make in (mrcr_case, mrcr_v2_case, graph_case, soft_match_case, mc_letter_case):
            for j in range(per_rule):
                emit(f, make(rng, j))
    total = sum(counts.values())
    print(f"check_metrics: {total} cases; the exports equal the restated references; written to {args.out}")
    for kind, n in counts.items():
        print(f"  {kind}: {n} cases, expected values {dict(sorted(shapes[kind].items()))}")
    # Cases that all score alike would prove nothing: every rule must see each kind of outcome.
    for kind, seen in shapes.items():
        wanted = {"none", "letter"} if kind == "mc_letter" else {"0", "1", "between"}
        missing = wanted - set(seen)
        assert not missing or total < 2000, f"{kind}: no case scores {missing}"


if __name__ == "__main__":
    main()
