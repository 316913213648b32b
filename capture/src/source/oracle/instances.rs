//! RAC: reaching the log writer of every instance.
//!
//! Each RAC instance has a log writer (LGWR) of its own, writing its own redo thread, and a
//! commit makes only the committing instance's LGWR write. The window planner ends a window below
//! the lowest `LAST_REDO_CHANGE#` of the open threads (`source/window.rs`), so a flush that
//! reaches one instance leaves a quiet instance's thread where its LGWR last wrote, and that
//! instance holds every other instance's changes back until it writes again (a commit, a log
//! switch). Debezium flushes every node for the same reason (`RacCommitLogWriterFlushStrategy`:
//! one flush connection per host listed in `rac.nodes`, each committing to the flush table).
//!
//! redoline finds the instances itself: `GV$INSTANCE` lists the open ones by name, and the
//! configured connect string, given that name, reaches that one instance: Easy Connect takes it
//! after the service (`host:port/service/instance`), a connect descriptor as `INSTANCE_NAME` in
//! `CONNECT_DATA` (Net Services Administrator's Guide, "Understanding the Easy Connect Naming
//! Method"; Net Services Reference, "INSTANCE_NAME"). A SCAN listener hands such a request to
//! the instance named. Each instance gets a session of its own for the flush, taken from
//! `maxConnections` ([`pool_budget`]).
//!
//! Pure: the client (`super`) runs the statements and holds the sessions.

/// An open instance of the cluster (`GV$INSTANCE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// `INSTANCE_NAME`: what a connect string names the instance by.
    pub name: String,
    /// `THREAD#`: the redo thread its log writer writes.
    pub thread: u16,
}

/// The connect string that reaches only `instance`, from the configured `connect_string`;
/// `None` when it cannot name an instance: a `tnsnames.ora` alias, or an Easy Connect string
/// without a service name (the instance follows the service in its syntax,
/// `[//]host[:port][/service_name][:server][/instance_name][?parameters]`).
pub fn instance_connect_string(connect_string: &str, instance: &str) -> Option<String> {
    let connect_string = connect_string.trim();
    if connect_string.starts_with('(') {
        return descriptor_with_instance(connect_string, instance);
    }
    // An optional protocol (`tcps://`, Easy Connect Plus) or `//` before the host.
    let protocol = connect_string.find("://").filter(|&at| {
        connect_string[..at]
            .chars()
            .all(|c| c.is_ascii_alphabetic())
    });
    let (prefix, rest) = match protocol {
        Some(at) => connect_string.split_at(at + 3),
        None if connect_string.starts_with("//") => connect_string.split_at(2),
        None => ("", connect_string),
    };
    let (address, parameters) = match rest.split_once('?') {
        Some((address, parameters)) => (address, Some(parameters)),
        None => (rest, None),
    };
    let mut parts = address.split('/');
    let host = parts.next().filter(|host| !host.is_empty())?;
    let service = parts.next().filter(|service| !service.is_empty())?;
    let mut named = format!("{prefix}{host}/{service}/{instance}");
    if let Some(parameters) = parameters {
        named.push('?');
        named.push_str(parameters);
    }
    Some(named)
}

/// A connect descriptor with `(INSTANCE_NAME=instance)` in its `CONNECT_DATA`, replacing one it
/// had; `None` without a `CONNECT_DATA` section.
fn descriptor_with_instance(descriptor: &str, instance: &str) -> Option<String> {
    let compact: String = descriptor.chars().filter(|c| !c.is_whitespace()).collect();
    let upper = compact.to_ascii_uppercase();
    let mut named = compact.clone();
    if let Some(at) = upper.find("(INSTANCE_NAME=") {
        let end = at + upper[at..].find(')')?;
        named.replace_range(at..=end, "");
    }
    let at = named.to_ascii_uppercase().find("(CONNECT_DATA=")? + "(CONNECT_DATA=".len();
    named.insert_str(at, &format!("(INSTANCE_NAME={instance})"));
    Some(named)
}

/// The pooled sessions left when each of `instances` holds one of `max_connections` for its
/// flush; `None` when fewer than the two the pool needs would be left (the LogMiner session
/// holds one for the whole window).
pub fn pool_budget(max_connections: u32, instances: usize) -> Option<u32> {
    let instances = u32::try_from(instances).ok()?;
    max_connections
        .checked_sub(instances)
        .filter(|left| *left >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn easy_connect_names_the_instance_after_the_service() {
        let cases = [
            (
                "scan.example.com:1521/ORCLPDB1",
                "scan.example.com:1521/ORCLPDB1/orcl2",
            ),
            (
                "//scan:1521/sales.example.com",
                "//scan:1521/sales.example.com/orcl2",
            ),
            (
                "tcps://scan:2484/sales?wallet_location=/w",
                "tcps://scan:2484/sales/orcl2?wallet_location=/w",
            ),
            ("[::1]:1521/sales", "[::1]:1521/sales/orcl2"),
            (
                "scan/sales?connect_timeout=5",
                "scan/sales/orcl2?connect_timeout=5",
            ),
            (
                "scan:1521/sales:dedicated/orcl1",
                "scan:1521/sales:dedicated/orcl2",
            ),
        ];
        for (configured, expected) in cases {
            assert_eq!(
                instance_connect_string(configured, "orcl2").as_deref(),
                Some(expected),
                "{configured}"
            );
        }
        for without_service in ["scan:1521", "ORCL_HIGH", "scan:1521/"] {
            assert_eq!(instance_connect_string(without_service, "orcl2"), None);
        }
    }

    #[test]
    fn a_descriptor_gets_the_instance_in_its_connect_data() {
        let descriptor = "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=scan)(PORT=1521))\
                          (CONNECT_DATA = (SERVICE_NAME=sales)))";
        assert_eq!(
            instance_connect_string(descriptor, "orcl2").as_deref(),
            Some(
                "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=scan)(PORT=1521))\
                 (CONNECT_DATA=(INSTANCE_NAME=orcl2)(SERVICE_NAME=sales)))"
            )
        );
        let named = "(DESCRIPTION=(ADDRESS=(HOST=scan))(CONNECT_DATA=(SERVICE_NAME=s)\
                     (INSTANCE_NAME=orcl1)))";
        assert_eq!(
            instance_connect_string(named, "orcl3").as_deref(),
            Some(
                "(DESCRIPTION=(ADDRESS=(HOST=scan))(CONNECT_DATA=(INSTANCE_NAME=orcl3)(SERVICE_NAME=s)))"
            )
        );
        assert_eq!(
            instance_connect_string("(DESCRIPTION=(ADDRESS=(HOST=h)))", "orcl2"),
            None
        );
    }

    #[test]
    fn each_instance_takes_a_session_from_max_connections() {
        assert_eq!(pool_budget(4, 2), Some(2));
        assert_eq!(pool_budget(8, 3), Some(5));
        assert_eq!(pool_budget(3, 2), None, "the pool needs two");
        assert_eq!(pool_budget(2, 4), None);
    }
}
