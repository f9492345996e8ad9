"""OpenCompass dataset configs for the needlework dataset `@@NAME@@` (written by `gen export
opencompass`; dataset hash @@HASH@@): one entry per config in `@@VARIABLE@@`.

A run config in this directory (or in one holding a copy of this file) reads them with
`read_base`; several exported datasets can be read side by side, each list has its own name:

    from mmengine.config import read_base

    with read_base():
        from .needlework_@@NAME@@ import @@VARIABLE@@

    datasets = [*@@VARIABLE@@]

Types are dotted paths (strings), so they survive OpenCompass's dump and reload of the config;
the dataset class and the evaluator live in `@@MODULE@@.py` beside this file, which must be on
PYTHONPATH when OpenCompass runs. The model reads each row's `input` immediately followed by its
`answer_prefix`, as the lm-eval export sends it. The evaluator reports accuracy with each row's
own metric, overall and per target length (`accuracy_<length>`), and RULER's partial credit
(`ruler`, `ruler_<length>`) where the rows have one.
"""

@@VARIABLE@@ = [
@@CONFIGS@@
]
