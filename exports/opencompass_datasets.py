"""OpenCompass dataset configs for a needlework dataset (written by `gen export opencompass`;
dataset hash @@HASH@@). Import `needlework_datasets` into an OpenCompass run config:

    from mmengine.config import read_base
    with read_base():
        from .needlework_datasets import needlework_datasets
    datasets = needlework_datasets

Each config reads one absolute path; `answers` is the list-valued output column, and the
evaluator applies each row's own metric.
"""

import glob
import os

from datasets import Dataset
from opencompass.datasets.base import BaseDataset
from opencompass.openicl.icl_evaluator import BaseEvaluator
from opencompass.openicl.icl_inferencer import GenInferencer
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import ZeroRetriever

@@METRICS@@


class NeedleworkDataset(BaseDataset):
    """Rows of one needlework config: a Parquet file, or a directory of Parquet shards."""

    @staticmethod
    def load(path, **kwargs):
        files = sorted(glob.glob(os.path.join(path, "*.parquet"))) if os.path.isdir(path) else [path]
        return Dataset.from_parquet(files)


class NeedleworkEvaluator(BaseEvaluator):
    """Accuracy with each row's own metric (from the test set); `all` over the answers
    when the test set is not passed."""

    def score(self, predictions, references, test_set=None):
        if len(predictions) != len(references):
            return {"error": "predictions and references differ in length"}
        correct = 0.0
        for i, (prediction, answers) in enumerate(zip(predictions, references)):
            if test_set is not None:
                correct += score_row(test_set[i], prediction)
            else:
                correct += 1.0 if is_correct("all", prediction, "", answers) else 0.0
        return {"accuracy": 100.0 * correct / max(len(predictions), 1)}


def _config(abbr, path, max_out_len):
    return dict(
        abbr=abbr,
        type=NeedleworkDataset,
        path=path,
        reader_cfg=dict(input_columns=["input"], output_column="answers"),
        infer_cfg=dict(
            prompt_template=dict(type=PromptTemplate, template=dict(round=[dict(role="HUMAN", prompt="{input}")])),
            retriever=dict(type=ZeroRetriever),
            inferencer=dict(type=GenInferencer, max_out_len=max_out_len),
        ),
        eval_cfg=dict(evaluator=dict(type=NeedleworkEvaluator), pred_role="BOT"),
    )


needlework_datasets = [
@@CONFIGS@@
]
