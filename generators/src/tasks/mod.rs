//! One module per task, and the registry that names them.
//!
//! A task is its module (generation), its parameter struct (what a recipe records) and its
//! template. Registering it is one line in [`tasks!`] below, which gives [`TaskParams`] its
//! variant, its serde tag and its dispatch.

pub mod arith;
pub mod babilong;
pub mod cwe;
pub mod fwe;
pub mod graphwalks;
pub mod needlechain;
pub mod niah;
pub mod posgen;
pub mod qa;
pub mod ruler2;
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
    /// A part written to the run's split.
    pub fn of(task: impl Task + 'static) -> Part {
        Part {
            split: None,
            task: Box::new(task),
        }
    }
}

/// What RULER calls the haystack a config was made over, which with the task's parameters
/// names the RULER task it reproduces ([`Task::ruler_task`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulerHaystack {
    /// Repeated filler sentences (ours: `noise`).
    Noise,
    /// Running prose (RULER: Paul Graham's essays; ours: `generated`, or a corpus).
    Essay,
    /// Distractor needles (ours: `needles`).
    Needle,
    /// No haystack.
    None,
}

impl RulerHaystack {
    /// The kind of a recipe's haystack, by the name or path the recipe records.
    pub fn of(recipe_haystack: &str) -> RulerHaystack {
        match recipe_haystack {
            "noise" => RulerHaystack::Noise,
            "needles" => RulerHaystack::Needle,
            "none" | "" => RulerHaystack::None,
            _ => RulerHaystack::Essay,
        }
    }
}

/// What a parameter struct's `build` makes: one task, or one per config (babilong's bAbI
/// tasks), each becoming a part of the dataset.
pub trait Built {
    /// The parts, in generation order.
    fn into_task_parts(self) -> Vec<Part>;
}

impl<T: Task + 'static> Built for T {
    fn into_task_parts(self) -> Vec<Part> {
        vec![Part::of(self)]
    }
}

impl<T: Task + 'static> Built for Vec<T> {
    fn into_task_parts(self) -> Vec<Part> {
        self.into_iter().map(Part::of).collect()
    }
}

/// What every parameter struct provides, so the registry can dispatch to it. Each task
/// implements it beside its parameters; most need only `build`.
pub trait Params {
    /// What [`Params::build`] makes.
    type Built: Built;
    /// Check every parameter and make the task (or tasks).
    fn build(&self) -> Result<Self::Built, ParamError>;
    /// The parts (configs and their splits) a dataset of these parameters holds, in order.
    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        Ok(self.build()?.into_task_parts())
    }
    /// Whether the task has a size of its own, so that a length target is optional (posgen
    /// sequences, arith operands, a fixed number of sort items in plain text).
    fn native_size(&self) -> bool {
        false
    }
    /// Whether a length of 0 means something (babilong's story alone, with no filler).
    fn zero_length(&self) -> bool {
        false
    }
}

/// Declares the registry, one line per task module: `module => Variant(ParamsType)`. The
/// module's `NAME` is the task's name (its serde tag, command and random-stream key), `ABOUT`
/// its one-line description and `TEMPLATES` its built-in templates, the first its default.
macro_rules! tasks {
    ($($module:ident => $variant:ident($params:ty);)+) => {
        /// Every task's parameters: what a recipe, a manifest or a suite entry names. Serialized
        /// with the task's name under `task` beside its fields, as manifests hold it.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "task", rename_all = "snake_case")]
        pub enum TaskParams {
            $(
                #[doc = concat!("`", stringify!($module), "`: see [`", stringify!($module), "`].")]
                $variant($params),
            )+
        }

        /// Names and one-line descriptions of the tasks, in registry order.
        pub const TASKS: &[(&str, &str)] = &[$(($module::NAME, $module::ABOUT)),+];

        /// The built-in templates of the task named `task`, (name, source), the first its
        /// default; empty for an unknown task.
        pub fn templates(task: &str) -> &'static [(&'static str, &'static str)] {
            $(if task == $module::NAME {
                return $module::TEMPLATES;
            })+
            &[]
        }

        impl TaskParams {
            /// The task's name (`niah`).
            pub fn name(&self) -> &'static str {
                match self {
                    $(TaskParams::$variant(_) => $module::NAME,)+
                }
            }

            /// Check every parameter and make the parts (configs and their splits), in order.
            pub fn parts(&self) -> Result<Vec<Part>, ParamError> {
                match self {
                    $(TaskParams::$variant(p) => p.parts(),)+
                }
            }

            /// Whether the task has a size of its own, so that a length target is optional.
            pub fn native_size(&self) -> bool {
                match self {
                    $(TaskParams::$variant(p) => p.native_size(),)+
                }
            }

            /// Whether a length of 0 means something for the task (a story with no filler).
            pub fn zero_length(&self) -> bool {
                match self {
                    $(TaskParams::$variant(p) => p.zero_length(),)+
                }
            }
        }
    };
}

tasks! {
    niah => Niah(niah::NiahParams);
    needlechain => Needlechain(needlechain::NeedlechainParams);
    posgen => Posgen(posgen::PosgenParams);
    sort => Sort(sort::SortParams);
    arith => Arith(arith::ArithParams);
    babilong => Babilong(babilong::params::BabilongParams);
    vt => Vt(vt::VtParams);
    cwe => Cwe(cwe::CweParams);
    fwe => Fwe(fwe::FweParams);
    qa => Qa(qa::QaParams);
    graphwalks => Graphwalks(graphwalks::GraphwalksParams);
    ruler2 => Ruler2(ruler2::Ruler2Params);
}

/// The built-in template `name` of `task`.
pub fn builtin_template(task: &str, name: &str) -> Option<&'static str> {
    templates(task)
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
}

/// A run of `task`'s default template with no haystack, for the tasks' unit tests.
#[cfg(test)]
pub(crate) fn plain_run(task: &str, tok: crate::Tokenizer, seed: u64, reserve: u64) -> crate::Run {
    crate::Run {
        haystack: None,
        tokenizer: tok,
        template: crate::Template::compile(task, builtin_template(task, "default").unwrap())
            .unwrap(),
        seed: seed.into(),
        reserve,
        reader: Default::default(),
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
