//! The GRANT statements the capture prints when a privilege is missing: in doctor's fixes and in
//! the prerequisite stop a refused call becomes (CDC-1002). One spelling for both, so what a DBA
//! copies from either runs as printed.

/// A user or object name as SQL writes it: plain when it is a simple upper-case identifier,
/// double-quoted otherwise (a quote inside doubled).
pub fn sql_name(name: &str) -> String {
    let simple = name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || matches!(c, '_' | '$' | '#'));
    if simple {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// `GRANT <privilege> TO <user>;` for each privilege, joined by spaces. A common user (one that
/// mines from the root and works in a PDB) gets `CONTAINER=ALL`: a grant made in the root alone
/// does not reach the PDB.
pub fn grant_statements(privileges: &[&str], user: &str, common_user: bool) -> String {
    let scope = if common_user { " CONTAINER=ALL" } else { "" };
    let user = sql_name(user);
    privileges
        .iter()
        .map(|privilege| format!("GRANT {privilege} TO {user}{scope};"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_only_when_sql_needs_it_and_common_users_are_granted_everywhere() {
        assert_eq!(sql_name("C##CDC"), "C##CDC");
        assert_eq!(sql_name("cdc"), "\"cdc\"");
        assert_eq!(sql_name("A\"B"), "\"A\"\"B\"");
        assert_eq!(
            grant_statements(&["LOGMINING", "SELECT ON V_$LOG"], "C##CDC", true),
            "GRANT LOGMINING TO C##CDC CONTAINER=ALL; GRANT SELECT ON V_$LOG TO C##CDC CONTAINER=ALL;"
        );
        assert_eq!(
            grant_statements(&["LOGMINING"], "Cdc", false),
            "GRANT LOGMINING TO \"Cdc\";"
        );
    }
}
