"""One realistic log line per kind of secret in buildlog/knowledge/secrets.toml, for seeding logs.

SAMPLES: (kind id, a log line holding a secret of that kind), one per kind, in the file's order.
SECRET_MARKERS: the raw secret strings of SAMPLES (and of KEY_BLOCK); none of them may appear in
anything buildlog writes. SAMPLE_SECRET: kind id -> its raw secret.
KEY_BLOCK: a private key block over several lines, as `cat id_ed25519` prints it; its body lines
are in SECRET_MARKERS too.

Every value is made up (random characters in the provider's published format).
"""

from __future__ import annotations

_KEY_BODY = "i+skmStJuzuVELKtSmj8tadOyxGHYx+MaygvZgc7vgj44wsyJuWwpSOB5OvMk2Es"

# (kind, line, the raw secret in the line)
_SEEDED: list[tuple[str, str, str]] = [
    (
        "url-password",
        "  Looking in indexes: https://pypi.org/simple, https://ci-bot:huG8GP38g4o5MN@pypi.corp.example.com/simple",
        "huG8GP38g4o5MN",
    ),
    (
        "url-token",
        "$ pip install --no-build-isolation --extra-index-url https://JAYKJ1UXXFWXLCpaNfhs0gCa05RFRunz@wheels.example.com/simple flash-attn",
        "JAYKJ1UXXFWXLCpaNfhs0gCa05RFRunz",
    ),
    (
        "authorization-header",
        '+ curl -fsSL -H "Authorization: Bearer GSTWjRlLK6sNdVU72lZ_o2.-YH19dCqgn28s9Dp6" https://artifacts.example.com/cuda/12.8/cudnn.tar.xz',
        "GSTWjRlLK6sNdVU72lZ_o2.-YH19dCqgn28s9Dp6",
    ),
    (
        "api-key-header",
        "+ curl -sS -H 'X-Api-Key: f8c9fcd698014efb68fefd19ae3e8e5d' https://builds.example.com/api/v1/cache/flash-attn",
        "f8c9fcd698014efb68fefd19ae3e8e5d",
    ),
    (
        "cli-user-password",
        "+ curl -u deploy:1UE8ePr5Fxgm -O https://nexus.example.com/repository/wheels/apex-0.1-cp311-linux_x86_64.whl",
        "1UE8ePr5Fxgm",
    ),
    (
        "cli-password-flag",
        "+ docker login --username ci-bot --password V2AjC6afaCLI71fN registry.example.com",
        "V2AjC6afaCLI71fN",
    ),
    (
        "login-password-flag",
        "+ docker login nvcr.io -u '$oauthtoken' -p YmphNcWI9rQWOwjauQLK",
        "YmphNcWI9rQWOwjauQLK",
    ),
    (
        "cli-token-flag",
        "+ huggingface-cli login --token X783FSU8iIoELi9M4SGsfAQk7iYY6LtGAy --add-to-git-credential",
        "X783FSU8iIoELi9M4SGsfAQk7iYY6LtGAy",
    ),
    (
        "password-assignment",
        "  UV_INDEX_PRIVATE_PASSWORD=ZjHZmya9gy4ed1w",
        "ZjHZmya9gy4ed1w",
    ),
    (
        "pwd-assignment",
        "Driver={ODBC Driver 18 for SQL Server};Server=tcp:runs.example.com,1433;Uid=ml;Pwd=Pw7X8bbGEuRtC;Encrypt=yes;",
        "Pw7X8bbGEuRtC",
    ),
    (
        "netrc-password",
        "+ cat ~/.netrc: machine pypi.corp.example.com login ci-bot password u6hF8DKNZkjLHnBNvD",
        "u6hF8DKNZkjLHnBNvD",
    ),
    (
        "private-key",
        f'  "private_key": "-----BEGIN PRIVATE KEY-----\\n{_KEY_BODY}\\n-----END PRIVATE KEY-----\\n",',
        _KEY_BODY,
    ),
    (
        "github-pat",
        "+ export GITHUB_TOKEN=ghp_cPI71dC3WPmETR4biPHnY4H59ikQ2lyrBIA3",
        "ghp_cPI71dC3WPmETR4biPHnY4H59ikQ2lyrBIA3",
    ),
    (
        "github-oauth",
        "  ✓ Token: gho_fytlwlqDFX0AsDluHEChHYHYr0g2noa9f4DP",
        "gho_fytlwlqDFX0AsDluHEChHYHYr0g2noa9f4DP",
    ),
    (
        "github-app-token",
        "+ git clone --depth 1 https://x-access-token:ghs_vAIY122Ql9bw2kwJRKYInhNTrJWKUnKsKrQJ@github.com/acme/fused-kernels.git",
        "ghs_vAIY122Ql9bw2kwJRKYInhNTrJWKUnKsKrQJ",
    ),
    (
        "github-refresh-token",
        '{"refresh_token_expires_in": 15897600, "refresh": "ghr_igYqg9BkgRdWwUZlPOgGurL1es7ukqqeaA35"}',
        "ghr_igYqg9BkgRdWwUZlPOgGurL1es7ukqqeaA35",
    ),
    (
        "github-fine-grained-pat",
        "+ git clone https://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@github.com/acme/apex.git",
        "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",
    ),
    (
        "gitlab-pat",
        "  Collecting apex@ git+https://oauth2:glpat-hkNhhciHwMPPtbBLiwAy@gitlab.example.com/ml/apex.git",
        "glpat-hkNhhciHwMPPtbBLiwAy",
    ),
    (
        "gitlab-runner-token",
        "Runtime platform arch=amd64 os=linux token=glrt-ypXAQoXilIbQT7IRJz4q",
        "glrt-ypXAQoXilIbQT7IRJz4q",
    ),
    (
        "gitlab-ci-token",
        "+ curl -X POST -F ref=main -F trigger=glptt-47008fd8a42518aa107f174cb78a6bbeef965d4f https://gitlab.example.com/api/v4/projects/7/trigger/pipeline",
        "glptt-47008fd8a42518aa107f174cb78a6bbeef965d4f",
    ),
    (
        "gitlab-other-token",
        "  oauth application secret gloas-5a8w091HSAYcOlftxIUqiTVg5bIn22SLtKc9zyI9HZPQk9GgfjUyvJqtcVLQYmk5",
        "gloas-5a8w091HSAYcOlftxIUqiTVg5bIn22SLtKc9zyI9HZPQk9GgfjUyvJqtcVLQYmk5",
    ),
    (
        "huggingface-token",
        '  File "/opt/conda/lib/python3.11/site-packages/huggingface_hub/_login.py", line 111, in login: login(token="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")',
        "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",
    ),
    (
        "huggingface-org-token",
        "  using organization token 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 for acme",
        "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",
    ),
    (
        "aws-access-key-id",
        "+ aws s3 cp s3://acme-wheels/flash_attn-2.8.3.whl . # key AKIA5WFEF7TQOKU3VU7Z",
        "AKIA5WFEF7TQOKU3VU7Z",
    ),
    (
        "aws-secret-access-key",
        "  aws_secret_access_key = Owz7CSS0WBt4q3IQpOI4HsIDQspIL6ZZcQ0Rm/A2",
        "Owz7CSS0WBt4q3IQpOI4HsIDQspIL6ZZcQ0Rm/A2",
    ),
    (
        "aws-session-token",
        "  aws_session_token = TQhZwbIGqQ189RbeCpIPcA6JVkybmtQC7AvNk1rndI1fxD8RRSO9G+PGe+rc9UG7zVJZMBg0iM9lP+ORUxjwGXnBd7EA2qBI+rPUYyttsqheJMwrITq6vxgxt0+dMCUl70tPsf8ahmTGQduyl23zvEC/BVu226UAN49lBzokTuowA3y2dsIK",
        "TQhZwbIGqQ189RbeCpIPcA6JVkybmtQC7AvNk1rndI1fxD8RRSO9G+PGe+rc9UG7zVJZMBg0iM9lP+ORUxjwGXnBd7EA2qBI+rPUYyttsqheJMwrITq6vxgxt0+dMCUl70tPsf8ahmTGQduyl23zvEC/BVu226UAN49lBzokTuowA3y2dsIK",
    ),
    (
        "google-api-key",
        "  Downloading https://www.googleapis.com/storage/v1/b/acme/o/cudnn.tar?alt=media&key=AIzaUYb96IT_rnsCT6WgPGk77SmJLekfi5nX69c",
        "AIzaUYb96IT_rnsCT6WgPGk77SmJLekfi5nX69c",
    ),
    (
        "azure-account-key",
        "  AZURE_STORAGE_CONNECTION_STRING: DefaultEndpointsProtocol=https;AccountName=acmeruns;AccountKey=/8YxJ37I7uUVhINRv9ViIq4qzgbIUOsa6XpPZF4NhBfUhg0rPYLmiHE4SNyMSURBDhSrBL5czPisE9MLlOy5vw==;EndpointSuffix=core.windows.net",
        "/8YxJ37I7uUVhINRv9ViIq4qzgbIUOsa6XpPZF4NhBfUhg0rPYLmiHE4SNyMSURBDhSrBL5czPisE9MLlOy5vw==",
    ),
    (
        "azure-sas-signature",
        "+ wget -q 'https://acmeruns.blob.core.windows.net/wheels/apex.whl?sv=2022-11-02&sr=b&sp=r&se=2026-12-31&sig=Wk6E%2BL9ENRKgBKnA1%2BAZmnsBVIW5AKMeBByBu2AIwfY%3D'",
        "Wk6E%2BL9ENRKgBKnA1%2BAZmnsBVIW5AKMeBByBu2AIwfY%3D",
    ),
    (
        "azure-ad-client-secret",
        "  ARM_CLIENT_SECRET=25v7Q~tN8EP7FZE-O1f_Fx4yo8W9c~BXe7rLEOI3",
        "25v7Q~tN8EP7FZE-O1f_Fx4yo8W9c~BXe7rLEOI3",
    ),
    (
        "presigned-url-signature",
        "  Downloading https://acme-wheels.s3.amazonaws.com/flash_attn-2.8.3.whl?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z&X-Amz-Signature=0b53b625ec33dc0761858b285163e1be16f1925286091f8257f1b7ce2710dc2e (412.3 MB)",
        "0b53b625ec33dc0761858b285163e1be16f1925286091f8257f1b7ce2710dc2e",
    ),
    (
        "slack-bot-token",
        "notify.py: posting build failure with xoxb-922328385642-7105129837252-FJhia0yf9SFOAQKvG8wfVRLb",
        "xoxb-922328385642-7105129837252-FJhia0yf9SFOAQKvG8wfVRLb",
    ),
    (
        "slack-user-token",
        "notify.py: posting as user xoxp-431634999248-005279137298-7112098426407-94c0e337ae2c8ee98edf9a530669c7a5",
        "xoxp-431634999248-005279137298-7112098426407-94c0e337ae2c8ee98edf9a530669c7a5",
    ),
    (
        "slack-legacy-token",
        "notify.py: legacy workspace token xoxa-2-ZgoyiMvPIznNJt6IIySqw37CplGtcV",
        "xoxa-2-ZgoyiMvPIznNJt6IIySqw37CplGtcV",
    ),
    (
        "slack-app-token",
        "  socket mode: app token xapp-1-AMTK1I2Y5DT-0985846388498-bbc70ddcb7cb03765fcf5d6b02336c3eb3d7a9032a4ed336fa532b74ee3d420e",
        "xapp-1-AMTK1I2Y5DT-0985846388498-bbc70ddcb7cb03765fcf5d6b02336c3eb3d7a9032a4ed336fa532b74ee3d420e",
    ),
    (
        "slack-webhook",
        "+ curl -X POST --data-binary @status.json https://hooks.slack.com/services/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",
        "T1E25D24W/BGD0L1EQ87P/Bgw8ka2jMMYtqXZBYgSox7We",
    ),
    (
        "stripe-key",
        "  stripe.error.AuthenticationError: Invalid API Key provided: sk_live_A4OfKXNquB2N3LtoV0MHlHAq",
        "sk_live_A4OfKXNquB2N3LtoV0MHlHAq",
    ),
    (
        "openai-api-key",
        "openai.AuthenticationError: Incorrect API key provided: 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",
        "eG6L0HA4uTNHNoFazROpRZ27WnV35PWTbTXSG9bU07fcLgoQ3HXMGaABhjDwgU6ngLqn1DoinjT3BlbkFJXer4dK0V4yg1NtIvYgi6094saKmq3yI7tAPuLdny7XjUYjbUlJCyRGlMojC7SrvtyGpXG8Uyyw",
    ),
    (
        "anthropic-api-key",
        "anthropic.AuthenticationError: invalid x-api-key sk-ant-api03-U8irKgSCJ8eNtI6YnANpH1j9OKMqgiL3lzzbdOzdOmG-0QCfT-_2hRUzGSZkc37gf8s8ZpTpHpF2CAJB6bpe8SwYqzMwNAA",
        "U8irKgSCJ8eNtI6YnANpH1j9OKMqgiL3lzzbdOzdOmG-0QCfT-_2hRUzGSZkc37gf8s8ZpTpHpF2CAJB6bpe8SwYqzMwNAA",
    ),
    (
        "npm-token",
        "npm notice Publishing with npm_WBsB0BJBmfzy2x3nMIVMKXT9FqXuTpU4ZV2Y",
        "npm_WBsB0BJBmfzy2x3nMIVMKXT9FqXuTpU4ZV2Y",
    ),
    (
        "npmrc-auth",
        "+ echo //registry.npmjs.org/:_authToken=a26852e5-779d-ee18-9218-ea2cdad23831 >> ~/.npmrc",
        "a26852e5-779d-ee18-9218-ea2cdad23831",
    ),
    (
        "pypi-token",
        "+ python -m twine upload dist/* --non-interactive -u __token__ -p pypi-AgEIcHlwaS5vcmcqFPOCHIbKvJ9J6jqIIYbwYlVZaaihcfOqcc_gcn4gzt-zCeV5ezeN95m1ZjnNZETkkaxdF",
        "AgEIcHlwaS5vcmcqFPOCHIbKvJ9J6jqIIYbwYlVZaaihcfOqcc_gcn4gzt-zCeV5ezeN95m1ZjnNZETkkaxdF",
    ),
    (
        "wandb-api-key",
        "+ wandb login 7119060095c6e2df3ab57124de124ef0af556266",
        "7119060095c6e2df3ab57124de124ef0af556266",
    ),
    (
        "json-secret-value",
        '{"auths": {"registry.example.com": {"auth": "Y2ktYm90OkZkMWlGUjNnR0FoeEozaGkwTDM0"}}}',
        "Y2ktYm90OkZkMWlGUjNnR0FoeEozaGkwTDM0",
    ),
    (
        "env-secret-assignment",
        "  env: CO_API_KEY: MMg6sF7bQzE0vuqI5udBz99o0vgzFAY1Hj50uLDm  MAX_JOBS: 8",
        "MMg6sF7bQzE0vuqI5udBz99o0vgzFAY1Hj50uLDm",
    ),
    (
        "jwt",
        "  Cookie: session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjaS1ib3QiLCJpYXQiOjE3NjcyMjU2MDB9.GlrIp6uWHC0YtvdwbrNttdLrZuC7dUfWhp5bMpOp7gn",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjaS1ib3QiLCJpYXQiOjE3NjcyMjU2MDB9.GlrIp6uWHC0YtvdwbrNttdLrZuC7dUfWhp5bMpOp7gn",
    ),
    (
        "artifactory-token",
        "+ jf rt dl --access-token-file x  # key AKCpooVOjv3lyLx4VBU8mPEH80Zi6DzScPGigS2LzOglgmH9wzdDcbkinIzWSLzM5vnqoiFsX",
        "AKCpooVOjv3lyLx4VBU8mPEH80Zi6DzScPGigS2LzOglgmH9wzdDcbkinIzWSLzM5vnqoiFsX",
    ),
    (
        "databricks-token",
        "databricks.sdk.errors.Unauthenticated: token dapicaa126b311d6f2f235877b2dab1d03a8 is invalid",
        "dapicaa126b311d6f2f235877b2dab1d03a8",
    ),
    (
        "digitalocean-token",
        "+ doctl auth init -t dop_v1_63c216045b053b50b328483693046c27b434556c6fefc190b959ca9484ed825f",
        "dop_v1_63c216045b053b50b328483693046c27b434556c6fefc190b959ca9484ed825f",
    ),
    (
        "vault-token",
        "  vault: using token hvs.NG4ZZfJ7lCDYgURcKYU6b0gR2HCDA7vX97nbZKGKZNfF6wdO1Fq1Xa9RXWTk0Mh-wfF3vxe40QF-load-0cdwqvb-cl2sHN",
        "hvs.NG4ZZfJ7lCDYgURcKYU6b0gR2HCDA7vX97nbZKGKZNfF6wdO1Fq1Xa9RXWTk0Mh-wfF3vxe40QF-load-0cdwqvb-cl2sHN",
    ),
    (
        "age-secret-key",
        "  sops: AGE-SECRET-KEY-1TLFRCF33DYAU3MC3D2D8M7UU29J9HDJNUEUGKTYZDD2YGME622A9WV8T3L",
        "AGE-SECRET-KEY-1TLFRCF33DYAU3MC3D2D8M7UU29J9HDJNUEUGKTYZDD2YGME622A9WV8T3L",
    ),
    (
        "anaconda-channel-token",
        "  channel_alias + https://conda.anaconda.org/t/cl-04b451f9-5aca-f6f3-fc69-a4d1d8a0229b/acme",
        "cl-04b451f9-5aca-f6f3-fc69-a4d1d8a0229b",
    ),
]

SAMPLES: list[tuple[str, str]] = [(kind, line) for kind, line, _ in _SEEDED]
SAMPLE_SECRET: dict[str, str] = {kind: secret for kind, _, secret in _SEEDED}

KEY_BLOCK = (
    "+ cat ~/.ssh/id_ed25519\n"
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACB2x0Ku5iJzPq8GcbkR3nTq0aQ7PhUbmL4ZK0VdW9mDzAAAAJgq9Zfq6vWX\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
    "+ ssh -T git@github.com\n"
)
_KEY_BLOCK_LINES = [
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "QyNTUxOQAAACB2x0Ku5iJzPq8GcbkR3nTq0aQ7PhUbmL4ZK0VdW9mDzAAAAJgq9Zfq6vWX",
]

SECRET_MARKERS: list[str] = [secret for _, _, secret in _SEEDED] + _KEY_BLOCK_LINES
