//! What a build checks on disk, counted (never timed): the spare generation's record is
//! trusted while its folder is the one recorded (issue 16: one `stat` instead of listing it),
//! and an unchanged project is answered from its inputs' metadata without reading them.

use std::path::Path;

use skillc::{BUILT_IN_VOCABULARY, BuildOptions, BuildOutcome, Session};

use crate::common::tree;

fn skill_md(name: &str, extra: &str) -> String {
    // Distinct descriptions and commands, as real skills have (admission's L3 tells executors
    // apart by them).
    let (what, command) = match name {
        "alpha" => ("Alpha stores photographs and drawings for designers", "files list"),
        "beta" => ("Beta schedules meetings across timezones", "events list"),
        _ => ("Keeps the sales address book of a small shop", "contacts find"),
    };
    format!(
        "---\nname: {name}\ndescription: {what}.{extra}\n---\n\n# {name}\n\n```bash\npython3 scripts/tool.py {command} --max 10\n```\n"
    )
}

fn project(dir: &Path) {
    for name in ["alpha", "beta", "gamma"] {
        let d = dir.join("skills").join(name);
        std::fs::create_dir_all(d.join("scripts")).expect("mkdir");
        std::fs::write(d.join("SKILL.md"), skill_md(name, "")).expect("write");
        std::fs::write(d.join("scripts/tool.py"), "print('{}')\n").expect("write");
    }
}

fn options(dir: &Path) -> BuildOptions {
    crate::common::build_options(dir)
}

/// A build in a new session, as a new process makes it.
fn build(dir: &Path) -> BuildOutcome {
    let mut s = Session::open(options(dir), BUILT_IN_VOCABULARY.into()).expect("open");
    s.build(1_900_000_000, &mut |_| {}).expect("build")
}

fn edit(dir: &Path, name: &str, extra: &str) {
    std::fs::write(dir.join("skills").join(name).join("SKILL.md"), skill_md(name, extra)).expect("write");
}

/// `out/` of a clean build of the same skills.
fn clean_out(dir: &Path) -> std::collections::BTreeMap<String, (Vec<u8>, bool)> {
    let clean = tempfile::tempdir().expect("tempdir");
    crate::common::copy_dir(&dir.join("skills"), &clean.path().join("skills"));
    build(clean.path());
    tree(&clean.path().join("out"))
}

/// The spare generation is listed only when its record cannot be trusted: the first time (it
/// is made of hard links, nothing to list), never while its folder is the one recorded, and
/// again when the folder was replaced (another inode) or its record is gone. Each time `out/`
/// is the same as a clean build's. Fails before the record: every fresh build listed the spare.
#[test]
fn the_spare_is_listed_only_when_its_folder_is_not_the_one_recorded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    let cold = build(d);
    assert!(cold.files_written > 0);
    let spare = d.join(".out.skillc-next");
    assert!(!spare.exists(), "a cold build has no spare");
    // The first edit: the spare is made of links to out/, nothing to list.
    edit(d, "alpha", " One.");
    let first = build(d);
    assert!(
        first.checked.out_listed > 0 && first.checked.spare_listed == 0,
        "{:?}",
        first.checked
    );
    // Its record is trusted from now on.
    for round in ["Two.", "Three."] {
        edit(d, "alpha", &format!(" {round}"));
        let o = build(d);
        assert_eq!(o.checked.spare_listed, 0, "{round}: {:?}", o.checked);
        assert!(o.files_written > 0);
        assert_eq!(tree(&d.join("out")), clean_out(d), "{round}");
    }
    // The spare replaced by a copy (another folder) with a file changed in it: listed, and the
    // changed file is written again.
    let copy = d.join("spare-copy");
    crate::common::copy_dir(&spare, &copy);
    let manifest = walkdir::WalkDir::new(copy.join("executors"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.file_name() == "manifest.toml" && !e.path().to_string_lossy().contains("alpha"))
        .expect("a manifest of another skill")
        .into_path();
    std::fs::write(&manifest, "tampered").expect("write");
    std::fs::remove_dir_all(&spare).expect("rm");
    std::fs::rename(&copy, &spare).expect("mv");
    edit(d, "alpha", " Four.");
    let o = build(d);
    assert!(o.checked.spare_listed > 0, "{:?}", o.checked);
    assert_eq!(tree(&d.join("out")), clean_out(d), "after the spare was replaced");
    // The record lost (as a killed build leaves it): listed again.
    for e in std::fs::read_dir(d.join(".skillc/out")).expect("per-output store") {
        std::fs::remove_file(e.expect("entry").path().join("spare.json")).expect("rm");
    }
    edit(d, "alpha", " Five.");
    let o = build(d);
    assert!(o.checked.spare_listed > 0, "{:?}", o.checked);
    assert_eq!(tree(&d.join("out")), clean_out(d), "after the record was lost");
    edit(d, "alpha", " Six.");
    assert_eq!(build(d).checked.spare_listed, 0, "trusted again");
}

/// Sets a file's modification time (its change time becomes now: only the clock sets it).
fn set_mtime(path: &Path, t: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open")
        .set_modified(t)
        .expect("set mtime");
}

/// Issue 16, item 4: a fresh-process build of an unchanged project reads no input, only their
/// metadata (size, times, inode), as git and cargo do. A file touched but identical is read
/// and hashed again and the build stays "up to date"; a file edited and given back its size
/// and modification time is still seen (its change time moved). Fails before the record:
/// every input was read and hashed by every build.
#[test]
fn an_unchanged_project_is_answered_from_its_inputs_metadata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    // Files written less than a second before they are recorded are read again next time
    // (git's "racily clean" files): let them settle once.
    let settle = || std::thread::sleep(std::time::Duration::from_millis(1_200));
    settle();
    let files = 6; // three skills, each SKILL.md and scripts/tool.py
    let cold = build(d);
    assert_eq!(cold.checked.inputs_hashed, files, "{:?}", cold.checked);
    let noop = build(d);
    assert!(noop.up_to_date);
    assert_eq!(noop.checked.inputs_statted, files, "{:?}", noop.checked);
    assert_eq!(
        noop.checked.inputs_hashed, 0,
        "an unchanged input is not read: {:?}",
        noop.checked
    );
    assert_eq!(
        noop.checked.out_listed, 0,
        "a no-op does not list out/: {:?}",
        noop.checked
    );

    // Touched, same bytes: that skill's files are read and hashed, and nothing is built.
    let md = d.join("skills/beta/SKILL.md");
    set_mtime(&md, std::time::SystemTime::now());
    settle();
    let touched = build(d);
    assert!(touched.up_to_date, "a touched file with the same bytes changes nothing");
    assert_eq!(touched.checked.inputs_hashed, 2, "{:?}", touched.checked);
    let again = build(d);
    assert!(again.up_to_date);
    assert_eq!(again.checked.inputs_hashed, 0, "recorded again: {:?}", again.checked);

    // Edited at the same size, its modification time forged back: the change time tells.
    let before = std::fs::metadata(&md).expect("meta").modified().expect("mtime");
    let text = std::fs::read_to_string(&md).expect("read");
    let edited = text.replacen("meetings", "meeTings", 1);
    assert_eq!(edited.len(), text.len());
    std::fs::write(&md, edited).expect("write");
    set_mtime(&md, before);
    let o = build(d);
    assert!(!o.up_to_date, "an edit with forged size and time is built");
    assert!(o.checked.inputs_hashed >= 2, "{:?}", o.checked);
    let kept = std::fs::read_to_string(d.join("out/skills/beta/SKILL.md")).expect("retained copy");
    assert!(kept.contains("meeTings"), "the edit is in the catalog");
}

/// Issue 16, item 4: the search for skills lists a folder again only when its metadata moved
/// (git's untracked cache): an unchanged tree lists no folder, a file added to one skill lists
/// that folder only, a new skill lists its folder and its parent, a touched but identical file
/// lists nothing (its skill is read and hashed again, and the build stays a no-op), and
/// `--force` lists every folder. Fails before the record: every build listed all 7 folders.
#[test]
fn only_folders_whose_metadata_moved_are_listed_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    // Folders and files changed less than a second before they are recorded are listed and
    // read again next time: let them settle after each change.
    let settle = || std::thread::sleep(std::time::Duration::from_millis(1_200));
    settle();
    let folders = 7; // skills/, and each skill's folder and scripts/
    let cold = build(d);
    assert_eq!(cold.checked.dirs_listed, folders, "{:?}", cold.checked);
    let noop = build(d);
    assert!(noop.up_to_date);
    assert_eq!(
        (noop.checked.dirs_listed, noop.checked.dirs_reused),
        (0, folders),
        "{:?}",
        noop.checked
    );

    // A file added to one skill's scripts/: that folder only, and the file is in the catalog.
    std::fs::write(d.join("skills/beta/scripts/extra.py"), "print('x')\n").expect("write");
    settle();
    let added = build(d);
    assert!(!added.up_to_date);
    assert_eq!(added.checked.dirs_listed, 1, "{:?}", added.checked);
    assert_eq!(added.checked.inputs_hashed, 3, "beta's files only: {:?}", added.checked);
    assert!(d.join("out/skills/beta/scripts/extra.py").is_file());
    assert_eq!(build(d).checked.dirs_listed, 0, "recorded again");

    // A new skill: its parent and its own folder.
    let delta = d.join("skills/delta");
    std::fs::create_dir(&delta).expect("mkdir");
    std::fs::write(delta.join("SKILL.md"), skill_md("delta", "")).expect("write");
    settle();
    let new = build(d);
    assert_eq!(new.checked.dirs_listed, 2, "{:?}", new.checked);
    assert!(d.join("out/skills/delta/SKILL.md").is_file());
    assert_eq!(tree(&d.join("out")), clean_out(d), "the same as a clean build");

    // Touched, same bytes: no folder listed, the skill read again, nothing built.
    set_mtime(&d.join("skills/alpha/SKILL.md"), std::time::SystemTime::now());
    settle();
    let touched = build(d);
    assert!(touched.up_to_date, "{:?}", touched.checked);
    assert_eq!(
        (touched.checked.dirs_listed, touched.checked.inputs_hashed),
        (0, 2),
        "{:?}",
        touched.checked
    );

    // A file removed: its folder is listed again and the file leaves the catalog.
    std::fs::remove_file(d.join("skills/beta/scripts/extra.py")).expect("rm");
    settle();
    let removed = build(d);
    assert_eq!(removed.checked.dirs_listed, 1, "{:?}", removed.checked);
    assert!(!d.join("out/skills/beta/scripts/extra.py").exists());

    // Forced: every folder is listed.
    let mut s = Session::open(options(d), BUILT_IN_VOCABULARY.into()).expect("open");
    s.forget_fingerprint();
    let forced = s.build(1_900_000_000, &mut |_| {}).expect("build");
    assert_eq!(forced.checked.dirs_listed, folders + 1, "{:?}", forced.checked);
}
