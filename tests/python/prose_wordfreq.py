"""The generated haystack's word statistics beside English's: a CI check.

For seeds 3, 11 and 29 it runs `gen niah --len 128k --seed S`, takes the first 100,000 words of
the rows' `input` (words are runs of letters with an inner apostrophe, lower-cased), and measures
every figure below against `wordfreq` (English word frequencies, shipped with the package, so it
works offline) and real texts found on any Linux machine: Python's own documentation
(`pydoc_data.topics`) and the GPL-3 and Apache-2.0 licence texts. It prints one table and exits
non-zero when a figure of a seed is out of its bound.

    python3 tests/python/prose_wordfreq.py [--gen target/release/gen] [--seeds 3,11,29]

Figures and bounds (a content word is one outside `wordfreq.top_n_list("en", 150)`):
  the          share of all words that are "the": 4-8 %
  top content  the most frequent content word's share: at most 1 %
  top ten      the ten most frequent content words' share together: at most 6 %
  repeats      content words that repeat one already in their sentence, per content word: at
               most the lowest of the real texts'
  sentences    words per sentence (a sentence ends at . ! or ?, closing quotes and brackets
               included, before white space, or at a blank line): mean 14-24, sd at least 7
  types        distinct words: at least 5,000
  locality     how much likelier a content word recurs in its own paragraph than in a paragraph
               of the same sentences drawn from the whole text at random: at least 1.5 (real
               text keeps a topic for a paragraph, then moves on)

A licence text missing on this machine is reported as such and left out (pydoc_data ships with
every Python, so at least one real text is always measured).
"""
import argparse
import random
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import wordfreq

ROOT = Path(__file__).resolve().parents[2]
WORDS = 100_000
WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")
# A sentence ends at . ! ? with any closing quotes or brackets, before white space or the end.
SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s|$)")
BLANK_LINE = re.compile(r"\n[ \t]*\n")
LICENCES = {
    "GPL-3": ["/usr/share/common-licenses/GPL-3"],
    "Apache-2.0": ["/usr/share/common-licenses/Apache-2.0"],
}

BOUNDS = {
    "the": (0.04, 0.08),
    "top_content": (None, 0.01),
    "top_ten": (None, 0.06),
    "sentence_mean": (14.0, 24.0),
    "sentence_sd": (7.0, None),
    "types": (5_000, None),
    "locality": (1.5, None),
}


def words_of(text):
    return [w.lower() for w in WORD.findall(text)]


def paragraphs_of(text):
    """Paragraphs (split at blank lines), each a list of sentences, each a list of words."""
    out = []
    for block in BLANK_LINE.split(text):
        sentences, start = [], 0
        for m in SENTENCE_END.finditer(block):
            sentences.append(block[start : m.end()])
            start = m.end()
        sentences.append(block[start:])
        sentences = [w for w in (words_of(s) for s in sentences) if w]
        if sentences:
            out.append(sentences)
    return out


def cut_to_words(text, n):
    """The prefix of `text` holding its first `n` words."""
    for i, m in enumerate(WORD.finditer(text)):
        if i == n:
            return text[: m.start()]
    return text


def measure(text, common):
    words = words_of(text)
    counts = Counter(words)
    total = len(words)
    content = [(w, c) for w, c in counts.most_common() if w not in common]
    paragraphs = paragraphs_of(text)
    sentences = [s for p in paragraphs for s in p]
    lengths = [len(s) for s in sentences]
    repeats = content_tokens = 0
    for s in sentences:
        seen = set()
        for w in s:
            if w in common:
                continue
            content_tokens += 1
            repeats += w in seen
            seen.add(w)
    return {
        "words": total,
        "the": counts["the"] / total,
        "top_word": content[0][0],
        "top_content": content[0][1] / total,
        "top_ten": sum(c for _, c in content[:10]) / total,
        "repeats": repeats / max(content_tokens, 1),
        "sentence_mean": statistics.mean(lengths),
        "sentence_sd": statistics.pstdev(lengths),
        "types": len(counts),
        "locality": locality(paragraphs, common),
    }


def recurrence(paragraphs, common):
    """Share of content-word tokens whose word occurs in another sentence of their paragraph."""
    hits = tokens = 0
    for p in paragraphs:
        if len(p) < 2:
            continue
        per_sentence = [{w for w in s if w not in common} for s in p]
        seen = Counter(w for s in per_sentence for w in s)
        for s in per_sentence:
            for w in s:
                tokens += 1
                hits += seen[w] > 1
    return hits / max(tokens, 1)


def locality(paragraphs, common):
    """Recurrence in the real paragraphs over recurrence in paragraphs of the same sizes made of
    sentences drawn from anywhere in the text (a fixed shuffle, so the figure is stable)."""
    sentences = [s for p in paragraphs for s in p]
    shuffled = sentences[:]
    random.Random(0).shuffle(shuffled)
    mixed, i = [], 0
    for p in paragraphs:
        mixed.append(shuffled[i : i + len(p)])
        i += len(p)
    base = recurrence(mixed, common)
    return recurrence(paragraphs, common) / base if base else float("inf")


def generated_text(gen, seed):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ds"
        cmd = [gen, "niah", "--len", "128k", "--seed", str(seed), "-q", "--out", str(out)]
        subprocess.run(cmd, check=True)
        texts, n = [], 0
        for path in sorted(out.rglob("*.parquet")):
            for text in pq.read_table(path, columns=["input"]).column("input").to_pylist():
                texts.append(text)
                n += len(WORD.findall(text))
                if n >= WORDS:
                    break
            if n >= WORDS:
                break
    if n < WORDS:
        sys.exit(f"seed {seed}: the rows hold only {n} words, fewer than {WORDS}")
    return cut_to_words("\n\n".join(texts), WORDS)


def real_texts():
    from pydoc_data import topics

    texts = {"Python docs": "\n\n".join(topics.topics[k] for k in sorted(topics.topics))}
    missing = []
    for name, paths in LICENCES.items():
        found = next((p for p in paths if Path(p).is_file()), None)
        if found:
            texts[name] = Path(found).read_text(encoding="utf-8")
        else:
            missing.append(name)
    return texts, missing


def english_figures(common):
    """The frequency figures of English itself, from wordfreq (sentence figures do not apply)."""
    ranked = [w for w in wordfreq.top_n_list("en", 400) if w not in common]
    f = lambda w: wordfreq.word_frequency(w, "en")
    return {
        "the": f("the"),
        "top_word": ranked[0],
        "top_content": f(ranked[0]),
        "top_ten": sum(f(w) for w in ranked[:10]),
    }


def cell(key, fig):
    if key not in fig:
        return "-"
    v = fig[key]
    if key in ("the", "top_content", "top_ten", "repeats"):
        s = f"{100 * v:.2f} %"
        return f'{s} "{fig["top_word"]}"' if key == "top_content" else s
    if key in ("types", "words"):
        return f"{v:,}"
    return f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", default=str(ROOT / "target" / "release" / "gen"))
    ap.add_argument("--seeds", default="3,11,29")
    args = ap.parse_args()
    common = set(wordfreq.top_n_list("en", 150))
    reals, missing = real_texts()
    real = {name: measure(text, common) for name, text in reals.items()}
    # The bound on repeats is real prose's own figure: the lowest of the real texts measured.
    repeat_bound = min(f["repeats"] for f in real.values())
    bounds = dict(BOUNDS, repeats=(None, repeat_bound))
    columns = {}
    for seed in [int(s) for s in args.seeds.split(",")]:
        columns[f"seed {seed}"] = measure(generated_text(args.gen, seed), common)
    columns["English (wordfreq)"] = english_figures(common)
    columns.update(real)
    rows = [
        ("words measured", "words"),
        ('"the", share of words', "the"),
        ("top content word", "top_content"),
        ("ten top content words", "top_ten"),
        ("in-sentence repeats", "repeats"),
        ("sentence mean (words)", "sentence_mean"),
        ("sentence sd (words)", "sentence_sd"),
        ("word types", "types"),
        ("paragraph locality", "locality"),
    ]

    def bound_text(key):
        lo, hi = bounds.get(key, (None, None))
        pct = key in ("the", "top_content", "top_ten", "repeats")
        fmt = (lambda v: f"{100 * v:.2f} %") if pct else (lambda v: f"{v:,}" if isinstance(v, int) else f"{v:g}")
        if lo is not None and hi is not None:
            return f"{fmt(lo)} - {fmt(hi)}"
        if lo is not None:
            return f">= {fmt(lo)}"
        if hi is not None:
            return f"<= {fmt(hi)}"
        return ""

    header = ["figure", "bound"] + list(columns)
    table = [header] + [[label, bound_text(k)] + [cell(k, columns[c]) for c in columns] for label, k in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for i, r in enumerate(table):
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
        if i == 0:
            print("-+-".join("-" * w for w in widths))
    if missing:
        print(f"not on this machine, left out: {', '.join(missing)}")
    print(f"repeats bound: the lowest real text's figure, {100 * repeat_bound:.2f} %")
    failures = []
    for col, fig in columns.items():
        if not col.startswith("seed "):
            continue
        for key, (lo, hi) in bounds.items():
            v = fig[key]
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                failures.append(f"{col}: {key} = {cell(key, fig)} is outside {bound_text(key)}")
    sys.stdout.flush()
    if failures:
        sys.exit("prose statistics out of bounds:\n  " + "\n  ".join(failures))
    print("prose statistics: every figure of every seed within its bound")


if __name__ == "__main__":
    main()
