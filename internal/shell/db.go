package shell

import (
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// Database clients and secret stores: the SQL or command a client is
// given decides what it does; a secret store printing a value is a
// credential read.

// dbDumpCmd: pg_dump and mysqldump read a database, writing a file with -f.
func dbDumpCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Read)
	inv.note("dumps a database")
	p := parseFlags(inv.argv, 1, flagDef{short: "fhpUdrFnNtTZ", long: []string{"file", "host", "port", "username", "dbname", "result-file", "user", "password"}})
	for _, f := range p.values("f", "file", "r", "result-file") {
		inv.kind(act.Write)
		inv.w.addPath(f, act.Write, inv.env, false)
	}
	dbHost(inv, p)
}

// mysqladminCmd: mysqladmin drop deletes a database.
func mysqladminCmd(inv *invocation, _ *cmdSpec) {
	for _, a := range inv.argv[1:] {
		if a == "drop" {
			inv.kind(act.Delete)
			inv.destructive = true
			inv.note("mysqladmin drop deletes a database")
			return
		}
	}
	inv.kind(act.Write)
}

func keychainCmd(inv *invocation, s *cmdSpec) {
	if len(inv.argv) < 2 {
		inv.act(rd, "")
		return
	}
	sub := inv.argv[1]
	switch {
	case strings.HasPrefix(sub, "find-") && (strings.Contains(sub, "password") || slices.Index(inv.argv, "-w") >= 0 || slices.Index(inv.argv, "-g") >= 0),
		sub == "dump-keychain", sub == "export", strings.HasPrefix(sub, "find-") && sub != "find-certificate":
		inv.act(cred, "")
		inv.note("reads passwords from the keychain")
	case strings.HasPrefix(sub, "delete-"):
		inv.act(delD, "")
	case strings.HasPrefix(sub, "add-") || strings.HasPrefix(sub, "set-") || strings.HasPrefix(sub, "import") || strings.HasPrefix(sub, "create-"):
		inv.act(subAct{kinds: []act.Kind{act.Write, act.Credential}, cred: true}, "")
	default:
		inv.act(rd, "")
	}
}

func secretStoreCmd(inv *invocation, s *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "an", long: []string{"address", "namespace", "format", "field", "mount", "session"}, stop: true})
	sub := ""
	if p.rest < len(inv.argv) {
		sub = inv.argv[p.rest]
	}
	if inv.name() == "vault" && (sub == "kv" || sub == "token" || sub == "secrets" || sub == "auth") && p.rest+1 < len(inv.argv) {
		sub = inv.argv[p.rest+1]
	}
	switch sub {
	case "ls", "list", "find", "status", "version", "help", "search", "":
		if sub == "" && (inv.name() == "pass" || inv.name() == "gopass") {
			inv.act(rd, "")
			return
		}
		inv.act(rd, "")
	case "rm", "remove", "delete", "destroy", "revoke", "metadata-delete", "clear":
		inv.act(delD, "")
	case "insert", "generate", "edit", "add", "set", "store", "put", "write", "create", "patch", "enable", "import", "mv", "cp":
		inv.act(subAct{kinds: []act.Kind{act.Write, act.Credential}, cred: true}, "")
		inv.note("stores a secret")
	case "git", "sync":
		inv.act(exe, "")
	default:
		// show, get, read, lookup, grep, login, unlock, print, an entry name …
		inv.act(cred, "")
		inv.note(inv.name() + " reads secrets")
	}
}

// redisCmd classifies the command given to redis-cli.
func redisCmd(inv *invocation, s *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "hpsanurixd", long: []string{"user", "pass", "askpass", "tls", "cacert", "cert", "key", "sni"}, stop: true})
	if h, ok := p.value("h"); ok && h != "127.0.0.1" && h != "localhost" {
		inv.w.host(h)
		inv.external = true
	}
	if u, ok := p.value("u"); ok {
		inv.addURL(u)
	}
	if _, ok := p.value("a", "pass"); ok {
		inv.w.res.Sensitive = true
		inv.note("passes the Redis password on the command line")
	}
	if p.rest >= len(inv.argv) {
		inv.kind(act.Execute)
		inv.note("redis-cli runs commands from its input")
		return
	}
	cmd := strings.ToUpper(inv.argv[p.rest])
	switch cmd {
	case "FLUSHALL", "FLUSHDB":
		inv.kind(act.Delete)
		inv.destructive = true
		inv.note(cmd + " deletes every key")
	case "DEL", "UNLINK", "HDEL", "SREM", "ZREM", "LREM", "XDEL", "LPOP", "RPOP", "SPOP", "GETDEL", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK":
		inv.kind(act.Delete)
	case "GET", "MGET", "KEYS", "SCAN", "INFO", "TYPE", "TTL", "PTTL", "HGET", "HGETALL", "HKEYS", "HVALS", "SMEMBERS",
		"LRANGE", "ZRANGE", "EXISTS", "PING", "DBSIZE", "STRLEN", "LLEN", "SCARD", "ZCARD", "HLEN", "XRANGE", "XLEN",
		"MONITOR", "SUBSCRIBE", "PSUBSCRIBE", "CLIENT", "SLOWLOG", "MEMORY", "OBJECT", "DUMP", "RANDOMKEY", "TIME", "LASTSAVE", "ROLE", "HSCAN", "SSCAN", "ZSCAN", "ECHO":
		inv.readsOnly()
	case "CONFIG":
		if p.rest+1 < len(inv.argv) && strings.EqualFold(inv.argv[p.rest+1], "GET") {
			inv.readsOnly()
			return
		}
		inv.kind(act.Write)
	case "EVAL", "EVALSHA", "FCALL", "SCRIPT", "FUNCTION", "MODULE":
		inv.kind(act.Execute)
		inv.note("runs a script inside Redis")
	case "SHUTDOWN", "DEBUG", "SLAVEOF", "REPLICAOF", "MIGRATE", "FAILOVER":
		inv.kind(act.Execute)
		inv.destructive = cmd == "SHUTDOWN" || cmd == "DEBUG"
	default:
		inv.kind(act.Write)
	}
}

// dbCmd classifies database clients by the SQL they are given.
func dbCmd(inv *invocation, s *cmdSpec) {
	name := inv.name()
	var sqls []string
	var file string
	var p parsedArgs
	switch name {
	case "psql":
		p = parseFlags(inv.argv, 1, flagDef{short: "cdfhpUvoLTFRPs", long: []string{"command", "dbname", "file", "host", "port", "username", "set", "variable", "output", "log-file", "table-attr", "field-separator", "record-separator", "pset"}})
		sqls = p.values("c", "command")
		file, _ = p.value("f", "file")
		if p.has("l", "list") {
			inv.act(rd, "")
			return
		}
	case "mysql", "mariadb":
		// -pSECRET takes its value attached; drop it before parsing so
		// its letters are not read as flags.
		keep := []int{0}
		for i, a := range inv.argv[1:] {
			if strings.HasPrefix(a, "-p") && len(a) > 2 || strings.HasPrefix(a, "--password=") {
				inv.w.res.Sensitive = true
				inv.note("passes the database password on the command line")
				continue
			}
			keep = append(keep, i+1)
		}
		argv, dyn := make([]string, len(keep)), make([]bool, len(keep))
		for j, i := range keep {
			argv[j], dyn[j] = inv.argv[i], inv.dyn[i]
		}
		inv.argv, inv.dyn = argv, dyn
		p = parseFlags(inv.argv, 1, flagDef{short: "eDhPuSC", long: []string{"execute", "database", "host", "port", "user", "socket", "defaults-file", "init-command", "default-character-set"}})
		sqls = p.values("e", "execute")
	case "sqlite3", "sqlite", "duckdb":
		p = parseFlags(inv.argv, 1, flagDef{long: []string{"cmd", "init", "separator", "nullvalue", "newline", "mode", "c"}, longSingle: true})
		ops := p.ops
		if len(ops) > 0 {
			inv.addPath(ops[0], act.Read)
			ops = ops[1:]
		}
		for _, i := range ops {
			sqls = append(sqls, inv.argv[i])
		}
		sqls = append(sqls, p.values("cmd", "c")...)
		file, _ = p.value("init")
	case "mongosh", "mongo":
		p = parseFlags(inv.argv, 1, flagDef{long: []string{"eval", "host", "port", "username", "password", "authenticationDatabase", "file", "f"}})
		inv.kind(act.Execute)
		for _, i := range p.ops {
			if strings.Contains(inv.argv[i], "://") {
				inv.addURL(inv.argv[i])
			}
		}
		for _, code := range p.values("eval") {
			mongoEval(inv, code)
		}
		if _, ok := p.value("password"); ok {
			inv.w.res.Sensitive = true
		}
		if len(p.values("eval")) == 0 {
			inv.note(name + " runs commands from its input or a file")
		}
		return
	case "clickhouse-client", "cqlsh":
		p = parseFlags(inv.argv, 1, flagDef{short: "qehu", long: []string{"query", "execute", "host", "user", "password", "database", "file"}})
		sqls = p.values("q", "query", "e", "execute")
		file, _ = p.value("file", "f")
	}
	dbHost(inv, p)
	if file != "" {
		inv.kind(act.Execute)
		fp := inv.w.addPath(file, act.Read, inv.env, false)
		inv.note("runs the SQL in " + fp)
	}
	if len(sqls) == 0 && file == "" {
		if inv.in != nil && inv.in.literal {
			sqls = append(sqls, inv.in.text)
		} else {
			inv.kind(act.Execute)
			if inv.in != nil {
				inv.note(name + " runs SQL from its input (" + inv.in.via + ")")
			} else {
				inv.note(name + " opens an interactive session")
			}
			return
		}
	}
	for _, q := range sqls {
		ClassifySQL(q).Apply(&inv.ks, &inv.destructive, inv.note, inv.w.cut)
	}
	if inv.ks&^act.Bit(act.Read) == 0 {
		inv.readOnly = true
	}
}

// dbHost records the database server of a client's flags or URI.
func dbHost(inv *invocation, p parsedArgs) {
	if h, ok := p.value("h", "host"); ok && h != "localhost" && h != "127.0.0.1" && !strings.HasPrefix(h, "/") {
		inv.w.host(h)
	}
	for _, i := range p.ops {
		if strings.Contains(inv.argv[i], "://") {
			inv.addURL(inv.argv[i])
		}
	}
	for _, n := range []string{"d", "dbname"} {
		if v, ok := p.value(n); ok && strings.Contains(v, "://") {
			inv.addURL(v)
		}
	}
}

func mongoEval(inv *invocation, code string) {
	switch {
	case strings.Contains(code, "dropDatabase") || strings.Contains(code, ".drop(") || strings.Contains(code, "deleteMany") ||
		strings.Contains(code, ".remove(") || strings.Contains(code, "dropIndex"):
		inv.kind(act.Delete)
		inv.destructive = true
		inv.note("the Mongo script deletes data")
	case strings.Contains(code, "deleteOne") || strings.Contains(code, "findOneAndDelete"):
		inv.kind(act.Delete)
	case strings.Contains(code, "insert") || strings.Contains(code, "update") || strings.Contains(code, "replace") ||
		strings.Contains(code, "createCollection") || strings.Contains(code, "createIndex") || strings.Contains(code, ".save("):
		inv.kind(act.Write)
	default:
		inv.kind(act.Read)
	}
}
