//! What can go wrong, each with the message the user sees.

/// A failed command. Every variant's message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("cannot reach the Kubernetes API: {0}")]
    Config(String),
    #[error("OracleCapture {namespace}/{name} not found")]
    NotFound { namespace: String, name: String },
    #[error("Kubernetes API error: {0}")]
    Api(#[from] kube::Error),
    #[error("the OracleCapture cannot be read: {0}")]
    Unreadable(String),
    /// A spec edit the plugin will not write; the message says why.
    #[error("{0}")]
    Refused(String),
    #[error("the OracleCapture changed while it was edited; run the command again")]
    Conflict,
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}
