//! `needlechain`: a context made entirely of relevant facts (NeedleChain's structure), and the
//! kinship chains of NeedleBench's Ancestral Trace Challenge.
//!
//! A model that finds one needle in 128k tokens may still fail to use *every* sentence of a short
//! context. Salary chains state one person's pay and relate each next person to the previous one
//! (twice, half, the same); kinship chains say who is whose parent or grandparent. We keep every
//! amount a whole number (the exponent of 2 is bounded along the whole chain), list the people in
//! an order that does not reveal the chain, format numbers one way, and seed everything.

mod names;
mod size;
mod wording;

use serde_json::json;

use crate::fit::render::render_facts;
use crate::fit::{fit_placed, tolerance, NeedleSpec, Placement};
use crate::haystack::Screen;
use crate::rng::{Coordinates, Rng, Stream};
use crate::tasks::Params;
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use names::NameDraw;
use serde::{Deserialize, Serialize};
use size::largest_fitting_size;

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "needlechain";
/// One line saying what the task is.
pub const ABOUT: &str = "a context made only of relevant facts: salary chains (NeedleChain) or kinship chains (Ancestral Trace)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] = &[(
    "default",
    include_str!("../../../templates/needlechain/default.j2"),
)];

const FIRST_NAMES: &str = include_str!("../../../haystacks/vocab/first_names.txt");
const SURNAMES: &str = include_str!("../../../haystacks/vocab/surnames.txt");

/// Answer budget: the answer is one number or one name.
pub const MAX_NEW_TOKENS: u32 = 32;

/// The start of the model's answer, read right after the prompt.
const ANSWER_PREFIX: &str = "Answer:";
/// Largest exponent of 2 between the smallest and the largest amount of a salary chain.
pub const MAX_EXPONENT: u32 = 12;
/// Longest chain `--len` may pick, and the most facts `--chain` takes: enough to fill the
/// longest supported target (64 Mi tokens) with any built-in tokenizer, whose densest count a
/// fact and its name in the list at about ten tokens.
pub const MAX_CHAIN: u32 = 10_000_000;
/// Chain length when a haystack is given without `--chain`.
pub const DILUTED_CHAIN: u32 = 10;

choice! {
    /// What the chain is about.
    pub enum Kind {
        /// Weekly pay related by twice / half / the same.
        Salary = "salary",
        /// Parent and grandparent relations.
        Kinship = "kinship",
    }
}

choice! {
    /// In which order facts appear.
    pub enum Order {
        /// Chain order, anchor first.
        Forward = "forward",
        /// Reverse chain order, anchor last.
        Backward = "backward",
        /// A random permutation other than forward and backward (for 3 or more facts).
        Shuffled = "shuffled",
        /// Every amount stated on its own (salary only): the NIAH-like control.
        Parallel = "parallel",
    }
}

choice! {
    /// What is asked.
    pub enum Question {
        /// Salary: the last person's amount.
        Single = "single",
        /// Salary: the sum over everyone.
        Total = "total",
        /// Kinship: the eldest ancestor of the last person.
        Eldest = "eldest",
        /// Kinship: the ancestor a random number of generations above the last person.
        Ancestor = "ancestor",
        /// Kinship: generations between the first and the last person.
        Distance = "distance",
    }
}

impl Kind {
    /// The question asked when none is chosen.
    pub fn default_question(self) -> Question {
        match self {
            Kind::Salary => Question::Single,
            Kind::Kinship => Question::Eldest,
        }
    }
}

/// needlechain's parameters, spelled as manifests record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeedlechainParams {
    /// Salary or kinship.
    pub kind: Kind,
    /// Fact order.
    pub order: Order,
    /// What is asked.
    pub question: Question,
    /// Exact number of facts, or None to take the largest that fits the length.
    pub chain: Option<u32>,
    /// Whether the facts are diluted in a haystack (then depths apply).
    pub diluted: bool,
}

impl Params for NeedlechainParams {
    type Built = NeedleChain;

    /// Check every parameter and make the task.
    fn build(&self) -> Result<NeedleChain, ParamError> {
        let (kind, order, question) = (self.kind, self.order, self.question);
        let fits = match kind {
            Kind::Salary => matches!(question, Question::Single | Question::Total),
            Kind::Kinship => !matches!(question, Question::Single | Question::Total),
        };
        if !fits {
            return Err(ParamError::new(
                "question",
                question,
                match kind {
                    Kind::Salary => "single or total (salary)",
                    Kind::Kinship => "eldest, ancestor or distance (kinship)",
                },
            ));
        }
        if kind == Kind::Kinship && order == Order::Parallel {
            return Err(ParamError::new(
                "order",
                order,
                "forward, backward or shuffled for kinship chains (kinship facts are never independent)",
            ));
        }
        let min = match kind {
            Kind::Salary => 1,
            Kind::Kinship => 2,
        };
        if let (Some(k), Order::Shuffled) = (self.chain, order) {
            if k < 3 {
                return Err(ParamError::new(
                    "chain",
                    k,
                    "3 or more facts for the shuffled order (shorter chains only read forward or backward)",
                ));
            }
        }
        if let Some(k) = self.chain {
            if k < min || k > MAX_CHAIN {
                return Err(ParamError::new(
                    "chain",
                    k,
                    format!("{min} to {MAX_CHAIN} facts for {kind} chains"),
                ));
            }
        }
        let words = |s: &'static str| -> Vec<&'static str> {
            s.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
        };
        Ok(NeedleChain {
            params: self.clone(),
            first_names: words(FIRST_NAMES),
            surnames: words(SURNAMES),
        })
    }
}

/// Validated needlechain parameters with the name lists they draw from.
#[derive(Debug, Clone)]
pub struct NeedleChain {
    /// The checked parameters.
    pub params: NeedlechainParams,
    first_names: Vec<&'static str>,
    surnames: Vec<&'static str>,
}

impl NeedleChain {
    /// The resolved question name (`single`, `eldest`, ...).
    pub fn question_name(&self) -> &'static str {
        self.params.question.as_str()
    }

    fn content_params(&self) -> serde_json::Value {
        json!({
            "kind": self.params.kind.as_str(),
            "order": self.params.order.as_str(),
            "question": self.params.question.as_str(),
            "chain": self.params.chain,
            "diluted": self.params.diluted,
            "max_exponent": MAX_EXPONENT,
        })
    }

    /// The smallest chain `--len` may pick: one salary, one kinship link (two people), and
    /// three facts for the shuffled order, which shorter chains could only read forward or
    /// backward (the same floor `--chain` has).
    fn min_chain(&self) -> u32 {
        match (self.params.kind, self.params.order) {
            (_, Order::Shuffled) => 3,
            (Kind::Salary, _) => 1,
            (Kind::Kinship, _) => 2,
        }
    }

    /// The chain with `k` facts. Names, relations and sentence forms come from their own
    /// streams, drawn link by link, so the chain of k facts is a prefix of every longer chain of
    /// the same instance: more facts never mean a different story, and prompt length grows
    /// steadily with k (see [`NameDraw`]).
    fn chain(&self, k: usize, coords: &Coordinates<'_>) -> Chain {
        let mut rel = coords.rng(Stream::Relations);
        let mut draw = NameDraw::new(&self.first_names, &self.surnames, coords.rng(Stream::Names));
        let people: Vec<String> = (0..k + usize::from(self.params.kind == Kind::Kinship))
            .map(|_| draw.next_name())
            .collect();
        match self.params.kind {
            Kind::Salary => {
                let unit = rel.range_inclusive(3, 60) * 25;
                let mut exponent = rel.range_inclusive(0, MAX_EXPONENT as u64) as u32;
                let mut links = Vec::with_capacity(k);
                for i in 0..k {
                    let relation = if i == 0 {
                        Relation::Anchor
                    } else {
                        let mut allowed = vec![Relation::Same];
                        if exponent < MAX_EXPONENT {
                            allowed.push(Relation::Double);
                        }
                        if exponent > 0 {
                            allowed.push(Relation::Half);
                        }
                        let r = *rel.choose(&allowed);
                        match r {
                            Relation::Double => exponent += 1,
                            Relation::Half => exponent -= 1,
                            _ => {}
                        }
                        r
                    };
                    links.push(Link {
                        person: i,
                        relation,
                        of: i.checked_sub(1),
                        value: unit << exponent,
                        form: rel.next_u64(),
                    });
                }
                Chain { links, people }
            }
            Kind::Kinship => {
                let links = (0..k)
                    .map(|i| {
                        let grand = rel.chance(1, 3);
                        Link {
                            person: i,
                            relation: if grand {
                                Relation::Grandparent
                            } else {
                                Relation::Parent
                            },
                            of: Some(i + 1),
                            value: if grand { 2 } else { 1 },
                            form: rel.next_u64(),
                        }
                    })
                    .collect();
                Chain { links, people }
            }
        }
    }

    /// What a haystack sentence must not mention: everyone in the chain and, for salaries,
    /// every amount a fact states.
    fn screen(&self, chain: &Chain) -> Screen {
        let mut screen = Screen::new(&chain.people);
        if self.params.kind == Kind::Salary {
            for link in &chain.links {
                screen.add(&link.value.to_string());
            }
        }
        screen
    }

    /// Question text, target, and the name asked about.
    fn ask(&self, chain: &Chain, rng: &mut Rng) -> (String, String, Option<String>) {
        let links = &chain.links;
        match self.params.question {
            Question::Single => {
                let last = links
                    .last()
                    .map(|l| chain.people[l.person].clone())
                    .unwrap_or_default();
                (
                    format!("How many credits per week is {last} paid?"),
                    links.last().map_or(0, |l| l.value).to_string(),
                    Some(last),
                )
            }
            Question::Total => (
                format!(
                    "How many credits per week are all {} people paid together?",
                    links.len()
                ),
                links.iter().map(|l| l.value).sum::<u64>().to_string(),
                None,
            ),
            Question::Eldest => {
                let last = chain.people.last().cloned().unwrap_or_default();
                (
                    format!("Who is the earliest ancestor of {last} that the statements name?"),
                    chain.people[0].clone(),
                    Some(last),
                )
            }
            Question::Ancestor => {
                // Generations of each person below the eldest.
                let mut gen = vec![0u64];
                for l in links {
                    gen.push(gen.last().copied().unwrap_or(0) + l.value);
                }
                let last_gen = *gen.last().unwrap_or(&0);
                let candidates: Vec<usize> = (0..gen.len() - 1).collect();
                let pick = *rng.choose(&candidates);
                let n = last_gen - gen[pick];
                let last = chain.people.last().cloned().unwrap_or_default();
                (
                    format!("Who is the ancestor of {last} exactly {n} generations above {last}?"),
                    chain.people[pick].clone(),
                    Some(last),
                )
            }
            Question::Distance => {
                let total: u64 = links.iter().map(|l| l.value).sum();
                let (first, last) = (
                    chain.people[0].clone(),
                    chain.people.last().cloned().unwrap_or_default(),
                );
                (
                    format!("How many generations separate {first} and {last}?"),
                    total.to_string(),
                    Some(last),
                )
            }
        }
    }

    /// Indices of the chain facts in the order they are rendered.
    fn rendered_order(&self, k: usize, rng: &mut Rng) -> Vec<usize> {
        match self.params.order {
            Order::Forward | Order::Parallel => (0..k).collect(),
            Order::Backward => (0..k).rev().collect(),
            Order::Shuffled => {
                let mut idx: Vec<usize> = (0..k).collect();
                let forward: Vec<usize> = (0..k).collect();
                let backward: Vec<usize> = (0..k).rev().collect();
                for _ in 0..64 {
                    rng.shuffle(&mut idx);
                    if k < 3 || (idx != forward && idx != backward) {
                        break;
                    }
                }
                idx
            }
        }
    }

    /// Everything about one instance with `k` facts except its length fitting.
    fn build(&self, k: usize, coords: &Coordinates<'_>, run: &Run) -> Result<Built, GenError> {
        let chain = self.chain(k, coords);
        let mut placement = coords.rng(Stream::Placement);
        let order = self.rendered_order(k, &mut placement);
        let (question, target, asked) = self.ask(&chain, &mut placement);
        let facts: Vec<String> = order
            .iter()
            .map(|&i| {
                let link = &chain.links[i];
                self.fact(&chain, link, self.wordings(link).1)
            })
            .collect();
        let mut people: Vec<&str> = chain.people.iter().map(String::as_str).collect();
        people.sort_unstable();
        let mut vars = vars([("question", &question), ("kind", self.params.kind.as_str())]);
        vars.insert("people", json!(people));
        let frame = run.frame(&vars, ANSWER_PREFIX)?;
        Ok(Built {
            chain,
            order,
            question,
            target,
            asked,
            facts,
            frame,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relation {
    Anchor,
    Double,
    Half,
    Same,
    Independent,
    Parent,
    Grandparent,
}

impl Relation {
    fn as_str(self) -> &'static str {
        match self {
            Relation::Anchor => "anchor",
            Relation::Double => "double",
            Relation::Half => "half",
            Relation::Same => "same",
            Relation::Independent => "independent",
            Relation::Parent => "parent",
            Relation::Grandparent => "grandparent",
        }
    }
}

#[derive(Debug, Clone)]
struct Link {
    /// Index in `Chain::people` of the person the fact is about.
    person: usize,
    relation: Relation,
    /// Index in `Chain::people` of the person related to.
    of: Option<usize>,
    value: u64,
    /// Picks the sentence form, and the order in which facts are reworded to fill a budget.
    form: u64,
}

#[derive(Debug, Clone)]
struct Chain {
    links: Vec<Link>,
    /// Everyone in chain order (kinship: one more person than facts).
    people: Vec<String>,
}

struct Built {
    chain: Chain,
    order: Vec<usize>,
    question: String,
    target: String,
    asked: Option<String>,
    facts: Vec<String>,
    frame: crate::Frame,
}

impl Task for NeedleChain {
    /// The chain: its people, relations and amounts.
    fn identity(&self, instance: &Instance) -> Vec<String> {
        crate::identity::fact_key(instance, "chain", "chain")
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        format!(
            "{}_{}",
            self.params.kind.as_str(),
            self.params.order.as_str()
        )
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    fn uses_haystack(&self) -> bool {
        self.params.diluted
    }

    fn default_reserve(&self) -> u32 {
        MAX_NEW_TOKENS
    }

    fn example_vars(&self) -> Vars {
        let mut v = vars([
            ("question", "How many credits per week is Ada paid?"),
            ("kind", self.params.kind.as_str()),
        ]);
        v.insert("people", json!(["Ada", "Bo"]));
        v
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = Coordinates::sizing(NAME, &params, run.seed);
        let k = self.params.chain.unwrap_or(if self.params.diluted {
            DILUTED_CHAIN
        } else {
            self.min_chain()
        }) as usize;
        let built = self.build(k, &coords, run)?;
        let fitted = render_facts(&run.tokenizer, &built.frame, &built.facts)?;
        Ok((fitted.prompt_tokens as u64 * 11).div_ceil(10) + 16 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates(NAME, &params, cell);
        let budget = cell.length.saturating_sub(run.reserve) as usize;
        let tok = &run.tokenizer;
        let mut screened = None;
        let (built, fitted) = if self.params.diluted {
            let k = self.params.chain.unwrap_or(DILUTED_CHAIN) as usize;
            let built = self.build(k, &coords, run)?;
            let haystack = run.required_haystack("a diluted needlechain")?;
            // The first rendered fact at the requested depth, the rest after it in order.
            let first = cell.depth.unwrap_or(50.0);
            let mut placement = coords.rng(Stream::Placement);
            let mut depths: Vec<f64> = (1..k)
                .map(|_| first + (100.0 - first) * placement.unit_f64())
                .collect();
            depths.sort_by(f64::total_cmp);
            let needles: Vec<NeedleSpec> = built
                .facts
                .iter()
                .zip(std::iter::once(first).chain(depths))
                .map(|(text, depth)| NeedleSpec {
                    text: text.clone(),
                    depth,
                })
                .collect();
            let mut stream = haystack
                .stream(tok, Rng::from_key(coords.key(), Stream::Haystack), None)?
                .with_screen(self.screen(&built.chain));
            // Facts keep their rendered order even where two share a gap or their nearest
            // boundaries cross.
            let place = Placement {
                in_order: true,
                window: None,
            };
            let fitted = fit_placed(tok, &built.frame, &needles, &mut stream, budget, place)?;
            screened = Some(stream.screened_units());
            (built, fitted)
        } else if let Some(k) = self.params.chain {
            let built = self.build(k as usize, &coords, run)?;
            let fitted = render_facts(tok, &built.frame, &built.facts)?;
            if fitted.prompt_tokens > budget {
                return Err(GenError::TooShort {
                    budget,
                    needed: fitted.prompt_tokens,
                });
            }
            (built, fitted)
        } else {
            let max = MAX_CHAIN as usize;
            let (k, (mut built, fitted), _) =
                largest_fitting_size(self.min_chain() as usize, max, budget, |k| {
                    let built = self.build(k, &coords, run)?;
                    let fitted = render_facts(tok, &built.frame, &built.facts)?;
                    let len = fitted.prompt_tokens;
                    Ok(((built, fitted), len))
                })?;
            let fitted = self.reword_to_fill(&mut built, fitted, run, budget)?;
            if k == max && budget - fitted.prompt_tokens > tolerance(budget) {
                return Err(GenError::BadParams(format!(
                    "a target of {} tokens cannot be reached: a needlechain of at most {MAX_CHAIN} facts fills {} of its {budget}-token budget",
                    cell.length, fitted.prompt_tokens
                )));
            }
            (built, fitted)
        };
        let chain_json: Vec<serde_json::Value> = built
            .chain
            .links
            .iter()
            .map(|l| {
                let relation = if self.params.order == Order::Parallel {
                    Relation::Independent
                } else {
                    l.relation
                };
                let of = match relation {
                    Relation::Independent => None,
                    _ => l.of.map(|i| built.chain.people[i].as_str()),
                };
                json!({"name": built.chain.people[l.person], "relation": relation.as_str(), "of": of, "value": l.value})
            })
            .collect();
        let mut params = self.content_params();
        params["chain"] = json!(chain_json);
        params["rendered_order"] = json!(built.order);
        params["asked"] = json!(built.asked);
        params["question_text"] = json!(built.question);
        params["people"] = json!(built.chain.people.len());
        if let Some(n) = screened {
            params["screened_units"] = json!(n);
        }
        Ok(Instance {
            question: built.question,
            answer_prefix: ANSWER_PREFIX.into(),
            target: built.target.clone(),
            answers: vec![built.target],
            metric: Metric::Exact,
            params: canonical_json(&params),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::BTreeSet;

    /// Build from names, as a command line would give them.
    fn chain_task(
        kind: &str,
        order: &str,
        question: Option<&str>,
        chain: Option<u32>,
        diluted: bool,
    ) -> Result<NeedleChain, String> {
        let kind: Kind = kind
            .parse()
            .map_err(|e: crate::choice::ChoiceError| e.to_string())?;
        let question = match question {
            Some(q) => q
                .parse()
                .map_err(|e: crate::choice::ChoiceError| e.to_string())?,
            None => kind.default_question(),
        };
        NeedlechainParams {
            kind,
            order: order
                .parse()
                .map_err(|e: crate::choice::ChoiceError| e.to_string())?,
            question,
            chain,
            diluted,
        }
        .build()
        .map_err(|e| e.to_string())
    }
    use crate::{Template, Tokenizer};

    fn run() -> Run {
        Run {
            haystack: None,
            tokenizer: Tokenizer::O200k,
            template: Template::compile(
                "default.j2",
                crate::tasks::builtin_template(NAME, "default").unwrap(),
            )
            .unwrap(),
            seed: 3.into(),
            reserve: 32,
            reader: Default::default(),
        }
    }

    fn recompute_salary(chain: &[serde_json::Value]) -> Vec<u64> {
        let mut out: Vec<u64> = Vec::new();
        for l in chain {
            let v = match l["relation"].as_str().unwrap() {
                "anchor" | "independent" => l["value"].as_u64().unwrap(),
                "double" => out.last().unwrap() * 2,
                "half" => {
                    let p = out.last().unwrap();
                    assert_eq!(p % 2, 0, "halving an odd amount");
                    p / 2
                }
                "same" => *out.last().unwrap(),
                r => panic!("{r}"),
            };
            out.push(v);
        }
        out
    }

    #[test]
    fn salary_answers_follow_from_the_chain() {
        let run = run();
        for order in ["forward", "backward", "shuffled", "parallel"] {
            for question in ["single", "total"] {
                let task = chain_task("salary", order, Some(question), None, false).unwrap();
                let inst = task
                    .generate(
                        &run,
                        &Cell {
                            length: 2048,
                            depth: None,
                            sample: 1,
                            slot: 1,
                        },
                    )
                    .unwrap();
                let p: serde_json::Value = serde_json::from_str(&inst.params).unwrap();
                let chain = p["chain"].as_array().unwrap();
                let values = recompute_salary(chain);
                for (v, l) in values.iter().zip(chain) {
                    assert_eq!(*v, l["value"].as_u64().unwrap());
                }
                let want = if question == "single" {
                    *values.last().unwrap()
                } else {
                    values.iter().sum()
                };
                assert_eq!(inst.target, want.to_string(), "{order} {question}");
                assert!(inst.prompt_tokens <= 2048 - 32);
                assert!(chain.len() > 20, "{}", chain.len());
                assert_eq!(
                    inst.length as usize,
                    run.tokenizer.count(&inst.input).unwrap()
                );
                let mut offs = inst.needle_offsets.clone();
                offs.sort();
                assert_eq!(
                    offs, inst.needle_offsets,
                    "offsets increase along the input"
                );
            }
        }
    }

    #[test]
    fn long_chains_stay_integral_and_bounded() {
        let run = run();
        let task = chain_task("salary", "shuffled", Some("total"), Some(200), false).unwrap();
        let inst = task
            .generate(
                &run,
                &Cell {
                    length: 16384,
                    depth: None,
                    sample: 0,
                    slot: 0,
                },
            )
            .unwrap();
        let p: serde_json::Value = serde_json::from_str(&inst.params).unwrap();
        let values: Vec<u64> = p["chain"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["value"].as_u64().unwrap())
            .collect();
        assert_eq!(values.len(), 200);
        let min = *values.iter().min().unwrap();
        let max = *values.iter().max().unwrap();
        assert!(max / min <= 1 << MAX_EXPONENT);
        assert_eq!(recompute_salary(p["chain"].as_array().unwrap()), values);
    }

    #[test]
    fn kinship_eldest_ancestor() {
        let run = run();
        let task = chain_task("kinship", "shuffled", None, Some(12), false).unwrap();
        let inst = task
            .generate(
                &run,
                &Cell {
                    length: 4096,
                    depth: None,
                    sample: 0,
                    slot: 0,
                },
            )
            .unwrap();
        let p: serde_json::Value = serde_json::from_str(&inst.params).unwrap();
        let chain = p["chain"].as_array().unwrap();
        // The eldest is the one who is nobody's child.
        let children: BTreeSet<&str> = chain.iter().map(|l| l["of"].as_str().unwrap()).collect();
        let eldest: Vec<&str> = chain
            .iter()
            .map(|l| l["name"].as_str().unwrap())
            .filter(|n| !children.contains(n))
            .collect();
        assert_eq!(eldest, vec![inst.target.as_str()]);
    }

    /// The prompt tokens of the chain with `k` facts of sample `sample`.
    fn tokens_at(task: &NeedleChain, run: &Run, k: usize, sample: u64) -> usize {
        let params = canonical_json(&task.content_params());
        let coords = Coordinates {
            task: NAME,
            params: &params,
            seed: run.seed,
            length: 0,
            depth: None,
            sample,
        };
        let built = task.build(k, &coords, run).unwrap();
        render_facts(&run.tokenizer, &built.frame, &built.facts)
            .unwrap()
            .length
    }

    /// One more fact adds one fact's worth of tokens at every size, also across 244 people,
    /// where names used to switch from first names to full names: the prompt jumped by about
    /// 1400 tokens there, so every budget inside the jump got a 244-person chain far short of it.
    #[test]
    fn prompt_grows_by_one_fact_at_every_size() {
        let run = run();
        for (kind, order) in [
            ("salary", "forward"),
            ("salary", "shuffled"),
            ("salary", "parallel"),
            ("kinship", "backward"),
        ] {
            let task = chain_task(kind, order, None, None, false).unwrap();
            let mut before = tokens_at(&task, &run, 236, 1);
            for k in 237..=252 {
                let now = tokens_at(&task, &run, k, 1);
                let step = now as i64 - before as i64;
                assert!(
                    (1..=40).contains(&step),
                    "{kind} {order}: fact {k} adds {step} tokens"
                );
                before = now;
            }
        }
    }

    /// Budgets where one fact (with its name) is worth more than the tolerance are still
    /// filled within it; kinship chains used to stop up to 28 tokens short of 16-token windows.
    #[test]
    fn short_budgets_fill_within_tolerance() {
        let run = run();
        for (kind, order) in [
            ("salary", "forward"),
            ("salary", "shuffled"),
            ("salary", "parallel"),
            ("kinship", "forward"),
            ("kinship", "shuffled"),
        ] {
            let task = chain_task(kind, order, None, None, false).unwrap();
            for length in (700u64..=4200).step_by(233) {
                for sample in 0..3 {
                    let cell = Cell {
                        length,
                        depth: None,
                        sample,
                        slot: sample,
                    };
                    let inst = task.generate(&run, &cell).unwrap();
                    let budget = length as usize - 32;
                    let got = inst.prompt_tokens as usize;
                    assert!(
                        got <= budget && got + tolerance(budget) >= budget,
                        "{kind} {order} at {length}, sample {sample}: {got} of {budget}"
                    );
                    let read = format!("{}{}", inst.input, inst.answer_prefix);
                    assert_eq!(got, run.tokenizer.count(&read).unwrap());
                    assert_eq!(
                        inst.length as usize,
                        run.tokenizer.count(&inst.input).unwrap()
                    );
                }
            }
        }
    }

    #[test]
    fn bad_chains_are_rejected() {
        assert!(chain_task("salary", "forward", None, Some(0), false).is_err());
        assert!(chain_task("kinship", "forward", None, Some(1), false).is_err());
        assert!(chain_task("salary", "sideways", None, None, false).is_err());
        assert!(chain_task("kinship", "parallel", None, None, false).is_err());
    }
}
