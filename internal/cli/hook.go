package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/hook"
)

// exitBlock is the exit status Claude Code reads as "block".
const exitBlock = 2

// DefaultServer is the server the hook asks when neither --server nor
// MANDATE_URL says.
const DefaultServer = "http://" + DefaultListen

func newHookCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Agent runtime hooks: answer Claude Code's hook events; install them in settings.json",
	}
	cmd.AddCommand(newHookClaudeCodeCmd(env), newHookInstallCmd(env), newHookUninstallCmd(env))
	return cmd
}

// hookFlags are how the hook finds its server and token.
type hookFlags struct {
	server, token, tokenFile string
}

func (f *hookFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.server, "server", "", "Mandate server URL (default $MANDATE_URL, else "+DefaultServer+")")
	cmd.Flags().StringVar(&f.token, "token", "", "hook token (first choice; then --token-file, $MANDATE_TOKEN, $MANDATE_TOKEN_FILE, "+defaultTokenFileHelp+")")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "file holding the hook token (beats $MANDATE_TOKEN; default $MANDATE_TOKEN_FILE, else "+defaultTokenFileHelp+")")
}

const defaultTokenFileHelp = "~/.config/mandate/hook.token"

// defaultTokenFile is where install and the hook look for the hook token
// by default: in the user's configuration directory, which the built-in
// self-protection rules keep agents away from.
func defaultTokenFile(env Env) string {
	dir := env.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := env.Getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "mandate", "hook.token")
}

func (f *hookFlags) serverURL(env Env) string {
	return orEnv(env, f.server, "MANDATE_URL", DefaultServer)
}

// tokenFilePath is the token file the hook reads when no token is given
// directly.
func (f *hookFlags) tokenFilePath(env Env) string {
	if p := orEnv(env, f.tokenFile, "MANDATE_TOKEN_FILE", ""); p != "" {
		return p
	}
	return defaultTokenFile(env)
}

// orEnv is v, a flag's value, when it is set; else the environment
// variable name, when that is; else def.
func orEnv(env Env, v, name, def string) string {
	if v != "" {
		return v
	}
	if e := env.Getenv(name); e != "" {
		return e
	}
	return def
}

func (f *hookFlags) resolveToken(env Env) (string, error) {
	switch {
	case f.token != "":
		return f.token, nil
	case f.tokenFile == "" && env.Getenv("MANDATE_TOKEN") != "":
		return env.Getenv("MANDATE_TOKEN"), nil
	}
	path := f.tokenFilePath(env)
	if path == "" {
		return "", errors.New("no token: give --token, --token-file or MANDATE_TOKEN")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no token: %s does not exist (create a hook token: mandate token create --role hook --data DIR > %s)", path, path)
		}
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return tok, nil
}

func newHookClaudeCodeCmd(env Env) *cobra.Command {
	var (
		f       hookFlags
		timeout time.Duration
		wait    time.Duration
		agent   string
	)
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "Answer one Claude Code hook event (JSON on stdin) by asking the Mandate server",
		Long: `Answer one Claude Code hook event. Claude Code runs this command for each event with
the event as JSON on stdin; the answer goes to stdout as Claude Code expects it:

  SessionStart            the session is created (or taken up again on resume/compact)
  UserPromptSubmit        the user's words become a new version of the session's mandate
  PreToolUse              the call is decided: permissionDecision allow, deny or ask
  PostToolUse             the result is observed; a call Mandate never allowed is recorded as a gap
  SubagentStart/Stop      the sub-agent's session starts (narrowed by its Task prompt) and ends
  SessionEnd              the session is completed
  Stop, Notification,
  PreCompact              nothing to do: exit 0, no output

Every failure — server unreachable or too slow, bad token, malformed or unknown event —
exits 2 with one line on stderr, which Claude Code treats as a block (fail closed).

The server is --server, else $MANDATE_URL, else ` + DefaultServer + `. The token is the
first of: --token; the file --token-file; $MANDATE_TOKEN; the file $MANDATE_TOKEN_FILE;
the file ` + defaultTokenFileHelp + `. (--token-file beats $MANDATE_TOKEN: what the command
line says wins over the environment.) Use a hook token (mandate token create --role hook),
never the admin token.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{exitOnFlagError: strconv.Itoa(exitBlock)},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runClaudeCodeHook(cmd.Context(), env, f, timeout, wait, agent); err != nil {
				return &ExitError{Code: exitBlock, Err: oneLine(err)}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "give up (and block) after this long, reading the event on stdin included")
	cmd.Flags().StringVar(&agent, "agent", hook.DefaultAgentID, "agent id of the main agent's sessions (sub-agents get AGENT:TYPE)")
	cmd.Flags().DurationVar(&wait, "wait", 0, "on an ask, first wait this long for an answer through Mandate (mandate approvals, a dashboard) before leaving it to Claude Code's own prompt; the hook's deadline grows by it (raise the hook's timeout in settings.json to match)")
	// A hook invoked wrongly must still block, not fail open with exit 1.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: exitBlock, Err: oneLine(fmt.Errorf("hook claude-code: %w", err))}
	})
	return cmd
}

func runClaudeCodeHook(ctx context.Context, env Env, f hookFlags, timeout, wait time.Duration, agent string) error {
	if timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	if wait < 0 || wait > 10*time.Minute {
		return errors.New("--wait: want 0s to 10m (Claude Code gives a PreToolUse hook at most 600 s)")
	}
	timeout += wait
	tok, err := f.resolveToken(env)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := &hook.ClaudeCode{
		Client:  client.New(f.serverURL(env), tok, client.WithHTTPClient(&http.Client{Timeout: timeout})),
		AgentID: agent,
		HomeDir: env.Getenv("HOME"),
		Wait:    wait,
	}
	err = h.Handle(ctx, env.Stdin, env.Stdout)
	if errors.Is(err, hook.ErrNoEvent) {
		return fmt.Errorf("no complete hook event arrived on stdin within %s (--timeout)", timeout)
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("no answer from Mandate at %s within %s: %w", f.serverURL(env), timeout, err)
	}
	return err
}

// oneLine keeps an error to the single line Claude Code shows.
func oneLine(err error) error {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	return errors.New(msg)
}

// settingsFlags choose the settings.json to edit.
type settingsFlags struct {
	project, user bool
	settings      string
}

func (s *settingsFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&s.project, "project", false, "the project's .claude/settings.json (in the current directory)")
	cmd.Flags().BoolVar(&s.user, "user", false, "the user's ~/.claude/settings.json (the default; $CLAUDE_CONFIG_DIR is honoured)")
	cmd.Flags().StringVar(&s.settings, "settings", "", "this settings file")
	cmd.MarkFlagsMutuallyExclusive("project", "user", "settings")
}

func (s *settingsFlags) path(env Env) (string, error) {
	switch {
	case s.settings != "":
		return s.settings, nil
	case s.project:
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		return filepath.Join(wd, ".claude", "settings.json"), nil
	}
	if dir := env.Getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "settings.json"), nil
	}
	home := env.Getenv("HOME")
	if home == "" {
		return "", errors.New("HOME is not set: give --settings FILE")
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

func requireClaudeCode(args []string) error {
	if len(args) != 1 || args[0] != "claude-code" {
		return fmt.Errorf("name the agent runtime: claude-code (the only one supported)")
	}
	return nil
}

func newHookInstallCmd(env Env) *cobra.Command {
	var (
		sf                         settingsFlags
		server, tokenFile, command string
		viaHTTP                    bool
	)
	cmd := &cobra.Command{
		Use:   "install claude-code",
		Short: "Add Mandate's hooks to a Claude Code settings.json (idempotent, keeps everything else)",
		Long: `Merge Mandate's hook entries into a Claude Code settings.json: SessionStart, UserPromptSubmit,
PreToolUse and PostToolUse (every tool), SubagentStart, SubagentStop and SessionEnd. Each runs
'mandate hook claude-code --server URL --token-file FILE' with a timeout in seconds and
"onFailure": "block", so a hook that fails or times out blocks the call. The user's other hooks
and settings are kept; installing again replaces only Mandate's entries.

The token is read from --token-file at each event (default ` + defaultTokenFileHelp + `, which
Mandate's built-in rules keep the agent from reading); it never goes into settings.json.
Install asks the server (--server, else $MANDATE_URL, else ` + DefaultServer + `, which must
be running) whose token the file holds, and refuses an admin token under any file name, and
an agent token (it cannot create sessions). Create the file first with a hook token:

  mkdir -p ~/.config/mandate && mandate token create --role hook --name claude-code \
    --data ./mandate-data > ~/.config/mandate/hook.token && chmod 600 ~/.config/mandate/hook.token

With --http the entries are Claude Code's http handler type instead (Claude Code 2.1.295 or
later, for "onFailure"): each event is POSTed to the server's ` + hook.HTTPPath + ` route, so
no process starts per event. The token then comes from $` + hook.TokenVar + ` in Claude Code's
environment (listed in allowedEnvVars; Claude Code sends it in the Authorization header):

  MANDATE_TOKEN=$(cat ~/.config/mandate/hook.token) claude`,
		Args: func(_ *cobra.Command, args []string) error { return requireClaudeCode(args) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := sf.path(env)
			if err != nil {
				return err
			}
			if tokenFile == "" {
				tokenFile = defaultTokenFile(env)
			}
			if tokenFile, err = checkTokenFile(tokenFile); err != nil {
				return err
			}
			server = orEnv(env, server, "MANDATE_URL", DefaultServer)
			if err := checkServerURL(server); err != nil {
				return err
			}
			if err := checkTokenRole(cmd.Context(), server, tokenFile, env); err != nil {
				return err
			}
			if viaHTTP {
				return installHTTP(env, path, server, tokenFile)
			}
			if command == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find the mandate binary (give --command): %w", err)
				}
				command = shellQuote(exe)
			}
			line := command + " hook claude-code --server " + shellQuote(server) + " --token-file " + shellQuote(tokenFile)
			changed, err := editSettings(env, path, func(old []byte) ([]byte, error) { return hook.Install(old, line) })
			if err != nil || !changed {
				return err
			}
			fmt.Fprintf(env.Stdout, "installed Mandate's hooks for %d events in %s\n  command: %s\n", len(hook.Installed), path, line)
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&server, "server", "", "Mandate server URL the hook asks, with its scheme (default $MANDATE_URL, else "+DefaultServer+")")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the hook token (default "+defaultTokenFileHelp+")")
	cmd.Flags().StringVar(&command, "command", "", "how to run mandate (default: this binary's absolute path)")
	cmd.Flags().BoolVar(&viaHTTP, "http", false, "install Claude Code http handlers posting to the server's "+hook.HTTPPath+" (no process per event; the token from $"+hook.TokenVar+" in Claude Code's environment)")
	cmd.MarkFlagsMutuallyExclusive("http", "command")
	return cmd
}

// installHTTP writes the http handler form: the server's hook route, with
// the user's home directory so "~" in paths resolves as the command form's
// $HOME does.
func installHTTP(env Env, path, server, tokenFile string) error {
	u, err := url.Parse(strings.TrimRight(server, "/") + hook.HTTPPath)
	if err != nil {
		return fmt.Errorf("--server %q: %w", server, err)
	}
	if home := env.Getenv("HOME"); home != "" {
		u.RawQuery = url.Values{"home": {home}}.Encode()
	}
	changed, err := editSettings(env, path, func(old []byte) ([]byte, error) { return hook.InstallHTTP(old, u.String()) })
	if err != nil || !changed {
		return err
	}
	fmt.Fprintf(env.Stdout, "installed Mandate's http hooks for %d events in %s\n  url: %s\n  start Claude Code with the hook token in $%s, e.g.: %s=$(cat %s) claude\n",
		len(hook.Installed), path, u, hook.TokenVar, hook.TokenVar, shellQuote(tokenFile))
	return nil
}

// checkServerURL refuses a server address the hook could not use: one
// without an http or https scheme (127.0.0.1:7410 would be read as a
// relative URL by every client), or without a host.
func checkServerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil && !strings.Contains(raw, "://") {
		u, err = &url.URL{}, nil // "127.0.0.1:7410": no scheme, said below
	}
	if err != nil {
		return fmt.Errorf("--server %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("--server %q: give the scheme too, e.g. http://%s", raw, strings.TrimPrefix(raw, "//"))
	}
	if u.Host == "" {
		return fmt.Errorf("--server %q: no host", raw)
	}
	return nil
}

// checkTokenRole asks the server whose token the file holds. The hook's
// token is within the agent's reach, so an admin token — whatever the file
// is called — is refused; so is an agent token, which cannot create the
// sessions the hook needs, and a hook token bound to another agent than the
// one the installed hook's sessions are for.
func checkTokenRole(ctx context.Context, server, tokenFile string, env Env) error {
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return fmt.Errorf("token file %s is empty", tokenFile)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	who, err := client.New(server, tok).Whoami(ctx)
	if err != nil {
		return fmt.Errorf("cannot check the token in %s with the server at %s (is mandate serve running there?): %w", tokenFile, server, err)
	}
	switch who.Role {
	case "admin":
		return fmt.Errorf("%s holds an admin token (%s): the hook's token is within the agent's reach, so give it a hook token (mandate token create --role hook)", tokenFile, who.TokenID)
	case "agent":
		return fmt.Errorf("%s holds an agent token (%s), which cannot create the sessions the hook needs: use a hook token (mandate token create --role hook)", tokenFile, who.TokenID)
	case "hook":
		// The installed hook's sessions are the default agent's (and its
		// sub-agents'): a token bound to another agent would have every
		// event refused.
		if who.AgentID != "" && who.AgentID != hook.DefaultAgentID {
			return fmt.Errorf("%s holds a hook token (%s) bound to agent %q, but the installed hook's sessions are %q's: make one for it (mandate token create --role hook --agent %s)", tokenFile, who.TokenID, who.AgentID, hook.DefaultAgentID, hook.DefaultAgentID)
		}
	default:
		fmt.Fprintf(env.Stderr, "note: %s holds a %s token; a hook token (mandate token create --role hook) is all the hook needs\n", tokenFile, who.Role)
	}
	return nil
}

// checkTokenFile makes the path absolute and refuses what must not be
// used: a missing file, and the admin token's own file.
func checkTokenFile(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if filepath.Base(abs) == app.AdminTokenFile {
		return "", fmt.Errorf("%s is the admin token: the hook's token is within the agent's reach, so give it a hook token (mandate token create --role hook)", abs)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("token file: %w (create it: mandate token create --role hook --data DIR > %s)", err, abs)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s is readable by others (mode %v): chmod 600 %s", abs, fi.Mode().Perm(), abs)
	}
	return abs, nil
}

func newHookUninstallCmd(env Env) *cobra.Command {
	var sf settingsFlags
	cmd := &cobra.Command{
		Use:   "uninstall claude-code",
		Short: "Remove exactly Mandate's hooks from a Claude Code settings.json",
		Args:  func(_ *cobra.Command, args []string) error { return requireClaudeCode(args) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := sf.path(env)
			if err != nil {
				return err
			}
			old, mode, err := readSettings(path)
			if err != nil {
				return err
			}
			out, removed, err := hook.Uninstall(old)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if !removed {
				fmt.Fprintf(env.Stdout, "no Mandate hooks in %s\n", path)
				return nil
			}
			if err := writeSettings(path, out, mode); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "removed Mandate's hooks from %s\n", path)
			return nil
		},
	}
	sf.register(cmd)
	return cmd
}

// readSettings returns a settings file's content and mode; a missing file
// is empty, to be created with mode 0644 as Claude Code makes them.
// editSettings rewrites the settings file at path with edit, saying so
// when edit leaves it as it was; changed reports whether it wrote.
func editSettings(env Env, path string, edit func(old []byte) ([]byte, error)) (changed bool, err error) {
	old, mode, err := readSettings(path)
	if err != nil {
		return false, err
	}
	out, err := edit(old)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, old) {
		fmt.Fprintf(env.Stdout, "Mandate's hooks are already installed in %s\n", path)
		return false, nil
	}
	return true, writeSettings(path, out, mode)
}

func readSettings(path string) ([]byte, fs.FileMode, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read settings: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("read settings: %w", err)
	}
	return b, fi.Mode().Perm(), nil
}

// writeSettings replaces the file atomically, so Claude Code never reads a
// half-written one.
func writeSettings(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	f, err := os.CreateTemp(dir, ".settings-*.json")
	if err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write settings %s: %w", path, err)
	}
	return nil
}

// shellQuote quotes s for the POSIX shell Claude Code runs hook commands
// with, when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
