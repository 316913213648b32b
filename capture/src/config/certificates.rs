//! The trusted certificates a config names ([`TrustedCertificateFiles`]: one file, or the files
//! of a directory whose names match a glob), read into one PEM text. The Kafka client
//! (`sink::kafka::config`) and the schema registry client (`registry::http`) both trust what
//! `trustedCertificates` names, so the reading belongs to the config, not to either client.

use std::path::PathBuf;

use super::kafka_auth::TrustedCertificateFiles;

/// The PEM certificates of the files (or the matching files of a directory), concatenated. Each
/// file must hold at least one certificate: a Strimzi `ca.p12` or `ca.password` picked by a too
/// wide pattern is refused rather than handed to OpenSSL as garbage.
pub fn certificates_pem(sources: &[TrustedCertificateFiles]) -> Result<String, String> {
    let mut files: Vec<PathBuf> = Vec::new();
    for source in sources {
        if let Some(file) = &source.certificate {
            files.push(file.clone());
        }
        if let Some(pattern) = &source.pattern {
            let (Some(dir), Some(glob)) = (pattern.parent(), pattern.file_name()) else {
                return Err(format!("{}: not a directory and a glob", pattern.display()));
            };
            let glob = glob.to_string_lossy();
            let entries = std::fs::read_dir(dir)
                .map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
            let mut matched = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                // Secret keys are symlinks into `..data`: follow them, skip directories.
                if glob_matches(&glob, &name) && !entry.path().is_dir() {
                    matched.push(entry.path());
                }
            }
            if matched.is_empty() {
                return Err(format!("no file in {} matches {glob}", dir.display()));
            }
            matched.sort();
            files.extend(matched);
        }
    }
    let mut pem = String::new();
    for file in files {
        let bytes =
            std::fs::read(&file).map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
        let text = String::from_utf8(bytes)
            .ok()
            .filter(|text| text.contains("-----BEGIN CERTIFICATE-----"))
            .ok_or_else(|| format!("{}: holds no PEM certificate", file.display()))?;
        pem.push_str(text.trim_end());
        pem.push('\n');
    }
    Ok(pem)
}

/// Whether a file name matches a glob of `*` (any run of characters) and `?` (one character),
/// as Strimzi's `pattern` is used (`*.crt`). Names Kubernetes keeps for itself in a Secret
/// volume (`..data`, `..2026_12_05_...`) never match.
fn glob_matches(pattern: &str, name: &str) -> bool {
    if name.starts_with("..") {
        return false;
    }
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Greedy match with one backtrack point: the last `*` seen and where it started matching.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_strimzi_patterns_do_and_skip_kubernetes_entries() {
        assert!(glob_matches("*.crt", "ca.crt"));
        assert!(glob_matches("*.crt", "ca-2026-12-05T13-00-00Z.crt"));
        assert!(!glob_matches("*.crt", "ca.p12"));
        assert!(!glob_matches("*.crt", "ca.password"));
        assert!(glob_matches("ca?.crt", "ca2.crt"));
        assert!(!glob_matches("ca?.crt", "ca.crt"));
        assert!(glob_matches("*", "user.key"));
        assert!(glob_matches("a*b*c", "aXXbYbZc"));
        assert!(!glob_matches("a*b*c", "aXXbYbZ"));
        assert!(glob_matches("ca.crt", "ca.crt"));
        assert!(!glob_matches("*", "..data"));
        assert!(!glob_matches("*", "..2026_12_05_13_00_00.000000001"));
    }
}
