package action

import (
	"regexp"
	"strings"
	"sync"
)

// Inline program text (python -c, node -e, perl -e, awk programs, a code
// argument of a tool) is not parsed: it is scanned for the cheap, telling
// signs of file deletion, file writes, network traffic, environment dumps
// and commands handed to a shell. Whatever the scan finds, running code is
// Execute; the scan only adds what it can see.

type codeResult struct {
	kinds       kindSet
	destructive bool
	external    bool
	sensitive   bool
	notes       []string
	paths       []PathRef // raw paths with access; normalised by the caller
	urls        []string
	shells      []string // literal command lines run through a shell
}

// codeLanguage normalises a language name; "" if unknown.
func codeLanguage(s string) string {
	switch strings.ToLower(s) {
	case "python", "py", "python3":
		return "python"
	case "javascript", "js", "node", "typescript", "ts":
		return "javascript"
	case "perl", "pl":
		return "perl"
	case "ruby", "rb":
		return "ruby"
	case "shell", "sh", "bash", "zsh":
		return "shell"
	case "sql":
		return "sql"
	case "php", "lua", "r", "julia", "applescript", "powershell", "awk":
		return strings.ToLower(s)
	}
	return ""
}

type codePattern struct {
	re    *regexp.Regexp
	langs string // space-separated languages, "" for all
	kind  Kind
	// group, if > 0, is a literal path (for file patterns) or command
	// line (for exec patterns) in the match.
	group       int
	exec        bool // the group is a shell command line
	destructive bool
	external    bool
	sensitive   bool
	note        string
}

var codePatterns = []codePattern{
	// File deletion.
	{re: regexp.MustCompile(`shutil\.rmtree\(\s*(?:r?['"]([^'"]*)['"])?`), langs: "python", kind: Delete, group: 1, destructive: true, note: "deletes a directory tree (shutil.rmtree)"},
	{re: regexp.MustCompile(`os\.(?:remove|unlink|rmdir|removedirs)\(\s*(?:r?['"]([^'"]*)['"])?`), langs: "python", kind: Delete, group: 1, note: "deletes files (os.remove)"},
	{re: regexp.MustCompile(`Path\(\s*r?['"]([^'"]*)['"]\s*\)\.(?:unlink|rmdir)\(`), langs: "python", kind: Delete, group: 1, note: "deletes a file (Path.unlink)"},
	{re: regexp.MustCompile(`\.unlink\(\s*(?:missing_ok)?`), langs: "python", kind: Delete, note: "deletes a file (unlink)"},
	{re: regexp.MustCompile(`(?:\bfs|\))(?:\.promises)?\.(?:rmSync|rm|rmdirSync|rmdir)\(\s*(?:['"\x60]([^'"\x60]*)['"\x60])?`), langs: "javascript", kind: Delete, group: 1, destructive: true, note: "deletes files (fs.rm)"},
	{re: regexp.MustCompile(`(?:\bfs|\))(?:\.promises)?\.(?:unlinkSync|unlink)\(\s*(?:['"\x60]([^'"\x60]*)['"\x60])?`), langs: "javascript", kind: Delete, group: 1, note: "deletes a file (fs.unlink)"},
	{re: regexp.MustCompile(`\brimraf\b`), langs: "javascript", kind: Delete, destructive: true, note: "deletes a directory tree (rimraf)"},
	{re: regexp.MustCompile(`\bunlink\s*\(?\s*(?:['"]([^'"]*)['"])?`), langs: "perl php", kind: Delete, group: 1, note: "deletes files (unlink)"},
	{re: regexp.MustCompile(`\b(?:rmtree|remove_tree)\s*\(?\s*(?:['"]([^'"]*)['"])?`), langs: "perl", kind: Delete, group: 1, destructive: true, note: "deletes a directory tree (rmtree)"},
	{re: regexp.MustCompile(`FileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry|rmtree)\(?\s*(?:['"]([^'"]*)['"])?`), langs: "ruby", kind: Delete, group: 1, destructive: true, note: "deletes a directory tree (FileUtils.rm_rf)"},
	{re: regexp.MustCompile(`(?:FileUtils\.rm|File\.delete|File\.unlink|Dir\.rmdir|Dir\.delete)\(?\s*(?:['"]([^'"]*)['"])?`), langs: "ruby", kind: Delete, group: 1, note: "deletes files"},
	{re: regexp.MustCompile(`\b(?:Remove-Item|rm|del|rmdir)\b[^\n;]*-Recurse`), langs: "powershell", kind: Delete, destructive: true, note: "deletes a directory tree (Remove-Item -Recurse)"},
	{re: regexp.MustCompile(`\bRemove-Item\b`), langs: "powershell", kind: Delete, note: "deletes files (Remove-Item)"},
	// File writes.
	{re: regexp.MustCompile(`open\(\s*r?['"]([^'"]*)['"]\s*,\s*['"][^'"]*[wax+]`), langs: "python", kind: Write, group: 1, note: "writes a file"},
	{re: regexp.MustCompile(`\.write_(?:text|bytes)\(`), langs: "python", kind: Write, note: "writes a file"},
	{re: regexp.MustCompile(`(?:\bfs|\))(?:\.promises)?\.(?:writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream)\(\s*(?:['"\x60]([^'"\x60]*)['"\x60])?`), langs: "javascript", kind: Write, group: 1, note: "writes a file"},
	{re: regexp.MustCompile(`open\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*['"]\+?>{1,2}\s*([^'"]*)['"]`), langs: "perl", kind: Write, group: 1, note: "writes a file"},
	{re: regexp.MustCompile(`File\.(?:write|open\([^)]*['"][wa])`), langs: "ruby", kind: Write, note: "writes a file"},
	{re: regexp.MustCompile(`file_put_contents\(`), langs: "php", kind: Write, note: "writes a file"},
	{re: regexp.MustCompile(`\b(?:Set-Content|Out-File|Add-Content)\b`), langs: "powershell", kind: Write, note: "writes a file"},
	// File reads (for sensitivity: a script reading ~/.ssh/id_rsa).
	{re: regexp.MustCompile(`open\(\s*r?['"]([^'"]*)['"]\s*(?:\)|,\s*['"]r)`), langs: "python", kind: Read, group: 1},
	{re: regexp.MustCompile(`Path\(\s*r?['"]([^'"]*)['"]\s*\)\.read_(?:text|bytes)\(`), langs: "python", kind: Read, group: 1},
	{re: regexp.MustCompile(`(?:\bfs|\))(?:\.promises)?\.(?:readFileSync|readFile|createReadStream)\(\s*['"\x60]([^'"\x60]*)['"\x60]`), langs: "javascript", kind: Read, group: 1},
	{re: regexp.MustCompile(`File\.(?:read|readlines|open)\(\s*['"]([^'"]*)['"]`), langs: "ruby", kind: Read, group: 1},
	{re: regexp.MustCompile(`file_get_contents\(\s*['"]([^'"]*)['"]`), langs: "php", kind: Read, group: 1},
	{re: regexp.MustCompile(`open\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*['"]<?\s*([^'">|]+)['"]`), langs: "perl", kind: Read, group: 1},
	// Network: sending.
	{re: regexp.MustCompile(`\b(?:requests|httpx|session|client)\.(?:post|put|patch|delete|request)\(`), langs: "python", kind: Send, external: true, note: "sends data over the network"},
	{re: regexp.MustCompile(`\b(?:smtplib|ftplib|paramiko)\b`), langs: "python", kind: Send, external: true, note: "opens a mail, FTP or SSH connection"},
	{re: regexp.MustCompile(`\bsocket\.(?:socket|create_connection)\(`), langs: "python", kind: Send, external: true, note: "opens a network socket"},
	{re: regexp.MustCompile(`urlopen\([^)]*data\s*=|Request\([^)]*data\s*=|method\s*=\s*['"](?:POST|PUT|PATCH|DELETE)`), langs: "python", kind: Send, external: true, note: "sends data over the network"},
	{re: regexp.MustCompile(`method\s*:\s*['"](?:POST|PUT|PATCH|DELETE)['"]|axios\.(?:post|put|patch|delete)\(|\.(?:post|put|patch)\(\s*['"\x60]https?:|https?\.request\(|net\.(?:connect|createConnection)\(|new\s+WebSocket\(|XMLHttpRequest|navigator\.sendBeacon|nodemailer`), langs: "javascript", kind: Send, external: true, note: "sends data over the network"},
	{re: regexp.MustCompile(`\b(?:IO::Socket|Net::SMTP|Net::FTP|LWP::UserAgent|HTTP::Tiny)\b|->post\(`), langs: "perl", kind: Send, external: true, note: "opens a network connection"},
	{re: regexp.MustCompile(`Net::HTTP\.(?:post|start)|TCPSocket|Net::SMTP|\.post\(`), langs: "ruby", kind: Send, external: true, note: "sends data over the network"},
	{re: regexp.MustCompile(`curl_exec|fsockopen|\bmail\(`), langs: "php", kind: Send, external: true, note: "sends data over the network"},
	{re: regexp.MustCompile(`Invoke-(?:WebRequest|RestMethod)[^\n;]*-Method\s+(?:Post|Put|Patch|Delete)|Send-MailMessage|Net\.Sockets`), langs: "powershell", kind: Send, external: true, note: "sends data over the network"},
	// Network: fetching.
	{re: regexp.MustCompile(`\b(?:requests|httpx)\.get\(|urllib\.request|urlopen\(|urlretrieve\(`), langs: "python", kind: Fetch, note: "fetches from the network"},
	{re: regexp.MustCompile(`\bfetch\(|axios\.get\(|https?\.get\(`), langs: "javascript", kind: Fetch, note: "fetches from the network"},
	{re: regexp.MustCompile(`LWP::Simple|\bget\(\s*['"]https?:`), langs: "perl", kind: Fetch, note: "fetches from the network"},
	{re: regexp.MustCompile(`open-uri|Net::HTTP\.get|URI\.open`), langs: "ruby", kind: Fetch, note: "fetches from the network"},
	{re: regexp.MustCompile(`Invoke-(?:WebRequest|RestMethod)|\biwr\b|\birm\b|DownloadString|DownloadFile`), langs: "powershell", kind: Fetch, note: "fetches from the network"},
	// Commands handed to a shell: the literal ones are analysed.
	{re: regexp.MustCompile(`os\.(?:system|popen)\(\s*r?(['"])((?:[^'"\\]|\\.)*)['"]`), langs: "python", kind: Execute, group: 2, exec: true},
	{re: regexp.MustCompile(`subprocess\.\w+\(\s*r?(['"])((?:[^'"\\]|\\.)*)['"]`), langs: "python", kind: Execute, group: 2, exec: true},
	{re: regexp.MustCompile(`(?:os\.system|os\.popen|subprocess\.\w+|os\.exec\w*|pty\.spawn|commands\.getoutput)\(`), langs: "python", kind: Execute, note: "runs other programs"},
	{re: regexp.MustCompile(`(?:execSync|exec|spawnSync|spawn|execFileSync|execFile)\(\s*(['"\x60])((?:[^'"\x60\\]|\\.)*)['"\x60]`), langs: "javascript", kind: Execute, group: 2, exec: true},
	{re: regexp.MustCompile(`child_process|\bexeca\b|Bun\.spawn|Deno\.(?:run|Command)`), langs: "javascript", kind: Execute, note: "runs other programs"},
	{re: regexp.MustCompile(`\b(?:system|exec)\s*\(?\s*(['"])((?:[^'"\\]|\\.)*)['"]`), langs: "perl ruby php", kind: Execute, group: 2, exec: true},
	{re: regexp.MustCompile("`([^`]+)`"), langs: "perl ruby php", kind: Execute, group: 1, exec: true},
	{re: regexp.MustCompile(`qx\{([^}]*)\}|%x\{([^}]*)\}`), langs: "perl ruby", kind: Execute, group: 1, exec: true},
	{re: regexp.MustCompile(`\b(?:shell_exec|passthru|proc_open|popen)\(`), langs: "php", kind: Execute, note: "runs other programs"},
	{re: regexp.MustCompile(`do shell script\s+"((?:[^"\\]|\\.)*)"`), langs: "applescript", kind: Execute, group: 1, exec: true},
	{re: regexp.MustCompile(`\b(?:os\.execute|io\.popen)\(\s*(['"])((?:[^'"\\]|\\.)*)['"]`), langs: "lua", kind: Execute, group: 2, exec: true},
	{re: regexp.MustCompile(`\bsystem2?\(\s*(['"])((?:[^'"\\]|\\.)*)['"]`), langs: "r", kind: Execute, group: 2, exec: true},
	{re: regexp.MustCompile(`\brun\(\x60([^\x60]*)\x60\)`), langs: "julia", kind: Execute, group: 1, exec: true},
	{re: regexp.MustCompile(`\b(?:Start-Process|Invoke-Expression|iex)\b`), langs: "powershell", kind: Execute, note: "runs other programs or evaluates text"},
	// Environment dumps and secrets.
	{re: regexp.MustCompile(`os\.environ(?:\s*\)|\s*$|\.items\(|\.copy\(|\s*,|\))`), langs: "python", kind: Credential, sensitive: true, note: "reads the whole environment, secrets included"},
	{re: regexp.MustCompile(`process\.env(?:\s*\)|\s*$|\s*,|\s*;)|JSON\.stringify\(\s*process\.env`), langs: "javascript", kind: Credential, sensitive: true, note: "reads the whole environment, secrets included"},
	{re: regexp.MustCompile(`%ENV\b`), langs: "perl", kind: Credential, sensitive: true, note: "reads the whole environment, secrets included"},
	{re: regexp.MustCompile(`\bENV\.(?:to_h|each|inspect|to_a)|\bp ENV\b|puts ENV\b`), langs: "ruby", kind: Credential, sensitive: true, note: "reads the whole environment, secrets included"},
	{re: regexp.MustCompile(`getenv\(\)|\$_ENV\b|\$_SERVER\b`), langs: "php", kind: Credential, sensitive: true, note: "reads the whole environment, secrets included"},
	{re: regexp.MustCompile(`Get-ChildItem\s+env:|\bgci\s+env:|\bls\s+env:`), langs: "powershell", kind: Credential, sensitive: true, note: "reads the whole environment, secrets included"},
	// Obfuscation: decoding text and running it.
	{re: regexp.MustCompile(`(?:exec|eval)\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads)`), langs: "python", kind: Execute, note: "decodes hidden code and runs it"},
	{re: regexp.MustCompile(`eval\(\s*(?:atob|Buffer\.from)\(`), langs: "javascript", kind: Execute, note: "decodes hidden code and runs it"},
	{re: regexp.MustCompile(`eval\s*\(?\s*(?:decode_base64|pack\()`), langs: "perl", kind: Execute, note: "decodes hidden code and runs it"},
}

// scanCode scans inline code of a language ("" tries all).
func scanCode(lang, code string) codeResult {
	var r codeResult
	r.kinds.add(Execute)
	if len(code) > maxScanPerStr {
		code = code[:maxScanPerStr]
		r.notes = append(r.notes, "code too long: only its beginning was examined")
	}
	lang = codeLanguage(lang)
	switch lang {
	case "shell":
		r.shells = append(r.shells, code)
		return r
	case "sql":
		s := classifySQL(code)
		r.kinds |= s.kinds
		r.destructive = s.destructive
		r.notes = append(r.notes, s.notes...)
		return r
	}
	seenNote := map[string]bool{}
	for i := range codePatterns {
		p := &codePatterns[i]
		if lang != "" && p.langs != "" && !strings.Contains(" "+p.langs+" ", " "+lang+" ") {
			continue
		}
		ms := p.re.FindAllStringSubmatch(code, 16)
		if len(ms) == 0 {
			continue
		}
		r.kinds.add(p.kind)
		r.destructive = r.destructive || p.destructive
		r.external = r.external || p.external
		r.sensitive = r.sensitive || p.sensitive
		if p.note != "" && !seenNote[p.note] {
			seenNote[p.note] = true
			r.notes = append(r.notes, p.note)
		}
		if p.group == 0 {
			continue
		}
		for _, m := range ms {
			v := ""
			for g := p.group; g < len(m) && v == ""; g++ {
				v = m[g]
			}
			if v == "" {
				continue
			}
			if p.exec {
				r.shells = append(r.shells, unescapeCodeString(v))
				continue
			}
			r.paths = append(r.paths, PathRef{Path: v, Access: p.kind})
		}
	}
	for _, u := range urlRE.FindAllString(code, 16) {
		r.urls = append(r.urls, strings.TrimRight(u, ".,;:!?"))
	}
	return r
}

// unescapeCodeString undoes the common backslash escapes of a quoted
// string literal in a program.
func unescapeCodeString(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\\`, `\`, `\n`, "\n", `\t`, "\t", "\\`", "`")
	return r.Replace(s)
}

// applyCode adds inline code found in a tool argument to the action.
func applyCode(b *builder, r codeResult, dir, home string, parsers *sync.Pool) {
	b.kinds |= r.kinds
	if r.destructive {
		b.destructive = true
	}
	if r.external {
		b.external = true
	}
	if r.sensitive {
		b.a.Sensitive = true
	}
	for _, n := range r.notes {
		b.note(n)
	}
	for _, p := range r.paths {
		ref, notes := pathRef(p.Path, p.Access, dir, home)
		b.path(ref)
		for _, n := range notes {
			b.note(n)
		}
	}
	for _, u := range r.urls {
		b.url(u)
		b.host(hostOnly(u))
	}
	for _, s := range r.shells {
		applyShell(b, analyzeShell(s, dir, home, parsers))
	}
}

// awkCmd: awk programs are read-only unless they call system(), pipe to or
// from commands, or print to files.
var (
	awkSystemRE   = regexp.MustCompile(`system\s*\(\s*("(?:[^"\\]|\\.)*")?`)
	awkPipeOutRE  = regexp.MustCompile(`\|&?\s*("(?:[^"\\]|\\.)*")?`)
	awkPipeInRE   = regexp.MustCompile(`("(?:[^"\\]|\\.)*")?\s*\|&?\s*getline`)
	awkPrintOutRE = regexp.MustCompile(`(?:print|printf)[^;{}>]*>>?\s*("(?:[^"\\]|\\.)*")?`)
)

func awkCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(Read)
	inv.readOnly = true
	p := parseFlags(inv.argv, 1, flagDef{short: "fvF", long: []string{"file", "assign", "field-separator", "include", "load", "source", "exec"}})
	var progs []string
	for _, f := range p.values("f", "file", "exec", "include") {
		inv.kind(Execute)
		inv.w.addPath(f, Execute, inv.env, false)
		inv.note("runs the awk program in " + f)
	}
	progs = append(progs, p.values("source")...)
	ops := p.ops
	if len(p.values("f", "file", "exec")) == 0 && len(p.values("source")) == 0 && len(ops) > 0 {
		if inv.dynamicArg(ops[0]) {
			inv.kind(Execute)
			inv.note("the awk program is built at run time")
		}
		progs = append(progs, inv.argv[ops[0]])
		ops = ops[1:]
	}
	for _, i := range ops {
		if !strings.Contains(inv.argv[i], "=") {
			inv.addPath(i, Read)
		}
	}
	for _, prog := range progs {
		awkProgram(inv, prog)
	}
}

func awkProgram(inv *invocation, prog string) {
	body := awkStripStrings(prog)
	run := func(lit, via string) {
		inv.kind(Execute)
		if lit == "" {
			inv.note("awk runs a command built at run time (" + via + ")")
			return
		}
		inv.w.script(unescapeCodeString(strings.Trim(lit, `"`)), inv.env.sub("awk "+via), inv.depth+1)
	}
	for _, m := range awkSystemRE.FindAllStringSubmatchIndex(body, 16) {
		run(awkLiteral(prog, m, 1), "system()")
	}
	for _, m := range awkPipeInRE.FindAllStringSubmatchIndex(body, 16) {
		run(awkLiteral(prog, m, 1), "getline")
	}
	for _, m := range awkPipeOutRE.FindAllStringSubmatchIndex(body, 16) {
		// Skip the getline pipes already handled and "||".
		end := m[1]
		if strings.HasPrefix(strings.TrimSpace(body[end:]), "getline") || m[0] > 0 && body[m[0]-1] == '|' || end < len(body) && body[end] == '|' {
			continue
		}
		run(awkLiteral(prog, m, 1), "pipe")
	}
	for _, m := range awkPrintOutRE.FindAllStringSubmatchIndex(body, 16) {
		inv.kind(Write)
		if f := awkLiteral(prog, m, 1); f != "" {
			inv.w.addPath(strings.Trim(f, `"`), Write, inv.env, false)
		} else {
			inv.note("awk writes to a file named at run time")
		}
	}
}

// awkStripStrings blanks the inside of string literals (keeping their
// length, so offsets stay valid) so that operators inside strings are not
// mistaken for code.
func awkStripStrings(s string) string {
	b := []byte(s)
	in := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\' && in:
			b[i] = ' '
			if i+1 < len(b) {
				b[i+1] = ' '
				i++
			}
		case b[i] == '"':
			in = !in
		case in:
			b[i] = ' '
		}
	}
	return string(b)
}

// awkLiteral returns the original text of submatch g of m (a string
// literal, quotes included), or "" when the group did not match.
func awkLiteral(orig string, m []int, g int) string {
	if len(m) <= 2*g+1 || m[2*g] < 0 {
		return ""
	}
	return orig[m[2*g]:m[2*g+1]]
}
