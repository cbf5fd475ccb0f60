//! The scan's word lists: the trigger words that open a line to the behaviour rules (one
//! Aho-Corasick automaton, built on first use), the hosts and words the rules and the
//! context rules look for, and word-boundary search.
//!
//! Lists are lower case; lines are lower-cased before they are matched.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

/// Trigger category: A download command (`curl`, `wget`, `iwr`, …).
pub(crate) const FETCH: u16 = 1;
/// Trigger category: A decoder (`base64`, `xxd`, `b64decode`, …).
pub(crate) const DECODE: u16 = 1 << 1;
/// Trigger category: An evaluator (`eval`, `exec(`, `iex`, …).
pub(crate) const EVAL: u16 = 1 << 2;
/// Trigger category: A URL (`://`).
pub(crate) const URL: u16 = 1 << 3;
/// Trigger category: An archive (`.zip`, `unzip`, `7z`, …).
pub(crate) const ARCHIVE: u16 = 1 << 4;
/// Trigger category: A password word.
pub(crate) const PASSWORD: u16 = 1 << 5;
/// Trigger category: The environment (`env`, `set |`, `export -p`).
pub(crate) const ENV: u16 = 1 << 6;
/// Trigger category: A credential store (`.ssh`, `.aws`, a keychain, …).
pub(crate) const CRED: u16 = 1 << 7;
/// Trigger category: A network send (`curl`, `requests.post`, `nc`, …).
pub(crate) const SEND: u16 = 1 << 8;
/// Trigger category: Prompt-injection wording (`ignore`, `the user`, …).
pub(crate) const INJECT: u16 = 1 << 9;
/// Trigger category: A shell and a socket (`/dev/tcp/`, `mkfifo`, `socat`, `fsockopen`, …).
pub(crate) const SHELLNET: u16 = 1 << 10;
/// Trigger category: A secret store or several secrets named in prose (`~/.ssh`, `.env`, `api
/// keys`, `private key`, …).
pub(crate) const HARVEST: u16 = 1 << 11;

/// The trigger words and the categories they open. A line without any is skipped.
pub(crate) const TRIGGER_WORDS: &[(&str, u16)] = &[
    ("curl", FETCH | SEND),
    ("wget", FETCH | SEND),
    ("iwr", FETCH),
    ("invoke-webrequest", FETCH | SEND),
    ("invoke-restmethod", FETCH | SEND),
    ("irm ", FETCH),
    ("downloadstring", FETCH),
    ("downloadfile", FETCH),
    ("base64", DECODE),
    ("base32", DECODE),
    ("b64decode", DECODE),
    ("atob(", DECODE),
    ("xxd", DECODE),
    ("openssl", DECODE),
    ("-enc", DECODE),
    ("fromhex", DECODE),
    ("codecs.decode", DECODE),
    ("zlib.decompress", DECODE),
    ("marshal.loads", DECODE),
    ("eval", EVAL),
    ("exec(", EVAL),
    ("iex", EVAL),
    ("invoke-expression", EVAL),
    ("://", URL),
    (".zip", ARCHIVE),
    (".rar", ARCHIVE),
    (".7z", ARCHIVE),
    ("7z ", ARCHIVE),
    ("unzip", ARCHIVE),
    ("unrar", ARCHIVE),
    ("archive", ARCHIVE),
    ("password", PASSWORD),
    ("passcode", PASSWORD),
    ("passphrase", PASSWORD),
    ("pass:", PASSWORD),
    ("pass :", PASSWORD),
    ("pwd:", PASSWORD),
    ("env", ENV),
    ("set |", ENV),
    ("set|", ENV),
    ("export -p", ENV),
    (".ssh", CRED),
    ("id_rsa", CRED),
    ("id_ed25519", CRED),
    ("id_ecdsa", CRED),
    (".aws", CRED),
    ("keychain", CRED),
    ("find-generic-password", CRED),
    ("find-internet-password", CRED),
    (".netrc", CRED),
    (".git-credentials", CRED),
    (".gnupg", CRED),
    ("/etc/shadow", CRED),
    ("login data", CRED),
    ("wallet.dat", CRED),
    (".kube/config", CRED),
    (".docker/config.json", CRED),
    (".config/gcloud", CRED),
    (".pypirc", CRED),
    (".npmrc", CRED),
    ("requests.post", SEND),
    ("requests.put", SEND),
    ("httpx.post", SEND),
    ("urlopen", SEND),
    ("fetch(", SEND),
    ("axios.post", SEND),
    ("http.request", SEND),
    ("https.request", SEND),
    ("smtplib", SEND),
    ("sendall", SEND),
    ("webhook", SEND),
    ("/dev/tcp/", SEND),
    ("nc ", SEND),
    ("ncat", SEND),
    ("netcat", SEND),
    ("scp ", SEND),
    ("api.telegram.org", SEND),
    ("discord.com/api", SEND),
    ("ignore", INJECT),
    ("disregard", INJECT),
    ("forget", INJECT),
    ("override your", INJECT),
    ("the user", INJECT),
    ("developer mode", INJECT),
    ("you are now", INJECT),
    ("silently", INJECT),
    ("without asking", INJECT),
    ("for confirmation", INJECT),
    ("for permission", INJECT),
    ("without showing", INJECT),
    ("show the output", INJECT),
    ("display the output", INJECT),
    ("hide the", INJECT),
    ("suppress", INJECT),
    ("show the command", INJECT),
    ("show the user the", INJECT),
    ("these instructions", INJECT),
    ("jailbreak", INJECT),
    ("no restrictions", INJECT),
    ("have restrictions", INJECT),
    ("unrestricted", INJECT),
    ("bound by", INJECT),
    ("from now on", INJECT),
    ("god mode", INJECT),
    ("sudo mode", INJECT),
    ("as dan", INJECT),
    ("are dan", INJECT),
    ("bypass your", INJECT),
    ("disable your", INJECT),
    ("pretend you have", INJECT),
    ("/dev/tcp/", SHELLNET),
    ("/dev/udp/", SHELLNET),
    ("mkfifo", SHELLNET),
    ("socat", SHELLNET),
    ("fsockopen", SHELLNET),
    ("tcpclient", SHELLNET),
    ("pty.spawn", SHELLNET),
    ("-rsocket", SHELLNET),
    ("use socket", SHELLNET),
    (" -e /bin/", SHELLNET),
    (".ssh", HARVEST),
    (".aws", HARVEST),
    (".env", HARVEST),
    (".openclaw", HARVEST),
    (".config/", HARVEST),
    ("id_rsa", HARVEST),
    ("id_ed25519", HARVEST),
    ("keychain", HARVEST),
    ("api keys", HARVEST),
    ("tokens", HARVEST),
    ("passwords", HARVEST),
    ("secrets", HARVEST),
    ("credentials", HARVEST),
    ("private key", HARVEST),
    ("ssh key", HARVEST),
    ("seed phrase", HARVEST),
    ("recovery phrase", HARVEST),
    ("mnemonic", HARVEST),
    ("cookies", HARVEST),
    ("environment variable", HARVEST),
    ("env vars", HARVEST),
    ("the user's", HARVEST),
    ("login data", HARVEST),
];

/// Paste sites and anonymous file drops: code fetched from them has no accountable author.
pub(crate) const PASTE_HOSTS: &[&str] = &[
    "glot.io",
    "pastebin.com",
    "pastebin.pl",
    "paste.ee",
    "hastebin.com",
    "hastebin.skyra.pw",
    "ghostbin.com",
    "ghostbin.co",
    "rentry.co",
    "rentry.org",
    "dpaste.org",
    "dpaste.com",
    "termbin.com",
    "ix.io",
    "sprunge.us",
    "0x0.st",
    "controlc.com",
    "justpaste.it",
    "paste.rs",
    "bpa.st",
    "pastes.dev",
    "privatebin.net",
    "transfer.sh",
    "file.io",
    "temp.sh",
    "catbox.moe",
    "gofile.io",
    "anonfiles.com",
];

/// URL shorteners: the real host is hidden.
pub(crate) const SHORTENERS: &[&str] = &[
    "bit.ly",
    "tinyurl.com",
    "t.co",
    "goo.gl",
    "is.gd",
    "cutt.ly",
    "rb.gy",
    "shorturl.at",
];

/// Vendors' documented installers (context rule C1). An entry with a `/` is a prefix of
/// `host/path`; otherwise the host or any subdomain matches.
pub const VENDOR_HOSTS: &[&str] = &[
    "sh.rustup.rs",
    "static.rust-lang.org",
    "get.docker.com",
    "test.docker.com",
    "brew.sh",
    "raw.githubusercontent.com/homebrew/",
    "raw.githubusercontent.com/nvm-sh/",
    "raw.githubusercontent.com/ohmyzsh/",
    "raw.githubusercontent.com/helm/",
    "install.python-poetry.org",
    "astral.sh",
    "bun.sh",
    "deno.land",
    "deno.com",
    "get.pnpm.io",
    "fnm.vercel.app",
    "ollama.com",
    "ollama.ai",
    "get.helm.sh",
    "get.k3s.io",
    "get.sdkman.io",
    "foundry.paradigm.xyz",
    "deb.nodesource.com",
    "rpm.nodesource.com",
    "starship.rs",
    "tailscale.com",
    "claude.ai",
    "opencode.ai",
    "cursor.com",
    "mise.run",
    "mise.jdx.dev",
    "pyenv.run",
    "get.rvm.io",
    "sh.vector.dev",
    "install.determinate.systems",
    "nixos.org",
    "get.volta.sh",
    "fly.io",
    "get.pulumi.com",
    "dl.google.com",
    "sdk.cloud.google.com",
    "aka.ms",
    "install.meteor.com",
    "getcomposer.org",
    "get.acme.sh",
    "cli.doppler.com",
    "get.trunk.io",
    "pkgx.sh",
    "release.solana.com",
    "release.anza.xyz",
    "lambdalabs.com",
    "nousresearch.com",
    "raw.githubusercontent.com/aleohq/",
    "raw.githubusercontent.com/xdevplatform/",
    "raw.githubusercontent.com/pimalaya/",
    "cli.github.com",
    "openclaw.ai",
    "get.scoop.sh",
    "community.chocolatey.org",
    "install.julialang.org",
    "get-ghcup.haskell.org",
    "get.haskellstack.org",
    "get.jetify.com",
    "install.lix.systems",
];

/// Words saying a passage describes rather than instructs (context rule C3).
pub const DESCRIPTIVE_WORDS: &[&str] = &[
    "example",
    "e.g.",
    "for instance",
    "attack",
    "malicious",
    "malware",
    "detect",
    "injection",
    "suspicious",
    "red flag",
    "never run",
    "do not run",
    "don't run",
    "never execute",
    "avoid",
    "dangerous",
    "vulnerab",
    "exploit",
    "threat",
    "phishing",
    "indicator",
    "anti-pattern",
    "insecure",
    "unsafe",
    "beware",
    "scam",
    "⚠",
    "❌",
];

/// Fence info strings of blocks that are not meant to be run (context rule C2).
pub(crate) const QUOTED_FENCES: &[&str] = &[
    "text",
    "txt",
    "plaintext",
    "plain",
    "markdown",
    "md",
    "output",
    "log",
    "diff",
    "none",
    "nohighlight",
    "email",
    "prompt",
    "quote",
];

/// Programs that run what they read: the sinks of a pipe.
pub(crate) const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python3",
    "perl",
    "ruby",
    "node",
    "iex",
    "invoke-expression",
    "pwsh",
    "powershell",
    "source",
];

/// `eval "$(…)"` of these is the documented way to set them up.
pub(crate) const BENIGN_EVALS: &[&str] = &[
    "ssh-agent",
    "brew shellenv",
    "/bin/brew",
    "pyenv init",
    "pyenv virtualenv-init",
    "rbenv init",
    "nodenv init",
    "direnv hook",
    "zoxide init",
    "starship init",
    "conda shell",
    "/conda shell",
    "fnm env",
    "mise activate",
    "rtx activate",
    "thefuck",
    "opam env",
    "completion",
    "register-python-argcomplete",
    "luarocks path",
    "dircolors",
    "atuin init",
    "fzf --",
    "op signin",
    "keychain",
    "gpg-agent",
    "goenv init",
    "jenv init",
    "plenv init",
    "docker-machine env",
    "minikube",
    "aws-vault",
    "homebrew",
    "/bin/activate",
    "uv generate-shell-completion",
];

static TRIGGERS: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    // A DFA: the default picks a slower NFA past about a hundred patterns, and this
    // automaton reads every byte of every file.
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::DFA))
        .build(TRIGGER_WORDS.iter().map(|(w, _)| w))
        .ok()
});

/// The categories of trigger words on the line ([`FETCH`] | [`DECODE`] | …); 0: none.
pub(crate) fn mask_of(line: &str) -> u16 {
    let Some(ac) = TRIGGERS.as_ref() else {
        return u16::MAX;
    };
    let mut m = 0;
    for hit in ac.find_overlapping_iter(line) {
        m |= TRIGGER_WORDS[hit.pattern().as_usize()].1;
    }
    m
}

/// Words naming an archive file (bare "archive" is too common: "archive the email").
pub(crate) const ARCHIVE_WORDS: &[&str] = &[
    ".zip",
    ".rar",
    ".7z",
    "zip file",
    "zip archive",
    "7z archive",
    "rar archive",
    "encrypted archive",
    "protected archive",
];

/// Words of an instruction to run something (for archives and paste sites).
pub(crate) const RUN_WORDS: &[&str] = &[
    "run this",
    "run it",
    "run the",
    "execute",
    "install",
    "setup",
    "first",
    "launch",
    ".exe",
    "| sh",
    "| bash",
    "|sh",
    "|bash",
    "chmod +x",
    "before using",
];

/// Is `s[at..]` the start of a word (not inside another identifier)?
pub(crate) fn word_at(s: &str, at: usize, len: usize) -> bool {
    let b = s.as_bytes();
    let before =
        at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_' || b[at - 1] == b'-' || b[at - 1] == b'.');
    let after = b
        .get(at + len)
        .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-'));
    before && after
}

pub(crate) fn find_word(s: &str, w: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = s[from..].find(w) {
        let at = from + p;
        if word_at(s, at, w.len()) {
            return Some(at);
        }
        from = at + w.len();
    }
    None
}
