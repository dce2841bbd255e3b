#pragma once
// Token templates for the secret rules' tests and the synthetic corpus: one
// positive per rule (random characters of the documented alphabet) and one
// near miss (a wrong prefix, one character short, a wrong alphabet) that the
// rule must not report. "{N:cls}" is N random characters of class cls,
// "{N-M:cls}" between N and M. Classes: an (A-Za-z0-9), A, a, d, h (a-f0-9),
// H (A-F0-9), l (A-Za-z), b64 (A-Za-z0-9+/), u (A-Za-z0-9_-), 32 (A-Z2-7),
// z (a-z0-9). Checksums, computed here from the vendors' documents (not with
// the scanner's code): {6:crc} the base62 CRC-32 of the 30 characters before
// it (GitHub, npm), {6:bech32} the Bech32 checksum of an age key.

#include <cctype>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace mcpcell::test {

struct SecretSample {
  const char* rule;
  const char* positive;
  const char* near_miss;
};

inline const std::vector<SecretSample>& SecretSamples() {
  static const std::vector<SecretSample> s = {
      {"aws-access-key-id", "AKIA{16:32}", "AKIA{15:32}"},
      {"aws-secret-access-key", "aws_secret_access_key = {40:b64}", "aws_secret_access_key = {39:b64}"},
      {"aws-session-token", "AWS_SESSION_TOKEN={120:b64}", "AWS_SESSION_TOKEN={30:b64}"},
      {"gcp-service-account-key-id", "\"private_key_id\": \"{40:h}\"", "\"private_key_id\": \"{39:h}\""},
      {"gcp-oauth-client-secret", "GOCSPX-{28:u}", "GOCSPX-{27:u}"},
      {"google-api-key", "AIza{35:u}", "AIza{34:u}"},
      {"google-oauth-access-token", "ya29.{60:u}", "ya29.{20:u}"},
      {"google-oauth-refresh-token", "1//0{60:u}", "1//0{30:u}"},
      {"azure-storage-account-key", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey={86:b64}==",
       "AccountKey={80:b64}=="},
      {"azure-sas-token", "https://a.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=r&sig={43:an}%3D",
       "https://a.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=r&sig={30:an}"},
      {"azure-ad-client-secret", "{3:an}{1:d}Q~{34:an}", "{3:an}{1:d}Q~{20:an}"},
      {"azure-devops-pat", "{76:an}AZDO{4:an}", "{76:an}AZDX{4:an}"},
      {"alibaba-access-key-id", "LTAI{20:an}", "LTAI{8:an}"},
      {"tencent-secret-id", "AKID{32:an}", "AKID{31:an}"},
      {"digitalocean-token", "dop_v1_{64:h}", "dop_v2_{64:h}"},
      {"hashicorp-vault-token", "hvs.{95:u}", "hvs.{40:u}"},
      {"terraform-cloud-token", "{14:an}.atlasv1.{67:u}", "{14:an}.atlasv2.{67:u}"},
      {"pulumi-access-token", "pul-{40:h}", "pul-{39:h}"},
      {"heroku-api-key", "HRKU-AA{58:u}", "HRKU-AB{58:u}"},
      {"heroku-api-key-legacy", "HEROKU_API_KEY={8:h}-{4:h}-{4:h}-{4:h}-{12:h}", "HEROKU_APP_ID={8:h}-{4:h}-{4:h}-{4:h}-{12:h}"},
      {"flyio-token", "FlyV1 fm2_{120:b64}", "FlyV1 fm3_{120:b64}"},
      {"cloudflare-origin-ca-key", "v1.0-{24:h}-{146:h}", "v1.0-{24:h}-{100:h}"},
      {"databricks-token", "dapi{32:h}", "dapi{31:h}"},
      {"supabase-access-token", "sbp_{40:h}", "sbp_{39:h}"},
      {"supabase-secret-key", "sb_secret_{40:u}", "sb_secret_{20:u}"},
      {"planetscale-token", "pscale_tkn_{43:u}", "pscale_xyz_{43:u}"},
      {"doppler-token", "dp.pt.{43:an}", "dp.zz.{43:an}"},
      {"github-pat-classic", "ghp_{30:an}{6:crc}", "ghp_{35:an}"},
      {"github-oauth-token", "gho_{30:an}{6:crc}", "gho_{35:an}"},
      {"github-user-to-server-token", "ghu_{30:an}{6:crc}", "ghu_{35:an}"},
      {"github-server-to-server-token", "ghs_{30:an}{6:crc}", "ghs_{35:an}"},
      {"github-refresh-token", "ghr_{76:an}", "ghr_{30:an}"},
      {"github-pat-fine-grained", "github_pat_{22:an}_{59:an}", "github_pat_{22:an}_{50:an}"},
      {"gitlab-pat", "glpat-{20:u}", "glpat-{19:u}"},
      {"gitlab-pipeline-trigger-token", "glptt-{40:h}", "glptt-{39:h}"},
      {"gitlab-runner-token", "glrt-{20:u}", "glrt-{12:u}"},
      {"gitlab-deploy-token", "gldt-{20:u}", "gldt-{12:u}"},
      {"gitlab-feed-token", "glft-{20:u}", "glft-{12:u}"},
      {"gitlab-oauth-app-secret", "gloas-{64:h}", "gloas-{63:h}"},
      {"gitlab-cicd-job-token", "glcbt-{30:u}", "glcbt-{10:u}"},
      {"gitlab-agent-token", "glagent-{50:u}", "glagent-{40:u}"},
      {"bitbucket-app-password", "ATBB{32:an}", "ATBB{31:an}"},
      {"atlassian-api-token", "ATATT3{186:u}", "ATATT3{100:u}"},
      {"npm-access-token", "npm_{30:an}{6:crc}", "npm_{35:an}"},
      {"pypi-upload-token", "pypi-AgEIcHlwaS5vcmc{80:u}", "pypi-AgEIcHlwaS5jb20{80:u}"},
      {"rubygems-api-key", "rubygems_{48:h}", "rubygems_{47:h}"},
      {"nuget-api-key", "oy2{43:z}", "oy2{42:z}"},
      {"crates-io-token", "cio{32:an}", "cio{31:an}"},
      {"clojars-token", "CLOJARS_{60:z}", "CLOJARS_{59:z}"},
      {"dockerhub-pat", "dckr_pat_{27:u}", "dckr_pat_{26:u}"},
      {"slack-bot-token", "xoxb-{12:d}-{13:d}-{24:an}", "xoxb-{12:d}-{13:d}-{23:an}"},
      {"slack-user-token", "xoxp-{12:d}-{12:d}-{13:d}-{32:h}", "xoxp-{12:d}-{12:d}-{13:d}-{31:h}"},
      {"slack-app-token", "xapp-1-A{10:H}-{13:d}-{64:h}", "xapp-1-A{10:H}-{13:d}-{60:h}"},
      {"slack-config-token", "xoxe.xoxp-1-{150:an}", "xoxe.xoxp-1-{100:an}"},
      {"slack-legacy-token", "xoxs-{10:d}-{30:an}", "xoxz-{10:d}-{30:an}"},
      {"slack-webhook-url", "https://hooks.slack.com/services/T{9:H}/B{9:H}/{24:an}",
       "https://hooks.slack.com/services/T{9:H}/B{9:H}/{23:an}"},
      {"discord-bot-token", "MT{24:u}.{6:u}.{38:u}", "MT{24:u}.{6:u}.{20:u}"},
      {"discord-webhook-url", "https://discord.com/api/webhooks/{18:d}/{68:u}",
       "https://discord.com/api/webhooks/{18:d}/{40:u}"},
      {"telegram-bot-token", "{10:d}:AA{33:u}", "{10:d}:AB{33:u}"},
      {"microsoft-teams-webhook-url",
       "https://x.webhook.office.com/webhookb2/{8:h}-{4:h}-{4:h}-{4:h}-{12:h}@{8:h}-{4:h}-{4:h}-{4:h}-{12:h}/"
       "IncomingWebhook/{32:h}/{8:h}-{4:h}-{4:h}-{4:h}-{12:h}",
       "https://x.webhook.office.com/webhookb2/{8:h}-{4:h}-{4:h}-{4:h}-{12:h}@{8:h}-{4:h}-{4:h}-{4:h}-{12:h}/"
       "OutgoingWebhook/{32:h}/{8:h}-{4:h}-{4:h}-{4:h}-{12:h}"},
      {"stripe-secret-key", "sk_live_{24:an}", "sk_live_{23:an}"},
      {"stripe-restricted-key", "rk_live_{24:an}", "rk_live_{23:an}"},
      {"stripe-webhook-secret", "whsec_{32:an}", "whsec_{31:an}"},
      {"square-access-token", "EAAA{60:u}", "EAAB{60:u}"},
      {"square-oauth-secret", "sq0csp-{43:u}", "sq0csp-{30:u}"},
      {"braintree-access-token", "access_token$production${16:z}${32:h}", "access_token$sandbox${16:z}${32:h}"},
      {"shopify-token", "shpat_{32:h}", "shpat_{31:h}"},
      {"twilio-api-key", "SK{32:h}", "SK{31:h}"},
      {"twilio-auth-token", "TWILIO_AUTH_TOKEN={32:h}", "TWILIO_ACCOUNT_SID={32:h}"},
      {"sendgrid-api-key", "SG.{22:u}.{43:u}", "SG.{22:u}.{40:u}"},
      {"mailgun-api-key", "key-{32:h}", "key-{31:h}"},
      {"mailchimp-api-key", "{32:h}-us{2:d}", "{32:h}-eu{2:d}"},
      {"postman-api-key", "PMAK-{24:h}-{34:h}", "PMAK-{24:h}-{33:h}"},
      {"new-relic-user-key", "NRAK-{27:H}", "NRAK-{26:H}"},
      {"sentry-auth-token", "sntrys_{100:b64}", "sntrys_{40:b64}"},
      {"grafana-service-account-token", "glsa_{32:an}_{8:h}", "glsa_{32:an}_{7:h}"},
      {"grafana-cloud-token", "glc_{40:b64}", "glc_{20:b64}"},
      {"linear-api-key", "lin_api_{40:an}", "lin_api_{39:an}"},
      {"notion-token", "ntn_{11:d}{35:an}", "ntn_{11:d}{30:an}"},
      {"figma-pat", "figd_{40:u}", "figd_{39:u}"},
      {"airtable-pat", "pat{14:an}.{64:h}", "pat{14:an}.{63:h}"},
      {"mapbox-secret-token", "sk.eyJ{60:u}.{22:u}", "pk.eyJ{60:u}.{22:u}"},
      {"dropbox-token", "sl.u.{140:u}", "sl.u.{100:u}"},
      {"openai-api-key", "sk-proj-{74:u}T3BlbkFJ{74:u}", "sk-proj-{74:u}T3BlbkFX{74:u}"},
      {"anthropic-api-key", "sk-ant-api03-{93:u}AA", "sk-ant-apx03-{93:u}AA"},
      {"huggingface-token", "hf_{34:l}", "hf_{33:l}"},
      {"huggingface-org-token", "api_org_{34:l}", "api_org_{33:l}"},
      {"groq-api-key", "gsk_{52:an}", "gsk_{51:an}"},
      {"replicate-api-token", "r8_{37:an}", "r8_{36:an}"},
      {"perplexity-api-key", "pplx-{48:an}", "pplx-{47:an}"},
      {"xai-api-key", "xai-{80:an}", "xai-{79:an}"},
      {"langsmith-api-key", "lsv2_pt_{32:h}_{10:h}", "lsv2_pt_{32:h}_{9:h}"},
      {"private-key-block", "-----BEGIN RSA PRIVATE KEY-----\n{64:b64}\n{64:b64}\n-----END RSA PRIVATE KEY-----",
       "-----BEGIN RSA PUBLIC KEY-----\n{64:b64}\n{64:b64}\n-----END RSA PUBLIC KEY-----"},
      {"putty-private-key", "PuTTY-User-Key-File-3: ssh-ed25519", "PuTTY-User-Key-File-9: ssh-ed25519"},
      {"ssh2-private-key", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20240101\"\n{64:b64}\n{64:b64}",
       "---- BEGIN SSH2 PUBLIC KEY ----\nComment: \"rsa-key-20240101\"\n{64:b64}\n{64:b64}"},
      {"age-secret-key", "AGE-SECRET-KEY-1{52:age}{6:bech32}", "AGE-SECRET-KEY-1{57:age}"},
      {"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJ{40:u}.{43:u}", "eyJhbGciOiJIUzI1NiJ9.eyJ{40:u}.{10:u}"},
      {"database-url-with-password", "postgres://app:{16:an}@db.internal:5432/app", "postgres://app@db.internal:5432/app"},
      {"connection-string-password", "Server=tcp:db.example.net,1433;Database=app;User ID=app;Password={16:an};",
       "Server=tcp:db.example.net,1433;Database=app;User ID=app;Integrated Security=true;"},
      {"kubeconfig-client-key", "client-key-data: {200:b64}", "client-certificate: {200:b64}"},
      {"npmrc-auth", "_authToken={36:an}", "_authToken={8:an}"},
      {"url-with-password", "https://deploy:{16:an}@pypi.corp.example/simple/", "https://deploy:password@pypi.corp.example/simple/"},
      {"netrc-password", "machine api.example.com login bob password {16:an}", "machine api.example.com login bob"},
      {"http-basic-auth", "Authorization: Basic {24:b64}", "Authorization: Basic {8:b64}"},
      {"http-bearer-token", "Authorization: Bearer {40:u}", "Authorization: Bearer {10:u}"},
  };
  return s;
}

/// CRC-32 (IEEE 802.3, bit by bit as in the standard) of `data`, as 6 base62
/// digits (0-9A-Za-z, most significant first, '0'-padded): GitHub's token
/// checksum (github.blog 2021-04-05) and npm's (2021-09-23).
inline std::string Base62Crc32Of(std::string_view data) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xFFFFFFFFu;
  const std::string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out(6, '0');
  for (int i = 5; i >= 0; --i, crc /= 62) out[static_cast<std::size_t>(i)] = digits[crc % 62];
  return out;
}

/// The 6 checksum characters (upper case) of Bech32 (BIP-173) for the human
/// readable part `hrp` and the data characters `data`.
inline std::string Bech32ChecksumOf(std::string hrp, std::string_view data) {
  const std::string charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
  auto polymod = [](const std::vector<unsigned>& values) {
    const std::uint32_t gen[5] = {0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3};
    std::uint32_t chk = 1;
    for (unsigned v : values) {
      std::uint32_t top = chk >> 25;
      chk = ((chk & 0x1ffffff) << 5) ^ v;
      for (int i = 0; i < 5; ++i) chk ^= ((top >> i) & 1) ? gen[i] : 0;
    }
    return chk;
  };
  for (char& c : hrp) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<unsigned> values;
  for (unsigned char c : hrp) values.push_back(c >> 5);
  values.push_back(0);
  for (unsigned char c : hrp) values.push_back(c & 31);
  for (char c : data) values.push_back(static_cast<unsigned>(charset.find(static_cast<char>(std::tolower(c)))));
  for (int i = 0; i < 6; ++i) values.push_back(0);
  std::uint32_t mod = polymod(values) ^ 1;
  std::string out;
  for (int i = 0; i < 6; ++i) out += static_cast<char>(std::toupper(charset[(mod >> (5 * (5 - i))) & 31]));
  return out;
}

/// `tmpl` with every {N:cls} / {N-M:cls} filled with random characters.
inline std::string Expand(std::string_view tmpl, std::mt19937_64& rng) {
  auto alphabet = [](std::string_view cls) -> std::string {
    const std::string up = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", lo = "abcdefghijklmnopqrstuvwxyz", d = "0123456789";
    if (cls == "an") return up + lo + d;
    if (cls == "A") return up;
    if (cls == "a") return lo;
    if (cls == "d") return d;
    if (cls == "h") return d + "abcdef";
    if (cls == "H") return d + "ABCDEF";
    if (cls == "l") return up + lo;
    if (cls == "b64") return up + lo + d + "+/";
    if (cls == "u") return up + lo + d + "_-";
    if (cls == "32") return up + "234567";
    if (cls == "z") return lo + d;
    if (cls == "age") return "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
    return "?";
  };
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '{') {
      out += tmpl[i];
      continue;
    }
    std::size_t close = tmpl.find('}', i), colon = tmpl.find(':', i);
    std::string_view cls = tmpl.substr(colon + 1, close - colon - 1);
    if (cls == "crc") {
      out += Base62Crc32Of(std::string_view(out).substr(out.size() - 30));
      i = close;
      continue;
    }
    if (cls == "bech32") {
      std::size_t sep = out.rfind('1'), start = out.find_last_of(" \t\n:=\"", sep);
      start = start == std::string::npos ? 0 : start + 1;
      out += Bech32ChecksumOf(out.substr(start, sep - start), std::string_view(out).substr(sep + 1));
      i = close;
      continue;
    }
    std::string count(tmpl.substr(i + 1, colon - i - 1));
    std::string chars = alphabet(tmpl.substr(colon + 1, close - colon - 1));
    std::size_t lo = std::stoul(count), hi = lo;
    if (auto dash = count.find('-'); dash != std::string::npos) hi = std::stoul(count.substr(dash + 1));
    std::size_t n = lo + (hi > lo ? rng() % (hi - lo + 1) : 0);
    for (std::size_t k = 0; k < n; ++k) out += chars[rng() % chars.size()];
    i = close;
  }
  return out;
}

}  // namespace mcpcell::test
