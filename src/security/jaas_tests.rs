//! JaasContextTest's parsing cases (`sasl.jaas.config` values).

use std::collections::BTreeMap;

use super::jaas::{parse, parse_single, JaasEntry};

fn entry(module: &str, flag: &str, options: &[(&str, &str)]) -> JaasEntry {
    JaasEntry {
        login_module: module.to_string(),
        control_flag: flag.to_string(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    }
}

#[test]
fn test_config_no_options() {
    let got = parse_single("test.testConfigNoOptions required;").unwrap();
    assert_eq!(got, entry("test.testConfigNoOptions", "REQUIRED", &[]));
}

#[test]
fn test_control_flag() {
    for flag in ["required", "Requisite", "SUFFICIENT", "optional"] {
        let got =
            parse_single(&format!("test.testControlFlag {flag} propName=propValue;")).unwrap();
        let want = entry(
            "test.testControlFlag",
            &flag.to_ascii_uppercase(),
            &[("propName", "propValue")],
        );
        assert_eq!(got, want);
    }
}

#[test]
fn test_multiple_options() {
    let text: String = (0..10)
        .map(|i| format!(" propName{i}=propValue{i}"))
        .collect();
    let got = parse_single(&format!("test.testMultipleOptions sufficient{text};")).unwrap();
    assert_eq!(got.options.len(), 10);
    assert_eq!(got.options["propName7"], "propValue7");
}

#[test]
fn test_quoted_option_value() {
    let got = parse_single(
        r#"test.testQuotedOptionValue required propName="prop value" propName2="value1 = 1, value2 = 2";"#,
    )
    .unwrap();
    let want = entry(
        "test.testQuotedOptionValue",
        "REQUIRED",
        &[
            ("propName", "prop value"),
            ("propName2", "value1 = 1, value2 = 2"),
        ],
    );
    assert_eq!(got, want);
}

#[test]
fn test_quoted_option_name() {
    let got = parse_single(r#"test.testQuotedOptionName required "prop name"=propValue;"#).unwrap();
    assert_eq!(
        got,
        entry(
            "test.testQuotedOptionName",
            "REQUIRED",
            &[("prop name", "propValue")]
        )
    );
}

#[test]
fn test_multiple_login_modules() {
    let text = " test.Module0 required index=Index0 module=Module0; test.Module1 required \
                index=Index1 module=Module1; test.Module2 required index=Index2 module=Module2;";
    let got = parse(text).unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(
        got[2],
        entry(
            "test.Module2",
            "REQUIRED",
            &[("index", "Index2"), ("module", "Module2")]
        )
    );
    // A listener's mechanism takes exactly one (JaasContext's rule).
    assert_eq!(
        parse_single(text).unwrap_err(),
        "JAAS config property contains 3 login modules, should be 1 module"
    );
}

#[test]
fn test_invalid_configurations() {
    for (text, want) in [
        (
            "  required option1=value1;",
            "Invalid login module control flag 'option1'",
        ),
        (
            "test.loginModule option1=value1;",
            "Invalid login module control flag 'option1'",
        ),
        (
            "loginModule required option1;",
            "Value not specified for key 'option1'",
        ),
        (
            "test.testMissingSemicolon required option1=value1",
            "not terminated by semi-colon",
        ),
        (
            "test.testNumericOptionWithoutQuotes required option1=3;",
            "Value not specified for key 'option1'",
        ),
        (
            "test.testInvalidControlFlag { option1=3;",
            "control flag is not available",
        ),
        ("", "Login module not specified in JAAS config"),
        (
            "// only a comment",
            "Login module not specified in JAAS config",
        ),
    ] {
        let got = parse(text).unwrap_err();
        assert!(
            got.contains(want),
            "{text:?}: {got:?} should contain {want:?}"
        );
    }
}

#[test]
fn test_numeric_option_with_quotes() {
    let got = parse_single(r#"test.testNumericOptionWithQuotes required option1="3";"#).unwrap();
    assert_eq!(got.options["option1"], "3");
}

#[test]
fn kafkas_plain_example_with_comments_and_escapes() {
    let text = "org.apache.kafka.common.security.plain.PlainLoginModule required /* the admin */\n \
                username=\"admin\" password='admin-secret' // its own\n user_admin=\"admin-secret\" \
                user_alice=\"a\\\"b\\\\c\";";
    let got = parse_single(text).unwrap();
    assert_eq!(
        got.login_module,
        "org.apache.kafka.common.security.plain.PlainLoginModule"
    );
    assert_eq!(got.options["password"], "admin-secret");
    assert_eq!(got.options["user_alice"], "a\"b\\c");
    // Options hold passwords: Debug shows their names only.
    let printed = format!("{got:?}");
    assert!(
        !printed.contains("admin-secret") && printed.contains("user_admin"),
        "{printed}"
    );
}

#[test]
fn any_text_parses_or_is_refused_without_a_panic() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let alphabet = b"ab=;\"'\\/* \n.-_$1";
    for _ in 0..5_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 24) as usize;
        let text: String = (0..len)
            .map(|i| alphabet[((seed >> (i % 50)) as usize + i * 7) % alphabet.len()] as char)
            .collect();
        let _ = parse(&text);
    }
}
