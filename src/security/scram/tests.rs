//! ScramFormatterTest, ScramMessagesTest and ScramSaslServerTest's cases, and RFC 7677's
//! example exchange byte for byte.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use super::*;

const CLIENT_NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
const SERVER_NONCE: &str = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
const SERVER_FIRST: &str =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
const CLIENT_FINAL: &str = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                            p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
const SERVER_FINAL: &str = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

fn rfc_credential() -> ScramCredential {
    let salt = BASE64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
    ScramCredential::from_password(ScramMechanism::Sha256, "pencil", &salt, 4096)
}

fn lookup(user: &str) -> Option<ScramCredential> {
    (user == "user").then(rfc_credential)
}

#[test]
fn rfc7677_example_server_side() {
    let mut server = ScramServer::new(ScramMechanism::Sha256, SERVER_NONCE.into());
    let first = server.evaluate(format!("n,,n=user,r={CLIENT_NONCE}").as_bytes(), &lookup);
    assert_eq!(first.unwrap(), SERVER_FIRST.as_bytes());
    assert!(!server.is_complete());
    let last = server.evaluate(CLIENT_FINAL.as_bytes(), &lookup).unwrap();
    assert_eq!(last, SERVER_FINAL.as_bytes());
    assert!(server.is_complete());
    assert_eq!(server.authorization_id(), Some("user"));
}

#[test]
fn rfc7677_example_client_side() {
    let mut client = ScramClient::new(
        ScramMechanism::Sha256,
        "user",
        "pencil",
        CLIENT_NONCE.into(),
    );
    assert_eq!(
        client.first_message(),
        format!("n,,n=user,r={CLIENT_NONCE}").into_bytes()
    );
    let last = client.evaluate(SERVER_FIRST.as_bytes()).unwrap();
    assert_eq!(last, Some(CLIENT_FINAL.as_bytes().to_vec()));
    assert_eq!(client.evaluate(SERVER_FINAL.as_bytes()).unwrap(), None);
    assert!(client.is_complete());
}

#[test]
fn the_client_refuses_a_bad_server_signature_and_an_error() {
    let run = |final_message: &str| {
        let mut client = ScramClient::new(
            ScramMechanism::Sha256,
            "user",
            "pencil",
            CLIENT_NONCE.into(),
        );
        client.first_message();
        client.evaluate(SERVER_FIRST.as_bytes()).unwrap();
        client
            .evaluate(final_message.as_bytes())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        run("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
        "Invalid server signature in server final message"
    );
    assert_eq!(
        run("e=invalid-proof"),
        "Sasl authentication using SCRAM-SHA-256 failed with error: invalid-proof"
    );
    // A server nonce that does not extend ours.
    let mut client = ScramClient::new(ScramMechanism::Sha256, "user", "pencil", "abc".into());
    client.first_message();
    assert!(client.evaluate(SERVER_FIRST.as_bytes()).is_err());
}

#[test]
fn each_mechanism_completes_against_itself() {
    for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        let credential = ScramCredential::from_password(m, "secret, with = signs", b"salty", 4096);
        let lookup = |u: &str| (u == "a,b=c").then(|| credential.clone());
        let mut client = ScramClient::new(m, "a,b=c", "secret, with = signs", "cn".into());
        let mut server = ScramServer::new(m, "sn".into());
        let first = client.first_message();
        assert!(String::from_utf8_lossy(&first).contains("n=a=2Cb=3Dc"));
        let server_first = server.evaluate(&first, &lookup).unwrap();
        let client_final = client.evaluate(&server_first).unwrap().unwrap();
        let server_final = server.evaluate(&client_final, &lookup).unwrap();
        assert_eq!(client.evaluate(&server_final).unwrap(), None);
        assert_eq!(server.authorization_id(), Some("a,b=c"));
    }
}

#[test]
fn a_wrong_password_is_an_invalid_proof() {
    let mut client = ScramClient::new(
        ScramMechanism::Sha256,
        "user",
        "pencil!",
        CLIENT_NONCE.into(),
    );
    let mut server = ScramServer::new(ScramMechanism::Sha256, SERVER_NONCE.into());
    let first = server.evaluate(&client.first_message(), &lookup).unwrap();
    let last = client.evaluate(&first).unwrap().unwrap();
    assert_eq!(
        server.evaluate(&last, &lookup),
        Err(ScramFailure::Invalid("Invalid client credentials".into()))
    );
    assert!(!server.is_complete());
    assert_eq!(server.authorization_id(), None);
}

#[test]
fn no_authorization_id_specified() {
    let mut server = ScramServer::new(ScramMechanism::Sha256, SERVER_NONCE.into());
    assert!(server.evaluate(b"n,,n=user,r=abc", &lookup).is_ok());
}

#[test]
fn authorization_id_equals_authentication_id() {
    let mut server = ScramServer::new(ScramMechanism::Sha256, SERVER_NONCE.into());
    assert!(server.evaluate(b"n,a=user,n=user,r=abc", &lookup).is_ok());
}

#[test]
fn authorization_id_not_equals_authentication_id() {
    let mut server = ScramServer::new(ScramMechanism::Sha256, SERVER_NONCE.into());
    assert_eq!(
        server.evaluate(b"n,a=other,n=user,r=abc", &lookup),
        Err(ScramFailure::Authentication(
            "Authentication failed: Client requested an authorization id that is different from username".into()
        ))
    );
}

#[test]
fn unknown_users_tokens_and_low_iterations_are_invalid() {
    let mut server = ScramServer::new(ScramMechanism::Sha256, "s".into());
    assert_eq!(
        server.evaluate(b"n,,n=nobody,r=abc", &lookup),
        Err(ScramFailure::Invalid(
            "Authentication failed: Invalid user credentials".into()
        ))
    );
    let mut server = ScramServer::new(ScramMechanism::Sha256, "s".into());
    assert!(matches!(
        server.evaluate(b"n,,n=user,r=abc,tokenauth=true", &lookup),
        Err(ScramFailure::Invalid(m)) if m.starts_with("Token Authentication failed")
    ));
    let weak = |_: &str| {
        Some(ScramCredential::from_password(
            ScramMechanism::Sha256,
            "p",
            b"s",
            1000,
        ))
    };
    let mut server = ScramServer::new(ScramMechanism::Sha256, "s".into());
    assert_eq!(
        server.evaluate(b"n,,n=user,r=abc", &weak),
        Err(ScramFailure::Invalid(
            "Iterations 1000 is less than the minimum 4096 for SCRAM-SHA-256".into()
        ))
    );
}

#[test]
fn a_final_message_with_another_nonce_is_refused() {
    let mut server = ScramServer::new(ScramMechanism::Sha256, SERVER_NONCE.into());
    server
        .evaluate(format!("n,,n=user,r={CLIENT_NONCE}").as_bytes(), &lookup)
        .unwrap();
    let tampered = CLIENT_FINAL.replace("k0,p=", "k1,p=");
    assert_eq!(
        server.evaluate(tampered.as_bytes(), &lookup),
        Err(ScramFailure::Invalid(
            "Invalid client nonce in the final client message.".into()
        ))
    );
}

#[test]
fn client_first_messages_valid_and_invalid() {
    let ok = ClientFirst::parse(b"n,,n=us=2Cer,r=nonce,tokenauth=true").unwrap();
    assert_eq!(
        (ok.sasl_name.as_str(), ok.nonce.as_str()),
        ("us=2Cer", "nonce")
    );
    assert_eq!(username(&ok.sasl_name), "us,er");
    assert_eq!(
        ok.extensions,
        [("tokenauth".to_string(), "true".to_string())]
    );
    assert_eq!(ok.bare, "n=us=2Cer,r=nonce,tokenauth=true");
    assert!(ClientFirst::parse(b"n,,m=reserved,n=u,r=x").is_ok());
    for bad in [
        &b"y,,n=u,r=x"[..],
        b"p=tls,,n=u,r=x",
        b"n,,n=,r=x",
        b"n,,n=u=,r=x",
        b"n,,n=u",
        b"n,,r=x,n=u",
        b"n,,n=u,r=a b",
        b"n,,n=u,r=x,1=2",
        b"",
        b"n",
        b"\xff\xfe",
    ] {
        let e = ClientFirst::parse(bad).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("Invalid SCRAM client first message format"),
            "{e}"
        );
    }
}

#[test]
fn client_final_messages_valid_and_invalid() {
    let ok = ClientFinal::parse(CLIENT_FINAL.as_bytes()).unwrap();
    assert_eq!(ok.channel_binding, b"n,,");
    assert_eq!(ok.proof.len(), 32);
    assert!(ClientFinal::parse(b"c=biws,r=x,ext=1,p=AAAA").is_ok());
    for bad in [
        &b"c=biws,r=x"[..],
        b"c=biw,r=x,p=AAAA",
        b"c=biws,r=x,p=AAA",
        b"r=x,c=biws,p=AAAA",
    ] {
        assert!(
            ClientFinal::parse(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn sasl_names_escape_both_ways() {
    assert_eq!(sasl_name("a=b,c"), "a=3Db=2Cc");
    assert_eq!(username("a=3Db=2Cc"), "a=b,c");
    assert_eq!(
        ScramMechanism::from_type_id(2),
        Some(ScramMechanism::Sha512)
    );
    assert_eq!(ScramMechanism::Sha512.type_id(), 2);
}

#[test]
fn any_token_is_answered_or_refused_without_a_panic() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let alphabet = b"n,a=r=c=p=s=i=v=e=AZaz09+/=2C3Dbiws\x00\xff";
    for _ in 0..3_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 40) as usize;
        let token: Vec<u8> = (0..len)
            .map(|i| alphabet[((seed >> (i % 40)) as usize + i * 13) % alphabet.len()])
            .collect();
        let mut server = ScramServer::new(ScramMechanism::Sha256, "s".into());
        let _ = server.evaluate(&token, &lookup);
        let _ = server.evaluate(&token, &lookup);
        let mut client = ScramClient::new(ScramMechanism::Sha512, "u", "p", "c".into());
        client.first_message();
        let _ = client.evaluate(&token);
        let _ = client.evaluate(&token);
    }
}

/// Credentials with one delegation token, `token-1`, owned by `owner`, whose HMAC (the
/// password) is "pencil" as in RFC 7677's example.
struct OneToken {
    lifetime_ms: i64,
}

impl ScramCredentials for OneToken {
    fn user(&self, _mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        lookup(user)
    }

    fn token(&self, mechanism: ScramMechanism, token_id: &str) -> Option<TokenCredential> {
        (token_id == "token-1").then(|| {
            TokenCredential::new(
                mechanism,
                token_id,
                "pencil",
                "owner".into(),
                self.lifetime_ms,
            )
        })
    }
}

#[test]
fn a_delegation_token_authenticates_as_its_owner() {
    let client = |password: &str| {
        ScramClient::new(ScramMechanism::Sha256, "token-1", password, "abc".into())
            .with_token_auth()
    };
    let mut server = ScramServer::new(ScramMechanism::Sha256, "xyz".into());
    let creds = OneToken { lifetime_ms: 5000 };
    let mut c = client("pencil");
    let first_message = c.first_message();
    assert_eq!(first_message, b"n,,n=token-1,r=abc,tokenauth=true");
    let first = server.evaluate_with(&first_message, &creds).unwrap();
    // The token's credential: the mechanism's minimum iterations.
    assert!(String::from_utf8_lossy(&first).ends_with(",i=4096"));
    let last = c.evaluate(&first).unwrap().unwrap();
    let server_final = server.evaluate_with(&last, &creds).unwrap();
    assert_eq!(
        c.evaluate(&server_final).unwrap(),
        None,
        "the client checks the server"
    );
    assert!(server.is_complete());
    assert_eq!(server.authorization_id(), Some("owner"));
    assert!(server.token_authenticated());
    assert_eq!(server.token_lifetime_ms(), Some(5000));

    // A wrong HMAC fails as any wrong password; an unknown token id is Kafka's message.
    let mut server = ScramServer::new(ScramMechanism::Sha256, "xyz".into());
    let mut c = client("wrong");
    let first = server.evaluate_with(&c.first_message(), &creds).unwrap();
    let last = c.evaluate(&first).unwrap().unwrap();
    assert!(server.evaluate_with(&last, &creds).is_err());
    let mut server = ScramServer::new(ScramMechanism::Sha256, "xyz".into());
    assert_eq!(
        server.evaluate_with(b"n,,n=token-2,r=abc,tokenauth=true", &creds),
        Err(ScramFailure::Invalid(
            "Token Authentication failed: Invalid tokenId : token-2".into()
        ))
    );
}
