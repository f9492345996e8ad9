"""inspect_ai tasks for the needlework dataset in the parent directory (written by `gen export
inspect`; dataset hash @@HASH@@).

    inspect eval <this file>@<config> --model <provider/model>

Each row is scored with its own metric (see `score`: 1 or 0, or graded between); accuracy is also reported per
`target_length`. Configs whose rows have RULER's partial credit (metric all or any) also report
it (`ruler_partial`: the fraction of gold items present, as RULER's string_match_all), overall
and per `target_length`.
"""

import os

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, hf_dataset
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import (
    SampleScore,
    Score,
    Target,
    accuracy,
    grouped,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState, generate

DATASET_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The system message the dataset was made with (`--system`), sent as a system turn; None when
# it has none. inspect_ai's model providers apply the model's own chat template to the turns.
SYSTEM = @@SYSTEM@@

@@METRICS@@


def _turns(text):
    if SYSTEM is None:
        return text
    return [ChatMessageSystem(content=SYSTEM), ChatMessageUser(content=text)]


def record_to_sample(row):
    return Sample(
        id=row["id"],
        # What lm-eval sends too: the input immediately followed by the answer prefix (as the
        # user turn, after the system turn when the dataset has one).
        input=_turns(row["input"] + (row["answer_prefix"] or "")),
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
    """Applies the row's own metric (right or wrong, or graded between 0 and 1)."""

    async def score(state: TaskState, target: Target) -> Score:
        m = state.metadata
        completion = state.output.completion
        return Score(value=score_row(m, completion), answer=completion)

    return score


@metric
def ruler_mean():
    """Mean partial credit over the samples that have one (the others score -1)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [s.score.as_float() for s in scores]
        values = [v for v in values if v >= 0]
        return sum(values) / len(values) if values else 0.0

    return compute


@scorer(metrics=[ruler_mean(), grouped(ruler_mean(), "target_length")])
def ruler_partial():
    """RULER's partial credit: the fraction of gold items present in the answer."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        credit = row_ruler_credit(state.metadata, completion)
        return Score(value=-1.0 if credit is None else credit, answer=completion)

    return score


def needlework_task(config, split, max_tokens, ruler=False):
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
        scorer=[needlework_metric(), ruler_partial()] if ruler else needlework_metric(),
        config=GenerateConfig(max_tokens=max_tokens, temperature=0.0),
    )
@@TASKS@@
