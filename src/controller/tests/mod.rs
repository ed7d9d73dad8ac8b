//! Controller tests, one file per manager (named after Kafka's *ControlManagerTest).
