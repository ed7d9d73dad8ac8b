//! Kafka's rules for topic names (`org.apache.kafka.common.internals.Topic`), which the
//! controller applies to CreateTopics and to TOPIC config resources.

/// Longest topic name (`Topic.MAX_NAME_LENGTH`).
pub const MAX_NAME_LENGTH: usize = 249;

/// Kafka's `Topic.validate`: the reason a name is refused.
pub fn validate_topic_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the empty string is not allowed".into());
    }
    if name == "." {
        return Err("'.' is not allowed".into());
    }
    if name == ".." {
        return Err("'..' is not allowed".into());
    }
    if name.chars().count() > MAX_NAME_LENGTH {
        return Err(format!(
            "the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    {
        return Err(format!(
            "'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        ));
    }
    Ok(())
}
