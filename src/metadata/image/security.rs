//! ACLs, SCRAM credentials and delegation tokens (Kafka's `AclsDelta`, `ScramDelta`,
//! `DelegationTokenDelta`).

use super::{MetadataImage, ReplayError};
use crate::metadata::records::{
    AccessControlEntryRecord, DelegationTokenRecord, RemoveAccessControlEntryRecord,
    RemoveDelegationTokenRecord, RemoveUserScramCredentialRecord, UserScramCredentialRecord,
};

/// Kafka's name of a SCRAM mechanism id (`ScramMechanism`), as kafka-metadata-shell shows it.
pub fn scram_mechanism_name(id: i8) -> &'static str {
    match id {
        1 => "SCRAM-SHA-256",
        2 => "SCRAM-SHA-512",
        _ => "UNKNOWN",
    }
}

impl MetadataImage {
    /// An ACL added, or replaced if its id is known.
    pub(super) fn replay_acl(&mut self, r: AccessControlEntryRecord) -> Result<(), ReplayError> {
        self.acls.insert(r.id, r);
        Ok(())
    }

    /// Removing an ACL the image does not hold is refused (unlike SCRAM and tokens).
    pub(super) fn replay_remove_acl(
        &mut self,
        r: &RemoveAccessControlEntryRecord,
    ) -> Result<(), ReplayError> {
        self.acls
            .remove(&r.id)
            .map(drop)
            .ok_or(ReplayError::UnknownAcl(r.id))
    }

    pub(super) fn replay_scram(&mut self, r: UserScramCredentialRecord) -> Result<(), ReplayError> {
        self.scram.insert((r.mechanism, r.name.clone()), r);
        Ok(())
    }

    /// A missing credential is no error: the removal simply finds nothing.
    pub(super) fn replay_remove_scram(
        &mut self,
        r: &RemoveUserScramCredentialRecord,
    ) -> Result<(), ReplayError> {
        self.scram.remove(&(r.mechanism, r.name.clone()));
        Ok(())
    }

    /// A token created, or renewed (replaced whole).
    pub(super) fn replay_token(&mut self, r: DelegationTokenRecord) -> Result<(), ReplayError> {
        self.delegation_tokens.insert(r.token_id.clone(), r);
        Ok(())
    }

    pub(super) fn replay_remove_token(
        &mut self,
        r: &RemoveDelegationTokenRecord,
    ) -> Result<(), ReplayError> {
        self.delegation_tokens.remove(&r.token_id);
        Ok(())
    }
}
