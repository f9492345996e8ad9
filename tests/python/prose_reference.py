"""Reference figures for the prose realism test (generators/tests/prose_realism.rs).

The reference is real English: the texts of Python's own `pydoc_data.topics` (shipped with every
Python), in sorted topic order, joined by blank lines. This script measures it the way the Rust
test measures our generated haystack, and either prints the figures as Rust constants
(`--print`) or checks that the constants committed in the Rust test still match this Python's
text (the default, run from .ci/run), so the reference cannot drift unnoticed.

Measures (all on the whole reference text):
  words          runs of ASCII letters
  distinct       distinct lower-cased words
  digits/caps    ASCII digits / capital letters per 1,000 characters
  zlib           bytes / zlib level-9 compressed bytes
  sentence mean/sd  words per sentence, sentences split after . ! ? before whitespace
"""
import re
import statistics
import sys
import zlib
from pathlib import Path

from pydoc_data import topics

RUST_TEST = Path(__file__).resolve().parents[2] / "generators" / "tests" / "prose_realism.rs"


def reference_text():
    return "\n\n".join(topics.topics[k] for k in sorted(topics.topics))


def measure(text):
    words = re.findall(r"[A-Za-z]+", text)
    n = len(text)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if re.search(r"[A-Za-z]", s)]
    lengths = [len(re.findall(r"[A-Za-z]+", s)) for s in sentences]
    raw = text.encode()
    return {
        "REF_CHARS": n,
        "REF_WORDS": len(words),
        "REF_DISTINCT": len({w.lower() for w in words}),
        "REF_DIGITS_PER_1000": sum(c.isdigit() for c in text) * 1000 / n,
        "REF_CAPITALS_PER_1000": sum(c.isupper() for c in text) * 1000 / n,
        "REF_ZLIB_RATIO": len(raw) / len(zlib.compress(raw, 9)),
        "REF_SENTENCE_MEAN": statistics.mean(lengths),
        "REF_SENTENCE_SD": statistics.pstdev(lengths),
    }


def main():
    figures = measure(reference_text())
    if "--print" in sys.argv:
        print(f"// pydoc_data.topics of Python {sys.version.split()[0]}")
        for k, v in figures.items():
            lit = f"{v}" if isinstance(v, int) else f"{v:.3f}"
            print(f"const {k}: {'usize' if isinstance(v, int) else 'f64'} = {lit};")
        return
    committed = dict(
        re.findall(r"const (REF_[A-Z_0-9]+): \w+ = ([0-9.]+);", RUST_TEST.read_text())
    )
    bad = []
    for k, v in figures.items():
        c = float(committed[k])
        # Python versions edit their documentation a little; 5 % is drift, not an edit.
        if abs(v - c) > 0.05 * abs(c):
            bad.append(f"{k}: committed {c}, this Python's pydoc_data gives {v:.3f}")
    if bad:
        sys.exit("prose reference figures drifted:\n  " + "\n  ".join(bad))
    print(f"prose reference figures match pydoc_data of Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
