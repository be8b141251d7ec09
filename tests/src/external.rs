//! Tests that need a program from outside the Rust toolchain (CPython 3.13 for the
//! differential test; a Redis server for the Redis adapter's tests).
//!
//! The rule, written once here: outside CI, a test whose program is missing prints a loud
//! notice to stderr and passes without running; under CI (`CI` set, and not `false` or
//! `0`) it fails, so CI cannot go green without having run it. The notice is written to
//! the process's stderr directly, past the test harness's output capture, so it shows
//! with the default `cargo test` output.

use std::io::Write;
use std::process::Command;

/// The environment variable that names the interpreter for the differential test.
pub const PYTHON_VARIABLE: &str = "DIFF_PYTHON";

/// Whether this run is CI: `CI` is set to anything but the empty string, `false` or `0`
/// (CI services set `CI=true`; `.ci/run` sets it too).
///
/// # Examples
///
/// ```
/// // `CI=true cargo test` makes every `require` strict.
/// let _strict: bool = integration_tests::external::in_ci();
/// ```
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| !matches!(value.trim(), "" | "false" | "0"))
}

/// The value a test needs from outside, or `None` when it is missing and this is not CI.
///
/// `what` names the requirement ("CPython 3.13"), `probe` is the attempt to get it (its
/// error says what was tried and how to provide it). A test calls it first and returns
/// early on `None`:
///
/// ```
/// use integration_tests::external::require;
///
/// fn needs_a_program() {
///     let probe: Result<&str, String> = Err("not installed; set SOME_PROGRAM".into());
///     let Some(_program) = require("some program", "needs_a_program", probe) else {
///         return; // skipped, loudly
///     };
///     unreachable!("the probe failed");
/// }
/// # if !integration_tests::external::in_ci() { needs_a_program(); }
/// ```
///
/// # Panics
///
/// Under CI ([`in_ci`]), when `probe` is an error: the test fails with that error.
pub fn require<T>(what: &str, test: &str, probe: Result<T, String>) -> Option<T> {
    require_with(in_ci(), what, test, probe, &mut std::io::stderr().lock())
}

/// [`require`] with the CI decision and the notice's destination passed in, for the tests.
fn require_with<T>(
    ci: bool,
    what: &str,
    test: &str,
    probe: Result<T, String>,
    notice: &mut dyn Write,
) -> Option<T> {
    match probe {
        Ok(value) => Some(value),
        Err(reason) if ci => {
            panic!("{test} needs {what}, and under CI (CI is set) it must run: {reason}")
        }
        Err(reason) => {
            let rule = "=".repeat(78);
            // A failed write to stderr leaves nothing better to do; the test still passes.
            let _ = writeln!(
                notice,
                "\n{rule}\nSKIPPED {test}: it needs {what}, which is missing.\n  {reason}\n  \
                 It passed without running. Under CI=true it fails instead.\n{rule}"
            );
            None
        }
    }
}

/// A CPython 3.13 interpreter, as the program to run.
///
/// `DIFF_PYTHON`, if set, is the only candidate; otherwise `python3.13`, then the 3.13 that
/// pyenv has installed (`pyenv prefix 3.13`), then `python3`, each in the caller's
/// environment (so `PYENV_VERSION`, a virtualenv or `PATH` decide what `python3.13` and
/// `python3` are). The first that reports CPython 3.13 wins; the error lists what
/// each candidate turned out to be.
///
/// # Examples
///
/// ```
/// use integration_tests::external::{cpython_313, require};
///
/// let Some(python) = require("CPython 3.13", "doctest", cpython_313()) else {
///     return;
/// };
/// let status = std::process::Command::new(python).arg("-c").arg("pass").status();
/// assert!(status.unwrap().success());
/// ```
pub fn cpython_313() -> Result<String, String> {
    let candidates = match std::env::var(PYTHON_VARIABLE) {
        Ok(program) => vec![program],
        Err(_) => {
            let mut candidates = vec!["python3.13".to_owned()];
            candidates.extend(pyenv_313());
            candidates.push("python3".to_owned());
            candidates
        }
    };
    let mut found = Vec::new();
    for program in candidates {
        match python_version(&program) {
            Ok(version) if version.starts_with("CPython 3.13.") => return Ok(program),
            Ok(version) => found.push(format!("`{program}` is {version}")),
            Err(error) => found.push(format!("`{program}` {error}")),
        }
    }
    Err(format!(
        "{}. Install CPython 3.13 (with pyenv: `pyenv install 3.13`, then \
         `PYENV_VERSION=3.13 cargo test`) or point {PYTHON_VARIABLE} at one.",
        found.join("; ")
    ))
}

/// The CPython 3.13 that pyenv has installed, if pyenv is here and has one, whatever
/// version the caller's environment selects.
fn pyenv_313() -> Option<String> {
    let output = Command::new("pyenv")
        .args(["prefix", "3.13"])
        .output()
        .ok()?;
    let prefix = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !prefix.is_empty()).then(|| format!("{prefix}/bin/python3"))
}

/// What `program` says it is, as `"CPython 3.13.0"`.
fn python_version(program: &str) -> Result<String, String> {
    let output = Command::new(program)
        .args([
            "-c",
            "import platform; print(platform.python_implementation(), \
             platform.python_version())",
        ])
        .output()
        .map_err(|error| format!("could not be started ({error})"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "failed ({}): {}",
            output.status,
            stderr.lines().next().unwrap_or_default().trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_requirement_outside_ci_skips_with_a_notice() {
        let mut notice = Vec::new();
        let got = require_with::<()>(
            false,
            "CPython 3.13",
            "the_test",
            Err("`python3` is CPython 3.11.7".into()),
            &mut notice,
        );
        assert_eq!(got, None);
        let notice = String::from_utf8(notice).unwrap();
        assert!(
            notice.contains("SKIPPED the_test: it needs CPython 3.13"),
            "{notice}"
        );
        assert!(notice.contains("`python3` is CPython 3.11.7"), "{notice}");
        assert!(notice.contains("Under CI=true it fails"), "{notice}");
    }

    #[test]
    #[should_panic = "the_test needs CPython 3.13, and under CI (CI is set) it must run: \
                      `python3` is CPython 3.11.7"]
    fn a_missing_requirement_under_ci_fails() {
        require_with::<()>(
            true,
            "CPython 3.13",
            "the_test",
            Err("`python3` is CPython 3.11.7".into()),
            &mut Vec::new(),
        );
    }

    #[test]
    fn a_present_requirement_runs_silently_either_way() {
        for ci in [false, true] {
            let mut notice = Vec::new();
            let got = require_with(ci, "x", "the_test", Ok(7), &mut notice);
            assert_eq!(got, Some(7));
            assert!(notice.is_empty());
        }
    }

    #[test]
    fn a_program_that_cannot_start_is_reported_as_such() {
        let error = python_version("/nonexistent/python3.13").unwrap_err();
        assert!(error.starts_with("could not be started"), "{error}");
    }
}
