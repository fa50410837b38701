// Package config reads `mandate serve --config mandate.yaml`: one YAML file
// of sections, each decoded strictly (an unknown key is an error naming it
// and its line) and validated, with secrets taken from the environment by
// name, never from the file and never printed:
//
//	mcp:        # MCP upstreams served at /mcp (internal/mcpgw)
//	approvals:  # the approval queue: default deadline, link in notifications
//	notify:     # webhooks for approvals, answers, denies and gaps
//	judge:      # an optional OpenAI-compatible judge model for eligible asks
//
// Each section is its own type; a new section is a field of File and a
// case in Parse.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/mcpgw"
)

// File is a parsed configuration file.
type File struct {
	MCP       *mcpgw.Config
	Approvals Approvals
	Notify    []Notify
	// Judge is nil when the file has no judge section (or mode off).
	Judge *Judge
}

// Approvals is the `approvals:` section.
type Approvals struct {
	// Timeout is a pending approval's deadline when neither the policy
	// rule nor the session sets one (default 10m).
	Timeout time.Duration `yaml:"timeout"`
	// Link is the address notifications point people to, with {id} for
	// the approval id (default: the API's /v1/approvals/{id} on the
	// listen address).
	Link string `yaml:"link"`
}

// Secret is a value read from the environment. It prints as "[redacted]"
// everywhere (fmt, logs, JSON): only Reveal gives the value.
type Secret struct{ v string }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return s.v }

// Set reports whether the secret has a value.
func (s Secret) Set() bool { return s.v != "" }

func (s Secret) String() string {
	if s.v == "" {
		return ""
	}
	return "[redacted]"
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON keeps encoders from writing the value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// Notify event names (notify[].events).
const (
	NotifyApproval = "approval"
	NotifyAnswered = "approval.answered"
	NotifyDeny     = "deny"
	NotifyGap      = "gap"
)

// Notify is one `notify:` entry: a webhook.
type Notify struct {
	// URL is POSTed a JSON body for each event listed in Events.
	URL string `yaml:"url"`
	// SecretEnv names the environment variable holding the HMAC key the
	// deliveries are signed with (Mandate-Signature). Required for the
	// json format.
	SecretEnv string `yaml:"secret_env"`
	// Events are approval (default), approval.answered, deny, gap.
	Events []string `yaml:"events"`
	// Format is json (default) or slack (a Slack-compatible incoming
	// webhook body: {"text": …}).
	Format string `yaml:"format"`
	// Timeout bounds one delivery attempt (default 10s); Attempts is how
	// many are made before a delivery is given up (default 6, backing off
	// from 1s doubling).
	Timeout  time.Duration `yaml:"timeout"`
	Attempts int           `yaml:"attempts"`
	// Headers are sent with each delivery; ${NAME} is read from the
	// environment.
	Headers map[string]string `yaml:"headers"`

	Secret Secret `yaml:"-"`
}

// Judge modes.
const (
	JudgeOff      = "off"
	JudgeAdvisory = "advisory"
	JudgeAuto     = "auto"
)

// Judge is the `judge:` section.
type Judge struct {
	// URL is an OpenAI-compatible base URL (…/v1).
	URL   string `yaml:"url"`
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable holding the API key
	// (optional: local servers need none).
	APIKeyEnv string `yaml:"api_key_env"`
	// Mode is off, advisory (its opinion is attached to the approval) or
	// auto (it may resolve an eligible ask).
	Mode string `yaml:"mode"`
	// Eligible is all (every ask) or a list of rule names whose asks the
	// judge may see, beside rules marked `judge: eligible` in policy.
	Eligible Eligible `yaml:"eligible"`
	// Timeout bounds one exchange (default 5s); past it the ask is left
	// to a person.
	Timeout time.Duration `yaml:"timeout"`
	// RecentCalls is how many of the session's last calls it sees
	// (default 10).
	RecentCalls int `yaml:"recent_calls"`
	// MaxTokens bounds its answer (default 256).
	MaxTokens int `yaml:"max_tokens"`

	APIKey Secret `yaml:"-"`
}

// Eligible is `judge.eligible`: all, or rule names.
type Eligible struct {
	All   bool
	Rules []string
}

// UnmarshalYAML accepts "all", "none" or a list of rule names.
func (e *Eligible) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Value {
		case "all":
			e.All = true
			return nil
		case "none", "":
			return nil
		}
		return fmt.Errorf("line %d: eligible %q: want all, none or a list of rule names", n.Line, n.Value)
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || strings.TrimSpace(c.Value) == "" {
				return fmt.Errorf("line %d: eligible: each entry is a rule name", c.Line)
			}
			e.Rules = append(e.Rules, c.Value)
		}
		return nil
	}
	return fmt.Errorf("line %d: eligible: want all, none or a list of rule names", n.Line)
}

// Read parses a file; getenv supplies secrets (nil: os.Getenv).
func Read(path string, getenv func(string) string) (*File, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	f, err := Parse(data, getenv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse reads a configuration document; getenv supplies secrets and
// ${NAME} references.
func Parse(data []byte, getenv func(string) string) (*File, error) {
	var doc struct {
		MCP       yaml.Node `yaml:"mcp"`
		Approvals yaml.Node `yaml:"approvals"`
		Notify    yaml.Node `yaml:"notify"`
		Judge     yaml.Node `yaml:"judge"`
	}
	top := yaml.NewDecoder(bytes.NewReader(data))
	top.KnownFields(true)
	if err := top.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config: %w (the sections are mcp, approvals, notify and judge)", err)
	}
	f := &File{MCP: &mcpgw.Config{}}
	if doc.MCP.Kind != 0 {
		// The gateway parses its own section, as a document of its own.
		sect, err := yaml.Marshal(map[string]*yaml.Node{"mcp": &doc.MCP})
		if err != nil {
			return nil, fmt.Errorf("config: mcp: %w", err)
		}
		if f.MCP, err = mcpgw.ParseConfig(sect, getenv); err != nil {
			return nil, err
		}
	}
	if err := section("approvals", &doc.Approvals, &f.Approvals); err != nil {
		return nil, err
	}
	if err := f.Approvals.validate(); err != nil {
		return nil, fmt.Errorf("config: approvals: %w", err)
	}
	if err := section("notify", &doc.Notify, &f.Notify); err != nil {
		return nil, err
	}
	for i := range f.Notify {
		if err := f.Notify[i].validate(getenv); err != nil {
			return nil, fmt.Errorf("config: notify[%d] (line %d): %w", i, itemLine(&doc.Notify, i), err)
		}
	}
	if doc.Judge.Kind != 0 {
		var j Judge
		if err := section("judge", &doc.Judge, &j); err != nil {
			return nil, err
		}
		if err := j.validate(getenv); err != nil {
			return nil, fmt.Errorf("config: judge (line %d): %w", doc.Judge.Line, err)
		}
		if j.Mode != JudgeOff {
			f.Judge = &j
		}
	}
	return f, nil
}

// section decodes one section strictly.
func section(name string, n *yaml.Node, dst any) error {
	if n.Kind == 0 {
		return nil
	}
	// yaml.Node.Decode does not check for unknown fields; re-encode and
	// decode the section strictly. Line numbers are the section's own
	// plus its first line.
	b, err := yaml.Marshal(n)
	if err != nil {
		return fmt.Errorf("config: %s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(dst); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config: %s (from line %d): %w", name, n.Line, err)
	}
	return nil
}

func itemLine(n *yaml.Node, i int) int {
	if n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return n.Content[i].Line
	}
	return n.Line
}

func (a *Approvals) validate() error {
	if a.Timeout < 0 || a.Timeout > approval.MaxTimeout {
		return fmt.Errorf("timeout %s: want more than 0 and at most %s", a.Timeout, approval.MaxTimeout)
	}
	if a.Link != "" {
		if !strings.Contains(a.Link, "{id}") {
			return fmt.Errorf("link %q: put {id} where the approval id goes", a.Link)
		}
		if err := httpURL(strings.ReplaceAll(a.Link, "{id}", "x")); err != nil {
			return fmt.Errorf("link: %w", err)
		}
	}
	return nil
}

func httpURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want http(s)://host/…", s)
	}
	return nil
}

func (n *Notify) validate(getenv func(string) string) error {
	if n.URL == "" {
		return errors.New("url is required")
	}
	if err := httpURL(n.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	switch n.Format {
	case "":
		n.Format = "json"
	case "json", "slack":
	default:
		return fmt.Errorf("format %q: want json or slack", n.Format)
	}
	if len(n.Events) == 0 {
		n.Events = []string{NotifyApproval}
	}
	for _, e := range n.Events {
		if !slices.Contains([]string{NotifyApproval, NotifyAnswered, NotifyDeny, NotifyGap}, e) {
			return fmt.Errorf("events: %q: want approval, approval.answered, deny or gap", e)
		}
	}
	if n.SecretEnv != "" {
		v := getenv(n.SecretEnv)
		if v == "" {
			return fmt.Errorf("secret_env: environment variable %s is not set (it holds the HMAC key deliveries are signed with)", n.SecretEnv)
		}
		n.Secret = Secret{v}
	} else if n.Format == "json" {
		return errors.New("secret_env is required: name the environment variable holding the HMAC key, so receivers can verify Mandate-Signature")
	}
	if n.Timeout < 0 || n.Timeout > time.Minute {
		return fmt.Errorf("timeout %s: want at most 1m", n.Timeout)
	}
	if n.Timeout == 0 {
		n.Timeout = 10 * time.Second
	}
	if n.Attempts < 0 || n.Attempts > 20 {
		return fmt.Errorf("attempts %d: want 1 to 20", n.Attempts)
	}
	if n.Attempts == 0 {
		n.Attempts = 6
	}
	for k, v := range n.Headers {
		x, err := expand(v, getenv)
		if err != nil {
			return fmt.Errorf("headers: %s: %w", k, err)
		}
		n.Headers[k] = x
	}
	return nil
}

func (j *Judge) validate(getenv func(string) string) error {
	switch j.Mode {
	case "":
		j.Mode = JudgeAdvisory
	case JudgeOff, JudgeAdvisory, JudgeAuto:
	default:
		return fmt.Errorf("mode %q: want off, advisory or auto", j.Mode)
	}
	if j.Mode == JudgeOff {
		return nil
	}
	if j.URL == "" || j.Model == "" {
		return errors.New("url (an OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1) and model are required")
	}
	if err := httpURL(j.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	if j.APIKeyEnv != "" {
		v := getenv(j.APIKeyEnv)
		if v == "" {
			return fmt.Errorf("api_key_env: environment variable %s is not set", j.APIKeyEnv)
		}
		j.APIKey = Secret{v}
	}
	if j.Timeout < 0 || j.Timeout > 2*time.Minute {
		return fmt.Errorf("timeout %s: want at most 2m", j.Timeout)
	}
	if j.Timeout == 0 {
		j.Timeout = 5 * time.Second
	}
	if j.RecentCalls < 0 || j.RecentCalls > 100 {
		return fmt.Errorf("recent_calls %d: want 0 to 100", j.RecentCalls)
	}
	if j.RecentCalls == 0 {
		j.RecentCalls = 10
	}
	if j.MaxTokens < 0 || j.MaxTokens > 8192 {
		return fmt.Errorf("max_tokens %d: want up to 8192", j.MaxTokens)
	}
	if j.MaxTokens == 0 {
		j.MaxTokens = 256
	}
	return nil
}

// expand replaces ${NAME} with the environment variable NAME; an unset one
// is an error.
func expand(s string, getenv func(string) string) (string, error) {
	var missing []string
	out := os.Expand(s, func(name string) string {
		v := getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}
