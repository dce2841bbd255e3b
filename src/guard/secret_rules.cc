#include "guard/secret_rules.h"

namespace mcpcell {
namespace {

// Shorthands for the alphabets the vendors document.
#define B62 "[A-Za-z0-9]"
#define URLB64 "[A-Za-z0-9_-]"
#define HEX "[a-f0-9]"
// A keyword, then up to a few quotes, spaces, '=', ':' or '=>' before the value.
#define ASSIGN "[\"']?\\s{0,3}(?:=|:|=>|:=)\\s{0,3}[\"']?"

std::vector<SecretRule> Make() {
  // Rule names are stable identifiers: the audit log and user profiles
  // ("disable": [...]) refer to them.
  return {
      // --- Cloud providers -------------------------------------------------
      // AWS access key ids: a 4-letter type prefix, then 16 base32 characters.
      {"aws-access-key-id", "(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AGPA|ANPA|ANVA|APKA)[A-Z2-7]{16}"},
      // The 40-character secret has no prefix: only next to its keyword.
      {"aws-secret-access-key", "aws_?secret_?(?:access_?)?key" ASSIGN "[A-Za-z0-9/+]{40}", true},
      {"aws-session-token", "aws_?session_?token" ASSIGN "[A-Za-z0-9/+=]{40}", true, true, "A-Za-z0-9/+="},
      // A service account key file: its private_key_id next to the type.
      {"gcp-service-account-key-id", "\"private_key_id\"\\s{0,3}:\\s{0,3}\"" HEX "{40}\"", false, false},
      {"gcp-oauth-client-secret", "GOCSPX-" URLB64 "{28}"},
      {"google-api-key", "AIza" URLB64 "{35}"},
      {"google-oauth-access-token", "ya29\\." URLB64 "{30,}"},
      {"google-oauth-refresh-token", "1//0[A-Za-z0-9_-]{40,}", false, false},
      {"azure-storage-account-key", "AccountKey=[A-Za-z0-9+/]{86}==", false, false},
      // A shared access signature: the signed version and the signature.
      {"azure-sas-token", "[?&]sig=[A-Za-z0-9%+/]{40}", false, false, "A-Za-z0-9%+/="},
      // Entra ID (Azure AD) client secrets carry "Q~" after four characters.
      {"azure-ad-client-secret", "[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}"},
      // Azure DevOps PATs (2024 format): 84 characters with "AZDO" at 76-79.
      {"azure-devops-pat", "[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}"},
      {"alibaba-access-key-id", "LTAI[A-Za-z0-9]{12,20}"},
      {"tencent-secret-id", "AKID[A-Za-z0-9]{32}"},
      {"digitalocean-token", "do[opr]_v1_" HEX "{64}"},
      {"hashicorp-vault-token", "hv[sb]\\.[A-Za-z0-9_-]{90,}"},
      {"terraform-cloud-token", "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}"},
      {"pulumi-access-token", "pul-" HEX "{40}"},
      {"heroku-api-key", "HRKU-AA[A-Za-z0-9_-]{58}"},
      {"heroku-api-key-legacy",
       "heroku[a-z_ -]{0,20}(?:key|token)" ASSIGN "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", true},
      {"flyio-token", "FlyV1 fm[12]_[A-Za-z0-9+/=_-]{100,}", false, false},
      {"cloudflare-origin-ca-key", "v1\\.0-" HEX "{24}-" HEX "{146}"},
      {"databricks-token", "dapi" HEX "{32}(?:-[0-9])?"},
      {"supabase-access-token", "sbp_" HEX "{40}"},
      {"supabase-secret-key", "sb_secret_[A-Za-z0-9_-]{31,}"},
      {"planetscale-token", "pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{43}"},
      {"doppler-token", "dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{40,44}"},

      // --- Source hosting and package registries -------------------------
      // GitHub: a type prefix and 36 base62 characters (the last 6 a CRC32).
      {"github-pat-classic", "ghp_" B62 "{36}"},
      {"github-oauth-token", "gho_" B62 "{36}"},
      {"github-user-to-server-token", "ghu_" B62 "{36}"},
      {"github-server-to-server-token", "ghs_" B62 "{36}"},
      {"github-refresh-token", "ghr_" B62 "{36,76}"},
      {"github-pat-fine-grained", "github_pat_" B62 "{22}_" B62 "{59}"},
      {"gitlab-pat", "glpat-[A-Za-z0-9_-]{20,}(?:\\.[A-Za-z0-9]{2}\\.[a-z0-9]{9})?"},
      {"gitlab-pipeline-trigger-token", "glptt-" HEX "{40}"},
      {"gitlab-runner-token", "glrt-[A-Za-z0-9_-]{20,}"},
      {"gitlab-deploy-token", "gldt-[A-Za-z0-9_-]{20,}"},
      {"gitlab-feed-token", "glft-[A-Za-z0-9_-]{20,}"},
      {"gitlab-oauth-app-secret", "gloas-" HEX "{64}"},
      {"gitlab-cicd-job-token", "glcbt-[A-Za-z0-9_-]{20,}"},
      {"gitlab-agent-token", "glagent-[A-Za-z0-9_-]{50,}"},
      {"bitbucket-app-password", "ATBB[A-Za-z0-9_=.-]{32}"},
      {"atlassian-api-token", "ATATT3[A-Za-z0-9_=-]{180,}"},
      {"npm-access-token", "npm_" B62 "{36}"},
      {"pypi-upload-token", "pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}"},
      {"rubygems-api-key", "rubygems_" HEX "{48}"},
      {"nuget-api-key", "oy2[a-z0-9]{43}"},
      {"crates-io-token", "cio[A-Za-z0-9]{32}"},
      {"clojars-token", "CLOJARS_[a-z0-9]{60}"},
      {"dockerhub-pat", "dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}"},

      // --- Chat and webhooks ------------------------------------------------
      {"slack-bot-token", "xoxb-[0-9]{10,13}-[0-9]{10,13}-" B62 "{24}"},
      {"slack-user-token", "xoxp-[0-9]{10,13}-[0-9]{10,13}-[0-9]{10,13}-" HEX "{32}"},
      {"slack-app-token", "xapp-[0-9]-[A-Z0-9]{9,11}-[0-9]{10,13}-" HEX "{64}"},
      {"slack-config-token", "xoxe\\.xox[bp]-[0-9]-[A-Za-z0-9]{140,}"},
      {"slack-legacy-token", "xox[aors]-[0-9]{8,13}-[0-9A-Za-z-]{20,}"},
      {"slack-webhook-url", "hooks\\.slack\\.com/(?:services|workflows|triggers)/T[A-Z0-9]{8,10}/[AB][A-Z0-9]{8,11}/" B62 "{24}",
       false, false},
      // A bot token: the base64 of the bot's numeric id, a timestamp, an HMAC.
      {"discord-bot-token", "[MNO][A-Za-z0-9_-]{23,25}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,38}"},
      {"discord-webhook-url", "discord(?:app)?\\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,68}", false, false},
      {"telegram-bot-token", "[0-9]{8,10}:AA[A-Za-z0-9_-]{33}"},
      {"microsoft-teams-webhook-url",
       "\\.webhook\\.office\\.com/webhookb2/[0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/" HEX "{32}/[0-9a-f-]{36}", false,
       false},

      // --- Payments and SaaS ----------------------------------------------
      {"stripe-secret-key", "sk_(?:live|test)_" B62 "{24,99}"},
      {"stripe-restricted-key", "rk_(?:live|test)_" B62 "{24,99}"},
      {"stripe-webhook-secret", "whsec_" B62 "{32,}"},
      {"square-access-token", "(?:EAAA|sq0atp-)[A-Za-z0-9_-]{22,60}"},
      {"square-oauth-secret", "sq0csp-[A-Za-z0-9_-]{43}"},
      {"braintree-access-token", "access_token\\$production\\$[a-z0-9]{16}\\$" HEX "{32}", false, false},
      {"shopify-token", "shp(?:at|ca|pa|ss)_" "[a-fA-F0-9]{32}"},
      {"twilio-api-key", "SK" HEX "{32}"},
      {"twilio-auth-token", "twilio[a-z_ -]{0,20}(?:auth|secret)[a-z_ -]{0,10}(?:token)?" ASSIGN HEX "{32}", true},
      {"sendgrid-api-key", "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}"},
      {"mailgun-api-key", "key-" HEX "{32}"},
      {"mailchimp-api-key", HEX "{32}-us[0-9]{1,2}"},
      {"postman-api-key", "PMAK-" HEX "{24}-" HEX "{34}"},
      {"new-relic-user-key", "NRAK-[A-Z0-9]{27}"},
      {"sentry-auth-token", "sntry[su]_[A-Za-z0-9+/=_]{64,}"},
      {"grafana-service-account-token", "glsa_" B62 "{32}_" "[A-Fa-f0-9]{8}"},
      {"grafana-cloud-token", "glc_[A-Za-z0-9+/]{32,}={0,2}"},
      {"linear-api-key", "lin_api_" B62 "{40}"},
      {"notion-token", "(?:secret_" B62 "{43}|ntn_[0-9]{11}" B62 "{35})"},
      {"figma-pat", "figd_[A-Za-z0-9_-]{40}"},
      {"airtable-pat", "pat" B62 "{14}\\." HEX "{64}"},
      {"mapbox-secret-token", "sk\\.eyJ[A-Za-z0-9_-]{50,}\\.[A-Za-z0-9_-]{20,}"},
      {"dropbox-token", "sl\\.(?:u\\.)?[A-Za-z0-9_-]{130,}"},

      // --- AI vendors --------------------------------------------------------
      // OpenAI keys carry "T3BlbkFJ" (base64 of "OpenAI") in the middle.
      {"openai-api-key", "sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"},
      {"anthropic-api-key", "sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}"},
      {"huggingface-token", "hf_[A-Za-z]{34}"},
      {"huggingface-org-token", "api_org_[A-Za-z]{34}"},
      {"groq-api-key", "gsk_" B62 "{52}"},
      {"replicate-api-token", "r8_" B62 "{37}"},
      {"perplexity-api-key", "pplx-" B62 "{48}"},
      {"xai-api-key", "xai-" B62 "{80}"},
      {"langsmith-api-key", "lsv2_(?:pt|sk)_" HEX "{32}_" HEX "{10}"},

      // --- Keys, tokens and credentials in structured text -------------------
      // A PEM/OpenSSH/PGP private key block: the header and the body after it
      // (the body's alphabet covers the END line, so the whole block is masked).
      {"private-key-block",
       "-----BEGIN[A-Z ]{0,24} PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+/=:,.\\\\ \\t\\r\\n-]{32,}", false, false},
      {"putty-private-key", "PuTTY-User-Key-File-[23]: [a-z0-9-]{7,32}", false, false},
      {"age-secret-key", "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"},
      // A signed JWT: base64url JSON header and payload, then a signature.
      {"jwt", "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{16,}"},
      // A database URL with a password in its userinfo.
      {"database-url-with-password",
       "(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|clickhouse|cockroachdb)://"
       "[^\\s:@/\"'<>]{1,128}:[^\\s@/\"'<>]{3,256}@[A-Za-z0-9.-]{1,253}",
       true, false},
      // ADO.NET / ODBC connection strings: a server and a password.
      {"connection-string-password", ";\\s?(?:password|pwd)=[^;\"'\\s]{4}", true, false, "^;\"' \t\r\n"},
      {"kubeconfig-client-key", "client-key-data:\\s{0,3}[A-Za-z0-9+/=]{100,}", false, false},
      // A password of 8 or more characters: shorter ones are the manuals'
      // examples ("login apt password debian" in apt_auth.conf(5)).
      {"netrc-password", "machine\\s{1,4}\\S{1,100}\\s{1,4}login\\s{1,4}\\S{1,64}\\s{1,4}password\\s{1,4}\\S{8}", false, false,
       "^ \t\r\n"},
      {"http-basic-auth", "authorization:\\s{0,3}basic\\s{1,3}[A-Za-z0-9+/]{16,}={0,2}", true, false},
      {"http-bearer-token", "authorization:\\s{0,3}bearer\\s{1,3}[A-Za-z0-9._~+/-]{24,}=*", true, false},
  };
}

#undef B62
#undef URLB64
#undef HEX
#undef ASSIGN

}  // namespace

const std::vector<SecretRule>& BuiltinSecretRules() {
  static const std::vector<SecretRule> rules = Make();
  return rules;
}

}  // namespace mcpcell
