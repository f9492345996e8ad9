"""inspect_ai tasks whose data gen makes on first use (registered as ``needlework/<name>``).

    inspect eval needlework/niah -T len=32k -T seed=7 -T tokenizer=path/to/tokenizer.json \\
        --model <provider/model>

The package's ``inspect_ai`` entry point names this module, so inspect_ai finds the tasks once
the wheel is installed. Each task makes its dataset with :func:`needlework.first_use.prepare`
(generated on first use into needlework's cache, a verified cached copy after) and runs it
with the inspect_ai task that ``gen export inspect`` wrote beside the data, so that samples,
solver and scorers are exactly an exported dataset's.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Dict, Optional

from inspect_ai import Task, task

from .first_use import configs, prepare

__all__ = ["niah", "ruler"]


def _exported_task(folder: Path, config: Optional[str]) -> Task:
    """The Task of ``config`` from the dataset's exported ``inspect/needlework_tasks.py``.

    The exported module's ``@task`` functions are called unwrapped (``__wrapped__``): the Task
    is registered once, under this package's name, not also under the exported file's."""
    names = configs(folder)
    if config is None:
        if len(names) != 1:
            raise ValueError(f"needlework: {folder} has configs {', '.join(names)}: pass -T config=<one of them>")
        config = names[0]
    if config not in names:
        raise ValueError(f"needlework: config {config} is not in {folder}: it has {', '.join(names)}")
    path = folder / "inspect" / "needlework_tasks.py"
    spec = importlib.util.spec_from_file_location(f"needlework_first_use_{folder.name.replace('-', '_')}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"needlework: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    # No __pycache__ in the cache folder: a cached dataset stays as it was made.
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    made: Task = getattr(module, config).__wrapped__()
    return made


def _settings(**given: Any) -> Dict[str, Any]:
    return {k: v for k, v in given.items() if v is not None}


@task
def niah(
    len: Optional[str] = None,
    seed: Optional[int] = None,
    depths: Optional[int] = None,
    samples: Optional[int] = None,
    variant: Optional[str] = None,
    tokenizer: Optional[str] = None,
    chat_template: Optional[str] = None,
    system: Optional[str] = None,
    gen_options: Optional[Dict[str, Any]] = None,
) -> Task:
    """gen's needle in a haystack (``gen niah``), made on first use.

    ``tokenizer``: a tokenizer.json, a model folder holding one, a hub id in the local
    Hugging Face cache or a built-in name (default o200k); ``chat_template``: a
    tokenizer_config.json or .jinja (``true``: the model folder's); ``gen_options``: any
    other gen flags, ``{"key_type": "uuids"}``.
    """
    settings = _settings(
        len=len, seed=seed, depths=depths, samples=samples, variant=variant,
        tokenizer=tokenizer, chat_template=chat_template, system=system, gen_options=gen_options,
    )
    return _exported_task(prepare("niah", settings), None)


@task
def ruler(
    config: str = "niah_single_1",
    len: Optional[str] = None,
    seed: Optional[int] = None,
    samples: Optional[int] = None,
    tokenizer: Optional[str] = None,
    chat_template: Optional[str] = None,
    system: Optional[str] = None,
    gen_options: Optional[Dict[str, Any]] = None,
) -> Task:
    """One config of RULER's suite (``gen suite ruler``; ``config``: niah_single_1 ... fwe).

    The suite is made once for all its configs (its recipe does not include ``config``), so
    each config after the first runs from the cache. Options as for :func:`niah`.
    """
    settings = _settings(
        len=len, seed=seed, samples=samples, tokenizer=tokenizer,
        chat_template=chat_template, system=system, gen_options=gen_options,
    )
    return _exported_task(prepare("suite ruler", settings), config)
