"""Datasets made on first use inside a harness, with the evaluated model's tokenizer, cached.

The harness tasks this package ships (``needlework.lm_eval``, ``needlework.inspect_tasks``)
call :func:`prepare`, which turns a recipe (a gen task, its options, a tokenizer and maybe a
chat template) into a dataset folder under the cache directory. The folder's name carries a
hash of everything that decides the dataset's bytes: gen's version, the task, the options and
the bytes of the tokenizer and template files. So the same recipe finds the same folder, and a
changed tokenizer file, option or gen makes a new one instead of reusing stale rows.

A folder that exists is used only after ``gen verify`` passes on it (every row regenerated and
compared); otherwise it is set aside and made again. A new folder is written under a sibling
temporary name and renamed into place, so a reader never sees half a dataset, and two first
uses at once each make their own copy and the slower one drops its copy (the two are
byte-identical: gen is deterministic).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from . import GenError, _flag, _run, find_gen
from .metrics import CHAT_TURNS_FILE

__all__ = [
    "Recipe",
    "cache_dir",
    "hf_hub_dirs",
    "prepare",
    "recipe",
    "resolve_tokenizer",
]

logger = logging.getLogger("needlework")

# gen's built-in tokenizers (`gen --help`: --tokenizer): names, not files.
BUILTIN_TOKENIZERS = ("o200k", "o200k_base", "cl100k", "cl100k_base", "gpt2", "r50k", "r50k_base", "words", "chars")

# The recipe options a harness may set (task metadata, --metadata, -T), as gen's flags by
# name; anything else in the harness's metadata (model arguments, lm-eval's own keys) is not
# the dataset's business and is ignored. `gen_options` (a mapping) passes any other flag.
OPTIONS = ("len", "seed", "depths", "samples", "variant", "system")

# Files a recipe reads besides the tokenizer and template: their bytes go into the hash.
FILE_OPTIONS = ("haystack", "qa_data", "qa2_data", "data", "seed_file")

# Folders in progress: `.<key>.part-<pid>-<random>` beside the finished `<key>`.
PART = ".part-"

# Inside a recipe's folder: the dataset, the recipe, and the rendered chat (chat templates).
DATASET = "dataset"
RECORD = "first_use.json"


def _say(message: str) -> None:
    """One line for the harness's log: through logging when INFO reaches a handler, else on
    stderr (lm-eval and inspect_ai leave INFO of other loggers unshown by default)."""
    if logger.isEnabledFor(logging.INFO) and logger.hasHandlers():
        logger.info(message)
    else:
        print(message, file=sys.stderr, flush=True)


def cache_dir() -> Path:
    """``$NEEDLEWORK_CACHE``, else ``$XDG_CACHE_HOME/needlework``, else ``~/.cache/needlework``."""
    env = os.environ.get("NEEDLEWORK_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "needlework" if xdg else Path.home() / ".cache" / "needlework"


def hf_hub_dirs() -> List[Path]:
    """The Hugging Face hub caches to look in, as huggingface_hub orders them: ``HF_HUB_CACHE``,
    else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub`` (XDG_CACHE_HOME honoured)."""
    if os.environ.get("HF_HUB_CACHE"):
        return [Path(os.environ["HF_HUB_CACHE"])]
    if os.environ.get("HF_HOME"):
        return [Path(os.environ["HF_HOME"]) / "hub"]
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return [base / "huggingface" / "hub"]


def _hub_snapshot(repo: str, revision: Optional[str]) -> Optional[Path]:
    """The snapshot folder of ``repo`` (``org/name``) in the local hub cache, offline: the one
    ``refs/<revision>`` (default ``main``) names, a snapshot named ``revision`` itself, or the
    only snapshot there is; None when the cache has none. Several snapshots and no ref to pick
    one is an error naming them (choosing by date would make the recipe depend on the clock)."""
    folder = "models--" + repo.replace("/", "--")
    for hub in hf_hub_dirs():
        root = hub / folder
        snaps = root / "snapshots"
        if not snaps.is_dir():
            continue
        ref = root / "refs" / (revision or "main")
        if ref.is_file():
            commit = ref.read_text(encoding="utf-8").strip()
            if (snaps / commit).is_dir():
                return snaps / commit
        if revision and (snaps / revision).is_dir():
            return snaps / revision
        found = sorted(p for p in snaps.iterdir() if p.is_dir())
        if len(found) == 1:
            return found[0]
        if found:
            raise ValueError(
                f"needlework: {root} has {len(found)} snapshots and no refs/{revision or 'main'}: "
                f"pass revision=<commit> or tokenizer=<path> (snapshots: {', '.join(p.name for p in found)})"
            )
    return None


def _model_dir(value: str, revision: Optional[str]) -> Optional[Path]:
    """A model reference as a local folder: the folder itself, or its hub-cache snapshot."""
    p = Path(value).expanduser()
    if p.is_dir():
        return p
    if "/" in value and not p.exists() and value.count("/") == 1 and not value.startswith((".", "/")):
        return _hub_snapshot(value, revision)
    return None


def resolve_tokenizer(
    tokenizer: Optional[str] = None,
    pretrained: Optional[str] = None,
    revision: Optional[str] = None,
) -> Tuple[str, Optional[Path]]:
    """The tokenizer gen is to count with, found offline, and the model folder it came from.

    ``tokenizer`` wins over ``pretrained``; each may be a ``tokenizer.json`` file, a model
    folder holding one, a hub id (``org/name``) found in the local hub cache, and
    ``tokenizer`` may also be a built-in name (``o200k``, ``cl100k``, ...). With neither,
    gen's default (o200k). Returns (what to pass as ``--tokenizer``, the model folder or
    None); a reference that cannot be found offline raises ValueError naming it.
    """
    for key, value in (("tokenizer", tokenizer), ("pretrained", pretrained)):
        if not value:
            continue
        value = str(value)
        if key == "tokenizer" and value in BUILTIN_TOKENIZERS:
            return value, None
        p = Path(value).expanduser()
        if p.is_file():
            return str(p.resolve()), p.resolve().parent
        folder = _model_dir(value, revision)
        if folder is not None:
            tj = folder / "tokenizer.json"
            if not tj.is_file():
                raise ValueError(
                    f"needlework: {key}={value}: {folder} has no tokenizer.json "
                    f"(gen reads Hugging Face tokenizer.json files; pass tokenizer=<file> or a built-in name: {', '.join(BUILTIN_TOKENIZERS)})"
                )
            return str(tj.resolve()), folder.resolve()
        raise ValueError(
            f"needlework: {key}={value} is not a tokenizer.json file, a model folder, a model in the "
            f"local Hugging Face cache ({', '.join(str(h) for h in hf_hub_dirs())}) or a built-in name "
            f"({', '.join(BUILTIN_TOKENIZERS)})"
        )
    return "o200k", None


def _chat_template(value: Any, model: Optional[Path]) -> Optional[str]:
    """The ``--chat-template`` file: a path as given, or for ``true``/``auto`` the model
    folder's ``chat_template.jinja`` (with its tokenizer_config.json) or its
    ``tokenizer_config.json``; None for false/absent."""
    if value is None or value is False or str(value).lower() in ("", "false", "no", "0", "none"):
        return None
    if value is True or str(value).lower() in ("true", "yes", "1", "auto"):
        if model is None:
            raise ValueError(
                "needlework: chat_template=true needs the model's folder (pretrained=<dir> or a "
                "tokenizer inside a model folder); pass chat_template=<tokenizer_config.json or .jinja>"
            )
        for name in ("chat_template.jinja", "tokenizer_config.json"):
            if (model / name).is_file():
                return str((model / name).resolve())
        raise ValueError(f"needlework: chat_template=true: {model} has no chat_template.jinja or tokenizer_config.json")
    p = Path(str(value)).expanduser()
    if p.is_dir():
        return _chat_template(True, p)
    if not p.is_file():
        raise ValueError(f"needlework: chat_template={value} is not a file (expected a tokenizer_config.json or a .jinja template)")
    return str(p.resolve())


def _file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _normal(value: Any) -> Any:
    """An option value as gen receives it: lists joined with commas, numbers as text; a
    boolean stays one (True is a bare flag, False leaves it out)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple)):
        return ",".join(str(_normal(v)) for v in value)
    return str(value)


@dataclass
class Recipe:
    """Everything that decides a first-use dataset's bytes, and the hash that names it."""

    task: List[str]
    options: Dict[str, Any] = field(default_factory=dict)
    files: Dict[str, str] = field(default_factory=dict)
    gen_version: str = ""

    def digest(self) -> str:
        """sha256 over gen's version, the task, the options and the digests of the files. An
        option naming a file enters by the file's digest, not its path: the same tokenizer
        elsewhere (another copy of the model folder) is the same recipe."""
        options = {k: f"sha256:{self.files[k]}" if k in self.files else v for k, v in self.options.items()}
        body = json.dumps(
            {"gen": self.gen_version, "task": self.task, "options": options, "files": self.files},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def key(self) -> str:
        """The cache folder's name: ``<task>-<first 16 hex digits of the digest>``."""
        return "-".join(self.task).replace(" ", "-") + "-" + self.digest()[:16]

    def argv(self) -> List[str]:
        """gen's arguments for this recipe, without ``--out``."""
        args = list(self.task)
        for name in sorted(self.options):
            args += _flag(name, self.options[name])
        return args


_VERSION: Dict[str, str] = {}


def gen_version() -> str:
    """``gen --version`` of the gen that will run (once per process and binary)."""
    exe = find_gen()
    if exe not in _VERSION:
        _VERSION[exe] = _run(["--version"]).strip()
    return _VERSION[exe]


def recipe(task: str, settings: Mapping[str, Any]) -> Recipe:
    """The recipe for gen task ``task`` (``"niah"``, ``"suite ruler"``) from a harness's settings.

    ``settings`` holds the harness's metadata (lm-eval: task metadata, model_args and
    --metadata merged; inspect_ai: the -T options): the recipe options in :data:`OPTIONS`,
    ``tokenizer`` / ``pretrained`` / ``revision`` for the tokenizer, ``chat_template``, and
    ``gen_options`` (a mapping of any other gen flags, ``{"key_type": "uuids"}``).
    """
    tok, model = resolve_tokenizer(settings.get("tokenizer"), settings.get("pretrained"), settings.get("revision"))
    options: Dict[str, Any] = {}
    for name in OPTIONS:
        if settings.get(name) is not None:
            options[name] = _normal(settings[name])
    extra = settings.get("gen_options") or {}
    if isinstance(extra, str):
        extra = json.loads(extra)
    if not isinstance(extra, Mapping):
        raise ValueError(f"needlework: gen_options={extra!r} is not a mapping of gen flags to values")
    for name, value in extra.items():
        if name in ("out", "tokenizer", "chat_template", "quiet", "force"):
            raise ValueError(f"needlework: gen_options may not set {name} (the cache decides --out; use tokenizer= / chat_template=)")
        options[str(name)] = _normal(value)
    options["tokenizer"] = tok
    files: Dict[str, str] = {}
    if tok not in BUILTIN_TOKENIZERS:
        files["tokenizer"] = _file_digest(tok)
    template = _chat_template(settings.get("chat_template"), model)
    if template is not None:
        options["chat_template"] = template
        files["chat_template"] = _file_digest(template)
        beside = Path(template).parent / "tokenizer_config.json"
        if beside.is_file() and str(beside) != template:
            files["tokenizer_config"] = _file_digest(str(beside))
    for name in FILE_OPTIONS:
        value = options.get(name)
        if isinstance(value, str):
            # A file, or `file:column` (--haystack corpus.jsonl:body); a built-in name has none.
            for path in (value, value.rsplit(":", 1)[0]):
                if Path(path).is_file():
                    files[name] = _file_digest(path)
                    break
    return Recipe(task=task.split(), options=options, files=files, gen_version=gen_version())


# Folders verified by this process: a suite's tasks share one dataset, verified once.
_VERIFIED: Dict[str, bool] = {}


def _verifies(folder: Path, r: Recipe) -> Tuple[bool, str]:
    """Whether ``folder`` is complete and ``gen verify`` passes on its dataset; else why not."""
    data = folder / DATASET
    want = [data / "manifest.json", folder / RECORD]
    if "chat_template" in r.options:
        want.append(folder / CHAT_TURNS_FILE)
    missing = [str(p.relative_to(folder)) for p in want if not p.is_file()]
    if missing:
        return False, f"it has no {', '.join(missing)}"
    try:
        _run(["verify", str(data), "-q"])
    except GenError as e:
        return False, e.message
    return True, ""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _clean_parts(root: Path, key: str) -> None:
    """Remove in-progress folders of ``key`` whose process is gone (a killed first use)."""
    prefix = f".{key}{PART}"
    for p in root.glob(f".{key}{PART}*"):
        pid = p.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)


def _make(r: Recipe, part: Path) -> None:
    """Make the recipe's folder at ``part``: the dataset (``dataset/``, with the inspect_ai
    task ``gen export inspect`` writes into it), the recipe (``first_use.json``) and, with a
    chat template, the rendered chat of each row (``chat_turns.jsonl``, from ``gen export
    lm-eval``). Only the dataset is inside ``dataset/``: ``gen verify`` refuses files its
    manifest does not list."""
    part.mkdir()
    data = part / DATASET
    _run([*r.argv(), "--out", str(data), "-q"])
    _run(["export", "inspect", str(data)])
    if "chat_template" in r.options:
        _run(["export", "lm-eval", str(data)])
        # Only the rendered chat is kept: the exported YAMLs name this temporary folder.
        os.replace(data / "lm_eval" / CHAT_TURNS_FILE, part / CHAT_TURNS_FILE)
        shutil.rmtree(data / "lm_eval")
    (part / RECORD).write_text(
        json.dumps(
            {"gen": r.gen_version, "task": r.task, "options": r.options, "files": r.files, "digest": r.digest()},
            indent=2,
            sort_keys=True,
        )
        + "\n",
        encoding="utf-8",
    )


def prepare(task: str, settings: Mapping[str, Any]) -> Path:
    """The dataset of the recipe ``settings`` describe (``<cache>/<key>/dataset``), made on
    first use.

    An existing folder for the recipe that ``gen verify`` passes is used as it is; one that
    fails is removed (renamed aside first, so no reader sees it half deleted) and made again.
    Logs one line either way.
    """
    r = recipe(task, settings)
    root = cache_dir()
    final = root / r.key()
    what = " ".join(r.task) + " (" + ", ".join(f"{k}={v}" for k, v in sorted(r.options.items())) + ")"
    if _VERIFIED.get(str(final)):
        return final / DATASET
    if final.exists():
        ok, why = _verifies(final, r)
        if ok:
            _say(f"needlework: using cached {what} at {final} (verified)")
            _VERIFIED[str(final)] = True
            return final / DATASET
        bad = root / f".{r.key()}.bad-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        _say(f"needlework: cached {final} fails gen verify ({why}); removing it and generating again")
        try:
            os.rename(final, bad)
            shutil.rmtree(bad, ignore_errors=True)
        except FileNotFoundError:
            pass  # another first use moved it already
    root.mkdir(parents=True, exist_ok=True)
    _clean_parts(root, r.key())
    part = root / f".{r.key()}{PART}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    _say(f"needlework: generating {what} into {final}")
    try:
        _make(r, part)
        try:
            os.rename(part, final)
        except OSError:
            # Another first use of the same recipe finished first: keep its folder (the same
            # bytes), after checking it as any cached folder is checked.
            if not final.is_dir():
                raise
            shutil.rmtree(part, ignore_errors=True)
            ok, why = _verifies(final, r)
            if not ok:
                raise GenError(f"{final} (made by another first use) fails gen verify: {why}", 1)
            _say(f"needlework: another process made {final} first; using it (verified)")
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise
    _VERIFIED[str(final)] = True
    return final / DATASET


def configs(folder: Path) -> List[str]:
    """The dataset's config names, in the manifest's order."""
    with open(folder / "manifest.json", encoding="utf-8") as f:
        return list(json.load(f)["configs"])
