//! ScramParserTest.
#![allow(clippy::unwrap_used)]

use super::*;

const TEST_SALT: &[u8] = b"1lv4pdnw4fwq7notcxm0yy1k7q";
const TEST_SALT_BASE64: &str = "MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=";
const TEST_SALTED_PASSWORD_BASE64: &str = "mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=";

fn parse(s: &str) -> Result<ScramArgument, String> {
    ScramArgument::parse(s)
}

fn expected(
    mechanism: ScramMechanism,
    name: &str,
    salt: Option<&[u8]>,
    iterations: Option<i32>,
    password: &str,
) -> ScramArgument {
    ScramArgument {
        mechanism,
        name: name.into(),
        salt: salt.map(<[u8]>::to_vec),
        iterations,
        secret: Secret::Password(password.into()),
    }
}

#[test]
fn test_split_trimmed_config_string_component() {
    for (input, value) in [
        ("name=foo", "foo"),
        ("name=\"foo\"", "foo"),
        ("name=", ""),
        ("name=\"\"", ""),
    ] {
        assert_eq!(
            split_component(input).unwrap(),
            ("name".to_string(), value.to_string())
        );
    }
    assert_eq!(
        split_component("name").unwrap_err(),
        "No equals sign found in SCRAM component: name"
    );
}

#[test]
fn test_random_salt() {
    let (a, b) = (random_salt(), random_salt());
    assert_ne!(a, b);
    assert!(a.iter().all(|c| c.is_ascii_alphanumeric()), "{a:?}");
    assert!(a.len() >= 20, "{a:?}");
}

#[test]
fn test_default_and_configured_iterations() {
    let r = parse("SCRAM-SHA-256=[name=bob,password=my pass]")
        .unwrap()
        .to_record(random_salt)
        .unwrap();
    assert_eq!(r.iterations, DEFAULT_ITERATIONS);
    let r = parse("SCRAM-SHA-256=[name=bob,password=my pass,iterations=8192]")
        .unwrap()
        .to_record(random_salt)
        .unwrap();
    assert_eq!(r.iterations, 8192);
}

#[test]
fn test_parse_per_mechanism_argument() {
    assert_eq!(
        parse("SCRAM-SHA-512=[name=scram-admin,password=scram-user-secret]").unwrap(),
        expected(
            ScramMechanism::Sha512,
            "scram-admin",
            None,
            None,
            "scram-user-secret"
        )
    );
    for (input, message) in [
        (
            "SCRAM-SHA-512",
            "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-512'",
        ),
        (
            "SCRAM-SHA-UNSUPPORTED=[name=scram-admin,password=scram-user-secret]",
            "The add-scram mechanism SCRAM-SHA-UNSUPPORTED is not supported.",
        ),
        (
            "SCRAM-SHA-256=name=scram-admin,password=scram-user-secret",
            "Expected configuration string to start with [",
        ),
        (
            "SCRAM-SHA-256=[name=scram-admin,password=scram-user-secret",
            "Expected configuration string to end with ]",
        ),
    ] {
        assert_eq!(parse(input).unwrap_err(), message, "{input}");
    }
}

#[test]
fn test_parse_per_mechanism_data() {
    assert_eq!(
        parse("SCRAM-SHA-256=[name=bob,password=mypass]").unwrap(),
        expected(ScramMechanism::Sha256, "bob", None, None, "mypass")
    );
    assert_eq!(
        parse("SCRAM-SHA-256=[name=bob,password=my pass,iterations=8192]").unwrap(),
        expected(ScramMechanism::Sha256, "bob", None, Some(8192), "my pass")
    );
    assert_eq!(
        parse(&format!(
            "SCRAM-SHA-512=[name=bob,password=my pass,salt=\"{TEST_SALT_BASE64}\"]"
        ))
        .unwrap(),
        expected(
            ScramMechanism::Sha512,
            "bob",
            Some(TEST_SALT),
            None,
            "my pass"
        )
    );
    assert_eq!(
        parse(&format!(
            "SCRAM-SHA-256=[name=bob,password=my pass,iterations=8192,salt=\"{TEST_SALT_BASE64}\"]"
        ))
        .unwrap(),
        expected(
            ScramMechanism::Sha256,
            "bob",
            Some(TEST_SALT),
            Some(8192),
            "my pass"
        )
    );
}

#[test]
fn test_parse_per_mechanism_data_failures() {
    for (config, message) in [
        ("password=mypass", "You must supply 'name' to add-scram"),
        (
            "name=bar",
            "You must supply one of 'password' or 'saltedpassword' to add-scram",
        ),
        (
            "name=bob,password=mypass,unknown=something,unknown2=somethingelse",
            "Unknown SCRAM configurations: unknown, unknown2",
        ),
        (
            "name=alice,saltedpassword=\"mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=\"",
            "You must supply 'salt' with 'saltedpassword' to add-scram",
        ),
        (
            "name=bob,password=x,iterations=many",
            "Failed to parse iterations count: many",
        ),
    ] {
        assert_eq!(
            parse(&format!("SCRAM-SHA-256=[{config}]")).unwrap_err(),
            message,
            "{config}"
        );
    }
}

#[test]
fn test_per_mechanism_data_to_record() {
    let arg = parse(&format!(
        "SCRAM-SHA-512=[name=alice,salt=\"{TEST_SALT_BASE64}\",saltedpassword=\"{TEST_SALTED_PASSWORD_BASE64}\"]"
    ))
    .unwrap();
    let salted = base64::engine::general_purpose::STANDARD
        .decode(TEST_SALTED_PASSWORD_BASE64)
        .unwrap();
    let r = arg.to_record(|| unreachable!("the salt is given")).unwrap();
    let keys =
        ScramCredential::from_salted_password(ScramMechanism::Sha512, &salted, TEST_SALT, 4096);
    assert_eq!(
        (
            r.name.as_str(),
            r.mechanism,
            r.salt,
            r.stored_key,
            r.server_key,
            r.iterations
        ),
        (
            "alice",
            2,
            TEST_SALT.to_vec(),
            keys.stored_key,
            keys.server_key,
            4096
        )
    );
}

/// A password argument gives the credential a SCRAM client with that password proves.
#[test]
fn password_argument_gives_the_credential_of_that_password() {
    let r = parse(&format!(
        "SCRAM-SHA-256=[name=alice,password=alice-secret,salt=\"{TEST_SALT_BASE64}\",iterations=8192]"
    ))
    .unwrap()
    .to_record(random_salt)
    .unwrap();
    let c = ScramCredential::from_password(ScramMechanism::Sha256, "alice-secret", TEST_SALT, 8192);
    assert_eq!((r.stored_key, r.server_key), (c.stored_key, c.server_key));
}

#[test]
fn iterations_out_of_bounds_are_refused() {
    for (n, message) in [
        (
            4095,
            "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256",
        ),
        (
            16_385,
            "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_256",
        ),
    ] {
        let err = parse(&format!("SCRAM-SHA-256=[name=a,password=b,iterations={n}]"))
            .unwrap()
            .to_record(random_salt)
            .unwrap_err();
        assert_eq!(err, message);
    }
}
