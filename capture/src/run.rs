//! `redoline-capture run` and `doctor`: from a config file to a source, a sink and the engine.
//!
//! Everything is checked before anything connects: the config (CDC-1001), the secrets, the
//! scenario of a simulated database. The HTTP face, SIGTERM handling and the watch of the mounted
//! credentials ([`crate::rotation`]) run on a small Tokio runtime beside the mining loop, which is
//! blocking (the `oracle` crate is synchronous). A credential change stops the run as SIGTERM
//! does; [`run`] then says so ([`Ended::CredentialsChanged`]) and the process exits with its own
//! status.
//!
//! A transient database fault, or a Kafka page aborted by a transient fault, ends one attempt,
//! not the run: after a pause ([`crate::outage`])
//! the sink is opened again and its bookmark read, the source opened again (Oracle reconnects,
//! the simulator reloads its scenario), and a fresh buffer (which clears the spill directory) and
//! engine resume from the bookmark, so nothing is emitted twice. The HTTP server, the status
//! board and the metric families live across attempts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use prometheus::Registry;

use crate::buffer::{BufferMetrics, BufferSettings, TransactionBuffer};
use crate::cli::AclFormat;
use crate::config::secrets::DatabaseCredentials;
use crate::config::{self, CaptureConfig, ConfigError, SimulatorConfig, SimulatorDoor, secrets};
use crate::doctor::{self, DoctorRequest, Report, StoredPosition};
use crate::engine::idle::pause_unless_stopped;
use crate::engine::{Engine, Finish, RunOptions, Wiring};
use crate::error::{CaptureError, Disposition};
use crate::filter::Filters;
use crate::http::{CaptureState, StatusBoard, router};
use crate::live_config::{self, LiveRequests};
use crate::login_guard::LoginGuard;
use crate::metrics::{EngineMetrics, SchemaHistoryMetrics, SchemaHistoryStatus};
use crate::outage::{self, RestartBudget, Verdict};
use crate::record_location::RecordLocation;
use crate::registry::SchemaRegistry;
use crate::registry::http::HttpRegistry;
use crate::rotation::{self, Rotated};
use crate::schema_history::SchemaHistory;
use crate::simulator::Simulator;
use crate::simulator::sql::SimulatorPool;
use crate::sink::file::{self, FileSink, history_path, read_history_lines};
use crate::sink::journal::{
    self, JOURNAL_OFF_WARNING, Journal, JournalSettings, RebuiltTransaction,
};
use crate::sink::kafka::acls;
use crate::sink::{
    Bookmark, CaptureIdentity, DeliveryMode, KafkaClientSettings, KafkaSink, RetryPolicy,
    SinkError, SinkMetrics, SinkOptions, SinkStatus, TopicNames, peek_bookmark,
};
use crate::sink::{FileLines, Output};
use crate::source::oracle::net_config::{self, NetConfig, NetConfigDir, NetConfigError};
use crate::source::oracle::{ConnectOptions, OracleClient, ez_connect};
use crate::source::{DatabaseCatalog, FlashbackReader, OracleSource, RedoMiner};

fn environment() -> Vec<(String, String)> {
    std::env::vars().collect()
}

fn lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// What a run needs beyond its config: chosen by the command line, varied by tests.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// `--exit-at-end`.
    pub exit_at_end: bool,
    /// Restarts after transient database faults: [`outage::DATABASE_RETRY`].
    pub database_retry: RetryPolicy,
    /// Every metric family is registered here and served on `/metrics`.
    pub registry: Registry,
    /// Set on SIGTERM, on a credential change (or by a test): the run ends after the
    /// transaction being read.
    pub stop: Arc<AtomicBool>,
    /// The mounted credentials to follow ([`rotation::MOUNT_ROOT`] for `run`; none by default,
    /// and nothing is followed when the directory does not exist).
    pub credentials_root: Option<PathBuf>,
    /// Which mounts changed, once the watch of `credentials_root` saw a change.
    pub rotated: Rotated,
    /// The config file the run was loaded from, followed while it runs for changes of
    /// `snapshot.requests` ([`crate::live_config`]); `None` (the default) follows nothing.
    pub config_path: Option<PathBuf>,
}

impl RunSettings {
    pub fn new(exit_at_end: bool) -> Self {
        Self {
            exit_at_end,
            database_retry: outage::DATABASE_RETRY,
            registry: Registry::new(),
            stop: Arc::new(AtomicBool::new(false)),
            credentials_root: None,
            rotated: Rotated::default(),
            config_path: None,
        }
    }
}

/// How a run that did not fail ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// At the end of the data (`--exit-at-end`) or on SIGTERM.
    Finished,
    /// The files of these mounts under [`rotation::MOUNT_ROOT`] changed: the run stopped as on
    /// SIGTERM so that a new process reads them.
    CredentialsChanged(BTreeSet<String>),
}

/// `run --config FILE`.
pub fn run(config_path: &Path, exit_at_end: bool) -> Result<Ended, CaptureError> {
    let config = config::load(config_path, &environment())?;
    let settings = RunSettings {
        credentials_root: Some(PathBuf::from(rotation::MOUNT_ROOT)),
        config_path: Some(config_path.to_owned()),
        ..RunSettings::new(exit_at_end)
    };
    let rotated = Arc::clone(&settings.rotated);
    let result = run_config(config, settings);
    result.map(|()| match rotated.get() {
        Some(mounts) => Ended::CredentialsChanged(mounts.clone()),
        None => Ended::Finished,
    })
}

fn run_config(config: CaptureConfig, settings: RunSettings) -> Result<(), CaptureError> {
    match config.database.simulator.clone() {
        // A scenario that does not load is CDC-1001 at the first attempt, never retried.
        Some(simulator) => match simulator.through {
            SimulatorDoor::Boundary => run_with(config, || load_scenario(&simulator), settings),
            SimulatorDoor::Sql => {
                let database = config.clone();
                run_with(
                    config,
                    || through_sql(&database, SimulatorPool::new(load_scenario(&simulator)?)),
                    settings,
                )
            }
        },
        None => {
            let database = config.clone();
            run_with(config, || connect(&database), settings)
        }
    }
}

/// The real Oracle client over the simulator's SQL door, connected as the capture would be to
/// a database: the simulator's capture user, the configured PDB and flush table. Public for
/// tests and benches that count what the client asks of the database (`SimulatorPool::issued`).
pub fn through_sql(
    config: &CaptureConfig,
    pool: SimulatorPool,
) -> Result<OracleClient<SimulatorPool>, CaptureError> {
    let options = ConnectOptions {
        username: pool.with_simulator(|simulator| simulator.capture_user()),
        password: String::new(),
        // Easy Connect with a service, so the client can name each instance for its flush.
        connect_string: "simulator:1521/SIMULATOR".to_owned(),
        max_connections: config.database.max_connections,
        statement_timeout: None,
        pdb: config.database.pdb.clone(),
        flush_table: config.mining.flush_table.clone(),
    };
    Ok(OracleClient::over(pool, options)?)
}

fn load_scenario(simulator: &SimulatorConfig) -> Result<Simulator, CaptureError> {
    let loaded = if simulator.follow {
        Simulator::following_scenario_file(&simulator.scenario)
    } else {
        Simulator::from_scenario_file(&simulator.scenario)
    };
    loaded.map_err(|error| {
        ConfigError::new("database.simulator.scenario", error.to_string())
            .stop()
            .into()
    })
}

/// `doctor --config FILE`.
/// The text `redoline-capture acls` prints for the config at `config_path` (see
/// `sink::kafka::acls`). A config without a Kafka sink is CDC-1001: it needs no ACLs, and asking
/// for them is a mistake worth saying.
pub fn acls(
    config_path: &Path,
    principal: &str,
    format: AclFormat,
    legacy_idempotent_write: bool,
) -> Result<String, CaptureError> {
    let config = config::load(config_path, &environment())?;
    let Some(kafka) = &config.kafka else {
        return Err(
            ConfigError::new("kafka", "the config has no Kafka sink, so it needs no ACLs").into(),
        );
    };
    if !principal.contains(':') {
        return Err(ConfigError::new(
            "--principal",
            format!("{principal:?} is not a Kafka principal: write it as User:NAME"),
        )
        .into());
    }
    let mut rules = acls::required_acls(&config, principal);
    if legacy_idempotent_write {
        rules.extend(acls::legacy_idempotent_write(&config, principal));
    }
    Ok(match format {
        AclFormat::KafkaAcls => acls::kafka_acls_commands(&rules, &kafka.bootstrap_servers),
        AclFormat::Strimzi => {
            let block = serde_json::json!({"authorization": acls::strimzi_authorization(&rules)});
            let yaml = serde_norway::to_string(&block).map_err(|error| {
                ConfigError::new("--format", format!("cannot render YAML: {error}"))
            })?;
            format!("# spec of the KafkaUser whose principal is {principal}\n{yaml}")
        }
        AclFormat::Json => {
            let json = serde_json::to_string_pretty(&rules).map_err(|error| {
                ConfigError::new("--format", format!("cannot render JSON: {error}"))
            })?;
            format!("{json}\n")
        }
    })
}

pub fn doctor(config_path: &Path) -> Result<Report, CaptureError> {
    let config = config::load(config_path, &environment())?;
    let filters = Filters::new(&config.filters, &config.columns)
        .map_err(|error| ConfigError::new(error.field, error.problem))?;
    let request = |user: String| DoctorRequest {
        filters: filters.clone(),
        user,
        tables: config.table_names(),
        flush_table: config.mining.flush_table.clone(),
        pdb: config.database.pdb.clone(),
        read_only: config.mining.read_only,
        snapshots: !matches!(
            config.snapshot.mode,
            redoline_crds::v1alpha1::SnapshotMode::Never
                | redoline_crds::v1alpha1::SnapshotMode::NoData
                | redoline_crds::v1alpha1::SnapshotMode::SchemaOnly
        ),
    };
    let stored = stored_bookmark(&config);
    match &config.database.simulator {
        Some(simulator) => {
            let mut source =
                Simulator::from_scenario_file(&simulator.scenario).map_err(|error| {
                    ConfigError::new("database.simulator.scenario", error.to_string())
                })?;
            let request = request("C##CDC".to_owned());
            match simulator.through {
                SimulatorDoor::Boundary => Ok(doctor_with(&mut source, &request, stored)),
                SimulatorDoor::Sql => Ok(doctor_with(
                    &mut through_sql(&config, SimulatorPool::new(source))?,
                    &request,
                    stored,
                )),
            }
        }
        None => {
            let credentials = secrets::database_credentials(&lookup)?;
            let user = credentials.username.clone();
            // A wallet the client would not use is the finding: connecting would fail, or not
            // with the TLS settings intended.
            let wallet = match net_config(&credentials, &connect_string(&config)?) {
                Some(Err(error)) => return Ok(doctor::wallet_failed(&error)),
                Some(Ok(net)) => Some(doctor::wallet_used(&net)),
                None => None,
            };
            let mut report = match connect(&config) {
                Ok(mut source) => doctor_with(&mut source, &request(user), stored),
                // Not reached, not set up (a PDB not open), or a connection LogMiner cannot run on
                // (a PDB service before 21c): a report naming the fix.
                Err(CaptureError::Source(error)) if doctor::reported_at_connect(&error) => {
                    doctor::connection_failed(&error)
                }
                Err(error) => return Err(error),
            };
            report.checks.splice(0..0, wallet);
            Ok(report)
        }
    }
}

/// The checks, then the stored position with its lag behind the database.
fn doctor_with<S: DatabaseCatalog + RedoMiner + FlashbackReader>(
    source: &mut S,
    request: &DoctorRequest,
    stored: Result<Option<Bookmark>, String>,
) -> Report {
    let mut report = doctor::run(source, request);
    report.position = Some(StoredPosition::of(source, stored));
    report
}

/// The bookmark a capture with `config` stored, read without opening its sink (a running
/// capture's producer is not fenced, its data file not cut), or why it cannot be read.
fn stored_bookmark(config: &CaptureConfig) -> Result<Option<Bookmark>, String> {
    match (&config.kafka, &config.file) {
        (Some(kafka), _) => {
            let options = kafka_sink_options(config, kafka).map_err(|error| error.to_string())?;
            peek_bookmark(&options).map_err(|error| error.to_string())
        }
        (None, Some(sink)) => {
            let value = file::stored_bookmark(&sink.path).map_err(|error| error.to_string())?;
            value
                .map(serde_json::from_value::<Bookmark>)
                .transpose()
                .map_err(|error| {
                    format!(
                        "{}: it is not a bookmark: {error}",
                        file::bookmark_path(&sink.path).display()
                    )
                })
        }
        (None, None) => Ok(None),
    }
}

/// The connect string: `database.connectString`, or Easy Connect from host, port and service.
fn connect_string(config: &CaptureConfig) -> Result<String, CaptureError> {
    let database = &config.database;
    match (
        &database.connect_string,
        &database.host,
        &database.service_name,
    ) {
        (Some(connect_string), _, _) => Ok(connect_string.clone()),
        (None, Some(host), Some(service)) => Ok(ez_connect(host, database.port, service)),
        _ => Err(ConfigError::new(
            "database",
            "set database.serviceName with database.host, or database.connectString",
        )
        .stop()
        .into()),
    }
}

/// With a wallet mounted: the configuration the Oracle client will read from it, or why it would
/// not use the wallet ([`net_config`]). The pod sets `TNS_ADMIN` rather than the capture handing
/// the directory to ODPI-C, which would `setenv` with other threads running.
fn net_config(
    credentials: &DatabaseCredentials,
    connect_string: &str,
) -> Option<Result<NetConfig, NetConfigError>> {
    let wallet = credentials.wallet_dir.as_deref()?;
    Some(
        NetConfigDir::read(wallet)
            .and_then(|dir| net_config::check(wallet, &lookup, &dir, connect_string)),
    )
}

fn connect(config: &CaptureConfig) -> Result<OracleClient, CaptureError> {
    let credentials = secrets::database_credentials(&lookup).map_err(|error| error.stop())?;
    let database = &config.database;
    let connect_string = connect_string(config)?;
    if let Some(net) = net_config(&credentials, &connect_string) {
        let net = net.map_err(|error| {
            ConfigError::new(
                "database.walletSecret",
                format!("{error}; fix: {}", error.fix()),
            )
            .stop()
        })?;
        tracing::info!(%net, "Oracle client configuration");
    }
    let options = ConnectOptions {
        username: credentials.username,
        password: credentials.password.expose().to_owned(),
        connect_string,
        max_connections: database.max_connections,
        statement_timeout: match config.mining.statement_timeout_seconds {
            0 => None,
            seconds => Some(Duration::from_secs(seconds)),
        },
        pdb: database.pdb.clone(),
        flush_table: config.mining.flush_table.clone(),
    };
    // A transient connection failure is retried by `run_with` like any other; a refused login
    // is a stop, and is not tried again with the same credentials at the next start.
    let guard = LoginGuard::new(
        &config.spill_dir(),
        &options.username,
        &options.password,
        &options.connect_string,
    );
    guard.login(|| OracleClient::connect(options))
}

/// Runs the capture on sources made by `open_source`, once per attempt: at start and after each
/// transient database fault, until the run ends, stops, or the retry budget is spent (CDC-2005).
pub fn run_with<S, F>(
    config: CaptureConfig,
    mut open_source: F,
    settings: RunSettings,
) -> Result<(), CaptureError>
where
    S: OracleSource,
    F: FnMut() -> Result<S, CaptureError>,
{
    let registry = settings.registry.clone();
    let started = Timestamp::now();
    // The loop beats at least once per poll interval and per call timeout.
    let wedged_after = SignedDuration::from_secs(
        (config
            .mining
            .statement_timeout_seconds
            .max(config.mining.poll_interval_seconds)
            * 2
            + 60) as i64,
    );
    let board = StatusBoard::new(started, wedged_after);
    let stop = Arc::clone(&settings.stop);
    let runtime = serve(&config, board.clone(), registry.clone(), Arc::clone(&stop))?;
    let shared = Shared::register(&config, &registry, board)?;
    if let Some(root) = &settings.credentials_root {
        runtime.spawn(rotation::watch(rotation::Watch {
            root: root.clone(),
            interval: rotation::POLL_INTERVAL,
            stop: Arc::clone(&stop),
            rotated: Arc::clone(&settings.rotated),
            loaded: shared.engine_metrics.credentials_loaded.clone(),
        }));
    }
    if let Some(path) = &settings.config_path {
        runtime.spawn(live_config::follow(live_config::Follow {
            path: path.clone(),
            environment: environment(),
            started: config.clone(),
            requests: shared.requests.clone(),
            board: shared.board.clone(),
            invalid: shared.engine_metrics.config_file_invalid.clone(),
            interval: live_config::POLL_INTERVAL,
        }));
    }
    let mut budget = RestartBudget::new(settings.database_retry);
    loop {
        let (result, windows) = attempt(&config, &mut open_source, &shared, &settings, &stop);
        if windows > 0 {
            budget.succeeded();
        }
        let error = match result {
            Ok(_) => return Ok(()),
            Err(error) => error,
        };
        let Disposition::Retry { cause, outage } = error.disposition() else {
            return Err(with_position(error, &shared.board));
        };
        match budget.failed(Instant::now()) {
            Verdict::RetryAfter { pause, attempt } => {
                tracing::warn!(
                    %error,
                    attempt,
                    next_delay_seconds = pause.as_secs_f64(),
                    "starting again from the bookmark"
                );
                shared.engine_metrics.retried(cause);
                shared.board.update(Timestamp::now(), |report| {
                    report.state = CaptureState::Starting;
                });
                if pause_unless_stopped(pause, &stop, &shared.board) {
                    return Ok(());
                }
            }
            Verdict::Exhausted { elapsed, attempts } => {
                let stop = outage.exhausted(&error, elapsed, attempts);
                shared.engine_metrics.stopped(stop.code.code());
                return Err(with_position(stop.into(), &shared.board));
            }
        }
    }
}

/// A typed stop with the position the capture last reported on `/status` in its details
/// (`position`: `{commitScn, restartScn, commitTime}`), so the operator estimates the lag from
/// where the capture stopped rather than from its last poll, or from nothing when it never
/// polled this run. No position (the bookmark was not read yet) adds nothing; any other error
/// is returned as it is.
fn with_position(error: CaptureError, board: &StatusBoard) -> CaptureError {
    let Some(stop) = error.stop() else {
        return error;
    };
    let report = board.report();
    if report.commit_scn.is_none() {
        return error;
    }
    let position = redoline_crds::v1alpha1::Position {
        commit_scn: report.commit_scn,
        restart_scn: report.restart_scn,
        commit_time: report.commit_time,
    };
    match serde_json::to_value(position) {
        Ok(position) => CaptureError::Stop(Box::new(stop.with_detail("position", position))),
        Err(_) => error,
    }
}

/// What lives across attempts: the status board and the metric families (registered once).
struct Shared {
    board: StatusBoard,
    engine_metrics: EngineMetrics,
    buffer_metrics: BufferMetrics,
    /// With Kafka: the sink's metrics and the producer state `/status` shows.
    sink: Option<(SinkMetrics, SinkStatus)>,
    /// The snapshot requests in force, which outlive an attempt.
    requests: LiveRequests,
}

impl Shared {
    fn register(
        config: &CaptureConfig,
        registry: &Registry,
        board: StatusBoard,
    ) -> Result<Self, CaptureError> {
        let sink = match config.kafka {
            Some(_) => {
                let status = SinkStatus::default();
                board.attach_sink(status.clone());
                Some((SinkMetrics::new(registry)?, status))
            }
            None => None,
        };
        Ok(Self {
            engine_metrics: EngineMetrics::new(registry)?,
            buffer_metrics: BufferMetrics::new(registry)?,
            board,
            sink,
            requests: LiveRequests::new(config.snapshot.requests.clone()),
        })
    }
}

/// One attempt: opens the source, the sink (reading its bookmark), a fresh buffer and engine,
/// and runs. Returns how it ended and how many windows it completed.
fn attempt<S, F>(
    config: &CaptureConfig,
    open_source: &mut F,
    shared: &Shared,
    settings: &RunSettings,
    stop: &Arc<AtomicBool>,
) -> (Result<Finish, CaptureError>, u64)
where
    S: OracleSource,
    F: FnMut() -> Result<S, CaptureError>,
{
    let prepared = (|| -> Result<Engine<S>, CaptureError> {
        // The source first, as before any retry existed: its settings and secrets are checked
        // before the sink connects.
        let source = open_source()?;
        let buffer_config =
            BufferSettings::from_config(&config.buffer, &config.transactions, config.spill_dir())?;
        let opened = match (&config.kafka, &config.file) {
            (Some(kafka), _) => {
                let (metrics, status) = shared
                    .sink
                    .clone()
                    .ok_or(CaptureError::KafkaMetricsUnregistered)?;
                open_kafka(
                    config,
                    kafka,
                    metrics,
                    status,
                    &shared.engine_metrics.schema_history,
                )?
            }
            (None, Some(file)) => {
                tracing::warn!("{JOURNAL_OFF_WARNING}");
                let (sink, stored) = FileSink::open(&file.path)?;
                Opened {
                    sink: Output::file(sink, FileLines::of(config.format.type_)),
                    stored,
                    schema_history: read_history_file(
                        &history_path(&file.path),
                        &shared.engine_metrics.schema_history,
                    )?,
                    journal: Journal::off(),
                    rebuilt: Vec::new(),
                }
            }
            (None, None) => return Err(CaptureError::NoSink),
        };
        let Opened {
            sink,
            stored,
            schema_history,
            journal,
            rebuilt,
        } = opened;
        let ledger = match &stored {
            Some(stored) => stored
                .get("released")
                .cloned()
                .map(serde_json::from_value)
                .transpose()
                .map_err(CaptureError::LedgerUnreadable)?
                .unwrap_or_default(),
            None => Default::default(),
        };
        let buffer = TransactionBuffer::new(buffer_config, ledger, shared.buffer_metrics.clone())?;
        let options = RunOptions {
            exit_at_end: settings.exit_at_end,
            stop: Arc::clone(stop),
            requests: shared.requests.clone(),
        };
        let wiring = Wiring {
            sink,
            journal,
            rebuilt,
            stored_bookmark: stored,
            schema_history,
            buffer,
            metrics: shared.engine_metrics.clone(),
            board: shared.board.clone(),
            schema_registry: schema_registry(config)?,
        };
        Engine::start(config.clone(), source, wiring, options)
    })();
    let ended = match prepared {
        Ok(mut engine) => {
            let result = engine.run();
            if result.is_ok() {
                tracing::info!(commit_scn = engine.bookmark().commit_scn, "capture stopped");
            }
            (result, engine.windows_completed())
        }
        Err(error) => (Err(error), 0),
    };
    // Until a retry reads it back again (Debezium's history stops with its task).
    shared
        .engine_metrics
        .schema_history
        .set_status(SchemaHistoryStatus::Stopped);
    ended
}

/// The schema registry client of the Avro encoding (`format.encoding: avro`): the one place it
/// is built, once per attempt as the encoder is, reading its credential files then. `None` with
/// JSON, which needs none (the config's rules tie `schemaRegistry` to `avro`). A credential file
/// that cannot be read is CDC-1001 naming the field.
pub fn schema_registry(
    config: &CaptureConfig,
) -> Result<Option<Box<dyn SchemaRegistry>>, ConfigError> {
    let Some(registry) = &config.schema_registry else {
        return Ok(None);
    };
    Ok(Some(Box::new(HttpRegistry::new(registry)?)))
}

/// A sink opened at start, with what it holds from earlier runs.
struct Opened {
    sink: Output,
    stored: Option<serde_json::Value>,
    schema_history: SchemaHistory,
    journal: Journal,
    rebuilt: Vec<RebuiltTransaction>,
}

/// The Kafka sink's options for `config`: client settings with the mounted properties, the
/// capture's identity and its topics.
fn kafka_sink_options(
    config: &CaptureConfig,
    kafka: &crate::config::KafkaConfig,
) -> Result<SinkOptions, CaptureError> {
    let spec = redoline_crds::v1alpha1::KafkaSpec {
        bootstrap_servers: kafka.bootstrap_servers.clone(),
        topic_prefix: kafka.topic_prefix.clone(),
        tls: None,
        authentication: None,
        config_secret: None,
        exactly_once: kafka.exactly_once,
        transactions: kafka.transactions.clone(),
        topics: kafka.topics.clone(),
    };
    let mut settings = KafkaClientSettings::new(&spec);
    for (name, value) in secrets::kafka_properties(&lookup).map_err(|error| error.stop())? {
        settings = settings.with_property(&name, value.expose())?;
    }
    settings = settings.with_security(kafka)?;
    secrets::check_krb5_config(&lookup).map_err(|error| error.stop())?;
    // A config written by hand (outside the operator) has no namespace: Kubernetes' default.
    let identity = CaptureIdentity::new(
        config.namespace.as_deref().unwrap_or("default"),
        config.name.as_str(),
    );
    let topics = TopicNames::new(&spec, &config.journal);
    let mut options = SinkOptions::new(identity, settings, topics, DeliveryMode::from_spec(&spec));
    options.topic_settings = kafka.topics.clone();
    Ok(options)
}

/// Kafka start-up, in the order `sink` documents: topics and `init_transactions` (fencing an
/// earlier instance), the bookmark (CDC-5002 when unreadable), the journal read back against it.
/// The journal's stale tombstones go into the first page, whose bookmark carries the new
/// generation.
fn open_kafka(
    config: &CaptureConfig,
    kafka: &crate::config::KafkaConfig,
    metrics: SinkMetrics,
    status: SinkStatus,
    history_metrics: &SchemaHistoryMetrics,
) -> Result<Opened, CaptureError> {
    let options = kafka_sink_options(config, kafka)?;
    let journal_settings = JournalSettings::from_spec(&config.journal, &options.topics.journal)?;
    let sink = KafkaSink::open(options, metrics, status)?;
    // The schema history is read beside the bookmark and the journal (which needs the bookmark):
    // each read is a client's round trips to the broker, and a start-up waits for all three.
    let (read_back, schema_history) = std::thread::scope(|scope| {
        let history = scope.spawn(|| read_schema_history(&sink, history_metrics));
        let read_back = sink.read_bookmark().and_then(|bookmark| {
            let rebuilt = journal::read_journal(&sink, bookmark.as_ref(), journal_settings)?;
            Ok((bookmark, rebuilt))
        });
        // A panic there is this thread's, as it was when the reads ran one after the other.
        let schema_history = history
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (read_back, schema_history)
    });
    let (bookmark, rebuilt) = read_back?;
    let schema_history = schema_history?;
    let mut output = Output::kafka(sink);
    output.push_records(rebuilt.stale)?;
    let stored = bookmark
        .map(|bookmark| serde_json::to_value(&bookmark))
        .transpose()
        .map_err(CaptureError::BookmarkJson)?;
    Ok(Opened {
        sink: output,
        stored,
        schema_history,
        journal: rebuilt.journal,
        rebuilt: rebuilt.transactions,
    })
}

/// The schema history topic, read to its end, shown on the schema history metrics as a
/// recovery. (A read the broker makes the sink repeat counts its records again.)
fn read_schema_history(
    sink: &KafkaSink,
    metrics: &SchemaHistoryMetrics,
) -> Result<SchemaHistory, SinkError> {
    metrics.recovery_started(Timestamp::now());
    let topic = &sink.options().topics.schema_history;
    let history = sink.read_topic(topic, SchemaHistory::default, |history, record| {
        let at = RecordLocation {
            topic: topic.clone(),
            partition: record.partition,
            offset: record.offset,
        };
        history.load(record.key.as_deref(), record.value.as_deref(), &at)?;
        metrics.change_recovered(Timestamp::now());
        Ok(())
    })?;
    metrics.recovery_finished();
    Ok(history)
}

/// The file sink's schema history, from its side file (CDC-5002 when a line cannot be read),
/// shown on the schema history metrics as a recovery.
fn read_history_file(
    path: &Path,
    metrics: &SchemaHistoryMetrics,
) -> Result<SchemaHistory, CaptureError> {
    metrics.recovery_started(Timestamp::now());
    let mut history = SchemaHistory::default();
    for (line, value) in read_history_lines(path)?.iter().enumerate() {
        let at = RecordLocation {
            topic: path.display().to_string(),
            partition: 0,
            offset: i64::try_from(line).unwrap_or(i64::MAX),
        };
        history.load(None, Some(value.as_bytes()), &at)?;
        metrics.change_recovered(Timestamp::now());
    }
    metrics.recovery_finished();
    Ok(history)
}

/// Starts the runtime for the HTTP face and SIGTERM; the runtime lives as long as the value.
fn serve(
    config: &CaptureConfig,
    board: StatusBoard,
    registry: Registry,
    stop: Arc<AtomicBool>,
) -> Result<tokio::runtime::Runtime, CaptureError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(CaptureError::Runtime)?;
    let port = config.http.port;
    if port != 0 {
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(("0.0.0.0", port)))
            .map_err(|source| CaptureError::Listen { port, source })?;
        runtime.spawn(async move {
            if let Err(error) = axum::serve(listener, router(board, registry)).await {
                tracing::error!(%error, "the HTTP server stopped");
            }
        });
    }
    runtime.spawn(async move {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(error) => {
                    tracing::warn!(%error, "SIGTERM cannot be watched");
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::select! {
            _ = terminate => {},
            _ = tokio::signal::ctrl_c() => {},
        }
        tracing::info!("stop requested: finishing the current transaction");
        stop.store(true, Ordering::Relaxed);
    });
    Ok(runtime)
}
