//! The commands: read, decide (pure modules), write, print.

use std::io::Write;

use crate::cli::{Cli, Command, Output};
use crate::edit::{self, Edit};
use crate::error::PluginError;
use crate::fetch;
use crate::render;
use crate::view::{Source, StatusView};

/// Runs the command line, printing to `out`.
pub async fn run(cli: Cli, out: &mut impl Write) -> Result<(), PluginError> {
    let (client, default_namespace) = fetch::client(cli.context.as_deref()).await?;
    let namespace = cli.namespace.unwrap_or(default_namespace);
    match cli.command {
        Command::Status { name, output } => {
            let capture = fetch::capture(&client, &namespace, &name).await?;
            let (live, source) = match fetch::live_status(&client, &namespace, &name).await {
                Ok((live, pod, port)) => (Some(live), Source::Capture { pod, port }),
                Err(reason) => (None, Source::ResourceOnly { reason }),
            };
            let view = StatusView::build(&capture, live.as_ref(), source);
            match output {
                Output::Text => out.write_all(render::screen(&view).as_bytes())?,
                Output::Json => {
                    let json = serde_json::to_string_pretty(&view)
                        .map_err(|e| PluginError::Unreadable(e.to_string()))?;
                    writeln!(out, "{json}")?;
                }
            }
        }
        Command::Snapshot {
            name,
            tables,
            condition,
            id,
        } => {
            let capture = fetch::capture(&client, &namespace, &name).await?;
            let id = id.unwrap_or_else(|| edit::default_id("snapshot", jiff::Timestamp::now()));
            let edit = edit::snapshot(&capture, &tables, condition.as_deref(), &id)?;
            let written = fetch::merge_patch(&client, &namespace, &name, &edit.patch).await?;
            // An API server whose CRD predates the field drops it (a structural schema prunes
            // what it does not know): say so rather than report a request that is not there.
            let stored = written
                .pointer("/spec/snapshot/requests")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|all| {
                    all.iter()
                        .any(|r| r.get("id").and_then(|v| v.as_str()) == Some(id.as_str()))
                });
            if !stored {
                return Err(PluginError::Refused(
                    "the cluster's OracleCapture CRD has no spec.snapshot.requests, so the API \
                     server dropped the request: upgrade redoline's CRDs (docs/install.md)"
                        .into(),
                ));
            }
            print_edit(&name, &edit, out)?;
        }
        Command::Reposition { name, scn, id } => {
            let capture = fetch::capture(&client, &namespace, &name).await?;
            let id = id.unwrap_or_else(|| edit::default_id("reposition", jiff::Timestamp::now()));
            let edit = edit::reposition(&capture, scn, &id)?;
            fetch::merge_patch(&client, &namespace, &name, &edit.patch).await?;
            print_edit(&name, &edit, out)?;
        }
    }
    Ok(())
}

fn print_edit(name: &str, edit: &Edit, out: &mut impl Write) -> Result<(), PluginError> {
    writeln!(out, "oraclecapture.redoline.io/{name}: {}", edit.summary)?;
    Ok(())
}
