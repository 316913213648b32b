//! The Oracle client's configuration directory: where it finds `sqlnet.ora`, `tnsnames.ora` and
//! the wallet, and whether the wallet the pod mounts is the one it will use.
//!
//! The operator mounts `spec.database.walletSecret` at one directory, names it to the capture in
//! `REDOLINE_DATABASE_WALLET_DIR` and sets `TNS_ADMIN` to it on the doctor and capture containers.
//! The capture does not hand the directory to ODPI-C's initialisation
//! (`dpiContextCreateParams.oracleClientConfigDir`): ODPI-C implements that by calling `setenv`
//! when it creates its context, at the first connection, while other threads (HTTP, librdkafka)
//! run and may read the environment, which glibc does not make safe. So `TNS_ADMIN` is set before
//! the process starts, and this module checks what the client will make of it:
//!
//! - `TNS_ADMIN` names the wallet directory (a local run may have forgotten it);
//! - the client looks for its wallet in the connect string's `WALLET_LOCATION` (Easy Connect
//!   Plus `?wallet_location=`, a descriptor's `MY_WALLET_DIRECTORY`, also in the `tnsnames.ora`
//!   entry a net service name stands for), then in `sqlnet.ora`'s
//!   `WALLET_LOCATION`, then in `TNS_ADMIN`, then in its default places and the system's
//!   certificate store (Oracle Database Security Guide 19c, "Oracle Wallet Search Order"). A
//!   location that names another directory, such as `?/network/admin` in the `sqlnet.ora` of a
//!   downloaded Autonomous Database wallet (`?` is the Oracle home), leaves the mounted wallet
//!   unused; the `DIRECTORY` value may use `$VARIABLE`s, which Oracle Net expands;
//! - the wallet the client will open has `cwallet.sso`: the client opens it with no password, so
//!   it needs the auto-login file; `ewallet.p12` alone cannot be opened (Oracle's instructions
//!   create client wallets with `orapki wallet create ... -auto_login`);
//! - a connect string that is a net service name (`sales_high`) has a `tnsnames.ora` to look it
//!   up in.
//!
//! A directory with neither wallet file and no wallet location is not a fault: the client then
//! trusts the system's certificate store for TLS, and the directory may hold only `tnsnames.ora`
//! and `sqlnet.ora`.
//!
//! [`check`] is pure: [`NetConfigDir::read`] takes the directory's listing and `sqlnet.ora` first.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::secrets::Lookup;

/// The variable the Oracle client reads its configuration directory from.
pub const TNS_ADMIN: &str = "TNS_ADMIN";
/// The auto-login wallet: opened without a password.
pub const AUTO_LOGIN_WALLET: &str = "cwallet.sso";
/// The password-protected wallet (PKCS#12).
pub const PKCS12_WALLET: &str = "ewallet.p12";
const SQLNET_ORA: &str = "sqlnet.ora";
const TNSNAMES_ORA: &str = "tnsnames.ora";
const LDAP_ORA: &str = "ldap.ora";

/// What the check needs of the configuration directory: its file names, `sqlnet.ora` and
/// `tnsnames.ora`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetConfigDir {
    pub files: BTreeSet<String>,
    pub sqlnet_ora: Option<String>,
    pub tnsnames_ora: Option<String>,
}

impl NetConfigDir {
    /// Lists `dir` (hidden entries, such as the `..data` links of a Secret volume, left out) and
    /// reads its `sqlnet.ora` and `tnsnames.ora`.
    pub fn read(dir: &Path) -> Result<Self, NetConfigError> {
        let unreadable = |error: std::io::Error| NetConfigError::Unreadable {
            dir: dir.to_owned(),
            message: error.to_string(),
        };
        let mut files = BTreeSet::new();
        for entry in std::fs::read_dir(dir).map_err(unreadable)? {
            let name = entry.map_err(unreadable)?.file_name();
            let name = name.to_string_lossy();
            if !name.starts_with('.') {
                files.insert(name.into_owned());
            }
        }
        let text = |file: &str| match files.contains(file) {
            true => std::fs::read_to_string(dir.join(file))
                .map(Some)
                .map_err(|error| NetConfigError::Unreadable {
                    dir: dir.join(file),
                    message: error.to_string(),
                }),
            false => Ok(None),
        };
        Ok(Self {
            sqlnet_ora: text(SQLNET_ORA)?,
            tnsnames_ora: text(TNSNAMES_ORA)?,
            files,
        })
    }
}

/// Where the wallet location the client follows was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalletSetting {
    /// `wallet_location` or `MY_WALLET_DIRECTORY` in the connect string.
    ConnectString,
    /// `WALLET_LOCATION` in this `sqlnet.ora`.
    SqlnetOra(PathBuf),
}

impl fmt::Display for WalletSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ConnectString => f.write_str("the connect string's wallet location"),
            Self::SqlnetOra(path) => write!(f, "WALLET_LOCATION in {}", path.display()),
        }
    }
}

/// Which wallet the client will use, when the directory is right.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalletUse {
    /// The auto-login wallet in the directory, found through `setting` or, when `None`, because
    /// the directory is `TNS_ADMIN`.
    AutoLogin { setting: Option<WalletSetting> },
    /// No wallet: TLS trusts the system's certificate store.
    SystemStore,
}

/// The configuration the client will use: the directory and the wallet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetConfig {
    pub dir: PathBuf,
    pub files: BTreeSet<String>,
    pub wallet: WalletUse,
}

impl fmt::Display for NetConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<&str> = self.files.iter().map(String::as_str).collect();
        write!(
            f,
            "TNS_ADMIN={} ({}); ",
            self.dir.display(),
            match files.is_empty() {
                true => "empty".to_owned(),
                false => files.join(", "),
            }
        )?;
        match &self.wallet {
            WalletUse::AutoLogin {
                setting: Some(setting),
            } => {
                write!(
                    f,
                    "the wallet {AUTO_LOGIN_WALLET} there, named by {setting}"
                )
            }
            WalletUse::AutoLogin { setting: None } => {
                write!(
                    f,
                    "the wallet {AUTO_LOGIN_WALLET} there, found through TNS_ADMIN"
                )
            }
            WalletUse::SystemStore => {
                f.write_str("no wallet: TLS connections trust the system's certificate store")
            }
        }
    }
}

/// Why the Oracle client would not use the mounted configuration as intended.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetConfigError {
    #[error("{}: cannot read: {message}", dir.display())]
    Unreadable { dir: PathBuf, message: String },
    #[error(
        "TNS_ADMIN is {}, so the Oracle client does not read sqlnet.ora, tnsnames.ora or the \
         wallet in {}",
        tns_admin.as_ref().map_or("unset".to_owned(), |dir| dir.display().to_string()),
        wallet.display()
    )]
    TnsAdmin {
        wallet: PathBuf,
        tns_admin: Option<PathBuf>,
    },
    #[error(
        "{setting} is {directory:?}{}, not {}: the Oracle client looks for the wallet there, \
         and the mounted wallet is not used{}",
        resolved.as_ref().map_or(String::new(), |dir| format!(" ({})", dir.display())),
        wallet.display(),
        if directory.trim_start().starts_with('?') {
            " (`?` stands for the Oracle home, not the mounted Secret)"
        } else {
            ""
        }
    )]
    WalletElsewhere {
        setting: WalletSetting,
        /// The value as written.
        directory: String,
        /// The value with `?` and `$VARIABLE`s expanded, when it could be.
        resolved: Option<PathBuf>,
        wallet: PathBuf,
    },
    #[error(
        "{} has no {AUTO_LOGIN_WALLET}{}: the Oracle client opens its wallet without a password, \
         so it needs the auto-login wallet",
        dir.display(),
        match (has_pkcs12, setting) {
            (true, _) => format!(" (only {PKCS12_WALLET}, which needs its password)"),
            (false, Some(setting)) => format!(", which {setting} names"),
            (false, None) => String::new(),
        }
    )]
    NoAutoLoginWallet {
        dir: PathBuf,
        has_pkcs12: bool,
        setting: Option<WalletSetting>,
    },
    #[error(
        "the connect string {alias:?} is a net service name, but {} has no {TNSNAMES_ORA} to \
         look it up in",
        dir.display()
    )]
    NoTnsnames { dir: PathBuf, alias: String },
}

impl NetConfigError {
    /// What to do, for doctor's finding and the stop's message.
    pub fn fix(&self) -> String {
        match self {
            Self::Unreadable { .. } => {
                "check that spec.database.walletSecret names a Secret the pod can mount".to_owned()
            }
            Self::TnsAdmin { wallet, .. } => format!(
                "set TNS_ADMIN={} (the operator sets it in the pod when \
                 spec.database.walletSecret is set)",
                wallet.display()
            ),
            Self::WalletElsewhere {
                setting: WalletSetting::SqlnetOra(_),
                wallet,
                ..
            } => format!(
                "in sqlnet.ora, set WALLET_LOCATION = (SOURCE = (METHOD = FILE) (METHOD_DATA = \
                 (DIRECTORY = \"{}\"))), or remove WALLET_LOCATION (the client then looks in \
                 TNS_ADMIN), and update the Secret",
                wallet.display()
            ),
            Self::WalletElsewhere {
                setting: WalletSetting::ConnectString,
                wallet,
                ..
            } => format!(
                "set the connect string's wallet location to {}, or remove it",
                wallet.display()
            ),
            Self::NoAutoLoginWallet { dir, .. } => format!(
                "add {AUTO_LOGIN_WALLET} to the wallet Secret: make it from ewallet.p12 with \
                 `orapki wallet create -wallet <dir> -auto_login` (asks for the wallet's \
                 password), then recreate the Secret from the directory; it is mounted at {}",
                dir.display()
            ),
            Self::NoTnsnames { alias, .. } => format!(
                "add tnsnames.ora defining {alias} to the wallet Secret, or give \
                 spec.database.connectString as Easy Connect (tcps://host:port/service) or a \
                 connect descriptor"
            ),
        }
    }
}

/// Checks that the Oracle client, run with environment `env` and connecting with
/// `connect_string`, reads its configuration from `wallet_dir` (whose contents are `dir`) and
/// will use the wallet there if there is one.
pub fn check(
    wallet_dir: &Path,
    env: Lookup<'_>,
    dir: &NetConfigDir,
    connect_string: &str,
) -> Result<NetConfig, NetConfigError> {
    let tns_admin = env(TNS_ADMIN).map(PathBuf::from);
    if tns_admin.as_deref().map(normalized) != Some(normalized(wallet_dir)) {
        return Err(NetConfigError::TnsAdmin {
            wallet: wallet_dir.to_owned(),
            tns_admin,
        });
    }
    let has = |file: &str| dir.files.contains(file);
    if is_net_service_name(connect_string) && !has(TNSNAMES_ORA) && !has(LDAP_ORA) {
        return Err(NetConfigError::NoTnsnames {
            dir: wallet_dir.to_owned(),
            alias: connect_string.trim().to_owned(),
        });
    }
    // The first place in the client's search order that is set decides. A net service name
    // stands for its tnsnames.ora entry; one this check cannot find (an IFILE, a default domain)
    // leaves sqlnet.ora to decide.
    let descriptor = match is_net_service_name(connect_string) {
        true => dir
            .tnsnames_ora
            .as_deref()
            .and_then(|text| tnsnames_entry(text, connect_string.trim()))
            .unwrap_or_default(),
        false => connect_string.to_owned(),
    };
    let configured = connect_string_wallet(&descriptor)
        .map(|directory| (WalletSetting::ConnectString, directory))
        .or_else(|| {
            let sqlnet_ora = dir.sqlnet_ora.as_deref()?;
            let directory = sqlnet_wallet_directory(sqlnet_ora)?;
            Some((
                WalletSetting::SqlnetOra(wallet_dir.join(SQLNET_ORA)),
                directory,
            ))
        });
    let setting = match configured {
        Some((setting, directory)) => {
            let resolved = resolve(&directory, env);
            if resolved.as_deref().map(normalized) != Some(normalized(wallet_dir)) {
                return Err(NetConfigError::WalletElsewhere {
                    setting,
                    directory,
                    resolved,
                    wallet: wallet_dir.to_owned(),
                });
            }
            Some(setting)
        }
        None => None,
    };
    let wallet = match (has(AUTO_LOGIN_WALLET), has(PKCS12_WALLET), setting) {
        (true, _, setting) => WalletUse::AutoLogin { setting },
        (false, false, None) => WalletUse::SystemStore,
        (false, has_pkcs12, setting) => {
            return Err(NetConfigError::NoAutoLoginWallet {
                dir: wallet_dir.to_owned(),
                has_pkcs12,
                setting,
            });
        }
    };
    Ok(NetConfig {
        dir: wallet_dir.to_owned(),
        files: dir.files.clone(),
        wallet,
    })
}

/// A path as a string without trailing separators, for comparing directories as written.
fn normalized(path: &Path) -> &str {
    let text = path.to_str().unwrap_or_default();
    match text.trim_end_matches('/') {
        "" if text.starts_with('/') => "/",
        trimmed => trimmed,
    }
}

/// A net service name to look up (`sales_high`, `sales.example.com`), as opposed to Easy Connect
/// (`host:port/service`, `tcps://...`) or a connect descriptor (`(DESCRIPTION=...)`).
fn is_net_service_name(connect_string: &str) -> bool {
    let connect_string = connect_string.trim();
    !connect_string.is_empty() && !connect_string.contains(['/', ':', '(', '?', '[', ' '])
}

/// The wallet directory the connect string names: Easy Connect Plus `wallet_location=` or a
/// descriptor's `(WALLET_LOCATION=...)` / `(MY_WALLET_DIRECTORY=...)` in `SECURITY`.
fn connect_string_wallet(connect_string: &str) -> Option<String> {
    let lower = connect_string.to_ascii_lowercase();
    ["my_wallet_directory", "wallet_location"]
        .iter()
        .find_map(|name| {
            let at = find_word(&lower, name)?;
            let rest = connect_string[at + name.len()..].trim_start();
            let value = rest.strip_prefix('=')?;
            let end = value.find(['&', ')']).unwrap_or(value.len());
            Some(unquoted(&value[..end]).to_owned())
        })
        .filter(|value| !value.is_empty())
}

/// The connect descriptor `tnsnames.ora` gives the net service name `name` (entries may list
/// several names, `a, b = (DESCRIPTION=...)`, and names compare without case).
fn tnsnames_entry(tnsnames_ora: &str, name: &str) -> Option<String> {
    let text = without_comments(tnsnames_ora);
    let mut rest = text.as_str();
    while let Some(equals) = rest.find('=') {
        let names = &rest[..equals];
        let value = rest[equals + 1..].trim_start();
        let end = balanced_end(value);
        if names
            .split(',')
            .any(|candidate| candidate.trim().eq_ignore_ascii_case(name))
        {
            return Some(value[..end].to_owned());
        }
        rest = &value[end..];
    }
    None
}

/// The text without `#` comments (to the end of the line), as Oracle Net's parameter files have.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `DIRECTORY` of `sqlnet.ora`'s `WALLET_LOCATION`: the parenthesised form
/// `(SOURCE=(METHOD=FILE)(METHOD_DATA=(DIRECTORY=...)))`, or a bare value. Comments (`#` to the
/// end of the line) are skipped; `ENCRYPTION_WALLET_LOCATION` (the database's TDE keystore) is
/// another parameter.
fn sqlnet_wallet_directory(sqlnet_ora: &str) -> Option<String> {
    let text = without_comments(sqlnet_ora);
    let lower = text.to_ascii_lowercase();
    let at = find_word(&lower, "wallet_location")?;
    let value = text[at + "wallet_location".len()..]
        .trim_start()
        .strip_prefix('=')?
        .trim_start();
    if !value.starts_with('(') {
        let end = value.find(char::is_whitespace).unwrap_or(value.len());
        return Some(unquoted(&value[..end]).to_owned()).filter(|value| !value.is_empty());
    }
    let body = &value[..balanced_end(value)];
    let body_lower = body.to_ascii_lowercase();
    let at = find_word(&body_lower, "directory")?;
    let directory = body[at + "directory".len()..]
        .trim_start()
        .strip_prefix('=')?;
    let end = directory.find(')').unwrap_or(directory.len());
    Some(unquoted(&directory[..end]).to_owned()).filter(|value| !value.is_empty())
}

/// Where `word` starts in `text` as a whole word (not inside `encryption_wallet_location`).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(is_name)
    })
}

/// The length of the parenthesised group `text` starts with (all of it when unbalanced).
fn balanced_end(text: &str) -> usize {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

fn unquoted(value: &str) -> &str {
    let value = value.trim();
    value
        .strip_prefix('"')
        .and_then(|value| value.strip_suffix('"'))
        .unwrap_or(value)
}

/// The directory with `?` (the Oracle home, from `ORACLE_HOME`) and `$NAME` / `${NAME}` expanded
/// from `env`; `None` when one of them is unset.
fn resolve(directory: &str, env: Lookup<'_>) -> Option<PathBuf> {
    let directory = directory.trim();
    let mut out = String::new();
    let mut rest = match directory.strip_prefix('?') {
        Some(rest) => {
            out.push_str(&env("ORACLE_HOME")?);
            rest
        }
        None => directory,
    };
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = match after.strip_prefix('{') {
            Some(braced) => {
                let end = braced.find('}')?;
                (&braced[..end], &braced[end + 1..])
            }
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        out.push_str(&env(name)?);
        rest = tail;
    }
    out.push_str(rest);
    Some(PathBuf::from(out))
}

#[cfg(test)]
mod tests;
