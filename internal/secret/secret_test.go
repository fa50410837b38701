package secret

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	// Test fixtures are assembled from pieces so that secret scanners
	// looking at this repository do not flag them.
	ghp := "ghp_" + strings.Repeat("a1B2", 9)
	tests := []struct {
		name string
		in   string
		want []string // types, in order
		span string   // the first match's text, if set
	}{
		{"aws access key", "key id AKIA" + "IOSFODNN7EXAMPLE here", []string{"aws_access_key"}, "AKIAIOSFODNN7EXAMPLE"},
		{"aws temp key", "ASIA" + "IOSFODNN7EXAMPL2", []string{"aws_access_key"}, ""},
		{"aws key inside word", "xAKIA" + "IOSFODNN7EXAMPLE", nil, ""},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", []string{"aws_secret_key"}, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{"github classic", "token: " + ghp, []string{"github_token"}, ghp},
		{"github fine-grained", "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuv", []string{"github_token"}, ""},
		{"gitlab", "glpat-" + "abcdefghij0123456789", []string{"gitlab_token"}, ""},
		{"slack bot", "xoxb-" + "1234567890-abcdefghij", []string{"slack_token"}, ""},
		{"slack webhook", "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", []string{"slack_webhook"}, ""},
		{"stripe live", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", []string{"stripe_key"}, ""},
		{"stripe restricted", "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", []string{"stripe_key"}, ""},
		{"openai", "OPENAI=sk-" + "proj-abcdefghijklmnop1234567890", []string{"openai_key"}, "sk-proj-abcdefghijklmnop1234567890"},
		{"openai prose is no key", "we use sk-learn-and-pandas-and-numpy for this", nil, ""},
		{"anthropic", "sk-ant-" + "api03-abcdefghijklmnopqrstuvwxyz012345", []string{"anthropic_key"}, ""},
		{"google", "AIza" + "SyA-abcdefghijklmnopqrstuvwxyz01234", []string{"google_api_key"}, ""},
		{"rsa private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", []string{"private_key"}, ""},
		{"openssh private key", "x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA=\n-----END OPENSSH PRIVATE KEY-----", []string{"private_key"}, ""},
		{"public key is fine", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----", nil, ""},
		{"jwt", "Authorization: Bearer eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", []string{"jwt"}, ""},
		{"bearer token", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz", []string{"bearer_token"}, "abcdefghijklmnopqrstuvwxyz"},
		{"bare jwt", "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", []string{"jwt"}, ""},
		{"password in url", "postgres://admin:s3cretPW@db.example:5432/app", []string{"password_in_url"}, "s3cretPW"},
		{"url without password", "https://user@example.com/x", nil, ""},
		{"url placeholder password", "postgres://user:${PASS}@db/app", nil, ""},
		{"connection string", "Server=db;User Id=sa;Password=Hunter2!;", []string{"connection_string_password"}, "Hunter2!"},
		{"basic auth header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", []string{"basic_auth"}, "dXNlcjpwYXNzd29yZA=="},
		{"env assignment", "DB_PASSWORD=hunter22\nDEBUG=1", []string{"secret_assignment"}, "hunter22"},
		{"spaced assignment", "password = 'hunter22'", []string{"secret_assignment"}, "hunter22"},
		{"yaml assignment", "db:\n  password: s3cr3t-value\n", []string{"secret_assignment"}, "s3cr3t-value"},
		{"upper-case header", "AUTHORIZATION: BEARER abcdefghijklmnopqrstuvwxyz", []string{"bearer_token"}, "abcdefghijklmnopqrstuvwxyz"},
		{"lower-case header", "authorization: basic dXNlcjpwYXNzd29yZA==", []string{"basic_auth"}, ""},
		{"url is no assignment", "see https://example.com:8443/path?x=1 for details", nil, ""},
		{"json assignment", `{"client_secret": "abc123def456"}`, []string{"secret_assignment"}, "abc123def456"},
		{"assignment from env is fine", "api_key = os.environ['X']", nil, ""},
		{"assignment of reference is fine", "password = getpass()", nil, ""},
		{"placeholder assignment", "PASSWORD=changeme", nil, ""},
		{"benign key name", "max_tokens=4096000", nil, ""},
		{"two secrets", "a " + ghp + " b AKIA" + "IOSFODNN7EXAMPLE", []string{"github_token", "aws_access_key"}, ""},
		{"plain prose", "Please summarise the quarterly report and send it to Bob.", nil, ""},
		{"short", "sk-", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Find(tt.in)
			var types []string
			for _, m := range got {
				types = append(types, m.Type)
				if m.Start < 0 || m.End > len(tt.in) || m.Start >= m.End {
					t.Fatalf("bad span %+v for %q", m, tt.in)
				}
			}
			if strings.Join(types, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("Find(%q) types = %v, want %v (%+v)", tt.in, types, tt.want, got)
			}
			if tt.span != "" && tt.in[got[0].Start:got[0].End] != tt.span {
				t.Errorf("span = %q, want %q", tt.in[got[0].Start:got[0].End], tt.span)
			}
		})
	}
}

func TestSensitiveKey(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"password", true}, {"Password", true}, {"db_password", true}, {"passwd", true},
		{"api_key", true}, {"apiKey", true}, {"x-api-key", true}, {"API_KEY", true},
		{"Authorization", true}, {"client_secret", true}, {"clientSecret", true},
		{"GITHUB_TOKEN", true}, {"access_token", true}, {"refresh_token", true},
		{"private_key", true}, {"ssh_key", true}, {"stripe_secret_key", true},
		{"cookie", true}, {"Set-Cookie", true}, {"pwd", true}, {"auth", true}, {"cvv", true},
		{"passphrase", true}, {"credentials", true}, {"otp", true},
		{"max_tokens", false}, {"input_tokens", false}, {"page_token", false}, {"nextPageToken", false},
		{"secret_name", false}, {"token_type", false}, {"api_key_id", false}, {"password_policy", false},
		{"key", false}, {"cache_key", false}, {"primary_key", false}, {"idempotency_key", false},
		{"keyword", false}, {"passport", false}, {"name", false}, {"to", false}, {"", false},
		{"public_key", false}, {"auth_method", false},
	}
	for _, tt := range tests {
		if got := SensitiveKey(tt.name); got != tt.want {
			t.Errorf("SensitiveKey(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func FuzzFind(f *testing.F) {
	for _, s := range []string{
		"AKIA" + "IOSFODNN7EXAMPLE", "postgres://a:b@c", "password=xyz123", "-----BEGIN PRIVATE KEY-----",
		"eyJ" + "a.eyJb.c", "sk-" + "proj-", "api_key: 'abcdefgh'", "\x00\xff://:@", "ßßpassword=ÄÖÜabc",
		// Encoded forms (decode.go) and an unlabelled AWS secret key.
		"token%3Dghp_" + "R8s2Kq9Wm4Xt7Vb1Zn5Lc3Pd6Hf0Jg2Ya4Ue%25", "Z2hwX1I4czJLcTlXbTRYdDdWYjFabjVMYzNQZDZIZjBKZzJZYTRVZQ==",
		"AKIA" + "QYLPMN5HHHFPZAM2 q7Zr4Xk2Vb9Wm1Tn8Ls6Pd3Hf0Jc5Ga7Ye2Ru4Iw", "%%%2", "====AAAA" + strings.Repeat("A", 30),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms := Find(s)
		end := 0
		for _, m := range ms {
			if m.Start < end || m.End <= m.Start || m.End > len(s) || m.Type == "" {
				t.Fatalf("bad match %+v in %q (previous end %d)", m, s, end)
			}
			end = m.End
		}
		SensitiveKey(s)
	})
}

// TestEncodedSecrets: a secret of a known shape is found percent-encoded,
// inside base64 and, for an AWS secret key, unlabelled beside its id; the
// span reported is the encoded text.
func TestEncodedSecrets(t *testing.T) {
	gh := "ghp_" + "R8s2Kq9Wm4Xt7Vb1Zn5Lc3Pd6Hf0Jg2Ya4Ue"
	aws := "q7Zr/Xk2Vb9Wm1Tn8Ls6Pd3Hf0Jc5Ga7Ye2Ru+Iw"
	b64 := base64.StdEncoding.EncodeToString([]byte("GITHUB_TOKEN=" + gh))
	tests := []struct {
		s, want, typ string // want is the span found ("" for none)
	}{
		{"x?t=" + url.QueryEscape("token "+gh), gh, "github_token"},
		{"k=" + url.QueryEscape("AKIA"+"QYLPMN5HHHFPZAM2:"+aws), url.QueryEscape(aws), "aws_secret_key"},
		{"cfg=" + b64 + " end", b64, "github_token"},
		{base64.RawURLEncoding.EncodeToString([]byte("xoxb-" + "4821937465-9182736455-Tq3Wm8Xs2Vb7Zn1Lc5Pd9Hf")), base64.RawURLEncoding.EncodeToString([]byte("xoxb-" + "4821937465-9182736455-Tq3Wm8Xs2Vb7Zn1Lc5Pd9Hf")), "slack_token"},
		{"AKIA" + "QYLPMN5HHHFPZAM2," + aws, aws, "aws_secret_key"},
		{"commit " + strings.Repeat("ab12", 10) + " alone", "", ""},                          // 40 hex, no access key id near
		{base64.StdEncoding.EncodeToString([]byte("just some ordinary words here")), "", ""}, // base64 of no secret
		{"100%25 sure, 50%2F50", "", ""},
	}
	for _, tc := range tests {
		var got Match
		for _, m := range Find(tc.s) {
			if m.Type == tc.typ || tc.typ == "" {
				got = m
				break
			}
		}
		span := ""
		if got.End > 0 {
			span = tc.s[got.Start:got.End]
		}
		if span != tc.want {
			t.Errorf("Find(%q) = %q (%s), want %q (%s)", tc.s, span, got.Type, tc.want, tc.typ)
		}
	}
}

func BenchmarkFind(b *testing.B) {
	for _, in := range []struct{ name, s string }{
		{"prose", "Hi Bob, please find the quarterly report attached. Best, Alice"},
		{"header", "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz' https://api.example.com/v1/items"},
		{"code2k", strings.Repeat("package main\n\nfunc main() { fmt.Println(\"hello\") }\n", 40)},
	} {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.s)))
			for b.Loop() {
				Find(in.s)
			}
		})
	}
}
