//! What makes a dataset fresh, one for all its entries (a command's one, a suite's many): a
//! private split's seed file, opened once so that every entry derives from the one secret and
//! the manifest holds one commitment, and the identities of the datasets it is kept disjoint
//! from, read once and shared.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use crate::run::disjoint::Exclusion;
use crate::run::private::SeedFile;
use crate::run::recipe::{Excluded, Recipe};
use crate::usage::usage;

/// What makes a dataset fresh, one for all its entries: a private split's seed file, and the
/// identities of the datasets it is kept disjoint from (read once, with what recipes record).
#[derive(Default)]
pub struct Fresh {
    /// A private split's seed file (read, or drawn and not yet written).
    pub seed_file: Option<SeedFile>,
    /// The identities the rows must not share.
    pub exclusion: Option<Arc<Exclusion>>,
    /// What every recipe records of the excluded datasets.
    pub excluded: Vec<Excluded>,
}

impl Fresh {
    /// Open the seed file (`private`) and read the excluded datasets (`disjoint`: each as
    /// given and as recorded) of a run writing `out`; nothing is written.
    pub fn open(
        private: bool,
        seed_file: Option<&Path>,
        disjoint: &[(String, String)],
        out: &Path,
    ) -> Result<Fresh> {
        if private && seed_file.is_none() {
            return Err(usage(
                "--private needs --seed-file PATH: the file the secret seed is written to (or read from, to reuse it)",
            ));
        }
        let seed_file = match seed_file {
            Some(path) => Some(SeedFile::open(path, out)?),
            None => None,
        };
        for (g, _) in disjoint {
            if crate::run::private::inside(Path::new(g), out)
                || crate::run::private::inside(out, Path::new(g))
            {
                return Err(usage(format!(
                    "--disjoint-from {g} overlaps --out {}: a split cannot be kept disjoint from itself",
                    out.display()
                )));
            }
        }
        let (exclusion, excluded) = if disjoint.is_empty() {
            (None, Vec::new())
        } else {
            let (exclusion, records) = crate::run::disjoint::load_given(disjoint)?;
            (Some(Arc::new(exclusion)), records)
        };
        Ok(Fresh {
            seed_file,
            exclusion,
            excluded,
        })
    }

    /// The seed every stream derives from: the private secret, else the public `seed`.
    pub fn seed(&self, public: u64) -> needlework_generators::rng::Seed {
        match &self.seed_file {
            Some(f) => f.secret.run_seed(),
            None => public.into(),
        }
    }

    /// Record in `recipe` what the run's freshness is: the commitment, the excluded datasets.
    pub fn record(&self, recipe: &mut Recipe) {
        if let Some(f) = &self.seed_file {
            recipe.private = Some(f.secret.record());
        }
        if !self.excluded.is_empty() {
            recipe.disjoint_from.clone_from(&self.excluded);
        }
    }
}
