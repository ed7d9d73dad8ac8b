//! A password or key read from the configuration: kept out of `Debug` output and logs.

/// A value Kafka types as PASSWORD (the store and key passwords, `ssl.keystore.key`,
/// `ssl.keystore.certificate.chain`, `ssl.truststore.certificates`): its
/// `Debug` prints `[hidden]`, as Kafka's `Password` prints, so a config printed for a log or an
/// error never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value itself, for the code that opens the store.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Secret {
    fn from(v: &str) -> Secret {
        Secret(v.to_string())
    }
}

impl From<String> for Secret {
    fn from(v: String) -> Secret {
        Secret(v)
    }
}

impl PartialEq<str> for Secret {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[hidden]")
    }
}
