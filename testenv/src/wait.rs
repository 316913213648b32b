//! Bounded polling, the one way the tests wait for something to become true: a blocking form
//! for tests on threads ([`wait_until`]) and an async one for tests on Tokio ([`eventually`]).
//!
//! Each takes the test's own deadline and poll interval (a test knows how slow its service may
//! be), and fails with an error naming `what` was awaited, so a timed-out test says what it
//! never saw rather than only that it hung.

use std::future::Future;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// Polls `ready` every `interval` until it returns `Ok(true)`, and fails once `timeout` has
/// passed, or at once when `ready` fails. `what` names the condition in the error.
pub fn wait_until(
    what: &str,
    timeout: Duration,
    interval: Duration,
    mut ready: impl FnMut() -> Result<bool>,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        if ready().with_context(|| format!("waiting for {what}"))? {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("timed out waiting for {what} ({timeout:?})");
        }
        thread::sleep(interval);
    }
}

/// Calls `get` every `every` until it gives `Some` and returns that value; fails naming `what`
/// once `within` has passed.
pub async fn eventually<T, F, Fut>(
    what: &str,
    within: Duration,
    every: Duration,
    mut get: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = get().await {
            return Ok(value);
        }
        if Instant::now() > deadline {
            bail!("timed out waiting for {what} ({within:?})");
        }
        tokio::time::sleep(every).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_until_returns_once_ready_and_names_what_it_waited_for() {
        let mut calls = 0;
        wait_until(
            "three calls",
            Duration::from_secs(10),
            Duration::ZERO,
            || {
                calls += 1;
                Ok(calls == 3)
            },
        )
        .unwrap();
        assert_eq!(calls, 3);
        let err = wait_until("never", Duration::ZERO, Duration::ZERO, || Ok(false)).unwrap_err();
        assert!(err.to_string().contains("never"), "{err}");
        let err = wait_until(
            "a failing probe",
            Duration::from_secs(10),
            Duration::ZERO,
            || bail!("broken"),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("broken"), "{err:#}");
    }

    #[test]
    fn eventually_returns_the_value_and_names_what_it_waited_for() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let mut calls = 0;
        let value = runtime
            .block_on(eventually(
                "a value",
                Duration::from_secs(10),
                Duration::ZERO,
                || {
                    calls += 1;
                    let answer = (calls == 2).then_some(calls);
                    async move { answer }
                },
            ))
            .unwrap();
        assert_eq!(value, 2);
        let err = runtime
            .block_on(eventually::<(), _, _>(
                "nothing",
                Duration::ZERO,
                Duration::ZERO,
                || async { None },
            ))
            .unwrap_err();
        assert!(err.to_string().contains("nothing"), "{err}");
    }
}
