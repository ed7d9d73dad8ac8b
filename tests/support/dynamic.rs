//! KIP-853 helpers for mixed quorums: Kafka's own `kafka-metadata-quorum add-controller` /
//! `remove-controller`, and the voter set as `describe --status` reports it.
// Only the dynamic-quorum tests use these; every test binary compiles `support`.
#![allow(dead_code)]

use std::fs;
use std::time::{Duration, Instant};

use super::cluster::{Cluster, Impl, Quorum};
use super::kafka::{kafka, ToolOutput};

const METADATA_QUORUM: &str = "org.apache.kafka.tools.MetadataQuorumCommand";

impl Cluster {
    /// Kafka controller 1 formatted `--standalone` leads; ferrokraft nodes 2 and 3 (formatted
    /// `--no-initial-controllers`) are added with Kafka's `add-controller`. Returns once the
    /// add commands succeeded.
    pub fn kafka_standalone_then_two_ferrokraft(test: &str) -> Cluster {
        let mut c = Cluster::with_quorum(
            test,
            &[Impl::Kafka, Impl::Ferrokraft, Impl::Ferrokraft],
            &[],
            Quorum::Dynamic { standalone: 1 },
        );
        c.start_all();
        let (leader, _, _) = c.wait_for_leader(1, 1, Duration::from_secs(90));
        assert_eq!(leader, 1, "the standalone Kafka controller leads");
        c.wait_voters(1, &[1], Duration::from_secs(30));
        c.add_controllers(&[2, 3], 1);
        c
    }

    /// The `directory.id` in node `id`'s meta.properties.
    pub fn directory_id(&self, id: i32) -> String {
        let path = self.nodes[(id - 1) as usize].dir.join("meta.properties");
        let text = fs::read_to_string(&path).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("directory.id="))
            .unwrap_or_else(|| panic!("no directory.id in {}", path.display()))
            .trim()
            .to_string()
    }

    fn bootstrap(&self, via: i32) -> String {
        self.controller_address(via)
    }

    /// `kafka-metadata-quorum --bootstrap-controller <via> --command-config <node id's
    /// properties> add-controller`, as the Kafka docs run it on the new controller's host.
    pub fn add_controller(&self, id: i32, via: i32) -> ToolOutput {
        let props = self.nodes[(id - 1) as usize].props.clone();
        kafka().tool(
            &self.art,
            &format!("add-controller-{id}-via-{via}"),
            METADATA_QUORUM,
            &[
                "--bootstrap-controller",
                &self.bootstrap(via),
                "--command-config",
                props.to_str().unwrap(),
                "add-controller",
            ],
        )
    }

    /// `kafka-metadata-quorum --bootstrap-controller <via> remove-controller --controller-id
    /// <id> --controller-directory-id <dir>`.
    pub fn remove_controller(&self, id: i32, directory_id: &str, via: i32) -> ToolOutput {
        kafka().tool(
            &self.art,
            &format!("remove-controller-{id}-via-{via}"),
            METADATA_QUORUM,
            &[
                "--bootstrap-controller",
                &self.bootstrap(via),
                "remove-controller",
                "--controller-id",
                &id.to_string(),
                "--controller-directory-id",
                directory_id,
            ],
        )
    }

    /// Adds `ids` in order with `add-controller` through `via`, each once the quorum has caught
    /// up, and checks each joined with the directory id in its meta.properties.
    pub fn add_controllers(&mut self, ids: &[i32], via: i32) {
        let mut voters: Vec<i32> = self
            .voters(via)
            .unwrap_or_default()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        for &id in ids {
            self.wait_caught_up(via, Duration::from_secs(60));
            self.add_controller(id, via)
                .assert_ok(&format!("add-controller {id}"));
            voters.push(id);
            voters.sort_unstable();
            let now = self.wait_voters(via, &voters, Duration::from_secs(60));
            assert!(
                now.contains(&(id, self.directory_id(id))),
                "node {id} joined with its own directory id: {now:?}"
            );
        }
    }

    /// Voter ids (with directory ids) in `describe --status` through `via`.
    pub fn voters(&self, via: i32) -> Option<Vec<(i32, String)>> {
        let out = self.describe(via, "status")?;
        let line = out.lines().find(|l| l.starts_with("CurrentVoters:"))?;
        Some(parse_replicas(line))
    }

    /// Polls until the voters through `via` are exactly `ids`.
    pub fn wait_voters(&self, via: i32, ids: &[i32], timeout: Duration) -> Vec<(i32, String)> {
        let deadline = Instant::now() + timeout;
        let mut last = None;
        while Instant::now() < deadline {
            if let Some(v) = self.voters(via) {
                let mut have: Vec<i32> = v.iter().map(|(id, _)| *id).collect();
                have.sort_unstable();
                if have == ids {
                    return v;
                }
                last = Some(v);
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!("voters through node {via} never became {ids:?}; last: {last:?}");
    }
}

/// `[{"id": 1, "directoryId": "…", "endpoints": […]}, …]` → [(1, "…"), …].
fn parse_replicas(line: &str) -> Vec<(i32, String)> {
    line.split("{\"id\": ")
        .skip(1)
        .filter_map(|entry| {
            let id = entry
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()?;
            let dir = entry
                .split("\"directoryId\": \"")
                .nth(1)
                .and_then(|d| d.split('"').next())
                .unwrap_or("")
                .to_string();
            Some((id, dir))
        })
        .collect()
}
