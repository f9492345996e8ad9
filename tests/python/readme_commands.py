"""Run the README's commands as written, in order, and check the documents' links and paths.

  readme_commands.py GEN README.md

1. Commands. From README.md it takes, top to bottom:
   - every line inside a fenced code block (```) that begins with `gen ` — or with
     `cargo run --release -- `, which is run as `gen` with the arguments after `--`;
     a line ending in `\\` continues on the next;
   - every backticked span in a table row (a line beginning with `|`) that begins with `gen `.
   A trailing shell comment (` # ...`, outside quotes) is cut off before running.

   A command that names the reader's own files is skipped, and marked so in the README: its
   comment begins with "your file" (`gen qa --data dev-v2.0.json   # your file`; in a table
   row the comment goes inside the backticks). That marker is the only rule: any other command
   must run here, in an empty directory, with nothing but what earlier commands made.

   No command may use the shell: a `$`, a backtick, a leading `~`, a pipe, a redirection,
   `;` or `&` is refused (skipped commands included), so what the README shows is what runs.
   The rest run one after another with GEN in place of `gen`, in one fresh temporary
   directory (the working directory, as for a reader who pastes them in order). The first that
   exits non-zero, or takes longer than TIMEOUT seconds, fails the check: its number, the
   command and its stderr are printed and the exit code is 1. No command found is a failure.

2. Links and paths, in README.md, TESTING.md, CHANGELOG.md (those present beside it) and
   docs/*.md:
   - every relative markdown link `[text](target)` must name a file or folder that exists
     (relative to the document), and an anchor (`page.md#section`, `#section`) must match a
     heading of the page it points into (GitHub's heading ids);
   - every word of an inline code span or a fenced block that is a repository path (its
     first part a top-level folder holding tracked files, such as `benches/` or `tests/`;
     words with `<`, `*`, `{`, `[`, `=` or `$` are patterns and left out) must exist.
   Links inside fenced blocks or inline code are not read.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMEOUT = 120
SKIP_MARK = "your file"
SHELL_CHARS = set("$`|<>;&")
CARGO_RUN = "cargo run --release -- "


def split_comment(line):
    """(command, comment) of a shell line: the comment starts at a `#` that opens a word outside
    quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


def commands(readme):
    """[(line number, command, comment)] in README order."""
    found = []
    lines = readme.splitlines()
    in_block = False
    i = 0
    while i < len(lines):
        line = lines[i]
        number = i + 1
        if line.lstrip().startswith("```"):
            in_block = not in_block
            i += 1
            continue
        if in_block:
            text = line.strip()
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1].rstrip() + " " + lines[i].strip()
            if text.startswith(CARGO_RUN):
                text = "gen " + text[len(CARGO_RUN) :]
            if text.startswith("gen "):
                command, comment = split_comment(text)
                found.append((number, command, comment))
        elif line.lstrip().startswith("|"):
            for span in re.findall(r"`([^`]+)`", line):
                if span.startswith("gen "):
                    command, comment = split_comment(span)
                    found.append((number, command, comment))
        i += 1
    return found


def shell_use(command):
    """Why `command` needs a shell, or None."""
    bad = sorted(SHELL_CHARS.intersection(command))
    if bad:
        return "uses " + " ".join(repr(c) for c in bad)
    if any(word.startswith("~") for word in command.split()):
        return "uses ~ (home-directory expansion)"
    return None


def run_commands(gen, readme_path):
    found = commands(readme_path.read_text(encoding="utf-8"))
    if not found:
        return [f"{readme_path}: no `gen` command found in code blocks or table rows"]
    for number, command, _ in found:
        why = shell_use(command)
        if why:
            return [f"{readme_path}:{number}: `{command}` {why}; write it without the shell"]
    ran, skipped = [], []
    with tempfile.TemporaryDirectory(prefix="readme-commands-") as work:
        for number, command, comment in found:
            if comment.lower().startswith(SKIP_MARK):
                skipped.append((number, command))
                print(f"skip  {readme_path.name}:{number}: {command}   (names your file)")
                continue
            argv = [gen] + shlex.split(command)[1:]
            start = time.monotonic()
            try:
                done = subprocess.run(
                    argv, cwd=work, capture_output=True, text=True, timeout=TIMEOUT
                )
            except subprocess.TimeoutExpired:
                return [
                    f"{readme_path}:{number}: `{command}` took longer than {TIMEOUT} s "
                    "(README examples must stay small)"
                ]
            seconds = time.monotonic() - start
            if done.returncode != 0:
                return [
                    f"{readme_path}:{number}: `{command}` exited {done.returncode} "
                    f"(command {len(ran) + 1} run in order)\n{done.stderr.strip()}"
                ]
            ran.append((number, command))
            print(f"ok    {readme_path.name}:{number}: {command}   ({seconds:.1f} s)")
    print(f"README commands: {len(ran)} ran, {len(skipped)} skipped (they name your files)")
    return []


def github_slug(heading):
    """The id GitHub gives a heading: markup dropped, lower-cased, punctuation removed, spaces
    to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose_lines(text):
    """The lines of a markdown file outside fenced code blocks, with their numbers."""
    in_block = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_block = not in_block
            continue
        if not in_block:
            yield number, line


def anchors(path):
    ids = set()
    counts = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_slug(m.group(1))
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def repository_folders(root):
    """Top-level folders that hold tracked files (so generated `datasets/` never counts)."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True
        ).stdout.split("\n")
        return {p.split("/")[0] for p in listed if "/" in p}
    except (OSError, subprocess.CalledProcessError):
        skip = {"target", "datasets"}
        return {p.name for p in root.iterdir() if p.is_dir() and p.name not in skip}


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SPAN = re.compile(r"`([^`]+)`")


def path_words(doc):
    """(line number, word) for every word of inline code, and of fenced blocks, that could be a
    path."""
    in_block = False
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_block = not in_block
            continue
        pieces = [line] if in_block else SPAN.findall(line)
        for piece in pieces:
            for word in piece.split():
                word = word.strip("\"'(),;")
                if "/" in word and not any(c in word for c in "<*{$[="):
                    yield number, word


def check_documents(readme_path):
    root = readme_path.resolve().parent
    docs = [readme_path.resolve()]
    docs += [root / n for n in ("TESTING.md", "CHANGELOG.md") if (root / n).exists()]
    docs += sorted((root / "docs").glob("*.md"))
    folders = repository_folders(root)
    problems = []
    for doc in docs:
        name = doc.relative_to(root)
        for number, line in prose_lines(doc.read_text(encoding="utf-8")):
            plain = SPAN.sub("``", line)  # links inside inline code are not links
            for target in LINK.findall(plain):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:
                file_part, _, anchor = target.partition("#")
                dest = (doc.parent / file_part).resolve() if file_part else doc
                if not dest.exists():
                    problems.append(f"{name}:{number}: link to {target}: no such file")
                    continue
                if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    problems.append(f"{name}:{number}: link to {target}: no such heading")
        for number, word in path_words(doc):
            if word.split("/")[0] not in folders:
                continue
            if not (root / word.split(":")[0]).exists():
                problems.append(f"{name}:{number}: `{word}` does not exist in the repository")
    print(f"documents: {len(docs)} checked for links and repository paths")
    return problems


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    gen = os.path.abspath(sys.argv[1])
    readme_path = Path(sys.argv[2])
    if not os.access(gen, os.X_OK):
        print(f"error: {gen} is not an executable gen binary", file=sys.stderr)
        sys.exit(2)
    problems = check_documents(readme_path)
    problems += run_commands(gen, readme_path)
    sys.stdout.flush()
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
