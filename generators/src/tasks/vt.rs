//! `vt`: variable tracking, following the structure of RULER's variable-tracking task.
//!
//! Each chain starts with a variable set to a 5-digit value; every further hop sets a new
//! variable to the previous one. The assignments of all chains (their order within a chain
//! kept) are hidden at sentence boundaries of a haystack; the question gives the first chain's
//! value and asks for every variable that ends up holding it. The first assignment of the asked
//! chain sits at the requested depth, the rest after it.

use std::collections::BTreeSet;

use serde_json::json;

use crate::fit::{fit_placed, NeedleSpec, Placement};
use crate::haystack::Screen;
use crate::rng::{Coordinates, Rng, Stream};
use crate::tasks::Params;
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "vt";
/// One line saying what the task is.
pub const ABOUT: &str = "variable tracking: chains of assignments hidden in text; name every variable holding a value (RULER)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] =
    &[("default", include_str!("../../templates/vt/default.j2"))];

/// RULER's answer budget for variable tracking.
pub const MAX_NEW_TOKENS: u32 = 30;
/// Most chains an instance may hold.
pub const MAX_CHAINS: u32 = 100;
/// Most hops per chain.
pub const MAX_HOPS: u32 = 100;
/// Letters in a variable name (RULER's 5 uppercase letters).
const NAME_LETTERS: usize = 5;

/// vt's parameters, spelled as manifests and `params` record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VtParams {
    /// Chains of assignments; the first is asked about, the others distract.
    pub chains: u32,
    /// Variable-to-variable assignments after each chain's first.
    pub hops: u32,
}

impl Default for VtParams {
    /// RULER's defaults: one chain of four hops.
    fn default() -> Self {
        VtParams { chains: 1, hops: 4 }
    }
}

impl Params for VtParams {
    type Built = Vt;

    /// Check every parameter and make the task.
    fn build(&self) -> Result<Vt, ParamError> {
        if self.chains == 0 || self.chains > MAX_CHAINS {
            return Err(ParamError::new(
                "chains",
                self.chains,
                format!("1 to {MAX_CHAINS}"),
            ));
        }
        if self.hops == 0 || self.hops > MAX_HOPS {
            return Err(ParamError::new(
                "hops",
                self.hops,
                format!("1 to {MAX_HOPS}"),
            ));
        }
        Ok(Vt {
            params: self.clone(),
        })
    }
}

/// Validated variable-tracking parameters.
#[derive(Debug, Clone)]
pub struct Vt {
    /// The checked parameters.
    pub params: VtParams,
}

/// One instance's chains: variables per chain (first holds the value), values per chain, and
/// the assignments in rendered order as (variable, source) with the chain they belong to.
struct Content {
    chains: Vec<Vec<String>>,
    values: Vec<String>,
    assignments: Vec<(String, String)>,
    depths: Vec<f64>,
    key: [u8; 32],
}

/// The sentence that performs one assignment: a value or another variable as its source.
pub fn assignment_sentence(variable: &str, source: &str) -> String {
    if source.bytes().all(|b| b.is_ascii_digit()) {
        format!("Set the variable {variable} to {source}.")
    } else {
        format!("Set the variable {variable} to the value of {source}.")
    }
}

impl Vt {
    fn content_params(&self) -> serde_json::Value {
        json!({"chains": self.params.chains, "hops": self.params.hops})
    }

    fn name(rng: &mut Rng) -> String {
        (0..NAME_LETTERS)
            .map(|_| char::from(b'A' + rng.below(26) as u8))
            .collect()
    }

    fn content(&self, coords: &Coordinates<'_>) -> Content {
        let mut rng = coords.rng(Stream::Content);
        let (chains_n, hops) = (self.params.chains as usize, self.params.hops as usize);
        // Names and values never repeat within an instance (26^5 names, 90,000 values: far
        // more than the at most 10,100 variables and 100 values drawn here).
        let mut used = BTreeSet::new();
        let mut chains = Vec::with_capacity(chains_n);
        let mut values = Vec::with_capacity(chains_n);
        for _ in 0..chains_n {
            let mut vars = Vec::with_capacity(hops + 1);
            while vars.len() <= hops {
                let v = Self::name(&mut rng);
                if used.insert(v.clone()) {
                    vars.push(v);
                }
            }
            chains.push(vars);
            loop {
                let v = rng.range_inclusive(10_000, 99_999).to_string();
                if used.insert(v.clone()) {
                    values.push(v);
                    break;
                }
            }
        }
        // Interleave the chains at random, each in its own order; the asked chain's value
        // comes first (it sits at the requested depth).
        let mut next = vec![0usize; chains_n];
        let mut assignments = Vec::with_capacity(chains_n * (hops + 1));
        let mut order_rng = coords.rng(Stream::Placement);
        let mut push = |c: usize, next: &mut Vec<usize>| {
            let i = next[c];
            let source = if i == 0 {
                values[c].clone()
            } else {
                chains[c][i - 1].clone()
            };
            assignments.push((chains[c][i].clone(), source));
            next[c] += 1;
        };
        push(0, &mut next);
        loop {
            let open: Vec<usize> = (0..chains_n).filter(|&c| next[c] <= hops).collect();
            if open.is_empty() {
                break;
            }
            let c = open[order_rng.index(open.len())];
            push(c, &mut next);
        }
        // Depths: the first at the cell's depth, the rest drawn after it, in order.
        let first = coords.depth.unwrap_or(50.0);
        let mut rest: Vec<f64> = (1..assignments.len())
            .map(|_| first + (100.0 - first) * order_rng.unit_f64())
            .collect();
        rest.sort_by(f64::total_cmp);
        let mut depths = vec![first];
        depths.extend(rest);
        Content {
            chains,
            values,
            assignments,
            depths,
            key: coords.key(),
        }
    }

    fn question(&self, c: &Content) -> (String, String) {
        let value = &c.values[0];
        let n = c.chains[0].len();
        (
            format!("Which variables hold the value {value} once every assignment in the text has been carried out?"),
            format!("The {n} variables that hold {value} are:"),
        )
    }

    /// What a haystack sentence must not mention: any variable, any value, the assignments'
    /// own phrase.
    fn screen(c: &Content) -> Screen {
        let mut screen = Screen::new(c.chains.iter().flatten().chain(&c.values));
        screen.add("the variable");
        screen
    }
}

impl Task for Vt {
    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        format!("c{}_h{}", self.params.chains, self.params.hops)
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    /// RULER's variable tracking: one chain of four hops, in noise.
    fn ruler_task(&self, haystack: crate::tasks::RulerHaystack) -> Option<&'static str> {
        let p = &self.params;
        ((p.chains, p.hops, haystack) == (1, 4, crate::tasks::RulerHaystack::Noise)).then_some(NAME)
    }

    fn uses_haystack(&self) -> bool {
        true
    }

    fn requires_haystack(&self) -> bool {
        true
    }

    fn default_reserve(&self) -> u32 {
        // Room for every variable of the chain (a few tokens each) beyond RULER's 30.
        MAX_NEW_TOKENS.max(6 * (self.params.hops + 1))
    }

    fn example_vars(&self) -> Vars {
        vars([("question", "Which variables hold the value 12345?")])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = Coordinates {
            task: NAME,
            params: &params,
            seed: run.seed,
            length: 0,
            depth: Some(50.0),
            sample: 0,
        };
        let c = self.content(&coords);
        let (question, prefix) = self.question(&c);
        let frame = run.frame(&vars([("question", &question)]), &prefix)?;
        let tok = &run.tokenizer;
        let mut need = frame.fixed_tokens(tok)?;
        for (v, s) in &c.assignments {
            need += tok.count(&format!(" {}", assignment_sentence(v, s)))?;
        }
        Ok((need as u64 * 11).div_ceil(10) + 32 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates(NAME, &params, cell);
        let c = self.content(&coords);
        let (question, answer_prefix) = self.question(&c);
        let frame = run.frame(&vars([("question", &question)]), &answer_prefix)?;
        let needles: Vec<NeedleSpec> = c
            .assignments
            .iter()
            .zip(&c.depths)
            .map(|((v, s), &depth)| NeedleSpec {
                text: assignment_sentence(v, s),
                depth,
            })
            .collect();
        let budget = cell.length.saturating_sub(run.reserve) as usize;
        let haystack = run.required_haystack(NAME)?;
        let mut stream = haystack
            .stream(&run.tokenizer, Rng::from_key(c.key, Stream::Haystack), None)?
            .with_screen(Self::screen(&c));
        let placement = Placement {
            in_order: true,
            window: None,
        };
        let fitted = fit_placed(
            &run.tokenizer,
            &frame,
            &needles,
            &mut stream,
            budget,
            placement,
        )?;
        let answers = c.chains[0].clone();
        let mut p = self.content_params();
        p["assignments"] = json!(c
            .assignments
            .iter()
            .map(|(v, s)| json!([v, s]))
            .collect::<Vec<_>>());
        p["query_value"] = json!(c.values[0]);
        p["screened_units"] = json!(stream.screened_units());
        Ok(Instance {
            question,
            answer_prefix,
            target: answers.join(", "),
            answers,
            metric: Metric::All,
            params: canonical_json(&p),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }
}

/// The variables holding `value` after the `assignments` ([variable, source] pairs, in
/// order) are carried out: what a reader of the text can work out, so tests recompute answers
/// from `params` with it.
pub fn holders(assignments: &[(String, String)], value: &str) -> Vec<String> {
    let mut state: std::collections::BTreeMap<&str, String> = std::collections::BTreeMap::new();
    for (var, source) in assignments {
        let v = state
            .get(source.as_str())
            .cloned()
            .unwrap_or_else(|| source.clone());
        state.insert(var, v);
    }
    assignments
        .iter()
        .map(|(v, _)| v)
        .filter(|v| state.get(v.as_str()).is_some_and(|x| x == value))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::haystack::{Haystack, HaystackKind};
    use crate::{Template, Tokenizer};

    fn run(kind: HaystackKind, tok: Tokenizer) -> Run {
        Run {
            haystack: Some(Haystack::prepare(kind, None, &tok).unwrap()),
            tokenizer: tok,
            template: Template::compile(
                NAME,
                crate::tasks::builtin_template(NAME, "default").unwrap(),
            )
            .unwrap(),
            seed: 3.into(),
            reserve: 30,
            reader: Default::default(),
        }
    }

    #[test]
    fn answers_are_what_the_assignments_give_over_many_seeds() {
        for (i, tok) in [Tokenizer::O200k, Tokenizer::Cl100k, Tokenizer::Words]
            .into_iter()
            .enumerate()
        {
            let mut run = run(HaystackKind::Generated, tok);
            for seed in 0..12u64 {
                run.seed = seed.into();
                let chains = 1 + (seed % 3) as u32;
                let hops = 1 + (seed % 5) as u32;
                let task = VtParams { chains, hops }.build().unwrap();
                let depth = (seed * 9 % 101) as f64;
                let cell = Cell {
                    length: 1500 + 300 * i as u64,
                    depth: Some(depth),
                    sample: seed,
                    slot: seed,
                };
                let inst = task.generate(&run, &cell).unwrap();
                let p: serde_json::Value = serde_json::from_str(&inst.params).unwrap();
                let asg: Vec<(String, String)> = p["assignments"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| (a[0].as_str().unwrap().into(), a[1].as_str().unwrap().into()))
                    .collect();
                assert_eq!(asg.len() as u32, chains * (hops + 1));
                let value = p["query_value"].as_str().unwrap();
                let mut want = holders(&asg, value);
                let mut got = inst.answers.clone();
                want.sort();
                got.sort();
                assert_eq!(got, want, "seed {seed}");
                assert_eq!(got.len() as u32, hops + 1);
                // Every assignment is in the text, in order, once.
                let mut from = 0;
                for (v, s) in &asg {
                    let sentence = assignment_sentence(v, s);
                    assert_eq!(inst.input.matches(&sentence).count(), 1);
                    let at = inst.input[from..].find(&sentence).unwrap() + from;
                    from = at + 1;
                }
                assert_eq!(
                    inst.length as usize,
                    run.tokenizer.count(&inst.input).unwrap()
                );
                let budget = cell.length as usize - 30;
                assert!(
                    inst.prompt_tokens as usize <= budget
                        && inst.prompt_tokens as usize + crate::fit::tolerance(budget) >= budget
                );
                assert!((inst.needle_depths[0] - depth).abs() <= 8.0, "{inst:?}");
            }
        }
    }

    #[test]
    fn holders_follow_copies_not_names() {
        let a = |v: &str, s: &str| (v.to_string(), s.to_string());
        let asg = vec![
            a("AAAAA", "12345"),
            a("BBBBB", "54321"),
            a("CCCCC", "AAAAA"),
            a("DDDDD", "BBBBB"),
            a("EEEEE", "CCCCC"),
        ];
        assert_eq!(holders(&asg, "12345"), ["AAAAA", "CCCCC", "EEEEE"]);
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert_eq!(
            VtParams { chains: 0, hops: 4 }.build().unwrap_err().param,
            "chains"
        );
        assert_eq!(
            VtParams {
                chains: 1,
                hops: 101
            }
            .build()
            .unwrap_err()
            .param,
            "hops"
        );
    }
}
