#include "guard/secret_rules.h"

#include <iterator>

namespace mcpcell {
namespace {

// Shorthands for the alphabets the vendors document.
#define B62 "[A-Za-z0-9]"
#define URLB64 "[A-Za-z0-9_-]"
#define HEX "[a-f0-9]"
// A keyword, then up to a few quotes, spaces, '=', ':' or '=>' before the value.
// Any byte but white space and the NUL that separates a message's strings
// (json_strings.h): a match never joins two unrelated strings.
#define NONSPACE "[^\\s\\x00]"
// A quote may be escaped once: JSON kept in a JSON string (a log line's field
// holding a request body) writes the member as \"key\":\"value\".
#define QUOTE "(?:\\\\?[\"'])?"
#define ASSIGN QUOTE "\\s{0,3}(?:=|:|=>|:=)\\s{0,3}" QUOTE

// One row of the table below: constant data, made before any code runs.
struct Row {
  const char* name;
  const char* regex;
  bool caseless;
  bool bounded;
  const char* tail;
};

constexpr Row R(const char* name, const char* regex, bool caseless = false, bool bounded = true,
                const char* tail = "") {
  return Row{name, regex, caseless, bounded, tail};
}

// Rule names are stable identifiers: the audit log and user profiles
// ("disable": [...]) refer to them.
constexpr Row kRules[] = {
      // --- Cloud providers -------------------------------------------------
      // AWS access key ids: a 4-letter type prefix, then 16 base32 characters.
      R("aws-access-key-id", "(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AGPA|ANPA|ANVA|APKA)[A-Z2-7]{16}"),
      // The 40-character secret has no prefix: only next to its keyword.
      // The credentials file and the environment (aws_secret_access_key), and
      // the CLI's JSON and the SDKs' objects (SecretAccessKey, secretAccessKey).
      // A '/' may be written "\\/" (PHP's json_encode, JSON inside JSON).
      R("aws-secret-access-key", "(?:aws_?secret_?(?:access_?)?|secret_?access_?)key" ASSIGN "(?:[A-Za-z0-9/+]|\\\\/){40}",
       true),
      R("aws-session-token", "aws_?session_?token" ASSIGN "[A-Za-z0-9/+=]{40}", true, true, "A-Za-z0-9/+="),
      // A service account key file: its private_key_id next to the type.
      R("gcp-service-account-key-id", "\"private_key_id\"\\s{0,3}:\\s{0,3}\"" HEX "{40}\"", false, false),
      R("gcp-oauth-client-secret", "GOCSPX-" URLB64 "{28}"),
      R("google-api-key", "AIza" URLB64 "{35}"),
      R("google-oauth-access-token", "ya29\\." URLB64 "{30,}"),
      R("google-oauth-refresh-token", "1//0[A-Za-z0-9_-]{40,}", false, false),
      R("azure-storage-account-key", "AccountKey=[A-Za-z0-9+/]{86}==", false, false),
      // A shared access signature: the signed version and the signature.
      R("azure-sas-token", "[?&]sig=[A-Za-z0-9%+/]{40}", false, false, "A-Za-z0-9%+/="),
      // Entra ID (Azure AD) client secrets carry "Q~" after four characters.
      R("azure-ad-client-secret", "[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}"),
      // Azure DevOps PATs (2024 format): 84 characters with "AZDO" at 76-79.
      R("azure-devops-pat", "[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}"),
      R("alibaba-access-key-id", "LTAI[A-Za-z0-9]{12,20}"),
      R("tencent-secret-id", "AKID[A-Za-z0-9]{32}"),
      R("digitalocean-token", "do[opr]_v1_" HEX "{64}"),
      R("hashicorp-vault-token", "hv[sb]\\.[A-Za-z0-9_-]{90,}"),
      R("terraform-cloud-token", "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}"),
      R("pulumi-access-token", "pul-" HEX "{40}"),
      R("heroku-api-key", "HRKU-AA[A-Za-z0-9_-]{58}"),
      R("heroku-api-key-legacy",
       "heroku[a-z_ -]{0,20}(?:key|token)" ASSIGN "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", true),
      R("flyio-token", "FlyV1 fm[12]_[A-Za-z0-9+/=_-]{100,}", false, false),
      R("cloudflare-origin-ca-key", "v1\\.0-" HEX "{24}-" HEX "{146}"),
      R("databricks-token", "dapi" HEX "{32}(?:-[0-9])?"),
      R("supabase-access-token", "sbp_" HEX "{40}"),
      R("supabase-secret-key", "sb_secret_[A-Za-z0-9_-]{31,}"),
      R("planetscale-token", "pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{43}"),
      R("doppler-token", "dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{40,44}"),
      // --- Source hosting and package registries -------------------------
      // GitHub: a type prefix and 36 base62 characters, the last 6 a CRC-32
      // of the 30 before them (checked: token_checksum.h, as npm's and age's).
      R("github-pat-classic", "ghp_" B62 "{36}"),
      R("github-oauth-token", "gho_" B62 "{36}"),
      R("github-user-to-server-token", "ghu_" B62 "{36}"),
      R("github-server-to-server-token", "ghs_" B62 "{36}"),
      // A 36-character refresh token's checksum is checked; a longer one's is not documented.
      R("github-refresh-token", "ghr_" B62 "{36,76}"),
      R("github-pat-fine-grained", "github_pat_" B62 "{22}_" B62 "{59}"),
      R("gitlab-pat", "glpat-[A-Za-z0-9_-]{20,}(?:\\.[A-Za-z0-9]{2}\\.[a-z0-9]{9})?"),
      R("gitlab-pipeline-trigger-token", "glptt-" HEX "{40}"),
      R("gitlab-runner-token", "glrt-[A-Za-z0-9_-]{20,}"),
      R("gitlab-deploy-token", "gldt-[A-Za-z0-9_-]{20,}"),
      R("gitlab-feed-token", "glft-[A-Za-z0-9_-]{20,}"),
      R("gitlab-oauth-app-secret", "gloas-" HEX "{64}"),
      R("gitlab-cicd-job-token", "glcbt-[A-Za-z0-9_-]{20,}"),
      R("gitlab-agent-token", "glagent-[A-Za-z0-9_-]{50,}"),
      R("bitbucket-app-password", "ATBB[A-Za-z0-9_=.-]{32}"),
      R("atlassian-api-token", "ATATT3[A-Za-z0-9_=-]{180,}"),
      R("npm-access-token", "npm_" B62 "{36}"),
      R("pypi-upload-token", "pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}"),
      R("rubygems-api-key", "rubygems_" HEX "{48}"),
      R("nuget-api-key", "oy2[a-z0-9]{43}"),
      R("crates-io-token", "cio[A-Za-z0-9]{32}"),
      R("clojars-token", "CLOJARS_[a-z0-9]{60}"),
      R("dockerhub-pat", "dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}"),
      // --- Chat and webhooks ------------------------------------------------
      R("slack-bot-token", "xoxb-[0-9]{10,13}-[0-9]{10,13}-" B62 "{24}"),
      R("slack-user-token", "xoxp-[0-9]{10,13}-[0-9]{10,13}-[0-9]{10,13}-" HEX "{32}"),
      R("slack-app-token", "xapp-[0-9]-[A-Z0-9]{9,11}-[0-9]{10,13}-" HEX "{64}"),
      R("slack-config-token", "xoxe\\.xox[bp]-[0-9]-[A-Za-z0-9]{140,}"),
      R("slack-legacy-token", "xox[aors]-[0-9]{8,13}-[0-9A-Za-z-]{20,}"),
      R("slack-webhook-url",
       "hooks\\.slack\\.com\\\\?/(?:services|workflows|triggers)\\\\?/T[A-Z0-9]{8,10}\\\\?/[AB][A-Z0-9]{8,11}\\\\?/" B62 "{24}",
       false, false),
      // A bot token: the base64 of the bot's numeric id, a timestamp, an HMAC.
      R("discord-bot-token", "[MNO][A-Za-z0-9_-]{23,25}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,38}"),
      R("discord-webhook-url", "discord(?:app)?\\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,68}", false, false),
      R("telegram-bot-token", "[0-9]{8,10}:AA[A-Za-z0-9_-]{33}"),
      R("microsoft-teams-webhook-url",
       "\\.webhook\\.office\\.com/webhookb2/[0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/" HEX "{32}/[0-9a-f-]{36}", false,
       false),
      // --- Payments and SaaS ----------------------------------------------
      R("stripe-secret-key", "sk_(?:live|test)_" B62 "{24,99}"),
      R("stripe-restricted-key", "rk_(?:live|test)_" B62 "{24,99}"),
      R("stripe-webhook-secret", "whsec_" B62 "{32,}"),
      R("square-access-token", "(?:EAAA|sq0atp-)[A-Za-z0-9_-]{22,60}"),
      R("square-oauth-secret", "sq0csp-[A-Za-z0-9_-]{43}"),
      R("braintree-access-token", "access_token\\$production\\$[a-z0-9]{16}\\$" HEX "{32}", false, false),
      R("shopify-token", "shp(?:at|ca|pa|ss)_" "[a-fA-F0-9]{32}"),
      R("twilio-api-key", "SK" HEX "{32}"),
      R("twilio-auth-token", "twilio[a-z_ -]{0,20}(?:auth|secret)[a-z_ -]{0,10}(?:token)?" ASSIGN HEX "{32}", true),
      R("sendgrid-api-key", "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}"),
      R("mailgun-api-key", "key-" HEX "{32}"),
      R("mailchimp-api-key", HEX "{32}-us[0-9]{1,2}"),
      R("postman-api-key", "PMAK-" HEX "{24}-" HEX "{34}"),
      R("new-relic-user-key", "NRAK-[A-Z0-9]{27}"),
      R("sentry-auth-token", "sntry[su]_[A-Za-z0-9+/=_]{64,}"),
      R("grafana-service-account-token", "glsa_" B62 "{32}_" "[A-Fa-f0-9]{8}"),
      R("grafana-cloud-token", "glc_[A-Za-z0-9+/]{32,}={0,2}"),
      R("linear-api-key", "lin_api_" B62 "{40}"),
      R("notion-token", "(?:secret_" B62 "{43}|ntn_[0-9]{11}" B62 "{35})"),
      R("figma-pat", "figd_[A-Za-z0-9_-]{40}"),
      R("airtable-pat", "pat" B62 "{14}\\." HEX "{64}"),
      R("mapbox-secret-token", "sk\\.eyJ[A-Za-z0-9_-]{50,}\\.[A-Za-z0-9_-]{20,}"),
      R("dropbox-token", "sl\\.(?:u\\.)?[A-Za-z0-9_-]{130,}"),
      // --- AI vendors --------------------------------------------------------
      // OpenAI keys carry "T3BlbkFJ" (base64 of "OpenAI") in the middle.
      R("openai-api-key", "sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"),
      R("anthropic-api-key", "sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}"),
      R("huggingface-token", "hf_[A-Za-z]{34}"),
      R("huggingface-org-token", "api_org_[A-Za-z]{34}"),
      R("groq-api-key", "gsk_" B62 "{52}"),
      R("replicate-api-token", "r8_" B62 "{37}"),
      R("perplexity-api-key", "pplx-" B62 "{48}"),
      R("xai-api-key", "xai-" B62 "{80}"),
      R("langsmith-api-key", "lsv2_(?:pt|sk)_" HEX "{32}_" HEX "{10}"),
      // --- Keys, tokens and credentials in structured text -------------------
      // A PEM/OpenSSH/PGP private key block: the header and the body after it
      // (the body's alphabet covers the END line, so the whole block is
      // masked); or the header to its END line, whatever lies between (an
      // armor's header lines: "Comment: Alice <alice@example.com>").
      R("private-key-block",
       "-----BEGIN[A-Z ]{0,24} PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=:,.\\\\ \\t\\r\\n-]{32,}|"
       "[^\\x00]*?-----END[A-Z ]{0,24} PRIVATE KEY(?: BLOCK)?-----)", false, false),
      // A PuTTY key file: the header to the private lines and their MAC (the
      // secret is the base64 after "Private-Lines: N", lines below the header).
      R("putty-private-key",
       "PuTTY-User-Key-File-[23]: [a-z0-9-]{7,32}(?:[^\\x00]*?Private-Lines: ?[0-9]{1,4}[\\r\\n\\\\nr]{1,4}"
       "[A-Za-z0-9+/=\\r\\n\\\\]{16,}(?:Private-MAC: ?[0-9a-f]{40,64})?)?",
       false, false),
      // An SSH2 (RFC 4716, PuTTYgen's "Export ssh.com key") private key: the
      // header over its header lines ('Comment: "..."') and body, or to its END.
      R("ssh2-private-key",
       "---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----(?:[^\\x00]*?---- END SSH2 (?:ENCRYPTED )?PRIVATE KEY ----|"
       "[A-Za-z0-9+/=:,.\\\\ \\t\\r\\n\"-]{32,})", false, false),
      R("age-secret-key", "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
      // A signed JWT: base64url JSON header and payload, then a signature.
      R("jwt", "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{16,}"),
      // A database URL with a password in its userinfo.
      R("database-url-with-password",
       "(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|clickhouse|cockroachdb):\\\\?/\\\\?/"
       "[^\\s:@/\"'<>\\x00]{0,128}:[^\\s@/\"'<>\\x00]{3,256}@(?:[A-Za-z0-9.-]{1,253}|\\[[0-9A-Fa-f:.]{2,45}\\])",
       true, false),
      // A URL of any scheme (web, FTP, git, a proxy) with a password of 8 or
      // more characters in its userinfo (pip's index-url, a git remote,
      // HTTPS_PROXY); no ':' in it (cvs's ":pserver:anoncvs@"); the manuals'
      // placeholders (user:password@, p4ssw0rd, Passwort, "changeme",
      // "xxxxxxxx") are no finding (token_checksum.h, kPlaceholderPassword).
      R("url-with-password",
       // From the "://" (a scheme alternation is too large for Vectorscan
       // with the repeats after it), written as two literals ("://" and
       // JSON's ":\/\/"), the repeats short: a literal Vectorscan can find
       // and little state after it keep the scan at the library's rate
       // (0.61 GB/s with ":\\?/\\?/" and {0,64}/{8,128}, 1.4 with these);
       // the host is taken by the tail.
       "(?:://|:\\\\/\\\\/)[^\\s:@/\"'<>\\x00]{0,32}:[^\\s:@/\"'<>{}$*\\x00]{8,64}@[A-Za-z0-9\\[]",
       true, false, "A-Za-z0-9.:[]-"),
      // ADO.NET / ODBC connection strings: a server and a password.
      R("connection-string-password", ";\\s?(?:password|pwd)=[^;\"'\\s\\x00]{4}", true, false, "^;\"' \t\r\n"),
      R("kubeconfig-client-key", "client-key-data:\\s{0,3}[A-Za-z0-9+/=]{100,}", false, false),
      // A password of 8 or more characters: shorter ones are the manuals'
      // examples ("login apt password debian" in apt_auth.conf(5)).
      R("netrc-password", "machine\\s{1,4}" NONSPACE "{1,100}\\s{1,4}login\\s{1,4}" NONSPACE "{1,64}\\s{1,4}password\\s{1,4}" NONSPACE "{8}", false, false,
       "^ \t\r\n"),
      // An .npmrc's credentials for any registry ("//host/:_authToken=",
      // "_auth=" base64 user:password, "_password="): npm_ tokens have a rule
      // of their own; a "${NPM_TOKEN}" placeholder is none.
      R("npmrc-auth", "_(?:authToken|auth|password)\\s{0,3}=\\s{0,3}[\"']?[A-Za-z0-9._~+/=-]{12}", false, true,
       "A-Za-z0-9._~+/=-"),
      // "Authorization: Basic ...", and as clients log headers: util.inspect's
      // Authorization: 'Bearer ...', a JSON dump's "Authorization":"Bearer ...".
      R("http-basic-auth", "authorization" ASSIGN "basic\\s{1,3}[A-Za-z0-9+/]{16,}={0,2}", true, false),
      R("http-bearer-token", "authorization" ASSIGN "bearer\\s{1,3}[A-Za-z0-9._~+/-]{24,}=*", true, false),  };

#undef B62
#undef URLB64
#undef HEX
#undef ASSIGN
#undef QUOTE
#undef NONSPACE

}  // namespace

const std::vector<SecretRule>& BuiltinSecretRules() {
  static const std::vector<SecretRule> rules = [] {
    std::vector<SecretRule> v;
    v.reserve(std::size(kRules));
    for (const Row& r : kRules) v.push_back(SecretRule{r.name, r.regex, r.caseless, r.bounded, r.tail});
    return v;
  }();
  return rules;
}

}  // namespace mcpcell
