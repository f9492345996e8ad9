"""Check needlework datasets with the reference tools, offline.

  check_dataset.py lengths DIR [--tokenizer-file tokenizer.json] [--chat-dir DIR] [--gen GEN]
  check_dataset.py lengths-all PARENT [--chat yes|no] [--gen GEN]   (every dataset under PARENT, each with
      its own tokenizer; --chat no skips chat-template datasets, --chat yes checks only them)
      Every row's `length` must equal the reference count of `input`: OpenAI tiktoken for the
      built-in encodings (encode_ordinary), Hugging Face tokenizers for a tokenizer.json
      (encode(text, add_special_tokens=False)). Every `prompt_tokens` must equal the reference
      count of what the model reads: `input` + `answer_prefix`, or with a chat template the
      transformers rendering (apply_chat_template, add_generation_prompt=True) + answer_prefix
      counted with special tokens (--chat-dir holds tokenizer.json and tokenizer_config.json).
      With --gen, `GEN inspect DIR --prompts` must print that model-side text for every row,
      byte for byte.
      prompt_tokens + max_new_tokens must sit within the tolerance below target_length, and
      every needle must start at its recorded token offset.
  check_dataset.py loaders DIR CONFIG
      datasets.load_dataset, pyarrow and duckdb must all read the dataset with the right rows
      and column types.
  check_dataset.py prime-tiktoken
      Place the encoding files in $TIKTOKEN_CACHE_DIR, for tools that count with tiktoken
      (inspect_ai) and would otherwise try to download them.

tiktoken normally downloads its encoding files. Here they come from the tiktoken-rs crate's
sources (found under ~/.cargo/registry), placed in tiktoken's cache; tiktoken still checks their
SHA-256 against OpenAI's published hashes, so they are the genuine files.
"""
import glob
import hashlib
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

TIKTOKEN_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "r50k_base": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
}


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def tiktoken_encoding(name):
    cache = os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(tempfile.gettempdir(), "needlework-tiktoken"))
    os.makedirs(cache, exist_ok=True)
    url = TIKTOKEN_URLS[name]
    target = os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())
    if not os.path.exists(target):
        home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
        found = sorted(glob.glob(os.path.join(home, "registry/src/*/tiktoken-rs-*/assets", f"{name}.tiktoken")))
        if not found:
            fail(f"no {name}.tiktoken under {home}/registry (build the project first)")
        shutil.copyfile(found[-1], target)
    import tiktoken

    return tiktoken.get_encoding(name)


def rows(directory):
    import pyarrow.parquet as pq

    manifest = json.load(open(os.path.join(directory, "manifest.json")))
    for f in manifest["files"]:
        table = pq.read_table(os.path.join(directory, f["path"]))
        for row in table.to_pylist():
            yield manifest, row


def needle_checks(row):
    """For each needle, a predicate on the text that starts at its recorded offset."""
    params = json.loads(row["params"])
    if row["task"] == "niah":
        # Latent needles record their sentences; access-code needles are rebuilt from key and value.
        sentences = params.get("needle_sentences") or [
            f"One of the access codes assigned to {n['key']} is {n['value']}." for n in params["needles"]
        ]
        return [(lambda t, s=s: t.startswith(s)) for s in sentences]
    if row["task"] == "qa":
        return [(lambda t, k=k: t.startswith(f"Document {k}:")) for k in params["gold_documents"]]
    if row["task"] == "vt":
        return [(lambda t, v=v: t.startswith(f"Set the variable {v} to")) for v, _ in params["assignments"]]
    if row["task"] == "arith" and params["op"] == "sum":
        return [(lambda t, n=n: t.startswith(f"Add {n} to the tally.")) for n in params["operands"]]
    if row["task"] == "needlechain":
        chain = params["chain"]
        # A fact mentions its person (and, for relations, the other person) within its sentence.
        return [
            (lambda t, l=chain[i]: l["name"] in t.split("\n")[0][:120] and (l["of"] is None or l["of"] in t.split("\n")[0][:160]))
            for i in params["rendered_order"]
        ]
    if row["task"] == "graphwalks":
        # The first and last edge line the answer rests on.
        edge = re.compile(r"[0-9a-f]{10} -> [0-9a-f]{10}(\n|$)")
        return [(lambda t: edge.match(t) is not None)] * len(row["needle_offsets"])
    if row["task"] == "ruler2":
        # The needle units: the asked key's lines, the asked id's items, the gold documents.
        heads = ([f"The hidden number of {params['key']} is "] if "key" in params else
                 [f"Question {params['id']}: "] if "id" in params else
                 [f"Document {i}:\n" for i in params["gold_ids"]])
        return [(lambda t: any(t.startswith(h) for h in heads))] * len(row["needle_offsets"])
    if row["task"] == "babilong":
        # A fact names its actor (or refers back by pronoun) and its places, objects, kinds.
        facts = params.get("relations") or params.get("events") or params["statements"]

        def words(f):
            skip = {"kind", "action", "time", "relation", "direction", "coref", "negated"}
            w = [v for k, v in f.items() if isinstance(v, str) and k not in skip]
            if f.get("coref"):
                w = [v for k, v in f.items() if isinstance(v, str) and k not in skip | {"actor", "conj"}]
            return w

        return [(lambda t, w=words(f): all(x in t.split(".")[0] for x in w)) for f in facts]
    return []


def gen_prompts(gen, directory):
    """`gen inspect DIR --prompts`: what gen says each row's model reads, by row id."""
    out = subprocess.run([gen, "inspect", directory, "--prompts"], check=True,
                         capture_output=True).stdout.decode("utf-8")
    prompts = {}
    for line in out.splitlines():
        r = json.loads(line)
        prompts[r["id"]] = r["prompt"]
    return prompts


def recompute_answers(task, params):
    """The gold items worked out from a row's params alone (vt, cwe, fwe), or None."""
    if task == "vt":
        state = {}
        for var, source in params["assignments"]:
            state[var] = state.get(source, source)
        return [v for v, x in state.items() if x == params["query_value"]]
    if task in ("cwe", "fwe"):
        counts = {}
        for w in params["words"]:
            if w not in params["ignored"]:
                counts[w] = counts.get(w, 0) + 1
        n = params["common"] if task == "cwe" else params["top"]
        ranked = sorted(counts.items(), key=lambda kv: -kv[1])
        if len(ranked) > n and ranked[n - 1][1] <= ranked[n][1]:
            fail(f"{task}: a tie at the cut in {ranked[:n + 1]}")
        return [w for w, _ in ranked[:n]]
    return None


# The moment gen renders `strftime_now` on (generators/src/jinja/date.rs): 1 January 2025.
RECORDED_DATE = (2025, 1, 1)


def record_the_date(chat):
    """Fix the `datetime.now()` transformers' `strftime_now` reads to gen's recorded moment,
    and check that it took (a template rendered with it must show that date)."""
    import datetime as real
    import types
    from transformers.utils import chat_template_utils as ctu

    class Recorded(real.datetime):
        recorded_by_check = True

        @classmethod
        def now(cls, tz=None):
            return cls(*RECORDED_DATE)

    held = getattr(ctu, "datetime", None)
    if getattr(held, "recorded_by_check", False) or getattr(getattr(held, "datetime", None), "recorded_by_check", False):
        pass  # fixed by an earlier call (one per dataset checked)
    elif held is real.datetime:
        ctu.datetime = Recorded
    elif held is real:
        shim = types.SimpleNamespace(**{k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
        shim.datetime = Recorded
        ctu.datetime = shim
    else:
        fail("cannot find the datetime that transformers' strftime_now reads")
    probe = chat.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False,
                                     chat_template="{{ strftime_now('%Y-%m-%d') }}")
    if probe != "%04d-%02d-%02d" % RECORDED_DATE:
        fail(f"strftime_now still reads the clock after fixing it: {probe!r}")


def check_lengths(directory, tokenizer_file=None, chat_dir=None, gen=None):
    checked = 0
    # With --gen, the model-side prompt gen renders must equal the reference's byte for byte.
    shown = gen_prompts(gen, directory) if gen else None
    encoders = {}
    chat = None
    if chat_dir is not None:
        from transformers import AutoTokenizer

        chat = AutoTokenizer.from_pretrained(chat_dir)
        record_the_date(chat)
    for manifest, row in rows(directory):
        tok = row["tokenizer"]
        text = row["input"]
        if tok.startswith("hf:"):
            if tokenizer_file is None:
                fail("dataset uses a tokenizer.json: pass --tokenizer-file")
            if "hf" not in encoders:
                from tokenizers import Tokenizer

                t = Tokenizer.from_file(tokenizer_file)
                t.no_truncation()
                t.no_padding()
                encoders["hf"] = t
            enc = encoders["hf"].encode(text, add_special_tokens=False)
            count = len(enc.ids)

            def text_from(offset):
                return text[enc.offsets[offset][0]:]
        else:
            if tok not in encoders:
                encoders[tok] = tiktoken_encoding(tok)
            ids = encoders[tok].encode_ordinary(text)
            count = len(ids)

            def text_from(offset, ids=ids, e=encoders[tok]):
                return e.decode(ids[offset:offset + 400])

        if count != row["length"]:
            fail(f"row {row['id']}: length {row['length']} but reference count {count} ({tok})")
        # What the model reads: input then the answer prefix, inside the chat template when the
        # dataset has one (rendered by transformers, counted with special tokens).
        recipe = manifest["recipe"]
        if recipe.get("chat_template"):
            if chat is None:
                fail("dataset uses a chat template: pass --chat-dir (tokenizer.json + tokenizer_config.json)")
            messages = ([{"role": "system", "content": recipe["system"]}] if recipe.get("system") else [])
            messages.append({"role": "user", "content": text})
            # A .jinja template is rendered with the special tokens of the tokenizer_config.json
            # in --chat-dir, as transformers loads a model's chat_template.jinja.
            source = None
            if not recipe["chat_template"].endswith(".json"):
                source = open(recipe["chat_template"], encoding="utf-8").read()
            prompt = chat.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                              chat_template=source)
            prompt += row["answer_prefix"]
            prompt_count = len(chat.encode(prompt, add_special_tokens=False))
        elif tok.startswith("hf:"):
            prompt = text + row["answer_prefix"]
            prompt_count = len(encoders["hf"].encode(prompt, add_special_tokens=False).ids)
        else:
            prompt = text + row["answer_prefix"]
            prompt_count = len(encoders[tok].encode_ordinary(prompt))
        if shown is not None and shown.get(row["id"]) != prompt:
            got = shown.get(row["id"])
            at = next((i for i, (a, b) in enumerate(zip(got or "", prompt)) if a != b),
                      min(len(got or ""), len(prompt)))
            fail(f"row {row['id']}: gen inspect --prompts differs from the reference rendering at "
                 f"character {at}: {(got or '')[at:at + 60]!r} vs {prompt[at:at + 60]!r}")
        if prompt_count != row["prompt_tokens"]:
            fail(f"row {row['id']}: prompt_tokens {row['prompt_tokens']} but reference count {prompt_count}")
        params = json.loads(row["params"])
        if params.get("control"):
            # A control row (--controls no-context): the question without its context, measured
            # like every row, short by design (no length window), holding none of the answers.
            if row["target_length"] > 0 and prompt_count + row["max_new_tokens"] > row["target_length"]:
                fail(f"row {row['id']}: a control row over its target length")
            for a in row["answers"]:
                # An answer the question itself words (niah's absent key: "answer none") is
                # no leak; any other is.
                if a in text and a not in row["question"]:
                    fail(f"row {row['id']}: control row holds the answer {a!r}")
            checked += 1
            continue
        # The budget: what the model reads plus what it may write fits the length.
        budget = row["target_length"] - row["max_new_tokens"]
        tolerance = max(16, budget // 500)
        if row["target_length"] == 0:
            budget = prompt_count  # no length target: the task's native size
        if row["task"] in ("sort", "cwe", "fwe") and not params.get("hidden"):
            tolerance = max(tolerance, 24)  # discrete: the largest list that fits
        if row["task"] == "cwe":
            # The list grows by one rare word at a time: rare_repeats numbered lines, each as
            # long in tokens as the longest line of the list (a word may be many tokens).
            words = set(params["words"])
            lines = [l for l in text.split("\n") if l.split(". ", 1)[-1] in words]
            if tok.startswith("hf:"):
                longest = max(len(encoders["hf"].encode(l + "\n", add_special_tokens=False).ids) for l in lines)
            else:
                longest = max(len(encoders[tok].encode_ordinary(l + "\n")) for l in lines)
            tolerance = max(tolerance, params["rare_repeats"] * longest + 2)
        if row["task"] == "qa":
            # Whole documents: the most that fit, so short of the budget by less than the
            # first document left out (with its header and separator).
            tolerance = max(tolerance, params["next_document_tokens"] + 2)
            headers = [int(m) for m in re.findall(r"(?m)^Document (\d+):$", text)]
            if headers != list(range(1, params["documents"] + 1)):
                fail(f"row {row['id']}: documents numbered {headers[:5]}... but params say {params['documents']}")
        if row["task"] == "ruler2":
            # Whole units (lines, items, documents): short by less than the one that did not fit.
            tolerance = max(tolerance, params["next_unit_tokens"] + 2)
        if row["task"] == "graphwalks":
            # Edge by edge: short of the length by less than the edge line that did not fit.
            tolerance = max(tolerance, params["next_edge_tokens"] - 1)
        if row["task"] == "needlechain" and not params["diluted"]:
            # Discrete size: the largest chain that fits, so within one fact (and its name).
            tolerance = max(tolerance, 48)
        if not (budget - tolerance <= prompt_count <= budget):
            fail(f"row {row['id']}: prompt_tokens {prompt_count} + max_new_tokens {row['max_new_tokens']} outside [{row['target_length'] - tolerance}, {row['target_length']}]")
        checks = needle_checks(row)
        if checks and len(checks) != len(row["needle_offsets"]):
            fail(f"row {row['id']}: {len(row['needle_offsets'])} offsets for {len(checks)} needles")
        for check, offset in zip(checks, row["needle_offsets"]):
            if not check(text_from(offset).lstrip()):
                fail(f"row {row['id']}: needle not at token offset {offset}: {text_from(offset)[:80]!r}")
        for c in params.get("confusers", []) if row["task"] == "niah" else []:
            # Near-miss facts sit at their recorded offsets too, and never state a gold value.
            if not text_from(c["offset"]).lstrip().startswith(c["sentence"]):
                fail(f"row {row['id']}: confuser not at token offset {c['offset']}: {text_from(c['offset'])[:80]!r}")
            if any(c["value"] in a or a in c["value"] for a in row["answers"]):
                fail(f"row {row['id']}: confuser value {c['value']} overlaps a gold answer")
        recomputed = recompute_answers(row["task"], params)
        if recomputed is not None and sorted(recomputed) != sorted(row["answers"]):
            fail(f"row {row['id']}: answers {row['answers']} but params give {recomputed}")
        if row["metric"] == "all":
            for a in row["answers"]:
                if a not in text:
                    fail(f"row {row['id']}: answer {a} not in input")
        checked += 1
    if checked == 0:
        fail("no rows checked")
    if shown is not None and len(shown) != checked:
        fail(f"gen inspect --prompts printed {len(shown)} rows, the dataset has {checked}")
    print(f"ok: {checked} rows of {directory}: lengths equal the reference tokenizer, within tolerance, needles at their offsets"
          + ("; gen's model prompts equal the reference's byte for byte" if shown is not None else ""))


def check_loaders(directory, config):
    import datasets
    import duckdb
    import pyarrow.dataset as ds

    manifest = json.load(open(os.path.join(directory, "manifest.json")))
    files = [f for f in manifest["files"] if f["config"] == config]
    expected = sum(f["rows"] for f in files)
    if expected == 0:
        fail(f"no rows of config {config} in the manifest")
    d = datasets.load_dataset(directory, config)
    splits = {}
    for f in files:
        splits[f["split"]] = splits.get(f["split"], 0) + f["rows"]
    for name, rows in splits.items():
        if d[name].num_rows != rows:
            fail(f"datasets: split {name} has {d[name].num_rows} rows, expected {rows}")
    split = next(iter(splits))
    feats = d[split].features
    want = {"input": "large_string", "length": "int64", "max_new_tokens": "int32", "depth_percent": "float64"}
    for col, dtype in want.items():
        if feats[col].dtype != dtype:
            fail(f"datasets: column {col} is {feats[col].dtype}, expected {dtype}")
    if not isinstance(d[split][0]["answers"], list):
        fail("datasets: answers is not a list")

    table = ds.dataset(os.path.join(directory, config), format="parquet").to_table()
    if table.num_rows != expected:
        fail(f"pyarrow: {table.num_rows} rows, expected {expected}")
    if str(table.schema.field("input").type) != "large_string":
        fail(f"pyarrow: input is {table.schema.field('input').type}")

    con = duckdb.connect()
    pattern = os.path.join(directory, config, "*.parquet")
    n, mx = con.execute(
        f"select count(*), max(length) from read_parquet('{pattern}') where target_length = 0 or length <= target_length"
    ).fetchone()
    if n != expected:
        fail(f"duckdb: {n} rows, expected {expected}")
    types = {r[0]: r[1] for r in con.execute(f"describe select * from read_parquet('{pattern}')").fetchall()}
    if types.get("answers") != "VARCHAR[]" or types.get("length") != "BIGINT":
        fail(f"duckdb: unexpected types {types}")
    print(f"ok: datasets, pyarrow and duckdb read {expected} rows of {config} (max length {mx})")


def check_lengths_all(parent, chat_only=None, gen=None):
    """Reference lengths for every dataset directly under `parent` (the randomized round trip's
    kept datasets), with each dataset's own tokenizer."""
    checked = skipped = 0
    for name in sorted(os.listdir(parent)):
        directory = os.path.join(parent, name)
        path = os.path.join(directory, "manifest.json")
        if not os.path.exists(path):
            continue
        recipe = json.load(open(path))["recipe"]
        tok = recipe["tokenizer"]
        # Chat-template datasets need transformers, checked in its own environment:
        # --chat no leaves them to that pass, --chat yes checks only them.
        if chat_only is not None and bool(recipe.get("chat_template")) != chat_only:
            continue
        if tok in ("words", "chars"):
            skipped += 1  # no reference implementation to compare with
            continue
        chat = recipe.get("chat_template")
        check_lengths(directory, tok if tok.endswith(".json") else None,
                      os.path.dirname(chat) if chat else None, gen)
        checked += 1
    if checked == 0:
        fail(f"no datasets checked under {parent}")
    print(f"ok: {checked} round-trip datasets match the reference tokenizers ({skipped} skipped)")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "lengths":
        tf = args[args.index("--tokenizer-file") + 1] if "--tokenizer-file" in args else None
        cd = args[args.index("--chat-dir") + 1] if "--chat-dir" in args else None
        gen = args[args.index("--gen") + 1] if "--gen" in args else None
        check_lengths(args[1], tf, cd, gen)
    elif len(args) >= 2 and args[0] == "lengths-all":
        chat = {"yes": True, "no": False}[args[args.index("--chat") + 1]] if "--chat" in args else None
        gen = args[args.index("--gen") + 1] if "--gen" in args else None
        check_lengths_all(args[1], chat, gen)
    elif len(args) == 3 and args[0] == "loaders":
        check_loaders(args[1], args[2])
    elif args == ["prime-tiktoken"]:
        for name in TIKTOKEN_URLS:
            tiktoken_encoding(name)
        print(f"ok: tiktoken encodings in {os.environ['TIKTOKEN_CACHE_DIR']}")
    else:
        print(__doc__)
        sys.exit(2)
