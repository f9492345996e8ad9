"""Check graphwalks datasets from their text alone, with the reference tools.

  check_graphwalks.py rows DIR [DIR ...] [--tokenizer-file tokenizer.json] [--min-rows N]
      For every row: read the edge list (the lines between `<graph>` and `</graph>`) and the
      question from `input` alone; recompute the answer by a plain breadth-first search (nodes
      at exactly the depth, the start left out) or a scan (sources of edges into the node, the
      node itself left out); the answers must equal it, one id per item, sorted, and `target`
      must be `Final Answer: [...]` of them. The node names must be exactly
      hashlib.md5(str(k)).hexdigest()[:10] for k = 0..V-1. `length` and `prompt_tokens` must equal
      tiktoken's count (encode_ordinary) or the tokenizer.json's (tokenizers, no special
      tokens); `max_new_tokens` the target's count plus 16; prompt_tokens + max_new_tokens must
      fit target_length and fall short of it by less than `next_edge_tokens` (the edge line that
      did not fit); the needle offsets must be the token offsets of the first and last line the
      answer rests on (bfs: on a shortest path within the depth; parents: into the node).
      Grouped lists keep each source's lines together. Rows are counted per problem and edge
      order; every DIR's rows together must be at least N (default 300).
  check_graphwalks.py predictions DIR PREFIX
      Write PREFIX-{gold,empty,partial,malformed,reordered}.jsonl: predictions for every row.
  check_graphwalks.py same-f1 DIR PRED.jsonl ROWS.json [PRED.jsonl ROWS.json ...]
      Every row's `score` in gen score's rows.json must equal lm-eval's graphwalks F1 restated
      below (strict: the last line), except where gold and prediction are both empty, which
      lm-eval scores 0 and needlework 1 (docs/graphwalks.md); the exports' Python twin
      (python/needlework/metrics.py) must give the same, strict and flexible.
"""
import hashlib
import importlib.util
import json
import os
import re
import sys
from collections import Counter, deque

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_dataset import fail, rows, tiktoken_encoding  # noqa: E402


def md5_id(k):
    return hashlib.md5(str(k).encode()).hexdigest()[:10]


LINE = re.compile(r"^([0-9a-f]{10}) -> ([0-9a-f]{10})$")
BFS_Q = re.compile(r"Operation: perform a BFS from node ([0-9a-f]{10}) and name every node at a distance of exactly (\d+) from it\.")
PARENTS_Q = re.compile(r"Operation: name every parent of node ([0-9a-f]{10})\.")


def read(text):
    """(edges, line start offsets in characters, problem, start, depth) from the prompt."""
    open_tag, close_tag = "<graph>\n", "\n</graph>"
    a = text.index(open_tag) + len(open_tag)
    b = text.index(close_tag, a)
    edges, starts, at = [], [], a
    for line in text[a:b].split("\n"):
        m = LINE.match(line)
        if not m:
            fail(f"not an edge line: {line!r}")
        edges.append((m.group(1), m.group(2)))
        starts.append(at)
        at += len(line) + 1
    tail = text[b:]
    m = BFS_Q.search(tail)
    if m:
        return edges, starts, "bfs", m.group(1), int(m.group(2))
    m = PARENTS_Q.search(tail)
    if not m:
        fail(f"no question after the graph: {tail[:200]!r}")
    return edges, starts, "parents", m.group(1), None


def distances(edges, start):
    out = {}
    for s, t in edges:
        out.setdefault(s, []).append(t)
    dist = {start: 0}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for v in out.get(u, ()):
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def check_rows(dirs, tokenizer_file=None, min_rows=300):
    hf = None
    if tokenizer_file:
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(tokenizer_file)
        hf.no_truncation()
        hf.no_padding()
    encoders = {}
    seen = Counter()
    for directory in dirs:
        for manifest, row in rows(directory):
            if row["task"] != "graphwalks":
                continue
            rid, text, params = row["id"], row["input"], json.loads(row["params"])
            edges, starts, problem, start, depth = read(text)
            # The answer, from the text alone.
            if problem == "bfs":
                dist = distances(edges, start)
                want = sorted(v for v, d in dist.items() if d == depth)
                relevant = [i for i, (s, t) in enumerate(edges)
                            if s in dist and dist[s] < depth and dist.get(t) == dist[s] + 1]
                lo, hi = params["bfs_depth"]
                if not lo <= depth <= hi:
                    fail(f"{rid}: depth {depth} outside {lo}..{hi}")
            else:
                want = sorted({s for s, t in edges if t == start and s != start})
                relevant = [i for i, (s, t) in enumerate(edges) if t == start and s != start]
            if row["answers"] != want:
                fail(f"{rid}: answers {row['answers'][:5]}... but a plain search gives {want[:5]}... ({len(want)})")
            if row["target"] != "Final Answer: [" + ", ".join(want) + "]":
                fail(f"{rid}: target {row['target'][:80]!r}")
            lo, hi = params["answer_size"]
            if not lo <= len(want) <= hi:
                fail(f"{rid}: answer of {len(want)} nodes outside {lo}..{hi}")
            if row["metric"] != "f1":
                fail(f"{rid}: metric {row['metric']}")
            # Names: md5(str(k))[:10] for k = 0..V-1, each on an edge.
            names = {x for e in edges for x in e}
            if names != {md5_id(k) for k in range(len(names))}:
                fail(f"{rid}: the {len(names)} node names are not md5(str(k))[:10] for k < {len(names)}")
            if start not in names:
                fail(f"{rid}: start {start} not in the graph")
            if params["nodes"] != len(names) or params["edges"] != len(edges):
                fail(f"{rid}: params say {params['nodes']} nodes, {params['edges']} edges")
            if params["relevant_edges"] != len(relevant):
                fail(f"{rid}: {params['relevant_edges']} relevant edges recorded, {len(relevant)} found")
            # Counts by the reference tokenizer.
            tok = row["tokenizer"]
            if tok.startswith("hf:"):
                if hf is None:
                    fail("a tokenizer.json dataset: pass --tokenizer-file")
                enc = hf.encode(text, add_special_tokens=False)
                count = len(enc.ids)
                target_count = len(hf.encode(row["target"], add_special_tokens=False).ids)

                def offset(char, enc=enc):
                    return sum(1 for s, e in enc.offsets if max(e, s + 1) <= char)
            else:
                if tok not in encoders:
                    encoders[tok] = tiktoken_encoding(tok)
                e = encoders[tok]
                count = len(e.encode_ordinary(text))
                target_count = len(e.encode_ordinary(row["target"]))

                def offset(char, e=e, text=text):
                    return len(e.encode_ordinary(text[:char]))
            if count != row["length"] or count != row["prompt_tokens"]:
                fail(f"{rid}: length {row['length']}, prompt_tokens {row['prompt_tokens']}, reference {count} ({tok})")
            if row["max_new_tokens"] != target_count + 16:
                fail(f"{rid}: max_new_tokens {row['max_new_tokens']} for a target of {target_count} tokens")
            short = row["target_length"] - count - row["max_new_tokens"]
            nxt = params["next_edge_tokens"]
            if short < 0 or nxt is None or short >= nxt:
                fail(f"{rid}: {short} tokens short of {row['target_length']}, the next edge line took {nxt}")
            marks = [relevant[0], relevant[-1]] if relevant else []
            want_offsets = [offset(starts[i]) for i in marks]
            if row["needle_offsets"] != want_offsets:
                fail(f"{rid}: needle offsets {row['needle_offsets']} but the first and last relevant lines start at {want_offsets}")
            order = params["edge_order"]
            sources = [s for s, _ in edges]
            runs = [s for i, s in enumerate(sources) if i == 0 or sources[i - 1] != s]
            if order == "grouped" and len(runs) != len(set(runs)):
                fail(f"{rid}: a grouped list splits a node's out-edges")
            if order == "shuffled" and len(edges) > 200 and len(runs) == len(set(runs)):
                fail(f"{rid}: a shuffled list of {len(edges)} lines keeps every node's out-edges together")
            seen[(problem, order)] += 1
    total = sum(seen.values())
    if total < min_rows:
        fail(f"only {total} graphwalks rows checked (want {min_rows})")
    print(f"ok: {total} graphwalks rows recomputed from their text by a plain search, "
          f"ids md5(str(k))[:10], lengths exact, fill short by less than the next edge line, "
          f"offsets of the relevant lines: {dict(sorted(seen.items()))}")


# --- lm-eval's graphwalks scoring (lm_eval/tasks/graphwalks/utils.py), restated -------------
# A line parses when `Final Answer:`, optional whitespace and `[` are followed (greedily) by a
# `]` on that line; the list is what lies between, empty when blank, else split at commas,
# blank pieces dropped, each stripped of whitespace then of quotes. Strict reads only the last
# line of the response with its trailing newlines removed (and needs `Final Answer:` in it);
# flexible takes the lowest line that parses. No parse is the empty list. F1 over sets, 0 when
# precision + recall is 0 (so an empty answer to an empty gold set scores 0).
_LM = re.compile(r"Final Answer:\s*\[(.*)\]")


def _lm_list(line):
    m = _LM.search(line)
    if m is None:
        return None
    inner = m.group(1)
    return [] if not inner.strip() else [p.strip().strip("'\"") for p in inner.split(",") if p.strip()]


def lm_strict(response):
    last = response.rstrip("\n").split("\n")[-1]
    return (_lm_list(last) or []) if "Final Answer:" in last else []


def lm_flexible(response):
    for line in reversed(response.rstrip("\n").split("\n")):
        got = _lm_list(line)
        if got is not None:
            return got
    return []


def lm_f1(predicted, gold):
    p, g = set(predicted), set(gold)
    both = len(p & g)
    recall = both / len(g) if g else 0.0
    precision = both / len(p) if p else 0.0
    return 2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0


def ours(predicted, gold, lm):
    """Our rule: lm-eval's, but an empty answer to an empty gold set scores 1."""
    return 1.0 if not set(predicted) and not gold else lm


def write_predictions(directory, prefix):
    kinds = ["gold", "empty", "partial", "malformed", "reordered"]
    outs = {k: open(f"{prefix}-{k}.jsonl", "w") for k in kinds}
    for _, row in rows(directory):
        a = row["answers"]
        n = int(hashlib.md5(row["id"].encode()).hexdigest(), 16)
        wrong = md5_id(10_000_000 + n % 1000)
        preds = {
            "gold": "I followed the edges.\nFinal Answer: [" + ", ".join(a) + "]",
            "empty": "",
            "partial": "Final Answer: [" + ", ".join(a[: len(a) // 2] + [wrong]) + "]",
            "malformed": [
                "Final Answer: " + ", ".join(a),
                "final answer: [" + ", ".join(a) + "]",
                "Final Answer: [" + ", ".join(a) + "]\nThat is all.",
                "Final Answer: [" + ", ".join(a),
                "Final Answer: [" + ", ".join(a) + "] and [" + wrong + "]",
            ][n % 5],
            "reordered": "Final Answer:  [ " + " ,".join(f"'{x}'" for x in reversed(a + a[:1])) + " ]\n\n",
        }
        for k in kinds:
            outs[k].write(json.dumps({"id": row["id"], "prediction": preds[k]}) + "\n")
    for f in outs.values():
        f.close()
    print(f"ok: wrote {', '.join(kinds)} predictions for {directory}")


def load_twin():
    path = os.path.join(HERE, "..", "..", "python", "needlework", "metrics.py")
    spec = importlib.util.spec_from_file_location("needlework_metrics", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def same_f1(directory, pairs):
    twin = load_twin()
    data = {row["id"]: row for _, row in rows(directory)}
    total, lm_differs = 0, 0
    for predictions, rows_json in pairs:
        preds = {}
        for line in open(predictions):
            v = json.loads(line)
            preds[v["id"]] = v["prediction"]
        verdicts = {v["id"]: v for v in json.load(open(rows_json))}
        for rid, row in data.items():
            gold = row["answers"]
            pred = preds.get(rid, "")
            lm = lm_f1(lm_strict(pred), gold)
            want = ours(lm_strict(pred), gold, lm)
            lm_differs += want != lm
            got = verdicts[rid]["score"]
            if abs(got - want) > 1e-12:
                fail(f"{rid} ({os.path.basename(predictions)}): gen score {got}, lm-eval's rule {lm} (ours {want}) on {pred[:120]!r}")
            if twin.graph_f1(pred, gold) != got:
                fail(f"{rid}: the exports' graph_f1 {twin.graph_f1(pred, gold)} but gen score {got}")
            flex = lm_f1(lm_flexible(pred), gold)
            if twin.graph_flexible_f1(pred, gold) != ours(lm_flexible(pred), gold, flex):
                fail(f"{rid}: the exports' graph_flexible_f1 differs from lm-eval's flexible rule on {pred[:120]!r}")
            total += 1
    print(f"ok: gen score's F1 equals lm-eval's graphwalks rule on {total} predictions "
          f"({lm_differs} with empty gold and empty answer, 1 here and 0 in lm-eval); the exports' twins agree")


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        sys.exit(2)
    cmd, rest = args[0], args[1:]
    if cmd == "rows":
        tokenizer_file, min_rows, dirs = None, 300, []
        i = 0
        while i < len(rest):
            if rest[i] == "--tokenizer-file":
                tokenizer_file = rest[i + 1]
                i += 2
            elif rest[i] == "--min-rows":
                min_rows = int(rest[i + 1])
                i += 2
            else:
                dirs.append(rest[i])
                i += 1
        check_rows(dirs, tokenizer_file, min_rows)
    elif cmd == "predictions":
        write_predictions(rest[0], rest[1])
    elif cmd == "same-f1":
        same_f1(rest[0], list(zip(rest[1::2], rest[2::2])))
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
