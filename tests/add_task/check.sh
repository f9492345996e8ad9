#!/usr/bin/env bash
# Adding a task takes its template and at most four Rust files (its core module, its shell
# file, and the module/registry lines of the two crates), and forgetting any of them fails to
# compile. This adds the throwaway task `echo` (the files beside this script) to a clone of the
# repository, counts the files it touched, checks that the clone compiles and the task's own
# tests pass, then removes each piece in turn and checks that the clone no longer compiles.
# Usage: tests/add_task/check.sh [TARGET_DIR]  (a warm target directory makes it fast; the
# clone's own crates get their own artifacts, so the checkout's binary is never replaced).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${1:-$repo/target}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/repo"
cd "$work/repo"
export CARGO_TARGET_DIR="$target"

mkdir -p generators/templates/echo
cp "$here/default.j2" generators/templates/echo/default.j2
cp "$here/core_echo.rs" generators/src/tasks/echo.rs
cp "$here/shell_echo.rs" src/tasks/echo.rs
# One module line and one registry line in each crate.
sed -i 's/^pub mod cwe;$/pub mod cwe;\npub mod echo;/' generators/src/tasks/mod.rs
sed -i 's/^    cwe => Cwe(cwe::CweParams);$/    cwe => Cwe(cwe::CweParams);\n    echo => Echo(echo::EchoParams);/' generators/src/tasks/mod.rs
sed -i 's/^mod cwe;$/mod cwe;\nmod echo;/' src/tasks/mod.rs
sed -i 's/^    Cwe(cwe::CweArgs),$/    Cwe(cwe::CweArgs),\n    Echo(echo::EchoArgs),/' src/tasks/mod.rs

touched=$(git status --porcelain --untracked-files=all | awk '{print $2}' | sort)
echo "files touched to add a task:"
echo "$touched" | sed 's/^/  /'
expected=$(printf '%s\n' generators/src/tasks/echo.rs generators/src/tasks/mod.rs \
  generators/templates/echo/default.j2 src/tasks/echo.rs src/tasks/mod.rs | sort)
if [ "$touched" != "$expected" ]; then
  echo "FAIL: adding a task touched other files than its template and four Rust files"
  exit 1
fi
rust=$(echo "$touched" | grep -c '\.rs$')
[ "$rust" -le 4 ] || { echo "FAIL: $rust Rust files"; exit 1; }

cargo check --release --locked --quiet --all-targets
# --workspace, not -p needlework-generators: features then resolve as in CI's test build, so only
# the clone's own crates are compiled (with -p, 40 dependencies would be again).
cargo test --release --locked --quiet --workspace --lib tasks::echo
cargo test --release --locked --quiet --bin gen tasks::
echo "ok: the task compiles and its tests pass"
git stash -q --include-untracked

# Each piece removed in turn: the clone must no longer compile.
apply() { git stash apply -q; }
refuse() {
  local what="$1"
  if cargo check --release --locked --quiet 2>/dev/null; then
    echo "FAIL: without $what the clone still compiles (it would fail at run time)"
    exit 1
  fi
  echo "ok: without $what it does not compile"
  git checkout -q . && git clean -qfd generators src
}
apply; rm generators/templates/echo/default.j2; refuse "the template"
apply; rm generators/src/tasks/echo.rs; refuse "the core module"
apply; rm src/tasks/echo.rs; refuse "the shell file"
apply; sed -i '/^pub mod echo;$/d' generators/src/tasks/mod.rs; refuse "the core's module line"
apply; sed -i '/^    echo => Echo(echo::EchoParams);$/d' generators/src/tasks/mod.rs; refuse "the core's registry line"
apply; sed -i '/^mod echo;$/d' src/tasks/mod.rs; refuse "the shell's module line"
apply; sed -i '/^    Echo(echo::EchoArgs),$/d' src/tasks/mod.rs; refuse "the shell's registry line"
