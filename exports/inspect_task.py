"""inspect_ai tasks for the needlework dataset in the parent directory (written by `gen export
inspect`; dataset hash @@HASH@@).

    inspect eval <this file>@<config> --model <provider/model>

Each row is scored with its own metric (see `is_correct`); accuracy is also reported per
`target_length`.
"""

import os

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, hf_dataset
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, grouped, scorer, stderr
from inspect_ai.solver import TaskState, generate

DATASET_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

@@METRICS@@


def record_to_sample(row):
    return Sample(
        id=row["id"],
        input=row["input"],
        target=row["target"],
        metadata={
            "metric": row["metric"],
            "target": row["target"],
            "answers": list(row["answers"]),
            "labels": list(row["labels"]),
            "question": row["question"],
            "answer_prefix": row["answer_prefix"],
            "max_new_tokens": row["max_new_tokens"],
            "input_chars": len(row["input"]),
            "target_length": row["target_length"],
            "depth_percent": row["depth_percent"],
        },
    )


@scorer(metrics=[accuracy(), stderr(), grouped(accuracy(), "target_length")])
def needlework_metric():
    """Applies the row's own metric: all, any, exact, set or label."""

    async def score(state: TaskState, target: Target) -> Score:
        m = state.metadata
        completion = state.output.completion
        ok = score_row(m, completion) == 1.0
        return Score(value=CORRECT if ok else INCORRECT, answer=completion)

    return score


def needlework_task(config, split, max_tokens):
    dataset = hf_dataset(
        "parquet",
        split=split,
        data_files={split: os.path.join(DATASET_DIR, config, f"{split}-*.parquet")},
        sample_fields=record_to_sample,
        cached=False,
    )
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=needlework_metric(),
        config=GenerateConfig(max_tokens=max_tokens, temperature=0.0),
    )
@@TASKS@@
