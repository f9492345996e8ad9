//! A directed graph grown edge by edge, and the two questions asked of it.
//!
//! Nodes are emitted in turn: each draws its out-degree from the degree law and sends that
//! many edges to nodes drawn uniformly among those emitted so far and a few not yet emitted
//! (so the graph has cycles, forward edges and now and then a self-loop). A node is named by
//! its rank of first appearance in the edges (0, 1, 2, …), so every prefix of the edge
//! stream is a graph whose nodes are numbered 0..V with none missing, every node on an edge.

use crate::rng::Rng;

choice! {
    /// The law each node's out-degree is drawn from.
    pub enum DegreeLaw {
        /// Every node has the mean (a whole number) as out-degree.
        Fixed = "fixed",
        /// Poisson with the mean.
        Poisson = "poisson",
        /// Geometric on 0, 1, 2, … with the mean: many small out-degrees and a long tail.
        Geometric = "geometric",
    }
}

/// Most edges one node sends, whatever the law draws.
pub const MAX_OUT_DEGREE: u32 = 1000;

/// One edge, between nodes named by their rank of first appearance in the stream, with the
/// key that places it in a shuffled edge list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// Source node.
    pub src: u32,
    /// Target node.
    pub dst: u32,
    /// Sort key of the line in a shuffled list.
    pub key: u64,
}

/// The stream of edges of one instance, drawn as far as asked; a longer graph extends a
/// shorter one.
pub struct Growth {
    degrees: Rng,
    keys: Rng,
    law: DegreeLaw,
    mean: f64,
    /// How many not-yet-emitted nodes an edge may point to, past the one emitting.
    ahead: u64,
    emitting: u64,
    started: bool,
    left: u32,
    /// Rank of first appearance of each drawn node (by its draw index), `u32::MAX` before.
    rank: Vec<u32>,
    /// The edges drawn so far.
    pub edges: Vec<Edge>,
    /// Nodes named after each prefix: `nodes_after[n - 1]` for the first n edges.
    pub nodes_after: Vec<u32>,
}

impl Growth {
    /// The stream drawn from `degrees` (out-degrees and targets) and `keys` (shuffle keys).
    pub fn new(degrees: Rng, keys: Rng, law: DegreeLaw, mean: f64) -> Growth {
        Growth {
            degrees,
            keys,
            law,
            mean,
            ahead: (2.0 * mean).ceil().max(2.0) as u64,
            emitting: 0,
            started: false,
            left: 0,
            rank: Vec::new(),
            edges: Vec::new(),
            nodes_after: Vec::new(),
        }
    }

    /// Nodes of the graph of the first `n` edges.
    pub fn nodes(&self, n: usize) -> u32 {
        if n == 0 {
            0
        } else {
            self.nodes_after[n - 1]
        }
    }

    fn out_degree(&mut self) -> u32 {
        let rng = &mut self.degrees;
        let d = match self.law {
            DegreeLaw::Fixed => self.mean.round() as u32,
            DegreeLaw::Poisson => {
                // Knuth's product of uniforms: exact for the small means allowed.
                let limit = (-self.mean).exp();
                let (mut k, mut p) = (0u32, rng.unit_f64());
                while p > limit && k < MAX_OUT_DEGREE {
                    k += 1;
                    p *= rng.unit_f64();
                }
                k
            }
            DegreeLaw::Geometric => {
                let stop = 1.0 / (1.0 + self.mean);
                let mut k = 0u32;
                while rng.unit_f64() >= stop && k < MAX_OUT_DEGREE {
                    k += 1;
                }
                k
            }
        };
        d.min(MAX_OUT_DEGREE)
    }

    fn ranked(&mut self, node: u64, named: &mut u32) -> u32 {
        let i = node as usize;
        if self.rank.len() <= i {
            self.rank.resize(i + 1, u32::MAX);
        }
        if self.rank[i] == u32::MAX {
            self.rank[i] = *named;
            *named += 1;
        }
        self.rank[i]
    }

    /// Draw until the stream holds `n` edges.
    pub fn extend(&mut self, n: usize) {
        let mut named = self.nodes(self.edges.len());
        while self.edges.len() < n {
            while self.left == 0 {
                if self.started {
                    self.emitting += 1;
                }
                self.started = true;
                self.left = self.out_degree();
            }
            let to = self.degrees.below(self.emitting + self.ahead + 1);
            let src = self.ranked(self.emitting, &mut named);
            let dst = self.ranked(to, &mut named);
            let key = self.keys.next_u64();
            self.edges.push(Edge { src, dst, key });
            self.nodes_after.push(named);
            self.left -= 1;
        }
    }
}

/// An edge list indexed by source, for breadth-first search.
pub struct Adjacency {
    starts: Vec<usize>,
    targets: Vec<u32>,
}

impl Adjacency {
    /// The out-edges of `edges` over nodes `0..nodes`.
    pub fn of(edges: &[Edge], nodes: u32) -> Adjacency {
        let mut starts = vec![0usize; nodes as usize + 1];
        for e in edges {
            starts[e.src as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut fill = starts.clone();
        let mut targets = vec![0u32; edges.len()];
        for e in edges {
            targets[fill[e.src as usize]] = e.dst;
            fill[e.src as usize] += 1;
        }
        Adjacency { starts, targets }
    }

    /// Shortest distances from `start` up to `depth` (`u32::MAX` beyond or unreachable).
    pub fn distances(&self, start: u32, depth: u32) -> Vec<u32> {
        let nodes = self.starts.len() - 1;
        let mut dist = vec![u32::MAX; nodes];
        dist[start as usize] = 0;
        let mut frontier = vec![start];
        for level in 1..=depth {
            let mut next = Vec::new();
            for &u in &frontier {
                for &v in &self.targets[self.starts[u as usize]..self.starts[u as usize + 1]] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = level;
                        next.push(v);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        dist
    }
}

/// The nodes at exactly `depth` from `start`, ascending (the start, at 0, never among them).
pub fn bfs_answer(dist: &[u32], depth: u32) -> Vec<u32> {
    (0..dist.len() as u32)
        .filter(|&v| depth > 0 && dist[v as usize] == depth)
        .collect()
}

/// The sources of edges into `node` other than `node` itself, ascending and once each.
pub fn parents(edges: &[Edge], node: u32) -> Vec<u32> {
    let mut out: Vec<u32> = edges
        .iter()
        .filter(|e| e.dst == node && e.src != node)
        .map(|e| e.src)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether a BFS edge `src -> dst` bears on the answer to depth `depth`: it lies on a
/// shortest path from the start to a node within that depth.
pub fn on_shortest_path(dist: &[u32], depth: u32, src: u32, dst: u32) -> bool {
    let d = |v: u32| dist.get(v as usize).copied().unwrap_or(u32::MAX);
    d(src) < depth && d(dst) == d(src) + 1
}

/// Whether adding `src -> dst` would change some distance within `depth` (and so possibly
/// the nodes at that depth): it leaves a node nearer than `depth` for one not yet as near as
/// it would make it. Nodes past `dist` are new, at no distance yet.
pub fn shortens(dist: &[u32], depth: u32, src: u32, dst: u32) -> bool {
    let d = |v: u32| dist.get(v as usize).copied().unwrap_or(u32::MAX);
    d(src) < depth && d(src) + 1 < d(dst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    fn edge(src: u32, dst: u32) -> Edge {
        Edge { src, dst, key: 0 }
    }

    /// Parents leave the node out even when it has a self-loop; BFS counts the start at 0 and
    /// a node once, at its shortest distance.
    #[test]
    fn parents_skip_self_loops_and_bfs_takes_shortest_distances() {
        let edges = [
            edge(0, 1),
            edge(0, 2),
            edge(1, 3),
            edge(2, 3),
            edge(3, 0),
            edge(3, 3),
        ];
        assert_eq!(parents(&edges, 3), vec![1, 2]);
        assert_eq!(parents(&edges, 0), vec![3]);
        let adj = Adjacency::of(&edges, 4);
        let dist = adj.distances(0, 3);
        assert_eq!(bfs_answer(&dist, 1), vec![1, 2]);
        assert_eq!(bfs_answer(&dist, 2), vec![3]);
        // 3 -> 0 leads back to the start: nothing is at depth 3.
        assert_eq!(bfs_answer(&dist, 3), Vec::<u32>::new());
        assert!(on_shortest_path(&dist, 2, 1, 3));
        assert!(!on_shortest_path(&dist, 2, 3, 0));
        assert!(shortens(&dist, 2, 0, 3) && !shortens(&dist, 2, 1, 3));
        assert!(shortens(&dist, 2, 1, 9) && !shortens(&dist, 2, 3, 9));
    }

    /// Every prefix names its nodes 0..V, each on an edge, and the mean out-degree of the
    /// nodes that emitted follows the law's mean.
    #[test]
    fn prefixes_name_every_node_once_and_degrees_follow_the_law() {
        for (law, mean) in [
            (DegreeLaw::Fixed, 3.0),
            (DegreeLaw::Poisson, 2.5),
            (DegreeLaw::Geometric, 4.0),
        ] {
            let mut g = Growth::new(
                Rng::from_seed_u64(1, Stream::Content),
                Rng::from_seed_u64(1, Stream::Placement),
                law,
                mean,
            );
            g.extend(20_000);
            for n in [1usize, 2, 17, 500, 20_000] {
                let v = g.nodes(n);
                let mut seen = vec![false; v as usize];
                for e in &g.edges[..n] {
                    assert!(e.src < v && e.dst < v);
                    seen[e.src as usize] = true;
                    seen[e.dst as usize] = true;
                }
                assert!(seen.iter().all(|&s| s), "{law} prefix {n}");
            }
            let mut sources: Vec<u32> = g.edges.iter().map(|e| e.src).collect();
            sources.dedup();
            let emitted = sources.len() as f64;
            let per_source = g.edges.len() as f64 / emitted;
            // Nodes that drew 0 edges emit none, so the mean over emitting nodes is higher
            // than the law's for Poisson and geometric.
            match law {
                DegreeLaw::Fixed => assert!((per_source - mean).abs() < 0.01, "{per_source}"),
                _ => assert!(
                    per_source > mean * 0.95 && per_source < mean * 1.6,
                    "{per_source}"
                ),
            }
            assert!(
                g.edges.iter().any(|e| e.src == e.dst),
                "{law}: no self-loop"
            );
        }
    }
}
