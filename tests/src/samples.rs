//! Output samples committed in the docs and compared with what a test produced: each sample is
//! the fenced `text` block after a `<!-- sample: KEY -->` line. With the bless variable set the
//! test rewrites the blocks instead of comparing.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, anyhow, bail};

/// The marker line before the sample `key`.
pub fn marker(key: &str) -> String {
    format!("<!-- sample: {key} -->")
}

/// Where the sample `key` sits in the doc's lines: its first content line and its closing fence.
pub fn sample_block(doc: &[&str], key: &str) -> anyhow::Result<(usize, usize)> {
    let start = doc
        .iter()
        .position(|l| l.trim() == marker(key))
        .ok_or_else(|| anyhow!("the doc has no line {:?}", marker(key)))?;
    if doc.get(start + 1).map(|l| l.trim()) != Some("```text") {
        bail!("{} must be followed by a ```text block", marker(key));
    }
    let end = doc[start + 2..]
        .iter()
        .position(|l| l.trim() == "```")
        .map(|i| start + 2 + i)
        .ok_or_else(|| anyhow!("the block after {} is not closed", marker(key)))?;
    Ok((start + 2, end))
}

/// Compares every sample (after `normalise`, given the sample's key and text) with its block in
/// `doc`, or rewrites the blocks when `bless_env` is set; a drift is an error naming
/// `bless_command` and, for each drifted sample, its first differing line.
pub fn compare_or_bless(
    doc: &Path,
    samples: &BTreeMap<String, String>,
    bless_env: &str,
    bless_command: &str,
    normalise: impl Fn(&str, &str) -> String,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(doc).with_context(|| format!("reading {}", doc.display()))?;
    let bless = std::env::var_os(bless_env).is_some_and(|v| !v.is_empty() && v != "0");
    if bless {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for (key, output) in samples {
            let borrowed: Vec<&str> = lines.iter().map(String::as_str).collect();
            let (first, end) = sample_block(&borrowed, key)?;
            // Without trailing blanks (kubectl pads empty values); the comparison ignores them.
            let new: Vec<String> = output
                .trim_end()
                .lines()
                .map(|l| l.trim_end().to_owned())
                .collect();
            lines.splice(first..end, new);
        }
        let mut out = lines.join("\n");
        out.push('\n');
        std::fs::write(doc, out).with_context(|| format!("writing {}", doc.display()))?;
        eprintln!("rewrote the samples in {}", doc.display());
        return Ok(());
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut drifted = Vec::new();
    for (key, output) in samples {
        let (first, end) = sample_block(&lines, key)?;
        let committed = normalise(key, &lines[first..end].join("\n"));
        let actual = normalise(key, output);
        if committed != actual {
            let first = committed
                .lines()
                .zip(actual.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| committed.lines().count().min(actual.lines().count()));
            drifted.push(format!(
                "--- {key}: first difference at normalised line {}\n--- committed (normalised)\n\
                 {committed}\n--- now (normalised)\n{actual}",
                first + 1
            ));
        }
    }
    if !drifted.is_empty() {
        bail!(
            "the output no longer matches {}; if the change is intended, regenerate it with\n  \
             {bless_command}\n\n{}",
            doc.display(),
            drifted.join("\n\n")
        );
    }
    Ok(())
}
