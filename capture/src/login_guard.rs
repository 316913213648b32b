//! A refused login, remembered across restarts so that it is not repeated.
//!
//! Kubernetes restarts a stopped capture with a back-off, and runs `doctor` (which logs in too)
//! before each start. With a wrong password every restart is one more failed login, and Oracle
//! locks the account once the profile's `FAILED_LOGIN_ATTEMPTS` is reached (10 in the DEFAULT
//! profile): about 25 minutes of CrashLoopBackOff, and then the account is locked for every
//! other user of it too.
//!
//! So once the database refuses a login (CDC-1003), the capture writes a marker into its spill
//! directory, which is on the pod's persistent volume. The marker holds the refusal and a salted
//! SHA-256 of the credentials it tried, never the credentials themselves. While the marker
//! matches the credentials at hand, the capture does not log in: it stops again with CDC-1003 at
//! once. Other credentials (a changed Secret) are tried, and a login that succeeds removes the
//! marker. The same credentials are tried again once an hour ([`RETRY_SAME_AFTER`]), so an
//! account a DBA unlocked recovers by itself, and at once when the marker file is deleted.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::CaptureError;
use crate::source::SourceError;
use crate::stop::Stop;

/// The marker's file name in the spill directory.
pub const MARKER_FILE: &str = "login-refused.json";

/// How long the same refused credentials are not tried again. Then one login is tried (an
/// account a DBA unlocked meanwhile starts again by itself), and a new refusal starts the wait
/// again: ten failed logins, the DEFAULT profile's limit, take ten hours instead of minutes.
pub const RETRY_SAME_AFTER: jiff::SignedDuration = jiff::SignedDuration::from_hours(1);

/// The credentials of one login attempt, and where their refusal is remembered.
pub struct LoginGuard {
    marker: PathBuf,
    username: String,
    connect_string: String,
    password: String,
}

impl std::fmt::Debug for LoginGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginGuard")
            .field("marker", &self.marker)
            .field("username", &self.username)
            .field("connect_string", &self.connect_string)
            .finish_non_exhaustive()
    }
}

/// What the marker file holds.
#[derive(Debug, Serialize, Deserialize)]
struct Refusal {
    /// Hex salt and hex SHA-256 of the salt and the credentials.
    salt: String,
    digest: String,
    /// The stop the refusal gave, as it was written then.
    code: String,
    message: String,
    at: String,
}

impl LoginGuard {
    /// A guard for logging in as `username` at `connect_string`, its marker in `dir`.
    pub fn new(dir: &Path, username: &str, password: &str, connect_string: &str) -> Self {
        Self {
            marker: dir.join(MARKER_FILE),
            username: username.to_owned(),
            connect_string: connect_string.to_owned(),
            password: password.to_owned(),
        }
    }

    /// Logs in with `login` unless these credentials were refused before; remembers a refusal
    /// and forgets it after a login that succeeds.
    pub fn login<S>(
        &self,
        login: impl FnOnce() -> Result<S, SourceError>,
    ) -> Result<S, CaptureError> {
        if let Some(stop) = self.refused_before() {
            return Err(CaptureError::Stop(Box::new(stop)));
        }
        match login() {
            Ok(source) => {
                self.forget();
                Ok(source)
            }
            Err(error @ SourceError::LoginRefused { .. }) => {
                let stop = error.stop();
                if let Some(stop) = &stop {
                    self.remember(stop);
                }
                Err(CaptureError::from(error))
            }
            Err(error) => Err(CaptureError::from(error)),
        }
    }

    /// The stop to give when the marker names these credentials.
    fn refused_before(&self) -> Option<Stop> {
        let text = std::fs::read_to_string(&self.marker).ok()?;
        let refusal: Refusal = match serde_json::from_str(&text) {
            Ok(refusal) => refusal,
            Err(error) => {
                tracing::warn!(path = %self.marker.display(), %error, "an unreadable login marker is ignored");
                return None;
            }
        };
        if self.digest(&refusal.salt) != refusal.digest {
            tracing::info!(path = %self.marker.display(), "the credentials changed since the database refused a login: trying them");
            return None;
        }
        let age = refusal
            .at
            .parse::<jiff::Timestamp>()
            .map(|at| jiff::Timestamp::now().duration_since(at));
        if age.is_ok_and(|age| age >= RETRY_SAME_AFTER) {
            tracing::info!(path = %self.marker.display(), at = %refusal.at, "the refused credentials are tried once more: the account may have been fixed meanwhile");
            return None;
        }
        Some(Stop::new(
            redoline_crds::StopCode::DatabaseLoginRefused,
            format!(
                "not logging in again with the credentials the database refused at {} ({}), so \
                 that restarts do not lock the account; change the Secret that \
                 spec.database.credentialsSecret names. The same credentials are tried again \
                 an hour after the refusal, or at once when {} is deleted from the spill \
                 volume. The refusal: {}",
                refusal.at,
                refusal.code,
                self.marker.display(),
                refusal.message
            ),
        ))
    }

    fn remember(&self, stop: &Stop) {
        let salt = salt();
        let refusal = Refusal {
            digest: self.digest(&salt),
            salt,
            code: stop.code.code().to_owned(),
            message: stop.message.clone(),
            at: jiff::Timestamp::now().to_string(),
        };
        let written = serde_json::to_string(&refusal)
            .map_err(std::io::Error::other)
            .and_then(|text| {
                if let Some(dir) = self.marker.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::write(&self.marker, text)
            });
        if let Err(error) = written {
            // The stop still happens; only the next restart's login is not prevented.
            tracing::warn!(path = %self.marker.display(), %error, "the refused login cannot be remembered: the next start logs in again");
        }
    }

    fn forget(&self) {
        match std::fs::remove_file(&self.marker) {
            Ok(()) => {
                tracing::info!(path = %self.marker.display(), "the login succeeded: the earlier refusal is forgotten")
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(path = %self.marker.display(), %error, "the login marker cannot be removed")
            }
        }
    }

    fn digest(&self, salt: &str) -> String {
        let mut hash = Sha256::new();
        for part in [
            salt,
            self.username.as_str(),
            self.connect_string.as_str(),
            self.password.as_str(),
        ] {
            hash.update(part.as_bytes());
            hash.update([0]);
        }
        hex(&hash.finalize())
    }
}

/// 16 random bytes in hex, from the kernel; the time when it cannot be read (a salt need not be
/// secret, only different from one marker to the next).
fn salt() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut file| file.read_exact(&mut bytes));
    if read.is_err() {
        let nanos = jiff::Timestamp::now().as_nanosecond();
        bytes = nanos.to_le_bytes();
    }
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use redoline_crds::StopCode;

    fn invalid_password() -> SourceError {
        SourceError::LoginRefused {
            code: "ORA-01017".into(),
            message: "ORA-01017: invalid username/password; logon denied".into(),
        }
    }

    fn locked() -> SourceError {
        SourceError::LoginRefused {
            code: "ORA-28000".into(),
            message: "ORA-28000: The account is locked.".into(),
        }
    }

    /// A database account whose profile locks it after `limit` failed logins in a row, as
    /// Oracle's `FAILED_LOGIN_ATTEMPTS` does: ORA-01017 until then, ORA-28000 after.
    struct Account {
        password: String,
        failed: u32,
        limit: u32,
    }

    impl Account {
        fn login(&mut self, password: &str) -> Result<&'static str, SourceError> {
            if self.failed >= self.limit {
                return Err(locked());
            }
            if password != self.password {
                self.failed += 1;
                return Err(invalid_password());
            }
            self.failed = 0;
            Ok("session")
        }
    }

    fn stop_code(result: Result<&'static str, CaptureError>) -> Option<StopCode> {
        result.err()?.stop().map(|stop| stop.code)
    }

    /// Twenty pod restarts (doctor and capture each log in) with a wrong password: one failed
    /// login in all, the account never locks, and each start stops with CDC-1003. Fixing the
    /// Secret logs in at once and forgets the refusal.
    #[test]
    fn restarts_with_a_refused_password_never_lock_the_account() {
        let dir = tempfile::tempdir().unwrap();
        let mut account = Account {
            password: "right".into(),
            failed: 0,
            limit: 10,
        };
        for _ in 0..20 {
            let guard = LoginGuard::new(dir.path(), "REDOLINE", "wrong", "db:1521/ORCLPDB1");
            let result = guard.login(|| account.login("wrong"));
            assert_eq!(stop_code(result), Some(StopCode::DatabaseLoginRefused));
        }
        assert_eq!(account.failed, 1, "only the first start tried the password");
        let guard = LoginGuard::new(dir.path(), "REDOLINE", "right", "db:1521/ORCLPDB1");
        assert_eq!(guard.login(|| account.login("right")).unwrap(), "session");
        assert!(!dir.path().join(MARKER_FILE).exists());
    }

    /// Without the guard the same restarts lock the account: what the guard is for.
    #[test]
    fn without_the_guard_the_restarts_lock_the_account() {
        let mut account = Account {
            password: "right".into(),
            failed: 0,
            limit: 10,
        };
        let last = (0..20).map(|_| account.login("wrong")).last().unwrap();
        assert!(matches!(last, Err(SourceError::LoginRefused { code, .. }) if code == "ORA-28000"));
    }

    #[test]
    fn the_marker_names_no_secret_and_deleting_it_tries_again() {
        let dir = tempfile::tempdir().unwrap();
        let guard = LoginGuard::new(dir.path(), "REDOLINE", "s3cret-pw", "db:1521/ORCLPDB1");
        let refused = || -> Result<&'static str, SourceError> { Err(invalid_password()) };
        assert!(guard.login(refused).is_err());
        let marker = std::fs::read_to_string(dir.path().join(MARKER_FILE)).unwrap();
        assert!(!marker.contains("s3cret-pw"), "{marker}");
        // Another user or database is not the refused login.
        let other = LoginGuard::new(dir.path(), "REDOLINE", "s3cret-pw", "db:1521/OTHER");
        assert_eq!(other.login(|| Ok("session")).unwrap(), "session");
        // That success removed the marker: the same credentials are tried again.
        assert_eq!(guard.login(|| Ok("session")).unwrap(), "session");
    }

    #[test]
    fn the_same_credentials_are_tried_again_an_hour_after_the_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let guard = LoginGuard::new(dir.path(), "REDOLINE", "pw", "db:1521/ORCLPDB1");
        let refused = || -> Result<&'static str, SourceError> { Err(locked()) };
        assert!(guard.login(refused).is_err());
        let mut tried = false;
        let _ = guard.login(|| {
            tried = true;
            refused()
        });
        assert!(!tried, "within the hour the refusal stands");
        // The refusal, an hour and a minute old.
        let path = dir.path().join(MARKER_FILE);
        let mut marker: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let old = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(61);
        marker["at"] = serde_json::Value::String(old.to_string());
        std::fs::write(&path, marker.to_string()).unwrap();
        assert_eq!(guard.login(|| Ok("session")).unwrap(), "session");
    }

    #[test]
    fn other_failures_are_not_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let guard = LoginGuard::new(dir.path(), "REDOLINE", "pw", "db:1521/ORCLPDB1");
        let unavailable = guard.login(|| -> Result<&'static str, SourceError> {
            Err(SourceError::Unavailable {
                message: "ORA-12541: TNS:no listener".into(),
            })
        });
        assert!(matches!(
            unavailable.map_err(|error| error.disposition()),
            Err(crate::error::Disposition::Retry { .. })
        ));
        assert!(!dir.path().join(MARKER_FILE).exists());
    }
}
