//! Private splits: a 256-bit seed drawn from the operating system and kept in a seed file
//! outside the dataset, and the commitment to it that the manifest and card carry.
//!
//! The seed file holds the seed and the salt of its commitment, so every run (the shards of one
//! private suite on many machines) that reuses the file makes the same commitment. The dataset
//! holds the commitment and the salt, never the seed, until `gen reveal` adds it.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};
use needlework_generators::rng::{commitment, hex, Seed};
use serde::{Deserialize, Serialize};

use crate::usage::usage;

/// The first line of a seed file: says what it is, and that it is secret.
const HEADER: &str = "# needlework private seed: keep this file secret and outside every dataset";

/// What a private recipe records: the commitment, its salt, and the seed once revealed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Private {
    /// SHA-256 of the domain tag, the salt and the seed, hex.
    pub commitment: String,
    /// The random salt of the commitment, hex (64 digits).
    pub salt: String,
    /// The seed, hex, once `gen reveal` published it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
}

/// A private seed and the salt of its commitment, as a seed file holds them.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    /// The seed.
    pub seed: [u8; 32],
    /// The salt of its commitment.
    pub salt: [u8; 32],
}

impl Secret {
    /// A new seed and salt from the operating system's random source (never a clock).
    pub fn draw() -> Result<Secret> {
        let mut seed = [0u8; 32];
        let mut salt = [0u8; 32];
        getrandom::fill(&mut seed)
            .and_then(|()| getrandom::fill(&mut salt))
            .map_err(|e| anyhow::anyhow!("the operating system gave no random bytes: {e}"))?;
        Ok(Secret { seed, salt })
    }

    /// The commitment the dataset records.
    pub fn commitment(&self) -> String {
        commitment(&self.salt, &self.seed)
    }

    /// What the recipe records before the seed is revealed.
    pub fn record(&self) -> Private {
        Private {
            commitment: self.commitment(),
            salt: hex(&self.salt),
            seed: None,
        }
    }

    /// The seed the run derives every stream from.
    pub fn run_seed(&self) -> Seed {
        Seed::private(self.seed)
    }

    /// The seed file's text.
    fn text(&self) -> String {
        format!(
            "{HEADER}\nseed {}\nsalt {}\n",
            hex(&self.seed),
            hex(&self.salt)
        )
    }

    /// Read a seed file; exit 2 naming the file when it is not one.
    pub fn read(path: &Path) -> Result<Secret> {
        let bytes = crate::run::paths::read_input(path, 4096, "seed file")?;
        let bad = |why: &str| {
            usage(format!(
                "{} is not a needlework seed file: {why} (expected the lines 'seed <64 hex digits>' and 'salt <64 hex digits>')",
                path.display()
            ))
        };
        let text = String::from_utf8(bytes).map_err(|_| bad("not UTF-8"))?;
        let (mut seed, mut salt) = (None, None);
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line
                .split_once(' ')
                .ok_or_else(|| bad("a line without a value"))?;
            let value =
                parse_hex(value.trim()).ok_or_else(|| bad("a value that is not 64 hex digits"))?;
            let slot = match key {
                "seed" => &mut seed,
                "salt" => &mut salt,
                _ => return Err(bad("an unknown line")),
            };
            if slot.replace(value).is_some() {
                return Err(bad("a line given twice"));
            }
        }
        match (seed, salt) {
            (Some(seed), Some(salt)) => Ok(Secret { seed, salt }),
            _ => Err(bad("the seed or the salt is missing")),
        }
    }

    /// Write a new seed file, readable by its owner only; refuses to replace any file.
    fn write_new(&self, path: &Path) -> Result<()> {
        use std::io::Write;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path).map_err(|e| {
            let folder = path.parent().filter(|f| !f.as_os_str().is_empty());
            match folder {
                Some(f) if e.kind() == std::io::ErrorKind::NotFound && !f.is_dir() => usage(format!(
                    "cannot create --seed-file {}: its folder {} does not exist (make it first: mkdir -p -m 700 {})",
                    path.display(),
                    f.display(),
                    f.display()
                )),
                _ if e.kind() == std::io::ErrorKind::AlreadyExists => usage(format!(
                    "cannot create --seed-file {}: another run created it after this one drew its seed (shards started together?): run again, and this run reads that seed; make the seed file first with one shard, before the others",
                    path.display()
                )),
                _ => usage(format!("cannot create --seed-file {}: {e}", path.display())),
            }
        })?;
        file.write_all(self.text().as_bytes())
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write --seed-file {}", path.display()))
    }
}

/// 64 hex digits as 32 bytes.
pub fn parse_hex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The seed of a private run: the one `path` holds (reused: the shards of one private suite
/// share it), or a new one drawn from the operating system, written to `path` only by
/// [`SeedFile::keep`], once every check has passed. `path` must not lie inside `out`.
pub struct SeedFile {
    /// Where the seed is kept.
    pub path: PathBuf,
    /// The seed and salt.
    pub secret: Secret,
    /// Whether the file exists already (then nothing is written).
    existed: bool,
}

impl SeedFile {
    /// Read or draw the seed for a run writing `out`.
    pub fn open(path: &Path, out: &Path) -> Result<SeedFile> {
        if inside(path, out) {
            return Err(usage(format!(
                "--seed-file {} is inside --out {}: the seed must never be part of the dataset; keep it elsewhere",
                path.display(),
                out.display()
            )));
        }
        if path.exists() {
            return Ok(SeedFile {
                path: path.to_path_buf(),
                secret: Secret::read(path)?,
                existed: true,
            });
        }
        Ok(SeedFile {
            path: path.to_path_buf(),
            secret: Secret::draw()?,
            existed: false,
        })
    }

    /// Write a newly drawn seed to its file (nothing when the file held it already).
    pub fn keep(&self) -> Result<()> {
        if self.existed {
            return Ok(());
        }
        self.secret.write_new(&self.path)
    }
}

/// `path` made absolute and free of `.` and `..` without touching the file system (the
/// deepest existing ancestor is resolved, so links and `..` through them count).
fn absolute(path: &Path) -> PathBuf {
    let joined = std::env::current_dir().unwrap_or_default().join(path);
    let mut base = joined.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    while !base.exists() {
        match (base.file_name(), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                base = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = base.canonicalize().unwrap_or(base);
    for part in rest.iter().rev() {
        out.push(part);
    }
    let mut clean = PathBuf::new();
    for c in out.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            c => clean.push(c),
        }
    }
    clean
}

/// Whether `path` lies inside the directory `dir` (or is it).
pub fn inside(path: &Path, dir: &Path) -> bool {
    absolute(path).starts_with(absolute(dir))
}

/// Check a seed against a private recipe's commitment.
pub fn matches(private: &Private, secret: &Secret) -> bool {
    parse_hex(&private.salt)
        .is_some_and(|salt| commitment(&salt, &secret.seed) == private.commitment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_files_round_trip_and_bad_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seed");
        let s = Secret::draw().unwrap();
        s.write_new(&path).unwrap();
        assert!(Secret::read(&path).unwrap() == s);
        assert!(
            s.write_new(&path).is_err(),
            "an existing seed file is never replaced"
        );
        assert!(matches(&s.record(), &s));
        let other = Secret::draw().unwrap();
        assert!(!matches(&s.record(), &other));
        for bad in ["seed 12\nsalt 34\n", "", "seed zz\n"] {
            std::fs::write(&path, bad).unwrap();
            assert!(Secret::read(&path).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn inside_sees_through_dots() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        assert!(inside(&out.join("a/../seed"), &out));
        assert!(inside(&out.join("seed"), &out));
        assert!(!inside(&dir.path().join("seed"), &out));
        assert!(!inside(&out.join("../seed"), &out));
    }
}
