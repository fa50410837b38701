package security

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// Secrets (issue 10.8): a secret is redacted before storage however it is
// dressed — as a JSON object's key, percent- or URL-encoded, base64 of a
// known shape, an AWS secret key without its label beside its access key
// id. Each case is decided through the HTTP server; the data directory is
// then searched, byte for byte, for the secret.

// Fake credentials of real shapes (never valid anywhere).
const (
	awsID     = "AKIA" + "QYLPMN5HHHFPZAM2"
	awsSecret = "q7Zr4Xk2Vb9Wm1Tn8Ls6Pd3Hf0Jc5Ga7Ye2Ru4Iw" // 40 characters
	ghToken   = "ghp_" + "R8s2Kq9Wm4Xt7Vb1Zn5Lc3Pd6Hf0Jg2Ya4Ue"
	slackTok  = "xoxb-" + "4821937465-9182736455-Tq3Wm8Xs2Vb7Zn1Lc5Pd9Hf"
	// awsSlashed has the characters percent-encoding changes.
	awsSlashed = "q7Zr/Xk2Vb9Wm1Tn8Ls6Pd3Hf0Jc5Ga7Ye2Ru+Iw"
)

func TestSecretsRedacted(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name   string
		args   map[string]any
		secret string // must not appear in the data directory
	}{
		{"a secret as an object key", map[string]any{"url": "https://api.example/x", "headers": map[string]any{ghToken: "1"}}, ghToken},
		{"a secret as a nested object key", map[string]any{"url": "https://api.example/x", "body": map[string]any{"cache": map[string]any{slackTok: map[string]any{"ok": true}}}}, slackTok},
		{"percent-encoded in a query", map[string]any{"url": "https://api.example/x?token=" + url.QueryEscape(ghToken) + "&k=" + url.QueryEscape("aws_secret_access_key="+awsSecret)}, awsSecret},
		{"percent-encoded AWS secret with / and +", map[string]any{"url": "https://api.example/x?creds=" + url.QueryEscape(awsID+":"+awsSlashed)}, url.QueryEscape(awsSlashed)[4:]},
		{"path-escaped token", map[string]any{"url": "https://api.example/" + url.PathEscape("token "+ghToken)}, ghToken},
		{"base64 of a GitHub token", map[string]any{"url": "https://api.example/x", "note": "cfg=" + b64([]byte("GITHUB_TOKEN="+ghToken))}, b64([]byte("GITHUB_TOKEN=" + ghToken))},
		{"base64 of an AWS key pair", map[string]any{"url": "https://api.example/x", "note": b64([]byte("aws_access_key_id=" + awsID + "\naws_secret_access_key=" + awsSecret + "\n"))}, b64([]byte("aws_access_key_id=" + awsID + "\naws_secret_access_key=" + awsSecret + "\n"))},
		{"URL-safe base64 of a Slack token", map[string]any{"url": "https://api.example/x", "note": base64.RawURLEncoding.EncodeToString([]byte(slackTok))}, base64.RawURLEncoding.EncodeToString([]byte(slackTok))},
		{"an AWS secret key without its label beside the id", map[string]any{"url": "https://api.example/x", "note": awsID + " " + awsSecret}, awsSecret},
		{"an AWS secret key beside the id in CSV", map[string]any{"url": "https://api.example/x", "note": "user,key,secret\nci," + awsID + "," + awsSecret + "\n"}, awsSecret},
		{"an AWS secret key beside the id in JSON text", map[string]any{"url": "https://api.example/x", "note": `{"id":"` + awsID + `","k":"` + awsSecret + `"}`}, awsSecret},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := start(t, "")
			sid := in.session("mailer", "Fetch the status page of api.example")
			r := in.evaluate("user", sid, "web_fetch", tc.args)
			if r.code != 200 {
				t.Fatalf("evaluate: %d %s", r.code, truncate(string(r.raw)))
			}
			in.Close()
			entries, err := os.ReadDir(in.Dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.IsDir() {
					continue
				}
				data, err := os.ReadFile(filepath.Join(in.Dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(data, []byte(tc.secret)) {
					t.Errorf("%s holds the secret %q", e.Name(), tc.secret)
				}
			}
		})
	}
}
