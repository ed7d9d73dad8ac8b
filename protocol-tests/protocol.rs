//! Golden-vector tests against Apache Kafka's own classes (see protocol-tests/README.md).
