//! The processes admission asks about (IO layer of the build): [`System`] answers
//! [`Runner`]'s questions with real processes, `python3` for L5 and the external L6 verifier
//! command. The build session runs it before admission and records the answers
//! (`model::Recorded`), so that `admit` itself runs nothing.
//!
//! L5 runs one `python3` per batch of wrappers rather than two per executor: the batch script
//! compiles each wrapper with `compile()` (what `python3 -m py_compile` does, without writing
//! a `.pyc`), runs its top level and calls its `main(["…", "--describe"])` with standard output
//! captured, sharing the work on the template's fixed parts (see `BATCH_SCRIPT`). Batches run
//! in parallel (rayon), and identical wrappers are checked once.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::admit::Runner;
use crate::model::DescribeResult;

/// Most wrappers per `python3` process (fewer when that keeps every thread busy).
pub const BATCH: usize = 4000;

/// Seconds one batch of wrappers may take before it is killed (its wrappers fail L5).
pub const BATCH_TIMEOUT_SECONDS: u64 = 120;

/// Seconds the external verifier may take per executor before it is killed (rejected).
pub const VERIFIER_TIMEOUT_SECONDS: u64 = 30;

/// The Python program that checks a batch: on standard input the JSON
/// `{"shared": [[middle, tail]], "items": [{"name", "source"} | {"name", "head", "contract",
/// "rest": index into shared}]}` ([`Wrappers`] writes it); on standard output the JSON
/// `[{"describe": text} | {"error": text}]`, one per item.
///
/// A wrapper is the template with holes only in its header (comment and docstring) and in
/// its `CONTRACT = json.loads(…)` statement; the rest (the middle and the tail) is sent once
/// per batch. The first wrapper of a run of wrappers with the same rest is compiled whole
/// (its parts joined) and its `main([…, "--describe"])` run. For the others, whose remaining
/// parts are byte-identical to that reference, compiling the header and the contract
/// statement is the same check (a module is a sequence of complete statements; the shared
/// parts already compiled), and `--describe` is what the reference's identical `main` prints
/// for their `CONTRACT` (compact: admission compares the JSON value). A wrapper that does not
/// have the template's shape is sent whole and checked whole. This makes L5 about ten times
/// cheaper.
const BATCH_SCRIPT: &str = r#"
import contextlib, io, json, sys

def full(item):
    try:
        code = compile(item["source"], item["name"], "exec")
    except (SyntaxError, ValueError) as e:
        return {"error": "the wrapper does not compile: %s (line %s)" % (getattr(e, "msg", e), getattr(e, "lineno", "?"))}
    buf = io.StringIO()
    try:
        ns = {"__name__": "skillc_admission", "__file__": item["name"]}
        with contextlib.redirect_stdout(buf):
            exec(code, ns)
            status = ns["main"]([item["name"], "--describe"])
    except BaseException as e:
        return {"error": "the wrapper's --describe failed: %s: %s" % (type(e).__name__, e)}
    if status != 0:
        return {"error": "the wrapper's --describe exited with %s" % status}
    return {"describe": buf.getvalue()}

def quick(item, parts):
    head, _, contract, _ = parts
    try:
        code = compile(head + contract, item["name"], "exec")
    except (SyntaxError, ValueError) as e:
        return {"error": "the wrapper does not compile: %s" % getattr(e, "msg", e)}
    try:
        ns = {"__name__": "skillc_admission", "json": json}
        exec(code, ns)
        # Compact: admission compares the JSON value, not its layout, and CPython encodes
        # with `indent` in pure Python (half of a batch's time).
        return {"describe": json.dumps(ns["CONTRACT"], sort_keys=True) + "\n"}
    except BaseException as e:
        return {"error": "the wrapper's --describe failed: %s: %s" % (type(e).__name__, e)}

batch = json.load(sys.stdin)
shared = batch["shared"]
out = []
ref = None
for item in batch["items"]:
    if "rest" not in item:
        out.append(full(item))
        continue
    mid, tail = shared[item["rest"]]
    parts = (item["head"], mid, item["contract"], tail)
    if ref == item["rest"]:
        out.append(quick(item, parts))
        continue
    answer = full({"name": item["name"], "source": "".join(parts)})
    if "describe" in answer:
        ref = item["rest"]
    out.append(answer)
json.dump(out, sys.stdout)
"#;

/// Real processes: `python3` (or `SKILLC_PYTHON`) and the verifier command, run from `cwd`.
#[derive(Clone, Debug)]
pub struct System {
    /// The Python interpreter (`python3`).
    pub python: String,
    /// Folder the verifier command runs in (the project root).
    pub cwd: PathBuf,
}

impl System {
    /// `python3` (or the `SKILLC_PYTHON` environment variable), run from `cwd`.
    pub fn new(cwd: PathBuf) -> System {
        System {
            python: std::env::var("SKILLC_PYTHON").unwrap_or_else(|_| "python3".into()),
            cwd,
        }
    }

    /// What identifies the interpreter L5 would run, for the build's input fingerprint: its
    /// name and the file it resolves to on `PATH` (with its size and modification time), or
    /// that it is missing. Installing, removing or upgrading Python changes it.
    pub fn python_fingerprint(&self) -> String {
        let path = std::path::Path::new(&self.python);
        let candidates: Vec<PathBuf> = if path.components().count() > 1 {
            vec![path.to_path_buf()]
        } else {
            std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).map(|d| d.join(path)).collect())
                .unwrap_or_default()
        };
        let found = candidates.iter().find_map(|c| {
            let m = std::fs::metadata(c).ok().filter(std::fs::Metadata::is_file)?;
            Some(format!("{} {} {:?}", c.display(), m.len(), m.modified().ok()))
        });
        format!("{} -> {}", self.python, found.as_deref().unwrap_or("missing"))
    }
}

/// Why running a process failed.
#[derive(Debug)]
enum RunError {
    /// The program does not exist.
    Missing,
    /// Anything else, in words.
    Failed(String),
}

/// Kills `child` and every process of its group (`kill -KILL -PGID`; the child alone when
/// `kill` cannot be run).
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let group = format!("-{}", child.id());
        let killed = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if killed {
            return;
        }
    }
    let _ = child.kill();
}

/// Runs `cmd` with `input` on standard input, killing it after `timeout`; returns standard
/// output when it exits with status 0.
fn run(mut cmd: Command, input: &str, timeout: Duration) -> Result<String, RunError> {
    // Its own process group, so that a timeout stops whatever it started too.
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0);
    }
    let mut child = match cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(RunError::Missing),
        Err(e) => return Err(RunError::Failed(format!("cannot start it: {e}"))),
    };
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let input = input.to_owned();
    // Feed and drain on threads so that a full pipe never blocks the timeout.
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(input.as_bytes());
        }
    });
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = stdout.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = stderr.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= timeout => {
                kill_group(&mut child);
                let _ = child.wait();
                // The pipe threads end when the last process holding the pipes is gone; they
                // are not waited for, so a process that escaped the group cannot hold us.
                drop((writer, reader, err_reader));
                return Err(RunError::Failed(format!("timed out after {} s", timeout.as_secs())));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(RunError::Failed(format!("cannot wait for it: {e}"))),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if status.success() {
        Ok(out)
    } else {
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        let last: String = last.chars().take(300).collect();
        Err(RunError::Failed(match (status.code(), last.is_empty()) {
            (Some(c), true) => format!("exit status {c}"),
            (Some(c), false) => format!("exit status {c}: {last}"),
            (None, _) => "killed by a signal".into(),
        }))
    }
}

/// A wrapper's four parts as `BATCH_SCRIPT` checks them: header (up to `import json`), the
/// imports and helpers, the `CONTRACT = json.loads(…)` statement, the rest; `None` when the
/// source does not have the template's shape.
fn split(src: &str) -> Option<(&str, &str, &str, &str)> {
    let a = src.find("\nimport json\n")?;
    let b = src.find("CONTRACT = json.loads(\n").filter(|b| *b >= a)?;
    let c = b + src[b..].find("\n)\n)\n")?;
    Some((&src[..=a], &src[a + 1..b], &src[b..c + 5], &src[c + 5..]))
}

/// A wrapper as `BATCH_SCRIPT` takes it: whole, or by the parts that differ from its
/// template's shared rest ([`split`]), which [`Wrappers`] keeps once.
#[derive(Clone, Debug)]
enum Sent {
    Whole {
        name: String,
        source: String,
    },
    Split {
        name: String,
        head: String,
        contract: String,
        rest: usize,
    },
}

/// Wrappers to check, each distinct rest (middle and tail, ~9 KB) kept once: what the build
/// holds of ~12 KB wrappers while Python checks them is their ~2 KB header and contract.
#[derive(Debug, Default)]
pub struct Wrappers {
    shared: Vec<(String, String)>,
    index: HashMap<(String, String), usize>,
    items: Vec<Sent>,
}

impl Wrappers {
    /// Adds the wrapper `source`, shown as `name`.
    pub fn push(&mut self, name: String, source: &str) {
        let sent = match split(source) {
            Some((head, mid, contract, tail)) => {
                let rest = self.rest(mid, tail);
                Sent::Split {
                    name,
                    head: head.to_owned(),
                    contract: contract.to_owned(),
                    rest,
                }
            }
            None => Sent::Whole {
                name,
                source: source.to_owned(),
            },
        };
        self.items.push(sent);
    }

    /// The index of the rest `(mid, tail)`, added when new.
    fn rest(&mut self, mid: &str, tail: &str) -> usize {
        if let Some(i) = self.index.get(&(mid.to_owned(), tail.to_owned())) {
            return *i;
        }
        self.shared.push((mid.to_owned(), tail.to_owned()));
        self.index
            .insert((mid.to_owned(), tail.to_owned()), self.shared.len() - 1);
        self.shared.len() - 1
    }

    /// Moves the wrappers of `other` (made on another thread) after these; `keep` says which.
    pub fn append(&mut self, other: Wrappers, mut keep: impl FnMut(usize) -> bool) {
        let Wrappers { shared, items, .. } = other;
        let map: Vec<usize> = shared.iter().map(|(m, t)| self.rest(m, t)).collect();
        for (i, sent) in items.into_iter().enumerate() {
            if !keep(i) {
                continue;
            }
            self.items.push(match sent {
                Sent::Split {
                    name,
                    head,
                    contract,
                    rest,
                } => Sent::Split {
                    name,
                    head,
                    contract,
                    rest: map[rest],
                },
                whole => whole,
            });
        }
    }

    /// How many wrappers.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No wrapper.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The JSON `BATCH_SCRIPT` reads for `items`, a run of these wrappers: the rests they use,
    /// once each, and each wrapper by its header and contract.
    fn batch_input(&self, items: &[Sent]) -> String {
        let mut shared: Vec<&(String, String)> = Vec::new();
        let mut local: HashMap<usize, usize> = HashMap::new();
        let items: Vec<serde_json::Value> = items
            .iter()
            .map(|sent| match sent {
                Sent::Split {
                    name,
                    head,
                    contract,
                    rest,
                } => {
                    let rest = *local.entry(*rest).or_insert_with(|| {
                        shared.push(&self.shared[*rest]);
                        shared.len() - 1
                    });
                    serde_json::json!({"name": name, "head": head, "contract": contract, "rest": rest})
                }
                Sent::Whole { name, source } => serde_json::json!({"name": name, "source": source}),
            })
            .collect();
        serde_json::json!({"shared": shared, "items": items}).to_string()
    }
}

impl System {
    fn batch(&self, wrappers: &Wrappers, items: &[Sent]) -> Result<Vec<DescribeResult>, RunError> {
        let input = wrappers.batch_input(items);
        let mut cmd = Command::new(&self.python);
        // `-B`: checking wrappers writes no bytecode anywhere. `-S`: no `site` (a wrapper uses
        // the standard library only), a fifth of the interpreter's start-up.
        cmd.arg("-I")
            .arg("-B")
            .arg("-S")
            .arg("-c")
            .arg(BATCH_SCRIPT)
            .current_dir(&self.cwd);
        let out = run(cmd, &input, Duration::from_secs(BATCH_TIMEOUT_SECONDS))?;
        let answers: Vec<serde_json::Value> = serde_json::from_str(&out)
            .map_err(|e| RunError::Failed(format!("the wrapper check printed no JSON ({e})")))?;
        if answers.len() != items.len() {
            return Err(RunError::Failed(
                "the wrapper check answered for too few wrappers".into(),
            ));
        }
        Ok(answers
            .into_iter()
            .map(|a| {
                match (
                    a.get("describe").and_then(|d| d.as_str()),
                    a.get("error").and_then(|e| e.as_str()),
                ) {
                    (Some(d), _) => Ok(d.to_owned()),
                    (None, Some(e)) => Err(e.to_owned()),
                    (None, None) => Err("the wrapper check gave no answer".into()),
                }
            })
            .collect())
    }

    /// Compiles each wrapper and runs its `--describe` ([`Runner::describe`]), in batches of
    /// one `python3` each, in parallel; `None` when Python is not available.
    pub fn describe_wrappers(&self, wrappers: &Wrappers) -> Option<Vec<DescribeResult>> {
        let items = &wrappers.items;
        // Equal batches, as few as keep every thread busy (each `python3` costs its start-up),
        // none above BATCH.
        let threads = rayon::current_num_threads().max(1);
        let rounds = items.len().div_ceil(threads * BATCH).max(1);
        let size = items.len().div_ceil(threads * rounds).max(1);
        let chunks: Vec<Result<Vec<DescribeResult>, RunError>> =
            items.par_chunks(size).map(|c| self.batch(wrappers, c)).collect();
        let mut results: Vec<DescribeResult> = Vec::with_capacity(items.len());
        for (chunk, c) in chunks.into_iter().zip(items.chunks(size)) {
            match chunk {
                Ok(v) => results.extend(v),
                Err(RunError::Failed(why)) => {
                    results.extend(c.iter().map(|_| Err(format!("{} failed: {why}", self.python))));
                }
                Err(RunError::Missing) => return None,
            }
        }
        Some(results)
    }
}

impl Runner for System {
    fn describe(&self, wrappers: &[(String, String)]) -> Option<Vec<DescribeResult>> {
        // Identical wrappers are checked once.
        let mut unique = Wrappers::default();
        let mut slot: HashMap<&String, usize> = HashMap::new();
        let index: Vec<usize> = wrappers
            .iter()
            .map(|(n, s)| {
                *slot.entry(s).or_insert_with(|| {
                    unique.push(n.clone(), s);
                    unique.len() - 1
                })
            })
            .collect();
        let results = self.describe_wrappers(&unique)?;
        Some(index.into_iter().map(|i| results[i].clone()).collect())
    }

    fn verify(&self, command: &str, input: &str) -> Result<String, String> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(command).current_dir(&self.cwd);
        run(cmd, input, Duration::from_secs(VERIFIER_TIMEOUT_SECONDS)).map_err(|e| match e {
            RunError::Missing => "`sh` is not available".to_owned(),
            RunError::Failed(why) => why,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::admit::tests::{Def, catalog, opts, v};
    use crate::admit::{Candidate, SkillPlans, Verdict, admit};
    use crate::generate::{self, Executor, Stamp};
    use crate::model::{AdmissionSettings, Level, LevelStatus};

    /// Without `python3` these tests cannot run: a failure under CI, elsewhere a line that
    /// `cargo test` shows (written past the harness's output capture).
    fn python_missing() {
        assert!(std::env::var_os("CI").is_none(), "python3 is required under CI");
        use std::io::Write as _;
        let thread = std::thread::current();
        let _ = writeln!(
            std::io::stderr(),
            "note: {}: SKIPPED: python3 is not installed",
            thread.name().unwrap_or("a test")
        );
    }

    #[test]
    fn a_timeout_stops_the_whole_process_group_without_waiting_for_it() {
        // The shell forks: its children hold the output pipe after it is killed.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "(sleep 600; echo late) & sleep 600; echo done"]);
        let started = Instant::now();
        let r = run(cmd, "", Duration::from_millis(300));
        assert!(
            matches!(&r, Err(RunError::Failed(m)) if m.starts_with("timed out")),
            "{r:?}"
        );
        // Not the 600 s the children would take (a bound no loaded machine comes near).
        assert!(started.elapsed() < Duration::from_secs(300), "{:?}", started.elapsed());
    }

    #[test]
    fn a_missing_python_is_not_a_failure_but_not_run() {
        let s = System {
            python: "/nonexistent/python3".into(),
            cwd: std::env::temp_dir(),
        };
        assert!(s.describe(&[("x.py".into(), "print(1)".into())]).is_none());
    }

    /// Wrappers of the template's shape are sent by header and contract, with each distinct
    /// rest once; any other source is sent whole. Joining the parts gives the source back.
    #[test]
    fn a_batch_sends_each_shared_rest_once() {
        let wrapper = |doc: &str, arg: &str, tail: &str| {
            format!(
                "#!/usr/bin/env python3\n\"\"\"{doc}\"\"\"\nimport json\nimport sys\n\nCONTRACT = json.loads(\n(\n    \"{{\\\"a\\\": \\\"{arg}\\\"}}\"\n)\n)\n{tail}"
            )
        };
        let (a, b, c) = (
            wrapper("one", "x", "def main(argv):\n    return 0\n"),
            wrapper("two", "y", "def main(argv):\n    return 0\n"),
            wrapper("three", "z", "def main(argv):\n    return 1\n"),
        );
        let (n, other) = ("w.py".to_owned(), "print(1)\n".to_owned());
        let (head, mid, contract, tail) = split(&a).expect("the template's shape");
        assert_eq!(format!("{head}{mid}{contract}{tail}"), a);
        assert!(
            contract.starts_with("CONTRACT = json.loads(") && contract.ends_with("\n)\n)\n"),
            "{contract:?}"
        );
        let mut w = Wrappers::default();
        w.push(n.clone(), &a);
        let mut other_thread = Wrappers::default();
        for src in [&b, &a, &c, &other] {
            other_thread.push(n.clone(), src);
        }
        // From another thread: its rests are merged with these, the skipped one is left out.
        w.append(other_thread, |i| i != 1);
        assert_eq!((w.len(), w.shared.len()), (4, 2));
        let sent: serde_json::Value = serde_json::from_str(&w.batch_input(&w.items)).expect("JSON");
        assert_eq!(sent["shared"].as_array().map(Vec::len), Some(2), "{sent}");
        let rests: Vec<&serde_json::Value> = sent["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| &i["rest"])
            .collect();
        assert_eq!(
            rests,
            [
                &serde_json::json!(0),
                &serde_json::json!(0),
                &serde_json::json!(1),
                &serde_json::Value::Null
            ]
        );
        assert_eq!(sent["items"][3]["source"], "print(1)\n");
    }

    #[test]
    fn the_batch_compiles_and_describes_each_wrapper() {
        let s = System::new(std::env::temp_dir());
        let ok = "import sys\ndef main(argv):\n    sys.stdout.write('{\"a\": 1}')\n    return 0\n".to_owned();
        let bad = "def main(:\n".to_owned();
        let Some(r) = s.describe(&[("a.py".into(), ok.clone()), ("b.py".into(), bad), ("c.py".into(), ok)]) else {
            python_missing();
            return;
        };
        assert_eq!(r[0], Ok("{\"a\": 1}".into()));
        assert!(
            r[1].as_ref().is_err_and(|e| e.contains("does not compile")),
            "{:?}",
            r[1]
        );
        assert_eq!(r[2], r[0]);
        assert_eq!(s.verify("cat", "hi"), Ok("hi".into()));
        assert!(s.verify("exit 3", "").is_err_and(|e| e.contains("exit status 3")));
    }

    #[test]
    fn l5_with_python_passes_generated_wrappers_and_catches_a_broken_one() {
        let v = v();
        let system = System::new(std::env::temp_dir());
        if system
            .describe(&[("x.py".into(), "def main(a):\n    return 0\n".into())])
            .is_none()
        {
            python_missing();
            return;
        }
        let defs: &[Def<'_>] = &[
            ("list", "files", "a", &["ls"], Some("Lists \"quoted\" files \\ here")),
            ("read", "files", "b", &["cat"], None),
            ("delete", "files", "c", &["rm"], None),
        ];
        let (names, plans, infos) = catalog(defs);
        let stamp = Stamp {
            levels: BTreeMap::new(),
            skipped: vec![],
            imported_at: String::new(),
        };
        let mut execs: Vec<Executor> = (0..3)
            .map(|i| generate::executor(&plans[i], &names[i], &infos[i], &v, &stamp))
            .collect();
        // The third wrapper's contract literal is damaged: it no longer compiles.
        execs[2].wrapper = execs[2].wrapper.replacen("    \"{\\n\"\n", "    \"{\\n\n", 1);
        let skills: Vec<SkillPlans<'_>> = (0..3)
            .map(|i| SkillPlans {
                skill: &infos[i].name,
                plans: vec![Some(Candidate {
                    name: &names[i],
                    plan: &plans[i],
                    executor: Some(&execs[i]),
                })],
                info: Some(&infos[i]),
                files: &[],
            })
            .collect();
        let skip = [Level::L3, Level::L4, Level::L6];
        let out = admit(&skills, &v, &opts(&skip, &system, &AdmissionSettings::default()));
        let verdicts: Vec<&Verdict> = out.skills.iter().map(|s| &s.plans[0]).collect();
        let Verdict::Admitted(levels) = verdicts[0] else {
            panic!("{verdicts:?}")
        };
        assert_eq!(levels[&Level::L5], LevelStatus::Pass);
        assert!(matches!(verdicts[1], Verdict::Admitted(_)), "{verdicts:?}");
        let Verdict::Rejected { level, reason, .. } = verdicts[2] else {
            panic!("{verdicts:?}")
        };
        assert_eq!(*level, Level::L5);
        assert!(reason.starts_with("the wrapper does not compile"), "{reason}");
    }
}
