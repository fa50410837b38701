package shell

import (
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// curlFlags are curl's options that take a value.
var curlFlags = flagDef{short: "dFTXHoAebcKuxEwmrCyYzQtUDP", long: []string{
	"data", "data-raw", "data-binary", "data-urlencode", "data-ascii", "json", "form", "form-string",
	"upload-file", "request", "header", "output", "user-agent", "referer", "cookie", "cookie-jar",
	"config", "user", "proxy", "cert", "key", "cacert", "capath", "write-out", "max-time",
	"connect-timeout", "range", "continue-at", "speed-limit", "speed-time", "time-cond", "quote",
	"telnet-option", "proxy-user", "dump-header", "ftp-port", "url", "resolve", "connect-to",
	"retry", "retry-delay", "retry-max-time", "output-dir", "interface", "local-port", "limit-rate",
	"max-filesize", "oauth2-bearer", "aws-sigv4", "unix-socket", "abstract-unix-socket",
	"mail-from", "mail-rcpt", "mail-auth", "trace", "trace-ascii", "stderr", "variable", "expand-data",
	"expand-url", "netrc-file", "pass", "proxy-header", "request-target", "data-raw",
}}

// curlCmd: GET is a fetch; data, forms, uploads and non-GET methods send.
func curlCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Fetch)
	p := parseFlags(inv.argv, 1, curlFlags)
	var urls []string
	for _, i := range p.ops {
		urls = append(urls, inv.argv[i])
	}
	urls = append(urls, p.values("url")...)
	sends := false
	for _, name := range []string{"d", "data", "data-raw", "data-binary", "data-urlencode", "data-ascii", "json", "F", "form", "form-string", "T", "upload-file", "mail-rcpt"} {
		for _, v := range p.values(name) {
			sends = true
			curlDataFile(inv, name, v)
		}
	}
	if p.has("G", "get") && !p.has("F", "form", "T", "upload-file") {
		sends = false
		inv.note("curl -G puts the data in the URL's query")
		inv.external = true
	}
	method := ""
	if m, ok := p.value("X", "request"); ok {
		method = strings.ToUpper(m)
		switch method {
		case "GET", "HEAD", "OPTIONS":
		default:
			sends = true
		}
	}
	if p.has("I", "head") {
		method = "HEAD"
	}
	if sends {
		inv.ks = 0
		inv.kind(act.Send)
		inv.external = true
		verb := "sends data to"
		if method != "" && method != "POST" {
			verb = "sends a " + method + " request to"
		}
		for _, u := range urls {
			if h := inv.addURL(u); h != "" {
				inv.note("curl " + verb + " " + h)
			}
		}
	} else {
		for _, u := range urls {
			inv.addURL(u)
		}
	}
	for _, o := range p.values("o", "output", "c", "cookie-jar", "D", "dump-header", "trace", "trace-ascii", "stderr") {
		if o != "-" && o != "/dev/null" {
			inv.kind(act.Write)
			inv.w.addPath(o, act.Write, inv.env, false)
		}
	}
	if p.has("O", "remote-name", "remote-name-all", "J") {
		inv.kind(act.Write)
		inv.note("saves the download under its remote name")
	}
	for _, f := range p.values("K", "config", "netrc-file") {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	if p.has("n", "netrc") {
		inv.w.addPath("~/.netrc", act.Read, inv.env, false)
	}
	for _, f := range p.values("E", "cert", "key") {
		inv.w.addPath(strings.SplitN(f, ":", 2)[0], act.Read, inv.env, false)
	}
	if u, ok := p.value("u", "user", "oauth2-bearer", "proxy-user"); ok && strings.Contains(u, ":") || p.has("oauth2-bearer") {
		inv.w.credential(nil)
		inv.note("passes credentials on the command line")
	}
	for _, h := range p.values("H", "header") {
		if k, _, ok := strings.Cut(h, ":"); ok && (strings.EqualFold(strings.TrimSpace(k), "authorization") || strings.Contains(strings.ToLower(k), "token") || strings.Contains(strings.ToLower(k), "api-key")) {
			// A token a service printed for itself ($(gh auth token))
			// and sent only to that service authenticates; anything
			// else in such a header is a secret leaving.
			inv.w.res.credHeader = true
			inv.note("sends a credential header (" + strings.TrimSpace(k) + ")")
		}
	}
}

// curlDataFile records files that curl's data options read: @file for -d,
// name=@file or name=<file for -F, and the -T upload.
func curlDataFile(inv *invocation, flag, v string) {
	file := ""
	switch flag {
	case "T", "upload-file":
		file = v
	case "F", "form":
		if _, val, ok := strings.Cut(v, "="); ok && (strings.HasPrefix(val, "@") || strings.HasPrefix(val, "<")) {
			file = strings.SplitN(val[1:], ";", 2)[0]
		}
	case "data-urlencode":
		if i := strings.IndexByte(v, '@'); i >= 0 {
			file = v[i+1:]
		}
	case "form-string", "mail-rcpt":
	default:
		if strings.HasPrefix(v, "@") {
			file = v[1:]
		}
	}
	switch file {
	case "":
		return
	case "-":
		inv.note("sends its standard input")
		return
	}
	p := inv.w.addPath(file, act.Read, inv.env, false)
	inv.note("uploads the file " + p)
}

// wgetCmd: fetches, unless it posts data.
func wgetCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Fetch)
	p := parseFlags(inv.argv, 1, flagDef{short: "OoaPiTtwUeBdlQ", long: []string{
		"output-document", "output-file", "append-output", "directory-prefix", "input-file", "timeout",
		"tries", "wait", "user-agent", "execute", "base", "level", "quota", "post-data", "post-file",
		"body-data", "body-file", "method", "header", "user", "password", "http-user", "http-password",
		"ftp-user", "ftp-password", "load-cookies", "save-cookies", "certificate", "private-key",
		"ca-certificate", "referer", "dir", "d", "out", "max-connection-per-server", "x",
	}})
	sends := false
	if v, ok := p.value("post-data", "body-data"); ok {
		sends = true
		_ = v
	}
	for _, f := range p.values("post-file", "body-file") {
		sends = true
		fp := inv.w.addPath(f, act.Read, inv.env, false)
		inv.note("uploads the file " + fp)
	}
	if m, ok := p.value("method"); ok && !strings.EqualFold(m, "GET") && !strings.EqualFold(m, "HEAD") {
		sends = true
	}
	if sends {
		inv.ks = 0
		inv.kind(act.Send)
		inv.external = true
	}
	for _, i := range p.ops {
		if h := inv.addURL(inv.argv[i]); h != "" && sends {
			inv.note("wget sends data to " + h)
		}
	}
	for _, o := range p.values("O", "output-document", "o", "output-file", "a", "append-output", "save-cookies", "out") {
		if o != "-" {
			inv.kind(act.Write)
			inv.w.addPath(o, act.Write, inv.env, false)
		}
	}
	if d, ok := p.value("P", "directory-prefix", "dir", "d"); ok {
		inv.kind(act.Write)
		inv.w.addPath(d, act.Write, inv.env, false)
	} else if !p.has("O", "output-document", "spider") && len(p.ops) > 0 {
		inv.kind(act.Write)
		inv.note("saves the download in the current directory")
	}
	if f, ok := p.value("i", "input-file"); ok {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	if _, ok := p.value("password", "http-password", "ftp-password"); ok {
		inv.w.res.Sensitive = true
		inv.note("passes a password on the command line")
	}
	if p.has("e", "execute") {
		inv.note("wget -e runs wgetrc commands")
	}
}

// httpieCmd: http [METHOD] URL [items]; items with = := @ send data.
func httpieCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Fetch)
	p := parseFlags(inv.argv, 1, flagDef{short: "aAo", long: []string{"auth", "auth-type", "output", "session", "session-read-only", "verify", "cert", "cert-key", "proxy", "timeout", "pretty", "style", "print", "format-options"}})
	ops := p.ops
	method := ""
	if len(ops) > 0 {
		switch m := strings.ToUpper(inv.argv[ops[0]]); m {
		case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
			method = m
			ops = ops[1:]
		}
	}
	if len(ops) == 0 {
		return
	}
	url := inv.argv[ops[0]]
	if strings.HasPrefix(url, ":") {
		url = "localhost" + url
	}
	sends := method != "" && method != "GET" && method != "HEAD" && method != "OPTIONS"
	for _, i := range ops[1:] {
		it := inv.argv[i]
		switch {
		case strings.Contains(it, ":="), strings.Contains(it, "=@"), strings.Contains(it, "@") && !strings.Contains(it, "=="):
			if method == "" {
				sends = true
			}
			if k := strings.Index(it, "@"); k >= 0 {
				fp := inv.w.addPath(it[k+1:], act.Read, inv.env, false)
				inv.note("uploads the file " + fp)
			}
		case strings.Contains(it, "==") || strings.Contains(it, ":") && !strings.Contains(it, "="):
			// query parameter or header
		case strings.Contains(it, "="):
			if method == "" {
				sends = true
			}
		}
	}
	if p.has("f", "form") && method == "" {
		sends = true
	}
	h := inv.addURL(url)
	if sends {
		inv.ks = 0
		inv.kind(act.Send)
		inv.external = true
		inv.note(inv.name() + " sends data to " + h)
	}
	if o, ok := p.value("o", "output"); ok {
		inv.kind(act.Write)
		inv.w.addPath(o, act.Write, inv.env, false)
	}
	if _, ok := p.value("a", "auth"); ok {
		inv.w.res.Sensitive = true
		inv.note("passes credentials on the command line")
	}
}

// sshFlags are ssh's options that take a value.
var sshFlags = flagDef{short: "BbcDEeFIiJLlmOoPpQRSWw", stop: true}

// sshCmd: a remote command runs on the host; no command opens a session.
func sshCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Execute, act.Send)
	inv.external = true
	p := parseFlags(inv.argv, 1, sshFlags)
	for _, f := range p.values("i", "F") {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	if len(p.ops) == 0 {
		return
	}
	host := sshHost(inv.argv[p.ops[0]])
	if host != "" {
		inv.w.host(host)
	}
	if p.has("L", "R", "D") {
		inv.note("opens port forwarding through " + host)
	}
	if len(p.ops) == 1 {
		inv.note("opens a shell on " + host)
		if inv.in != nil && inv.in.literal {
			env := inv.env.sub("ssh " + host)
			env.remote = host
			inv.done = true
			inv.emit()
			inv.w.script(inv.in.text, env, inv.depth+1)
		}
		return
	}
	remote := strings.Join(inv.argv[p.ops[1]:], " ")
	inv.note("runs a command on " + host)
	inv.emit()
	inv.done = true
	env := inv.env.sub("ssh " + host)
	env.remote = host
	for _, i := range p.ops[1:] {
		if inv.dynamicArg(i) {
			inv.w.note("the remote command is built at run time")
			inv.w.res.Kinds.Add(act.Execute)
			return
		}
	}
	inv.w.script(remote, env, inv.depth+1)
}

// sshHost extracts the host of "user@host", "host", "ssh://user@host:22".
func sshHost(s string) string {
	if strings.Contains(s, "://") {
		return act.HostOnly(s)
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(s)
}

// remoteSpec splits scp/rsync operands: "user@host:path", "host:path",
// "host::module", "rsync://host/…", "s3://bucket/…"; local paths have no
// host.
func remoteSpec(s string) (host, rpath string, remote bool) {
	if strings.Contains(s, "://") {
		return act.HostOnly(s), s, true
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "../") {
		return "", s, false
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", s, false
	}
	if j := strings.IndexByte(s, '/'); j >= 0 && j < i {
		return "", s, false
	}
	h := s[:i]
	if k := strings.LastIndexByte(h, '@'); k >= 0 {
		h = h[k+1:]
	}
	return strings.ToLower(h), strings.TrimPrefix(s[i+1:], ":"), true
}

// scpCmd: copies to a remote destination send; from a remote source fetch.
func scpCmd(inv *invocation, _ *cmdSpec) {
	name := inv.name()
	flags := flagDef{short: "cFiJloPSDX", long: []string{"rsh", "e", "exclude", "include", "exclude-from", "include-from", "files-from", "filter", "rsync-path", "password-file", "port", "chmod", "chown", "bwlimit", "timeout", "log-file", "temp-dir", "backup-dir", "suffix", "compare-dest", "link-dest", "out-format", "max-size", "min-size", "partial-dir"}}
	if name == "rsync" {
		flags.short = "efBTM"
	}
	if name == "rclone" {
		flags = flagDef{long: []string{"config", "transfers", "checkers", "include", "exclude", "filter", "max-age", "min-age", "bwlimit", "log-file"}}
	}
	p := parseFlags(inv.argv, 1, flags)
	ops := p.ops
	if name == "rclone" && len(ops) > 0 {
		switch verb := inv.argv[ops[0]]; verb {
		case "ls", "lsd", "lsl", "lsf", "lsjson", "cat", "size", "about", "tree", "listremotes", "config", "version", "check", "md5sum", "sha1sum":
			inv.kind(act.Fetch)
			inv.readOnly = false
			return
		case "delete", "purge", "deletefile", "rmdir", "rmdirs", "cleanup":
			inv.kind(act.Delete)
			inv.external = true
			inv.destructive = verb == "purge" || verb == "delete"
			inv.note("rclone " + verb + " deletes remote files")
			return
		case "sync":
			inv.destructive = true
			inv.note("rclone sync deletes destination files not in the source")
		}
		ops = ops[1:]
	}
	if name == "sftp" || name == "ftp" || name == "lftp" || name == "tftp" || name == "smbclient" {
		inv.kind(act.Send)
		inv.external = true
		for _, i := range ops {
			if h, _, ok := remoteSpec(inv.argv[i]); ok && h != "" {
				inv.w.host(h)
			} else if h := sshHost(inv.argv[i]); h != "" && !strings.Contains(h, "/") {
				inv.w.host(h)
			}
		}
		if b, ok := p.value("b"); ok {
			inv.w.addPath(b, act.Read, inv.env, false)
		}
		inv.note(name + " opens a file transfer session")
		return
	}
	if (name == "rsync" || name == "rclone") && p.has("n", "dry-run") {
		inv.kind(act.Read)
		inv.readOnly = false
		inv.note("a dry run changes nothing")
		for _, i := range ops {
			if h, _, ok := remoteSpec(inv.argv[i]); ok && h != "" {
				inv.w.host(h)
			}
		}
		return
	}
	if name == "rsync" && p.has("delete", "delete-before", "delete-during", "delete-after", "delete-excluded", "remove-source-files") {
		inv.destructive = true
		inv.note("rsync --delete removes destination files not in the source")
	}
	for _, f := range p.values("i") {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	if len(ops) < 2 {
		if len(ops) == 1 {
			if h, _, ok := remoteSpec(inv.argv[ops[0]]); ok {
				inv.kind(act.Fetch)
				inv.w.host(h)
				return
			}
			inv.addPath(ops[0], act.Read)
		}
		inv.kind(act.Read)
		return
	}
	dst := ops[len(ops)-1]
	srcs := ops[:len(ops)-1]
	dh, _, dRemote := remoteSpec(inv.argv[dst])
	switch {
	case dRemote:
		inv.ks = 0
		inv.kind(act.Send)
		inv.external = true
		if dh != "" {
			inv.w.host(dh)
		}
		for _, i := range srcs {
			if sh, _, sRemote := remoteSpec(inv.argv[i]); sRemote {
				inv.w.host(sh)
				continue
			}
			p := inv.addPath(i, act.Read)
			inv.note(name + " sends " + p + " to " + dh)
		}
	default:
		fetched := false
		for _, i := range srcs {
			if sh, _, sRemote := remoteSpec(inv.argv[i]); sRemote {
				fetched = true
				inv.w.host(sh)
			} else {
				inv.addPath(i, act.Read)
			}
		}
		if fetched {
			inv.kind(act.Fetch)
		}
		inv.kind(act.Write)
		access := act.Write
		if inv.destructive {
			access = act.Delete
		}
		inv.addPath(dst, access)
	}
}

// netcatCmd: raw network connections send whatever they are given.
func netcatCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Send)
	inv.external = true
	p := parseFlags(inv.argv, 1, flagDef{short: "psiwqOIcexXTgGmMoV", long: []string{"source", "source-port", "wait", "proxy", "proxy-type", "sh-exec", "exec", "lua-exec", "output"}})
	if p.has("l", "listen") {
		inv.note(inv.name() + " listens for connections")
	}
	if c, ok := p.value("e", "exec", "c", "sh-exec"); ok {
		inv.kind(act.Execute)
		inv.note(inv.name() + " attaches the program " + c + " to the connection")
	}
	for _, i := range p.ops {
		a := inv.argv[i]
		if inv.name() == "socat" {
			// socat ADDRESS ADDRESS: TCP:host:port, EXEC:cmd, …
			up := strings.ToUpper(a)
			switch {
			case strings.HasPrefix(up, "TCP") || strings.HasPrefix(up, "UDP") || strings.HasPrefix(up, "SSL") || strings.HasPrefix(up, "OPENSSL"):
				parts := strings.Split(a, ":")
				if len(parts) >= 2 && !strings.Contains(up, "LISTEN") {
					inv.w.host(parts[1])
				}
			case strings.HasPrefix(up, "EXEC:") || strings.HasPrefix(up, "SYSTEM:"):
				inv.kind(act.Execute)
				inv.note("socat attaches a program to the connection")
			case strings.HasPrefix(up, "OPEN:") || strings.HasPrefix(up, "FILE:") || strings.HasPrefix(up, "CREATE:"):
				inv.w.addPath(strings.SplitN(a[strings.IndexByte(a, ':')+1:], ",", 2)[0], act.Read, inv.env, false)
			}
			continue
		}
		if isDigit(a[0]) && !strings.Contains(a, ".") {
			continue // a port
		}
		if h := act.HostOnly(a); h != "" {
			inv.w.host(h)
			inv.note(inv.name() + " connects to " + h)
		}
	}
}

// mailCmd: mail and sendmail send to the addresses on their command line.
func mailCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Send)
	inv.external = true
	p := parseFlags(inv.argv, 1, flagDef{short: "sacbrAFfSqoBCLNOpRVX", long: []string{"subject", "attach", "cc", "bcc", "from", "to", "server", "header"}})
	field := func(f, v string) {
		for _, rc := range inv.w.addresses(v) {
			rc.Field = f
			inv.w.res.Recipients = append(inv.w.res.Recipients, rc)
		}
	}
	for _, v := range p.values("c", "cc") {
		field("cc", v)
	}
	for _, v := range p.values("b", "bcc") {
		field("bcc", v)
	}
	for _, v := range p.values("to") {
		field("to", v)
	}
	for _, i := range p.ops {
		if strings.Contains(inv.argv[i], "@") {
			field("to", inv.argv[i])
		}
	}
	for _, a := range p.values("a", "A", "attach") {
		if inv.name() == "mutt" || inv.name() == "neomutt" || inv.name() == "mailx" || inv.name() == "mail" || inv.name() == "swaks" {
			fp := inv.w.addPath(a, act.Read, inv.env, false)
			inv.note("attachment " + fp + " is read and sent")
		}
	}
	if p.has("t") {
		inv.note("recipients come from the message headers")
	}
}
