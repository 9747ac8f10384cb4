//! A closed stdout (`brc ... | head`): whatever brc was writing, the reader
//! has all it wanted, so every command exits 0 and says nothing.

use std::io::Read;
use std::process::{Command, Stdio};

use clap::ValueEnum;

use crate::{brc, samples};

/// How the reader goes away.
#[derive(Clone, Copy, Debug)]
enum Close {
    /// Before brc starts: every write fails (deterministic).
    BeforeStart,
    /// After reading the first byte, while brc writes (as `head -c1`),
    /// or at once for a command that writes nothing before it ends.
    WhileWriting,
}

/// Runs `brc args` with stdout closed as `close` says; returns the exit
/// status and stderr.
fn run_closed(args: &[&str], close: Close) -> (Option<i32>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_brc"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = match close {
        Close::BeforeStart => {
            let (reader, writer) = std::io::pipe().unwrap();
            // Closing the only read end makes every write to it fail with
            // EPIPE.
            drop(reader);
            command.stdout(writer).spawn().unwrap()
        }
        Close::WhileWriting => {
            let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
            let mut stdout = child.stdout.take().unwrap();
            // End of file (nothing written) leaves nothing to close early.
            let _ = stdout.read(&mut [0]).unwrap();
            drop(stdout);
            child
        }
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (child.wait().unwrap().code(), stderr)
}

/// Asserts that `brc args` exits 0 with nothing on stderr however its
/// stdout is closed, `tries` times each where closing while it writes is a
/// race.
fn assert_quiet_on_closed_stdout(args: &[&str], tries: usize) {
    for close in [Close::BeforeStart, Close::WhileWriting] {
        for _ in 0..tries {
            let (status, stderr) = run_closed(args, close);
            assert_eq!(
                (status, stderr.as_str()),
                (Some(0), ""),
                "brc {args:?}, stdout closed {close:?}"
            );
        }
    }
}

/// The 10,000-station sample prints far more than a pipe buffer holds.
fn big_sample() -> String {
    let sample = samples()
        .into_iter()
        .find(|s| s.ends_with("measurements-10000-unique-keys.txt"))
        .unwrap();
    sample.into_os_string().into_string().unwrap()
}

#[test]
fn the_summary_exits_quietly() {
    let sample = big_sample();
    for args in [
        vec![sample.as_str()],
        vec!["--format", "json", "-t", "2", sample.as_str()],
        vec!["--timings", sample.as_str()],
    ] {
        assert_quiet_on_closed_stdout(&args, 3);
    }
}

#[test]
fn generate_exits_quietly() {
    assert_quiet_on_closed_stdout(&["generate", "--rows", "200k"], 3);
    assert_quiet_on_closed_stdout(&["generate", "--rows", "200k", "-o", "-"], 1);
}

#[test]
fn merge_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let partial = dir.path().join("p");
    let out = brc()
        .args(["--format", "partial", &big_sample()])
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(&partial, out.stdout).unwrap();
    let partial = partial.to_str().unwrap();
    assert_quiet_on_closed_stdout(&["merge", partial], 3);
    assert_quiet_on_closed_stdout(&["merge", "--format", "partial", partial], 1);
}

/// Completion scripts fit in a pipe's buffer, so the reader going away
/// before brc writes is the case that matters; it was a race, hence the
/// tries.
#[test]
fn completions_for_every_shell_exit_quietly() {
    for shell in clap_complete::Shell::value_variants() {
        let name = shell.to_possible_value().unwrap();
        assert_quiet_on_closed_stdout(&["completions", name.get_name()], 5);
    }
}

#[test]
fn the_man_page_exits_quietly() {
    assert_quiet_on_closed_stdout(&["man"], 5);
}

/// The subcommands `brc --help` lists, `help` among them.
fn subcommands() -> Vec<String> {
    let help = brc().arg("--help").output().unwrap().stdout;
    let help = String::from_utf8(help).unwrap();
    let commands = help
        .split_once("Commands:\n")
        .expect("a Commands section")
        .1;
    commands
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Help and version go through clap's own printing; each subcommand's
/// help too. Every subcommand has its case above: this fails for one
/// added without it.
#[test]
fn help_and_version_exit_quietly() {
    let mut commands = subcommands();
    commands.sort();
    assert_eq!(
        commands,
        ["completions", "generate", "help", "man", "merge"],
        "a new subcommand needs a closed-stdout test above"
    );
    for flag in ["--help", "-h", "--version", "-V"] {
        assert_quiet_on_closed_stdout(&[flag], 1);
    }
    for command in &commands {
        assert_quiet_on_closed_stdout(&["help", command], 1);
        if command != "help" {
            assert_quiet_on_closed_stdout(&[command, "--help"], 1);
        }
    }
}
