//! What each request asks the auxiliary model, and the shape of the verdict it must answer
//! (docs/json.md, "Curator model requests"). Pure constants.

use serde_json::{Value, json};

use super::select::Candidate;

const ARCHIVE: &str = "This agent-written skill has not been loaded for `inactive_days` days (or was never \
loaded since it was created). Archiving moves its folder aside; it can be restored. Confirm the archive, or skip \
it when the skill still looks useful.";

const CONSOLIDATE: &str = "These agent-written skills look like near-duplicates. Either consolidate them: pick \
the one to keep (`survivor`, one of them), list the ones merged into it and archived (`archive`: at least one, \
never the survivor; members in neither list are left alone), and write the survivor's new Markdown body (`body`: \
the text after the frontmatter, which stays unchanged), keeping whatever is unique in the archived ones. Or skip.";

const EDIT: &str = "Loads of this agent-written skill are often followed by tool failures (see `failures`). \
Propose one fix of its body as a unified diff of exactly one hunk of at most 200 lines against `skill_md` \
(`diff`; line numbers of skill_md; the body starts at `body_first_line` and nothing before it may change), or skip.";

/// The task name, its instructions and the verdict's shape for a candidate.
pub(super) fn task(c: &Candidate) -> (&'static str, &'static str, Value) {
    let skip = json!({"action": "skip", "reason": "why not"});
    match c {
        Candidate::Archive { .. } => (
            "archive",
            ARCHIVE,
            json!({"one_of": [{"action": "archive", "rationale": "why"}, skip]}),
        ),
        Candidate::Consolidate { .. } => (
            "consolidate",
            CONSOLIDATE,
            json!({"one_of": [{"action": "consolidate", "survivor": "name", "archive": ["name"], "body": "markdown", "rationale": "why"}, skip]}),
        ),
        Candidate::Edit { .. } => (
            "edit",
            EDIT,
            json!({"one_of": [{"action": "edit", "diff": "@@ -a,b +c,d @@\n…", "rationale": "why"}, skip]}),
        ),
    }
}
