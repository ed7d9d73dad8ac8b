//! SASL/PLAIN (RFC 4616) on the server, as Kafka's `PlainSaslServer` with its
//! `PlainServerCallbackHandler`: the one client message is `[authzid] NUL authcid NUL passwd`,
//! checked against the `user_<name>="<password>"` options of the listener's PLAIN login module.
//! Every refusal is a SaslAuthenticationException in Kafka, its message sent to the client.

use std::collections::BTreeMap;

use crate::common::secret::Secret;

/// The outcome of the client's message: the authenticated user, or Kafka's refusal message.
pub fn evaluate(token: &[u8], users: &BTreeMap<String, Secret>) -> Result<String, String> {
    // Java decodes the bytes as UTF-8 with replacement, as String::from_utf8_lossy does.
    let text = String::from_utf8_lossy(token);
    let tokens = extract_tokens(&text)?;
    let (authorization_id, username, password) = (tokens[0], tokens[1], tokens[2]);
    if username.is_empty() {
        return Err("Authentication failed: username not specified".into());
    }
    if password.is_empty() {
        return Err("Authentication failed: password not specified".into());
    }
    let authenticated = users.get(username).is_some_and(|expected| {
        constant_time_eq(expected.expose().as_bytes(), password.as_bytes())
    });
    if !authenticated {
        return Err("Authentication failed: Invalid username or password".into());
    }
    if !authorization_id.is_empty() && authorization_id != username {
        return Err(
            "Authentication failed: Client requested an authorization id that is different from username"
                .into(),
        );
    }
    Ok(username.to_string())
}

/// Splits at NUL up to four times, as Kafka does: exactly three parts are a message.
fn extract_tokens(text: &str) -> Result<Vec<&str>, String> {
    let mut tokens = Vec::new();
    let mut rest = text;
    for _ in 0..4 {
        match rest.find('\0') {
            None => {
                tokens.push(rest);
                break;
            }
            Some(i) => {
                tokens.push(&rest[..i]);
                rest = &rest[i + 1..];
            }
        }
    }
    if tokens.len() != 3 {
        return Err(format!(
            "Invalid SASL/PLAIN response: expected 3 tokens, got {}",
            tokens.len()
        ));
    }
    Ok(tokens)
}

/// Compares without an early exit on the first differing byte (Kafka's
/// `Utils.isEqualConstantTime`), so the time taken does not tell how much of a guess is right.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The PLAIN message a client sends: no authorization id, then user and password.
pub fn client_message(username: &str, password: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(username.len() + password.len() + 2);
    out.push(0);
    out.extend_from_slice(username.as_bytes());
    out.push(0);
    out.extend_from_slice(password.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    //! PlainSaslServerTest's cases.
    use super::*;

    fn users() -> BTreeMap<String, Secret> {
        let mut m = BTreeMap::new();
        m.insert("anotherUser".to_string(), Secret::from("anotherPassword"));
        m.insert("myUser".to_string(), Secret::from("myPassword"));
        m
    }

    fn message(authz: &str, user: &str, pw: &str) -> Vec<u8> {
        format!("{authz}\0{user}\0{pw}").into_bytes()
    }

    #[test]
    fn no_authorization_id_specified() {
        assert_eq!(
            evaluate(&message("", "myUser", "myPassword"), &users()),
            Ok("myUser".into())
        );
        assert_eq!(
            client_message("myUser", "myPassword"),
            message("", "myUser", "myPassword")
        );
    }

    #[test]
    fn authorization_id_equals_authentication_id() {
        let got = evaluate(&message("myUser", "myUser", "myPassword"), &users());
        assert_eq!(got, Ok("myUser".into()));
    }

    #[test]
    fn authorization_id_not_equals_authentication_id() {
        let got = evaluate(&message("anotherUser", "myUser", "myPassword"), &users());
        assert_eq!(
            got,
            Err("Authentication failed: Client requested an authorization id that is different from username".into())
        );
    }

    #[test]
    fn empty_tokens() {
        let e = |m: &[u8]| evaluate(m, &users()).unwrap_err();
        assert_eq!(e(b"\0\0"), "Authentication failed: username not specified");
        assert_eq!(
            e(b"\0myUser\0"),
            "Authentication failed: password not specified"
        );
        assert_eq!(
            e(b""),
            "Invalid SASL/PLAIN response: expected 3 tokens, got 1"
        );
        assert_eq!(
            e(b"\0"),
            "Invalid SASL/PLAIN response: expected 3 tokens, got 2"
        );
        assert_eq!(
            e(b"a\0b\0c\0d"),
            "Invalid SASL/PLAIN response: expected 3 tokens, got 4"
        );
        assert_eq!(
            e(b"a\0b\0c\0d\0e"),
            "Invalid SASL/PLAIN response: expected 3 tokens, got 4"
        );
    }

    #[test]
    fn a_wrong_password_or_an_unknown_user_get_one_answer() {
        let e = |m: &[u8]| evaluate(m, &users()).unwrap_err();
        let want = "Authentication failed: Invalid username or password";
        assert_eq!(e(&message("", "myUser", "myPasswordX")), want);
        assert_eq!(e(&message("", "myUser", "myPasswor")), want);
        assert_eq!(e(&message("", "nobody", "myPassword")), want);
    }
}
