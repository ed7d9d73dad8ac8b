//! Who a request comes from (Kafka's `KafkaPrincipal`, kept in its clients' `common` package,
//! below the network): the codec decodes it from an Envelope, the authenticators produce it,
//! the authorizer decides on it.

use std::fmt;

/// Who a connection authenticated as (Kafka's `KafkaPrincipal`): `User:alice`, or
/// `User:ANONYMOUS` on a listener without authentication.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    /// The principal type (`User`).
    pub principal_type: String,
    /// The name.
    pub name: String,
    /// Authenticated with a delegation token (SCRAM `tokenauth=true`).
    pub token_authenticated: bool,
}

impl Principal {
    /// `User:<name>`, as Kafka's DefaultKafkaPrincipalBuilder builds it for SASL.
    pub fn user(name: &str) -> Self {
        Self {
            principal_type: "User".to_string(),
            name: name.to_string(),
            token_authenticated: false,
        }
    }

    /// Kafka's `SecurityUtils.parseKafkaPrincipal`: `Type:name`, split at the first colon (no
    /// colon: an empty type and the whole text as the name).
    pub fn parse(s: &str) -> Self {
        let (principal_type, name) = s.split_once(':').unwrap_or(("", s));
        Self {
            principal_type: principal_type.to_string(),
            name: name.to_string(),
            token_authenticated: false,
        }
    }

    /// `User:ANONYMOUS`, Kafka's principal of an unauthenticated PLAINTEXT connection.
    pub fn anonymous() -> Self {
        Self::user("ANONYMOUS")
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}
