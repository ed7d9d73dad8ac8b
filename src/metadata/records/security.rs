//! Security records: SCRAM credentials, ACLs and delegation tokens.

use uuid::Uuid;

use crate::metadata::describe::metadata_struct;

metadata_struct! {
    /// UserScramCredentialRecord (key 11): a SCRAM credential set for a user.
    #[derive(Eq)]
    pub struct UserScramCredentialRecord {
        /// User name.
        name: String [0+],
        /// Mechanism (`ScramMechanism`: 1 SHA-256, 2 SHA-512).
        mechanism: i8 [0+],
        /// Salt.
        salt: Vec<u8> [0+],
        /// Stored key.
        stored_key: Vec<u8> [0+],
        /// Server key.
        server_key: Vec<u8> [0+],
        /// Iteration count.
        iterations: i32 [0+],
    }
}

metadata_struct! {
    /// RemoveUserScramCredentialRecord (key 22): a user's SCRAM credential removed.
    #[derive(Eq)]
    pub struct RemoveUserScramCredentialRecord {
        /// User name.
        name: String [0+],
        /// Mechanism.
        mechanism: i8 [0+],
    }
}

metadata_struct! {
    /// AccessControlEntryRecord (key 18): an ACL added (StandardAuthorizer).
    #[derive(Eq)]
    pub struct AccessControlEntryRecord {
        /// ACL id (used to remove it).
        id: Uuid [0+],
        /// Resource type (`ResourceType` code: 2 topic, 3 group, 4 cluster, …).
        resource_type: i8 [0+],
        /// Resource name or pattern.
        resource_name: String [0+],
        /// Pattern type (`PatternType` code: 3 literal, 4 prefixed).
        pattern_type: i8 [0+],
        /// Principal, e.g. `User:alice`.
        principal: String [0+],
        /// Host, `*` for any.
        host: String [0+],
        /// Operation (`AclOperation` code).
        operation: i8 [0+],
        /// Permission (`AclPermissionType` code: 2 deny, 3 allow).
        permission_type: i8 [0+],
    }
}

metadata_struct! {
    /// RemoveAccessControlEntryRecord (key 19): an ACL removed.
    #[derive(Eq)]
    pub struct RemoveAccessControlEntryRecord {
        /// ACL id.
        id: Uuid [0+],
    }
}

metadata_struct! {
    /// DelegationTokenRecord (key 10): a delegation token created or renewed.
    #[derive(Eq)]
    pub struct DelegationTokenRecord {
        /// Owner principal.
        owner: String [0+],
        /// Principal that asked for it.
        requester: String [0+],
        /// Principals allowed to renew it.
        renewers: Vec<String> [0+],
        /// Issue time, ms since the epoch.
        issue_timestamp: i64 [0+],
        /// Latest possible expiry, ms since the epoch.
        max_timestamp: i64 [0+],
        /// Current expiry, ms since the epoch.
        expiration_timestamp: i64 [0+],
        /// Token id.
        token_id: String [0+],
    }
}

metadata_struct! {
    /// RemoveDelegationTokenRecord (key 26): a delegation token expired or was removed.
    #[derive(Eq)]
    pub struct RemoveDelegationTokenRecord {
        /// Token id.
        token_id: String [0+],
    }
}
