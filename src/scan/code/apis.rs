//! What the code rules know of the world, shared by the three languages: which environment
//! variables hold secrets and which probe the machine, which paths are credential stores,
//! shell start-up files or sandbox markers, which hosts receive exfiltrated data, which
//! programs are shells, which modules hide a dangerous API.

use crate::scan::rules::sc015_credential_exfiltration::credential;
use crate::scan::url::{first_url, host_matches, is_paste, public_ip};

/// Words of an environment variable's name that make it a secret (`_`-separated tokens).
const SECRET_TOKENS: &[&str] = &[
    "KEY",
    "KEYS",
    "APIKEY",
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "AUTH",
    "COOKIE",
    "COOKIES",
    "SESSION",
    "PRIVATE",
    "PAT",
    "MNEMONIC",
    "SEED",
    "DSN",
];

/// Whether an environment variable's name says it holds a secret (`AWS_SECRET_ACCESS_KEY`,
/// `GITHUB_TOKEN`, `DB_PASSWORD`; not `PATH`, `PWD` or `KEYBOARD_LAYOUT`).
pub(crate) fn secret_env(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    up.split(['_', '-', '.']).any(|t| SECRET_TOKENS.contains(&t)) || up.ends_with("APIKEY") || up.ends_with("TOKEN")
}

/// Environment variables whose presence says where the code runs: CI services, sandboxes,
/// containers, analysis machines.
const PROBE_ENV: &[&str] = &[
    "CI",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "JENKINS_URL",
    "JENKINS_HOME",
    "TRAVIS",
    "CIRCLECI",
    "BUILDKITE",
    "TF_BUILD",
    "TEAMCITY_VERSION",
    "CODEBUILD_BUILD_ID",
    "SANDBOX",
    "CODESPACES",
    "KUBERNETES_SERVICE_HOST",
    "container",
    "DOCKER_CONTAINER",
];

/// Whether reading this environment variable probes where the code runs.
pub(crate) fn probe_env(name: &str) -> bool {
    PROBE_ENV.iter().any(|p| p.eq_ignore_ascii_case(name)) || name.to_ascii_uppercase().contains("SANDBOX")
}

/// The vendor a secret variable belongs to (`OPENAI_API_KEY` → `openai`), when its first word
/// names one.
pub(crate) fn env_vendor(name: &str) -> Option<String> {
    const GENERIC: &[&str] = &[
        "API", "SECRET", "ACCESS", "AUTH", "PRIVATE", "MY", "APP", "CLIENT", "USER", "DB", "DATABASE", "SERVICE",
        "TOKEN", "KEY", "PASSWORD", "SESSION", "COOKIE", "BEARER", "PAT", "X",
    ];
    let first = name.split(['_', '-']).next()?.to_ascii_uppercase();
    (first.len() >= 2 && !GENERIC.contains(&first.as_str())).then(|| first.to_ascii_lowercase())
}

/// Whether `host` belongs to `vendor` (the host names it, or a known alias: `aws` →
/// `amazonaws.com`, `gh` → `github.com`, `hf` → `huggingface.co`, …).
pub(crate) fn host_of_vendor(host: &str, vendor: &str) -> bool {
    const ALIASES: &[(&str, &[&str])] = &[
        ("aws", &["amazonaws.com", "aws.amazon.com"]),
        ("gh", &["github.com", "githubusercontent.com"]),
        ("github", &["github.com", "githubusercontent.com"]),
        ("hf", &["huggingface.co"]),
        ("huggingface", &["huggingface.co"]),
        ("google", &["googleapis.com", "google.com"]),
        ("gcp", &["googleapis.com"]),
        ("gemini", &["googleapis.com"]),
        ("azure", &["azure.com", "microsoft.com", "windows.net"]),
        ("slack", &["slack.com"]),
        ("notion", &["notion.com", "notion.so"]),
        ("cf", &["cloudflare.com"]),
    ];
    let host = host.to_ascii_lowercase();
    if host.split('.').any(|label| label == vendor) {
        return true;
    }
    ALIASES
        .iter()
        .filter(|(v, _)| *v == vendor)
        .any(|(_, domains)| domains.iter().any(|d| host_matches(&host, d)))
}

/// A credential store named by a path (`~/.ssh/id_rsa`, a browser profile, a keychain, an
/// agent's configuration): its description.
pub(crate) fn credential_path(path: &str) -> Option<String> {
    let p = path.to_ascii_lowercase().replace('\\', "/");
    if let Some((_, what)) = credential(&p) {
        return Some(what.to_owned());
    }
    const MORE: &[(&str, &str)] = &[
        ("/.ssh", "an SSH key folder (~/.ssh)"),
        ("~/.ssh", "an SSH key folder (~/.ssh)"),
        ("/.aws", "AWS credentials (~/.aws)"),
        ("google/chrome", "a Chrome browser profile"),
        ("chromium/", "a Chromium browser profile"),
        ("bravesoftware", "a Brave browser profile"),
        ("microsoft/edge", "an Edge browser profile"),
        (".mozilla/firefox", "a Firefox browser profile"),
        ("firefox/profiles", "a Firefox browser profile"),
        ("logins.json", "browser saved passwords"),
        ("key4.db", "browser saved passwords"),
        ("cookies.sqlite", "browser cookies"),
        ("/cookies", "browser cookies"),
        ("local state", "a browser's key store"),
        ("library/keychains", "the macOS keychain"),
        (".openclaw/", "an agent's configuration (~/.openclaw)"),
        (".clawdbot/", "an agent's configuration (~/.clawdbot)"),
        (".claude/.credentials", "Claude Code credentials"),
        (".claude.json", "Claude Code configuration"),
        (".codex/auth", "Codex credentials"),
        (".gemini/oauth", "Gemini CLI credentials"),
        (".config/gh/hosts", "GitHub CLI credentials"),
        (".electrum", "a cryptocurrency wallet"),
        ("exodus", "a cryptocurrency wallet"),
        ("metamask", "a cryptocurrency wallet"),
        ("nkbihfbeogaeaoehlefnkodbefgpgknn", "the MetaMask wallet"),
        ("/etc/passwd", "/etc/passwd"),
    ];
    if let Some((_, what)) = MORE.iter().find(|(w, _)| p.contains(w)) {
        return Some((*what).to_owned());
    }
    // `~/.config/<tool>/…auth…`, `…token…`, `…credentials…`: a CLI's stored login.
    if p.contains(".config/") && ["auth", "token", "credential", "secret"].iter().any(|w| p.contains(w)) {
        return Some(format!("a stored login ({path})"));
    }
    None
}

/// Paths whose existence says where the code runs (containers, VMs, sandboxes).
pub(crate) fn probe_path(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    [
        "/.dockerenv",
        "/proc/1/cgroup",
        "/proc/self/cgroup",
        "/proc/cpuinfo",
        "/sys/class/dmi",
        "/sys/hypervisor",
        "vbox",
        "vmware",
        "qemu",
        "virtualbox",
        "sandbox",
        "/run/.containerenv",
    ]
    .iter()
    .any(|w| p.contains(w))
}

/// Commands whose output says where the code runs.
pub(crate) fn probe_command(cmd: &str) -> bool {
    let c = cmd.to_ascii_lowercase();
    [
        "systemd-detect-virt",
        "dmidecode",
        "virt-what",
        "hypervisor",
        "/proc/cpuinfo",
        "/.dockerenv",
        "sysctl -n machdep.cpu",
        "hw.model",
        "ioreg",
        "vboxmanage",
        "vmware",
        "qemu",
        "sandbox",
    ]
    .iter()
    .any(|w| c.contains(w))
}

/// A command that prints a secret (`cat ~/.ssh/id_rsa`, `security find-generic-password`).
pub(crate) fn credential_command(cmd: &str) -> Option<String> {
    let c = cmd.to_ascii_lowercase();
    if c.contains("find-generic-password") || c.contains("find-internet-password") || c.contains("dump-keychain") {
        return Some("a keychain password".to_owned());
    }
    if c.contains("secret-tool lookup") || c.contains("pass show") {
        return Some("a stored password".to_owned());
    }
    let reads = [
        "cat ", "type ", "head ", "tail ", "base64 ", "xxd ", "tar ", "zip ", "cp ", "scp ", "curl ",
    ];
    if reads.iter().any(|r| c.contains(r)) {
        return credential_path(&c);
    }
    None
}

/// Shell start-up files and schedulers: what is written there runs later (persistence).
pub(crate) fn persist_path(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    [
        ".bashrc",
        ".bash_profile",
        ".zshrc",
        ".zprofile",
        ".profile",
        ".bash_login",
        ".config/fish/config.fish",
        "/etc/profile",
        "/etc/bash.bashrc",
        "crontab",
        "/etc/cron",
        "/var/spool/cron",
        "launchagents/",
        "launchdaemons/",
        "/etc/systemd/",
        ".config/systemd/user",
        ".config/autostart",
        "/etc/rc.local",
        "start menu/programs/startup",
    ]
    .iter()
    .any(|w| p.contains(w))
}

/// A destination that only receives data (webhook catchers, tunnels, paste sites, chat
/// bots, raw IP addresses): why it is one.
pub(crate) fn exfil_host(dest: &str) -> Option<String> {
    let d = dest.to_ascii_lowercase();
    let host = match first_url(&d, 0) {
        Some((_, h, _)) => h.to_owned(),
        None => d.split(['/', ':']).next().unwrap_or_default().to_owned(),
    };
    const CATCHERS: &[&str] = &[
        "webhook.site",
        "requestbin.com",
        "requestbin.net",
        "pipedream.net",
        "ngrok.io",
        "ngrok-free.app",
        "ngrok.app",
        "trycloudflare.com",
        "serveo.net",
        "loca.lt",
        "interact.sh",
        "oast.fun",
        "oast.pro",
        "oast.live",
        "burpcollaborator.net",
        "beeceptor.com",
        "hookbin.com",
        "api.telegram.org",
    ];
    if let Some(c) = CATCHERS.iter().find(|c| host_matches(&host, c)) {
        return Some(format!("the data catcher {c}"));
    }
    if d.contains("discord.com/api/webhooks") || d.contains("discordapp.com/api/webhooks") {
        return Some("a Discord webhook".to_owned());
    }
    if is_paste(&host) {
        return Some(format!("the paste site {host}"));
    }
    if public_ip(&host) {
        return Some(format!("the raw IP address {host}"));
    }
    None
}

/// The host of a destination (a URL, `host:port` or a host).
pub(crate) fn dest_host(dest: &str) -> String {
    let d = dest.to_ascii_lowercase();
    match first_url(&d, 0) {
        Some((_, h, _)) => h.to_owned(),
        None => d
            .trim_start_matches(['(', '[', '\'', '"'])
            .split([' ', '/', ':', ',', '\'', '"'])
            .next()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// Programs that are shells (by base name).
pub(crate) fn is_shell_program(p: &str) -> bool {
    let base = p.trim().rsplit(['/', '\\']).next().unwrap_or(p).to_ascii_lowercase();
    matches!(
        base.as_str(),
        "sh" | "bash"
            | "zsh"
            | "dash"
            | "ksh"
            | "fish"
            | "ash"
            | "cmd"
            | "cmd.exe"
            | "powershell"
            | "powershell.exe"
            | "pwsh"
    )
}

/// Modules and globals that give access to code execution, processes, sockets or the
/// file system: building their names at run time hides them from a reader.
pub(crate) const SENSITIVE_NAMES: &[&str] = &[
    "child_process",
    "os",
    "subprocess",
    "socket",
    "net",
    "http",
    "https",
    "vm",
    "pty",
    "ctypes",
    "builtins",
    "__builtin__",
    "importlib",
    "marshal",
    "pickle",
    "eval",
    "exec",
    "execsync",
    "execfile",
    "spawn",
    "system",
    "popen",
    "compile",
    "function",
    "fs",
    "dns",
    "dgram",
    "worker_threads",
    "process",
    "commands",
    "shutil",
    "urllib",
    "urllib.request",
    "requests",
    "fetch",
    "xmlhttprequest",
    "websocket",
    "getattr",
    "__import__",
    "globals",
    "constructor",
];

/// Whether a name (or the last part of a dotted path) is in [`SENSITIVE_NAMES`].
pub(crate) fn sensitive_name(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    let last = n.rsplit('.').next().unwrap_or(&n);
    let n = n.strip_prefix("node:").unwrap_or(&n);
    SENSITIVE_NAMES.contains(&n) || SENSITIVE_NAMES.contains(&last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert!(secret_env("AWS_SECRET_ACCESS_KEY") && secret_env("GITHUB_TOKEN") && secret_env("DB_PASSWORD"));
        assert!(!secret_env("PATH") && !secret_env("PWD") && !secret_env("KEYBOARD_LAYOUT") && !secret_env("HOME"));
        assert_eq!(env_vendor("OPENAI_API_KEY").as_deref(), Some("openai"));
        assert_eq!(env_vendor("API_KEY"), None);
        assert!(host_of_vendor("api.openai.com", "openai"));
        assert!(host_of_vendor("s3.amazonaws.com", "aws"));
        assert!(!host_of_vendor("collector.example.invalid", "openai"));
        assert!(credential_path("~/.ssh/id_ed25519").is_some());
        assert!(credential_path("/home/u/.config/google-chrome/Default/Login Data").is_some());
        assert!(credential_path("~/.openclaw/openclaw.json").is_some());
        assert!(credential_path("~/.config/tool/auth.json").is_some());
        assert!(credential_path("./data/report.json").is_none());
        assert!(persist_path("~/.bashrc") && !persist_path("/tmp/notes"));
        assert!(exfil_host("https://webhook.site/abc").is_some());
        assert!(exfil_host("https://api.openai.com/v1").is_none());
        assert_eq!(dest_host("https://a.example.invalid:8443/x"), "a.example.invalid");
        assert!(is_shell_program("/bin/bash") && !is_shell_program("git"));
        assert!(sensitive_name("child_process") && sensitive_name("node:child_process") && !sensitive_name("path"));
    }
}
