"""lm-evaluation-harness tasks whose data gen makes on first use, with the model's tokenizer.

The task YAMLs are in :data:`TASKS_DIR` (``python -m needlework.lm_eval`` prints it)::

    lm_eval --model hf --model_args pretrained=Qwen/Qwen3-0.6B \\
        --include_path "$(python -m needlework.lm_eval)" --tasks needlework_niah \\
        --metadata '{"len": "32k", "seed": 7}'

Each task's ``custom_dataset`` is :func:`custom_dataset`: lm-eval calls it with the task's
metadata, the model arguments and ``--metadata`` merged into one mapping (and the task's
``dataset_kwargs``, which name the gen task and config), and it returns the rows of a dataset
made by :func:`needlework.first_use.prepare` — generated on first use, a verified cached copy
after. Rows are scored by :func:`needlework.metrics.row_scores`, the code every ``gen export``
carries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from .. import load
from ..first_use import configs, prepare
from ..metrics import load_chat_turns, row_scores, turns_text

__all__ = ["TASKS_DIR", "custom_dataset", "doc_to_text", "process_results"]

TASKS_DIR = Path(__file__).resolve().parent / "tasks"


def custom_dataset(**kwargs: Any) -> Dict[str, Any]:
    """The ``test`` split of the dataset the run's settings describe, for lm-eval.

    ``needlework_task`` (``niah``, ``suite ruler``) and ``needlework_config`` come from the
    task's ``dataset_kwargs``; the recipe options from the merged metadata (see
    :func:`needlework.first_use.recipe`). With a chat template each row also gets ``prompt``,
    its rendered chat, which :func:`doc_to_text` sends.
    """
    task = kwargs.pop("needlework_task")
    config = kwargs.pop("needlework_config", None)
    folder = prepare(task, kwargs)
    names = configs(folder)
    if config is None:
        if len(names) != 1:
            raise ValueError(f"needlework: {folder} has configs {', '.join(names)}: the task must name one (needlework_config)")
        config = names[0]
    elif config not in names:
        raise ValueError(f"needlework: config {config} is not in {folder}: it has {', '.join(names)}")
    splits = load(folder, config)
    split = "test" if "test" in splits else next(iter(splits))
    rows = splits[split]
    turns = load_chat_turns(str(folder.parent))
    if turns is not None:
        texts = [turns_text(row, turns) for row in rows.select_columns(["id", "input"])]
        rows = rows.add_column("prompt", texts)
    return {"test": rows}


def doc_to_text(doc: Dict[str, Any]) -> str:
    """What the model reads before the answer prefix (lm-eval's ``gen_prefix`` adds it): the
    row's rendered chat when the dataset has a chat template, else its input. Run without
    ``--apply_chat_template`` when the data has one: the template is already applied."""
    return doc["prompt"] if doc.get("prompt") is not None else doc["input"]


def process_results(doc: Dict[str, Any], results: List[str]) -> Dict[str, float]:
    """``score`` (the row's own metric) and, for rows with RULER's partial credit, ``ruler``.
    Per-length figures come from ``gen score`` on the logged samples (docs/python.md)."""
    return row_scores(doc, results[0] if results else "")
