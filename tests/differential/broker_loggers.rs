//! The broker-loggers part of the differential script: `kafka-configs --bootstrap-controller`
//! against the controller itself, each implementation's request logger set to DEBUG and back.

use std::time::{Duration, Instant};

use super::support::cluster::Impl;
use super::{Run, Step};
use crate::support::clients::config_command;

impl Run<'_> {
    /// `kafka-configs --bootstrap-controller <the controller>` with `args` (split at spaces);
    /// the lines of stdout that name a logger are kept only for `root` and `logger`.
    fn controller_configs(&mut self, what: &str, args: &str, logger: &str) {
        let args: Vec<&str> = args.split_whitespace().collect();
        let controller = format!("127.0.0.1:{}", self.c.nodes[0].port);
        let mut out = self.tool_via(
            what,
            config_command(),
            "--bootstrap-controller",
            &controller,
            &args,
        );
        out.stdout = out
            .stdout
            .lines()
            .filter(|l| {
                !l.starts_with("  ")
                    || l.starts_with("  root=")
                    || l.starts_with(&format!("  {logger}="))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        self.record(what, &out);
    }
}

/// The logger of each implementation that logs every request at DEBUG, shown as
/// `<request logger>` in both records: Kafka's `kafka.request.logger` and ferrokraft's
/// `ferrokraft.server.handler` (target `ferrokraft::server::handler`).
pub(crate) fn request_logger(kind: Impl) -> (&'static str, &'static str) {
    match kind {
        Impl::Kafka => ("kafka.request.logger", "(kafka.request.logger)"),
        Impl::Ferrokraft => ("ferrokraft.server.handler", "(ferrokraft::server::handler)"),
    }
}

/// `kafka-configs --entity-type broker-loggers` against the controller itself: describe, the
/// request logger set to DEBUG (and a DEBUG request line then in the controller's log), its
/// level deleted, and the refusals of a bad level and of deleting the root logger.
pub(crate) fn script(run: &mut Run<'_>) {
    let (logger, log_suffix) = request_logger(run.c.nodes[0].kind);
    let entity = "--entity-type broker-loggers --entity-name 1";
    run.controller_configs(
        "describe broker-logger 1",
        &format!("{entity} --describe"),
        logger,
    );
    run.controller_configs(
        "set the request logger to DEBUG",
        &format!("{entity} --alter --add-config {logger}=DEBUG"),
        logger,
    );
    run.controller_configs(
        "describe broker-logger 1 after the change",
        &format!("{entity} --describe"),
        logger,
    );
    // The describe above was served at DEBUG: its request line is in the controller's log.
    let deadline = Instant::now() + Duration::from_secs(10);
    let logged = loop {
        let log = run.c.nodes[0].log_text();
        let found = log
            .lines()
            .any(|l| l.contains("] DEBUG ") && l.ends_with(log_suffix));
        if found || Instant::now() > deadline {
            break found;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    run.steps.push(Step {
        what: "a DEBUG line of the request logger in the controller's log".into(),
        exit: None,
        stdout: format!("found: {logged}"),
        stderr: String::new(),
    });
    run.controller_configs(
        "delete the request logger's level",
        &format!("{entity} --alter --delete-config {logger}"),
        logger,
    );
    run.controller_configs(
        "set root to a bad level",
        &format!("{entity} --alter --add-config root=BOGUS"),
        logger,
    );
    run.controller_configs(
        "delete the root logger's level",
        &format!("{entity} --alter --delete-config root"),
        logger,
    );
}
