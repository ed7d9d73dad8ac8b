//! The four enums of an ACL binding, as Kafka defines them (`ResourceType`, `PatternType`,
//! `AclOperation`, `AclPermissionType`): codes, names and order are Kafka's; a code Kafka does
//! not know becomes `Unknown`, as its `fromCode` does. The codec checks them when it parses
//! ACL requests, the API table names each API's cluster operation with them, the metadata
//! layer stores bindings of them.

use std::fmt;

/// Kafka's wildcard resource name and host (`ResourcePattern.WILDCARD_RESOURCE`, `AclEntry`).
pub const WILDCARD: &str = "*";

/// The only name of the CLUSTER resource (`Resource.CLUSTER_NAME`).
pub const CLUSTER_NAME: &str = "kafka-cluster";

macro_rules! acl_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $code:literal => $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[allow(missing_docs)]
        pub enum $name {
            $($variant,)*
        }

        impl $name {
            /// Kafka's `fromCode`: a code it does not know is `Unknown`.
            pub fn from_code(code: i8) -> Self {
                match code {
                    $($code => Self::$variant,)*
                    _ => Self::Unknown,
                }
            }

            /// The wire code.
            pub fn code(self) -> i8 {
                match self {
                    $(Self::$variant => $code,)*
                }
            }

            /// Kafka's enum constant name (what its messages print).
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

acl_enum! {
    /// Kafka's `ResourceType`.
    ResourceType {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Topic = 2 => "TOPIC",
        Group = 3 => "GROUP",
        Cluster = 4 => "CLUSTER",
        TransactionalId = 5 => "TRANSACTIONAL_ID",
        DelegationToken = 6 => "DELEGATION_TOKEN",
        User = 7 => "USER",
    }
}

acl_enum! {
    /// Kafka's `PatternType`.
    PatternType {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Match = 2 => "MATCH",
        Literal = 3 => "LITERAL",
        Prefixed = 4 => "PREFIXED",
    }
}

acl_enum! {
    /// Kafka's `AclOperation`.
    AclOperation {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        All = 2 => "ALL",
        Read = 3 => "READ",
        Write = 4 => "WRITE",
        Create = 5 => "CREATE",
        Delete = 6 => "DELETE",
        Alter = 7 => "ALTER",
        Describe = 8 => "DESCRIBE",
        ClusterAction = 9 => "CLUSTER_ACTION",
        DescribeConfigs = 10 => "DESCRIBE_CONFIGS",
        AlterConfigs = 11 => "ALTER_CONFIGS",
        IdempotentWrite = 12 => "IDEMPOTENT_WRITE",
        CreateTokens = 13 => "CREATE_TOKENS",
        DescribeTokens = 14 => "DESCRIBE_TOKENS",
        TwoPhaseCommit = 15 => "TWO_PHASE_COMMIT",
    }
}

acl_enum! {
    /// Kafka's `AclPermissionType`.
    AclPermissionType {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Deny = 2 => "DENY",
        Allow = 3 => "ALLOW",
    }
}
