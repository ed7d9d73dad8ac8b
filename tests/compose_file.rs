//! docs/deploy/compose.yaml (#40): three ferrokraft controllers and three apache/kafka
//! brokers configured through the apache/kafka image's environment conventions.
//!
//! Each service's environment (YAML merge keys resolved as compose resolves them) is turned
//! into server properties twice: by Kafka's own image wrapper (`kafka.docker.KafkaDockerWrapper
//! setup`, from the Kafka jars, which also formats the log directory with Kafka's storage
//! tool and so validates the properties as Kafka does) and by ferrokraft
//! (`config::environment::from_environment`). The two property sets must be equal, the
//! controllers' must be a configuration ferrokraft starts on without an unknown key, and
//! brokers and controllers must agree on the quorum. Only `KAFKA_LOG_DIRS` is moved to a
//! temporary directory.

// Integration tests drive real processes: unwrapping is fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use ferrokraft::config::{environment, read_properties, Config, Properties};
use support::kafka::{kafka, Artifacts};
use yaml_rust2::{Yaml, YamlLoader};

type Env = BTreeMap<String, String>;

/// A scalar as compose passes it to the container (numbers and booleans as written).
fn scalar(y: &Yaml) -> String {
    match y {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        other => panic!("not a scalar environment value: {other:?}"),
    }
}

/// A service's `environment` mapping, `<<` merges first and the service's own keys over them.
fn environment_of(service: &Yaml) -> Env {
    let mut env = Env::new();
    let Yaml::Hash(h) = &service["environment"] else {
        panic!("a service without an environment mapping: {service:?}");
    };
    if let Some(Yaml::Hash(merged)) = h.get(&Yaml::String("<<".into())) {
        for (k, v) in merged {
            env.insert(scalar(k), scalar(v));
        }
    }
    for (k, v) in h {
        if scalar(k) != "<<" {
            env.insert(scalar(k), scalar(v));
        }
    }
    env
}

/// The services of docs/deploy/compose.yaml: name, image, environment.
fn services() -> Vec<(String, String, Env)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/deploy/compose.yaml");
    let docs = YamlLoader::load_from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let Yaml::Hash(services) = &docs[0]["services"] else {
        panic!("no services in compose.yaml");
    };
    services
        .iter()
        .map(|(name, s)| (scalar(name), scalar(&s["image"]), environment_of(s)))
        .collect()
}

/// Kafka's image wrapper run on `env`: the server.properties it writes, and whether its
/// format of the (moved) log directory succeeded.
fn kafka_wrapper(art: &Artifacts, name: &str, env: &Env) -> (Properties, String) {
    let root = art.path(name);
    let (defaults, mounted, finished) = (
        root.join("default"),
        root.join("mounted"),
        root.join("final"),
    );
    for d in [&defaults, &mounted, &finished] {
        fs::create_dir_all(d).unwrap();
    }
    // The wrapper copies these three when nothing overrides them; their content does not
    // matter to the server properties.
    fs::write(defaults.join("server.properties"), "process.roles=broker\n").unwrap();
    let log4j = "Configuration:\n  Loggers:\n    Root:\n      level: INFO\n";
    fs::write(defaults.join("log4j2.yaml"), log4j).unwrap();
    fs::write(defaults.join("tools-log4j2.yaml"), log4j).unwrap();
    let k = kafka();
    let out = Command::new("java")
        .args([
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
        ])
        .arg(format!("{}/*", k.lib.display()))
        .arg("kafka.docker.KafkaDockerWrapper")
        .arg("setup")
        .arg("--default-configs-dir")
        .arg(&defaults)
        .arg("--mounted-configs-dir")
        .arg(&mounted)
        .arg("--final-configs-dir")
        .arg(&finished)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "Kafka's image wrapper refused {name}'s environment:\n{text}"
    );
    (
        read_properties(&finished.join("server.properties")).unwrap(),
        text,
    )
}

#[test]
fn every_service_reads_as_kafkas_image_reads_it_and_the_quorum_agrees() {
    let art = Artifacts::new("compose_file");
    let services = services();
    assert_eq!(
        services
            .iter()
            .filter(|(_, image, _)| image.starts_with("ferrokraft"))
            .count(),
        3,
        "three ferrokraft controllers"
    );
    assert_eq!(
        services
            .iter()
            .filter(|(_, image, _)| image.starts_with("apache/kafka"))
            .count(),
        3,
        "three apache/kafka brokers"
    );
    let nowhere = Path::new("/nonexistent-ferrokraft-compose-mount");
    let mut voters_seen = Vec::new();
    let mut controllers = Vec::new();
    for (name, image, mut env) in services {
        let data = art.path(&format!("{name}-data"));
        env.insert("KAFKA_LOG_DIRS".into(), data.display().to_string());
        let (kafkas, output) = kafka_wrapper(&art, &name, &env);
        assert!(
            output.contains("Formatting metadata directory")
                || output.contains("Formatting data directory"),
            "Kafka's storage tool did not format {name}:\n{output}"
        );
        let meta = fs::read_to_string(data.join("meta.properties")).unwrap();
        assert!(
            meta.contains(&format!("cluster.id={}", env["CLUSTER_ID"])),
            "{name}: {meta}"
        );

        let pairs: Vec<(String, String)> = env.clone().into_iter().collect();
        let ours = environment::from_environment(&pairs, nowhere).unwrap();
        assert_eq!(
            ours.properties, kafkas,
            "{name}: ferrokraft's properties differ from Kafka's image wrapper's"
        );
        assert_eq!(ours.cluster_id, env["CLUSTER_ID"], "{name}");
        voters_seen.push((name.clone(), kafkas["controller.quorum.voters"].clone()));

        if image.starts_with("ferrokraft") {
            let config = Config::from_properties(&ours.properties)
                .unwrap_or_else(|e| panic!("{name}: ferrokraft refuses its configuration: {e}"));
            assert!(
                config.unknown_keys.is_empty(),
                "{name}: keys ferrokraft would warn about: {:?}",
                config.unknown_keys
            );
            controllers.push(config);
        }
    }
    // One quorum: every node names the same voters, each controller is one of them and
    // listens on its voter port.
    let voters = &voters_seen[0].1;
    for (name, v) in &voters_seen {
        assert_eq!(v, voters, "{name} names other voters");
    }
    for c in &controllers {
        let me = c
            .quorum_voters
            .iter()
            .find(|v| v.id == c.node_id)
            .unwrap_or_else(|| panic!("controller {} is not a voter", c.node_id));
        assert!(
            c.listeners.iter().any(|l| l.port == me.port),
            "controller {} does not listen on its voter port {}",
            c.node_id,
            me.port
        );
    }
    let mut ids: Vec<i32> = controllers.iter().map(|c| c.node_id).collect();
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
}
