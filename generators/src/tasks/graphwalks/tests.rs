use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::*;
use crate::Tokenizer;

fn run(tok: Tokenizer, seed: u64) -> Run {
    crate::tasks::plain_run(NAME, tok, seed, 0)
}

/// What a reader of the prompt sees: the edge lines between the graph's tags, and the question.
struct Read {
    edges: Vec<(String, String)>,
    starts: Vec<usize>,
    bfs: bool,
    start: String,
    depth: usize,
}

fn read(input: &str) -> Read {
    let open = input.find("<graph>\n").unwrap() + "<graph>\n".len();
    let close = input.find("\n</graph>").unwrap();
    let mut edges = Vec::new();
    let mut starts = Vec::new();
    let mut at = open;
    for line in input[open..close].split('\n') {
        let (a, b) = line.split_once(" -> ").unwrap();
        assert!([a, b]
            .iter()
            .all(|x| x.len() == 10 && x.bytes().all(|c| c.is_ascii_hexdigit())));
        edges.push((a.to_string(), b.to_string()));
        starts.push(at);
        at += line.len() + 1;
    }
    let q = &input[close..];
    let node = |after: &str| {
        let i = q.find(after).unwrap() + after.len();
        q[i..i + 10].to_string()
    };
    let bfs = q.contains("perform a BFS");
    let depth = if bfs {
        let i = q.find("exactly ").unwrap() + 8;
        q[i..].split(' ').next().unwrap().parse().unwrap()
    } else {
        0
    };
    Read {
        edges,
        starts,
        bfs,
        start: node(" node "),
        depth,
    }
}

/// Shortest distances from the start by a plain breadth-first search over the names read.
fn distances(r: &Read) -> BTreeMap<&str, usize> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in &r.edges {
        adj.entry(a).or_default().push(b);
    }
    let mut dist: BTreeMap<&str, usize> = BTreeMap::from([(r.start.as_str(), 0)]);
    let mut queue = VecDeque::from([r.start.as_str()]);
    while let Some(u) = queue.pop_front() {
        for &v in adj.get(u).map(Vec::as_slice).unwrap_or(&[]) {
            if !dist.contains_key(v) {
                dist.insert(v, dist[u] + 1);
                queue.push_back(v);
            }
        }
    }
    dist
}

/// The answer by a plain breadth-first search or scan over the names read.
fn answer(r: &Read) -> Vec<String> {
    let out: BTreeSet<String> = if r.bfs {
        distances(r)
            .into_iter()
            .filter(|&(_, d)| d == r.depth)
            .map(|(v, _)| v.to_string())
            .collect()
    } else {
        r.edges
            .iter()
            .filter(|(a, b)| *b == r.start && *a != r.start)
            .map(|(a, _)| a.clone())
            .collect()
    };
    out.into_iter().collect()
}

/// Rows over both questions, both orders, three laws and five tokenizers: answers as a plain
/// search of the text finds them, names md5's of 0..V, exact lengths, a fill short of the
/// length by less than the next edge line, and offsets of the first and last line the answer
/// rests on.
#[test]
fn rows_answer_as_a_plain_search_of_their_text_and_fill_the_length() {
    let tokenizers = [
        Tokenizer::O200k,
        Tokenizer::Cl100k,
        Tokenizer::Gpt2,
        Tokenizer::Words,
        Tokenizer::Chars,
    ];
    let laws = ["poisson:3", "geometric:2", "fixed:2"];
    let mut checked = BTreeMap::new();
    for seed in 0..30u64 {
        let tok = tokenizers[seed as usize % tokenizers.len()].clone();
        let run = run(tok.clone(), seed);
        let params = GraphwalksParams {
            problem: [Problem::Bfs, Problem::Parents][seed as usize % 2],
            edge_order: [EdgeOrder::Grouped, EdgeOrder::Shuffled][(seed as usize / 2) % 2],
            degree: laws[seed as usize % 3].parse().unwrap(),
            bfs_depth: (1, 1 + (seed % 3) as u32),
            answer_size: (if seed % 5 == 0 { 0 } else { 1 }, 500),
        };
        let task = params.build().unwrap().remove(0);
        let length = 1500 + 700 * seed;
        let cell = Cell {
            length,
            depth: None,
            sample: seed,
            slot: seed,
        };
        let inst = task.generate(&run, &cell).unwrap();
        let r = read(&inst.input);
        assert_eq!(r.bfs, params.problem == Problem::Bfs);
        assert_eq!(inst.answers, answer(&r), "seed {seed}");
        assert!(inst.answers.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            inst.target,
            format!("Final Answer: [{}]", inst.answers.join(", "))
        );
        let (lo, hi) = params.answer_size;
        assert!((lo as usize..=hi as usize).contains(&inst.answers.len()));
        // Names: md5(str(k))[:10] for k = 0..V, every one on some edge.
        let names: BTreeSet<&str> = r
            .edges
            .iter()
            .flat_map(|(a, b)| [a.as_str(), b.as_str()])
            .collect();
        let want: BTreeSet<String> = (0..names.len() as u32).map(md5::node_id).collect();
        assert_eq!(
            names,
            want.iter().map(String::as_str).collect(),
            "seed {seed}"
        );
        // Exact counts, and the fill.
        assert_eq!(inst.length as usize, tok.count(&inst.input).unwrap());
        assert_eq!(inst.prompt_tokens, inst.length);
        assert_eq!(
            inst.max_new_tokens,
            tok.count(&inst.target).unwrap() as u32 + crate::ANSWER_SLACK
        );
        let filled = inst.prompt_tokens + u64::from(inst.max_new_tokens);
        assert!(filled <= length, "seed {seed}: {filled} > {length}");
        let p: serde_json::Value = serde_json::from_str(&inst.params).unwrap();
        let next = p["next_edge_tokens"]
            .as_u64()
            .expect("stopped at an edge that did not fit");
        assert!(
            length - filled < next,
            "seed {seed}: {} short, next edge {next}",
            length - filled
        );
        let longest = r
            .edges
            .iter()
            .map(|(a, b)| tok.count(&format!("{a} -> {b}\n")).unwrap())
            .max()
            .unwrap() as u64;
        assert!(
            next <= longest + 4,
            "seed {seed}: next edge {next}, longest line {longest}"
        );
        assert_eq!(p["edges"].as_u64().unwrap() as usize, r.edges.len());
        // Offsets of the first and last line the answer rests on.
        let dist = distances(&r);
        let relevant: Vec<usize> = (0..r.edges.len())
            .filter(|&i| {
                let (a, b) = &r.edges[i];
                if r.bfs {
                    // On a shortest path from the start to a node within the depth.
                    match (dist.get(a.as_str()), dist.get(b.as_str())) {
                        (Some(&da), Some(&db)) => da < r.depth && db == da + 1,
                        _ => false,
                    }
                } else {
                    *b == r.start && *a != r.start
                }
            })
            .collect();
        assert_eq!(
            p["relevant_edges"].as_u64().unwrap() as usize,
            relevant.len(),
            "seed {seed}"
        );
        match (relevant.first(), relevant.last()) {
            (Some(&first), Some(&last)) => {
                let at = |i: usize| tok.count(&inst.input[..r.starts[i]]).unwrap() as u64;
                assert_eq!(
                    inst.needle_offsets,
                    vec![at(first), at(last)],
                    "seed {seed}"
                );
            }
            _ => assert!(inst.needle_offsets.is_empty()),
        }
        // Grouped lists keep each node's out-edges together.
        if params.edge_order == EdgeOrder::Grouped {
            let mut runs: Vec<&str> = r.edges.iter().map(|(a, _)| a.as_str()).collect();
            runs.dedup();
            let distinct: BTreeSet<&str> = runs.iter().copied().collect();
            assert_eq!(runs.len(), distinct.len(), "seed {seed}");
        }
        *checked.entry((r.bfs, params.edge_order)).or_insert(0) += 1;
        // The same cell makes the same row.
        assert_eq!(task.generate(&run, &cell).unwrap(), inst);
    }
    assert_eq!(checked.len(), 4, "{checked:?}");
}

#[test]
fn degrees_read_and_write_as_law_and_mean() {
    let d: Degree = "geometric:2.5".parse().unwrap();
    assert_eq!((d.law, d.mean), (DegreeLaw::Geometric, 2.5));
    assert_eq!(d.to_string(), "geometric:2.5");
    assert_eq!("3".parse::<Degree>().unwrap().to_string(), "poisson:3");
    assert!("zipf:3".parse::<Degree>().is_err());
    let json = serde_json::to_string(&GraphwalksParams::default()).unwrap();
    assert_eq!(
        json,
        r#"{"problem":"both","bfs_depth":[1,3],"degree":"poisson:3","edge_order":"grouped","answer_size":[1,1000]}"#
    );
    assert_eq!(
        serde_json::from_str::<GraphwalksParams>(&json).unwrap(),
        GraphwalksParams::default()
    );
    assert_eq!(GraphwalksParams::default().build().unwrap().len(), 2);
}

#[test]
fn bad_parameters_are_refused() {
    let d = GraphwalksParams::default();
    let refused = |p: GraphwalksParams| p.build().unwrap_err().param;
    assert_eq!(
        refused(GraphwalksParams {
            bfs_depth: (0, 2),
            ..d.clone()
        }),
        "bfs_depth"
    );
    assert_eq!(
        refused(GraphwalksParams {
            bfs_depth: (3, 2),
            ..d.clone()
        }),
        "bfs_depth"
    );
    assert_eq!(
        refused(GraphwalksParams {
            answer_size: (5, 4),
            ..d.clone()
        }),
        "answer_size"
    );
    for bad in ["fixed:2.5", "poisson:0", "poisson:21", "geometric:-1"] {
        let p = GraphwalksParams {
            degree: bad.parse().unwrap(),
            ..d.clone()
        };
        assert_eq!(refused(p), "degree", "{bad}");
    }
}

/// An answer size no graph of the length reaches is refused in words naming the flag.
#[test]
fn unreachable_answer_sizes_are_refused() {
    let run = run(Tokenizer::O200k, 1);
    let task = GraphwalksParams {
        problem: Problem::Parents,
        answer_size: (400, 500),
        ..Default::default()
    }
    .build()
    .unwrap()
    .remove(0);
    let cell = Cell {
        length: 4000,
        depth: None,
        sample: 0,
        slot: 0,
    };
    let e = task.generate(&run, &cell).unwrap_err();
    let GenError::Param(p) = &e else {
        panic!("{e}")
    };
    assert_eq!(p.param, "answer_size");
    assert!(
        p.expected.contains("widen answer_size or change degree"),
        "{e}"
    );
}
