

# --- lm-evaluation-harness hooks (written by `gen export lm-eval`) ---------------------------

LENGTHS = @@LENGTHS@@


def process_results(doc, results):
    """Score one row with its own metric; report it under its length (RULER's convention:
    the other lengths get -1, which `aggregate` leaves out) and under `score`."""
    prediction = results[0] if results else ""
    value = score_row(doc, prediction)
    out = {str(n): -1.0 for n in LENGTHS}
    out[str(doc["target_length"])] = value
    out["score"] = value
    return out


def aggregate(values):
    """Mean over the rows of one length; -1 when the dataset has none at that length."""
    kept = [v for v in values if v != -1]
    return sum(kept) / len(kept) if kept else -1
