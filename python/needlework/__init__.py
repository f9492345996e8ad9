"""Python access to needlework's ``gen``: make, load, verify, score and export datasets.

The functions run the ``gen`` binary that the wheel installs beside this package (or the one
named by ``NEEDLEWORK_GEN``, or ``gen`` on ``PATH``) through :mod:`subprocess`, so a dataset
made from Python is byte-identical to one made on the command line.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "niah"
>>> generate("niah", out=out, len="4k", depths=2, seed=7, quiet=True) == out
True
>>> verify(out)
>>> table = load(out, "niah_single")
>>> len(table["test"]) if isinstance(table, dict) else table.num_rows
2
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Union

__all__ = ["GenError", "find_gen", "generate", "load", "verify", "score", "export"]

PathLike = Union[str, "os.PathLike[str]"]


class GenError(RuntimeError):
    """``gen`` refused or failed: ``message`` is its one-line stderr, ``code`` its exit code.

    >>> try:
    ...     generate("niah", len="4q")
    ... except GenError as e:
    ...     (e.code, "4q" in e.message)
    (2, True)
    """

    def __init__(self, message: str, code: int, args: Iterable[str] = ()) -> None:
        super().__init__(f"gen exited {code}: {message}")
        self.message = message
        self.code = code
        self.argv = list(args)


def find_gen() -> str:
    """The ``gen`` to run: ``$NEEDLEWORK_GEN``, else the wheel's scripts dir, else ``PATH``.

    The scripts directory comes first so that a ``gen`` elsewhere on ``PATH`` (an older cargo
    build, say) never shadows the one installed with this package.
    """
    env = os.environ.get("NEEDLEWORK_GEN")
    if env:
        return env
    exe = "gen.exe" if os.name == "nt" else "gen"
    candidates = [Path(sysconfig.get_path("scripts")) / exe, Path(sys.executable).parent / exe]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("gen")
    if found:
        return found
    raise GenError("gen not found: install the needlework wheel or set NEEDLEWORK_GEN", 127)


def _flag(name: str, value: Any) -> list:
    """One keyword option as gen's flag: ``len="32k"`` -> ``--len 32k``; True -> bare flag."""
    flag = "--" + name.rstrip("_").replace("_", "-")
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    return [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]


def _run(args: list) -> str:
    """Run gen with ``args``; its stdout, or :class:`GenError` with its last stderr line."""
    argv = [find_gen(), *args]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        # gen's refusals are on stderr; `gen verify` reports mismatches on stdout.
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        lines = lines or [ln for ln in proc.stdout.splitlines() if ln.strip()]
        msg = lines[-1] if lines else f"gen exited {proc.returncode}"
        if msg.startswith("error: "):
            msg = msg[len("error: "):]
        raise GenError(msg, proc.returncode, argv)
    return proc.stdout


def generate(task: str, out: Optional[PathLike] = None, **options: Any) -> Path:
    """Make a dataset of ``task`` (or ``"suite"``) and return its directory.

    Options are gen's flags by name: ``len="32k"``, ``depths=10``, ``seed=7``; ``_`` stands
    for ``-`` (``key_type="uuids"``); ``True`` gives a bare flag (``quiet=True``); a list is
    joined with commas (``len=["4k", "8k"]``). Without ``out`` gen's default folder is used
    (``datasets/<task>-s<seed>``), read back from its manifest.
    """
    args = [task]
    for name, value in options.items():
        args += _flag(name, value)
    if out is not None:
        args += ["--out", os.fspath(out)]
        _run(args)
        return Path(out)
    seed = options.get("seed", 0)
    _run(args)
    return Path("datasets") / f"{task}-s{seed}"


def _manifest(path: PathLike) -> Dict[str, Any]:
    with open(Path(path) / "manifest.json", encoding="utf-8") as f:
        return json.load(f)


def load(path: PathLike, config: Optional[str] = None) -> Any:
    """Read a dataset: its configs, each split and its shards, from the manifest.

    With ``datasets`` installed: a ``DatasetDict`` of splits for ``config`` (or a dict of
    them per config when ``config`` is None). Without it: a ``pyarrow.Table`` per split,
    shards concatenated in order, the same nesting. A single-split config without
    ``datasets`` gives the table itself.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(path)
    man = _manifest(root)
    configs = man["configs"]
    if config is not None and config not in configs:
        raise ValueError(f"config {config!r} is not in {root}: it has {', '.join(configs)}")
    wanted = [config] if config is not None else list(configs)
    files: Dict[str, Dict[str, list]] = {c: {} for c in wanted}
    for f in man["files"]:
        if f["config"] in files:
            files[f["config"]].setdefault(f["split"], []).append(str(root / f["path"]))
    try:
        import datasets  # type: ignore
    except ImportError:
        datasets = None
    result: Dict[str, Any] = {}
    for c, splits in files.items():
        if datasets is not None:
            result[c] = datasets.load_dataset("parquet", data_files=splits)
        else:
            tables = {s: pa.concat_tables([pq.read_table(p) for p in ps]) for s, ps in splits.items()}
            result[c] = next(iter(tables.values())) if len(tables) == 1 and config else tables
    return result[config] if config is not None else result


def verify(path: PathLike, **options: Any) -> None:
    """Regenerate every row from the manifest and compare; :class:`GenError` if any differ."""
    args = ["verify", os.fspath(path), "-q"]
    for name, value in options.items():
        args += _flag(name, value)
    _run(args)


def score(path: PathLike, predictions: Union[PathLike, Iterable[PathLike]], out: Optional[PathLike] = None, **options: Any) -> Dict[str, Any]:
    """Score predictions files (JSON Lines of ``{"id", "prediction"}``); scores.json as a dict."""
    preds = [predictions] if isinstance(predictions, (str, os.PathLike)) else list(predictions)
    args = ["score", os.fspath(path), "-q"]
    for p in preds:
        args += ["--predictions", os.fspath(p)]
    dest = Path(out) if out is not None else Path(path) / "scores"
    args += ["--out", os.fspath(dest)]
    for name, value in options.items():
        args += _flag(name, value)
    _run(args)
    with open(dest / "scores.json", encoding="utf-8") as f:
        return json.load(f)


def export(path: PathLike, harness: str, **options: Any) -> Path:
    """Write a harness's files (lm-eval, inspect, opencompass, ruler) into the dataset.

    Returns the folder gen wrote (``<dir>/lm_eval`` for lm-eval, ``<dir>/<harness>`` else).
    """
    args = ["export", harness, os.fspath(path)]
    for name, value in options.items():
        args += _flag(name, value)
    _run(args)
    sub = "lm_eval" if harness == "lm-eval" else harness
    return Path(path) / sub
