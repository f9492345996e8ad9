//! `graphwalks`: breadth-first search and parents in a directed graph given as an edge list,
//! following the design of OpenAI's GraphWalks (node ids the first ten hex digits of
//! `md5(str(k))`, one `a -> b` per line, a last `Final Answer: [...]` line).
//!
//! The graph grows edge by edge ([`graph::Growth`]) until the prompt and the answer budget
//! fill the length: the largest prefix of the edge stream that fits (each size tried asks its
//! own question), then edges past it that leave the answer as it is, until the next would not
//! fit, so the shortfall is under one edge line. The question is drawn again (a new start
//! node, a new depth) until its answer has a size in `answer_size`, a bounded number of times.

mod fill;
pub mod graph;
pub mod md5;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::fit::search::largest_fitting;
use crate::rng::Stream;
use crate::tasks::Params;
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use fill::{lines_add, Fill, Names};
use graph::{Adjacency, DegreeLaw, Edge, Growth};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "graphwalks";
/// One line saying what the task is.
pub const ABOUT: &str =
    "graph walks: the nodes at a BFS depth, or a node's parents, in a long edge list (GraphWalks)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] = &[(
    "default",
    include_str!("../../../templates/graphwalks/default.j2"),
)];

/// Deepest BFS a question may ask for.
pub const MAX_DEPTH: u32 = 50;
/// Largest answer a question may ask for.
pub const MAX_ANSWER: u32 = 100_000;
/// Largest mean out-degree.
pub const MAX_MEAN_DEGREE: f64 = 20.0;
/// Questions drawn for one graph before its answer sizes are called out of reach.
pub const MAX_DRAWS: u32 = 200;
/// Edges past the largest fitting prefix that may be passed over for changing the answer.
const MAX_PASSED: usize = 100_000;

choice! {
    /// Which question the rows ask.
    pub enum Problem {
        /// The nodes at exactly a depth from a start node.
        Bfs = "bfs",
        /// The sources of edges into a node, the node itself left out.
        Parents = "parents",
        /// One config of each.
        Both = "both",
    }
}

choice! {
    /// How the edge lines are ordered.
    pub enum EdgeOrder {
        /// A node's out-edges together, nodes in the order they were emitted.
        Grouped = "grouped",
        /// Every line at a random place.
        Shuffled = "shuffled",
    }
}

/// Each node's out-degree: its law and mean, written `LAW:MEAN` (`poisson:3`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Degree {
    /// The law of each node's out-degree.
    pub law: DegreeLaw,
    /// Its mean.
    pub mean: f64,
}

impl std::fmt::Display for Degree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.law, self.mean)
    }
}

impl std::str::FromStr for Degree {
    type Err = String;
    /// `LAW:MEAN`, or a mean alone (Poisson).
    fn from_str(s: &str) -> Result<Degree, String> {
        let expected = || {
            format!(
                "LAW:MEAN with LAW {} (or a mean alone, Poisson), like poisson:3",
                DegreeLaw::expected()
            )
        };
        let (law, mean) = match s.split_once(':') {
            Some((law, mean)) => (law.parse().map_err(|_| expected())?, mean),
            None => (DegreeLaw::Poisson, s),
        };
        let mean: f64 = mean.trim().parse().map_err(|_| expected())?;
        Ok(Degree { law, mean })
    }
}

impl Serialize for Degree {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Degree {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Degree, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// graphwalks' parameters, spelled as manifests and `params` record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphwalksParams {
    /// The question: bfs, parents, or both (one config each).
    pub problem: Problem,
    /// The BFS depths a question draws from (inclusive).
    pub bfs_depth: (u32, u32),
    /// Each node's out-degree law and mean.
    pub degree: Degree,
    /// How the edge lines are ordered.
    pub edge_order: EdgeOrder,
    /// The answer sizes a question may have (inclusive); the start node is drawn again until
    /// its answer has one.
    pub answer_size: (u32, u32),
}

impl Default for GraphwalksParams {
    /// Both questions, BFS depths 1 to 3, Poisson out-degrees of mean 3, grouped lines,
    /// answers of 1 to 1000 nodes.
    fn default() -> Self {
        GraphwalksParams {
            problem: Problem::Both,
            bfs_depth: (1, 3),
            degree: Degree {
                law: DegreeLaw::Poisson,
                mean: 3.0,
            },
            edge_order: EdgeOrder::Grouped,
            answer_size: (1, 1000),
        }
    }
}

impl Params for GraphwalksParams {
    type Built = Vec<Graphwalks>;

    /// Check every parameter and make the task (one per question for `both`).
    fn build(&self) -> Result<Vec<Graphwalks>, ParamError> {
        let (lo, hi) = self.bfs_depth;
        if lo == 0 || hi < lo || hi > MAX_DEPTH {
            return Err(ParamError::new(
                "bfs_depth",
                format!("{lo}..{hi}"),
                format!("a depth or range of depths within 1..{MAX_DEPTH}"),
            ));
        }
        let (lo, hi) = self.answer_size;
        if hi < lo || hi > MAX_ANSWER {
            return Err(ParamError::new(
                "answer_size",
                format!("{lo}..{hi}"),
                format!("MIN..MAX with MIN at most MAX and MAX at most {MAX_ANSWER}"),
            ));
        }
        let Degree { law, mean } = self.degree;
        let whole = mean.fract() == 0.0;
        if !(mean > 0.0 && mean <= MAX_MEAN_DEGREE) || (law == DegreeLaw::Fixed && !whole) {
            return Err(ParamError::new(
                "degree",
                self.degree,
                format!("a mean above 0 and at most {MAX_MEAN_DEGREE} (a whole number for fixed)"),
            ));
        }
        let problems: &[Problem] = match self.problem {
            Problem::Both => &[Problem::Bfs, Problem::Parents],
            Problem::Bfs => &[Problem::Bfs],
            Problem::Parents => &[Problem::Parents],
        };
        Ok(problems
            .iter()
            .map(|&problem| Graphwalks {
                params: GraphwalksParams {
                    problem,
                    ..self.clone()
                },
            })
            .collect())
    }
}

/// Validated graphwalks parameters for one question (bfs or parents).
#[derive(Debug, Clone)]
pub struct Graphwalks {
    /// The checked parameters; `problem` is bfs or parents.
    pub params: GraphwalksParams,
}

impl Task for Graphwalks {
    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        format!("{}_{}", self.params.problem, self.params.edge_order)
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    fn uses_haystack(&self) -> bool {
        false
    }

    fn default_depths(&self) -> Option<Vec<f64>> {
        None
    }

    /// Each row's answer budget is its own answer's tokens plus slack.
    fn default_reserve(&self) -> u32 {
        0
    }

    fn example_vars(&self) -> Vars {
        vars([(
            "question",
            "Operation: name every parent of node cfcd208495.",
        )])
    }

    /// A graph, like any context, is what the question is asked about.
    fn identity(&self, instance: &Instance) -> Vec<String> {
        crate::identity::fact_key(instance, "instance", "identity")
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        let frame = run.frame(
            &vars([(
                "question",
                "Operation: perform a BFS from node cfcd208495 and name every node at a distance of exactly 10 from it.",
            )]),
            "",
        )?;
        let fixed = frame.fixed_tokens(&run.tokenizer)? as u64;
        // A few edge lines, and an answer of the smallest size asked (ids of up to 10 tokens).
        let answer = if run.reserve > 0 {
            run.reserve
        } else {
            8 + 11 * u64::from(self.params.answer_size.0.max(1)) + u64::from(crate::ANSWER_SLACK)
        };
        Ok((fixed + 8 * 24 + answer) * 11 / 10)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates(NAME, &params, cell);
        let tok = &run.tokenizer;
        let Degree { law, mean } = self.params.degree;
        let mut fill = Fill {
            task: self,
            run,
            coords: &coords,
            growth: Growth::new(
                coords.rng(Stream::Content),
                coords.rng(Stream::Placement),
                law,
                mean,
            ),
            names: Names::default(),
            arrow: if lines_add(tok) {
                Some(tok.count(" ->")?)
            } else {
                None
            },
        };
        let total = cell.length as usize;
        // An edge line is at least three tokens (two names and the arrow as words).
        let most = total / 3 + 2;
        let bfs = self.params.problem == Problem::Bfs;
        let (n, q) = {
            let (n, (q, _)) =
                largest_fitting(1, most, total, |n| fill.prefix(n).map(|(q, t)| ((q, t), t)))?;
            (n, q)
        };
        if !q.fits {
            let (lo, hi) = self.params.answer_size;
            let (least, most) = q.seen;
            return Err(GenError::Param(ParamError::new(
                "answer_size",
                format!("{lo}..{hi}"),
                format!(
                    "sizes a {} question reaches, but none of {MAX_DRAWS} drawn on the graph of {} nodes and {n} edges that fills {} tokens has one (their answers had {least} to {most} nodes): widen answer_size{}",
                    self.params.problem,
                    fill.growth.nodes(n),
                    cell.length,
                    if bfs { ", or change bfs_depth or degree" } else { " or change degree" },
                ),
            )));
        }
        // Past the largest fitting prefix: edges that leave every distance within the depth
        // (or the asked node's parents) as they are, while the next one fits.
        let mut edges: Vec<Edge> = fill.growth.edges[..n].to_vec();
        let mut nodes = fill.growth.nodes(n);
        let mut rename: Vec<u32> = (0..nodes).collect();
        let dist = if bfs {
            Adjacency::of(&edges, nodes).distances(q.start, q.depth)
        } else {
            Vec::new()
        };
        let mut next = n;
        let mut passed = 0usize;
        let mut current = {
            let lines = fill.lines(&edges, &|v| v);
            fill.render(&lines, nodes, &q, &[])?.total()
        };
        let mut next_edge_tokens = None;
        while passed <= MAX_PASSED {
            fill.growth.extend(next + 1);
            let e = fill.growth.edges[next];
            next += 1;
            let changes = if bfs {
                graph::shortens(&dist, q.depth, e.src, e.dst)
            } else {
                e.dst == q.start && e.src != q.start
            };
            if changes {
                passed += 1;
                continue;
            }
            let mut renamed = rename.clone();
            let mut grown = nodes;
            for v in [e.src, e.dst] {
                if renamed.len() <= v as usize {
                    renamed.resize(v as usize + 1, u32::MAX);
                }
                if renamed[v as usize] == u32::MAX {
                    renamed[v as usize] = grown;
                    grown += 1;
                }
            }
            let mut with = edges.clone();
            with.push(e);
            let lines = fill.lines(&with, &|v| renamed[v as usize]);
            let t = fill.render(&lines, grown, &q, &[])?.total();
            if t > total {
                next_edge_tokens = Some(t - current);
                break;
            }
            edges = with;
            rename = renamed;
            nodes = grown;
            current = t;
        }
        // The final list, with the lines the answer rests on marked.
        let lines = fill.lines(&edges, &|v| rename[v as usize]);
        let relevant: Vec<bool> = {
            let by_line = fill.lines(&edges, &|v| v);
            by_line
                .iter()
                .map(|&(a, b)| {
                    if bfs {
                        graph::on_shortest_path(&dist, q.depth, a, b)
                    } else {
                        b == q.start && a != q.start
                    }
                })
                .collect()
        };
        let marked: Vec<usize> = match (
            relevant.iter().position(|&r| r),
            relevant.iter().rposition(|&r| r),
        ) {
            (Some(first), Some(last)) if first < last => vec![first, last],
            (Some(only), _) => vec![only],
            _ => Vec::new(),
        };
        let r = fill.render(&lines, nodes, &q, &marked)?;
        if r.total() > total {
            return Err(GenError::Internal(format!(
                "a graph measured to fit {total} tokens takes {}",
                r.total()
            )));
        }
        let question = self.question(&fill.names, &q);
        let answers = Graphwalks::answers(&fill.names, &q.answer);
        let context = &r.fitted.input[r.fitted.input.find("<graph>").unwrap_or(0)..];
        let graph_hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(context.as_bytes()));
        let start = fill.names.ids[q.start as usize].clone();
        let mut p = self.content_params();
        p["start"] = json!(start);
        p["depth"] = json!(if bfs { Some(q.depth) } else { None });
        p["nodes"] = json!(nodes);
        p["edges"] = json!(edges.len());
        p["draws"] = json!(q.draws);
        p["relevant_edges"] = json!(relevant.iter().filter(|&&r| r).count());
        p["passed_edges"] = json!(passed);
        p["next_edge_tokens"] = json!(next_edge_tokens);
        p["identity"] = json!({
            "graph": graph_hash,
            "problem": self.params.problem,
            "start": start,
            "depth": if bfs { Some(q.depth) } else { None },
        });
        let mut fitted = r.fitted;
        if marked.len() == 1 {
            // First and last relevant edge are one line.
            fitted.needle_offsets.push(fitted.needle_offsets[0]);
            fitted.needle_depths.push(fitted.needle_depths[0]);
        }
        Ok(Instance {
            question,
            answer_prefix: String::new(),
            target: r.target,
            answers,
            metric: Metric::F1,
            max_new_tokens: r.max_new_tokens,
            params: canonical_json(&p),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }
}

/// Tests' reading of a row: the edges and question from `input` alone, answered by a plain
/// search.
#[cfg(test)]
mod tests;
