//! One instance's fitting: the edge stream, the node names and their counts, the question
//! drawn for a graph, and a graph's prompt rendered and counted from its lines' parts.

use std::fmt::Write;

use serde_json::json;

use super::graph::{self, Adjacency, Edge, Growth};
use super::{md5, EdgeOrder, Graphwalks, Problem, MAX_DRAWS};
use crate::fit::{measure, Fitted};
use crate::rng::{Coordinates, Stream};
use crate::template::{vars, Frame};
use crate::tokenizer::Known;
use crate::{GenError, Run};

/// The question asked of one graph, and its answer.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Query {
    pub(super) start: u32,
    /// The BFS depth (0 for parents).
    pub(super) depth: u32,
    /// The answer's nodes, ascending.
    pub(super) answer: Vec<u32>,
    /// Questions drawn before this one was kept (1 when the first fits).
    pub(super) draws: u32,
    /// Whether the answer's size lies in `answer_size`.
    pub(super) fits: bool,
    /// The smallest and largest answer sizes drawn.
    pub(super) seen: (usize, usize),
}

/// Node names and the token counts an edge list is counted from, per node.
#[derive(Default)]
pub(super) struct Names {
    pub(super) ids: Vec<String>,
    /// Per node: tokens of `id`, of `" id\n"` and of `" id"`.
    pub(super) tokens: Vec<(usize, usize, usize)>,
}

impl Names {
    pub(super) fn upto(&mut self, nodes: u32) {
        while self.ids.len() < nodes as usize {
            self.ids.push(md5::node_id(self.ids.len() as u32));
        }
    }

    pub(super) fn counted(&mut self, tok: &crate::Tokenizer, nodes: u32) -> Result<(), GenError> {
        self.upto(nodes);
        while self.tokens.len() < nodes as usize {
            let id = &self.ids[self.tokens.len()];
            let counts = (
                tok.count(id)?,
                tok.count(&format!(" {id}\n"))?,
                tok.count(&format!(" {id}"))?,
            );
            self.tokens.push(counts);
        }
        Ok(())
    }
}

/// One instance's fitting: its edge stream, names and the frame's pieces.
pub(super) struct Fill<'a> {
    pub(super) task: &'a Graphwalks,
    pub(super) run: &'a Run,
    pub(super) coords: &'a Coordinates<'a>,
    pub(super) growth: Growth,
    pub(super) names: Names,
    /// Tokens of `" ->"` when the encoding provably splits around every part of a line.
    pub(super) arrow: Option<usize>,
}

/// Whether edge lists count as the sum of their parts: `a`, `" ->"`, `" b\n"`, for ids that
/// start with a letter or a digit.
pub(super) fn lines_add(tok: &crate::Tokenizer) -> bool {
    [
        "cfcd208495 -> c4ca4238a0\n1679091c5a -> a87ff679a2",
        "1679091c5a -> 1679091c5a\nc4ca4238a0 -> 8f14e45fce",
    ]
    .iter()
    .all(|s| [10, 13, 25].iter().all(|&at| tok.counts_add_at(s, at)))
}

/// A rendered try: the prompt, and what it and the answer budget take.
pub(super) struct Rendered {
    pub(super) fitted: Fitted,
    pub(super) target: String,
    pub(super) max_new_tokens: u32,
}

impl Rendered {
    pub(super) fn total(&self) -> usize {
        self.fitted.prompt_tokens + self.max_new_tokens as usize
    }
}

impl Fill<'_> {
    /// The lines of `edges` (node names `rename`d) in the list's order, as node pairs.
    pub(super) fn lines(&self, edges: &[Edge], rename: &dyn Fn(u32) -> u32) -> Vec<(u32, u32)> {
        let mut order: Vec<&Edge> = edges.iter().collect();
        if self.task.params.edge_order == EdgeOrder::Shuffled {
            order.sort_by_key(|e| e.key);
        }
        order
            .iter()
            .map(|e| (rename(e.src), rename(e.dst)))
            .collect()
    }

    pub(super) fn frame(&self, question: &str) -> Result<Frame, GenError> {
        self.run.frame(&vars([("question", question)]), "")
    }

    /// The prompt of the edge list `lines` under `question`, counted from its parts where
    /// proven (else whole), the lines at `marked` reported as needles.
    pub(super) fn render(
        &mut self,
        lines: &[(u32, u32)],
        nodes: u32,
        q: &Query,
        marked: &[usize],
    ) -> Result<Rendered, GenError> {
        let tok = &self.run.tokenizer;
        match self.arrow {
            Some(_) => self.names.counted(tok, nodes)?,
            None => self.names.upto(nodes),
        }
        let question = self.task.question(&self.names, q);
        let frame = self.frame(&question)?;
        let mut input = String::with_capacity(frame.prefix.len() + lines.len() * 25 + 400);
        input.push_str(&frame.prefix);
        let ctx_start = input.len();
        let mut starts = Vec::with_capacity(lines.len());
        for (i, &(a, b)) in lines.iter().enumerate() {
            if i > 0 {
                input.push('\n');
            }
            starts.push(input.len());
            let _ = write!(
                input,
                "{} -> {}",
                self.names.ids[a as usize], self.names.ids[b as usize]
            );
        }
        let ctx_end = input.len();
        input.push_str(&frame.suffix);
        let marks: Vec<(usize, usize)> = marked
            .iter()
            .map(|&i| (starts[i], starts.get(i + 1).map_or(ctx_end, |&s| s - 1)))
            .collect();
        // Known stretches: the lines between marked line starts, each counted as the sum of
        // its lines' parts.
        let mut known = Vec::new();
        if let (Some(arrow), false) = (self.arrow, lines.is_empty()) {
            let mut cuts: Vec<usize> = marked.to_vec();
            cuts.push(0);
            cuts.push(lines.len());
            cuts.sort_unstable();
            cuts.dedup();
            for w in cuts.windows(2) {
                let (from, to) = (w[0], w[1]);
                let mut tokens = 0;
                for (i, &(a, b)) in lines.iter().enumerate().take(to).skip(from) {
                    let (src, _, _) = self.names.tokens[a as usize];
                    let (_, joined, last) = self.names.tokens[b as usize];
                    tokens += src + arrow + if i + 1 == lines.len() { last } else { joined };
                }
                let end = starts.get(to).copied().unwrap_or(ctx_end);
                known.push(Known {
                    start: starts[from],
                    end,
                    tokens,
                });
            }
        }
        let fitted = measure(tok, &frame, input, (ctx_start, ctx_end), &marks, &known)?;
        let target = Graphwalks::target(&self.names, &q.answer);
        let max_new_tokens = self.run.answer_tokens(&target)?;
        Ok(Rendered {
            fitted,
            target,
            max_new_tokens,
        })
    }

    /// The first `n` edges of the stream with their question, rendered.
    pub(super) fn prefix(&mut self, n: usize) -> Result<(Query, usize), GenError> {
        self.growth.extend(n);
        let nodes = self.growth.nodes(n);
        let edges = &self.growth.edges[..n];
        let q = self.task.ask(self.coords, edges, nodes);
        let lines = self.lines(edges, &|v| v);
        let r = self.render(&lines, nodes, &q, &[])?;
        Ok((q, r.total()))
    }
}

impl Graphwalks {
    pub(super) fn content_params(&self) -> serde_json::Value {
        json!(self.params)
    }

    pub(super) fn question(&self, names: &Names, q: &Query) -> String {
        let start = &names.ids[q.start as usize];
        match self.params.problem {
            Problem::Parents => format!("Operation: name every parent of node {start}."),
            _ => format!(
                "Operation: perform a BFS from node {start} and name every node at a distance of exactly {} from it.",
                q.depth
            ),
        }
    }

    /// The first question drawn for the graph `edges` (over `nodes` nodes) whose answer size
    /// fits, or the last drawn, marked as not fitting.
    pub(super) fn ask(&self, coords: &Coordinates<'_>, edges: &[Edge], nodes: u32) -> Query {
        let mut rng = coords.rng(Stream::Relations);
        let adj = (self.params.problem == Problem::Bfs).then(|| Adjacency::of(edges, nodes));
        let (lo, hi) = self.params.answer_size;
        let mut last = None;
        let mut seen = (usize::MAX, 0);
        for draw in 1..=MAX_DRAWS {
            let start = rng.below(u64::from(nodes)) as u32;
            let (depth, answer) = match &adj {
                Some(adj) => {
                    let (a, b) = self.params.bfs_depth;
                    let depth = rng.range_inclusive(u64::from(a), u64::from(b)) as u32;
                    (
                        depth,
                        graph::bfs_answer(&adj.distances(start, depth), depth),
                    )
                }
                None => (0, graph::parents(edges, start)),
            };
            let fits = (lo as usize..=hi as usize).contains(&answer.len());
            seen = (seen.0.min(answer.len()), seen.1.max(answer.len()));
            let q = Query {
                start,
                depth,
                answer,
                draws: draw,
                fits,
                seen,
            };
            if fits {
                return q;
            }
            last = Some(q);
        }
        last.unwrap_or_else(|| unreachable!("at least one draw"))
    }

    /// The answer's ids, sorted as strings.
    pub(super) fn answers(names: &Names, answer: &[u32]) -> Vec<String> {
        let mut ids: Vec<String> = answer
            .iter()
            .map(|&v| names.ids[v as usize].clone())
            .collect();
        ids.sort_unstable();
        ids
    }

    pub(super) fn target(names: &Names, answer: &[u32]) -> String {
        format!(
            "Final Answer: [{}]",
            Graphwalks::answers(names, answer).join(", ")
        )
    }
}
