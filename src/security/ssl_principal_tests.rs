//! Kafka's SslPrincipalMapperTest, and the RFC 2253 form of subjects checked against Java.
#![allow(clippy::unwrap_used)]

use der::Decode;
use x509_cert::name::Name;

use super::*;

/// (DER of an X.500 name, what Java 17's `X500Principal.getName()` prints for it): names
/// built by `new X500Principal(String)` from DN strings covering keywords, escapes, leading
/// and trailing spaces, multi-valued RDNs, non-ASCII text and attributes without a keyword.
const JAVA_NAMES: &[(&str, &str)] = &[
    ("3058310b3009060355040613024652310c300a06035504081303494446310e300c060355040713055061726973310d300b060355040a130441636d65310c300a060355040b1303656e67310e300c06035504031305616c696365", "CN=alice,OU=eng,O=Acme,L=Paris,ST=IDF,C=FR"),
    ("3025312330210603550403131a6b61666b612d62726f6b65722d312e6578616d706c652e636f6d", "CN=kafka-broker-1.example.com"),
    ("30283110300e060355040a130741636d652b436f311430120603550403130b536d6974682c204a6f686e", "CN=Smith\\, John,O=Acme\\+Co"),
    ("3029310a3008060355040a130178311b30080603550403130161300f060a0992268993f22c640101130162", "CN=a+UID=b,O=x"),
    ("302b310e300c060355040a0c0523686173683119301706035504031310206c65616420616e6420747261696c20", "CN=\\ lead and trail\\ ,O=\\#hash"),
    ("30243122302006035504030c1971756f2274655c6261636b3c6c743e67743b73656d693d6571", "CN=quo\\\"te\\\\back\\<lt\\>gt\\;semi\\=eq"),
    ("3032310e300c06035504031305616c6963653120301e06092a864886f70d0109011611616c696365406578616d706c652e636f6d", "1.2.840.113549.1.9.1=#1611616c696365406578616d706c652e636f6d,CN=alice"),
    ("303c310c300a0603550403130373766331133011060a0992268993f22c6401191603636f6d31173015060a0992268993f22c64011916076578616d706c65", "DC=example,DC=com,CN=svc"),
    ("30303110300e060355040a0c0742c3bc63686572311c301a06035504030c134ac3bc7267656e20c39c6ec3af63c3b664c3a9", "CN=Jürgen Ünïcödé,O=Bücher"),
    ("3027311230100603550409130931204d61696e2053743111300f06035504030c087461620968657265", "CN=tab\there,STREET=1 Main St"),
    ("3021310f300d0603550403130673657269616c310e300c060355040513053132333435", "2.5.4.5=#13053132333435,CN=serial"),
    ("3035310a30080603550405130137310c300a060355040413034c6565310c300a060355042a1303416e6e310b3009060355040c13024472", "2.5.4.12=#13024472,2.5.4.42=#1303416e6e,2.5.4.4=#13034c6565,2.5.4.5=#130137"),
    ("301c310c300a060355040a1303783d79310c300a06035504030c03612362", "CN=a\\#b,O=x\\=y"),
    ("3011310f300d06035504030c06237374617274", "CN=\\#start"),
    ("30223111300f060355040b130874776f206c656164310d300b06035504031304656e6420", "CN=end\\ ,OU=two lead"),
];

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn names_read_as_java_writes_them() {
    for (der, java) in JAVA_NAMES {
        let name = Name::from_der(&unhex(der)).unwrap();
        assert_eq!(name_rfc2253(&name), *java, "{der}");
    }
}

#[test]
fn test_valid_rules() {
    for rules in [
        "DEFAULT",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/U",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
        "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
        "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
        "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
    ] {
        SslPrincipalMapper::parse(rules).unwrap_or_else(|e| panic!("{rules}: {e}"));
    }
}

#[test]
fn test_invalid_rules() {
    for rules in [
        "default",
        "DEFAUL",
        "DEFAULT/L",
        "DEFAULT/U",
        "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
        "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
    ] {
        assert!(
            SslPrincipalMapper::parse(rules).is_err(),
            "{rules} accepted"
        );
    }
}

#[test]
fn test_ssl_principal_mapper() {
    let rules = [
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
        "DEFAULT",
    ]
    .join(", ");
    let mapper = SslPrincipalMapper::parse(&rules).unwrap();
    assert_eq!(
        mapper.name("CN=Duke,OU=ServiceUsers,O=Org,C=US").unwrap(),
        "duke"
    );
    assert_eq!(
        mapper
            .name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US")
            .unwrap(),
        "duke@sme"
    );
    assert_eq!(
        mapper.name("cn=duke,ou=sme,dc=mycp,dc=com").unwrap(),
        "DUKE@SME"
    );
    assert_eq!(
        mapper
            .name("cN=duke,OU=JavaSoft,O=Sun Microsystems")
            .unwrap(),
        "DUKE"
    );
    assert_eq!(
        mapper.name("OU=JavaSoft,O=Sun Microsystems,C=US").unwrap(),
        "OU=JavaSoft,O=Sun Microsystems,C=US"
    );
}

fn splits(rules: &str) -> String {
    SslPrincipalMapper::parse(rules).unwrap().to_string()
}

#[test]
fn test_rules_splitting() {
    for (expected, rules) in [
        ("[]", ""),
        ("[DEFAULT]", "DEFAULT"),
        ("[RULE:/]", "RULE://"),
        ("[RULE:/.*]", "RULE:/.*/"),
        ("[RULE:/.*/L]", "RULE:/.*/L"),
        ("[RULE:/, DEFAULT]", "RULE://,DEFAULT"),
        ("[RULE:/, DEFAULT]", "  RULE:// ,  DEFAULT  "),
        (
            "[RULE:   /     , DEFAULT]",
            "  RULE:   /     / ,  DEFAULT  ",
        ),
        (
            "[RULE:  /     /U, DEFAULT]",
            "  RULE:  /     /U   ,DEFAULT  ",
        ),
        (
            "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]",
            "  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ",
        ),
        // Empty rules are ignored.
        ("[]", ",   , , ,      , , ,   "),
        ("[RULE:/, DEFAULT]", ",,RULE://,,,DEFAULT,,"),
        (
            "[RULE: /   , DEFAULT]",
            ",  , RULE: /   /    ,,,   DEFAULT, ,   ",
        ),
        (
            "[RULE:   /  /U, DEFAULT]",
            "     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,",
        ),
        // Escape sequences.
        (r"[RULE:\/\\\(\)\n\t/\/\/]", r"RULE:\/\\\(\)\n\t/\/\//"),
        (
            r"[RULE:\**\/+/*/L, RULE:\/*\**/**]",
            r"RULE:\**\/+/*/L,RULE:\/*\**/**/",
        ),
        // Rules rule.
        (
            r"[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]",
            r"RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT",
        ),
    ] {
        assert_eq!(
            splits(rules),
            format!("SslPrincipalMapper(rules = {expected})"),
            "{rules}"
        );
    }
}

#[test]
fn test_comma_with_whitespace() {
    let mapper = SslPrincipalMapper::parse(r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT").unwrap();
    assert_eq!(
        mapper
            .name(r"CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz")
            .unwrap(),
        r"Tkac\, Adam"
    );
}

#[test]
fn no_matching_rule_is_an_error_and_back_references_follow_kafka() {
    let mapper = SslPrincipalMapper::parse("RULE:^CN=(.*)$/$1/").unwrap();
    assert!(mapper
        .name("O=nobody")
        .unwrap_err()
        .contains("No rules apply to O=nobody"));
    // A reference beyond the groups is literal ($4 with one group); $12 is group 1 then "2".
    let mapper = SslPrincipalMapper::parse("RULE:^CN=(.*)$/$4-$12/").unwrap();
    assert_eq!(mapper.name("CN=x").unwrap(), "$4-x2");
}
