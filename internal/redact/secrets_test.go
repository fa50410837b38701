package redact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/apptest"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/redact"
	"github.com/mandate-dev/mandate/internal/secret"
)

// Known secrets, each in the shape its provider issues. Every one must
// reach Mandate through some surface and none may reach the disk.
var (
	awsAccessKey  = "AKIAQ3EGRTWUV5XBDZ7K"
	awsSecretKey  = "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"
	githubToken   = "ghp_R8xWq2LmN5vB7kT3yH9cJ4fD6sA1gZ0pE2uI"
	githubPAT     = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS"
	slackToken    = "xoxb-2048-7745-R8xWq2LmN5vB7kT3yH9c"
	stripeKey     = "sk_live_51HqR8xWq2LmN5vB7kT3yH9cJ4f"
	openAIKey     = "sk-proj-R8xWq2LmN5vB7kT3yH9cJ4fD6sA1gZ0p"
	anthropicKey  = "sk-ant-api03-R8xWq2LmN5vB7kT3yH9cJ4fD6sA1gZ0pE2uI"
	googleKey     = "AIzaSyR8xWq2LmN5vB7kT3yH9cJ4fD6sA1gZ0pE"
	jwt           = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk4"
	urlPassword   = "Sup3rS3cretPw"
	connPassword  = "C0nnStr1ngPw9"
	opensshBody   = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
	opensshKey    = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + opensshBody + "\nQyNTUxOQAAACDg9vZ3K8m2hLx4\n-----END OPENSSH PRIVATE KEY-----"
	rsaBody       = "MIIEowIBAAKCAQEAq7BFUpkGp3LQmlQxYzWvT8nKc1RsVxH2JdE4fG6a"
	rsaKey        = "-----BEGIN RSA PRIVATE KEY-----\n" + rsaBody + "\nb3JkZXJzQ29tcGFueQ==\n-----END RSA PRIVATE KEY-----"
	passwordValue = "pw-Value-91a7c3 with spaces"
	secretValue   = "secret-Value-58b2"
	tokenValue    = "token-Value-33d9"
	apiKeyValue   = "apikey-Value-77e1"
	authzValue    = "authz-Value-4c2f-opaque"
)

func allSecrets() map[string]string {
	return map[string]string{
		"AWS access key": awsAccessKey, "AWS secret key": awsSecretKey, "GitHub token": githubToken, "GitHub PAT": githubPAT,
		"Slack token": slackToken, "Stripe key": stripeKey, "OpenAI key": openAIKey, "Anthropic key": anthropicKey,
		"Google API key": googleKey, "JWT": jwt, "password in URL": urlPassword, "connection string password": connPassword,
		"OpenSSH private key": opensshBody, "RSA private key": rsaBody, "value under password": passwordValue,
		"value under secret": secretValue, "value under token": tokenValue, "value under api_key": apiKeyValue,
		"value under authorization": authzValue,
	}
}

// api is an instance served with an admin token.
type api struct{ *apptest.Instance }

func (a api) call(method, path string, body any, want int) map[string]any {
	a.T.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		a.T.Fatal(err)
	}
	code, data := a.Do(method, path, "admin", bytes.NewReader(b))
	if code != want {
		a.T.Fatalf("%s %s: %d %s", method, path, code, data)
	}
	var out map[string]any
	json.Unmarshal(data, &out)
	return out
}

// TestSecretsNeverStored feeds known secrets through every surface of the
// HTTP API — session intent and tools, evaluate arguments and reported
// reasoning, observed output, mandate amendments in words and as a
// structured grant — then reads every file in the data directory, the
// SQLite database, its WAL and shared memory included: none may hold any
// of them. The records hold markers instead, which the redaction key ties
// back to the values.
func TestSecretsNeverStored(t *testing.T) {
	pattern := map[string]string{
		"AWS access key": awsAccessKey, "GitHub token": githubToken, "GitHub PAT": githubPAT, "Slack token": slackToken,
		"Stripe key": stripeKey, "OpenAI key": openAIKey, "Anthropic key": anthropicKey, "Google API key": googleKey, "JWT": jwt,
	}
	for name, s := range pattern {
		if ms := secret.Find("x " + s + " y"); len(ms) == 0 {
			t.Fatalf("precondition: package secret does not recognise the %s %q", name, s)
		}
	}

	c := api{apptest.New(t, "").Open().Serve(apptest.Token{Key: "admin", Role: "admin"})}
	dir, a := c.Dir, c.App

	// Session: the user's words and the agent's tools.
	sess := c.call("POST", "/v1/sessions", map[string]any{
		"agent_id": "coder",
		"intent": "Fix the deploy script. The old AWS key " + awsAccessKey + " and " + githubToken + " must be rotated; the database is postgres://app:" + urlPassword +
			"@db.internal:5432/prod",
		"tools": []any{map[string]any{
			"name":        "deploy",
			"description": "Deploys with the built-in token " + slackToken + ".",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"api_key": map[string]any{"type": "string", "default": stripeKey},
			}},
		}},
	}, http.StatusCreated)
	id := sess["session_id"].(string)

	// Evaluate: arguments of every shape, and the agent's reasoning.
	d := c.call("POST", "/v1/evaluate", map[string]any{
		"session_id": id, "tool": "Bash",
		"args": map[string]any{
			"command":  "curl -H 'Authorization: Bearer " + jwt + "' https://api.example.com && export OPENAI_API_KEY=" + openAIKey,
			"password": passwordValue,
			"env":      map[string]any{"AWS_SECRET_ACCESS_KEY": awsSecretKey, "DB": "Server=db;User Id=app;Password=" + connPassword + ";"},
			"headers":  []any{map[string]any{"authorization": authzValue}},
		},
		"reported": map[string]any{"reasoning": "I need the deploy key " + anthropicKey, "token": tokenValue},
	}, http.StatusOK)
	decision := d["decision_id"].(string)

	// Observe: what the tool printed.
	c.call("POST", "/v1/observe", map[string]any{
		"decision_id": decision,
		"output":      map[string]any{"stdout": "id_ed25519:\n" + opensshKey + "\n\nid_rsa:\n" + rsaKey, "config": map[string]any{"secret": secretValue, "api_key": apiKeyValue}},
	}, http.StatusOK)

	// Amendments: in words, and as a structured grant.
	c.call("POST", "/v1/sessions/"+id+"/mandate", map[string]any{"intent": "Also use the Google key " + googleKey + " and " + githubPAT}, http.StatusOK)
	c.call("POST", "/v1/sessions/"+id+"/mandate", map[string]any{"mandate": map[string]any{
		"instructions": []any{map[string]any{"text": "Deploy with " + anthropicKey, "source": "user"}},
		"allow":        []any{"read", "execute"},
	}}, http.StatusOK)

	// The store kept the decision, redacted.
	got := c.call("GET", "/v1/decisions/"+decision, nil, http.StatusOK)
	gotJSON, _ := json.Marshal(got)
	if !strings.Contains(string(gotJSON), "[REDACTED:") {
		t.Fatalf("the stored decision has no markers: %s", gotJSON)
	}
	if _, err := a.Evidence.Checkpoint(context.Background(), a.Evidence.Size()); err != nil {
		t.Fatal(err)
	}

	scan := func(when string) {
		t.Helper()
		var files []string
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			files = append(files, path)
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for name, s := range allSecrets() {
				if bytes.Contains(b, []byte(s)) {
					t.Errorf("%s: the %s is in %s", when, name, filepath.Base(path))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(files, " "), app.DatabaseFile) {
			t.Fatalf("%s: no database among %v", when, files)
		}
		t.Logf("%s: scanned %d files: %v", when, len(files), files)
	}
	scan("while running")

	// Every secret went in: each value's marker is in the evidence.
	r, err := redact.New(mustKey(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := a.Store.EvidenceRange(context.Background(), 0, a.Evidence.Size())
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, rec := range recs {
		all.Write(rec.Body)
	}
	for name, s := range allSecrets() {
		if name == "OpenSSH private key" || name == "RSA private key" {
			s = map[string]string{"OpenSSH private key": opensshKey, "RSA private key": rsaKey}[name]
		}
		if !bytes.Contains(all.Bytes(), []byte(":"+r.Hash(s)+"]")) {
			t.Errorf("no marker of the %s in the evidence", name)
		}
	}
	// The redacted log still verifies.
	var bundle bytes.Buffer
	b, err := a.Evidence.Export(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteTo(&bundle)
	if _, err := evidence.VerifyBundle(bundle.Bytes(), a.Evidence.Key().Verifier()); err != nil {
		t.Fatal(err)
	}

	c.Close() // a failed close fails the test; the files are scanned all the same
	scan("after shutdown")
}

func mustKey(t *testing.T, dir string) []byte {
	t.Helper()
	k, err := redact.LoadKey(dir)
	if err != nil {
		t.Fatal(fmt.Errorf("redaction key: %w", err))
	}
	return k
}
