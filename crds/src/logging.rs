//! Structured logging for the redoline binaries: text for people, JSON (one object per line) for log pipelines.
//! The level comes from `RUST_LOG` (for example `info,redoline_capture=debug`), default `info`.

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// The logging flags every redoline binary takes: `#[command(flatten)]` them into its CLI.
#[derive(Clone, Debug, clap::Args)]
pub struct LoggingArgs {
    /// Log line format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "REDOLINE_LOG_FORMAT")]
    pub log_format: LogFormat,
}

impl LoggingArgs {
    /// Installs the global subscriber these flags ask for.
    pub fn init(&self) {
        init(self.log_format);
    }
}

/// Installs the global subscriber writing to stderr; stdout stays free for command output.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second init (as in tests) keeps the first subscriber; nothing to report.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
