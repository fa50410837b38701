package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// logFlags are the global --log-level and --log-format.
type logFlags struct {
	level, format string
}

func (f *logFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.level, "log-level", "info", "log level: debug (every decision), info (denies, asks, gaps, lifecycle), warn, error")
	cmd.PersistentFlags().StringVar(&f.format, "log-format", "text", "log format on stderr: text (key=value) or json (one object a line)")
}

// parse checks both flags and names what is wrong.
func (f *logFlags) parse() (slog.Level, error) {
	var lvl slog.Level
	switch strings.ToLower(f.level) {
	case "debug":
		lvl = slog.LevelDebug
	case "info":
		lvl = slog.LevelInfo
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", f.level)
	}
	switch f.format {
	case "text", "json":
	default:
		return 0, fmt.Errorf("--log-format %q: want text or json", f.format)
	}
	return lvl, nil
}

// logger builds the logger the flags ask for, at least at min (a command
// that would be drowned by info lines raises it).
func (f *logFlags) logger(w io.Writer, min slog.Level) *slog.Logger {
	lvl, err := f.parse()
	if err != nil {
		lvl = slog.LevelInfo // unreachable after the root's check
	}
	opts := &slog.HandlerOptions{Level: max(lvl, min)}
	if f.format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// exitOnFlagError is the annotation a command sets to choose the exit
// status of a bad global flag: the Claude Code hook must block (2), never
// fail open.
const exitOnFlagError = "mandate.exit-on-flag-error"

// minLevel drops records below its level before they reach h.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.level}
}

// dropMessage leaves out the records with one message, for a caller that
// counts those events itself.
type dropMessage struct {
	slog.Handler
	msg string
}

func (d dropMessage) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == d.msg {
		return nil
	}
	return d.Handler.Handle(ctx, r)
}

func (d dropMessage) WithAttrs(as []slog.Attr) slog.Handler {
	return dropMessage{d.Handler.WithAttrs(as), d.msg}
}

func (d dropMessage) WithGroup(name string) slog.Handler {
	return dropMessage{d.Handler.WithGroup(name), d.msg}
}
