package action

import (
	"strings"
)

// subAct is what one subcommand of a tool does.
type subAct struct {
	kinds []Kind
	ro    bool
	destr bool
	ext   bool
	cred  bool
	// issuer, for a credential, are the hosts of the service that issued
	// it (see tokenIssuers): the token sent there is authentication, not
	// a secret leaving.
	issuer []string
	note   string
	// ops is the access of the remaining operands taken as paths.
	ops Kind
	// next, for command groups ("docker volume …", "gh pr …"), maps the
	// following word to its action; def applies when it is missing or
	// unknown.
	next map[string]subAct
}

// subTool describes a program driven by subcommands.
type subTool struct {
	global flagDef           // options before the subcommand
	subs   map[string]subAct // by subcommand
	def    subAct            // unknown subcommand
	none   subAct            // no subcommand
	// special handles what the table cannot (it returns true when it
	// did); sub is the index of the subcommand in argv.
	special func(inv *invocation, sub int) bool
}

var (
	rd     = subAct{kinds: []Kind{Read}, ro: true}
	ftch   = subAct{kinds: []Kind{Fetch}}
	wr     = subAct{kinds: []Kind{Write}}
	wrExt  = subAct{kinds: []Kind{Write}, ext: true}
	exe    = subAct{kinds: []Kind{Execute}}
	exeExt = subAct{kinds: []Kind{Execute}, ext: true}
	del    = subAct{kinds: []Kind{Delete}}
	delD   = subAct{kinds: []Kind{Delete}, destr: true}
	delExt = subAct{kinds: []Kind{Delete}, destr: true, ext: true}
	snd    = subAct{kinds: []Kind{Send}, ext: true}
	cred   = subAct{kinds: []Kind{Credential}, cred: true}
	inst   = subAct{kinds: []Kind{Write, Fetch}, note: "installs software from a registry"}
)

// Hosts of the services whose command-line tools print their own access
// tokens: the token goes back to them to authenticate.
var (
	githubHosts = []string{"github.com", "*.github.com", "*.githubusercontent.com", "ghcr.io"}
	googleHosts = []string{"*.googleapis.com", "*.google.com", "*.gcr.io", "*.pkg.dev", "*.run.app", "*.cloudfunctions.net"}
	azureHosts  = []string{"*.azure.com", "*.windows.net", "*.microsoft.com", "*.microsoftonline.com", "*.azurecr.io", "*.azure.net"}
	awsHosts    = []string{"*.amazonaws.com", "*.amazonaws.com.cn", "*.aws"}
)

// issued is a credential subcommand that prints a token of the service
// whose hosts are given.
func issued(note string, hosts []string) subAct {
	a := with(cred, note)
	a.issuer = hosts
	return a
}

func with(a subAct, note string) subAct { a.note = note; return a }

func group(def subAct, m map[string]subAct) subAct {
	def.next = m
	return def
}

// words maps each space-separated word to a.
func words(a subAct, ws string, m map[string]subAct) {
	for _, w := range strings.Fields(ws) {
		m[w] = a
	}
}

var gitopsTool, dockerTool, kubectlTool, helmTool, terraformTool, npmTool, pipTool, goTool, cargoTool, ghTool, gemTool, buildTool, deployTool, stripeTool, pulumiTool, clusterTool *subTool

func init() {
	// docker / podman / nerdctl.
	dsubs := map[string]subAct{}
	words(rd, "ps images logs inspect version info stats top history port diff events context", dsubs)
	words(exe, "run exec start restart create build buildx attach wait stop kill pause unpause update", dsubs)
	words(wr, "commit tag save load import export cp rename", dsubs)
	words(del, "rm rmi", dsubs)
	dsubs["pull"] = ftch
	dsubs["search"] = ftch
	dsubs["push"] = with(snd, "pushes an image to a registry")
	dsubs["login"] = with(cred, "stores registry credentials")
	prune := with(delD, "prunes unused objects")
	// Build caches and unused images are rebuilt or pulled again on
	// demand: pruning them frees space and loses no data.
	cachePrune := with(del, "prunes caches and unused images, which are rebuilt or pulled again")
	objGroup := func(extra map[string]subAct) subAct {
		m := map[string]subAct{"ls": rd, "list": rd, "inspect": rd, "logs": rd, "top": rd, "stats": rd, "diff": rd, "port": rd,
			"history": rd, "df": rd, "info": rd, "events": rd, "rm": del, "remove": del, "prune": prune, "create": wr,
			"pull": ftch, "push": snd, "build": exe, "run": exe, "exec": exe, "start": exe, "stop": exe, "kill": exe, "restart": exe}
		for k, v := range extra {
			m[k] = v
		}
		return group(rd, m)
	}
	dsubs["container"] = objGroup(nil)
	dsubs["image"] = objGroup(map[string]subAct{"prune": cachePrune})
	dsubs["volume"] = objGroup(map[string]subAct{"rm": with(delD, "deletes volumes with their data"), "remove": delD})
	dsubs["network"] = objGroup(map[string]subAct{"connect": wr, "disconnect": wr})
	dsubs["system"] = objGroup(map[string]subAct{"prune": with(delD, "docker system prune deletes unused containers, images and networks")})
	dsubs["builder"] = objGroup(map[string]subAct{"prune": cachePrune})
	dsubs["buildx"] = group(exe, map[string]subAct{"prune": cachePrune, "ls": rd, "inspect": rd, "du": rd, "version": rd})
	compose := map[string]subAct{}
	words(rd, "ps logs config ls images top version port events", compose)
	words(exe, "up run exec start restart build create stop kill pause unpause watch", compose)
	compose["down"] = exe
	compose["rm"] = del
	compose["pull"] = ftch
	compose["push"] = snd
	dsubs["compose"] = group(exe, compose)
	dockerTool = &subTool{
		global:  flagDef{short: "Hcl", long: []string{"host", "context", "config", "log-level", "tlscacert", "tlscert", "tlskey"}, stop: true},
		subs:    dsubs,
		def:     exe,
		none:    rd,
		special: dockerSpecial,
	}

	// kubectl / oc.
	ksubs := map[string]subAct{}
	words(rd, "get describe logs top explain api-resources api-versions version cluster-info diff events wait kustomize completion auth", ksubs)
	words(exeExt, "exec run attach port-forward proxy debug cp", ksubs)
	words(wrExt, "apply create patch edit scale rollout set label annotate autoscale expose taint cordon uncordon certificate replace", ksubs)
	ksubs["delete"] = with(delExt, "deletes cluster resources")
	// Draining evicts pods, which their controllers start again on other
	// nodes: disruptive, so a delete, but nothing is destroyed.
	ksubs["drain"] = with(subAct{kinds: []Kind{Write, Delete}, ext: true}, "evicts every pod from a node; they are rescheduled elsewhere")
	ksubs["config"] = group(rd, map[string]subAct{
		"view": rd, "get-contexts": rd, "current-context": rd, "get-clusters": rd, "get-users": rd,
		"use-context": wr, "set-context": wr, "set-cluster": wr, "set-credentials": with(cred, "stores cluster credentials"),
		"delete-context": del, "delete-cluster": del, "delete-user": del, "rename-context": wr, "set": wr, "unset": wr,
	})
	kubectlTool = &subTool{
		global: flagDef{short: "nsclLfopk", long: []string{"namespace", "context", "cluster", "kubeconfig", "server", "token",
			"user", "as", "as-group", "selector", "output", "filename", "container", "field-selector", "request-timeout",
			"sort-by", "template", "since", "tail", "patch", "type", "replicas", "image", "port", "grace-period", "timeout",
			"revision", "to-revision", "kustomize", "label-columns", "cache-dir", "certificate-authority", "client-certificate",
			"client-key", "password", "username", "v", "profile"}},
		subs:    ksubs,
		def:     exeExt,
		none:    rd,
		special: kubectlSpecial,
	}

	// helm.
	hsubs := map[string]subAct{}
	words(rd, "list ls status get history show search template lint version env verify", hsubs)
	// The helm-diff plugin only compares.
	hsubs["diff"] = with(rd, "helm diff shows what an upgrade would change")
	words(wrExt, "install upgrade rollback", hsubs)
	words(delExt, "uninstall delete del un", hsubs)
	hsubs["repo"] = group(rd, map[string]subAct{"add": wr, "update": ftch, "remove": del, "rm": del, "list": rd, "ls": rd, "index": wr})
	hsubs["dependency"] = group(rd, map[string]subAct{"update": inst, "build": inst, "list": rd})
	hsubs["plugin"] = group(rd, map[string]subAct{"install": inst, "uninstall": del, "update": inst, "list": rd})
	hsubs["package"] = wr
	hsubs["push"] = snd
	hsubs["pull"] = ftch
	helmTool = &subTool{global: flagDef{short: "n", long: []string{"namespace", "kube-context", "kubeconfig", "registry-config", "repository-config", "repository-cache"}}, subs: hsubs, def: exe, none: rd}

	// terraform / tofu / terragrunt.
	tsubs := map[string]subAct{}
	words(rd, "plan show validate graph providers version console get test", tsubs)
	tsubs["output"] = with(rd, "outputs may include secrets")
	tsubs["fmt"] = wr
	tsubs["init"] = inst
	tsubs["apply"] = with(subAct{kinds: []Kind{Write, Execute}, ext: true}, "terraform apply changes real infrastructure")
	tsubs["destroy"] = with(delExt, "terraform destroy deletes real infrastructure")
	words(wrExt, "import taint untaint refresh force-unlock", tsubs)
	tsubs["state"] = group(rd, map[string]subAct{"list": rd, "show": rd, "pull": rd, "rm": del, "mv": wr, "push": with(wrExt, "overwrites remote state"), "replace-provider": wr})
	tsubs["workspace"] = group(rd, map[string]subAct{"list": rd, "show": rd, "new": wr, "select": wr, "delete": del})
	terraformTool = &subTool{global: flagDef{long: []string{"chdir"}}, subs: tsubs, def: exe, none: rd, special: terraformSpecial}

	// npm / pnpm / yarn / bun-like package managers.
	nsubs := map[string]subAct{}
	words(rd, "ls list ll la view info show outdated search audit help version whoami ping prefix root bin explain why fund doctor config get query", nsubs)
	words(inst, "install i ci add update up upgrade link dedupe rebuild init set import", nsubs)
	words(del, "uninstall remove rm un unlink prune", nsubs)
	words(exe, "test t run run-script start stop restart exec x dlx dev build lint serve create", nsubs)
	words(with(snd, "publishes to a package registry"), "publish deprecate dist-tag owner access team", nsubs)
	nsubs["unpublish"] = with(delExt, "removes a published package")
	words(cred, "login adduser token", nsubs)
	npmTool = &subTool{global: flagDef{short: "wC", long: []string{"workspace", "prefix", "cwd", "registry", "filter", "dir"}, stop: true}, subs: nsubs, def: exe, none: rd, special: npmSpecial}

	psubs := map[string]subAct{}
	words(rd, "list show freeze check search config debug inspect index help hash cache", psubs)
	words(inst, "install download wheel", psubs)
	words(del, "uninstall", psubs)
	psubs["run"] = with(subAct{kinds: []Kind{Execute, Fetch}}, "runs a package fetched from the registry")
	pipTool = &subTool{global: flagDef{long: []string{"python", "index-url", "proxy", "cert", "log"}, stop: true}, subs: psubs, def: exe, none: rd}

	gsubs := map[string]subAct{}
	words(exe, "test run build generate vet tool bench", gsubs)
	words(inst, "install get work", gsubs)
	gsubs["mod"] = group(wr, map[string]subAct{"graph": rd, "why": rd, "verify": rd, "download": inst, "tidy": wr, "vendor": wr, "edit": wr, "init": wr})
	words(wr, "fmt fix clean", gsubs)
	words(rd, "env version list doc help telemetry", gsubs)
	goTool = &subTool{global: flagDef{short: "C"}, subs: gsubs, def: exe, none: rd}

	csubs := map[string]subAct{}
	words(exe, "build b test t run r bench check c clippy doc fix fmt miri nextest", csubs)
	words(inst, "install add update new init generate-lockfile vendor fetch", csubs)
	words(del, "remove rm uninstall clean", csubs)
	words(with(snd, "publishes to crates.io"), "publish yank owner", csubs)
	csubs["login"] = cred
	words(rd, "tree metadata search version locate-project pkgid verify-project help", csubs)
	cargoTool = &subTool{global: flagDef{short: "ZC", long: []string{"config", "manifest-path", "color"}}, subs: csubs, def: exe, none: rd}

	// gh / hub / glab.
	prs := map[string]subAct{}
	words(rd, "list view status diff checks", prs)
	words(with(snd, "posts to the code host"), "create comment review merge close reopen edit ready lock unlock", prs)
	prs["checkout"] = wr
	issues := map[string]subAct{}
	words(rd, "list view status", issues)
	words(with(snd, "posts to the code host"), "create comment close reopen edit transfer pin unpin lock unlock develop", issues)
	issues["delete"] = delExt
	hsub := map[string]subAct{
		"pr": group(rd, prs), "mr": group(rd, prs), "issue": group(rd, issues),
		"repo": group(rd, map[string]subAct{"view": rd, "list": rd, "clone": inst, "create": snd, "fork": snd,
			"edit": snd, "rename": snd, "sync": wr, "delete": with(delExt, "deletes a repository"),
			"archive": with(delExt, "archives a repository"), "set-default": wr}),
		"release":   group(rd, map[string]subAct{"list": rd, "view": rd, "download": ftch, "create": snd, "upload": snd, "edit": snd, "delete": delExt, "delete-asset": delExt}),
		"gist":      group(rd, map[string]subAct{"list": rd, "view": rd, "clone": inst, "create": with(snd, "publishes a gist"), "edit": snd, "delete": delExt, "rename": snd}),
		"run":       group(rd, map[string]subAct{"list": rd, "view": rd, "watch": rd, "download": ftch, "rerun": exeExt, "cancel": exeExt, "delete": delExt}),
		"workflow":  group(rd, map[string]subAct{"list": rd, "view": rd, "run": exeExt, "enable": wrExt, "disable": wrExt}),
		"secret":    group(rd, map[string]subAct{"list": rd, "set": with(subAct{kinds: []Kind{Write, Credential}, ext: true, cred: true}, "stores a secret"), "delete": delExt, "remove": delExt}),
		"variable":  group(rd, map[string]subAct{"list": rd, "get": rd, "set": wrExt, "delete": delExt}),
		"auth":      group(rd, map[string]subAct{"token": issued("prints the GitHub token", githubHosts), "status": rd, "login": cred, "logout": wr, "refresh": cred, "setup-git": wr, "switch": wr}),
		"ssh-key":   group(rd, map[string]subAct{"list": rd, "add": with(wrExt, "adds an SSH key to the account"), "delete": delExt}),
		"gpg-key":   group(rd, map[string]subAct{"list": rd, "add": wrExt, "delete": delExt}),
		"codespace": group(rd, map[string]subAct{"list": rd, "view": rd, "ssh": exeExt, "cp": exeExt, "create": wrExt, "delete": delExt, "stop": exeExt}),
		"cache":     group(rd, map[string]subAct{"list": rd, "delete": delExt}),
		"label":     group(rd, map[string]subAct{"list": rd, "create": snd, "edit": snd, "delete": delExt, "clone": snd}),
		"project":   group(rd, map[string]subAct{"list": rd, "view": rd, "create": snd, "edit": snd, "delete": delExt, "close": snd}),
		"search":    ftch, "browse": exe, "status": rd, "config": rd, "alias": wr, "extension": inst, "org": rd,
	}
	ghTool = &subTool{global: flagDef{short: "R", long: []string{"repo", "hostname"}}, subs: hsub, def: exe, none: rd, special: ghSpecial}

	gm := map[string]subAct{}
	words(rd, "list search info show outdated which contents environment spec query dependency", gm)
	words(inst, "install update require fetch", gm)
	words(del, "uninstall remove cleanup", gm)
	words(snd, "push yank owner publish", gm)
	gemTool = &subTool{subs: gm, def: exe, none: rd}

	bt := map[string]subAct{}
	words(with(snd, "publishes build artefacts"), "deploy publish release", bt)
	buildTool = &subTool{global: flagDef{short: "fsDP", long: []string{"file", "settings", "project-dir"}}, subs: bt, def: exe, none: exe}

	dp := map[string]subAct{}
	words(with(subAct{kinds: []Kind{Execute, Send}, ext: true}, "deploys to a hosting service"), "deploy up launch publish release promote", dp)
	words(rd, "list ls status logs info whoami version inspect open", dp)
	words(delExt, "delete destroy remove rm", dp)
	words(cred, "login token", dp)
	dp["secrets"] = group(cred, map[string]subAct{"set": with(subAct{kinds: []Kind{Write, Credential}, ext: true, cred: true}, "stores a secret"), "unset": delExt, "list": cred})
	dp["env"] = group(cred, map[string]subAct{"add": subAct{kinds: []Kind{Write, Credential}, ext: true, cred: true}, "rm": delExt, "ls": cred, "pull": cred})
	deployTool = &subTool{subs: dp, def: exeExt, none: rd}

	st := map[string]subAct{}
	payment := with(subAct{kinds: []Kind{Pay}, ext: true}, "moves money through Stripe")
	for _, r := range strings.Fields("charges payment_intents payouts refunds transfers invoices subscriptions checkout") {
		st[r] = group(rd, map[string]subAct{"create": payment, "capture": payment, "confirm": payment, "pay": payment, "list": rd, "retrieve": rd, "update": wrExt, "cancel": wrExt, "delete": delExt})
	}
	words(exe, "listen trigger logs samples fixtures", st)
	st["post"] = with(subAct{kinds: []Kind{Send, Pay}, ext: true}, "sends a request to the Stripe API")
	st["delete"] = delExt
	st["get"] = rd
	st["login"] = cred
	stripeTool = &subTool{subs: st, def: subAct{kinds: []Kind{Write}, ext: true}, none: rd}

	pu := map[string]subAct{}
	words(with(subAct{kinds: []Kind{Write, Execute}, ext: true}, "changes real infrastructure"), "up update refresh import", pu)
	pu["destroy"] = with(delExt, "deletes real infrastructure")
	words(rd, "preview stack whoami version about logs", pu)
	pu["config"] = group(rd, map[string]subAct{"set": wr, "get": rd, "rm": del})
	pulumiTool = &subTool{subs: pu, def: exe, none: rd}

	gops := map[string]subAct{}
	words(rd, "get list diff history logs manifests resources wait version", gops)
	words(wrExt, "sync set patch rollback create edit reconcile suspend resume", gops)
	words(delExt, "delete", gops)
	gitopsTool = &subTool{
		global: flagDef{long: []string{"server", "auth-token", "context", "namespace", "n"}},
		subs: map[string]subAct{"app": group(rd, gops), "appset": group(rd, gops), "get": rd, "reconcile": wrExt,
			"delete": delExt, "suspend": wrExt, "resume": wrExt, "version": rd, "login": cred, "account": rd, "cluster": group(rd, gops), "repo": group(rd, gops)},
		def: exeExt, none: rd,
	}

	cl := map[string]subAct{}
	words(rd, "get list describe status logs version", cl)
	words(wrExt, "create start upgrade update scale", cl)
	words(delExt, "delete destroy", cl)
	clusterTool = &subTool{subs: cl, def: exeExt, none: rd}
}

// subcmdTools maps programs to their subcommand tables; the rest of the
// programs registered with subcmdTool have handlers of their own.
func subcmdToolFor(name string) *subTool {
	switch name {
	case "docker", "podman", "nerdctl":
		return dockerTool
	case "docker-compose", "compose":
		return &subTool{subs: dockerTool.subs["compose"].next, def: exe, none: exe}
	case "kubectl", "oc", "k":
		return kubectlTool
	case "helm":
		return helmTool
	case "terraform", "tofu", "terragrunt":
		return terraformTool
	case "npm", "pnpm", "yarn":
		return npmTool
	case "pip", "pipx":
		return pipTool
	case "go":
		return goTool
	case "cargo":
		return cargoTool
	case "gh", "hub", "glab":
		return ghTool
	case "gem", "composer":
		return gemTool
	case "mvn", "gradle", "gradlew", "bazel", "dotnet":
		return buildTool
	case "vercel", "netlify", "fly", "flyctl", "heroku", "firebase", "wrangler", "supabase":
		return deployTool
	case "stripe":
		return stripeTool
	case "pulumi":
		return pulumiTool
	case "kind", "minikube", "k3d", "eksctl":
		return clusterTool
	case "argocd", "flux":
		return gitopsTool
	case "sentry-cli":
		return deployTool
	}
	return nil
}

// subcmdTool dispatches tools driven by subcommands.
func subcmdTool(inv *invocation, _ *cmdSpec) {
	name := inv.name()
	switch name {
	case "aws":
		awsCmd(inv)
		return
	case "gcloud", "az":
		cloudVerbCmd(inv)
		return
	case "gsutil":
		gsutilCmd(inv)
		return
	case "npx", "bunx", "pnpx", "uvx":
		inv.kind(Execute, Fetch)
		p := parseFlags(inv.argv, 1, flagDef{short: "p", long: []string{"package", "from", "with", "python"}, stop: true})
		if p.rest < len(inv.argv) {
			inv.note("runs the package " + inv.argv[p.rest] + " fetched from the registry")
		}
		return
	case "security":
		keychainCmd(inv)
		return
	case "pass", "gopass", "vault", "1password", "bw", "lpass", "keyring", "secret-tool", "kwallet-query":
		secretStoreCmd(inv)
		return
	case "redis-cli":
		redisCmd(inv)
		return
	case "psql", "mysql", "mariadb", "sqlite3", "sqlite", "mongosh", "mongo", "clickhouse-client", "cqlsh", "duckdb":
		dbCmd(inv)
		return
	case "pg_dump", "mysqldump":
		inv.kind(Read)
		inv.note("dumps a database")
		p := parseFlags(inv.argv, 1, flagDef{short: "fhpUdrFnNtTZ", long: []string{"file", "host", "port", "username", "dbname", "result-file", "user", "password"}})
		for _, f := range p.values("f", "file", "r", "result-file") {
			inv.kind(Write)
			inv.w.addPath(f, Write, inv.env, false)
		}
		dbHost(inv, p)
		return
	case "dropdb":
		inv.kind(Delete)
		inv.destructive = true
		inv.note("dropdb deletes a database")
		return
	case "createdb":
		inv.kind(Write)
		return
	case "mysqladmin":
		for _, a := range inv.argv[1:] {
			if a == "drop" {
				inv.kind(Delete)
				inv.destructive = true
				inv.note("mysqladmin drop deletes a database")
				return
			}
		}
		inv.kind(Write)
		return
	case "ansible", "ansible-playbook":
		ansibleCmd(inv)
		return
	case "twilio":
		inv.kind(Execute)
		inv.external = true
		if strings.Contains(strings.Join(inv.argv, " "), ":create") {
			inv.kind(Send)
			inv.note("sends through Twilio")
		}
		return
	case "rustup":
		if len(inv.argv) > 1 && (inv.argv[1] == "show" || inv.argv[1] == "which" || inv.argv[1] == "--version") {
			inv.kind(Read)
			inv.readOnly = true
			return
		}
		inv.kind(Write, Fetch)
		return
	}
	t := subcmdToolFor(name)
	if t == nil {
		inv.kind(Execute)
		return
	}
	p := parseFlags(inv.argv, 1, withStop(t.global))
	if p.rest >= len(inv.argv) {
		inv.act(t.none, "")
		return
	}
	if t.special != nil && t.special(inv, p.rest) {
		return
	}
	sub := inv.argv[p.rest]
	a, ok := t.subs[sub]
	if !ok {
		a = t.def
	}
	label := sub
	if a.next != nil {
		q := parseFlags(inv.argv, p.rest+1, withStop(t.global))
		if q.rest < len(inv.argv) {
			if n, ok := a.next[inv.argv[q.rest]]; ok {
				label = sub + " " + inv.argv[q.rest]
				a = n
			}
		}
	}
	inv.act(a, name+" "+label)
	if a.ops != "" {
		q := parseFlags(inv.argv, p.rest+1, t.global)
		for _, i := range q.ops {
			inv.addPath(i, a.ops)
		}
	}
	// Files given with -f/--filename are read (kubectl apply -f x.yaml).
	if name == "kubectl" || name == "oc" || name == "k" || name == "helm" || name == "docker-compose" || name == "compose" {
		q := parseFlags(inv.argv, 1, t.global)
		for _, f := range q.values("f", "filename", "values", "kubeconfig") {
			if f != "-" && !strings.Contains(f, "://") {
				inv.w.addPath(f, Read, inv.env, false)
			}
		}
	}
}

func withStop(f flagDef) flagDef { f.stop = true; return f }

// act applies a subcommand's action.
func (inv *invocation) act(a subAct, label string) {
	inv.kind(a.kinds...)
	if len(a.kinds) == 0 {
		inv.kind(Execute)
	}
	inv.readOnly = a.ro
	inv.destructive = inv.destructive || a.destr
	inv.external = inv.external || a.ext
	if a.cred {
		inv.w.credential(a.issuer)
		inv.kind(Credential)
	}
	if a.note != "" {
		inv.note(a.note)
	} else if label != "" && (a.destr || a.ext) {
		inv.note(label + " acts on remote systems")
	}
}

func dockerSpecial(inv *invocation, sub int) bool {
	verb := inv.argv[sub]
	if verb == "compose" && sub+1 < len(inv.argv) && inv.argv[sub+1] == "down" || verb == "down" && inv.name() != "docker" {
		p := parseFlags(inv.argv, sub+1, flagDef{})
		inv.kind(Execute)
		if p.has("v", "volumes") {
			inv.kind(Delete)
			inv.destructive = true
			inv.note("compose down -v deletes volumes with their data")
		}
		return true
	}
	if verb != "run" && verb != "create" {
		return false
	}
	inv.kind(Execute)
	p := parseFlags(inv.argv, sub+1, flagDef{short: "vemlpuwhcaL", long: []string{"volume", "env", "env-file", "mount", "label", "publish", "user", "workdir", "hostname", "name", "network", "entrypoint", "cpus", "memory", "platform", "add-host", "device", "cap-add", "cap-drop", "security-opt", "restart", "pull", "log-driver", "gpus", "shm-size", "ulimit", "tmpfs"}, stop: true})
	for _, v := range p.values("v", "volume") {
		host := strings.SplitN(v, ":", 2)[0]
		if strings.HasPrefix(host, "/") || strings.HasPrefix(host, ".") || strings.HasPrefix(host, "~") || strings.HasPrefix(host, "$") {
			pth := inv.w.addPath(host, Write, inv.env, false)
			inv.note("mounts " + pth + " into the container")
		}
	}
	for _, v := range p.values("mount") {
		for _, kv := range strings.Split(v, ",") {
			if k, val, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") && strings.HasPrefix(val, "/") {
				inv.w.addPath(val, Write, inv.env, false)
			}
		}
	}
	for _, f := range p.values("env-file") {
		inv.w.addPath(f, Read, inv.env, false)
	}
	if p.has("privileged") {
		inv.note("runs a privileged container with full access to the host")
	}
	if n, ok := p.value("network"); ok && n == "host" {
		inv.note("shares the host's network")
	}
	if p.rest < len(inv.argv) {
		inv.note("runs the image " + inv.argv[p.rest])
	}
	return true
}

func kubectlSpecial(inv *invocation, sub int) bool {
	verb := inv.argv[sub]
	p := parseFlags(inv.argv, sub+1, kubectlTool.global)
	if dr, ok := p.value("dry-run"); p.has("dry-run") && (!ok || dr == "" || dr == "client" || dr == "server" || dr == "true") {
		inv.act(rd, "")
		inv.note("--dry-run changes nothing")
		return true
	}
	if s, ok := p.value("s", "server"); ok {
		if h := hostOnly(s); h != "" {
			inv.w.host(h)
		}
	}
	if _, ok := p.value("token", "password"); ok {
		inv.w.res.sensitive = true
		inv.note("passes cluster credentials on the command line")
	}
	switch verb {
	case "get", "describe", "edit":
		for _, i := range p.ops {
			r := strings.ToLower(inv.argv[i])
			if r == "secret" || r == "secrets" || strings.HasPrefix(r, "secret/") || strings.HasPrefix(r, "secrets/") {
				if verb != "edit" && !secretValuesShown(verb, p) {
					// describe, the default table and -o name
					// show names, types and sizes, never values.
					inv.act(rd, "")
					inv.note("lists Kubernetes secrets without their values")
					return true
				}
				inv.act(cred, "")
				inv.note("reads Kubernetes secrets")
				if verb == "edit" {
					inv.kind(Write)
					inv.external = true
				}
				return true
			}
		}
	case "config":
		if len(p.ops) > 0 && inv.argv[p.ops[0]] == "view" && p.has("raw", "flatten") {
			inv.act(cred, "")
			inv.note("prints cluster credentials")
			return true
		}
	case "rollout":
		if len(p.ops) > 0 && (inv.argv[p.ops[0]] == "status" || inv.argv[p.ops[0]] == "history") {
			inv.act(rd, "")
			return true
		}
	case "apply":
		if p.has("prune") {
			inv.act(delExt, "")
			inv.kind(Write)
			inv.note("apply --prune deletes the resources missing from the manifests")
			return true
		}
	case "replace":
		if p.has("force") {
			inv.act(delExt, "")
			inv.note("replace --force deletes and recreates resources")
			return true
		}
	case "exec", "run", "debug":
		// kubectl exec POD -- cmd: analyse the remote command.
		for i := sub + 1; i < len(inv.argv); i++ {
			if inv.argv[i] == "--" && i+1 < len(inv.argv) {
				inv.act(exeExt, "")
				inv.note("runs a command in the cluster")
				inv.emit()
				inv.done = true
				env := inv.env.sub("kubectl " + verb)
				env.remote = "cluster"
				inner := &invocation{w: inv.w, env: env, argv: inv.argv[i+1:], dyn: inv.dyn[i+1:], depth: inv.depth}
				inner.run()
				return true
			}
		}
	}
	return false
}

// secretValuesShown reports whether kubectl get/describe prints the values
// of the secrets it reads: -o yaml/json do, and so does a jsonpath,
// go-template or custom-columns output that mentions data (or whose
// template is not known); describe, the default table, -o wide and -o name
// do not.
func secretValuesShown(verb string, p parsedArgs) bool {
	if verb == "describe" {
		return false
	}
	o, ok := p.value("o", "output")
	if !ok {
		return false
	}
	format, tmpl, _ := strings.Cut(o, "=")
	switch format {
	case "name", "wide":
		return false
	case "jsonpath", "go-template", "custom-columns", "jsonpath-as-json", "template":
		if tmpl == "" {
			return true // the template is in a file or the next argument
		}
		t := strings.ToLower(tmpl)
		for _, m := range []string{".data", "stringdata", "'data'", `"data"`, "{.}", "{@}", "..", "{{.}}", "{{ . }}"} {
			if strings.Contains(t, m) {
				return true
			}
		}
		return false
	}
	return true
}

func terraformSpecial(inv *invocation, sub int) bool {
	verb := inv.argv[sub]
	p := parseFlags(inv.argv, sub+1, flagDef{long: []string{"var", "var-file", "target", "out", "state", "state-out", "backup", "lock-timeout", "parallelism", "replace"}, longSingle: true})
	for _, f := range p.values("var-file") {
		inv.w.addPath(f, Read, inv.env, false)
	}
	if o, ok := p.value("out"); ok && verb == "plan" {
		inv.w.addPath(o, Write, inv.env, false)
		inv.kind(Write)
	}
	switch verb {
	case "apply", "plan":
		if p.has("destroy") {
			if verb == "apply" {
				inv.act(delExt, "")
				inv.note("terraform apply -destroy deletes real infrastructure")
				return true
			}
		}
		if verb == "apply" && p.has("auto-approve") {
			inv.note("-auto-approve skips terraform's own confirmation")
		}
	case "fmt":
		if p.has("check") {
			inv.act(rd, "")
			return true
		}
	}
	return false
}

func npmSpecial(inv *invocation, sub int) bool {
	verb := inv.argv[sub]
	if verb == "version" && sub+1 < len(inv.argv) && !strings.HasPrefix(inv.argv[sub+1], "-") {
		inv.act(wr, "")
		inv.note(inv.name() + " version bumps the version and commits it")
		return true
	}
	if verb == "npm" && inv.name() == "yarn" && sub+1 < len(inv.argv) {
		// Yarn Berry's "yarn npm publish|login|info".
		switch inv.argv[sub+1] {
		case "publish":
			inv.act(with(snd, "publishes to a package registry"), "")
		case "login", "logout":
			inv.act(cred, "")
		default:
			inv.act(rd, "")
		}
		return true
	}
	if inv.name() == "yarn" {
		if _, ok := npmTool.subs[verb]; !ok && !strings.HasPrefix(verb, "-") {
			inv.act(exe, "")
			inv.note("runs the package script " + verb)
			return true
		}
	}
	if (verb == "publish" || verb == "pack") && indexOf(inv.argv, "--dry-run") >= 0 {
		inv.act(rd, "")
		return true
	}
	if verb == "audit" && sub+1 < len(inv.argv) && inv.argv[sub+1] == "fix" {
		inv.act(inst, "")
		return true
	}
	if verb == "config" && sub+1 < len(inv.argv) && (inv.argv[sub+1] == "set" || inv.argv[sub+1] == "delete") {
		inv.act(wr, "")
		return true
	}
	return false
}

func ghSpecial(inv *invocation, sub int) bool {
	verb := inv.argv[sub]
	if verb != "api" {
		return false
	}
	p := parseFlags(inv.argv, sub+1, flagDef{short: "XfFHqt", long: []string{"method", "field", "raw-field", "header", "jq", "template", "input", "hostname", "cache", "preview"}})
	method := "GET"
	if m, ok := p.value("X", "method"); ok {
		method = strings.ToUpper(m)
	} else if p.has("f", "F", "field", "raw-field", "input") {
		method = "POST"
	}
	switch method {
	case "GET", "HEAD":
		inv.act(ftch, "")
	case "DELETE":
		inv.act(delExt, "")
		inv.kind(Send)
	default:
		inv.act(snd, "")
		inv.note("gh api sends a " + method + " request")
	}
	return true
}

// awsCmd: aws [options] SERVICE OPERATION [args].
func awsCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{long: []string{"profile", "region", "output", "endpoint-url", "query", "cli-read-timeout",
		"cli-connect-timeout", "color", "ca-bundle", "cli-input-json", "cli-input-yaml",
		// aws s3 options with values.
		"acl", "expires-in", "storage-class", "sse", "sse-kms-key-id", "sse-c", "sse-c-key", "content-type",
		"cache-control", "content-disposition", "content-encoding", "content-language", "expires", "exclude",
		"include", "metadata", "metadata-directive", "grants", "website-redirect", "source-region", "page-size",
		"checksum-algorithm", "request-payer", "copy-props", "expected-size"}})
	if len(p.ops) == 0 {
		inv.act(rd, "")
		return
	}
	if u, ok := p.value("endpoint-url"); ok {
		inv.addURL(u)
	}
	service := inv.argv[p.ops[0]]
	op := ""
	if len(p.ops) > 1 {
		op = inv.argv[p.ops[1]]
	}
	switch {
	case service == "s3":
		s3Cmd(inv, op, p.ops[2:], "s3://")
		return
	case service == "configure":
		if op == "get" || op == "export-credentials" || op == "list" {
			inv.act(cred, "")
			inv.note("reads AWS credentials")
			return
		}
		inv.act(subAct{kinds: []Kind{Write, Credential}, cred: true}, "")
		inv.note("stores AWS credentials")
		return
	case service == "sts" && (op == "get-session-token" || op == "assume-role" || op == "get-federation-token" || op == "assume-role-with-web-identity" || op == "assume-role-with-saml"),
		service == "secretsmanager" && (op == "get-secret-value" || op == "batch-get-secret-value"),
		service == "ssm" && (op == "get-parameter" || op == "get-parameters" || op == "get-parameters-by-path") && strings.Contains(strings.Join(inv.argv, " "), "--with-decryption"),
		service == "kms" && op == "decrypt",
		service == "iam" && op == "create-access-key",
		service == "ecr" && (op == "get-login-password" || op == "get-authorization-token"),
		service == "codeartifact" && op == "get-authorization-token",
		service == "rds" && op == "generate-db-auth-token",
		service == "sso" && op == "get-role-credentials":
		a := cred
		if service != "secretsmanager" && service != "ssm" && service != "kms" {
			a.issuer = awsHosts
		}
		inv.act(a, "")
		inv.note("aws " + service + " " + op + " returns credentials or secrets")
		return
	}
	inv.act(awsOp(op), "aws "+service+" "+op)
	if service == "lambda" && op == "invoke" {
		inv.act(exeExt, "")
	}
	if (service == "ses" || service == "sesv2" || service == "sns" || service == "sqs") && (strings.HasPrefix(op, "send") || op == "publish") {
		inv.act(snd, "")
		inv.note("sends messages through AWS")
	}
}

// awsOp classifies an AWS API operation by its verb prefix.
func awsOp(op string) subAct {
	verb, _, _ := strings.Cut(op, "-")
	switch verb {
	case "describe", "list", "get", "head", "search", "scan", "query", "lookup", "select", "filter", "batch", "wait", "validate", "estimate", "preview", "simulate", "test", "check", "help", "":
		if strings.HasPrefix(op, "batch-get") || verb != "batch" {
			return rd
		}
		return wrExt
	case "delete", "terminate", "remove", "deregister", "purge", "destroy", "deprovision", "cancel", "reject", "disassociate", "detach", "release", "revoke", "disable":
		if verb == "delete" || verb == "terminate" || verb == "purge" || verb == "destroy" || verb == "deprovision" {
			return with(delExt, "aws "+op+" deletes cloud resources")
		}
		return wrExt
	case "invoke", "send", "publish":
		return snd
	case "run", "start", "execute", "reboot", "stop":
		return exeExt
	}
	return wrExt
}

// s3Cmd handles aws s3 and gsutil: cp/mv/sync to a bucket send, from a
// bucket fetch, rm/rb delete.
func s3Cmd(inv *invocation, op string, ops []int, scheme string) {
	var args []int
	for _, i := range ops {
		if !strings.HasPrefix(inv.argv[i], "-") {
			args = append(args, i)
		}
	}
	isRemote := func(i int) bool {
		return strings.HasPrefix(inv.argv[i], scheme) || strings.HasPrefix(inv.argv[i], "s3://") || strings.HasPrefix(inv.argv[i], "gs://")
	}
	recursive := indexOf(inv.argv, "--recursive") >= 0 || indexOf(inv.argv, "-r") >= 0 || indexOf(inv.argv, "-R") >= 0
	if indexOf(inv.argv, "--dryrun") >= 0 || indexOf(inv.argv, "--dry-run") >= 0 || indexOf(inv.argv, "-n") >= 0 && scheme == "gs://" {
		inv.act(rd, "")
		inv.note("a dry run changes nothing")
		return
	}
	for i, a := range inv.argv {
		if (a == "--acl" && i+1 < len(inv.argv) && strings.HasPrefix(inv.argv[i+1], "public")) || a == "--acl=public-read" || a == "public-read" {
			inv.external = true
			inv.note("makes the object readable by anyone")
			break
		}
	}
	switch op {
	case "ls", "presign", "cat", "du", "stat":
		inv.act(rd, "")
		if op == "presign" {
			inv.note("creates a link that grants access to the object")
		}
		for _, i := range args {
			inv.addURL(inv.argv[i])
		}
	case "rm", "rb", "rmdir":
		inv.act(delExt, "")
		inv.destructive = recursive || op == "rb"
		for _, i := range args {
			inv.addURL(inv.argv[i])
			inv.note("deletes " + inv.argv[i])
		}
	case "mb":
		inv.act(wrExt, "")
	case "cp", "mv", "sync", "rsync":
		if len(args) < 2 {
			inv.act(exeExt, "")
			return
		}
		src, dst := args[:len(args)-1], args[len(args)-1]
		if (op == "sync" || op == "rsync") && indexOf(inv.argv, "--delete") >= 0 || indexOf(inv.argv, "-d") >= 0 && op == "rsync" {
			inv.destructive = true
			inv.note(op + " --delete removes destination files not in the source")
		}
		if isRemote(dst) {
			inv.act(snd, "")
			inv.addURL(inv.argv[dst])
			for _, i := range src {
				if isRemote(i) {
					inv.addURL(inv.argv[i])
					continue
				}
				fp := inv.addPath(i, Read)
				inv.note("uploads " + fp + " to " + inv.argv[dst])
			}
			return
		}
		inv.act(ftch, "")
		inv.kind(Write)
		for _, i := range src {
			inv.addURL(inv.argv[i])
		}
		inv.addPath(dst, Write)
	default:
		inv.act(exeExt, "")
	}
}

func gsutilCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{short: "ohp", stop: true})
	if p.rest >= len(inv.argv) {
		inv.act(rd, "")
		return
	}
	op := inv.argv[p.rest]
	var ops []int
	for i := p.rest + 1; i < len(inv.argv); i++ {
		ops = append(ops, i)
	}
	s3Cmd(inv, op, ops, "gs://")
}

// cloudVerbCmd: gcloud and az put the verb last: "gcloud compute
// instances delete NAME", "az vm delete -n NAME".
func cloudVerbCmd(inv *invocation) {
	var ws []string
	for _, a := range inv.argv[1:] {
		if strings.HasPrefix(a, "-") {
			break
		}
		ws = append(ws, a)
	}
	joined := " " + strings.Join(ws, " ") + " "
	switch {
	case strings.Contains(joined, " print-access-token ") || strings.Contains(joined, " print-identity-token ") ||
		strings.Contains(joined, " get-access-token ") || strings.Contains(joined, " secrets versions access ") ||
		strings.Contains(joined, " keyvault secret show ") || strings.Contains(joined, " keyvault secret download ") ||
		strings.Contains(joined, " keys create ") && strings.Contains(joined, " service-accounts "):
		a := cred
		if strings.Contains(joined, "-token ") {
			// An access or identity token of the cloud itself.
			a.issuer = googleHosts
			if inv.name() == "az" {
				a.issuer = azureHosts
			}
		}
		inv.act(a, "")
		inv.note(inv.name() + " prints credentials or secrets")
		return
	case strings.Contains(joined, " ssh ") || strings.Contains(joined, " scp ") || strings.Contains(joined, " run ") && strings.Contains(joined, " command "):
		inv.act(exeExt, "")
		return
	}
	verb := ""
	if len(ws) > 0 {
		verb = ws[len(ws)-1]
		// The last word may be a resource name: find the last known verb.
		for i := len(ws) - 1; i >= 0; i-- {
			if cloudVerbs[ws[i]] != "" {
				verb = ws[i]
				break
			}
		}
	}
	switch cloudVerbs[verb] {
	case "read":
		inv.act(rd, "")
	case "delete":
		inv.act(delExt, "")
		inv.note(inv.name() + " " + strings.Join(ws, " ") + " deletes cloud resources")
	case "exec":
		inv.act(exeExt, "")
	default:
		inv.act(wrExt, inv.name()+" "+strings.Join(ws, " "))
	}
}

var cloudVerbs = map[string]string{
	"list": "read", "describe": "read", "show": "read", "get": "read", "get-iam-policy": "read", "read": "read",
	"tail": "read", "info": "read", "version": "read", "ls": "read", "browse": "read", "wait": "read",
	"delete": "delete", "remove": "delete", "purge": "delete", "destroy": "delete",
	"create": "write", "deploy": "write", "update": "write", "set": "write", "add-iam-policy-binding": "write",
	"patch": "write", "resize": "write", "start": "exec", "stop": "exec", "reset": "exec", "restart": "exec",
	"submit": "exec", "execute": "exec", "invoke": "exec", "call": "exec",
}

func keychainCmd(inv *invocation) {
	if len(inv.argv) < 2 {
		inv.act(rd, "")
		return
	}
	sub := inv.argv[1]
	switch {
	case strings.HasPrefix(sub, "find-") && (strings.Contains(sub, "password") || indexOf(inv.argv, "-w") >= 0 || indexOf(inv.argv, "-g") >= 0),
		sub == "dump-keychain", sub == "export", strings.HasPrefix(sub, "find-") && sub != "find-certificate":
		inv.act(cred, "")
		inv.note("reads passwords from the keychain")
	case strings.HasPrefix(sub, "delete-"):
		inv.act(delD, "")
	case strings.HasPrefix(sub, "add-") || strings.HasPrefix(sub, "set-") || strings.HasPrefix(sub, "import") || strings.HasPrefix(sub, "create-"):
		inv.act(subAct{kinds: []Kind{Write, Credential}, cred: true}, "")
	default:
		inv.act(rd, "")
	}
}

func secretStoreCmd(inv *invocation) {
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
		inv.act(subAct{kinds: []Kind{Write, Credential}, cred: true}, "")
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
func redisCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{short: "hpsanurixd", long: []string{"user", "pass", "askpass", "tls", "cacert", "cert", "key", "sni"}, stop: true})
	if h, ok := p.value("h"); ok && h != "127.0.0.1" && h != "localhost" {
		inv.w.host(h)
		inv.external = true
	}
	if u, ok := p.value("u"); ok {
		inv.addURL(u)
	}
	if _, ok := p.value("a", "pass"); ok {
		inv.w.res.sensitive = true
		inv.note("passes the Redis password on the command line")
	}
	if p.rest >= len(inv.argv) {
		inv.kind(Execute)
		inv.note("redis-cli runs commands from its input")
		return
	}
	cmd := strings.ToUpper(inv.argv[p.rest])
	switch cmd {
	case "FLUSHALL", "FLUSHDB":
		inv.kind(Delete)
		inv.destructive = true
		inv.note(cmd + " deletes every key")
	case "DEL", "UNLINK", "HDEL", "SREM", "ZREM", "LREM", "XDEL", "LPOP", "RPOP", "SPOP", "GETDEL", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK":
		inv.kind(Delete)
	case "GET", "MGET", "KEYS", "SCAN", "INFO", "TYPE", "TTL", "PTTL", "HGET", "HGETALL", "HKEYS", "HVALS", "SMEMBERS",
		"LRANGE", "ZRANGE", "EXISTS", "PING", "DBSIZE", "STRLEN", "LLEN", "SCARD", "ZCARD", "HLEN", "XRANGE", "XLEN",
		"MONITOR", "SUBSCRIBE", "PSUBSCRIBE", "CLIENT", "SLOWLOG", "MEMORY", "OBJECT", "DUMP", "RANDOMKEY", "TIME", "LASTSAVE", "ROLE", "HSCAN", "SSCAN", "ZSCAN", "ECHO":
		inv.kind(Read)
		inv.readOnly = true
	case "CONFIG":
		if p.rest+1 < len(inv.argv) && strings.EqualFold(inv.argv[p.rest+1], "GET") {
			inv.kind(Read)
			inv.readOnly = true
			return
		}
		inv.kind(Write)
	case "EVAL", "EVALSHA", "FCALL", "SCRIPT", "FUNCTION", "MODULE":
		inv.kind(Execute)
		inv.note("runs a script inside Redis")
	case "SHUTDOWN", "DEBUG", "SLAVEOF", "REPLICAOF", "MIGRATE", "FAILOVER":
		inv.kind(Execute)
		inv.destructive = cmd == "SHUTDOWN" || cmd == "DEBUG"
	default:
		inv.kind(Write)
	}
}

// dbCmd classifies database clients by the SQL they are given.
func dbCmd(inv *invocation) {
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
				inv.w.res.sensitive = true
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
			inv.addPath(ops[0], Read)
			ops = ops[1:]
		}
		for _, i := range ops {
			sqls = append(sqls, inv.argv[i])
		}
		sqls = append(sqls, p.values("cmd", "c")...)
		file, _ = p.value("init")
	case "mongosh", "mongo":
		p = parseFlags(inv.argv, 1, flagDef{long: []string{"eval", "host", "port", "username", "password", "authenticationDatabase", "file", "f"}})
		inv.kind(Execute)
		for _, i := range p.ops {
			if strings.Contains(inv.argv[i], "://") {
				inv.addURL(inv.argv[i])
			}
		}
		for _, code := range p.values("eval") {
			mongoEval(inv, code)
		}
		if _, ok := p.value("password"); ok {
			inv.w.res.sensitive = true
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
		inv.kind(Execute)
		fp := inv.w.addPath(file, Read, inv.env, false)
		inv.note("runs the SQL in " + fp)
	}
	if len(sqls) == 0 && file == "" {
		if inv.in != nil && inv.in.literal {
			sqls = append(sqls, inv.in.text)
		} else {
			inv.kind(Execute)
			if inv.in != nil {
				inv.note(name + " runs SQL from its input (" + inv.in.via + ")")
			} else {
				inv.note(name + " opens an interactive session")
			}
			return
		}
	}
	for _, q := range sqls {
		r := classifySQL(q)
		if r.statements == 0 {
			continue
		}
		inv.ks |= r.kinds
		if r.destructive {
			inv.destructive = true
		}
		for _, n := range r.notes {
			inv.note(n)
		}
	}
	if inv.ks&^kindBit(Read) == 0 {
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
		inv.kind(Delete)
		inv.destructive = true
		inv.note("the Mongo script deletes data")
	case strings.Contains(code, "deleteOne") || strings.Contains(code, "findOneAndDelete"):
		inv.kind(Delete)
	case strings.Contains(code, "insert") || strings.Contains(code, "update") || strings.Contains(code, "replace") ||
		strings.Contains(code, "createCollection") || strings.Contains(code, "createIndex") || strings.Contains(code, ".save("):
		inv.kind(Write)
	default:
		inv.kind(Read)
	}
}

// ansibleCmd: ansible runs modules on remote hosts; shell/command/raw
// module arguments are command lines.
func ansibleCmd(inv *invocation) {
	inv.kind(Execute)
	inv.external = true
	p := parseFlags(inv.argv, 1, flagDef{short: "imaueftlMBPTkKbc", long: []string{"inventory", "module-name", "args", "user", "extra-vars", "forks", "tags", "limit", "module-path", "background", "poll", "timeout", "become-user", "become-method", "connection", "vault-password-file", "private-key", "skip-tags", "start-at-task"}})
	for _, f := range p.values("i", "inventory") {
		if !strings.Contains(f, ",") {
			inv.w.addPath(f, Read, inv.env, false)
		}
	}
	for _, f := range p.values("private-key", "vault-password-file") {
		inv.w.addPath(f, Read, inv.env, false)
	}
	if inv.name() == "ansible-playbook" {
		for _, i := range p.ops {
			inv.addPath(i, Execute)
		}
		inv.note("runs a playbook on remote hosts")
		return
	}
	mod, _ := p.value("m", "module-name")
	args, _ := p.value("a", "args")
	switch mod {
	case "shell", "command", "raw", "ansible.builtin.shell", "ansible.builtin.command", "ansible.builtin.raw":
		inv.note("runs a command on remote hosts")
		inv.emit()
		inv.done = true
		env := inv.env.sub("ansible -m " + mod)
		env.remote = "ansible hosts"
		inv.w.script(args, env, inv.depth+1)
	case "file":
		if strings.Contains(args, "state=absent") {
			inv.kind(Delete)
			inv.note("deletes files on remote hosts")
		} else {
			inv.kind(Write)
		}
	case "ping", "setup", "":
		inv.kind(Read)
	default:
		inv.kind(Write)
		inv.note("runs the module " + mod + " on remote hosts")
	}
}

// gitCmd classifies git subcommands.
func gitCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "Cc", long: []string{"git-dir", "work-tree", "namespace", "exec-path", "config-env", "super-prefix"}, stop: true})
	for _, c := range p.values("c") {
		if strings.HasPrefix(strings.ToLower(c), "core.sshcommand") || strings.HasPrefix(strings.ToLower(c), "core.pager") ||
			strings.HasPrefix(strings.ToLower(c), "alias.") || strings.HasPrefix(strings.ToLower(c), "core.fsmonitor") ||
			strings.HasPrefix(strings.ToLower(c), "core.hookspath") || strings.Contains(strings.ToLower(c), "credential.helper") {
			inv.kind(Execute)
			inv.note("git -c " + strings.SplitN(c, "=", 2)[0] + " can run arbitrary commands")
		}
	}
	if p.rest >= len(inv.argv) {
		inv.kind(Read)
		inv.readOnly = inv.ks == 0 || inv.ks == kindBit(Read)
		return
	}
	sub := inv.argv[p.rest]
	q := parseFlags(inv.argv, p.rest+1, flagDef{short: "mFCSoObBnreuxX", long: []string{"message", "file", "author", "date", "format", "pretty", "since", "until", "grep", "output", "branch", "upstream", "set-upstream-to", "exec", "strategy", "strategy-option", "onto", "depth", "origin", "template", "separate-git-dir", "reference", "shallow-since", "jobs", "push-option", "receive-pack", "repo", "config", "cleanup", "reuse-message", "fixup", "squash", "pathspec-from-file", "inter-hunk-context", "diff-filter", "path-format", "abbrev", "sort", "points-at", "contains", "merged", "no-merged"}})
	ops := q.ops
	opArgs := make([]string, len(ops))
	for i, o := range ops {
		opArgs[i] = inv.argv[o]
	}
	set := func(a subAct) { inv.act(a, "") }
	switch sub {
	case "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "cat-file", "describe",
		"shortlog", "grep", "reflog", "rev-list", "name-rev", "for-each-ref", "show-ref", "merge-base",
		"count-objects", "check-ignore", "check-attr", "whatchanged", "range-diff", "var", "help", "version",
		"annotate", "cherry", "show-branch", "ls-remote", "verify-commit", "verify-tag", "fsck", "bisect-log":
		set(rd)
		if sub == "ls-remote" {
			inv.ks = 0
			inv.kind(Fetch)
		}
	case "config":
		if q.has("get", "get-all", "get-regexp", "list", "l", "show-origin", "get-urlmatch") || len(ops) == 1 {
			set(rd)
		} else {
			set(wr)
		}
		if len(ops) > 0 && strings.Contains(opArgs[0], "credential") && len(ops) == 1 {
			set(cred)
		}
	case "credential", "credential-store", "credential-cache":
		set(cred)
		inv.note("git credential reads stored credentials")
	case "remote":
		if len(ops) == 0 || opArgs[0] == "show" || opArgs[0] == "get-url" || opArgs[0] == "-v" {
			set(rd)
		} else {
			set(wr)
		}
	case "branch":
		switch {
		case q.has("D") || q.has("d", "delete") && q.has("f", "force"):
			set(delD)
			inv.note("git branch -D deletes branches even if unmerged")
		case q.has("d", "delete"):
			set(del)
		case q.has("m", "M", "move", "c", "C", "copy", "u", "set-upstream-to", "unset-upstream", "edit-description"):
			set(wr)
		case len(ops) == 0 || q.has("l", "list", "a", "all", "r", "remotes", "v", "vv", "show-current", "contains", "merged", "no-merged", "points-at"):
			set(rd)
		default:
			set(wr)
		}
	case "tag":
		switch {
		case q.has("d", "delete"):
			set(del)
		case len(ops) == 0 || q.has("l", "list", "n", "contains", "points-at", "merged", "v", "verify"):
			set(rd)
		default:
			set(wr)
		}
	case "stash":
		switch {
		case len(ops) > 0 && (opArgs[0] == "list" || opArgs[0] == "show"):
			set(rd)
		case len(ops) > 0 && (opArgs[0] == "drop" || opArgs[0] == "clear"):
			set(delD)
			inv.note("git stash " + opArgs[0] + " discards stashed changes")
		default:
			set(wr)
		}
	case "reset":
		if q.has("hard") {
			set(delD)
			inv.note("git reset --hard discards uncommitted changes")
		} else {
			set(wr)
		}
	case "clean":
		if q.has("n", "dry-run") {
			set(rd)
			return
		}
		set(delD)
		inv.note("git clean deletes untracked files")
		inv.w.addPath(".", Delete, inv.env, false)
	case "checkout":
		// "git checkout -- f", "git checkout .", "git checkout HEAD f"
		// throw local changes away. "git checkout REF -- f" brings f
		// in from another commit or branch: a write of those files.
		dash := indexOf(inv.argv[p.rest:], "--")
		fromRef := dash > 0 && len(opArgs) > 0 && p.rest+dash > ops[0] && opArgs[0] != "HEAD" && opArgs[0] != "."
		discard := q.has("f", "force") || dash >= 0 && !fromRef || len(opArgs) > 0 && (opArgs[0] == "." || opArgs[0] == "HEAD" && len(opArgs) > 1)
		switch {
		case discard:
			set(delD)
			inv.note("git checkout over working files discards uncommitted changes")
		case fromRef:
			set(wr)
			for _, o := range ops[1:] {
				inv.addPath(o, Write)
			}
			inv.note("git checkout " + opArgs[0] + " -- replaces the files with their version from " + opArgs[0])
		default:
			set(wr)
		}
	case "restore":
		if q.has("S", "staged") && !q.has("W", "worktree") {
			set(wr)
		} else {
			set(delD)
			inv.note("git restore discards uncommitted changes")
		}
	case "rm":
		set(del)
		for i, o := range ops {
			_ = i
			inv.addPath(o, Delete)
		}
	case "add":
		set(wr)
		for _, o := range ops {
			inv.addPath(o, Read)
		}
		if q.has("f", "force") {
			inv.note("git add -f stages ignored files")
		}
	case "commit", "switch", "merge", "rebase", "cherry-pick", "revert", "mv", "apply", "am", "init",
		"notes", "submodule", "worktree", "gc", "prune", "repack", "pack-refs", "bisect", "update-index",
		"sparse-checkout", "maintenance", "replace", "read-tree", "commit-tree", "write-tree", "update-ref", "symbolic-ref", "lfs", "format-patch", "archive", "bundle":
		set(wr)
		if sub == "update-ref" && q.has("d") {
			set(del)
		}
		if sub == "rebase" && q.has("x", "exec") {
			inv.kind(Execute)
			inv.note("git rebase --exec runs commands")
		}
	case "filter-branch", "filter-repo":
		set(delD)
		inv.note("git " + sub + " rewrites history")
	case "fetch", "pull", "clone":
		set(ftch)
		if sub != "fetch" {
			inv.kind(Write)
		}
		for _, a := range opArgs {
			if strings.Contains(a, "://") || strings.Contains(a, "@") {
				inv.addURL(gitURL(a))
			}
		}
		if sub == "fetch" && q.has("prune", "p") {
			inv.note("git fetch --prune deletes stale remote-tracking branches")
		}
	case "push":
		if q.has("n", "dry-run") {
			set(rd)
			inv.note("git push --dry-run sends nothing")
			return
		}
		set(snd)
		force := q.has("f", "force", "force-with-lease", "force-if-includes", "mirror")
		deleting := q.has("d", "delete")
		for _, a := range opArgs {
			if strings.HasPrefix(a, "+") {
				force = true
			}
			if strings.HasPrefix(a, ":") && len(a) > 1 {
				deleting = true
			}
			if strings.Contains(a, "://") || strings.Contains(a, "@") {
				inv.addURL(gitURL(a))
			}
		}
		switch {
		case force:
			inv.destructive = true
			inv.note("git push --force overwrites remote history")
		case deleting:
			inv.destructive = true
			inv.note("git push --delete deletes remote branches")
		default:
			inv.note("git push publishes commits to a remote")
		}
	case "send-email", "request-pull", "imap-send":
		set(snd)
		for _, v := range q.values("to", "cc", "bcc") {
			for _, a := range addresses(v) {
				inv.w.res.recipients = append(inv.w.res.recipients, Recipient{Address: a, Field: "to"})
			}
		}
	case "daemon", "instaweb", "http-backend":
		set(exeExt)
	default:
		// Unknown subcommands may be aliases or git-foo programs.
		set(exe)
		inv.note("git " + sub + " is not a known subcommand (an alias or plugin)")
	}
}

// gitURL turns scp-style git remotes (git@host:org/repo) into URLs.
func gitURL(a string) string {
	if strings.Contains(a, "://") {
		return a
	}
	if at := strings.IndexByte(a, '@'); at >= 0 {
		rest := a[at+1:]
		host, p, _ := strings.Cut(rest, ":")
		return "ssh://" + a[:at] + "@" + host + "/" + p
	}
	return a
}
