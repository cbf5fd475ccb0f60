//! Unit tests of translation: synonyms, rules, defaults, collisions, the description's object.

use super::*;
use crate::extract::Program;

fn vocab() -> Vocabulary {
    vocab::parse(vocab::DEFAULT_PATH, vocab::DEFAULT_TEXT).vocabulary
}

/// A sub-command of binary `x` with these words and nothing else (also `near`'s tests).
pub(super) fn sc(words: &str) -> SubCommand {
    SubCommand {
        words: words.split(' ').filter(|w| !w.is_empty()).map(str::to_owned).collect(),
        program: Program::Binary { name: "x".into() },
        args: vec![],
        source_section: String::new(),
        line: 1,
        invocations: 1,
        description: None,
        context: None,
        aliases: Vec::new(),
        free_text: false,
    }
}

fn info(name: &str) -> SkillInfo<'_> {
    SkillInfo {
        name: Some(name),
        dir_name: name,
        ..SkillInfo::default()
    }
}

/// A translated name, or a rejection's code and reason.
fn shown(outcome: Outcome) -> String {
    match outcome {
        Outcome::Translated(n) => n.full(),
        Outcome::Rejected { rule, reason, .. } => format!("{}: {reason}", rule.code),
    }
}

fn name(words: &str) -> String {
    let v = vocab();
    let ctx = skill_context(&info("p"), &v);
    shown(translate_one(&sc(words), &ctx, &v).0)
}

#[test]
fn synonyms_rules_and_defaults() {
    assert_eq!(name("gmail search"), "find_messages_p");
    assert_eq!(name("drive get"), "describe_files_p");
    assert_eq!(name("drive download"), "download_files_p");
    assert_eq!(name("gmail reply"), "send_messages_reply_p");
    assert_eq!(name("drive create-folder"), "create_folders_p");
    assert_eq!(name("gmail labels"), "list_labels_p");
    assert_eq!(name("gmail drafts create"), "create_drafts_p");
    assert_eq!(name("auth add"), "create_accounts_p");
    assert_eq!(name("login"), "login_accounts_p");
    assert_eq!(name("logout"), "logout_accounts_p");
    assert_eq!(name("whoami"), "describe_accounts_p");
}

#[test]
fn unknown_words_reject_with_the_word_named() {
    assert!(
        name("calendar frobnicate").starts_with("TR005: no mapping for `frobnicate`"),
        "{}",
        name("calendar frobnicate")
    );
    assert!(name("frobnicate").starts_with("TR005"));
    assert!(name("search").starts_with("TR002"), "{}", name("search"));
}

#[test]
fn collisions_are_told_apart_or_rejected() {
    let t = translate(
        &[sc("gmail search"), sc("gmail messages search"), sc("gmail send")],
        &info("gog"),
        &vocab(),
        &SkillReview::default(),
    );
    let codes: Vec<&str> = t
        .plans
        .iter()
        .map(|p| match &p.outcome {
            Outcome::Translated(_) => "ok",
            Outcome::Rejected { rule, .. } => rule.code,
        })
        .collect();
    // The command that names its object keeps the name; the other cannot be told apart.
    assert_eq!(codes, vec!["TR003", "ok", "ok"]);
    let t = translate(
        &[sc("list"), sc("list all")],
        &info("todo-tasks"),
        &vocab(),
        &SkillReview::default(),
    );
    let names: Vec<String> = t
        .plans
        .iter()
        .filter_map(|p| p.name().map(ExecutorName::full))
        .collect();
    assert_eq!(names, vec!["list_tasks_todo_tasks", "list_tasks_all_todo_tasks"]);
}

fn described(words: &str, description: &str, skill: SkillInfo<'_>) -> String {
    let v = vocab();
    let ctx = skill_context(&skill, &v);
    let one = SubCommand {
        description: Some(description.into()),
        args: vec![crate::extract::Arg {
            name: "key".into(),
            ty: crate::skill::gaia::ParamType::String,
            required: true,
            flag: None,
            position: Some(0),
            description: None,
            default: None,
        }],
        ..sc(words)
    };
    shown(translate_one(&one, &ctx, &v).0)
}

#[test]
fn the_commands_own_description_names_the_object_a_default_or_a_scope_noun_would_not() {
    // A bare singular noun with an item: the description's noun phrase is the object,
    // the noun a qualifier of it.
    assert_eq!(
        described("team", "All issues for a team", info("p")),
        "list_issues_team_p"
    );
    // A default object gives way to the object the description names with the same verb.
    let reminders = SkillInfo {
        description: Some("Manage reminders. Reminders with due dates."),
        ..info("reminders")
    };
    assert_eq!(described("list", "List all lists", reminders), "list_lists_reminders");
    // A verb that is not the name's action, a list of alternatives or a description that
    // does not lead with its noun phrase changes nothing.
    assert_eq!(
        described("list", "Check dependencies", reminders),
        "list_reminders_reminders"
    );
    assert_eq!(
        described("update", "Update tags/title/collection", reminders),
        "update_reminders_reminders"
    );
    assert_eq!(described("team", "Exposes issues of a team", info("p")), "read_teams_p");
}

#[test]
fn a_mode_flag_that_names_an_operation_is_named_by_its_words() {
    let v = vocab();
    let ctx = skill_context(&info("p"), &v);
    let mode = SubCommand {
        program: Program::Script {
            path: "scripts/generate_pdf.py".into(),
            interpreter: "python3".into(),
        },
        description: Some("Generate a PDF".into()),
        ..sc("--check-deps")
    };
    match translate_one(&mode, &ctx, &v).0 {
        Outcome::Translated(n) => assert_eq!(n.full(), "check_dependencies_p"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_plain_command_keeps_the_plain_name_in_a_collision() {
    let post = SubCommand {
        description: Some("Simple post".into()),
        ..sc("post")
    };
    let skill = SkillInfo {
        description: Some("Read, write and reply to posts."),
        ..info("xurl")
    };
    let t = translate(&[post, sc("reply")], &skill, &vocab(), &SkillReview::default());
    let names: Vec<String> = t
        .plans
        .iter()
        .map(|p| p.name().map(ExecutorName::full).unwrap_or_default())
        .collect();
    assert_eq!(names, vec!["send_posts_xurl", "send_posts_reply_xurl"]);
}

#[test]
fn provider_names() {
    assert_eq!(provider_of("google-workspace").as_deref(), Some("google_workspace"));
    assert_eq!(provider_of("café"), None);
    assert_eq!(provider_of("nul"), None);
    assert_eq!(provider_of("com1"), None);
    assert_eq!(provider_of("com-tools").as_deref(), Some("com_tools"));
}
