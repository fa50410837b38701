package policy

import (
	"github.com/mandate-dev/mandate/internal/action"
)

// serving is the self facts of `mandate serve --listen 127.0.0.1:7410
// --data /srv/mandate`.
func serving(i *Input) {
	i.Self = SelfFacts{
		Addresses: []string{"127.0.0.1:7410", "localhost:7410", "[::1]:7410", "0.0.0.0:7410"},
		Hosts:     []string{"127.0.0.1", "localhost", "::1", "0.0.0.0"},
		Ports:     []string{"7410"},
		Paths:     []string{"/srv/mandate", "/home/sam/.config/mandate"},
	}
}

func bash(command string, cmds ...action.Command) func(*Input) {
	return func(i *Input) {
		i.Call.Tool, i.Action.Tool, i.Action.Family = "Bash", "Bash", "shell"
		i.Call.Args = map[string]any{"command": command}
		i.Action.Commands = cmds
	}
}

func cmd(kind action.Kind, argv ...string) action.Command {
	return action.Command{Argv: argv, Name: argv[0], Kind: kind}
}

// selfCases are calls that reach around Mandate, with the facts the
// classifier produces for them, and their legitimate neighbours.
func selfCases() []builtinCase {
	settings := "/home/sam/proj/.claude/settings.json"
	self := []string{"builtin.self-api", "builtin.self-files", "builtin.self-tokens", "builtin.self-commands", "builtin.self-command-line", "builtin.self-hook-settings", "builtin.self-settings-edit"}
	return []builtinCase{
		{name: "self: WebFetch of the API", in: in(fetch, readWrite, tool("WebFetch"), with(serving), with(func(i *Input) {
			i.Action.URLs, i.Action.Hosts = []string{"http://localhost:7410/v1/tokens"}, []string{"localhost"}
		})), want: Deny, fired: []string{"builtin.self-api"}, reason: "Mandate's own API"},
		{name: "self: the API is nobody's business without a service", in: in(fetch, readWrite, tool("WebFetch"), with(func(i *Input) {
			i.Action.URLs, i.Action.Hosts = []string{"http://localhost:7410/v1/tokens"}, []string{"localhost"}
		})), want: Allow, notFired: self},
		{name: "self: curl to the API", in: in(fetch, readWrite, with(serving), with(bash(`curl -s http://127.0.0.1:7410/v1/sessions`,
			cmd(fetch, "curl", "-s", "http://127.0.0.1:7410/v1/sessions"))), with(func(i *Input) {
			i.Action.URLs = []string{"http://127.0.0.1:7410/v1/sessions"}
		})), want: Deny, fired: []string{"builtin.self-api", "builtin.self-command-line"}},
		{name: "self: nc with host and port apart", in: in(send, readWrite, with(serving), with(bash(`nc 127.0.0.1 7410`,
			cmd(send, "nc", "127.0.0.1", "7410")))), want: Deny, fired: []string{"builtin.self-command-line"}},
		{name: "self: a socket in python -c", in: in(execute, readWrite, with(serving), with(bash(`python3 -c "socket.create_connection(('127.0.0.1', 7410))"`,
			cmd(execute, "python3", "-c", "socket.create_connection(('127.0.0.1', 7410))")))), want: Deny, fired: []string{"builtin.self-command-line"}},
		{name: "self legit: the project's dev server", in: in(fetch, readWrite, with(serving), with(bash(`curl -s http://localhost:3000/health`,
			cmd(fetch, "curl", "-s", "http://localhost:3000/health"))), with(func(i *Input) {
			i.Action.URLs = []string{"http://localhost:3000/health"}
		})), want: Allow, notFired: self},
		{name: "self: reading the data directory", in: in(read, readWrite, tool("Read"), with(serving), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/srv/mandate/mandate.db", Access: action.Read}}
		})), want: Deny, fired: []string{"builtin.self-files"}, reason: "/srv/mandate/mandate.db"},
		{name: "self: an admin token anywhere", in: in(read, readWrite, tool("Read"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/tmp/copy/admin.token", Access: action.Read}}
		})), want: Deny, fired: []string{"builtin.self-tokens"}},
		{name: "self: the token variable", in: in(read, readWrite, with(bash(`echo $MANDATE_TOKEN`, cmd(read, "echo", "$MANDATE_TOKEN")))),
			want: Deny, fired: []string{"builtin.self-command-line"}},
		{name: "self: uninstalling the hooks", in: in(execute, readWrite, with(bash(`mandate hook uninstall claude-code`,
			cmd(execute, "mandate", "hook", "uninstall", "claude-code")))), want: Deny, fired: []string{"builtin.self-commands", "builtin.self-command-line"}},
		{name: "self: killing the service", in: in(execute, readWrite, with(bash(`pkill -f 'mandate serve'`,
			cmd(execute, "pkill", "-f", "mandate serve")))), want: Deny, fired: []string{"builtin.self-commands"}},
		{name: "self legit: mandate check is harmless", in: in(read, readWrite, tool("mcp_shell"), with(func(i *Input) {
			i.Action.Commands = []action.Command{cmd(read, "mandate", "check", "--intent", "x")}
		})), want: Allow, notFired: self},
		{name: "self: an edit removing the hooks", in: in(write, readWrite, tool("Edit"), with(func(i *Input) {
			i.Call.Args = map[string]any{"file_path": settings, "old_string": `"hooks": {`, "new_string": `"off": {`}
			i.Action.Paths = []action.PathRef{{Path: settings, Access: action.Write}}
		})), want: Deny, fired: []string{"builtin.self-hook-settings"}},
		{name: "self: a permissions edit asks", in: in(write, readWrite, tool("Edit"), with(func(i *Input) {
			i.Call.Args = map[string]any{"file_path": settings, "old_string": `"allow": []`, "new_string": `"allow": ["Bash(go test:*)"]`}
			i.Action.Paths = []action.PathRef{{Path: settings, Access: action.Write}}
		})), want: Ask, fired: []string{"builtin.self-settings-edit"}, notFired: []string{"builtin.self-hook-settings"}},
		{name: "self: a non-string edit fails closed", in: in(write, readWrite, tool("Edit"), with(func(i *Input) {
			i.Call.Args = map[string]any{"file_path": settings, "old_string": 1.0, "new_string": []any{"x"}}
			i.Action.Paths = []action.PathRef{{Path: settings, Access: action.Write}}
		})), want: Ask, fired: []string{"builtin.self-settings-edit"}},
		{name: "self legit: reading the settings", in: in(read, readWrite, tool("Read"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: settings, Access: action.Read}}
		})), want: Allow, notFired: self},
	}
}
