//! Secrets: the database credentials and the Kafka client properties, from the files the pod
//! mounts (named by environment variables the operator sets) or, for local runs, from
//! environment variables. Never from the config file, never logged: [`Secret`]'s `Debug` and
//! `Display` print `<redacted>`.

use std::fmt;
use std::path::{Path, PathBuf};

use super::ConfigError;

pub const USERNAME_FILE_VAR: &str = "REDOLINE_DATABASE_USERNAME_FILE";
pub const PASSWORD_FILE_VAR: &str = "REDOLINE_DATABASE_PASSWORD_FILE";
pub const USERNAME_VAR: &str = "REDOLINE_DATABASE_USERNAME";
pub const PASSWORD_VAR: &str = "REDOLINE_DATABASE_PASSWORD";
pub const WALLET_DIR_VAR: &str = "REDOLINE_DATABASE_WALLET_DIR";
pub const KAFKA_CONFIG_DIR_VAR: &str = "REDOLINE_KAFKA_CONFIG_DIR";

/// A value that must not be printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that hands it to a client library.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The capture user's name and password, and the wallet directory for TLS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseCredentials {
    pub username: String,
    pub password: Secret,
    pub wallet_dir: Option<PathBuf>,
}

/// Looks up an environment variable.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Reads the credentials: `*_FILE` variables first (the pod's mounted Secret), then the plain
/// variables. A variable naming a file that cannot be read is an error naming both.
pub fn database_credentials(lookup: Lookup<'_>) -> Result<DatabaseCredentials, ConfigError> {
    let username = secret_value(lookup, USERNAME_FILE_VAR, USERNAME_VAR)?;
    let password = secret_value(lookup, PASSWORD_FILE_VAR, PASSWORD_VAR)?;
    let wallet_dir = lookup(WALLET_DIR_VAR).map(PathBuf::from);
    if let Some(dir) = wallet_dir.as_ref().filter(|dir| !dir.is_dir()) {
        return Err(ConfigError::new(
            WALLET_DIR_VAR,
            format!("{} is not a directory", dir.display()),
        ));
    }
    Ok(DatabaseCredentials {
        username: username.0,
        password,
        wallet_dir,
    })
}

fn secret_value(lookup: Lookup<'_>, file_var: &str, var: &str) -> Result<Secret, ConfigError> {
    if let Some(path) = lookup(file_var) {
        return read_secret_file(Path::new(&path))
            .map_err(|message| ConfigError::new(file_var, format!("{path}: {message}")));
    }
    match lookup(var) {
        Some(value) if !value.is_empty() => Ok(Secret(value)),
        _ => Err(ConfigError::new(
            var,
            format!(
                "missing: set {file_var} to a file holding it (the pod's mounted Secret) or {var}"
            ),
        )),
    }
}

/// A mounted Secret key: the file's text without one trailing newline (editors add one).
pub(crate) fn read_secret_file(path: &Path) -> Result<Secret, String> {
    let text = std::fs::read_to_string(path).map_err(|error| format!("cannot read: {error}"))?;
    let value = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text);
    if value.is_empty() {
        return Err("the file is empty".to_owned());
    }
    Ok(Secret(value.to_owned()))
}

/// librdkafka client properties from the Kafka config Secret: one file per property, the file
/// name is the property (`sasl.password`), its text the value. Hidden files (the `..data` links
/// Kubernetes makes) are skipped. Sorted by name.
pub fn kafka_properties(lookup: Lookup<'_>) -> Result<Vec<(String, Secret)>, ConfigError> {
    let Some(dir) = lookup(KAFKA_CONFIG_DIR_VAR) else {
        return Ok(Vec::new());
    };
    let entries = std::fs::read_dir(&dir).map_err(|error| {
        ConfigError::new(KAFKA_CONFIG_DIR_VAR, format!("{dir}: cannot list: {error}"))
    })?;
    let mut properties = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| {
            ConfigError::new(KAFKA_CONFIG_DIR_VAR, format!("{dir}: cannot list: {error}"))
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || entry.path().is_dir() {
            continue;
        }
        let value = read_secret_file(&entry.path()).map_err(|message| {
            ConfigError::new(KAFKA_CONFIG_DIR_VAR, format!("{dir}/{name}: {message}"))
        })?;
        properties.push((name, value));
    }
    properties.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(properties)
}

/// The variable the Kerberos library reads its `krb5.conf` from (MIT Kerberos' `KRB5_CONFIG`);
/// the operator sets it on the containers when `spec.kafka.authentication.krb5Config` is set.
pub const KRB5_CONFIG_VAR: &str = "KRB5_CONFIG";

/// A `KRB5_CONFIG` naming a file that is not there is CDC-1001 now, rather than a GSSAPI
/// failure at the first broker connection. (The capture never sets it: `setenv` beside the
/// threads that already run is not safe, so it must be in place when the process starts.)
pub fn check_krb5_config(lookup: Lookup<'_>) -> Result<(), ConfigError> {
    match lookup(KRB5_CONFIG_VAR) {
        // A list (`a:b`, which MIT Kerberos also reads) is the user's own: left to the library.
        Some(path) if !path.contains(':') && !Path::new(&path).is_file() => Err(ConfigError::new(
            KRB5_CONFIG_VAR,
            format!(
                "{path} is not a file (it should be the krb5.conf of spec.kafka.authentication.krb5Config)"
            ),
        )),
        _ => Ok(()),
    }
}
