"""The code OpenCompass runs for the needlework dataset `@@NAME@@` (written by `gen export
opencompass`; dataset hash @@HASH@@): a dataset class and an evaluator.

The config beside this file (`needlework_@@NAME@@.py`) names them by dotted path
(`@@MODULE@@.NeedleworkDataset`), which survives OpenCompass's dump and reload of its configs;
OpenCompass imports them the way it imports any custom code, from Python's import path. Put the
directory of this file on PYTHONPATH when running OpenCompass.
"""

import glob
import os

from datasets import Dataset
from opencompass.datasets.base import BaseDataset
from opencompass.openicl.icl_evaluator import BaseEvaluator

@@METRICS@@

# The columns the evaluator needs, then `prompt` (what the model reads) last: OpenCompass fills
# the prompt template column by column, so text already filled in is never searched again.
KEPT_COLUMNS = [
    "id",
    "metric",
    "target",
    "answers",
    "labels",
    "question",
    "answer_prefix",
    "max_new_tokens",
    "target_length",
    "depth_percent",
]


# The rendered chat of each row when the dataset has a chat template (written beside this file).
TURNS = load_chat_turns(os.path.dirname(os.path.abspath(__file__)))


def _prepare(row):
    # What lm-eval sends: the input (inside the dataset's chat template, if it has one)
    # immediately followed by the answer prefix.
    return {
        "prompt": model_text(row, TURNS),
        "input_chars": len(row["input"]),
    }


class NeedleworkDataset(BaseDataset):
    """Rows of one needlework config: a Parquet file, or the shards of `split` in a directory."""

    @staticmethod
    def load(path, split="test", **kwargs):
        if os.path.isdir(path):
            files = sorted(glob.glob(os.path.join(glob.escape(path), f"{split}-*.parquet")))
        else:
            files = [path]
        rows = Dataset.from_parquet(files)
        dropped = [c for c in rows.column_names if c not in KEPT_COLUMNS]
        rows = rows.map(_prepare, remove_columns=dropped)
        return rows.select_columns(KEPT_COLUMNS + ["input_chars", "prompt"])


class NeedleworkEvaluator(BaseEvaluator):
    """Accuracy with each row's own metric, overall and per target length, and RULER's partial
    credit (`ruler`, the fraction of gold items present) for rows whose metric has one; all in
    percent."""

    def score(self, predictions, references, test_set):
        if len(predictions) != len(references) or len(predictions) != len(test_set):
            return {"error": "predictions, references and test set differ in length"}
        correct, credit = {}, {}
        details = []
        for i, prediction in enumerate(predictions):
            row = test_set[i]
            length = row["target_length"]
            ok = score_row(row, prediction)
            correct.setdefault(length, []).append(ok)
            partial = row_ruler_credit(row, prediction)
            if partial is not None:
                credit.setdefault(length, []).append(partial)
            details.append({"pred": prediction, "answer": references[i], "correct": ok == 1.0,
                            "ruler": partial})

        def percent(values):
            return 100.0 * sum(values) / len(values) if values else 0.0

        out = {"accuracy": percent([v for vs in correct.values() for v in vs])}
        for length in sorted(correct):
            out[f"accuracy_{length}"] = percent(correct[length])
        if credit:
            out["ruler"] = percent([v for vs in credit.values() for v in vs])
            for length in sorted(credit):
                out[f"ruler_{length}"] = percent(credit[length])
        out["details"] = details
        return out
