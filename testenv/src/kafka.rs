//! A real Apache Kafka broker for the tests.
//!
//! [`KafkaEnv::shared`] gives every test of a test binary the same single-node KRaft broker:
//!
//! * with `REDOLINE_KAFKA_BOOTSTRAP=host:port` set, the broker found there (for example one
//!   started by hand with `tests/env/kafka.sh start`), after checking that it answers;
//! * otherwise, the first call starts one with `tests/env/kafka.sh` (fetching the jars through
//!   Maven on a cold cache) in a fresh temporary directory on free loopback ports. The script's
//!   watchdog stops it and deletes that directory once this test process has exited, whether
//!   it passed, failed or was killed. `REDOLINE_KEEP_KAFKA_DATA=1` keeps the directory (its
//!   path is in the error messages and in [`KafkaEnv::data_dir`]).
//!
//! Tests isolate themselves by naming topics, transactional ids and groups after
//! [`KafkaEnv::unique_prefix`].

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;

use crate::process::{ScriptService, file_tail, free_ports, shared_service};

/// Points the tests at an already running broker instead of starting one.
pub const BOOTSTRAP_ENV: &str = "REDOLINE_KAFKA_BOOTSTRAP";
/// Set to `1` to keep the data directory (and log) of a broker the tests started.
pub const KEEP_DATA_ENV: &str = "REDOLINE_KEEP_KAFKA_DATA";

/// Starting includes fetching the jars with Maven when the cache is cold.
const START_TIMEOUT: Duration = Duration::from_secs(600);
/// JVM start, storage format and KRaft election on a busy 2-core machine.
const READY_TIMEOUT_SECS: u64 = 180;
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
const METADATA_TIMEOUT: Duration = Duration::from_secs(30);
/// Attempts at starting a broker; only a lost race for a free port is retried.
const START_ATTEMPTS: usize = 3;
const LOG_TAIL_LINES: usize = 40;

/// A Kafka broker the tests can use. See the module documentation.
#[derive(Debug)]
pub struct KafkaEnv {
    bootstrap: String,
    /// `None` when the broker came from [`BOOTSTRAP_ENV`].
    broker: Option<ScriptService>,
}

impl KafkaEnv {
    /// The broker shared by all tests of this process, started on first use. Blocking; safe to
    /// call from any thread or test, also inside an async test (it makes no runtime of its
    /// own). A failed start is remembered and reported again to every later caller.
    pub fn shared() -> Result<&'static KafkaEnv> {
        static SHARED: OnceLock<std::result::Result<KafkaEnv, String>> = OnceLock::new();
        shared_service(&SHARED, "the test Kafka broker", Self::init)
    }

    /// `host:port` for `bootstrap.servers`.
    pub fn bootstrap_servers(&self) -> &str {
        &self.bootstrap
    }

    /// A client configuration with `bootstrap.servers` set, to add the rest to.
    pub fn client_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.bootstrap);
        config
    }

    /// A prefix for topic names, transactional ids and group ids: [`unique_prefix`].
    pub fn unique_prefix(&self, test: &str) -> String {
        unique_prefix(test)
    }

    /// The data directory of a broker these tests started (`None` for an external one).
    pub fn data_dir(&self) -> Option<&Path> {
        self.broker.as_ref().map(ScriptService::data_dir)
    }

    /// The end of the broker's log, for error messages; empty for an external broker.
    pub fn log_tail(&self) -> String {
        self.data_dir()
            .map(|dir| file_tail(&dir.join("broker.log"), LOG_TAIL_LINES))
            .unwrap_or_default()
    }

    /// Creates `name` with `partitions` partitions (replication factor 1) and waits until every
    /// partition has a leader in the metadata, so producers can write to it at once. An
    /// existing topic of that name is an error.
    pub async fn create_topic(&self, name: &str, partitions: i32) -> Result<()> {
        self.create_topic_inner(name, partitions)
            .await
            .with_context(|| format!("creating topic {name}\n{}", self.log_tail()))
    }

    async fn create_topic_inner(&self, name: &str, partitions: i32) -> Result<()> {
        let admin: AdminClient<DefaultClientContext> = self
            .client_config()
            .create()
            .context("creating an admin client")?;
        let options = AdminOptions::new()
            .request_timeout(Some(METADATA_TIMEOUT))
            .operation_timeout(Some(METADATA_TIMEOUT));
        let topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
        let results = tokio::time::timeout(
            METADATA_TIMEOUT * 2,
            admin.create_topics([&topic], &options),
        )
        .await
        .context("CreateTopics did not complete in time")?
        .context("CreateTopics failed")?;
        for result in results {
            if let Err((topic, code)) = result {
                bail!("the broker refused to create {topic}: {code}");
            }
        }

        let topic = name.to_owned();
        tokio::task::spawn_blocking(move || wait_for_leaders(&admin, &topic, partitions))
            .await
            .context("the metadata check panicked")?
    }

    fn init() -> Result<KafkaEnv> {
        if let Ok(bootstrap) = std::env::var(BOOTSTRAP_ENV) {
            let env = KafkaEnv {
                bootstrap,
                broker: None,
            };
            env.check_reachable()
                .with_context(|| format!("{BOOTSTRAP_ENV}={} does not answer", env.bootstrap))?;
            return Ok(env);
        }
        let mut attempt = 1;
        loop {
            match Self::start_local() {
                Ok(env) => return Ok(env),
                Err(e) if attempt < START_ATTEMPTS && format!("{e:#}").contains(PORT_TAKEN) => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One attempt: fresh directory, fresh ports, start, wait, check.
    fn start_local() -> Result<KafkaEnv> {
        let dir = tempfile::Builder::new()
            .prefix("redoline-kafka-")
            .tempdir()
            .context("creating the broker's data directory")?
            .keep();
        let keep = std::env::var(KEEP_DATA_ENV).is_ok_and(|v| v == "1");
        let broker = ScriptService::new("the test Kafka broker", script_path(), &dir)
            .env("KAFKA_REMOVE_DATA_ON_EXIT", if keep { "0" } else { "1" });
        let result = Self::start_in(&broker);
        if result.is_err() {
            // Best effort: the error being returned already says what went wrong.
            let _ = broker.stop(STOP_TIMEOUT);
            if !keep {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        result
    }

    fn start_in(broker: &ScriptService) -> Result<KafkaEnv> {
        let ports = free_ports(2)?;
        let (port, controller_port) = (ports[0].to_string(), ports[1].to_string());
        broker.start(&[&port, &controller_port], START_TIMEOUT)?;
        let timeout = READY_TIMEOUT_SECS.to_string();
        broker.wait(
            &[&port, &timeout],
            Duration::from_secs(READY_TIMEOUT_SECS + 30),
        )?;
        let env = KafkaEnv {
            bootstrap: format!("127.0.0.1:{port}"),
            broker: Some(broker.clone()),
        };
        env.check_reachable()
            .with_context(|| format!("the broker is up but does not answer\n{}", env.log_tail()))?;
        Ok(env)
    }

    /// A real request: the cluster metadata, which must list at least one broker.
    fn check_reachable(&self) -> Result<()> {
        let admin: AdminClient<DefaultClientContext> = self
            .client_config()
            .create()
            .context("creating an admin client")?;
        let metadata = admin
            .inner()
            .fetch_metadata(None, METADATA_TIMEOUT)
            .context("fetching cluster metadata")?;
        if metadata.brokers().is_empty() {
            bail!("the cluster metadata lists no broker");
        }
        Ok(())
    }
}

/// How `kafka.sh` and the broker's log report a port that someone else took first.
const PORT_TAKEN: &str = "Address already in use";

fn script_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/env/kafka.sh")
}

/// A prefix for topic names, transactional ids, group ids and namespaces that no other test,
/// test process or earlier run against the same broker uses: the test's name, made safe for
/// topic names, then this process's id, the time and a counter.
pub fn unique_prefix(test: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    // Kafka allows [a-zA-Z0-9._-], but warns that '.' and '_' collide in metric names.
    let name: String = test
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(100)
        .collect();
    format!("{name}-{}-{millis:x}-{n}", std::process::id())
}

fn wait_for_leaders(
    admin: &AdminClient<DefaultClientContext>,
    topic: &str,
    partitions: i32,
) -> Result<()> {
    let mut last = String::from("no metadata yet");
    crate::wait::wait_until(
        &format!("all {partitions} partitions of {topic} to have a leader"),
        METADATA_TIMEOUT,
        Duration::from_millis(100),
        || {
            let metadata = match admin.inner().fetch_metadata(Some(topic), METADATA_TIMEOUT) {
                Ok(m) => m,
                Err(e) => {
                    last = e.to_string();
                    return Ok(false);
                }
            };
            let ready = metadata.topics().iter().any(|t| {
                t.name() == topic
                    && t.error().is_none()
                    && t.partitions().len() == usize::try_from(partitions).unwrap_or(0)
                    && t.partitions().iter().all(|p| p.leader() >= 0)
            });
            last = metadata
                .topics()
                .iter()
                .map(|t| {
                    let leaders: Vec<i32> = t.partitions().iter().map(|p| p.leader()).collect();
                    format!("{}: error {:?}, leaders {leaders:?}", t.name(), t.error())
                })
                .collect::<Vec<_>>()
                .join("; ");
            Ok(ready)
        },
    )
    .with_context(|| format!("last metadata state: {last}"))
}
