//! The output lock: one writer of a dataset directory at a time, and the leftovers of killed
//! writers cleaned up under it. Readers (`verify`) ask who holds it.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::usage::usage;

/// The parent directory of `out` (`.` for a bare name) and the name the hidden siblings
/// (`.NAME.lock`, `.NAME.tmp-PID`, `.NAME.old-PID`) are made from.
pub fn parent_and_name(out: &Path) -> (PathBuf, String) {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dataset".into());
    (parent, name)
}

/// Whether process `pid` may still be running. On Linux `/proc/PID` answers exactly; elsewhere
/// (no std-only way to ask) a process is taken as alive unless `since` (the lock's or folder's
/// modification time) is more than [`STALE_AFTER`] ago.
fn pid_alive(pid: u32, since: Option<std::time::SystemTime>) -> bool {
    if cfg!(target_os = "linux") {
        return Path::new(&format!("/proc/{pid}")).exists();
    }
    since
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < STALE_AFTER)
}

/// Off Linux, a lock or leftover folder older than this is stale whatever its PID.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    fs::symlink_metadata(path).and_then(|m| m.modified()).ok()
}

/// The exclusive right to write `out`: a file `.NAME.lock` next to it holding our PID, held
/// with an exclusive advisory lock (`flock`) for the run and removed on drop. The kernel
/// drops the lock when its process dies, however it dies and whatever PID namespace it ran in,
/// so a retried container (PID 1 again) or a retry on another node of a shared file system
/// takes over a killed run's lock; a live holder refuses (exit 2, naming its PID). On a file
/// system without advisory locks the PID alone decides, as before.
pub struct OutLock {
    path: PathBuf,
    /// The open lock file while we hold its advisory lock; `None` when the file system has
    /// none (the PID in the file is then the only claim).
    held: Option<File>,
}

/// How often a writer retries a busy lock before refusing: a reader (`verify`) takes it
/// shared for an instant, which must not refuse a writer.
const LOCK_TRIES: u32 = 10;

impl OutLock {
    /// Take the lock for `out`, creating its parent directory if needed.
    ///
    /// An `--out` that cannot be made (below a file, on a read-only or pseudo file system, in a
    /// directory we may not write) is bad input: exit 2, one line naming it, before any work.
    pub fn acquire(out: &Path) -> Result<OutLock> {
        let (parent, name) = parent_and_name(out);
        if let Some(file) = parent
            .ancestors()
            .find(|a| a.exists())
            .filter(|a| !a.is_dir())
        {
            return Err(usage(format!(
                "cannot create --out {}: {} is a file, not a directory",
                out.display(),
                file.display()
            )));
        }
        fs::create_dir_all(&parent).map_err(|e| {
            usage(format!(
                "cannot create --out {}: cannot create {} ({e})",
                out.display(),
                parent.display()
            ))
        })?;
        let path = parent.join(format!(".{name}.lock"));
        let cannot_write = |e: std::io::Error| {
            usage(format!(
                "cannot write --out {}: cannot create files in {} ({e})",
                out.display(),
                parent.display()
            ))
        };
        for attempt in 0..LOCK_TRIES {
            let file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(cannot_write)?;
            match file.try_lock() {
                Ok(()) => {
                    // The holder before us may have removed the file after we opened it: the
                    // lock must be on the file the path names now.
                    if !same_file(&file, &path) {
                        continue;
                    }
                    file.set_len(0).map_err(cannot_write)?;
                    (&file)
                        .write_all(format!("{}\n", std::process::id()).as_bytes())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    return Ok(OutLock {
                        path,
                        held: Some(file),
                    });
                }
                Err(fs::TryLockError::WouldBlock) if attempt + 1 < LOCK_TRIES => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    let text = fs::read_to_string(&path).unwrap_or_default();
                    return Err(usage(match text.trim().parse::<u32>() {
                        Ok(pid) => format!(
                            "another gen (PID {pid}) is writing {}: wait for it to finish",
                            out.display()
                        ),
                        Err(_) => format!(
                            "another gen is starting to write {}: wait for it to finish",
                            out.display()
                        ),
                    }));
                }
                Err(fs::TryLockError::Error(_)) => {
                    drop(file);
                    return Self::acquire_by_pid(out, &path);
                }
            }
        }
        Err(usage(format!(
            "another gen is writing {}: {} keeps reappearing",
            out.display(),
            path.display()
        )))
    }

    /// The lock where the file system has no advisory locks: a file made with an exclusive
    /// create, holding our PID; a lock whose PID is dead is stale and taken over.
    fn acquire_by_pid(out: &Path, path: &Path) -> Result<OutLock> {
        let parent = path.parent().unwrap_or(Path::new("."));
        for _ in 0..2 {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(mut f) => {
                    let lock = OutLock {
                        path: path.to_path_buf(),
                        held: None,
                    };
                    writeln!(f, "{}", std::process::id())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    return Ok(lock);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = fs::read_to_string(path).unwrap_or_default();
                    match text.trim().parse::<u32>() {
                        // Our own PID is a killed run's (a retried container is PID 1 again).
                        Ok(pid) if pid == std::process::id() || !pid_alive(pid, modified(path)) => {
                            fs::remove_file(path).ok();
                        }
                        Ok(pid) => {
                            return Err(usage(format!(
                                "another gen (PID {pid}) is writing {}: wait for it to finish, or remove {} if that process is not gen",
                                out.display(),
                                path.display()
                            )))
                        }
                        Err(_) => {
                            return Err(usage(format!(
                                "{} exists and holds no PID: another gen may be writing {}; remove the file if none is",
                                path.display(),
                                out.display()
                            )))
                        }
                    }
                }
                Err(e) => {
                    return Err(usage(format!(
                        "cannot write --out {}: cannot create files in {} ({e})",
                        out.display(),
                        parent.display()
                    )))
                }
            }
        }
        Err(usage(format!(
            "another gen is writing {}: {} keeps reappearing",
            out.display(),
            path.display()
        )))
    }

    /// Who is writing `out` now, if anyone: the live PID holding its lock, in words (a lock
    /// that holds no PID yet is a writer starting). Readers (`verify`) honour it: what they
    /// read while it is held may mix two datasets.
    pub fn holder(out: &Path) -> Option<String> {
        let mut spellings = vec![out.to_path_buf()];
        spellings.extend(out.canonicalize().ok());
        spellings.into_iter().find_map(|spelled| {
            let (parent, name) = parent_and_name(&spelled);
            let path = parent.join(format!(".{name}.lock"));
            let file = File::open(&path).ok()?;
            let text = fs::read_to_string(&path).unwrap_or_default();
            let pid = text.trim().parse::<u32>();
            let busy = match file.try_lock_shared() {
                // Held by a writer: exact, whatever its PID namespace or host.
                Err(fs::TryLockError::WouldBlock) => true,
                Ok(()) => false,
                // No advisory locks here: the PID alone tells.
                Err(fs::TryLockError::Error(_)) => pid
                    .as_ref()
                    .map_or(true, |&pid| pid_alive(pid, modified(&path))),
            };
            busy.then(|| match pid {
                Ok(pid) => format!("gen (PID {pid})"),
                Err(_) => format!("a gen whose lock {} holds no PID", path.display()),
            })
        })
    }

    /// Remove what killed runs left next to `out` (we hold the lock, so no other gen is
    /// writing it): staging folders `.NAME.tmp-PID` of dead processes, and set-aside
    /// folders `.NAME.old[-PID]`. A set-aside folder while `out` is missing is the previous
    /// dataset of a run killed between its two renames: it is removed only with `force`,
    /// and otherwise named in the refusal. Anything that cannot be removed is named too.
    pub fn clean_leftovers(&self, out: &Path, force: bool) -> Result<()> {
        let (parent, name) = parent_and_name(out);
        let Ok(entries) = fs::read_dir(&parent) else {
            return Ok(());
        };
        let exact = self.held.is_some();
        let tmp = format!(".{name}.tmp-");
        let old = format!(".{name}.old");
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            // Every writer holds the lock while its staging folder exists, so under the
            // advisory lock every such folder is a killed run's, whatever PID it names (a
            // retried container is PID 1 again). Without advisory locks a live PID other
            // than ours keeps its folder.
            let dead =
                |pid: u32| exact || pid == std::process::id() || !pid_alive(pid, modified(&path));
            let stale = if let Some(pid) = file.strip_prefix(&tmp) {
                pid.parse::<u32>().is_ok_and(dead)
            } else if let Some(rest) = file.strip_prefix(&old) {
                let pid = rest.strip_prefix('-').map(str::parse::<u32>);
                match pid {
                    None if rest.is_empty() => true,
                    Some(Ok(pid)) => dead(pid),
                    _ => false,
                }
            } else {
                false
            };
            if !stale {
                continue;
            }
            if file.starts_with(&old) && !out.exists() && !force {
                return Err(usage(format!(
                    "{} holds the previous dataset of a gen that was killed while replacing {}: rename it back, remove it, or pass --force to replace it",
                    path.display(),
                    out.display()
                )));
            }
            fs::remove_dir_all(&path).map_err(|e| {
                usage(format!(
                    "cannot remove {}, left behind by a killed gen: {e}; remove it by hand",
                    path.display()
                ))
            })?;
        }
        Ok(())
    }
}

impl Drop for OutLock {
    fn drop(&mut self) {
        // Removed while still locked; the advisory lock goes with the file handle after.
        fs::remove_file(&self.path).ok();
    }
}

/// Whether `file` is the file `path` names now (not one removed since it was opened).
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.exists()
    }
}
