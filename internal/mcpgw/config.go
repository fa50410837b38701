package mcpgw

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"
)

// Upstream is one MCP server behind the gateway: a command the gateway
// starts and talks to over stdio, or a Streamable HTTP endpoint.
type Upstream struct {
	// Name prefixes the upstream's tools and prompts ("name.tool") when
	// the gateway aggregates. Letters, digits, _ and - only: no ".", so
	// the first "." of an exposed name always ends the upstream's name
	// and names from different upstreams cannot collide.
	Name    string            `yaml:"name"`
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Dir     string            `yaml:"dir"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`

	// dial, if set, replaces Command and URL (tests, benchmarks).
	dial func() mcp.Transport
}

// Config is the `mcp:` section of `mandate serve --config`.
type Config struct {
	Upstreams []Upstream `yaml:"upstreams"`
	// CallTimeout bounds one tools/call to an upstream (default 2m).
	CallTimeout time.Duration `yaml:"call_timeout"`
	// ApprovalWait is how long an ask is kept open for a person's answer
	// (default 1m; 0s: not at all). Elicit asks the person through MCP
	// clients that support elicitation (docs/approvals.md).
	ApprovalWait *time.Duration `yaml:"approval_wait"`
	Elicit       bool           `yaml:"elicit"`
}

// Wait is the approval wait the section asks for.
func (c *Config) Wait() time.Duration {
	if c.ApprovalWait == nil {
		return DefaultApprovalWait
	}
	return *c.ApprovalWait
}

var upstreamName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Validate checks the upstreams are usable and their names distinct.
func (c *Config) Validate() error {
	if c.CallTimeout < 0 {
		return fmt.Errorf("mcp.call_timeout: %s is negative", c.CallTimeout)
	}
	if w := c.ApprovalWait; w != nil && (*w < 0 || *w > 15*time.Minute) {
		return fmt.Errorf("mcp.approval_wait: %s: want 0s to 15m", *w)
	}
	seen := map[string]bool{}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		if err := u.Validate(); err != nil {
			return fmt.Errorf("mcp.upstreams[%d]: %w", i, err)
		}
		if seen[u.Name] {
			return fmt.Errorf("mcp.upstreams[%d]: name %q is used twice", i, u.Name)
		}
		seen[u.Name] = true
	}
	return nil
}

// Validate checks one upstream.
func (u *Upstream) Validate() error {
	switch {
	case !upstreamName.MatchString(u.Name):
		return fmt.Errorf("name %q: use 1 to 64 letters, digits, _ or - (no dots: the gateway joins names with one)", u.Name)
	case u.dial != nil:
		return nil
	case u.Command == "" && u.URL == "":
		return fmt.Errorf("upstream %q: give command (a stdio server) or url (a Streamable HTTP server)", u.Name)
	case u.Command != "" && u.URL != "":
		return fmt.Errorf("upstream %q: give command or url, not both", u.Name)
	case u.Command != "" && len(u.Headers) > 0:
		return fmt.Errorf("upstream %q: headers are for url upstreams", u.Name)
	case u.URL != "" && (len(u.Args) > 0 || len(u.Env) > 0 || u.Dir != ""):
		return fmt.Errorf("upstream %q: args, env and dir are for command upstreams", u.Name)
	}
	if u.URL != "" {
		p, err := url.Parse(u.URL)
		if err != nil {
			return fmt.Errorf("upstream %q: url: %w", u.Name, err)
		}
		if p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
			return fmt.Errorf("upstream %q: url %q: want http(s)://host/path", u.Name, u.URL)
		}
	}
	for k := range u.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("upstream %q: env name %q is not a variable name", u.Name, k)
		}
	}
	return nil
}

// ParseConfig reads a `mandate serve --config` YAML document, whose only
// section today is `mcp:`, strictly: unknown keys are errors that name the
// key. ${NAME} in env and header values is replaced by the environment
// variable NAME (getenv), so secrets need not be written into the file; a
// variable that is not set is an error.
func ParseConfig(data []byte, getenv func(string) string) (*Config, error) {
	var doc struct {
		MCP yaml.Node `yaml:"mcp"`
	}
	top := yaml.NewDecoder(bytes.NewReader(data))
	top.KnownFields(true)
	if err := top.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config: %w", err)
	}
	var c Config
	if doc.MCP.Kind == 0 {
		return &c, nil
	}
	// Decode the section on its own, strictly.
	sect, err := yaml.Marshal(&doc.MCP)
	if err != nil {
		return nil, fmt.Errorf("config: mcp: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(sect))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config: mcp: %w", err)
	}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		for _, m := range []map[string]string{u.Env, u.Headers} {
			for k, v := range m {
				x, err := expand(v, getenv)
				if err != nil {
					return nil, fmt.Errorf("config: mcp.upstreams[%d] (%s): %s: %w", i, u.Name, k, err)
				}
				m[k] = x
			}
		}
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &c, nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

func expand(s string, getenv func(string) string) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v := getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(slices.Compact(missing), ", "))
	}
	return out, nil
}

// ReadConfig reads ParseConfig's input from a file.
func ReadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := ParseConfig(data, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
