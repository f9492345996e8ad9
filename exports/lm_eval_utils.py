

# --- lm-evaluation-harness hooks (written by `gen export lm-eval`) ---------------------------


_TURNS = []


def doc_to_text(doc):
    """The row's rendered chat (the dataset has a chat template; `gen_prefix` then adds the
    answer prefix, so lm-eval sends the text `prompt_tokens` counts). Run without
    --apply_chat_template: the template is already applied."""
    if not _TURNS:
        _TURNS.append(load_chat_turns(_os.path.dirname(_os.path.abspath(__file__))))
    return turns_text(doc, _TURNS[0])


def process_results(doc, results):
    """Score one row with its own metric, under `score` and under its length (RULER reports
    accuracy per length); rows with RULER's partial credit (metric all or any) report it under
    `ruler` and `ruler_<length>`. A row reports only its own keys: each metric is the mean over
    the rows that report it."""
    prediction = results[0] if results else ""
    out = row_scores(doc, prediction)
    length = str(doc["target_length"])
    out[length] = out["score"]
    if "ruler" in out:
        out["ruler_" + length] = out["ruler"]
    return out


def process_length_results(doc, results):
    """`process_results` for the per-length tasks: `score`, and `ruler` where the row has it."""
    out = process_results(doc, results)
    return {k: v for k, v in out.items() if k in ("score", "ruler")}


def _only_length(dataset, length):
    return dataset.filter(lambda doc: doc["target_length"] == length)
@@LENGTH_FILTERS@@
