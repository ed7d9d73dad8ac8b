//! A listener's security protocol (Kafka's `SecurityProtocol`): its name, its id as
//! registrations carry it, and whether it runs TLS or SASL.

/// A controller listener's security protocol (`listener.security.protocol.map`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecurityProtocol {
    /// No TLS, no authentication.
    Plaintext,
    /// TLS.
    Ssl,
    /// SASL without TLS.
    SaslPlaintext,
    /// SASL over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// The protocol of Kafka's name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "PLAINTEXT" => Some(Self::Plaintext),
            "SSL" => Some(Self::Ssl),
            "SASL_PLAINTEXT" => Some(Self::SaslPlaintext),
            "SASL_SSL" => Some(Self::SaslSsl),
            _ => None,
        }
    }

    /// Kafka's `SecurityProtocol` id, as registrations carry it.
    pub fn id(self) -> i16 {
        match self {
            Self::Plaintext => 0,
            Self::Ssl => 1,
            Self::SaslPlaintext => 2,
            Self::SaslSsl => 3,
        }
    }

    /// Kafka's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plaintext => "PLAINTEXT",
            Self::Ssl => "SSL",
            Self::SaslPlaintext => "SASL_PLAINTEXT",
            Self::SaslSsl => "SASL_SSL",
        }
    }

    /// Whether connections are TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, Self::Ssl | Self::SaslSsl)
    }

    /// Whether connections authenticate with SASL.
    pub fn uses_sasl(self) -> bool {
        matches!(self, Self::SaslPlaintext | Self::SaslSsl)
    }

    /// The protocol of Kafka's id (`SecurityProtocol.forId`).
    pub fn from_id(id: i16) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.id() == id)
    }

    /// Every protocol Kafka knows, in id order.
    pub const ALL: [SecurityProtocol; 4] = [
        Self::Plaintext,
        Self::Ssl,
        Self::SaslPlaintext,
        Self::SaslSsl,
    ];
}
