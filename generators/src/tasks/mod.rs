//! One module per task, and the registry that names them.
//!
//! A task is its module (generation), its parameter struct (what a recipe records) and its
//! template. Registering it is one line in [`tasks!`] below, which gives [`TaskParams`] its
//! variant, its serde tag and its dispatch.

pub mod arith;
pub mod babilong;
pub mod cwe;
pub mod fwe;
pub mod needlechain;
pub mod niah;
pub mod posgen;
pub mod qa;
pub mod sort;
pub mod vt;

use serde::{Deserialize, Serialize};

use crate::{ParamError, Task};

/// One part of a dataset: a task (one config), and the split it is written to when the task
/// decides that itself (posgen's train and test) rather than the run.
pub struct Part {
    /// The split this part goes to; `None` means the run's split.
    pub split: Option<&'static str>,
    /// The task that generates the part's rows.
    pub task: Box<dyn Task>,
}

impl Part {
    fn of(task: impl Task + 'static) -> Part {
        Part {
            split: None,
            task: Box::new(task),
        }
    }
}

/// What every parameter struct provides, so the registry can dispatch to it.
pub trait Params {
    /// Check every parameter and make the parts a dataset of these parameters holds.
    fn parts(&self) -> Result<Vec<Part>, ParamError>;
    /// Whether the task has a size of its own, so that a length target is optional (posgen
    /// sequences, arith operands, a fixed number of sort items in plain text).
    fn native_size(&self) -> bool {
        false
    }
}

impl Params for niah::NiahParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(vec![Part::of(self.build()?)])
    }
}

impl Params for needlechain::NeedlechainParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(vec![Part::of(self.build()?)])
    }
}

impl Params for posgen::PosgenParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        let both = self.split == posgen::PosgenSplit::Both;
        Ok(self
            .build()?
            .into_iter()
            .map(|task| Part {
                split: both.then(|| {
                    if task.split == "train" {
                        "train"
                    } else {
                        "test"
                    }
                }),
                task: Box::new(task),
            })
            .collect())
    }

    fn native_size(&self) -> bool {
        true
    }
}

impl Params for sort::SortParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(vec![Part::of(self.build()?)])
    }

    fn native_size(&self) -> bool {
        self.items.is_some() && !self.hidden
    }
}

impl Params for arith::ArithParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(vec![Part::of(self.build()?)])
    }

    fn native_size(&self) -> bool {
        self.op != arith::Op::Sum
    }
}

impl Params for vt::VtParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(vec![Part::of(self.build()?)])
    }
}

impl Params for cwe::CweParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(vec![Part::of(self.build()?)])
    }
}

impl Params for fwe::FweParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(vec![Part::of(self.build()?)])
    }
}

impl Params for qa::QaParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(vec![Part::of(self.build()?)])
    }
}

impl Params for babilong::params::BabilongParams {
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(self.build()?.into_iter().map(Part::of).collect())
    }
}

/// Declares the registry: `Variant(ParamsType) = "name", "one-line description"`.
macro_rules! tasks {
    ($($variant:ident($params:ty) = $name:literal, $about:literal;)+) => {
        /// Every task's parameters: what a recipe, a manifest or a suite entry names. Serialized
        /// with the task's name under `task` beside its fields, as manifests hold it.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "task", rename_all = "snake_case")]
        pub enum TaskParams {
            $(
                #[doc = $about]
                $variant($params),
            )+
        }

        /// Names and one-line descriptions of the tasks, in registry order.
        pub const TASKS: &[(&str, &str)] = &[$(($name, $about)),+];

        impl TaskParams {
            /// The task's name (`niah`).
            pub fn name(&self) -> &'static str {
                match self {
                    $(TaskParams::$variant(_) => $name,)+
                }
            }

            fn as_params(&self) -> &dyn Params {
                match self {
                    $(TaskParams::$variant(p) => p,)+
                }
            }
        }
    };
}

tasks! {
    Niah(niah::NiahParams) = "niah",
        "needle in a haystack: find the values of keys hidden in long text (RULER's NIAH family)";
    Needlechain(needlechain::NeedlechainParams) = "needlechain",
        "a context made only of relevant facts: salary chains (NeedleChain) or kinship chains (Ancestral Trace)";
    Posgen(posgen::PosgenParams) = "posgen",
        "position generalisation: integer sequences mod m where each token depends on earlier ones";
    Sort(sort::SortParams) = "sort",
        "sort N numbers or words (or labels by value), optionally hidden in a haystack";
    Arith(arith::ArithParams) = "arith",
        "add, subtract or multiply at any digit count and layout; or sum numbers hidden in text";
    Babilong(babilong::params::BabilongParams) = "babilong",
        "bAbI reasoning stories (qa1-qa20) simulated afresh and hidden in text of any length (BABILong)";
    Vt(vt::VtParams) = "vt",
        "variable tracking: chains of assignments hidden in text; name every variable holding a value (RULER)";
    Cwe(cwe::CweParams) = "cwe",
        "common words extraction: name the words a long list repeats most often (RULER)";
    Fwe(fwe::FweParams) = "fwe",
        "frequent words extraction: name the most frequent coded words of a Zipf-distributed text (RULER)";
    Qa(qa::QaParams) = "qa",
        "document QA over your SQuAD or HotpotQA file: gold paragraphs among distractors, at any depth (RULER)";
}

impl TaskParams {
    /// Check every parameter and make the parts (configs and their splits), in order.
    pub fn parts(&self) -> Result<Vec<Part>, ParamError> {
        self.as_params().parts()
    }

    /// Whether the task has a size of its own, so that a length target is optional.
    pub fn native_size(&self) -> bool {
        self.as_params().native_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_serialize_as_manifests_spell_them() {
        let p = TaskParams::Niah(niah::NiahParams::variant(niah::NiahVariant::Multikey));
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            json,
            r#"{"task":"niah","keys":4,"values":1,"queries":1,"key_type":"words","value_type":"numbers","absent":false,"spread":"random"}"#
        );
        assert_eq!(serde_json::from_str::<TaskParams>(&json).unwrap(), p);
        let old = r#"{"task":"posgen","variant":"semi_recursive","modulus":17,"near":3,"far":1,"op":"add","train_len":64,"test_len":256,"split":"both","overlap":false,"explain":false}"#;
        let p: TaskParams = serde_json::from_str(old).unwrap();
        let parts = p.parts().unwrap();
        let splits: Vec<_> = parts.iter().map(|p| p.split).collect();
        assert_eq!(splits, vec![Some("train"), Some("test")]);
        assert_eq!(parts[0].task.variant(), "semi_recursive");
    }
}
